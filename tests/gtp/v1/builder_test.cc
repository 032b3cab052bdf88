// GTPv1-C messages the proxy builds itself (v1/builder.h), compared with
// octets written out by hand from TS 29.060 §6 (header) and §7.7 (IEs), and
// with messages other implementations encoded (gtpv1.jsonl).
#include "common/gtp/v1/builder.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::fromHex;
using testing::toHex;

Ipv4 v4(std::string_view text) {
  Ipv4 a;
  EXPECT_TRUE(parseIpv4(text, a));
  return a;
}

std::string hexOf(Builder& b) {
  auto bytes = b.finish();
  EXPECT_TRUE(bytes) << errcName(bytes.error().code);
  return bytes ? toHex(*bytes) : "error:" + std::string(errcName(bytes.error().code));
}

class GtpV1Builder : public ::testing::Test {
 protected:
  std::array<uint8_t, 1024> out_{};
  Builder b_{out_};
};

// §7.2.1 Echo Request, TEID 0 (§6: path management messages use TEID 0).
//   32        version 1 (bits 8-6 = 001), PT=1, spare, E=0, S=1, PN=0
//   01        Echo Request
//   0004      Length: the optional block (sequence 2, N-PDU 1, next type 1)
//   00000000  TEID
//   1234 00 00  sequence number, N-PDU number, no extension header
TEST_F(GtpV1Builder, EchoRequest) {
  b_.begin(MessageType::kEchoRequest, 0, 0x1234);
  EXPECT_EQ(hexOf(b_),
            "32" "01" "0004" "00000000" "1234" "00" "00");
}

// §7.2.2 Echo Response: Recovery (TV 14, one octet).
TEST_F(GtpV1Builder, EchoResponse) {
  b_.begin(MessageType::kEchoResponse, 0, 0x1234);
  b_.add(Recovery{5});
  EXPECT_EQ(hexOf(b_),
            "32" "02" "0006" "00000000" "1234" "0000" "0e" "05");
}

// §7.2.3 Version Not Supported: the header only.
TEST_F(GtpV1Builder, VersionNotSupported) {
  b_.begin(MessageType::kVersionNotSupported, 0, 0x1234);
  EXPECT_EQ(hexOf(b_),
            "32" "03" "0004" "00000000" "1234" "0000");
}

// §7.3.2: a rejected Create PDP Context Response carries the Cause (and
// optionally Recovery), sent to the SGSN's TEID Control Plane.
//   32 11 0006 11223344 0102 0000   header, Length = 4 + Cause (2)
//   01 c0                           Cause (TV 1): 192 "Non-existent"
TEST_F(GtpV1Builder, CreatePdpContextResponseNonExistent) {
  b_.begin(MessageType::kCreatePdpContextResponse, 0x11223344, 0x0102);
  b_.add(CauseIe{192});
  EXPECT_EQ(hexOf(b_),
            "32" "11" "0006" "11223344" "0102" "0000" "01" "c0");
}

// 199 "No resources available", with the proxy's Recovery.
TEST_F(GtpV1Builder, CreatePdpContextResponseNoResources) {
  b_.begin(MessageType::kCreatePdpContextResponse, 0x11223344, 0x0102);
  b_.add(CauseIe{199});
  b_.add(Recovery{3});
  EXPECT_EQ(hexOf(b_),
            "32" "11" "0008" "11223344" "0102" "0000" "01" "c7" "0e" "03");
}

TEST_F(GtpV1Builder, WithoutSequenceNumberTheHeaderIsEightOctets) {
  b_.begin(MessageType::kEchoRequest, 0, std::nullopt);
  EXPECT_EQ(hexOf(b_),
            "30" "01" "0000" "00000000");
}

TEST_F(GtpV1Builder, NpduNumberSetsPn) {
  b_.begin(MessageType::kEchoRequest, 0, 1, 0x7f);
  EXPECT_EQ(hexOf(b_),
            "33" "01" "0004" "00000000" "0001" "7f" "00");
}

// A TV IE must have its Table 37 length: anything else would shift every
// later IE for the receiver.
TEST_F(GtpV1Builder, TvIeOfTheWrongSizeIsRefused) {
  b_.begin(MessageType::kEchoResponse, 0, 1);
  const auto two = fromHex("0101");
  b_.addRaw(14, two);
  EXPECT_EQ(b_.finish().error().code, Errc::kInvalidArgument);

  Builder unknown(out_);
  unknown.begin(MessageType::kEchoResponse, 0, 1);
  const auto one = fromHex("01");
  unknown.addRaw(6, one);  // spare TV type: no known length
  EXPECT_EQ(unknown.finish().error().code, Errc::kInvalidArgument);
}

TEST_F(GtpV1Builder, OverflowIsSticky) {
  std::array<uint8_t, 13> small{};
  Builder b(small);
  b.begin(MessageType::kEchoResponse, 0, 1);
  b.add(Recovery{1});
  b.add(Recovery{2});  // 12 + 2 + 2 > 13
  EXPECT_EQ(b.finish().error().code, Errc::kBufferTooSmall);
}

TEST_F(GtpV1Builder, AddBeforeBeginIsRefused) {
  b_.add(Recovery{1});
  EXPECT_EQ(b_.finish().error().code, Errc::kInvalidArgument);
}

class GtpV1BuilderMatchesOtherEncoders : public GtpV1Builder {
 protected:
  std::string vectorHex(int line) {
    static const auto records = testing::loadVectors("gtpv1.jsonl");
    return records.at(static_cast<std::size_t>(line - 1)).json().at("hex").get<std::string>();
  }
};

TEST_F(GtpV1BuilderMatchesOtherEncoders, GoGtpEchoRequest) {
  b_.begin(MessageType::kEchoRequest, 0, 0);
  EXPECT_EQ(hexOf(b_), vectorHex(37));
}

TEST_F(GtpV1BuilderMatchesOtherEncoders, PycrateEchoResponse) {
  b_.begin(MessageType::kEchoResponse, 0, 0xf36e);
  b_.add(Recovery{32});
  EXPECT_EQ(hexOf(b_), vectorHex(4));
}

TEST_F(GtpV1BuilderMatchesOtherEncoders, GoGtpDeletePdpContextRequest) {
  b_.begin(MessageType::kDeletePdpContextRequest, 0x11223344, 1);
  b_.add(CauseIe{8});  // Table 38: 8 = Network failure
  b_.add(Nsapi{5});
  EXPECT_EQ(hexOf(b_), vectorHex(36));
}

TEST_F(GtpV1BuilderMatchesOtherEncoders, GtplibDeletePdpContextResponse) {
  b_.begin(MessageType::kDeletePdpContextResponse, 0x0003a8f4, 0x696e);
  b_.add(CauseIe{128});
  const auto pco = fromHex("00");
  b_.add(Pco{pco});
  EXPECT_EQ(hexOf(b_), vectorHex(33));
}

TEST_F(GtpV1BuilderMatchesOtherEncoders, GoGtpCreatePdpContextResponse) {
  b_.begin(MessageType::kCreatePdpContextResponse, 0x11223344, 1);
  b_.add(CauseIe{128});
  b_.add(ReorderingRequired{false});
  b_.add(Recovery{0});
  b_.add(TeidDataI{0xdeadbeef});
  b_.add(TeidControlPlane{0xdeadbeef});
  b_.add(ChargingId{1});
  b_.add(EndUserAddress{1, 0x21, v4("10.10.10.10"), std::nullopt});
  b_.add(GsnAddress{v4("1.1.1.1"), std::nullopt});
  b_.add(GsnAddress{v4("2.2.2.2"), std::nullopt});
  EXPECT_EQ(hexOf(b_), vectorHex(35));
}

}  // namespace
}  // namespace gtpcp::gtp::v1
