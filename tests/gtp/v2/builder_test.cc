// GTPv2-C messages the proxy builds itself (v2/builder.h), compared with
// octets written out by hand from TS 29.274 §5 (header), §8.2 (IE format) and
// §8.4 (Cause), and with messages other implementations encoded (vectors of
// gtpv2.jsonl rebuilt from their values must come out identical).
#include "common/gtp/v2/builder.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

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

const CauseIe kAccepted{16, false, false, false, std::nullopt};

class GtpV2Builder : public ::testing::Test {
 protected:
  std::array<uint8_t, 1024> out_{};
  Builder b_{out_};
};

// §7.1.1 Echo Request: T=0 (no TEID field, §5.5.1), Recovery mandatory.
//   40        version 2 (bits 8-6 = 010), P=0, T=0, MP=0
//   01        Echo Request
//   0009      Length: sequence (3) + spare (1) + Recovery IE (5)
//   000102    sequence number
//   00        spare
//   03 0001 00 07   Recovery, Length 1, instance 0, restart counter 7
TEST_F(GtpV2Builder, EchoRequestHasNoTeid) {
  b_.begin(MessageType::kEchoRequest, std::nullopt, 0x000102);
  b_.add(Recovery{7});
  EXPECT_EQ(hexOf(b_),
            "40" "01" "0009" "000102" "00" "03" "0001" "00" "07");
}

// §7.1.2 Echo Response: same sequence number as the request.
TEST_F(GtpV2Builder, EchoResponse) {
  b_.begin(MessageType::kEchoResponse, std::nullopt, 0x000102);
  b_.add(Recovery{7});
  EXPECT_EQ(hexOf(b_),
            "40" "02" "0009" "000102" "00" "03" "0001" "00" "07");
}

// §7.1.3 Version Not Supported Indication: the header alone, T=0, Length 4.
TEST_F(GtpV2Builder, VersionNotSupportedIndicationIsAHeaderAlone) {
  b_.begin(MessageType::kVersionNotSupportedIndication, std::nullopt, 0x123456);
  EXPECT_EQ(hexOf(b_),
            "40" "03" "0004" "123456" "00");
}

// A Create Session Request rejected for a malformed Sender F-TEID: Cause 69
// "Mandatory IE incorrect" with the offending IE (§8.4: type, Length 0,
// spare | instance), sent to the TEID of the sender's F-TEID.
//   48              version 2, T=1
//   21              Create Session Response (33)
//   0012            Length: TEID 4 + sequence 3 + spare 1 + Cause IE 10
//   11223344        the MME's S11 TEID
//   00abcd 00       sequence number of the request, spare
//   02 0006 00      Cause, Length 6, instance 0
//   45 00           69, PCE=BCE=CS=0
//   57 0000 00      offending IE: F-TEID (87), Length 0, instance 0
TEST_F(GtpV2Builder, CreateSessionResponseRejectionNamesTheOffendingIe) {
  b_.begin(MessageType::kCreateSessionResponse, 0x11223344u, 0x00abcd);
  b_.add(CauseIe{69, false, false, false, CauseIe::OffendingIe{87, 0}});
  EXPECT_EQ(hexOf(b_),
            "48" "21" "0012" "11223344" "00abcd" "00" "02" "0006" "00" "45" "00" "57" "0000"
            "00");
}

// Context Not Found (64) to a Delete Session Request whose session is unknown,
// addressed to the TEID the requester gave in its F-TEID; no offending IE.
TEST_F(GtpV2Builder, ContextNotFoundToTheSendersTeid) {
  b_.begin(MessageType::kDeleteSessionResponse, 0xa1b2c3d4u, 0x000042);
  b_.add(CauseIe{64, false, false, false, std::nullopt});
  EXPECT_EQ(hexOf(b_),
            "48" "25" "000e" "a1b2c3d4" "000042" "00" "02" "0002" "00" "4000");
}

// §5.5.1: the first message carries P=1 and its own Length; the piggybacked
// one follows with P=0.
TEST_F(GtpV2Builder, PiggybackedCreateBearerRequest) {
  b_.begin(MessageType::kCreateSessionResponse, 1u, 1);
  b_.add(kAccepted);
  b_.beginPiggybacked(MessageType::kCreateBearerRequest, 2u, 2);
  b_.add(Ebi{5});
  EXPECT_EQ(hexOf(b_),
            "58" "21" "000e" "00000001" "000001" "00" "02" "0002" "00" "1000" "48" "5f" "000d"
            "00000002" "000002" "00" "49" "0001" "00" "05");
}

// Grouped IE lengths are filled in when the group closes.
TEST_F(GtpV2Builder, GroupedLengthCoversTheChildren) {
  b_.begin(MessageType::kModifyBearerRequest, 0x11223344u, 1);
  b_.beginGrouped(IeType::kBearerContext);
  b_.add(Ebi{5});
  b_.add(FTeid{0, 0xffffffff, v4("1.1.1.4"), std::nullopt});
  b_.endGrouped();
  EXPECT_EQ(hexOf(b_),
            "48" "22" "001e" "11223344" "000001" "00" "5d" "0012" "00" "49" "0001" "00" "05"
            "57" "0009" "00" "80" "ffffffff" "01010104");
}

TEST_F(GtpV2Builder, ErrorsAreStickyAndReportedByFinish) {
  std::array<uint8_t, 10> small{};
  Builder b(small);
  b.begin(MessageType::kEchoRequest, std::nullopt, 1);
  b.add(Recovery{1});  // 8 + 5 > 10
  b.add(Recovery{2});
  auto r = b.finish();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kBufferTooSmall);
}

TEST_F(GtpV2Builder, MisuseIsAnInvalidArgument) {
  Builder before_begin(out_);
  before_begin.add(Recovery{1});
  EXPECT_EQ(before_begin.finish().error().code, Errc::kInvalidArgument);

  Builder open_group(out_);
  open_group.begin(MessageType::kCreateSessionRequest, 0u, 1);
  open_group.beginGrouped(IeType::kBearerContext);
  EXPECT_EQ(open_group.finish().error().code, Errc::kInvalidArgument);

  Builder stray_end(out_);
  stray_end.begin(MessageType::kCreateSessionRequest, 0u, 1);
  stray_end.endGrouped();
  EXPECT_EQ(stray_end.finish().error().code, Errc::kInvalidArgument);
}

TEST_F(GtpV2Builder, NestingBeyondTheMaximumDepthIsRefused) {
  b_.begin(MessageType::kCreateSessionRequest, 0u, 1);
  for (std::size_t i = 0; i <= kMaxGroupDepth; ++i) b_.beginGrouped(IeType::kBearerContext);
  EXPECT_EQ(b_.finish().error().code, Errc::kGroupingTooDeep);
}

// Messages encoded by other implementations, rebuilt from the values their
// tests used: the builder must produce the same octets.
struct Rebuilt {
  int line;  // in gtpv2.jsonl
  std::string hex;
};

class GtpV2BuilderMatchesOtherEncoders : public GtpV2Builder {
 protected:
  std::string vectorHex(int line) {
    static const auto records = testing::loadVectors("gtpv2.jsonl");
    return records.at(static_cast<std::size_t>(line - 1)).json().at("hex").get<std::string>();
  }
};

TEST_F(GtpV2BuilderMatchesOtherEncoders, ScapyEchoRequest) {
  b_.begin(MessageType::kEchoRequest, std::nullopt, 1);
  b_.add(Recovery{13});
  EXPECT_EQ(hexOf(b_), vectorHex(21));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, ScapyEchoResponse) {
  b_.begin(MessageType::kEchoResponse, std::nullopt, 1);
  b_.add(Recovery{1});
  b_.add(kAccepted);
  EXPECT_EQ(hexOf(b_), vectorHex(22));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, NdpiDeleteSessionResponse) {
  b_.begin(MessageType::kDeleteSessionResponse, 0x35529204u, 4936802);
  b_.add(kAccepted);
  b_.add(Recovery{1});
  EXPECT_EQ(hexOf(b_), vectorHex(16));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, GoGtpDeleteBearerRequest) {
  b_.begin(MessageType::kDeleteBearerRequest, 0x11223344u, 1);
  b_.add(Ebi{5});
  b_.add(CauseIe{5, false, false, false, std::nullopt});  // 8.4: 5 = ISR deactivation
  EXPECT_EQ(hexOf(b_), vectorHex(55));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, GoGtpModifyBearerRequest) {
  b_.begin(MessageType::kModifyBearerRequest, 0x11223344u, 1);
  for (uint8_t ebi : {5, 6}) {
    b_.beginGrouped(IeType::kBearerContext);
    b_.add(Ebi{ebi});
    b_.add(FTeid{0, 0xffffffff, v4("1.1.1.4"), std::nullopt});  // 0: S1-U eNodeB GTP-U
    b_.endGrouped();
  }
  EXPECT_EQ(hexOf(b_), vectorHex(69));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, GoGtpModifyBearerResponse) {
  b_.begin(MessageType::kModifyBearerResponse, 0x11223344u, 1);
  b_.add(kAccepted);
  for (uint8_t ebi : {5, 6}) {
    b_.beginGrouped(IeType::kBearerContext);
    b_.add(kAccepted);
    b_.add(Ebi{ebi});
    b_.add(FTeid{1, 0xffffffff, v4("1.1.1.3"), std::nullopt});  // 1: S1-U SGW GTP-U
    b_.endGrouped();
  }
  EXPECT_EQ(hexOf(b_), vectorHex(70));
}

TEST_F(GtpV2BuilderMatchesOtherEncoders, GoGtpPgwRestartNotificationAcknowledge) {
  b_.begin(MessageType::kPgwRestartNotificationAcknowledge, 0x11223344u, 1);
  b_.add(CauseIe{12, false, false, false, std::nullopt});  // 12 = PGW not responding
  EXPECT_EQ(hexOf(b_), vectorHex(71));
}

}  // namespace
}  // namespace gtpcp::gtp::v2
