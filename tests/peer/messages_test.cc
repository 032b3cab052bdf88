// Message building and the checks of the peer emulator: what the SGWs and
// PGWs send decodes, passes the codec's mandatory-IE check, and every
// deviation a proxy could introduce is reported as the right Mismatch.
#include "tools/peer/messages.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <vector>

#include "common/gtp/v2/validate.h"

namespace gtpcp::peer {
namespace {

using gtp::v2::Message;
using gtp::v2::MessageType;

constexpr uint32_t kSgw = 0x7f00000b;    // 127.0.0.11
constexpr uint32_t kPgw = 0x7f000015;    // 127.0.0.21
constexpr uint32_t kProxy = 0x7f000001;  // 127.0.0.1

// fd00::N
IpAddress ula(uint8_t n) {
  std::array<uint8_t, 16> a{0xfd, 0x00};
  a[15] = n;
  return IpAddress::ipv6(a);
}
const IpAddress kSgw6 = ula(11);
const IpAddress kPgw6 = ula(21);
const IpAddress kProxy6 = ula(1);

Identities ids() {
  Identities i;
  i.imsi_start = 1010000000001;  // "001010000000001" with 15 digits
  i.imsi_digits = 15;
  i.msisdn_start = 15550000001;
  i.msisdn_digits = 11;
  i.count = 100;
  i.plmn = *gtp::makePlmn("001", "01");
  return i;
}

gtp::v2::Apn apn(std::string_view text) {
  gtp::v2::Apn a;
  for (char c : text) a.text.push(c);
  return a;
}

class MessagesTest : public ::testing::Test {
 protected:
  std::span<const uint8_t> csr(uint32_t index, uint32_t sgw_teid,
                               const IpAddress& sgw_addr = kSgw) {
    CreateSessionRequestArgs a;
    a.sequence = 0x1234;
    a.index = index;
    a.ids = &ids_;
    a.apn = &apn_;
    a.sgw_addr = sgw_addr;
    a.sgw_teid = sgw_teid;
    a.recovery = 7;
    auto r = buildCreateSessionRequest(a, buf_);
    EXPECT_TRUE(r.has_value());
    return {buf_.data(), r.value_or(0)};
  }
  // Subscriber 3's Modify Bearer Request from SGW `sgw_addr`, decoded into
  // msg_.
  void modifyBearerRequest(const IpAddress& sgw_addr) {
    ModifyBearerRequestArgs a;
    a.sequence = 5;
    a.header_teid = 0x01000001;
    a.index = 3;
    a.ids = &ids_;
    a.sgw_addr = sgw_addr;
    auto r = buildModifyBearerRequest(a, buf_);
    ASSERT_TRUE(r);
    decode({buf_.data(), *r});
  }
  void decode(std::span<const uint8_t> bytes) {
    ASSERT_TRUE(msg_.decode(bytes).has_value());
    ASSERT_TRUE(gtp::v2::checkMandatory(msg_).has_value());
  }
  // An accepted Create Session Response of PGW `pgw` to subscriber 3,
  // decoded into msg_.
  void acceptedCreateSessionResponse(const IpAddress& pgw) {
    CreateSessionResponseArgs a;
    a.sequence = 99;
    a.header_teid = 0x4242;
    a.pgw_addr = pgw;
    a.pgw_teid = 0x01000007;
    a.ue_ipv4 = 0x0a000007;
    a.pgw_u_teid = userPlaneTeid(PlaneSide::kPgw, 1010000000004, pgw);
    a.charging_id = 7;
    a.recovery = 3;
    auto r = buildCreateSessionResponse(a, buf_);
    ASSERT_TRUE(r);
    decode({buf_.data(), *r});
  }

  Identities ids_ = ids();
  gtp::v2::Apn apn_ = apn("internet");
  std::array<uint8_t, kMaxBuiltMessage> buf_{};
  Message msg_;
};

TEST(Digits, FixedWidthAndBack) {
  EXPECT_EQ(toDigits(1010000000001, 15).view(), "001010000000001");
  EXPECT_EQ(toDigits(5, 3).view(), "005");
  EXPECT_EQ(toDigits(1000, 3).size, 0);  // does not fit
  uint64_t v = 0;
  EXPECT_TRUE(digitsValue("001010000000001", v));
  EXPECT_EQ(v, 1010000000001u);
  EXPECT_FALSE(digitsValue("12a", v));
  EXPECT_FALSE(digitsValue("", v));
}

TEST(UserPlaneTeid, DependsOnSideImsiAndAddress) {
  const uint32_t t = userPlaneTeid(PlaneSide::kSgw, 1, kSgw);
  EXPECT_EQ(t, userPlaneTeid(PlaneSide::kSgw, 1, kSgw));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kPgw, 1, kSgw));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kSgw, 2, kSgw));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kSgw, 1, kProxy));
  EXPECT_NE(t, 0u);
}

TEST(UserPlaneTeid, Ipv4ValuesAreUnchangedAndEveryIpv6OctetCounts) {
  // What they were when the emulator spoke IPv4 only.
  EXPECT_EQ(userPlaneTeid(PlaneSide::kSgw, 1010000000004, kSgw), 0x1621b377u);
  EXPECT_EQ(userPlaneTeid(PlaneSide::kPgw, 1010000000004, kPgw), 0x5e473391u);
  const uint32_t t = userPlaneTeid(PlaneSide::kSgw, 1, kSgw6);
  EXPECT_EQ(t, userPlaneTeid(PlaneSide::kSgw, 1, ula(11)));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kPgw, 1, kSgw6));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kSgw, 1, ula(12)));
  EXPECT_NE(t, userPlaneTeid(PlaneSide::kSgw, 1, kSgw));
  for (std::size_t i = 0; i < 16; ++i) {
    IpAddress other = kSgw6;
    other.octets[i] ^= 0x40;
    EXPECT_NE(t, userPlaneTeid(PlaneSide::kSgw, 1, other)) << "octet " << i;
  }
}

TEST(FTeidAddress, OneFamilyPerNodeAndTheLegsFamilyWhenChecking) {
  const auto v4 = makeFTeid(kIfS5S8SgwGtpC, 7, kSgw);
  EXPECT_EQ(v4.teid, 7u);
  ASSERT_TRUE(v4.ipv4);
  EXPECT_FALSE(v4.ipv6);
  EXPECT_EQ(fromIpv4(*v4.ipv4), kSgw);
  const auto v6 = makeFTeid(kIfS5S8SgwGtpC, 7, kSgw6);
  EXPECT_FALSE(v6.ipv4);
  ASSERT_TRUE(v6.ipv6);
  EXPECT_EQ(v6.ipv6->octets, kSgw6.octets);

  IpAddress a;
  EXPECT_TRUE(fteidAddress(v6, AF_INET6, a));
  EXPECT_EQ(a, kSgw6);
  EXPECT_FALSE(fteidAddress(v6, AF_INET, a));
  EXPECT_TRUE(fteidSoleAddress(v4, a));
  EXPECT_EQ(a, IpAddress(kSgw));
  auto both = v6;
  both.ipv4 = toIpv4(kSgw);
  EXPECT_TRUE(fteidAddress(both, AF_INET, a));
  EXPECT_EQ(a, IpAddress(kSgw));
  EXPECT_FALSE(fteidSoleAddress(both, a));
  both.ipv4.reset();
  both.ipv6.reset();
  EXPECT_FALSE(fteidSoleAddress(both, a));
}

TEST_F(MessagesTest, CreateSessionRequestCarriesWhatAnSgwSends) {
  decode(csr(3, 0xabcd));
  EXPECT_EQ(msg_.messageType(), MessageType::kCreateSessionRequest);
  EXPECT_TRUE(msg_.header().teidPresent());
  EXPECT_EQ(msg_.header().teid, 0u);
  EXPECT_EQ(msg_.header().sequence_number, 0x1234u);
  using gtp::v2::IeType;
  for (IeType t : {IeType::kImsi, IeType::kMsisdn, IeType::kMei, IeType::kUli, IeType::kServingNetwork,
                   IeType::kRatType, IeType::kIndication, IeType::kFTeid, IeType::kApn,
                   IeType::kSelectionMode, IeType::kPdnType, IeType::kPaa, IeType::kAmbr,
                   IeType::kBearerContext, IeType::kRecovery, IeType::kUeTimeZone,
                   IeType::kChargingCharacteristics})
    EXPECT_NE(msg_.find(t), nullptr) << static_cast<int>(t);
  auto imsi = gtp::v2::readFirst<gtp::v2::Imsi>(msg_);
  ASSERT_TRUE(imsi);
  EXPECT_EQ(imsi->digits.view(), "001010000000004");
  auto uli = gtp::v2::readFirst<gtp::v2::Uli>(msg_);
  ASSERT_TRUE(uli);
  EXPECT_TRUE(uli->tai && uli->ecgi);
  auto rat = gtp::v2::readFirst<gtp::v2::RatType>(msg_);
  EXPECT_EQ(rat->value, kRatEutran);

  auto v = viewCreateSessionRequest(msg_);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->imsi, 1010000000004u);
  ASSERT_TRUE(v->sender);
  EXPECT_EQ(v->sender->interface_type, kIfS5S8SgwGtpC);
  EXPECT_EQ(v->sender->teid, 0xabcdu);
  EXPECT_EQ(fromIpv4(*v->sender->ipv4), kSgw);
  EXPECT_EQ(v->ebi, kDefaultEbi);
  ASSERT_TRUE(v->sgw_u);
  EXPECT_EQ(v->sgw_u->interface_type, kIfS5S8SgwGtpU);
  EXPECT_EQ(v->sgw_u->teid, userPlaneTeid(PlaneSide::kSgw, 1010000000004, kSgw));
}

TEST_F(MessagesTest, BuildingIsDeterministic) {
  auto a = csr(5, 77);
  std::vector<uint8_t> first(a.begin(), a.end());
  auto b = csr(5, 77);
  EXPECT_EQ(first, std::vector<uint8_t>(b.begin(), b.end()));
}

TEST_F(MessagesTest, PgwChecksOnCreateSessionRequest) {
  PgwCheckContext ctx{false, kProxy, &ids_, {}};
  // As the proxy would forward it: sender F-TEID rewritten to the proxy.
  CreateSessionRequestView v;
  {
    decode(csr(3, 0xabcd, kSgw));
    v = *viewCreateSessionRequest(msg_);
  }
  CreateSessionRequestView proxied = v;
  proxied.sender->ipv4 = toIpv4(kProxy);
  proxied.sender->teid = 0x5555;
  EXPECT_TRUE(checkCreateSessionRequest(proxied, ctx).empty());

  // Not rewritten: names the SGW.
  EXPECT_TRUE(checkCreateSessionRequest(v, ctx).has(Mismatch::kPgwSenderFteidNotProxy));
  // ... which is right through a bare relay.
  EXPECT_TRUE(checkCreateSessionRequest(v, PgwCheckContext{true, kProxy, &ids_, {}}).empty());

  auto bad = proxied;
  bad.sender->teid = 0;
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwSenderFteidInvalid));
  bad = proxied;
  bad.sender->interface_type = kIfS5S8PgwGtpC;
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwSenderFteidInvalid));
  bad = proxied;
  bad.sender.reset();
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwSenderFteidInvalid));

  bad = proxied;
  bad.imsi = 1010000000001 + 100;  // one past the range
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwImsiOutOfRange));
  bad.imsi.reset();
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwImsiOutOfRange));

  // The user-plane F-TEID must arrive as the SGW sent it.
  bad = proxied;
  bad.sgw_u->ipv4 = toIpv4(kProxy);
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwUserPlaneFteid));
  bad = proxied;
  bad.sgw_u->teid ^= 1;
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwUserPlaneFteid));
  bad = proxied;
  bad.sgw_u->ipv4 = toIpv4(kSgw + 1);  // another SGW's address: TEID no longer matches
  EXPECT_TRUE(checkCreateSessionRequest(bad, ctx).has(Mismatch::kPgwUserPlaneFteid));
  bad = proxied;
  bad.has_bearer = false;
  bad.ebi.reset();
  bad.sgw_u.reset();
  const auto s = checkCreateSessionRequest(bad, ctx);
  EXPECT_TRUE(s.has(Mismatch::kPgwBearerContext));
  EXPECT_TRUE(s.has(Mismatch::kPgwUserPlaneFteid));
}

TEST_F(MessagesTest, CreateSessionResponseAcceptedAndItsChecks) {
  acceptedCreateSessionResponse(kPgw);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(msg_.header().teid, 0x4242u);
  EXPECT_EQ(msg_.header().sequence_number, 99u);
  auto paa = gtp::v2::readFirst<gtp::v2::Paa>(msg_);
  ASSERT_TRUE(paa && paa->ipv4);
  EXPECT_EQ(fromIpv4(*paa->ipv4), 0x0a000007u);
  EXPECT_NE(msg_.find(gtp::v2::IeType::kApnRestriction), nullptr);
  EXPECT_NE(msg_.find(gtp::v2::IeType::kAmbr), nullptr);
  EXPECT_NE(msg_.find(gtp::v2::IeType::kRecovery), nullptr);
  const auto* bc = msg_.find(gtp::v2::IeType::kBearerContext);
  ASSERT_NE(bc, nullptr);
  EXPECT_NE(msg_.findChild(*bc, gtp::v2::IeType::kChargingId), nullptr);

  auto v = viewResponse(msg_);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cause, kCauseAccepted);
  ASSERT_TRUE(v->pgw_c && v->pgw_u);
  EXPECT_EQ(v->pgw_c->interface_type, kIfS5S8PgwGtpC);
  EXPECT_EQ(v->pgw_u->interface_type, kIfS5S8PgwGtpU);
  EXPECT_EQ(v->ebi, kDefaultEbi);
  EXPECT_EQ(v->bearer_cause, kCauseAccepted);

  std::bitset<256> expected;
  SgwCheckContext ctx;
  ctx.proxy_access = kProxy;
  ctx.imsi = 1010000000004;
  ctx.expected_rejections = &expected;
  // Straight from the PGW, the control F-TEID names the PGW: a mismatch
  // behind a proxy, fine through a relay.
  EXPECT_TRUE(checkCreateSessionResponse(*v, ctx).has(Mismatch::kSgwPgwFteidNotProxy));
  ctx.relay = true;
  EXPECT_TRUE(checkCreateSessionResponse(*v, ctx).empty());
  ctx.relay = false;
  auto proxied = *v;
  proxied.pgw_c->ipv4 = toIpv4(kProxy);
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).empty());

  auto bad = proxied;
  bad.pgw_u->ipv4 = toIpv4(kProxy);  // user plane rewritten: must not be
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwUserPlaneFteid));
  bad = proxied;
  bad.pgw_c->teid = 0;
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwPgwFteidInvalid));
  bad = proxied;
  bad.ebi = 6;
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwBearerContext));
  bad = proxied;
  bad.bearer_cause = 73;
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwBearerContext));

  // With the PGWs in this process: the acceptance must come from one of them
  // that accepts.
  const std::array<IpAddress, 2> pgws{kPgw, kPgw + 1};
  const std::array<uint8_t, 2> accepting{0, 73};
  ctx.local_pgws = pgws;
  ctx.local_pgw_causes = accepting;
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).empty());
  const std::array<uint8_t, 2> rejecting{73, 0};
  ctx.local_pgw_causes = rejecting;
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).has(Mismatch::kSgwUnexpectedCause));
}

TEST_F(MessagesTest, RejectedCreationNeedsAnExpectedCause) {
  CreateSessionResponseArgs a;
  a.sequence = 1;
  a.header_teid = 9;
  a.cause = 73;
  auto r = buildCreateSessionResponse(a, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  EXPECT_EQ(msg_.find(gtp::v2::IeType::kBearerContext), nullptr);
  auto v = viewResponse(msg_);
  ASSERT_TRUE(v);
  std::bitset<256> expected;
  SgwCheckContext ctx;
  ctx.expected_rejections = &expected;
  EXPECT_TRUE(checkCreateSessionResponse(*v, ctx).has(Mismatch::kSgwUnexpectedCause));
  expected.set(73);
  EXPECT_TRUE(checkCreateSessionResponse(*v, ctx).empty());
}

TEST_F(MessagesTest, ModifyBearerRoundTrip) {
  modifyBearerRequest(kSgw);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(msg_.header().teid, 0x01000001u);
  EXPECT_NE(msg_.find(gtp::v2::IeType::kUli), nullptr);
  EXPECT_NE(msg_.find(gtp::v2::IeType::kRatType), nullptr);
  auto v = viewModifyBearerRequest(msg_);
  ASSERT_TRUE(v);
  PgwCheckContext ctx{false, kProxy, &ids_, {}};
  EXPECT_TRUE(checkModifyBearerRequest(*v, ctx, 1010000000004, kDefaultEbi).empty());
  EXPECT_TRUE(checkModifyBearerRequest(*v, ctx, 1010000000005, kDefaultEbi)
                  .has(Mismatch::kPgwUserPlaneFteid));
  EXPECT_TRUE(checkModifyBearerRequest(*v, ctx, 1010000000004, 6).has(Mismatch::kPgwBearerContext));

  auto resp = buildModifyBearerResponse(5, 0x4242, kCauseAccepted, kDefaultEbi, buf_);
  ASSERT_TRUE(resp);
  decode({buf_.data(), *resp});
  auto rv = viewResponse(msg_);
  ASSERT_TRUE(rv);
  SgwCheckContext sctx;
  EXPECT_TRUE(checkSimpleResponse(*rv, sctx).empty());
  rv->cause = 64;
  EXPECT_TRUE(checkSimpleResponse(*rv, sctx).has(Mismatch::kSgwUnexpectedCause));
}

TEST_F(MessagesTest, DeleteSessionRoundTrip) {
  auto r = buildDeleteSessionRequest(6, 0x01000001, kDefaultEbi, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  auto lbi = viewDeleteSessionRequest(msg_);
  ASSERT_TRUE(lbi);
  EXPECT_EQ(lbi->lbi, kDefaultEbi);
  auto resp = buildDeleteSessionResponse(6, 0x4242, kCauseAccepted, buf_);
  ASSERT_TRUE(resp);
  decode({buf_.data(), *resp});
  EXPECT_EQ(msg_.messageType(), MessageType::kDeleteSessionResponse);
  auto echo = buildEchoRequest(7, 3, buf_);
  ASSERT_TRUE(echo);
  decode({buf_.data(), *echo});
  EXPECT_FALSE(msg_.header().teidPresent());
}

TEST_F(MessagesTest, Ipv6SgwNamesItsIpv6AddressInItsFTeids) {
  auto bytes = csr(3, 0xabcd, kSgw6);
  decode(bytes);
  auto v = viewCreateSessionRequest(msg_);
  ASSERT_TRUE(v && v->sender && v->sgw_u);
  EXPECT_FALSE(v->sender->ipv4);
  ASSERT_TRUE(v->sender->ipv6);
  EXPECT_EQ(v->sender->ipv6->octets, kSgw6.octets);
  EXPECT_FALSE(v->sgw_u->ipv4);
  ASSERT_TRUE(v->sgw_u->ipv6);
  EXPECT_EQ(v->sgw_u->ipv6->octets, kSgw6.octets);
  EXPECT_EQ(v->sgw_u->teid, userPlaneTeid(PlaneSide::kSgw, 1010000000004, kSgw6));
  // On the wire (TS 29.274 §8.22): flag V6 alone, interface type 6, the
  // TEID, then the 16 octets; the IE is 21 octets long.
  const auto* ie = msg_.find(gtp::v2::IeType::kFTeid, 0);
  ASSERT_NE(ie, nullptr);
  ASSERT_EQ(ie->length, 21u);
  const auto at = bytes.begin() + ie->valueOffset();
  const std::vector<uint8_t> value(at, at + ie->length);
  const std::vector<uint8_t> expected{0x40 | kIfS5S8SgwGtpC, 0, 0, 0xab, 0xcd, 0xfd, 0, 0, 0, 0, 0,
                                      0, 0, 0, 0, 0, 0, 0, 0, 0, 11};
  EXPECT_EQ(value, expected);

  modifyBearerRequest(kSgw6);
  ASSERT_FALSE(HasFatalFailure());
  auto mv = viewModifyBearerRequest(msg_);
  ASSERT_TRUE(mv && mv->sgw_u && mv->sgw_u->ipv6);
  EXPECT_FALSE(mv->sgw_u->ipv4);
  // The PGW of a mixed run: the proxy's gateway side is IPv4, the SGW's user
  // plane IPv6.
  const PgwCheckContext mixed{false, kProxy, &ids_, {}};
  EXPECT_TRUE(checkModifyBearerRequest(*mv, mixed, 1010000000004, kDefaultEbi).empty());
}

TEST_F(MessagesTest, PgwWantsTheProxysGatewayAddressInTheFamilyOfItsLeg) {
  decode(csr(3, 0xabcd, kSgw6));
  const CreateSessionRequestView v = *viewCreateSessionRequest(msg_);
  // Mixed: an IPv6 SGW, the proxy's gateway side IPv4. The proxy writes the
  // sender F-TEID anew in the PGW's family; the user plane stays IPv6.
  const PgwCheckContext mixed{false, kProxy, &ids_, {}};
  auto proxied = v;
  proxied.sender = makeFTeid(kIfS5S8SgwGtpC, 0x5555, kProxy);
  EXPECT_TRUE(checkCreateSessionRequest(proxied, mixed).empty());
  // The proxy's address of the other family, or the SGW's, is not enough.
  auto bad = proxied;
  bad.sender = makeFTeid(kIfS5S8SgwGtpC, 0x5555, kProxy6);
  EXPECT_TRUE(checkCreateSessionRequest(bad, mixed).has(Mismatch::kPgwSenderFteidNotProxy));
  EXPECT_TRUE(checkCreateSessionRequest(v, mixed).has(Mismatch::kPgwSenderFteidNotProxy));
  // Both families, the leg's one the proxy's: fine.
  auto both = proxied;
  both.sender->ipv6 = gtp::Ipv6{kSgw6.octets};
  EXPECT_TRUE(checkCreateSessionRequest(both, mixed).empty());
  // No address at all: unusable.
  bad = proxied;
  bad.sender->ipv4.reset();
  EXPECT_TRUE(checkCreateSessionRequest(bad, mixed).has(Mismatch::kPgwSenderFteidInvalid));
  // The user plane must keep its one family.
  bad = proxied;
  bad.sgw_u->ipv4 = toIpv4(kSgw);
  EXPECT_TRUE(checkCreateSessionRequest(bad, mixed).has(Mismatch::kPgwUserPlaneFteid));

  // IPv6 on both legs.
  const PgwCheckContext v6{false, kProxy6, &ids_, {}};
  proxied.sender = makeFTeid(kIfS5S8SgwGtpC, 0x5555, kProxy6);
  EXPECT_TRUE(checkCreateSessionRequest(proxied, v6).empty());
  bad = proxied;
  bad.sgw_u->ipv6 = gtp::Ipv6{kProxy6.octets};
  EXPECT_TRUE(checkCreateSessionRequest(bad, v6).has(Mismatch::kPgwUserPlaneFteid));
}

TEST_F(MessagesTest, SgwWantsTheProxysAccessAddressInTheFamilyOfItsLeg) {
  // Mixed: an IPv4 PGW answers; the proxy gives the IPv6 SGW its IPv6 access
  // address in the control F-TEID and leaves the user plane alone.
  acceptedCreateSessionResponse(kPgw);
  ASSERT_FALSE(HasFatalFailure());
  auto v = viewResponse(msg_);
  ASSERT_TRUE(v);
  std::bitset<256> expected;
  SgwCheckContext ctx;
  ctx.proxy_access = kProxy6;
  ctx.imsi = 1010000000004;
  ctx.expected_rejections = &expected;
  const std::array<IpAddress, 1> pgws{kPgw};
  const std::array<uint8_t, 1> accepting{0};
  ctx.local_pgws = pgws;
  ctx.local_pgw_causes = accepting;
  auto proxied = *v;
  proxied.pgw_c = makeFTeid(kIfS5S8PgwGtpC, 0x77, kProxy6);
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).empty());

  auto bad = proxied;
  bad.pgw_c = makeFTeid(kIfS5S8PgwGtpC, 0x77, kProxy);  // the proxy, but IPv4
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwPgwFteidNotProxy));
  EXPECT_TRUE(checkCreateSessionResponse(*v, ctx).has(Mismatch::kSgwPgwFteidNotProxy));
  bad = proxied;
  bad.pgw_c->ipv6.reset();
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwPgwFteidInvalid));
  bad = proxied;
  bad.pgw_u->ipv6 = gtp::Ipv6{kPgw6.octets};  // a second family appeared
  EXPECT_TRUE(checkCreateSessionResponse(bad, ctx).has(Mismatch::kSgwUserPlaneFteid));

  // IPv6 on both legs: an IPv6 PGW of this process.
  acceptedCreateSessionResponse(kPgw6);
  ASSERT_FALSE(HasFatalFailure());
  v = viewResponse(msg_);
  ASSERT_TRUE(v && v->pgw_u && v->pgw_u->ipv6);
  proxied = *v;
  proxied.pgw_c = makeFTeid(kIfS5S8PgwGtpC, 0x77, kProxy6);
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).has(Mismatch::kSgwUserPlaneFteid))
      << "not from a PGW of this process";
  const std::array<IpAddress, 1> pgws6{kPgw6};
  ctx.local_pgws = pgws6;
  EXPECT_TRUE(checkCreateSessionResponse(proxied, ctx).empty());
}

TEST(MismatchNames, AreUniqueAndStable) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kMismatchCount; ++i) {
    const auto n = mismatchName(static_cast<Mismatch>(i));
    EXPECT_NE(n, "unknown");
    EXPECT_TRUE(names.insert(n).second) << n;
  }
}

// ---- The dedicated bearer and the commands ----

TEST_F(MessagesTest, CreateBearerRequestAndItsResponseCarryTheDedicatedBearersEndpoints) {
  const uint64_t imsi = ids_.imsi(3);
  CreateBearerRequestArgs q;
  q.sequence = 0x77;
  q.header_teid = 0x5c000001;
  q.imsi = imsi;
  q.pgw_addr = kPgw;
  q.charging_id = 9;
  auto r = buildCreateBearerRequest(q, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  EXPECT_EQ(msg_.messageType(), MessageType::kCreateBearerRequest);
  EXPECT_EQ(msg_.header().teid, 0x5c000001u);
  auto v = viewBearerRequest(msg_);
  ASSERT_TRUE(v);
  SgwCheckContext c;
  c.proxy_access = kProxy;
  c.imsi = imsi;
  EXPECT_TRUE(checkCreateBearerRequest(*v, c).empty());
  c.imsi = ids_.imsi(4);  // another subscriber's TEID
  EXPECT_TRUE(checkCreateBearerRequest(*v, c).has(Mismatch::kSgwUserPlaneFteid));
  // The default bearer's F-TEID is not the dedicated one's.
  EXPECT_NE(v->bearer.fteid[1]->teid, userPlaneTeid(PlaneSide::kPgw, imsi, kPgw));
  v->bearer.ebi = 6;  // the SGW side assigns it, not the PGW
  c.imsi = imsi;
  EXPECT_TRUE(checkCreateBearerRequest(*v, c).has(Mismatch::kSgwBearerRequest));

  CreateBearerResponseArgs a;
  a.sequence = 0x77;
  a.header_teid = 0x01000001;
  a.imsi = imsi;
  a.sgw_addr = kSgw6;
  a.pgw_u_addr = kPgw6;
  r = buildCreateBearerResponse(a, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  auto w = viewBearerResponse(msg_);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bearer.ebi, kDedicatedEbi);
  ASSERT_TRUE(w->bearer.fteid[2] && w->bearer.fteid[3]);
  EXPECT_EQ(w->bearer.fteid[2]->interface_type, kIfS5S8SgwGtpU);
  EXPECT_EQ(w->bearer.fteid[3]->interface_type, kIfS5S8PgwGtpU);
  PgwCheckContext p;
  p.proxy_gateway = kProxy6;
  EXPECT_TRUE(checkCreateBearerResponse(*w, p, imsi, kDedicatedEbi).empty());
  EXPECT_TRUE(checkCreateBearerResponse(*w, p, ids_.imsi(4), kDedicatedEbi).has(Mismatch::kPgwUserPlaneFteid));
  EXPECT_TRUE(checkCreateBearerResponse(*w, p, imsi, 7).has(Mismatch::kPgwBearerResponse));
  p.proxy_gateway = kSgw6;  // a proxy would have put its own address there
  EXPECT_TRUE(checkCreateBearerResponse(*w, p, imsi, kDedicatedEbi).has(Mismatch::kPgwUserPlaneFteid));
}

TEST_F(MessagesTest, UpdateAndDeleteBearerRequestsAndTheirResponses) {
  BearerModificationArgs u;
  u.sequence = 0x78;
  u.header_teid = 1;
  u.ebi = kDedicatedEbi;
  u.qos = dedicatedQos(true);
  u.apn_ambr = gtp::v2::Ambr{300000, 600000};
  auto r = buildBearerModification(MessageType::kUpdateBearerRequest, u, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  auto v = viewBearerRequest(msg_);
  ASSERT_TRUE(v);
  EXPECT_TRUE(checkUpdateBearerRequest(*v, kDedicatedEbi).empty());
  EXPECT_TRUE(checkUpdateBearerRequest(*v, kDefaultEbi).has(Mismatch::kSgwBearerRequest));
  EXPECT_EQ(v->bearer.qos->gbr_uplink, 128u);

  r = buildDeleteBearerRequest(0x79, 1, kDedicatedEbi, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  v = viewBearerRequest(msg_);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->ebi, kDedicatedEbi) << "EPS Bearer ID, instance 1";
  EXPECT_FALSE(v->lbi);

  for (auto type : {MessageType::kUpdateBearerResponse, MessageType::kDeleteBearerResponse}) {
    r = buildBearerResponse(type, 0x79, 2, kCauseAccepted, kDedicatedEbi, buf_);
    ASSERT_TRUE(r);
    decode({buf_.data(), *r});
    auto w = viewBearerResponse(msg_);
    ASSERT_TRUE(w);
    EXPECT_TRUE(checkBearerResponse(*w, kDedicatedEbi).empty());
    r = buildBearerResponse(type, 0x79, 2, kCauseContextNotFound, kDedicatedEbi, buf_);
    ASSERT_TRUE(r);
    decode({buf_.data(), *r});
    w = viewBearerResponse(msg_);
    ASSERT_TRUE(w);
    EXPECT_FALSE(w->bearer.present);
    EXPECT_TRUE(checkBearerResponse(*w, kDedicatedEbi).has(Mismatch::kPgwBearerResponse));
  }
}

TEST_F(MessagesTest, ModifyBearerCommandCarriesWhatItAsksFor) {
  BearerModificationArgs a;
  a.sequence = kCommandBit | 0x10;
  a.header_teid = 0x01000001;
  a.apn_ambr = commandedAmbr(3);
  a.qos = commandedQos();
  auto r = buildBearerModification(MessageType::kModifyBearerCommand, a, buf_);
  ASSERT_TRUE(r);
  decode({buf_.data(), *r});
  EXPECT_EQ(msg_.header().sequence_number, kCommandBit | 0x10);
  auto v = viewBearerRequest(msg_);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->bearer.ebi, kDefaultEbi);
  EXPECT_EQ(v->bearer.qos->qci, commandedQos().qci);
  EXPECT_EQ(v->apn_ambr->uplink, commandedAmbr(3).uplink);
  EXPECT_NE(commandedAmbr(3).uplink, commandedAmbr(4).uplink);
}

}  // namespace
}  // namespace gtpcp::peer
