// In-place patches of GTPv2-C messages (v2/patch.h), on third-party messages:
// after each patch the message still decodes, the field reads back the new
// value, and every other octet is the one received (compared byte by byte
// with the original plus the hand-placed new octets).
#include "common/gtp/v2/patch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::fromHex;
using testing::toHex;

std::vector<uint8_t> vectorBytes(int line) {
  static const auto records = testing::loadVectors("gtpv2.jsonl");
  return records.at(static_cast<std::size_t>(line - 1)).bytes();
}

// gtpv2.jsonl line 17 (ngic-rtc capture): a Create Session Request with the
// MME's S11 F-TEID (instance 0) and the PGW's S5/S8 F-TEID (instance 1), TEID 0.
constexpr int kCreateSessionRequest = 17;
// Line 13 (nDPI capture): F-TEID instance 0 at top level, instance 2 inside
// the Bearer Context.
constexpr int kCsrWithBearerFTeid = 13;

class GtpV2Patch : public ::testing::Test {
 protected:
  void load(int line) {
    original_ = vectorBytes(line);
    bytes_ = original_;
    ASSERT_TRUE(message_.decode(bytes_));
  }

  // `original_` with `hex` written at `offset`: what the patch must produce.
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

TEST_F(GtpV2Patch, HeaderTeid) {
  load(kCreateSessionRequest);
  ASSERT_TRUE(patchTeid(bytes_, 0xa1b2c3d4));
  EXPECT_EQ(toHex(bytes_), expectedWith(4, "a1b2c3d4"));  // §5.1: octets 5-8
  expectDecodes();
  EXPECT_EQ(again_.header().teid, 0xa1b2c3d4u);
}

// Echo messages have no TEID field (T=0): nothing to patch, nothing written.
TEST_F(GtpV2Patch, HeaderTeidRefusedWithoutTFlag) {
  load(21);  // scapy Echo Request
  EXPECT_FALSE(patchTeid(bytes_, 0xa1b2c3d4));
  EXPECT_EQ(bytes_, original_);
}

TEST_F(GtpV2Patch, SequenceNumberAfterTheTeid) {
  load(kCreateSessionRequest);
  patchSequenceNumber(bytes_, 0x00fedcba);
  EXPECT_EQ(toHex(bytes_), expectedWith(8, "fedcba"));  // T=1: octets 9-11
  expectDecodes();
  EXPECT_EQ(again_.header().sequence_number, 0xfedcbau);
}

TEST_F(GtpV2Patch, SequenceNumberWithoutTeidIsTruncatedTo24Bits) {
  load(21);
  patchSequenceNumber(bytes_, 0xff123456);
  EXPECT_EQ(toHex(bytes_), expectedWith(4, "123456"));  // T=0: octets 5-7
  expectDecodes();
  EXPECT_EQ(again_.header().sequence_number, 0x123456u);
}

TEST_F(GtpV2Patch, FTeidTeid) {
  load(kCreateSessionRequest);
  const Ie* f = message_.find(IeType::kFTeid, 0);
  ASSERT_NE(f, nullptr);
  patchFTeidTeid(bytes_, *f, 0x01020304);
  EXPECT_EQ(toHex(bytes_), expectedWith(f->valueOffset() + 1u, "01020304"));
  expectDecodes();
  auto got = read<FTeid>(again_, *again_.find(IeType::kFTeid, 0));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->teid, 0x01020304u);
  EXPECT_EQ(got->interface_type, 10);  // unchanged: S11 MME GTP-C
}

TEST_F(GtpV2Patch, FTeidIpv4) {
  load(kCreateSessionRequest);
  const Ie* f = message_.find(IeType::kFTeid, 1);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(patchFTeidIpv4(bytes_, *f, Ipv4{{198, 51, 100, 7}}));
  EXPECT_EQ(toHex(bytes_), expectedWith(f->valueOffset() + 5u, "c6336407"));
  expectDecodes();
  auto got = read<FTeid>(again_, *again_.find(IeType::kFTeid, 1));
  ASSERT_TRUE(got);
  EXPECT_EQ(toString(*got->ipv4), "198.51.100.7");
}

TEST_F(GtpV2Patch, FTeidTeidAndIpv4Together) {
  load(kCreateSessionRequest);
  const Ie* f = message_.find(IeType::kFTeid, 0);
  ASSERT_TRUE(patchFTeid(bytes_, *f, 0xcafef00d, Ipv4{{10, 0, 0, 9}}));
  EXPECT_EQ(toHex(bytes_), expectedWith(f->valueOffset() + 1u,
                                        "cafef00d" "0a000009"));
  expectDecodes();
}

TEST_F(GtpV2Patch, FTeidInsideABearerContext) {
  load(kCsrWithBearerFTeid);
  const Ie* bearer = message_.find(IeType::kBearerContext);
  ASSERT_NE(bearer, nullptr);
  const Ie* f = message_.findChild(*bearer, IeType::kFTeid, 2);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(patchFTeid(bytes_, *f, 0x0badcafe, Ipv4{{10, 1, 2, 3}}));
  EXPECT_EQ(toHex(bytes_), expectedWith(f->valueOffset() + 1u,
                                        "0badcafe" "0a010203"));
  expectDecodes();
}

// Changing the address family changes the IE's length: not an in-place patch.
class GtpV2PatchFamilies : public ::testing::Test {
 protected:
  void build(const FTeid& f) {
    Builder b(buffer_);
    b.begin(MessageType::kCreateSessionRequest, 0u, 1);
    b.add(f);
    auto bytes = b.finish();
    ASSERT_TRUE(bytes);
    bytes_.assign(bytes->begin(), bytes->end());
    original_ = bytes_;
    ASSERT_TRUE(message_.decode(bytes_));
  }
  std::array<uint8_t, 128> buffer_{};
  std::vector<uint8_t> bytes_, original_;
  Message message_;
};

const Ipv6 kV6{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
const Ipv6 kOtherV6{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};

TEST_F(GtpV2PatchFamilies, Ipv4PatchRefusedOnIpv6OnlyFTeid) {
  build(FTeid{10, 1, std::nullopt, kV6});
  EXPECT_FALSE(patchFTeidIpv4(bytes_, message_.ie(0), Ipv4{{1, 2, 3, 4}}));
  EXPECT_FALSE(patchFTeid(bytes_, message_.ie(0), 5, Ipv4{{1, 2, 3, 4}}));
  EXPECT_EQ(bytes_, original_);  // not even the TEID was written
}

TEST_F(GtpV2PatchFamilies, Ipv6PatchRefusedOnIpv4OnlyFTeid) {
  build(FTeid{10, 1, Ipv4{{1, 1, 1, 1}}, std::nullopt});
  EXPECT_FALSE(patchFTeidIpv6(bytes_, message_.ie(0), kOtherV6));
  EXPECT_EQ(bytes_, original_);
}

TEST_F(GtpV2PatchFamilies, Ipv6PatchAfterTheIpv4Address) {
  build(FTeid{10, 1, Ipv4{{1, 1, 1, 1}}, kV6});
  ASSERT_TRUE(patchFTeidIpv6(bytes_, message_.ie(0), kOtherV6));
  const auto diff = testing::differingOffsets(original_, bytes_);
  // §8.22: the IPv6 address follows flags (1), TEID (4) and IPv4 (4).
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], message_.ie(0).valueOffset() + 5u + 4u + 15u);
  Message again;
  ASSERT_TRUE(again.decode(bytes_));
  EXPECT_EQ(read<FTeid>(again, again.ie(0))->ipv6, kOtherV6);
  EXPECT_EQ(read<FTeid>(again, again.ie(0))->ipv4, (Ipv4{{1, 1, 1, 1}}));
}

// The piggybacked message is patched through the datagram from its offset on.
TEST(GtpV2PatchPiggyback, SecondMessageIsPatchedInPlace) {
  auto bytes = fromHex(
      "58" "21" "000e" "00000001" "000001" "00" "02" "0002" "00" "1000" "48" "5f" "000d"
      "00000002" "000002" "00" "49" "0001" "00" "05");
  const auto original = bytes;
  Datagram d;
  ASSERT_TRUE(d.decode(bytes));
  const std::size_t offset = d.message.header().messageSize();
  std::span<uint8_t> second = std::span<uint8_t>(bytes).subspan(offset);
  ASSERT_TRUE(patchTeid(second, 0x99887766));
  patchSequenceNumber(second, 0x000abc);
  auto expected = original;
  const auto field = fromHex(
      "99887766" "000abc");
  std::memcpy(expected.data() + offset + 4, field.data(), field.size());
  EXPECT_EQ(toHex(bytes), toHex(expected));
  Datagram again;
  ASSERT_TRUE(again.decode(bytes));
  EXPECT_EQ(again.piggybacked.header().teid, 0x99887766u);
  EXPECT_EQ(again.message.header().teid, 1u);
}

}  // namespace
}  // namespace gtpcp::gtp::v2
