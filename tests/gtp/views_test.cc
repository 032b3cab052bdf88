// The typed views both versions share (views.h): one template per coding,
// a distinct type per version, and the version's own views where the wire
// forms differ.
#include "common/gtp/views.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/ies.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp {
namespace {

using testing::fromHex;
using testing::toHex;

// The v1 and v2 views of a kind are distinct types (each has its version's
// kType) that share the coding.
TEST(GtpViews, SharedTemplatesKeepEachVersionsType) {
  static_assert(std::is_same_v<decltype(v2::Recovery::kType), const v2::IeType>);
  static_assert(std::is_same_v<decltype(v1::Recovery::kType), const v1::IeType>);
  static_assert(!std::is_same_v<v1::Apn, v2::Apn>);
  static_assert(v2::Apn::kType == v2::IeType::kApn && v1::Apn::kType == v1::IeType::kApn);
  static_assert(ViewOf<v2::FTeid, v2::Ie> && !ViewOf<v2::FTeid, v1::Ie>);
  static_assert(ViewOf<v1::Nsapi, v1::Ie> && !ViewOf<v1::Nsapi, v2::Ie>);
}

template <class T>
std::string encodedHex(const T& value) {
  std::vector<uint8_t> out(value.encodedSize());
  value.encode(out.data());
  return toHex(out);
}

// Where the versions differ on the wire, the views do too.
TEST(GtpViews, VersionsDifferWhereTheirWireFormsDo) {
  Digits d;
  for (char c : std::string("001010123456789")) d.push(c);
  EXPECT_EQ(encodedHex(v2::Imsi{d}), "00010121436587f9");    // as long as the digits
  EXPECT_EQ(encodedHex(v1::Imsi{d}), "00010121436587f9");    // 8 octets: 15 digits fill them
  Digits short_digits;
  for (char c : std::string("12345")) short_digits.push(c);
  EXPECT_EQ(encodedHex(v2::Imsi{short_digits}), "2143f5");
  EXPECT_EQ(encodedHex(v1::Imsi{short_digits}), "2143f5ffffffffff");  // TV: padded to 8
  EXPECT_EQ(encodedHex(v2::SelectionMode{1}), "01");  // spare bits 0
  EXPECT_EQ(encodedHex(v1::SelectionMode{1}), "fd");  // spare bits 1
  // An all-filler IMSI is no IMSI in GTPv1 (TS 29.060 §7.7.2), an empty digit
  // string in GTPv2.
  const auto filler = fromHex("ffffffffffffffff");
  EXPECT_EQ(v1::Imsi::decode(filler).error().code, Errc::kIeInvalidValue);
  EXPECT_TRUE(v2::Imsi::decode(filler));
}

// The errors of a shared view name the IE type of its version.
TEST(GtpViews, SharedViewErrorsNameTheirType) {
  const std::span<const uint8_t> empty;
  EXPECT_EQ(v2::Ebi::decode(empty).error(), (Error{Errc::kIeTooShort, 73, 0, 0}));
  EXPECT_EQ(v1::Nsapi::decode(empty).error(), (Error{Errc::kIeTooShort, 20, 0, 0}));
  EXPECT_EQ(v2::IpAddress::decode(fromHex("0102")).error(), (Error{Errc::kIeTooShort, 74, 0, 0}));
  EXPECT_EQ(v1::GsnAddress::decode(fromHex("0102030405")).error(), (Error{Errc::kIeInvalidValue, 133, 0, 0}));
}

}  // namespace
}  // namespace gtpcp::gtp
