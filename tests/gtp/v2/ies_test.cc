// GTPv2-C typed IE views (v2/ies.h): encode -> message -> decode round trips.
//
// Each test puts one typed value into a message with Builder, decodes the
// message, reads the IE back and checks the fields; the value octets are also
// compared with octets written out by hand from the IE's figure in TS 29.274
// clause 8, so a view that is wrong both ways still fails.
#include "common/gtp/v2/ies.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::apnText;
using testing::digits;
using testing::fromHex;
using testing::toHex;

Plmn plmn(std::string_view mcc, std::string_view mnc) { return *makePlmn(mcc, mnc); }

Ipv4 v4(std::string_view text) {
  Ipv4 a;
  EXPECT_TRUE(parseIpv4(text, a));
  return a;
}

Ipv6 v6(std::string_view text) {
  Ipv6 a;
  EXPECT_TRUE(parseIpv6(text, a));
  return a;
}

class GtpV2Ies : public ::testing::Test {
 protected:
  // Puts `value` alone in a Create Session Request, decodes the message and
  // returns the IE's value octets as hex.
  template <class T>
  std::string encoded(const T& value, uint8_t instance = 0) {
    buffer_.assign(2048, 0);
    Builder b(buffer_);
    b.begin(MessageType::kCreateSessionRequest, 0u, 1);
    b.add(value, instance);
    auto bytes = b.finish();
    EXPECT_TRUE(bytes);
    if (!bytes) return "build failed";
    auto ok = message_.decode(*bytes);
    EXPECT_TRUE(ok);
    if (!ok || message_.ieCount() != 1) return "decode failed";
    EXPECT_EQ(message_.ie(0).type, static_cast<uint8_t>(T::kType));
    EXPECT_EQ(message_.ie(0).instance(), instance);
    return toHex(message_.value(message_.ie(0)));
  }

  // encoded(), then read<T>() of the decoded IE; the decoded value must
  // encode to the same octets again.
  template <class T>
  T roundTrip(const T& value, uint8_t instance = 0) {
    const std::string first = encoded(value, instance);
    auto r = read<T>(message_, message_.ie(0));
    EXPECT_TRUE(r) << errcName(r.error().code);
    if (!r) return T{};
    std::vector<uint8_t> again(r->encodedSize());
    if (!again.empty()) r->encode(again.data());
    EXPECT_EQ(toHex(again), first);
    return *r;
  }

  // Decodes raw value octets (not produced by the encoder) with T's view.
  template <class T>
  Result<T> decodeHex(std::string_view hex) {
    raw_ = fromHex(hex);
    return T::decode(raw_);
  }

  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> raw_;
  Message message_;
};

// 8.3 IMSI: TBCD, odd count padded with 0xF.
TEST_F(GtpV2Ies, ImsiOf15DigitsHasAFiller) {
  EXPECT_EQ(encoded(Imsi{digits("001010123456789")}), "00010121436587f9");
  EXPECT_EQ(roundTrip(Imsi{digits("001010123456789")}).digits.view(), "001010123456789");
}

TEST_F(GtpV2Ies, ImsiOf14DigitsHasNone) {
  EXPECT_EQ(encoded(Imsi{digits("12345678901234")}), "21436587092143");
  EXPECT_EQ(roundTrip(Imsi{digits("12345678901234")}).digits.view(), "12345678901234");
}

TEST_F(GtpV2Ies, ImsiOfMoreThan8OctetsIsRejected) {
  auto r = decodeHex<Imsi>("214365870921436587");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<Imsi>("").error().code, Errc::kIeTooShort);
}

// 8.11 MSISDN: TBCD digits (4 6 | 7 0 | 2 1 | 2 3 | 4 5 | 6 F).
TEST_F(GtpV2Ies, MsisdnRoundTrips) {
  EXPECT_EQ(encoded(Msisdn{digits("46702123456")}), "6407123254f6");
  EXPECT_EQ(roundTrip(Msisdn{digits("46702123456")}).digits.view(), "46702123456");
}

// 8.10 MEI: an IMEI (15 digits, with filler) or IMEISV (16 digits).
TEST_F(GtpV2Ies, MeiHoldsImeiAndImeisv) {
  EXPECT_EQ(encoded(Mei{digits("356938035643809")}), "53968330653408f9");
  EXPECT_EQ(roundTrip(Mei{digits("356938035643809")}).digits.view(), "356938035643809");
  EXPECT_EQ(encoded(Mei{digits("3569380356438091")}), "5396833065340819");
  EXPECT_EQ(roundTrip(Mei{digits("3569380356438091")}).digits.view(), "3569380356438091");
}

TEST_F(GtpV2Ies, ApnRoundTrips) {
  EXPECT_EQ(encoded(Apn{apnText("ims")}), "03696d73");
  EXPECT_EQ(roundTrip(Apn{apnText("internet.mnc001.mcc001.gprs")}).text.view(),
            "internet.mnc001.mcc001.gprs");
}

TEST_F(GtpV2Ies, OneOctetValuesRoundTrip) {
  EXPECT_EQ(encoded(Recovery{255}), "ff");
  EXPECT_EQ(roundTrip(Recovery{255}).value, 255);
  EXPECT_EQ(roundTrip(Recovery{0}).value, 0);
  EXPECT_EQ(roundTrip(RatType{6}).value, 6);  // 8.17: 6 = EUTRAN
  EXPECT_EQ(roundTrip(ApnRestriction{4}).value, 4);
  EXPECT_EQ(roundTrip(NodeType{1}).value, 1);  // 8.65: 1 = SGSN
  EXPECT_EQ(decodeHex<Recovery>("").error().code, Errc::kIeTooShort);
}

// 8.8: EBI in bits 4-1, bits 8-5 spare.
TEST_F(GtpV2Ies, EbiIsTheLowNibble) {
  EXPECT_EQ(encoded(Ebi{15}), "0f");
  EXPECT_EQ(roundTrip(Ebi{5}).value, 5);
  EXPECT_EQ(decodeHex<Ebi>("f5")->value, 5);
}

TEST_F(GtpV2Ies, PdnTypeAndSelectionModeKeepTheirBits) {
  EXPECT_EQ(roundTrip(PdnType{3}).value, 3);  // 8.34: 3 = IPv4v6
  EXPECT_EQ(decodeHex<PdnType>("f9")->value, 1);
  EXPECT_EQ(roundTrip(SelectionMode{2}).value, 2);
  EXPECT_EQ(decodeHex<SelectionMode>("fd")->value, 1);
}

TEST_F(GtpV2Ies, IntegersAreBigEndian) {
  EXPECT_EQ(encoded(ChargingId{0x01020304}), "01020304");
  EXPECT_EQ(roundTrip(ChargingId{0xffffffff}).value, 0xffffffffu);
  EXPECT_EQ(encoded(ChargingCharacteristics{0x0800}), "0800");
  EXPECT_EQ(roundTrip(ChargingCharacteristics{0xffff}).value, 0xffff);
  EXPECT_EQ(encoded(PortNumber{2123}), "084b");
  EXPECT_EQ(roundTrip(PortNumber{2152}).value, 2152);
  EXPECT_EQ(decodeHex<ChargingId>("010203").error().code, Errc::kIeTooShort);
}

// 8.18 Serving Network: a PLMN identity (TS 24.008 §10.5.1.3).
TEST_F(GtpV2Ies, ServingNetworkWithTwoDigitMnc) {
  EXPECT_EQ(encoded(ServingNetwork{plmn("001", "01")}), "00f110");
  const auto s = roundTrip(ServingNetwork{plmn("001", "01")});
  EXPECT_EQ(s.plmn.mccView(), "001");
  EXPECT_EQ(s.plmn.mncView(), "01");
}

TEST_F(GtpV2Ies, ServingNetworkWithThreeDigitMnc) {
  EXPECT_EQ(encoded(ServingNetwork{plmn("310", "410")}), "130014");
  const auto s = roundTrip(ServingNetwork{plmn("310", "410")});
  EXPECT_EQ(s.plmn.mccView(), "310");
  EXPECT_EQ(s.plmn.mncView(), "410");
}

// 8.21 ULI: a flags octet (bit 1 CGI ... bit 8 Extended Macro eNodeB ID), then
// the parts present, in bit order. PLMN 001/01 is 00 f1 10 throughout.
struct UliPart {
  const char* name;
  Uli uli;
  const char* hex;
};

std::vector<UliPart> uliParts() {
  const Plmn p = plmn("001", "01");
  std::vector<UliPart> parts;
  Uli u;
  u.cgi = Uli::Cgi{p, 0x1234, 0x5678};
  parts.push_back({"Cgi", u,
                   "01" "00f110" "1234" "5678"});  // 8.21.1
  u = Uli{};
  u.sai = Uli::Sai{p, 0x1234, 0x9abc};
  parts.push_back({"Sai", u,
                   "02" "00f110" "1234" "9abc"});  // 8.21.2
  u = Uli{};
  u.rai = Uli::Rai{p, 0x1234, 0x56};
  parts.push_back({"Rai", u,
                   "04" "00f110" "1234" "56ff"});  // 8.21.3: RAC, then 0xFF
  u = Uli{};
  u.tai = Uli::Tai{p, 0x0001};
  parts.push_back({"Tai", u,
                   "08" "00f110" "0001"});  // 8.21.4
  u = Uli{};
  u.ecgi = Uli::Ecgi{p, 0x0abcdef1};
  parts.push_back({"Ecgi", u,
                   "10" "00f110" "0abcdef1"});  // 8.21.5: 4 spare bits + 28-bit ECI
  u = Uli{};
  u.lai = Uli::Lai{p, 0x1234};
  parts.push_back({"Lai", u,
                   "20" "00f110" "1234"});  // 8.21.6
  u = Uli{};
  u.macro_enb = Uli::MacroEnb{p, 0x0f1234};
  parts.push_back({"MacroEnb", u,
                   "40" "00f110" "0f1234"});  // 8.21.7: 4 spare bits + 20-bit ID
  u = Uli{};
  u.extended_macro_enb = Uli::ExtendedMacroEnb{p, true, 0x1f1234};
  parts.push_back({"ExtendedMacroEnb", u,
                   "80" "00f110" "9f1234"});  // 8.21.8: SMeNB bit 8
  return parts;
}

void expectSameUli(const Uli& got, const Uli& want) {
  ASSERT_EQ(got.cgi.has_value(), want.cgi.has_value());
  if (want.cgi) {
    EXPECT_EQ(got.cgi->plmn, want.cgi->plmn);
    EXPECT_EQ(got.cgi->lac, want.cgi->lac);
    EXPECT_EQ(got.cgi->ci, want.cgi->ci);
  }
  ASSERT_EQ(got.sai.has_value(), want.sai.has_value());
  if (want.sai) {
    EXPECT_EQ(got.sai->plmn, want.sai->plmn);
    EXPECT_EQ(got.sai->lac, want.sai->lac);
    EXPECT_EQ(got.sai->sac, want.sai->sac);
  }
  ASSERT_EQ(got.rai.has_value(), want.rai.has_value());
  if (want.rai) {
    EXPECT_EQ(got.rai->plmn, want.rai->plmn);
    EXPECT_EQ(got.rai->lac, want.rai->lac);
    EXPECT_EQ(got.rai->rac, want.rai->rac);
  }
  ASSERT_EQ(got.tai.has_value(), want.tai.has_value());
  if (want.tai) {
    EXPECT_EQ(got.tai->plmn, want.tai->plmn);
    EXPECT_EQ(got.tai->tac, want.tai->tac);
  }
  ASSERT_EQ(got.ecgi.has_value(), want.ecgi.has_value());
  if (want.ecgi) {
    EXPECT_EQ(got.ecgi->plmn, want.ecgi->plmn);
    EXPECT_EQ(got.ecgi->eci, want.ecgi->eci);
  }
  ASSERT_EQ(got.lai.has_value(), want.lai.has_value());
  if (want.lai) {
    EXPECT_EQ(got.lai->plmn, want.lai->plmn);
    EXPECT_EQ(got.lai->lac, want.lai->lac);
  }
  ASSERT_EQ(got.macro_enb.has_value(), want.macro_enb.has_value());
  if (want.macro_enb) {
    EXPECT_EQ(got.macro_enb->plmn, want.macro_enb->plmn);
    EXPECT_EQ(got.macro_enb->id, want.macro_enb->id);
  }
  ASSERT_EQ(got.extended_macro_enb.has_value(), want.extended_macro_enb.has_value());
  if (want.extended_macro_enb) {
    EXPECT_EQ(got.extended_macro_enb->plmn, want.extended_macro_enb->plmn);
    EXPECT_EQ(got.extended_macro_enb->smenb, want.extended_macro_enb->smenb);
    EXPECT_EQ(got.extended_macro_enb->id, want.extended_macro_enb->id);
  }
}

TEST_F(GtpV2Ies, EachUliPartAlone) {
  for (const auto& part : uliParts()) {
    SCOPED_TRACE(part.name);
    EXPECT_EQ(encoded(part.uli), part.hex);
    expectSameUli(roundTrip(part.uli), part.uli);
  }
}

TEST_F(GtpV2Ies, AllUliPartsTogetherInBitOrder) {
  Uli all;
  std::string hex;
  uint8_t flags = 0;
  for (const auto& part : uliParts()) {
    flags |= fromHex(std::string_view(part.hex).substr(0, 2))[0];
    hex += std::string_view(part.hex).substr(2);
    if (part.uli.cgi) all.cgi = part.uli.cgi;
    if (part.uli.sai) all.sai = part.uli.sai;
    if (part.uli.rai) all.rai = part.uli.rai;
    if (part.uli.tai) all.tai = part.uli.tai;
    if (part.uli.ecgi) all.ecgi = part.uli.ecgi;
    if (part.uli.lai) all.lai = part.uli.lai;
    if (part.uli.macro_enb) all.macro_enb = part.uli.macro_enb;
    if (part.uli.extended_macro_enb) all.extended_macro_enb = part.uli.extended_macro_enb;
  }
  ASSERT_EQ(flags, 0xff);
  EXPECT_EQ(encoded(all), "ff" + hex);
  expectSameUli(roundTrip(all), all);
}

TEST_F(GtpV2Ies, UliWithThreeDigitMncAndSpareBitsMasked) {
  Uli u;
  u.tai = Uli::Tai{plmn("310", "410"), 0xabcd};
  u.ecgi = Uli::Ecgi{plmn("310", "410"), 0xf0000001};  // only 28 bits exist
  EXPECT_EQ(encoded(u),
            "18" "130014" "abcd" "130014" "00000001");
  EXPECT_EQ(roundTrip(u).ecgi->eci, 0x00000001u);
}

TEST_F(GtpV2Ies, UliCutInsideAPartIsTooShort) {
  EXPECT_EQ(decodeHex<Uli>("0800f11000").error().code, Errc::kIeTooShort);  // TAI needs 5
  EXPECT_EQ(decodeHex<Uli>("").error().code, Errc::kIeTooShort);
}

// 8.22 F-TEID: V4 (bit 8), V6 (bit 7), interface type (bits 6-1), TEID, then
// the IPv4 address before the IPv6 one.
TEST_F(GtpV2Ies, FTeidWithIpv4) {
  const FTeid f{10, 0x11223344, v4("192.0.2.1"), std::nullopt};  // 10: S11 MME GTP-C
  EXPECT_EQ(encoded(f),
            "8a" "11223344" "c0000201");
  const auto got = roundTrip(f);
  EXPECT_EQ(got.interface_type, 10);
  EXPECT_EQ(got.teid, 0x11223344u);
  EXPECT_EQ(got.ipv4, f.ipv4);
  EXPECT_FALSE(got.ipv6);
}

TEST_F(GtpV2Ies, FTeidWithIpv6) {
  const FTeid f{11, 0xffffffff, std::nullopt, v6("2001:db8::1")};
  EXPECT_EQ(encoded(f),
            "4b" "ffffffff" "20010db8000000000000000000000001");
  const auto got = roundTrip(f);
  EXPECT_FALSE(got.ipv4);
  EXPECT_EQ(got.ipv6, f.ipv6);
}

TEST_F(GtpV2Ies, FTeidWithBothAddresses) {
  const FTeid f{63, 1, v4("10.0.0.1"), v6("::1")};
  EXPECT_EQ(encoded(f),
            "ff" "00000001" "0a000001" "00000000000000000000000000000001");
  const auto got = roundTrip(f);
  EXPECT_EQ(got.interface_type, 63);
  EXPECT_EQ(got.ipv4, f.ipv4);
  EXPECT_EQ(got.ipv6, f.ipv6);
}

TEST_F(GtpV2Ies, FTeidWithoutAddressOrCutAddressIsRejected) {
  // Documented: an F-TEID names an endpoint; neither V4 nor V6 is no endpoint.
  EXPECT_EQ(decodeHex<FTeid>("0a11223344").error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<FTeid>("8a11223344c00002").error().code, Errc::kIeTooShort);
  EXPECT_EQ(decodeHex<FTeid>("4a11223344c0000201").error().code, Errc::kIeTooShort);
  EXPECT_EQ(decodeHex<FTeid>("8a112233").error().code, Errc::kIeTooShort);
}

// 8.4 Cause: value, spare | PCE | BCE | CS, then in rejections the offending
// IE: type, a Length of 0, spare | instance.
TEST_F(GtpV2Ies, CauseWithoutOffendingIe) {
  EXPECT_EQ(encoded(CauseIe{16, false, false, false, std::nullopt}), "1000");
  const auto c = roundTrip(CauseIe{16, false, false, true, std::nullopt});
  EXPECT_EQ(c.value, 16);
  EXPECT_TRUE(c.cs);
  EXPECT_FALSE(c.offending_ie);
}

TEST_F(GtpV2Ies, CauseWithOffendingIe) {
  const CauseIe c{70, true, true, false, CauseIe::OffendingIe{87, 1}};
  EXPECT_EQ(encoded(c),
            "46" "06" "57" "0000" "01");
  const auto got = roundTrip(c);
  EXPECT_EQ(got.value, 70);
  EXPECT_TRUE(got.pce);
  EXPECT_TRUE(got.bce);
  EXPECT_FALSE(got.cs);
  ASSERT_TRUE(got.offending_ie);
  EXPECT_EQ(got.offending_ie->type, 87);
  EXPECT_EQ(got.offending_ie->instance, 1);
  EXPECT_EQ(decodeHex<CauseIe>("10").error().code, Errc::kIeTooShort);
}

// 8.7 AMBR: uplink then downlink, kbps, 4 octets each.
TEST_F(GtpV2Ies, AmbrIsUplinkThenDownlink) {
  EXPECT_EQ(encoded(Ambr{0x1000, 0x2000}),
            "00001000" "00002000");
  const auto a = roundTrip(Ambr{0xffffffff, 1});
  EXPECT_EQ(a.uplink, 0xffffffffu);
  EXPECT_EQ(a.downlink, 1u);
}

// 8.14 PAA: PDN type, then IPv4 (4) / IPv6 prefix length + 16 / IPv4v6 with
// the IPv6 part first and the IPv4 address last.
TEST_F(GtpV2Ies, PaaIpv4) {
  const Paa p{1, v4("10.0.0.1"), 0, std::nullopt};
  EXPECT_EQ(encoded(p),
            "01" "0a000001");
  EXPECT_EQ(roundTrip(p).ipv4, p.ipv4);
}

TEST_F(GtpV2Ies, PaaIpv6) {
  const Paa p{2, std::nullopt, 64, v6("2001:db8:1::")};
  EXPECT_EQ(encoded(p),
            "02" "40" "20010db8000100000000000000000000");
  const auto got = roundTrip(p);
  EXPECT_EQ(got.ipv6_prefix_length, 64);
  EXPECT_EQ(got.ipv6, p.ipv6);
  EXPECT_FALSE(got.ipv4);
}

TEST_F(GtpV2Ies, PaaIpv4v6) {
  const Paa p{3, v4("10.0.0.1"), 64, v6("2001:db8:1::")};
  EXPECT_EQ(encoded(p),
            "03" "40" "20010db8000100000000000000000000" "0a000001");
  const auto got = roundTrip(p);
  EXPECT_EQ(got.pdn_type, 3);
  EXPECT_EQ(got.ipv4, p.ipv4);
  EXPECT_EQ(got.ipv6, p.ipv6);
}

TEST_F(GtpV2Ies, PaaNonIpCarriesNoAddress) {
  EXPECT_EQ(encoded(Paa{4, std::nullopt, 0, std::nullopt}), "04");
  EXPECT_EQ(decodeHex<Paa>("010a0000").error().code, Errc::kIeTooShort);
  EXPECT_EQ(decodeHex<Paa>("03402001").error().code, Errc::kIeTooShort);
}

// 8.12 Indication: flag octets numbered from 5 as in the spec figure.
TEST_F(GtpV2Ies, IndicationFlagsByOctetAndBit) {
  Indication i;
  i.octets = {0x80, 0x01};
  i.size = 2;
  EXPECT_EQ(encoded(i), "8001");
  const auto got = roundTrip(i);
  EXPECT_TRUE(got.flag(5, 8));  // DAF
  EXPECT_FALSE(got.flag(5, 1));
  EXPECT_TRUE(got.flag(6, 1));
  EXPECT_FALSE(got.flag(7, 1));  // not sent
}

TEST_F(GtpV2Ies, IndicationLongerThanTheViewIsCut) {
  // Later releases append octets; the view keeps 16, the IE is relayed whole.
  auto i = decodeHex<Indication>("0102030405060708090a0b0c0d0e0f101112");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->size, 16);
  EXPECT_EQ(i->octets[15], 0x10);
}

// 8.15 Bearer QoS: spare | PCI | PL (4 bits) | spare | PVI, QCI, then MBR UL,
// MBR DL, GBR UL, GBR DL as 5-octet integers.
TEST_F(GtpV2Ies, BearerQosBitsAndFortyBitRates) {
  BearerQos q;
  q.pci = true;
  q.pl = 15;
  q.pvi = true;
  q.qci = 9;
  q.mbr_uplink = 0xffffffffff;
  q.mbr_downlink = 1;
  q.gbr_uplink = 0x0102030405;
  q.gbr_downlink = 0;
  EXPECT_EQ(encoded(q),
            "7d" "09" "ffffffffff" "0000000001" "0102030405" "0000000000");
  const auto got = roundTrip(q);
  EXPECT_TRUE(got.pci);
  EXPECT_EQ(got.pl, 15);
  EXPECT_TRUE(got.pvi);
  EXPECT_EQ(got.qci, 9);
  EXPECT_EQ(got.mbr_uplink, 0xffffffffffu);
  EXPECT_EQ(got.mbr_downlink, 1u);
  EXPECT_EQ(got.gbr_uplink, 0x0102030405u);
  EXPECT_EQ(got.gbr_downlink, 0u);
}

TEST_F(GtpV2Ies, BearerQosIgnoresSpareBitsAndNeeds22Octets) {
  auto q = decodeHex<BearerQos>(
      "82" "05" "00000000000000000000000000000000000000000000");
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->pci);  // 0x82: spare bits 8 and 2 set
  EXPECT_EQ(q->pl, 0);
  EXPECT_FALSE(q->pvi);
  EXPECT_EQ(decodeHex<BearerQos>("7d09ffffffffff").error().code, Errc::kIeTooShort);
}

// 8.44 UE Time Zone: TS 24.008 time zone octet, then DST in bits 2-1.
TEST_F(GtpV2Ies, UeTimeZone) {
  EXPECT_EQ(encoded(UeTimeZone{0x40, 1}), "4001");
  const auto t = roundTrip(UeTimeZone{0x8a, 2});
  EXPECT_EQ(t.time_zone, 0x8a);
  EXPECT_EQ(t.daylight_saving_time, 2);
  EXPECT_EQ(decodeHex<UeTimeZone>("40ff")->daylight_saving_time, 3);
}

// 8.9 IP Address: 4 or 16 octets, nothing else.
TEST_F(GtpV2Ies, IpAddressIpv4AndIpv6) {
  EXPECT_EQ(encoded(IpAddress{v4("1.1.1.1"), std::nullopt}), "01010101");
  EXPECT_EQ(roundTrip(IpAddress{std::nullopt, v6("2001::1")}).ipv6, v6("2001::1"));
  EXPECT_EQ(decodeHex<IpAddress>("0101010101").error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<IpAddress>("010101").error().code, Errc::kIeTooShort);
}

// 8.62 FQ-CSID: node-ID type (bits 8-5) | number of CSIDs (bits 4-1), the
// node-ID (IPv4, IPv6, or MCC/MNC-based 4 octets), then 2 octets per CSID.
TEST_F(GtpV2Ies, FqCsidNodeIdTypeIpv4) {
  FqCsid f;
  f.node_id_type = 0;
  f.ipv4 = v4("1.1.1.1");
  f.csid_count = 2;
  f.csids[0] = 1;
  f.csids[1] = 2;
  EXPECT_EQ(encoded(f),
            "02" "01010101" "0001" "0002");  // go-gtp's vector, gtpv2_ie line 41
  const auto got = roundTrip(f);
  EXPECT_EQ(got.ipv4, f.ipv4);
  EXPECT_EQ(got.csid_count, 2);
  EXPECT_EQ(got.csids[1], 2);
}

TEST_F(GtpV2Ies, FqCsidNodeIdTypeIpv6) {
  FqCsid f;
  f.node_id_type = 1;
  f.ipv6 = v6("2001::1");
  f.csid_count = 1;
  f.csids[0] = 0xbeef;
  EXPECT_EQ(encoded(f),
            "11" "20010000000000000000000000000001" "beef");
  EXPECT_EQ(roundTrip(f).ipv6, f.ipv6);
}

TEST_F(GtpV2Ies, FqCsidNodeIdTypeMccMnc) {
  FqCsid f;
  f.node_id_type = 2;
  f.node_id = 0x12345678;
  f.csid_count = 15;
  for (uint16_t i = 0; i < 15; ++i) f.csids[i] = i;
  const auto got = roundTrip(f);
  EXPECT_EQ(got.node_id_type, 2);
  EXPECT_EQ(got.node_id, 0x12345678u);
  EXPECT_EQ(got.csid_count, 15);
  EXPECT_EQ(got.csids[14], 14);
}

TEST_F(GtpV2Ies, FqCsidUnknownNodeTypeOrMissingCsidsIsRejected) {
  EXPECT_EQ(decodeHex<FqCsid>("3101010101"
                              "0001")
                .error()
                .code,
            Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<FqCsid>("02010101010001").error().code, Errc::kIeTooShort);
}

TEST_F(GtpV2Ies, OpaqueOctetsAreCarriedAsTheyAre) {
  const auto pco = fromHex("8080211001000010");
  EXPECT_EQ(encoded(Pco{pco}), "8080211001000010");
  EXPECT_EQ(toHex(roundTrip(Apco{pco}).octets), "8080211001000010");
  EXPECT_EQ(toHex(roundTrip(Epco{pco}).octets), "8080211001000010");
}

// 8.67 Private Extension: enterprise ID (2 octets), proprietary value.
TEST_F(GtpV2Ies, PrivateExtension) {
  const auto value = fromHex("deadbeef");
  EXPECT_EQ(encoded(PrivateExtension{10415, value}), "28afdeadbeef");
  const auto got = roundTrip(PrivateExtension{10415, value});
  EXPECT_EQ(got.enterprise_id, 10415);
  EXPECT_EQ(toHex(got.value), "deadbeef");
  EXPECT_EQ(decodeHex<PrivateExtension>("28").error().code, Errc::kIeTooShort);
}

TEST_F(GtpV2Ies, InstanceIsKept) {
  EXPECT_EQ(encoded(FTeid{7, 1, v4("1.1.1.1"), std::nullopt}, 1),
            "87" "00000001" "01010101");
  EXPECT_EQ(message_.ie(0).instance(), 1);
}

TEST_F(GtpV2Ies, ReadOfTheWrongTypeFails) {
  encoded(Recovery{1});
  auto r = read<Ebi>(message_, message_.ie(0));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(r.error().ie_type, 3);
}

TEST_F(GtpV2Ies, ReadFirstOfAnAbsentIeNamesIt) {
  encoded(Recovery{1});
  auto r = readFirst<FTeid>(message_, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kMandatoryIeMissing);
  EXPECT_EQ(r.error().ie_type, 87);
  EXPECT_EQ(r.error().ie_instance, 1);
}

}  // namespace
}  // namespace gtpcp::gtp::v2
