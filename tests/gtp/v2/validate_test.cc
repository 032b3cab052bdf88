// GTPv2-C mandatory IEs (v2/validate.h): TS 29.274 clause 7 message tables,
// "M" rows only, and the rejection rule of §7.7 (a response with a rejection
// Cause needs only the Cause).
//
// A complete Create Session Request is built once; each test removes or
// breaks one IE and checks the error names that IE's type and instance.
#include "common/gtp/v2/validate.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::fromHex;

Ipv4 v4(std::string_view text) {
  Ipv4 a;
  EXPECT_TRUE(parseIpv4(text, a));
  return a;
}

ApnText apnText(std::string_view s) {
  ApnText t;
  for (char c : s) t.push(c);
  return t;
}

BearerQos defaultQos() {
  BearerQos q;
  q.pl = 9;
  q.qci = 9;
  return q;
}

// Which IE of the Create Session Request to leave out or break.
enum class Csr {
  kComplete,
  kNoRatType,
  kNoSenderFTeid,
  kNoApn,
  kNoBearerContext,
  kBearerWithoutEbi,
  kBearerWithoutQos,
  kShortSenderFTeid,
  kPlainTextApn,
  kSecondBearerWithoutEbi
};

class GtpV2Mandatory : public ::testing::Test {
 protected:
  // Table 7.2.1-1: RAT Type, Sender F-TEID for Control Plane, APN, Bearer
  // Contexts to be created {EBI, Bearer Level QoS} are M; the others C/O.
  Result<void> checkCsr(Csr variant) {
    Builder b(buffer_);
    b.begin(MessageType::kCreateSessionRequest, 0u, 1);
    b.add(Imsi{digitsOf("001010123456789")});
    if (variant != Csr::kNoRatType) b.add(RatType{6});
    if (variant == Csr::kShortSenderFTeid) {
      const auto three = fromHex("8a1122");
      b.addRaw(87, 0, three);
    } else if (variant != Csr::kNoSenderFTeid) {
      b.add(FTeid{10, 0x11223344, v4("192.0.2.1"), std::nullopt});
    }
    b.add(FTeid{7, 0, v4("192.0.2.2"), std::nullopt}, 1);
    if (variant == Csr::kPlainTextApn) {
      const std::vector<uint8_t> text = {'i', 'n', 't', 'e', 'r', 'n', 'e', 't'};
      b.addRaw(71, 0, text);
    } else if (variant != Csr::kNoApn) {
      b.add(Apn{apnText("internet")});
    }
    if (variant != Csr::kNoBearerContext) {
      b.beginGrouped(IeType::kBearerContext);
      if (variant != Csr::kBearerWithoutEbi) b.add(Ebi{5});
      if (variant != Csr::kBearerWithoutQos) b.add(defaultQos());
      b.endGrouped();
    }
    if (variant == Csr::kSecondBearerWithoutEbi) {
      b.beginGrouped(IeType::kBearerContext);
      b.add(defaultQos());
      b.endGrouped();
    }
    auto bytes = b.finish();
    EXPECT_TRUE(bytes);
    EXPECT_TRUE(message_.decode(*bytes));
    return checkMandatory(message_);
  }

  static Digits digitsOf(std::string_view s) {
    Digits d;
    for (char c : s) d.push(c);
    return d;
  }

  // Builds a message with `fill` and checks it.
  Result<void> check(MessageType type, const std::function<void(Builder&)>& fill) {
    Builder b(buffer_);
    b.begin(type, 1u, 1);
    fill(b);
    auto bytes = b.finish();
    EXPECT_TRUE(bytes);
    EXPECT_TRUE(message_.decode(*bytes));
    return checkMandatory(message_);
  }

  static void expectMissing(const Result<void>& r, uint8_t type, uint8_t instance) {
    ASSERT_FALSE(r);
    EXPECT_EQ(errcName(r.error().code), errcName(Errc::kMandatoryIeMissing));
    EXPECT_EQ(r.error().ie_type, type);
    EXPECT_EQ(r.error().ie_instance, instance);
    EXPECT_EQ(v2Cause(r.error().code), 70);  // Mandatory IE missing
  }

  static void expectIncorrect(const Result<void>& r, uint8_t type, uint8_t instance) {
    ASSERT_FALSE(r);
    EXPECT_EQ(errcName(r.error().code), errcName(Errc::kMandatoryIeIncorrect));
    EXPECT_EQ(r.error().ie_type, type);
    EXPECT_EQ(r.error().ie_instance, instance);
    EXPECT_EQ(v2Cause(r.error().code), 69);  // Mandatory IE incorrect
  }

  std::array<uint8_t, 1024> buffer_{};
  Message message_;
};

TEST_F(GtpV2Mandatory, CompleteCreateSessionRequestPasses) {
  auto r = checkCsr(Csr::kComplete);
  EXPECT_TRUE(r) << describe(r.error());
}

TEST_F(GtpV2Mandatory, CreateSessionRequestWithoutRatType) {
  expectMissing(checkCsr(Csr::kNoRatType), 82, 0);
}

TEST_F(GtpV2Mandatory, CreateSessionRequestWithoutSenderFTeid) {
  // The PGW F-TEID (instance 1) does not stand in for the sender's (instance 0).
  expectMissing(checkCsr(Csr::kNoSenderFTeid), 87, 0);
}

TEST_F(GtpV2Mandatory, CreateSessionRequestWithoutApn) {
  expectMissing(checkCsr(Csr::kNoApn), 71, 0);
}

TEST_F(GtpV2Mandatory, CreateSessionRequestWithoutBearerContext) {
  expectMissing(checkCsr(Csr::kNoBearerContext), 93, 0);
}

// Table 7.2.1-2: EBI and Bearer Level QoS are M inside the Bearer Context.
TEST_F(GtpV2Mandatory, BearerContextWithoutEbi) {
  expectMissing(checkCsr(Csr::kBearerWithoutEbi), 73, 0);
}

TEST_F(GtpV2Mandatory, BearerContextWithoutBearerQos) {
  expectMissing(checkCsr(Csr::kBearerWithoutQos), 80, 0);
}

TEST_F(GtpV2Mandatory, EveryBearerContextIsChecked) {
  expectMissing(checkCsr(Csr::kSecondBearerWithoutEbi), 73, 0);
}

// §8.22: an F-TEID has at least flags + TEID + one address (9 octets).
TEST_F(GtpV2Mandatory, ThreeOctetSenderFTeidIsIncorrect) {
  expectIncorrect(checkCsr(Csr::kShortSenderFTeid), 87, 0);
}

// TS 23.003 §9.1: the APN must be label encoded; plain text is refused.
TEST_F(GtpV2Mandatory, PlainTextApnIsIncorrect) {
  expectIncorrect(checkCsr(Csr::kPlainTextApn), 71, 0);
}

// Table 7.2.8-1: Cause is the only M IE of Modify Bearer Response.
TEST_F(GtpV2Mandatory, ModifyBearerResponseWithoutCause) {
  expectMissing(check(MessageType::kModifyBearerResponse, [](Builder& b) { b.add(Recovery{1}); }),
                2, 0);
  EXPECT_TRUE(check(MessageType::kModifyBearerResponse, [](Builder& b) {
    b.add(CauseIe{16, false, false, false, std::nullopt});
  }));
}

// Table 7.2.3-1: the Linked EPS Bearer ID (EBI instance 0) is M.
TEST_F(GtpV2Mandatory, CreateBearerRequestWithoutLbi) {
  const auto tft = fromHex("2100");
  auto bearer = [&](Builder& b) {
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{6});
    b.addRaw(84, 0, tft);
    b.add(defaultQos());
    b.endGrouped();
  };
  expectMissing(check(MessageType::kCreateBearerRequest, bearer), 73, 0);
  EXPECT_TRUE(check(MessageType::kCreateBearerRequest, [&](Builder& b) {
    b.add(Ebi{5});
    bearer(b);
  }));
}

// §7.7: a rejection (Cause 64..239, Table 8.4-1) carries the Cause and
// little else.
TEST_F(GtpV2Mandatory, RejectionWithOnlyCausePasses) {
  for (uint8_t cause : {70, 64, 239}) {
    auto r = check(MessageType::kCreateSessionResponse, [&](Builder& b) {
      b.add(CauseIe{cause, false, false, false, CauseIe::OffendingIe{82, 0}});
    });
    EXPECT_TRUE(r) << int(cause) << ": " << describe(r.error());
  }
}

// 240..255 are kept for requests (Table 8.4-1): in a response they reject
// nothing, and the response is checked like an acceptance.
TEST_F(GtpV2Mandatory, RequestOnlyCauseInAResponseIsNoRejection) {
  expectMissing(check(MessageType::kCreateSessionResponse,
                      [](Builder& b) { b.add(CauseIe{240, false, false, false, std::nullopt}); }),
                93, 0);
}

TEST_F(GtpV2Mandatory, AcceptanceStillNeedsItsMandatoryIes) {
  // Table 7.2.2-1: Bearer Contexts created is M when the request is accepted.
  expectMissing(check(MessageType::kCreateSessionResponse,
                      [](Builder& b) {
                        b.add(CauseIe{16, false, false, false, std::nullopt});
                      }),
                93, 0);
}

TEST_F(GtpV2Mandatory, MalformedCauseInAResponseIsIncorrect) {
  const auto one = fromHex("10");
  expectIncorrect(
      check(MessageType::kCreateSessionResponse, [&](Builder& b) { b.addRaw(2, 0, one); }), 2, 0);
}

// Messages without a rule (e.g. Modify Bearer Request: every IE C/O) pass.
TEST_F(GtpV2Mandatory, MessageWithoutMandatoryIesPasses) {
  EXPECT_TRUE(check(MessageType::kModifyBearerRequest, [](Builder&) {}));
  EXPECT_TRUE(check(MessageType::kDeleteSessionRequest, [](Builder&) {}));
}

TEST_F(GtpV2Mandatory, EchoRequestNeedsRecovery) {
  expectMissing(check(MessageType::kEchoRequest, [](Builder&) {}), 3, 0);
}

// checkIeValue: the table's minimum length first, then the typed view.
TEST(GtpV2IeValue, ShortAndMalformedValuesAreNamed) {
  const auto rfsp = fromHex("01");
  auto r = checkIeValue(144, rfsp);  // 8.77 RFSP Index: 2 octets
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kIeTooShort);
  EXPECT_EQ(r.error().ie_type, 144);
  const auto imsi = fromHex("21a3");
  EXPECT_EQ(checkIeValue(1, imsi).error().code, Errc::kIeInvalidValue);
  const auto unknown = fromHex("");
  EXPECT_TRUE(checkIeValue(250, unknown));  // no rule for an unknown type
}

}  // namespace
}  // namespace gtpcp::gtp::v2
