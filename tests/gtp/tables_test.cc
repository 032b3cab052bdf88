// Facts generated from common/gtp/tables: the cause classes of both versions
// (v*_cause_classes.tsv), the F-TEID interface types and the proxy's legs
// (v2_fteid_interface_types.tsv), the cause names the proxy and its tools
// use, and the constants of constants.h and v2/message.h.
#include <gtest/gtest.h>

#include "common/gtp/constants.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::gtp {
namespace {

constexpr uint8_t octet(v2::Cause c) { return static_cast<uint8_t>(c); }
constexpr uint8_t octet(v1::Cause c) { return static_cast<uint8_t>(c); }
constexpr uint8_t octet(v2::FTeidInterfaceType t) { return static_cast<uint8_t>(t); }

// Each value has exactly one class, and the predicates agree with it.
template <class CauseClass, class F>
void expectPredicatesMatchClass(F classOf, bool (*request)(uint8_t), bool (*accepted)(uint8_t),
                                bool (*rejected)(uint8_t)) {
  for (unsigned v = 0; v < 256; ++v) {
    const auto c = classOf(static_cast<uint8_t>(v));
    const auto u = static_cast<uint8_t>(v);
    EXPECT_EQ(request(u), c == CauseClass::kRequest) << v;
    EXPECT_EQ(accepted(u), c == CauseClass::kAccepted) << v;
    EXPECT_EQ(rejected(u), c == CauseClass::kRejected) << v;
  }
}

// TS 29.274 Table 8.4-1: 0-1 reserved, 2-15 request, 16-63 acceptance,
// 64-239 rejection, 240-255 spare for requests.
TEST(GtpTables, V2CauseClassesFollowTable84) {
  EXPECT_EQ(v2::causeClass(0), v2::CauseClass::kReserved);
  EXPECT_EQ(v2::causeClass(1), v2::CauseClass::kReserved);
  EXPECT_TRUE(v2::isRequestCause(2));
  EXPECT_TRUE(v2::isRequestCause(15));
  EXPECT_FALSE(v2::isRequestCause(16));
  EXPECT_TRUE(v2::causeAccepted(16));
  EXPECT_TRUE(v2::causeAccepted(63));  // spare: an acceptance of a later release
  EXPECT_FALSE(v2::causeAccepted(64));
  EXPECT_TRUE(v2::causeRejected(64));
  EXPECT_TRUE(v2::causeRejected(239));
  EXPECT_FALSE(v2::causeRejected(240));
  EXPECT_TRUE(v2::isRequestCause(240));
  EXPECT_TRUE(v2::isRequestCause(255));
  expectPredicatesMatchClass<v2::CauseClass>([](uint8_t v) { return v2::causeClass(v); }, v2::isRequestCause,
                                             v2::causeAccepted, v2::causeRejected);
}

// TS 29.060 §7.7.1: bit 8 clear request, bits 8-7 "10" acceptance, "11" rejection.
TEST(GtpTables, V1CauseClassesFollowTheTwoHighBits) {
  for (unsigned v = 0; v < 256; ++v) {
    const auto u = static_cast<uint8_t>(v);
    EXPECT_EQ(v1::isRequestCause(u), (u & 0x80) == 0) << v;
    EXPECT_EQ(v1::causeAccepted(u), (u & 0xc0) == 0x80) << v;
    EXPECT_EQ(v1::causeRejected(u), (u & 0xc0) == 0xc0) << v;
  }
  expectPredicatesMatchClass<v1::CauseClass>([](uint8_t v) { return v1::causeClass(v); }, v1::isRequestCause,
                                             v1::causeAccepted, v1::causeRejected);
}

// The causes the proxy and its tools send by name.
TEST(GtpTables, CausesUsedByNameHaveTheirSpecValues) {
  EXPECT_EQ(octet(v1::Cause::kReactivationRequested), 6);
  EXPECT_EQ(octet(v1::Cause::kRequestAccepted), 128);
  EXPECT_EQ(octet(v1::Cause::kNonExistent), 192);
  EXPECT_EQ(octet(v1::Cause::kImsiImeiNotKnown), 194);
  EXPECT_EQ(octet(v1::Cause::kMsRefusesReject), 197);
  EXPECT_EQ(octet(v1::Cause::kNoResourcesAvailable), 199);
  EXPECT_EQ(octet(v1::Cause::kMandatoryIeIncorrect), 201);
  EXPECT_EQ(octet(v1::Cause::kOptionalIeIncorrect), 203);
  EXPECT_EQ(octet(v1::Cause::kSystemFailure), 204);
  EXPECT_EQ(octet(v2::Cause::kReactivationRequested), 8);
  EXPECT_EQ(octet(v2::Cause::kRequestAccepted), 16);
  EXPECT_EQ(octet(v2::Cause::kContextNotFound), 64);
  EXPECT_EQ(octet(v2::Cause::kNoResourcesAvailable), 73);
  EXPECT_TRUE(v1::isRequestCause(octet(v1::Cause::kReactivationRequested)));
  EXPECT_TRUE(v2::isRequestCause(octet(v2::Cause::kReactivationRequested)));
  EXPECT_TRUE(v1::causeRejected(octet(v1::Cause::kNonExistent)));
  EXPECT_TRUE(v2::causeRejected(octet(v2::Cause::kContextNotFound)));
}

// TS 29.274 Table 8.22-1.
TEST(GtpTables, FTeidInterfaceTypesHaveTheirSpecValues) {
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS1uEnodebGtpU), 0);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS5S8SgwGtpU), 4);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS5S8PgwGtpU), 5);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS5S8SgwGtpC), 6);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS5S8PgwGtpC), 7);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS11MmeGtpC), 10);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS2bEpdgGtpC), 30);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS2bUEpdgGtpU), 31);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS2bPgwGtpC), 32);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kS2bUPgwGtpU), 33);
  EXPECT_EQ(octet(v2::FTeidInterfaceType::kN26AmfGtpC), 40);
  EXPECT_EQ(v2::fteidInterfaceTypeName(6), "S5/S8 SGW GTP-C interface");
}

// The endpoints of the proxy's legs: S5/S8 and S2b, nothing else.
TEST(GtpTables, ProxyLegsNameTheS5S8AndS2bEndpoints) {
  for (unsigned v = 0; v < 64; ++v) {
    const auto u = static_cast<uint8_t>(v);
    EXPECT_EQ(v2::isAccessControlInterface(u), v == 6 || v == 30) << v;
    EXPECT_EQ(v2::isGatewayControlInterface(u), v == 7 || v == 32) << v;
    EXPECT_EQ(v2::isAccessUserInterface(u), v == 4 || v == 31) << v;
    EXPECT_EQ(v2::isGatewayUserInterface(u), v == 5 || v == 33) << v;
  }
}

TEST(GtpTables, ConstantsHaveTheirSpecValues) {
  static_assert(kGtpcPort == 2123);
  static_assert(v2::kCommandBit == 0x800000);  // the top bit of 24
}

}  // namespace
}  // namespace gtpcp::gtp
