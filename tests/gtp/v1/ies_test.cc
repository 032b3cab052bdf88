// GTPv1-C typed IE views (v1/ies.h): encode -> message -> decode round trips,
// with value octets written out by hand from TS 29.060 clause 7.7.
#include "common/gtp/v1/ies.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::digits;
using testing::fromHex;
using testing::toHex;

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

class GtpV1Ies : public ::testing::Test {
 protected:
  // `value` alone in a Create PDP Context Request; the IE's value octets as hex.
  template <class T>
  std::string encoded(const T& value) {
    buffer_.assign(1024, 0);
    Builder b(buffer_);
    b.begin(MessageType::kCreatePdpContextRequest, 0, 1);
    b.add(value);
    auto bytes = b.finish();
    EXPECT_TRUE(bytes);
    if (!bytes) return "build failed";
    auto ok = message_.decode(*bytes);
    EXPECT_TRUE(ok);
    if (!ok || message_.ieCount() != 1) return "decode failed";
    EXPECT_EQ(message_.ie(0).type, static_cast<uint8_t>(T::kType));
    return toHex(message_.value(message_.ie(0)));
  }

  template <class T>
  T roundTrip(const T& value) {
    const std::string first = encoded(value);
    auto r = read<T>(message_, message_.ie(0));
    EXPECT_TRUE(r) << errcName(r.error().code);
    if (!r) return T{};
    std::vector<uint8_t> again(r->encodedSize());
    if (!again.empty()) r->encode(again.data());
    EXPECT_EQ(toHex(again), first);
    return *r;
  }

  template <class T>
  Result<T> decodeHex(std::string_view hex) {
    raw_ = fromHex(hex);
    return T::decode(raw_);
  }

  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> raw_;
  Message message_;
};

// 7.7.2 IMSI: TV, always 8 octets; unused nibbles are 1111.
TEST_F(GtpV1Ies, FifteenDigitImsiFillsEightOctets) {
  EXPECT_EQ(encoded(Imsi{digits("001010123456789")}), "00010121436587f9");
  EXPECT_EQ(roundTrip(Imsi{digits("001010123456789")}).digits.view(), "001010123456789");
}

TEST_F(GtpV1Ies, ShortImsiIsPaddedWithFillers) {
  EXPECT_EQ(encoded(Imsi{digits("12345678901234")}), "21436587092143ff");
  EXPECT_EQ(roundTrip(Imsi{digits("12345678901234")}).digits.view(), "12345678901234");
  EXPECT_EQ(encoded(Imsi{digits("123456")}), "214365ffffffffff");
  EXPECT_EQ(roundTrip(Imsi{digits("123456")}).digits.view(), "123456");
}

TEST_F(GtpV1Ies, ImsiWithoutDigitsIsRejected) {
  EXPECT_EQ(decodeHex<Imsi>("ffffffffffffffff").error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<Imsi>("21436587092143a5").error().code, Errc::kIeInvalidValue);
}

// 7.7.53 IMEI(SV): 8 octets of TBCD.
TEST_F(GtpV1Ies, ImeiSv) {
  EXPECT_EQ(encoded(ImeiSv{digits("3569380356438091")}), "5396833065340819");
  EXPECT_EQ(roundTrip(ImeiSv{digits("356938035643809")}).digits.view(), "356938035643809");
}

// 7.7.33 MSISDN: address type octet (0x91: international, E.164), TBCD digits.
TEST_F(GtpV1Ies, MsisdnHasItsAddressTypeOctet) {
  EXPECT_EQ(encoded(Msisdn{0x91, digits("46702123456")}),
            "91" "6407123254f6");
  const auto m = roundTrip(Msisdn{0x91, digits("46702123456")});
  EXPECT_EQ(m.address_type, 0x91);
  EXPECT_EQ(m.digits.view(), "46702123456");
  EXPECT_EQ(decodeHex<Msisdn>("91").error().code, Errc::kIeTooShort);
}

// 7.7.3 RAI: PLMN (TS 24.008 §10.5.5.15), LAC, RAC.
TEST_F(GtpV1Ies, Rai) {
  const Rai r{*makePlmn("262", "01"), 0x1234, 0x56};
  EXPECT_EQ(encoded(r),
            "62f210" "1234" "56");
  const auto got = roundTrip(r);
  EXPECT_EQ(got.plmn.mccView(), "262");
  EXPECT_EQ(got.plmn.mncView(), "01");
  EXPECT_EQ(got.lac, 0x1234);
  EXPECT_EQ(got.rac, 0x56);
}

// 7.7.27 End User Address: spare 1111 | PDP type organisation, PDP type number,
// address (IPv4 before IPv6 for IPv4v6), or nothing for a dynamic address.
TEST_F(GtpV1Ies, EndUserAddressIpv4) {
  const EndUserAddress e{1, 0x21, v4("10.0.0.1"), std::nullopt};
  EXPECT_EQ(encoded(e),
            "f1" "21" "0a000001");
  EXPECT_EQ(roundTrip(e).ipv4, e.ipv4);
}

TEST_F(GtpV1Ies, EndUserAddressIpv6) {
  const EndUserAddress e{1, 0x57, std::nullopt, v6("2001::1")};
  EXPECT_EQ(encoded(e),
            "f1" "57" "20010000000000000000000000000001");
  EXPECT_EQ(roundTrip(e).ipv6, e.ipv6);
}

TEST_F(GtpV1Ies, EndUserAddressIpv4v6) {
  const EndUserAddress e{1, 0x8d, v4("10.42.0.3"), v6("2805:215:8284:2522::")};
  EXPECT_EQ(encoded(e),
            "f1" "8d" "0a2a0003" "28050215828425220000000000000000");
  const auto got = roundTrip(e);
  EXPECT_EQ(got.ipv4, e.ipv4);
  EXPECT_EQ(got.ipv6, e.ipv6);
}

TEST_F(GtpV1Ies, EndUserAddressDynamicAndPpp) {
  const auto dynamic = roundTrip(EndUserAddress{1, 0x21, std::nullopt, std::nullopt});
  EXPECT_EQ(message_.ie(0).length, 2);
  EXPECT_FALSE(dynamic.ipv4);
  EXPECT_EQ(encoded(EndUserAddress{0, 0x01, std::nullopt, std::nullopt}), "f001");  // ETSI, PPP
  EXPECT_EQ(decodeHex<EndUserAddress>("f1210a0000").error().code, Errc::kIeInvalidValue);
}

TEST_F(GtpV1Ies, Apn) {
  Apn a;
  for (char c : std::string_view("internet")) a.text.push(c);
  EXPECT_EQ(encoded(a), "08696e7465726e6574");
  EXPECT_EQ(roundTrip(a).text.view(), "internet");
}

// 7.7.32 GSN Address: 4 or 16 octets.
TEST_F(GtpV1Ies, GsnAddressBothFamilies) {
  EXPECT_EQ(encoded(GsnAddress{v4("192.0.2.1"), std::nullopt}), "c0000201");
  EXPECT_EQ(roundTrip(GsnAddress{std::nullopt, v6("2001:db8::1")}).ipv6, v6("2001:db8::1"));
  EXPECT_EQ(roundTrip(ChargingGatewayAddress{v4("10.1.1.1"), std::nullopt}).ipv4, v4("10.1.1.1"));
  EXPECT_EQ(decodeHex<GsnAddress>("c000020101").error().code, Errc::kIeInvalidValue);
  EXPECT_EQ(decodeHex<GsnAddress>("").error().code, Errc::kIeTooShort);
}

// 7.7.34 QoS Profile: ARP octet, then the TS 24.008 QoS octets (3 at least).
TEST_F(GtpV1Ies, QosProfile) {
  const auto qos = fromHex("0b921f");
  EXPECT_EQ(encoded(QosProfile{2, qos}), "020b921f");
  const auto got = roundTrip(QosProfile{2, qos});
  EXPECT_EQ(got.allocation_retention_priority, 2);
  EXPECT_EQ(toHex(got.qos), "0b921f");
  EXPECT_EQ(decodeHex<QosProfile>("020b92").error().code, Errc::kIeTooShort);
}

// 7.7.51 ULI: geographic location type, then PLMN, LAC, CI / SAC / RAC.
TEST_F(GtpV1Ies, UliCgiAndRai) {
  const Uli cgi{0, *makePlmn("001", "01"), 0x1234, 0x5678};
  EXPECT_EQ(encoded(cgi),
            "00" "00f110" "1234" "5678");
  const auto got = roundTrip(cgi);
  EXPECT_EQ(got.geographic_location_type, 0);
  EXPECT_EQ(got.lac, 0x1234);
  EXPECT_EQ(got.ci_sac_rac, 0x5678);
  // For a RAI the RAC is the first of the two octets, the second is 0xFF.
  const Uli rai{2, *makePlmn("001", "01"), 0x1234, 0x56ff};
  EXPECT_EQ(encoded(rai),
            "02" "00f110" "1234" "56ff");
  EXPECT_EQ(decodeHex<Uli>("0000f1101234").error().code, Errc::kIeTooShort);
}

// 7.7.52 MS Time Zone; tshark reads 80 00 as "GMT + 2 hours 0 minutes".
TEST_F(GtpV1Ies, MsTimeZone) {
  EXPECT_EQ(encoded(MsTimeZone{0x80, 0}), "8000");
  const auto t = roundTrip(MsTimeZone{0x40, 1});
  EXPECT_EQ(t.time_zone, 0x40);
  EXPECT_EQ(t.daylight_saving_time, 1);
}

TEST_F(GtpV1Ies, OpaqueAndPrivateExtension) {
  const auto octets = fromHex("8080211001000010");
  EXPECT_EQ(toHex(roundTrip(Pco{octets}).octets), "8080211001000010");
  EXPECT_EQ(toHex(roundTrip(Tft{octets}).octets), "8080211001000010");
  const auto value = fromHex("deadbeef");
  EXPECT_EQ(encoded(PrivateExtension{128, value}), "0080deadbeef");
  EXPECT_EQ(roundTrip(PrivateExtension{128, value}).extension_identifier, 128);
}

// TV values with fixed lengths (Table 37).
TEST_F(GtpV1Ies, FixedLengthValues) {
  EXPECT_EQ(encoded(CauseIe{128}), "80");
  EXPECT_EQ(roundTrip(Recovery{255}).value, 255);
  EXPECT_EQ(encoded(TeidDataI{0xdeadbeef}), "deadbeef");
  EXPECT_EQ(roundTrip(TeidControlPlane{0x01020304}).value, 0x01020304u);
  EXPECT_EQ(roundTrip(Tlli{0xc0000001}).value, 0xc0000001u);
  EXPECT_EQ(roundTrip(PTmsi{0x00beebee}).value, 0x00beebeeu);
  EXPECT_EQ(roundTrip(ChargingId{0xffffffff}).value, 0xffffffffu);
  EXPECT_EQ(encoded(ChargingCharacteristics{0x0800}), "0800");
  EXPECT_EQ(roundTrip(TraceReference{0xabcd}).value, 0xabcd);
  EXPECT_EQ(roundTrip(TraceType{1}).value, 1);
}

// 7.7.6 / 7.7.16: the flag in bit 1, spare bits sent as 1s.
TEST_F(GtpV1Ies, FlagsHaveSpareOnes) {
  EXPECT_EQ(encoded(TeardownInd{true}), "ff");
  EXPECT_EQ(encoded(TeardownInd{false}), "fe");
  EXPECT_TRUE(roundTrip(ReorderingRequired{true}).value);
  EXPECT_FALSE(decodeHex<TeardownInd>("fe")->value);
}

// 7.7.12 Selection Mode: spare 1s, value in bits 2-1. 7.7.17 NSAPI: bits 4-1.
TEST_F(GtpV1Ies, SelectionModeAndNsapi) {
  EXPECT_EQ(encoded(SelectionMode{1}), "fd");
  EXPECT_EQ(roundTrip(SelectionMode{2}).value, 2);
  EXPECT_EQ(encoded(Nsapi{5}), "05");
  EXPECT_EQ(decodeHex<Nsapi>("f5")->value, 5);
}

// 7.7.15 TEID Data II: spare | NSAPI, then the TEID.
TEST_F(GtpV1Ies, TeidDataII) {
  EXPECT_EQ(encoded(TeidDataII{5, 0x11223344}),
            "05" "11223344");
  const auto t = roundTrip(TeidDataII{15, 0xffffffff});
  EXPECT_EQ(t.nsapi, 15);
  EXPECT_EQ(t.teid, 0xffffffffu);
  EXPECT_EQ(decodeHex<TeidDataII>("deadbeef").error().code, Errc::kIeTooShort);
}

// TLV one-octet values (7.7.48 Common Flags, 7.7.49 APN Restriction, 7.7.50 RAT Type).
TEST_F(GtpV1Ies, TlvOneOctetValues) {
  EXPECT_EQ(encoded(RatType{6}), "06");
  EXPECT_EQ(message_.ie(0).header_size, 3);
  EXPECT_EQ(roundTrip(CommonFlags{0x40}).value, 0x40);
  EXPECT_EQ(roundTrip(ApnRestriction{3}).value, 3);
  EXPECT_EQ(decodeHex<RatType>("").error().code, Errc::kIeTooShort);
}

TEST_F(GtpV1Ies, ReadNthOfAnAbsentIeNamesIt) {
  encoded(Recovery{1});
  auto r = readNth<GsnAddress>(message_, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kMandatoryIeMissing);
  EXPECT_EQ(r.error().ie_type, 133);
}

}  // namespace
}  // namespace gtpcp::gtp::v1
