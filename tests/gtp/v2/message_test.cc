// GTPv2-C header and message structure (TS 29.274 §5, §8.2): every malformed
// shape maps to one Errc and, through v2Cause(), to the Cause a peer gets
// (0 = dropped, or answered with Version Not Supported Indication).
//
// Messages are written out in hex, one field per string piece:
//   flags | type | Length | [TEID] | sequence number | spare/priority | IEs
// where an IE is type | Length | spare/instance | value (§8.2.1).
#include "common/gtp/v2/message.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::fromHex;
using testing::toHex;

class GtpV2Message : public ::testing::Test {
 protected:
  Result<void> decode(std::string_view hex) {
    bytes_ = fromHex(hex);
    return datagram_.decode(bytes_);
  }

  // Decoding `hex` fails with `code`, which is answered with `cause`.
  void expectError(std::string_view hex, Errc code, uint8_t cause) {
    auto ok = decode(hex);
    ASSERT_FALSE(ok) << hex;
    EXPECT_EQ(errcName(ok.error().code), errcName(code));
    EXPECT_EQ(v2Cause(ok.error().code), cause);
  }

  std::string reencoded(const Message& m) {
    std::vector<uint8_t> out(bytes_.size() + 16);
    auto r = reencode(m, out);
    EXPECT_TRUE(r);
    return r ? toHex(*r) : "";
  }

  std::vector<uint8_t> bytes_;
  Datagram datagram_;
};

// An Echo Request (T=0): header and one Recovery IE, Length 9 = 4 + 5.
constexpr std::string_view kEchoRequest =
    "40" "01" "0009" "000001" "00" "03" "0001" "00" "0d";

TEST_F(GtpV2Message, EchoRequestDecodes) {
  ASSERT_TRUE(decode(kEchoRequest));
  const Header& h = datagram_.message.header();
  EXPECT_EQ(h.version(), 2);
  EXPECT_FALSE(h.teidPresent());
  EXPECT_EQ(h.headerSize(), 8u);
  EXPECT_EQ(h.sequence_number, 1u);
  EXPECT_EQ(h.messageSize(), 13u);
  EXPECT_EQ(datagram_.message.messageType(), MessageType::kEchoRequest);
  ASSERT_EQ(datagram_.message.ieCount(), 1u);
  EXPECT_EQ(toHex(datagram_.message.raw(datagram_.message.ie(0))), "030001000d");
}

// No header, no sequence number to answer to: dropped.
TEST_F(GtpV2Message, EmptyDatagramIsATruncatedHeader) {
  expectError("", Errc::kTruncatedHeader, 0);
}

TEST_F(GtpV2Message, ShortHeadersAreTruncated) {
  expectError("400100", Errc::kTruncatedHeader, 0);
  expectError("40010004000001", Errc::kTruncatedHeader, 0);
  // T=1 needs 12 octets (§5.1).
  expectError(
      "4820" "0008" "00000000" "000001",
      Errc::kTruncatedHeader, 0);
}

// §7.7.1 / §7.1.3: another version is answered with Version Not Supported
// Indication, not a Cause.
TEST_F(GtpV2Message, OtherVersionsAreUnsupported) {
  expectError("00010009000001000300010000", Errc::kUnsupportedVersion, 0);  // version 0
  expectError(
      "32010004" "00000000" "00010000",
      Errc::kUnsupportedVersion, 0);                                        // a GTPv1 Echo
  expectError("60010009000001000300010000", Errc::kUnsupportedVersion, 0);  // version 3
}

// §5.5.1: the Length field counts the octets after the first 4.
TEST_F(GtpV2Message, LengthShorterThanTheHeaderIsInvalid) {
  expectError(
      "40010003" "000001" "00",
      Errc::kInvalidLength, 67);
  expectError(
      "48010004" "00000000" "000001" "00",
      Errc::kInvalidLength, 67);
}

TEST_F(GtpV2Message, LengthPastTheDatagramIsInvalid) {
  expectError(
      "4001000a" "000001" "00" "030001000d",
      Errc::kInvalidLength, 67);
}

// Documented choice: octets after the message without P=1 make the Length
// inconsistent with the datagram (§5.5.1).
TEST_F(GtpV2Message, TrailingOctetsWithoutPiggybackFlagAreInvalid) {
  expectError(std::string(kEchoRequest) + "00", Errc::kInvalidLength, 67);
}

TEST_F(GtpV2Message, PiggybackFlagWithNothingAfterIsInvalid) {
  expectError(
      "50" "01" "0009" "000001" "00" "030001000d",
      Errc::kInvalidLength, 67);
}

// §5.5.1: a piggybacked message shall not itself have P set.
TEST_F(GtpV2Message, PiggybackedMessageClaimingAnotherIsRefused) {
  const std::string first =
      "58" "21" "000e" "00000001" "000001" "00" "02" "0002" "00" "1000";
  const std::string second =
      "58" "5f" "0008" "00000002" "000002" "00";
  const std::string third =
      "48" "5f" "0008" "00000003" "000003" "00";
  auto ok = decode(first + second + third);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kInvalidPiggyback);
  EXPECT_EQ(ok.error().offset, 18);         // where the second message starts
  EXPECT_EQ(v2Cause(ok.error().code), 65);  // Invalid Message Format
}

TEST_F(GtpV2Message, PiggybackedMessageDecodesOnItsOwn) {
  // Create Session Response (P=1) + Create Bearer Request (§5.5.1, e.g. S5/S8).
  const std::string first =
      "58" "21" "000e" "00000001" "000001" "00" "02" "0002" "00" "1000";
  const std::string second =
      "48" "5f" "000d" "00000002" "000002" "00" "49" "0001" "00" "05";
  ASSERT_TRUE(decode(first + second));
  ASSERT_TRUE(datagram_.has_piggybacked);
  EXPECT_EQ(datagram_.message.bytes().size(), 18u);
  EXPECT_EQ(datagram_.piggybacked.messageType(), MessageType::kCreateBearerRequest);
  EXPECT_EQ(datagram_.piggybacked.header().teid, 2u);
  ASSERT_EQ(datagram_.piggybacked.ieCount(), 1u);
  // IE offsets count from the piggybacked message's own start.
  EXPECT_EQ(datagram_.piggybacked.ie(0).offset, 12);
  EXPECT_EQ(reencoded(datagram_.message), first);
  EXPECT_EQ(reencoded(datagram_.piggybacked), second);
}

TEST_F(GtpV2Message, ErrorInThePiggybackedMessageHasADatagramOffset) {
  const std::string first =
      "58" "21" "000e" "00000001" "000001" "00" "02" "0002" "00" "1000";
  const std::string second =
      "48" "5f" "000d" "00000002" "000002" "00" "49" "0002" "00" "05";
  auto ok = decode(first + second);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kIeTruncated);
  EXPECT_EQ(ok.error().offset, 18 + 12);
}

// §7.7.4: an unknown message type is silently discarded.
TEST_F(GtpV2Message, UnknownMessageTypeIsDropped) {
  expectError(
      "40" "05" "0004" "000001" "00",
      Errc::kUnknownMessageType, 0);  // S101 range
  expectError(
      "40" "00" "0004" "000001" "00",
      Errc::kUnknownMessageType, 0);  // Reserved
}

TEST_F(GtpV2Message, IeHeaderCutByTheMessageEndIsTruncated) {
  auto ok = decode(
      "40" "01" "0007" "000001" "00" "030001");
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kIeTruncated);
  EXPECT_EQ(ok.error().offset, 8);
  EXPECT_EQ(v2Cause(ok.error().code), 67);
}

TEST_F(GtpV2Message, IeValueOverrunningTheMessageIsTruncated) {
  auto ok = decode(
      "40" "01" "0009" "000001" "00" "03" "0002" "00" "0d");
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kIeTruncated);
  EXPECT_EQ(ok.error().ie_type, 3);
  EXPECT_EQ(ok.error().offset, 8);
  EXPECT_EQ(v2Cause(ok.error().code), 67);
}

// The EBI inside the Bearer Context claims 2 octets, its parent holds 1; the
// octets after the parent (a Recovery IE) do not count.
TEST_F(GtpV2Message, IeValueOverrunningItsGroupedParentIsTruncated) {
  auto ok = decode(
      "48" "20" "0016" "00000000" "000001" "00" "5d" "0005" "00" "49" "0002" "00" "05" "03"
      "0001" "00" "01");
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kIeTruncated);
  EXPECT_EQ(ok.error().ie_type, 73);
  EXPECT_EQ(ok.error().offset, 16);
  EXPECT_EQ(v2Cause(ok.error().code), 67);
}

// `levels` Bearer Contexts nested in each other around one EBI, in a Create
// Session Request.
std::string nestedBearerContexts(std::size_t levels) {
  std::vector<uint8_t> ie = fromHex(
      "49" "0001" "00" "05");
  for (std::size_t i = 0; i < levels; ++i) {
    const auto n = static_cast<uint16_t>(ie.size());
    std::vector<uint8_t> outer = {0x5d, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n), 0};
    outer.insert(outer.end(), ie.begin(), ie.end());
    ie = std::move(outer);
  }
  const auto length = static_cast<uint16_t>(8 + ie.size());
  char len[24];
  std::snprintf(len, sizeof len, "%04x", length);
  return "4820" + std::string(len) +
         "00000000" "000001" "00"+
         toHex(ie);
}

TEST_F(GtpV2Message, GroupingUpToTheMaximumDepthDecodes) {
  auto ok = decode(nestedBearerContexts(kMaxGroupDepth));
  ASSERT_TRUE(ok) << describe(ok.error());
  EXPECT_EQ(datagram_.message.ieCount(), kMaxGroupDepth + 1);
  EXPECT_EQ(reencoded(datagram_.message), toHex(bytes_));
}

TEST_F(GtpV2Message, GroupingDeeperThanTheMaximumIsRefused) {
  auto ok = decode(nestedBearerContexts(kMaxGroupDepth + 1));
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, Errc::kGroupingTooDeep);
  EXPECT_EQ(ok.error().ie_type, 93);
  EXPECT_EQ(v2Cause(ok.error().code), 65);  // Invalid Message Format
}

// What Builder can nest, the decoder must take back.
TEST_F(GtpV2Message, BuilderNestingDecodes) {
  std::vector<uint8_t> out(256);
  Builder b(out);
  b.begin(MessageType::kCreateSessionRequest, 0u, 1);
  for (std::size_t i = 0; i < kMaxGroupDepth; ++i) b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{5});
  for (std::size_t i = 0; i < kMaxGroupDepth; ++i) b.endGrouped();
  auto bytes = b.finish();
  ASSERT_TRUE(bytes);
  EXPECT_EQ(toHex(*bytes), nestedBearerContexts(kMaxGroupDepth));
  Message m;
  EXPECT_TRUE(m.decode(*bytes));
}

// `count` Recovery IEs in an Echo Request.
std::string echoWithRecoveries(std::size_t count) {
  std::string ies;
  for (std::size_t i = 0; i < count; ++i) ies += "0300010001";
  char len[24];
  std::snprintf(len, sizeof len, "%04zx", 4 + 5 * count);
  return "4001" + std::string(len) +
         "000001" "00"+
         ies;
}

TEST_F(GtpV2Message, IndexCapacityIsKMaxIes) {
  ASSERT_TRUE(decode(echoWithRecoveries(kMaxIes)));
  EXPECT_EQ(datagram_.message.ieCount(), kMaxIes);
}

TEST_F(GtpV2Message, MoreIesThanTheIndexHoldsIsRefused) {
  expectError(echoWithRecoveries(kMaxIes + 1), Errc::kTooManyIes, 73);  // No resources available
}

// An IE type the tables do not know (250 is spare in Table 8.1-1) is indexed
// and relayed byte for byte, CR bits included (§8.2.1).
TEST_F(GtpV2Message, UnknownIeIsKeptAndRelayedByteForByte) {
  const std::string hex =
      "48" "20" "001c" "00000000" "000001" "00" "fa" "0005" "93" "0102030405" "5d" "0007" "00"
      "fb" "0003" "01" "aabbcc";
  ASSERT_TRUE(decode(hex));
  const Message& m = datagram_.message;
  ASSERT_EQ(m.ieCount(), 3u);
  EXPECT_EQ(m.ie(0).type, 250);
  EXPECT_EQ(m.ie(0).spare_instance, 0x93);
  EXPECT_EQ(m.ie(0).instance(), 3);
  EXPECT_EQ(toHex(m.value(m.ie(0))), "0102030405");
  EXPECT_EQ(m.ie(2).type, 251);
  EXPECT_EQ(reencoded(m), hex);
}

// §5.1: MP (bit 3 of octet 1) announces a Message Priority in bits 8-5 of the
// octet after the sequence number.
TEST_F(GtpV2Message, MessagePriority) {
  const std::string hex =
      "4c" "20" "000d" "00000000" "000001" "70" "03" "0001" "00" "01";
  ASSERT_TRUE(decode(hex));
  const Header& h = datagram_.message.header();
  EXPECT_TRUE(h.messagePriorityPresent());
  EXPECT_EQ(h.messagePriority(), 7);

  std::vector<uint8_t> out(64);
  Builder b(out);
  b.begin(MessageType::kCreateSessionRequest, 0u, 1, 7);
  b.add(Recovery{1});
  auto built = b.finish();
  ASSERT_TRUE(built);
  EXPECT_EQ(toHex(*built), hex);
}

TEST_F(GtpV2Message, SpareBitsOfTheHeaderAreKept) {
  // Octet 1 spare bits (2-1) and the spare octet after the sequence number.
  const std::string hex =
      "43" "01" "0009" "000001" "0f" "030001000d";
  ASSERT_TRUE(decode(hex));
  EXPECT_EQ(reencoded(datagram_.message), hex);
}

// The forwarder classifies by header only: IE garbage does not matter there.
TEST_F(GtpV2Message, DecodeHeaderIgnoresTheIes) {
  const auto bytes = fromHex(
      "48" "22" "000c" "11223344" "000007" "00" "ffff0000");
  auto h = decodeHeader(bytes);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->message_type, 34);
  EXPECT_EQ(h->teid, 0x11223344u);
  EXPECT_EQ(h->sequence_number, 7u);
  Message m;
  EXPECT_FALSE(m.decode(bytes));
}

TEST_F(GtpV2Message, SiblingsChildrenAndLookups) {
  // Two Bearer Contexts {EBI 5, F-TEID/2}, {EBI 6}, and a Recovery.
  const std::string hex =
      "48" "21" "002c" "00000001" "000001" "00" "5d" "0012" "00" "49" "0001" "00" "05" "57"
      "0009" "02" "85" "00000001" "0a000001" "5d" "0005" "00" "49" "0001" "00" "06" "03" "0001"
      "00" "07";
  ASSERT_TRUE(decode(hex));
  const Message& m = datagram_.message;
  ASSERT_EQ(m.ieCount(), 6u);
  std::vector<int> top;
  for (const Ie& ie : m.topLevel()) top.push_back(ie.type);
  EXPECT_EQ(top, (std::vector<int>{93, 93, 3}));
  const Ie* second = m.findNth(IeType::kBearerContext, 0, 1);
  ASSERT_NE(second, nullptr);
  const Ie* ebi = m.findChild(*second, IeType::kEbi);
  ASSERT_NE(ebi, nullptr);
  EXPECT_EQ(m.value(*ebi)[0], 6);
  EXPECT_EQ(m.findChild(*second, IeType::kFTeid, 2), nullptr);
  const Ie* first = m.find(IeType::kBearerContext);
  ASSERT_NE(first, nullptr);
  EXPECT_NE(m.findChild(*first, IeType::kFTeid, 2), nullptr);
  // find() looks at the top level only.
  EXPECT_EQ(m.find(IeType::kEbi), nullptr);
  EXPECT_EQ(m.findNth(IeType::kBearerContext, 0, 2), nullptr);
  EXPECT_TRUE(m.children(*m.find(IeType::kRecovery)).empty());
}

}  // namespace
}  // namespace gtpcp::gtp::v2
