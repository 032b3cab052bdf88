// In-place patches of GTPv1-C messages (v1/patch.h), on a captured Create PDP
// Context Request/Response (zeek, gtpv1.jsonl lines 52-53): the message still
// decodes, the field reads back, every other octet is the one received.
#include "common/gtp/v1/patch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::fromHex;
using testing::toHex;

constexpr int kCreatePdpContextRequest = 52;

class GtpV1Patch : public ::testing::Test {
 protected:
  void load(int line) {
    static const auto records = testing::loadVectors("gtpv1.jsonl");
    original_ = records.at(static_cast<std::size_t>(line - 1)).bytes();
    load(original_);
  }
  void load(const std::vector<uint8_t>& bytes) {
    original_ = bytes;
    bytes_ = bytes;
    ASSERT_TRUE(message_.decode(bytes_));
  }

  std::string expectedWith(std::size_t offset, std::string_view hex) {
    std::vector<uint8_t> e = original_;
    const auto field = fromHex(hex);
    std::memcpy(e.data() + offset, field.data(), field.size());
    return toHex(e);
  }

  void expectDecodes() {
    auto ok = again_.decode(bytes_);
    ASSERT_TRUE(ok) << describe(ok.error());
    EXPECT_EQ(again_.ieCount(), message_.ieCount());
  }

  std::vector<uint8_t> original_, bytes_;
  Message message_, again_;
};

TEST_F(GtpV1Patch, HeaderTeid) {
  load(kCreatePdpContextRequest);
  patchTeid(bytes_, 0xa1b2c3d4);
  EXPECT_EQ(toHex(bytes_), expectedWith(4, "a1b2c3d4"));  // §6: octets 5-8
  expectDecodes();
  EXPECT_EQ(again_.header().teid, 0xa1b2c3d4u);
}

TEST_F(GtpV1Patch, SequenceNumber) {
  load(kCreatePdpContextRequest);
  ASSERT_TRUE(patchSequenceNumber(bytes_, 0xbeef));
  EXPECT_EQ(toHex(bytes_), expectedWith(8, "beef"));  // octets 9-10
  expectDecodes();
  EXPECT_EQ(again_.header().sequence_number, 0xbeef);
}

// With E, S and PN all 0 the header has no sequence number field (§6).
TEST_F(GtpV1Patch, SequenceNumberRefusedWithoutTheField) {
  load(
      fromHex("30"
              "ff" "0004" "00000001" "45000000"));
  EXPECT_FALSE(patchSequenceNumber(bytes_, 1));
  EXPECT_EQ(bytes_, original_);
}

TEST_F(GtpV1Patch, TeidDataIAndControlPlane) {
  load(kCreatePdpContextRequest);
  const Ie* data = message_.find(IeType::kTeidDataI);
  const Ie* control = message_.find(IeType::kTeidControlPlane);
  ASSERT_NE(data, nullptr);
  ASSERT_NE(control, nullptr);
  patchTeidIe(bytes_, *data, 0x01020304);
  EXPECT_EQ(toHex(bytes_), expectedWith(data->valueOffset(), "01020304"));
  original_ = bytes_;
  patchTeidIe(bytes_, *control, 0x05060708);
  EXPECT_EQ(toHex(bytes_), expectedWith(control->valueOffset(), "05060708"));
  expectDecodes();
  EXPECT_EQ(readNth<TeidDataI>(again_)->value, 0x01020304u);
  EXPECT_EQ(readNth<TeidControlPlane>(again_)->value, 0x05060708u);
}

TEST_F(GtpV1Patch, GsnAddressOfTheSameFamily) {
  load(kCreatePdpContextRequest);
  const Ie* user = message_.find(IeType::kGsnAddress, 1);
  ASSERT_NE(user, nullptr);
  ASSERT_TRUE(patchGsnAddress(bytes_, *user, Ipv4{{203, 0, 113, 9}}));
  EXPECT_EQ(toHex(bytes_), expectedWith(user->valueOffset(), "cb007109"));
  expectDecodes();
  EXPECT_EQ(toString(*readNth<GsnAddress>(again_, 1)->ipv4), "203.0.113.9");
  EXPECT_EQ(toString(*readNth<GsnAddress>(again_, 0)->ipv4), "192.169.100.1");
}

TEST_F(GtpV1Patch, GsnAddressOfTheOtherFamilyIsRefused) {
  load(kCreatePdpContextRequest);
  const Ie* gsn = message_.find(IeType::kGsnAddress, 0);
  EXPECT_FALSE(patchGsnAddress(bytes_, *gsn, Ipv6{}));
  EXPECT_EQ(bytes_, original_);
}

TEST_F(GtpV1Patch, Ipv6GsnAddress) {
  // Echo Response carrying nothing but an IPv6 GSN Address (16 octets).
  load(
      fromHex("32"
              "02" "0017" "00000000" "0001" "0000" "850010" "20010db8000000000000000000000001"));
  const Ie* gsn = message_.find(IeType::kGsnAddress);
  Ipv6 other{};
  other.octets[15] = 2;
  EXPECT_FALSE(patchGsnAddress(bytes_, *gsn, Ipv4{{1, 2, 3, 4}}));
  ASSERT_TRUE(patchGsnAddress(bytes_, *gsn, other));
  EXPECT_EQ(toHex(bytes_), expectedWith(gsn->valueOffset(), "00000000000000000000000000000002"));
  expectDecodes();
}

// TEID Data II (§7.7.15): the TEID follows the NSAPI octet.
TEST_F(GtpV1Patch, TeidDataII) {
  load(
      fromHex("32"
              "34" "000a" "00000000" "0001" "0000" "12" "05" "11223344"));
  const Ie* t = message_.find(IeType::kTeidDataII);
  ASSERT_NE(t, nullptr);
  patchTeidDataII(bytes_, *t, 0xdeadbeef);
  EXPECT_EQ(toHex(bytes_), expectedWith(t->valueOffset() + 1u, "deadbeef"));
  expectDecodes();
  EXPECT_EQ(readNth<TeidDataII>(again_)->nsapi, 5);
  EXPECT_EQ(readNth<TeidDataII>(again_)->teid, 0xdeadbeefu);
}

}  // namespace
}  // namespace gtpcp::gtp::v1
