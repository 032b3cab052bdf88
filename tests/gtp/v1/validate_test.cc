// GTPv1-C mandatory IEs (v1/validate.h): TS 29.060 clause 7 message tables,
// with repeated IEs counted (two GSN Addresses) and the tables that depend on
// the sending node (Update PDP Context, §7.3.3 Tables 7 and 8).
#include "common/gtp/v1/validate.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::fromHex;

Ipv4 v4(std::string_view text) {
  Ipv4 a;
  EXPECT_TRUE(parseIpv4(text, a));
  return a;
}

class GtpV1Mandatory : public ::testing::Test {
 protected:
  Result<void> check(MessageType type, const std::function<void(Builder&)>& fill,
                     Sender sender = Sender::kAny) {
    Builder b(buffer_);
    b.begin(type, 1, 1);
    fill(b);
    auto bytes = b.finish();
    EXPECT_TRUE(bytes);
    EXPECT_TRUE(message_.decode(*bytes));
    return checkMandatory(message_, sender);
  }

  static void expectMissing(const Result<void>& r, uint8_t type) {
    ASSERT_FALSE(r);
    EXPECT_EQ(errcName(r.error().code), errcName(Errc::kMandatoryIeMissing));
    EXPECT_EQ(r.error().ie_type, type);
    EXPECT_EQ(v1Cause(r.error().code), 202);  // Mandatory IE missing
  }

  static void expectIncorrect(const Result<void>& r, uint8_t type) {
    ASSERT_FALSE(r);
    EXPECT_EQ(errcName(r.error().code), errcName(Errc::kMandatoryIeIncorrect));
    EXPECT_EQ(r.error().ie_type, type);
    EXPECT_EQ(v1Cause(r.error().code), 201);  // Mandatory IE incorrect
  }

  std::array<uint8_t, 512> buffer_{};
  Message message_;
};

const std::vector<uint8_t> kQos = fromHex("0b921f");

// §7.3.1 Table 5: TEID Data I, NSAPI, SGSN Address for signalling, SGSN
// Address for user traffic, QoS Profile (IEs in ascending type order, §7.7.0).
void createPdpContextRequest(Builder& b, int gsn_addresses) {
  b.add(TeidDataI{0x11});
  b.add(Nsapi{5});
  for (int i = 0; i < gsn_addresses; ++i) b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
  b.add(QosProfile{2, kQos});
}

TEST_F(GtpV1Mandatory, CompleteCreatePdpContextRequestPasses) {
  auto r = check(MessageType::kCreatePdpContextRequest,
                 [](Builder& b) { createPdpContextRequest(b, 2); });
  EXPECT_TRUE(r) << describe(r.error());
}

TEST_F(GtpV1Mandatory, CreatePdpContextRequestNeedsTwoGsnAddresses) {
  expectMissing(check(MessageType::kCreatePdpContextRequest,
                      [](Builder& b) { createPdpContextRequest(b, 1); }),
                133);
}

TEST_F(GtpV1Mandatory, CreatePdpContextRequestWithoutNsapi) {
  expectMissing(check(MessageType::kCreatePdpContextRequest,
                      [](Builder& b) {
                        b.add(TeidDataI{0x11});
                        b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
                        b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
                        b.add(QosProfile{2, kQos});
                      }),
                20);
}

TEST_F(GtpV1Mandatory, MalformedGsnAddressIsIncorrect) {
  const auto five = fromHex("c000020101");
  expectIncorrect(check(MessageType::kCreatePdpContextRequest,
                        [&](Builder& b) {
                          b.add(TeidDataI{0x11});
                          b.add(Nsapi{5});
                          b.addRaw(133, five);
                          b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
                          b.add(QosProfile{2, kQos});
                        }),
                  133);
}

TEST_F(GtpV1Mandatory, TooShortQosProfileIsIncorrect) {
  const auto qos = fromHex("020b92");
  expectIncorrect(check(MessageType::kCreatePdpContextRequest,
                        [&](Builder& b) {
                          b.add(TeidDataI{0x11});
                          b.add(Nsapi{5});
                          b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
                          b.add(GsnAddress{v4("192.0.2.1"), std::nullopt});
                          b.addRaw(135, qos);
                        }),
                  135);
}

// §7.3.3: sent by the SGSN (Table 7) it needs TEID Data I, NSAPI, two SGSN
// Addresses and QoS Profile; sent by the GGSN (Table 8) only NSAPI.
TEST_F(GtpV1Mandatory, UpdatePdpContextRequestDependsOnTheSender) {
  auto nsapi_only = [](Builder& b) { b.add(Nsapi{5}); };
  EXPECT_TRUE(check(MessageType::kUpdatePdpContextRequest, nsapi_only, Sender::kGgsn));
  expectMissing(check(MessageType::kUpdatePdpContextRequest, nsapi_only, Sender::kSgsn), 16);
  // kAny: what both tables require.
  EXPECT_TRUE(check(MessageType::kUpdatePdpContextRequest, nsapi_only, Sender::kAny));
  expectMissing(check(
                    MessageType::kUpdatePdpContextRequest, [](Builder&) {}, Sender::kAny),
                20);
  auto full = [](Builder& b) { createPdpContextRequest(b, 2); };
  EXPECT_TRUE(check(MessageType::kUpdatePdpContextRequest, full, Sender::kSgsn));
}

// §7.3.5 Table 11: NSAPI.
TEST_F(GtpV1Mandatory, DeletePdpContextRequestNeedsNsapi) {
  expectMissing(
      check(MessageType::kDeletePdpContextRequest, [](Builder& b) { b.add(TeardownInd{true}); }),
      20);
  EXPECT_TRUE(check(MessageType::kDeletePdpContextRequest, [](Builder& b) { b.add(Nsapi{5}); }));
}

TEST_F(GtpV1Mandatory, CreatePdpContextResponseNeedsItsCause) {
  EXPECT_TRUE(
      check(MessageType::kCreatePdpContextResponse, [](Builder& b) { b.add(CauseIe{199}); }));
  expectMissing(
      check(MessageType::kCreatePdpContextResponse, [](Builder& b) { b.add(Recovery{1}); }), 1);
}

// A rejection (Cause 192 and up, §7.7.1) carries the Cause and little else:
// §7.4.2 Send Routeing Information for GPRS Response needs Cause and IMSI,
// unless it is a rejection.
TEST_F(GtpV1Mandatory, RejectionNeedsOnlyItsCause) {
  EXPECT_TRUE(check(MessageType::kSendRouteingInformationForGprsResponse,
                    [](Builder& b) { b.add(CauseIe{194}); }));
  expectMissing(check(MessageType::kSendRouteingInformationForGprsResponse,
                      [](Builder& b) { b.add(CauseIe{128}); }),
                2);
}

TEST_F(GtpV1Mandatory, EchoResponseNeedsRecovery) {
  expectMissing(check(MessageType::kEchoResponse, [](Builder&) {}), 14);
}

}  // namespace
}  // namespace gtpcp::gtp::v1
