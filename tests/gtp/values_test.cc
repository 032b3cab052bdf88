// Shared value codings: TBCD digits (TS 29.002, TS 24.008 §10.5.1.4), APN
// labels (TS 23.003 §9.1), PLMN identities (TS 24.008 §10.5.1.3) and IP text.
#include "common/gtp/values.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp {
namespace {

using testing::fromHex;
using testing::toHex;

std::string tbcd(std::string_view hex, TbcdMode mode = TbcdMode::kStrict) {
  const auto bytes = fromHex(hex);
  auto d = decodeTbcd(bytes, mode);
  return d ? std::string(d->view()) : "error:" + std::string(errcName(d.error().code));
}

std::string encodedTbcd(std::string_view digits) {
  std::array<uint8_t, 16> out{};
  auto n = encodeTbcd(digits, out);
  return n ? toHex(std::span(out).first(*n)) : "error:" + std::string(errcName(n.error().code));
}

// Two digits per octet, the first in the low nibble; an odd count ends with a
// 0xF filler in the high nibble of the last octet.
TEST(GtpTbcd, DecodesOddDigitCountWithFiller) {
  EXPECT_EQ(tbcd("00010121436587f9"), "001010123456789");
}

TEST(GtpTbcd, DecodesEvenDigitCount) { EXPECT_EQ(tbcd("2143658709"), "1234567890"); }

TEST(GtpTbcd, EmptyValueIsNoDigits) { EXPECT_EQ(tbcd(""), ""); }

TEST(GtpTbcd, StrictRejectsANonDigitNibble) { EXPECT_EQ(tbcd("21a3"), "error:ie_invalid_value"); }

TEST(GtpTbcd, StrictRejectsADigitAfterTheFiller) {
  // 0xF in a low nibble followed by a digit: not a filler, a malformed value.
  EXPECT_EQ(tbcd("2f43"), "error:ie_invalid_value");
}

// Documented tolerance (values.cc): fixed-size fields such as the 8-octet
// GTPv1 IMSI pad with several 0xF nibbles, so strict accepts 0xF up to the end.
TEST(GtpTbcd, StrictAcceptsSeveralTrailingFillers) {
  EXPECT_EQ(tbcd("214365f7ffff"), "1234567");
  // Also in GTPv2, where only one filler can occur: the MEI of gtpv2.jsonl
  // line 31 ends in ff, which tshark shows as "17567547897068?".
  EXPECT_EQ(tbcd("71655774980786ff"), "17567547897068");
}

// kLenient renders like Wireshark: '?' for a non-digit, a high-nibble 0xF
// ends the digits (vectors gtpv2.jsonl lines 29 and 31 show both).
TEST(GtpTbcd, LenientShowsNonDigitsAsQuestionMarks) {
  EXPECT_EQ(tbcd("000000000001e240", TbcdMode::kLenient), "0000000000102?04");
  EXPECT_EQ(tbcd("000000000001e240"), "error:ie_invalid_value");
  EXPECT_EQ(tbcd("71655774980786ff", TbcdMode::kLenient), "17567547897068?");
}

TEST(GtpTbcd, EncodesOddCountWithFiller) {
  EXPECT_EQ(encodedTbcd("001010123456789"), "00010121436587f9");
}

TEST(GtpTbcd, EncodesEvenCount) { EXPECT_EQ(encodedTbcd("1234"), "2143"); }

TEST(GtpTbcd, EncodeRejectsNonDigits) { EXPECT_EQ(encodedTbcd("12a4"), "error:invalid_argument"); }

TEST(GtpTbcd, EncodeRejectsTooSmallBuffer) {
  std::array<uint8_t, 2> out{};
  auto n = encodeTbcd("12345", out);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, Errc::kBufferTooSmall);
}

std::string apn(std::string_view hex) {
  const auto bytes = fromHex(hex);
  auto a = decodeApn(bytes);
  return a ? std::string(a->view()) : "error:" + std::string(errcName(a.error().code));
}

std::string encodedApn(std::string_view dotted) {
  std::array<uint8_t, 128> out{};
  auto n = encodeApn(dotted, out);
  return n ? toHex(std::span(out).first(*n)) : "error:" + std::string(errcName(n.error().code));
}

// TS 23.003 §9.1: each label preceded by its length octet, no dots on the wire.
TEST(GtpApn, DecodesLabels) {
  EXPECT_EQ(apn("08696e7465726e6574"), "internet");
  EXPECT_EQ(apn("0764656661756c74066d6e63303031056d636330310467707273"),
            "default.mnc001.mcc01.gprs");
}

// Documented choice: an APN sent as plain text is refused (it would be routed
// as some other APN). "internet" read as labels: first length 0x69 > 7 left.
TEST(GtpApn, PlainTextIsRejected) { EXPECT_EQ(apn("696e7465726e6574"), "error:ie_invalid_value"); }

TEST(GtpApn, EmptyLabelIsRejected) { EXPECT_EQ(apn("0161000162"), "error:ie_invalid_value"); }

TEST(GtpApn, LabelPastTheEndIsRejected) { EXPECT_EQ(apn("05616263"), "error:ie_invalid_value"); }

TEST(GtpApn, DotInsideALabelIsRejected) { EXPECT_EQ(apn("03612e62"), "error:ie_invalid_value"); }

TEST(GtpApn, MoreThan100OctetsIsRejected) {
  // TS 23.003 §9.1: an APN is at most 100 octets. 50 labels "a" are 100 octets;
  // 49 labels "a" and one "aa" are 101.
  std::string at_limit, over;
  for (int i = 0; i < 50; ++i) at_limit += "0161";
  for (int i = 0; i < 49; ++i) over += "0161";
  over += "026161";
  ASSERT_EQ(fromHex(at_limit).size(), 100u);
  ASSERT_EQ(fromHex(over).size(), 101u);
  EXPECT_EQ(apn(at_limit).size(), 99u);
  EXPECT_EQ(apn(over), "error:ie_invalid_value");
}

TEST(GtpApn, EncodesLabels) {
  EXPECT_EQ(encodedApn("internet.mnc001.mcc001.gprs"),
            "08696e7465726e6574" "066d6e63303031" "066d6363303031" "0467707273");
}

TEST(GtpApn, EncodeRejectsEmptyAndLongLabels) {
  EXPECT_EQ(encodedApn("a..b"), "error:invalid_argument");
  EXPECT_EQ(encodedApn(std::string(64, 'a')), "error:invalid_argument");
  EXPECT_EQ(encodedApn(std::string(63, 'a')), "3f" + toHex(std::vector<uint8_t>(63, 'a')));
}

TEST(GtpApn, EncodeRejectsMoreThan100Octets) {
  // 99 characters encode to 100 octets (one length octet per label, no dots).
  const std::string ok = std::string(49, 'a') + "." + std::string(49, 'b');
  EXPECT_EQ(ok.size() + 1, 100u);
  EXPECT_NE(encodedApn(ok).rfind("error", 0), 0u);
  EXPECT_EQ(encodedApn(ok + "c"), "error:invalid_argument");
}

TEST(GtpApn, EmptyTextEncodesToNothing) { EXPECT_EQ(encodedApn(""), ""); }

// TS 24.008 Figure 10.5.3: MCC2|MCC1, MNC3|MCC3, MNC2|MNC1; MNC3 = F for two digits.
TEST(GtpPlmn, DecodesThreeDigitMnc) {
  const auto b = fromHex("216354");  // tshark: "MCC 123 , MNC 456" (gtpv2_ie.jsonl line 13)
  auto p = decodePlmn(b.data());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mccView(), "123");
  EXPECT_EQ(p->mncView(), "456");
  EXPECT_EQ(p->mnc_digits, 3);
}

TEST(GtpPlmn, DecodesTwoDigitMnc) {
  const auto b = fromHex("21f354");  // MCC 123, MNC 45
  auto p = decodePlmn(b.data());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mccView(), "123");
  EXPECT_EQ(p->mncView(), "45");
}

TEST(GtpPlmn, RejectsNonDigits) {
  const auto b = fromHex("2a3354");
  EXPECT_FALSE(decodePlmn(b.data()));
}

TEST(GtpPlmn, EncodesBothMncLengths) {
  uint8_t out[3];
  encodePlmn(*makePlmn("001", "01"), out);
  EXPECT_EQ(toHex(out), "00f110");
  encodePlmn(*makePlmn("310", "410"), out);
  EXPECT_EQ(toHex(out), "130014");
}

TEST(GtpPlmn, MakeRejectsBadDigits) {
  EXPECT_FALSE(makePlmn("01", "01"));
  EXPECT_FALSE(makePlmn("001", "1"));
  EXPECT_FALSE(makePlmn("001", "0001"));
  EXPECT_FALSE(makePlmn("00a", "01"));
}

TEST(GtpIpText, ParsesAndPrints) {
  Ipv4 a;
  ASSERT_TRUE(parseIpv4("192.0.2.1", a));
  EXPECT_EQ(toString(a), "192.0.2.1");
  EXPECT_FALSE(parseIpv4("192.0.2", a));
  Ipv6 b;
  ASSERT_TRUE(parseIpv6("2001:db8::1", b));
  EXPECT_EQ(toString(b), "2001:db8::1");
  EXPECT_FALSE(parseIpv6("2001:db8::g", b));
}

}  // namespace
}  // namespace gtpcp::gtp
