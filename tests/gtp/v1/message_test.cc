// GTPv1 header and message structure (TS 29.060 §6, §7.7.0): optional fields,
// extension header chains, TV/TLV framing. Every malformed shape maps to one
// Errc and, through v1Cause(), to the Cause a peer gets (0 = dropped or
// answered with Version Not Supported).
//
// Hex pieces: flags | type | Length | TEID | [sequence | N-PDU | next ext] | IEs.
#include "common/gtp/v1/message.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::fromHex;
using testing::toHex;

class GtpV1Message : public ::testing::Test {
 protected:
  Result<void> decode(std::string_view hex) {
    bytes_ = fromHex(hex);
    return message_.decode(bytes_);
  }

  void expectError(std::string_view hex, Errc code, uint8_t cause) {
    auto ok = decode(hex);
    ASSERT_FALSE(ok) << hex;
    EXPECT_EQ(errcName(ok.error().code), errcName(code));
    EXPECT_EQ(v1Cause(ok.error().code), cause);
  }

  std::string reencoded() {
    std::vector<uint8_t> out(bytes_.size() + 16);
    auto r = reencode(message_, out);
    EXPECT_TRUE(r);
    return r ? toHex(*r) : "";
  }

  std::vector<uint8_t> bytes_;
  Message message_;
};

TEST_F(GtpV1Message, EchoRequestWithSequenceNumber) {
  ASSERT_TRUE(
      decode("32"
             "01" "0004" "00000000" "1234" "00" "00"));
  const Header& h = message_.header();
  EXPECT_EQ(h.version(), 1);
  EXPECT_TRUE(h.protocolType());
  EXPECT_TRUE(h.hasSequenceNumber());
  EXPECT_EQ(h.sequence_number, 0x1234);
  EXPECT_EQ(h.size, 12);
  EXPECT_EQ(message_.ieCount(), 0u);
}

// Without E, S and PN the header is the 8 mandatory octets only.
TEST_F(GtpV1Message, HeaderWithoutOptionalFields) {
  ASSERT_TRUE(
      decode("30"
             "01" "0000" "00000000"));
  EXPECT_FALSE(message_.header().hasOptionalFields());
  EXPECT_EQ(message_.header().size, 8);
  EXPECT_EQ(reencoded(), toHex(bytes_));
}

// PN alone still brings the whole 4-octet block (§6): the sequence number
// field is there, with S=0 it means nothing.
TEST_F(GtpV1Message, NpduNumberAloneBringsTheOptionalBlock) {
  ASSERT_TRUE(
      decode("31"
             "01" "0004" "00000000" "abcd" "7f" "00"));
  const Header& h = message_.header();
  EXPECT_TRUE(h.hasNpdu());
  EXPECT_FALSE(h.hasSequenceNumber());
  EXPECT_EQ(h.npdu_number, 0x7f);
  EXPECT_EQ(h.size, 12);
  EXPECT_EQ(reencoded(), toHex(bytes_));
}

TEST_F(GtpV1Message, OptionalFlagsNeedFourMoreOctets) {
  expectError(
      "32" "01" "0002" "00000000" "0001",
      Errc::kInvalidLength, 193);
}

TEST_F(GtpV1Message, EmptyAndShortDatagramsAreTruncated) {
  expectError("", Errc::kTruncatedHeader, 0);
  expectError("32010004000000", Errc::kTruncatedHeader, 0);
}

// PT=0 is GTP' (TS 32.295, charging), not GTP-C.
TEST_F(GtpV1Message, ProtocolTypeZeroIsRefused) {
  expectError(
      "22" "01" "0004" "00000000" "0001" "0000",
      Errc::kUnsupportedVersion, 0);
}

TEST_F(GtpV1Message, OtherVersionsAreRefused) {
  expectError(
      "1e" "01" "0004" "00000000" "0001" "0000",
      Errc::kUnsupportedVersion, 0);  // GTPv0
  expectError(
      "40" "01" "0009" "000001" "00" "030001000d",
      Errc::kUnsupportedVersion, 0);  // GTPv2
}

TEST_F(GtpV1Message, LengthMustMatchTheDatagram) {
  expectError(
      "32" "01" "0006" "00000000" "0001" "0000",
      Errc::kInvalidLength, 193);
  expectError(
      "32" "01" "0004" "00000000" "0001" "0000" "0e01",
      Errc::kInvalidLength, 193);
}

// §7.1 Table 1: type 0 is Reserved; unknown messages are discarded (§11.1.4).
TEST_F(GtpV1Message, UnknownMessageTypeIsDropped) {
  expectError(
      "32" "00" "0004" "00000000" "0001" "0000",
      Errc::kUnknownMessageType, 0);
  expectError(
      "32" "08" "0004" "00000000" "0001" "0000",
      Errc::kUnknownMessageType, 0);
}

// §6.1: each extension header is a length in 4-octet units, content, and the
// next type; 0 ends the chain.
TEST_F(GtpV1Message, ExtensionHeaderChain) {
  // Next type 0xc0 (PDCP PDU number), length 1: c0 | 01 1234 40 | 01 5678 00.
  ASSERT_TRUE(
      decode("34"
             "ff" "0010" "00000001" "0000" "00" "c0" "01123440" "01567800" "45000000"));
  const Header& h = message_.header();
  EXPECT_EQ(h.next_extension_header_type, 0xc0);
  ASSERT_EQ(h.extension_header_count, 2);
  EXPECT_EQ(h.extension_headers[0].type, 0xc0);
  EXPECT_EQ(h.extension_headers[0].offset, 12);
  EXPECT_EQ(h.extension_headers[0].size, 4);
  EXPECT_EQ(h.extension_headers[1].type, 0x40);
  EXPECT_EQ(h.size, 20);
  EXPECT_EQ(toHex(message_.body()), "45000000");
  EXPECT_EQ(reencoded(), toHex(bytes_));
}

TEST_F(GtpV1Message, ExtensionHeaderOfLengthZeroIsRefused) {
  expectError(
      "34" "01" "0008" "00000000" "0000" "00" "c0" "00000000",
      Errc::kInvalidExtensionHeader, 193);
}

TEST_F(GtpV1Message, ExtensionHeaderPastTheEndIsRefused) {
  // Length 2 = 8 octets, 4 left.
  expectError(
      "34" "01" "0008" "00000000" "0000" "00" "c0" "02000000",
      Errc::kInvalidExtensionHeader, 193);
  // A next type announced with nothing left for the header.
  expectError(
      "34" "01" "0004" "00000000" "0000" "00" "c0",
      Errc::kInvalidExtensionHeader, 193);
}

TEST_F(GtpV1Message, ChainLongerThanTheHeaderHoldsIsRefused) {
  std::string chain;
  for (std::size_t i = 0; i <= kMaxExtensionHeaders; ++i) chain += "010000c0";
  char len[24];
  std::snprintf(len, sizeof len, "%04zx", 4 + chain.size() / 2);
  expectError(
      "34" "ff"+
          std::string(len) +
          "00000001" "0000" "00" "c0"+
          chain,
      Errc::kInvalidExtensionHeader, 193);
}

// A TV IE's length comes from Table 37; for an unknown TV type nothing says
// where the next IE starts (§7.7.0), so decoding stops. Type 6 is spare.
TEST_F(GtpV1Message, UnknownTvIeStopsDecoding) {
  auto ok = decode(
      "32" "01" "0006" "00000000" "0001" "0000" "0601");
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kUnknownTvIe);
  EXPECT_EQ(ok.error().ie_type, 6);
  EXPECT_EQ(ok.error().offset, 12);
  EXPECT_EQ(v1Cause(ok.error().code), 193);
}

// An unknown TLV is skipped by its Length and relayed as it came.
TEST_F(GtpV1Message, UnknownTlvIeIsKept) {
  const std::string hex =
      "32" "01" "000b" "00000000" "0001" "0000" "e6" "0002" "abcd" "0e" "05";
  ASSERT_TRUE(decode(hex));
  ASSERT_EQ(message_.ieCount(), 2u);
  EXPECT_EQ(message_.ie(0).type, 230);
  EXPECT_EQ(toHex(message_.value(message_.ie(0))), "abcd");
  EXPECT_EQ(reencoded(), hex);
}

TEST_F(GtpV1Message, TlvHeaderCutIsTruncated) {
  expectError(
      "32" "01" "0006" "00000000" "0001" "0000" "8500",
      Errc::kIeTruncated, 193);
}

TEST_F(GtpV1Message, TlvValueOverrunIsTruncated) {
  expectError(
      "32" "01" "0009" "00000000" "0001" "0000" "850004" "0a00",
      Errc::kIeTruncated, 193);
}

TEST_F(GtpV1Message, TvValueOverrunIsTruncated) {
  // TEID Data I (16) has 4 value octets.
  expectError(
      "32" "10" "0007" "00000000" "0001" "0000" "10" "0102",
      Errc::kIeTruncated, 193);
}

// A G-PDU carries a user packet, not IEs (TS 29.281 §5.1): not parsed.
TEST_F(GtpV1Message, GpduBodyIsNotParsedAsIes) {
  ASSERT_TRUE(
      decode("30"
             "ff" "0004" "00000001" "deadbeef"));
  EXPECT_EQ(message_.ieCount(), 0u);
  EXPECT_EQ(toHex(message_.body()), "deadbeef");
  EXPECT_EQ(reencoded(), "30ff000400000001deadbeef");
}

std::string echoWithRecoveries(std::size_t count) {
  std::string ies;
  for (std::size_t i = 0; i < count; ++i) ies += "0e01";
  char len[24];
  std::snprintf(len, sizeof len, "%04zx", 4 + 2 * count);
  return "3202" + std::string(len) +
         "00000000" "0001" "0000"+
         ies;
}

TEST_F(GtpV1Message, IndexCapacityIsKMaxIes) {
  ASSERT_TRUE(decode(echoWithRecoveries(kMaxIes)));
  EXPECT_EQ(message_.ieCount(), kMaxIes);
}

TEST_F(GtpV1Message, MoreIesThanTheIndexHoldsIsRefused) {
  expectError(echoWithRecoveries(kMaxIes + 1), Errc::kTooManyIes, 199);  // No resources available
}

// Repeated IEs are told apart by order: GSN Address for signalling, then for
// user traffic (§7.3.1).
TEST_F(GtpV1Message, FindTakesTheNthOccurrence) {
  ASSERT_TRUE(
      decode("32"
             "10" "0012" "00000000" "0001" "0000" "850004" "01010101" "850004" "02020202"));
  EXPECT_EQ(toHex(message_.value(*message_.find(IeType::kGsnAddress, 0))), "01010101");
  EXPECT_EQ(toHex(message_.value(*message_.find(IeType::kGsnAddress, 1))), "02020202");
  EXPECT_EQ(message_.find(IeType::kGsnAddress, 2), nullptr);
}

TEST_F(GtpV1Message, DecodeHeaderAloneAcceptsTrailingIeGarbage) {
  const auto bytes = fromHex(
      "32" "10" "0006" "11223344" "0001" "0000" "0601");
  auto h = decodeHeader(bytes);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->teid, 0x11223344u);
  EXPECT_EQ(h->messageSize(), bytes.size());
}

// The Extension Header Type List (141) has a one-octet Length (§7.7.40), as
// the mandatory IE of Supported Extension Headers Notification (§7.2.4).
TEST_F(GtpV1Message, ExtensionHeaderTypeListIsBuiltAndDecodedWithOneOctetLength) {
  std::vector<uint8_t> out(64);
  Builder b(out);
  b.begin(MessageType::kSupportedExtensionHeadersNotification, 0, 7);
  const auto types = fromHex("c040");
  b.addRaw(141, types);
  auto bytes = b.finish();
  ASSERT_TRUE(bytes);
  EXPECT_EQ(toHex(*bytes),
            "32" "1f" "0008" "00000000" "0007" "0000" "8d" "02" "c040");
  ASSERT_TRUE(message_.decode(*bytes));
  ASSERT_EQ(message_.ieCount(), 1u);
  EXPECT_EQ(toHex(message_.value(message_.ie(0))), "c040");
}

}  // namespace
}  // namespace gtpcp::gtp::v1
