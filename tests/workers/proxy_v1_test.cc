// The worker's GTPv1-C procedures on Gn/Gp (workers/lib/procedures_v1.cc): PDP
// contexts created, updated and deleted through the proxy from both sides,
// secondaries, retransmissions, rejections, failover, GGSN restarts,
// overrides and notifications, checked octet by octet on what leaves.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gtp/bytes.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "tests/workers/proxy_fixture.h"

namespace gtpcp::worker::test {
namespace {

namespace v1 = gtp::v1;

const Ipv4 kSgsn{{127, 0, 0, 31}};
const Ipv4 kSgsnUser{{10, 31, 0, 1}};
const Ipv4 kGgsn1{{127, 0, 0, 41}};
const Ipv4 kGgsn2{{127, 0, 0, 42}};
const Ipv4 kGgsnUser{{10, 41, 0, 1}};
constexpr uint32_t kSgsnTeidC = 0x51510001;
constexpr uint32_t kSgsnTeidU = 0x51520001;
constexpr uint32_t kGgsnTeidC = 0x61610001;
constexpr uint32_t kGgsnTeidU = 0x61620001;

constexpr const char* kV1Routing = R"(
version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21}
  gn:
    gtp_version: 1
    gateways:
      - {name: ggsn1, address: 127.0.0.41}
rules:
  - name: iot
    match: {apn: [iot]}
    pool: gn
    overrides: {apn: iot.operator.example, qos_cap: {uplink_kbps: 256, downlink_kbps: 512}}
  - name: gn-default
    pool: gn
  - name: default
    pool: internet
failover: {try_another: [199], attempts: 2, response_timeout_ms: 0}
)";

struct PdpRequest {
  std::string imsi = "901700000000011";
  std::string apn = "internet";
  uint32_t teid = 0;  // header: 0 for a primary, the GGSN's TEID-C (as the proxy gave it) after
  uint16_t sequence = 100;
  std::optional<uint32_t> teid_c = kSgsnTeidC;
  uint32_t teid_u = kSgsnTeidU;
  uint8_t nsapi = 5;
  std::optional<uint8_t> linked_nsapi;
  std::optional<uint8_t> recovery;
  std::vector<uint8_t> control_address{127, 0, 0, 31};
  std::vector<uint8_t> user_address{10, 31, 0, 1};
  // 24.008 QoS: ARP, then octets 3..14 (maximum bit rate uplink 576 kbps, downlink 8640 kbps)
  std::vector<uint8_t> qos{0x02, 0x23, 0x92, 0x1f, 0x91, 0x97, 0x80, 0xfe, 0xfe, 0x4b, 0x11, 0x40, 0x40};
};

std::vector<uint8_t> pdpRequest(v1::MessageType type, const PdpRequest& r) {
  std::vector<uint8_t> buf(512);
  v1::Builder b(buf);
  b.begin(type, r.teid, r.sequence);
  if (!r.imsi.empty()) {
    v1::Imsi i;
    for (char c : r.imsi) i.digits.push(c);
    b.add(i);
  }
  v1::Rai rai;
  rai.plmn.mcc = {'9', '0', '1'};
  rai.plmn.mnc = {'7', '0', 0};
  rai.plmn.mnc_digits = 2;
  rai.lac = 0x1234;
  rai.rac = 5;
  b.add(rai);
  if (r.recovery) b.add(v1::Recovery{*r.recovery});
  if (type == v1::MessageType::kCreatePdpContextRequest) b.add(v1::SelectionMode{0});
  b.add(v1::TeidDataI{r.teid_u});
  if (r.teid_c) b.add(v1::TeidControlPlane{*r.teid_c});
  b.add(v1::Nsapi{r.nsapi});
  if (r.linked_nsapi) b.add(v1::Nsapi{*r.linked_nsapi});
  if (type == v1::MessageType::kCreatePdpContextRequest && !r.linked_nsapi) {
    b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21});  // End User Address: IPv4, dynamic
    v1::Apn a;
    for (char c : r.apn) a.text.push(c);
    b.add(a);
  }
  b.addRaw(133, r.control_address);
  b.addRaw(133, r.user_address);
  b.addRaw(135, r.qos);
  b.add(v1::RatType{1});
  buf.resize(b.finish()->size());
  return buf;
}

struct PdpResponse {
  uint8_t cause = 128;
  uint32_t teid = 0;  // header
  uint16_t sequence = 0;
  std::optional<uint32_t> teid_c = kGgsnTeidC;
  std::optional<uint32_t> teid_u = kGgsnTeidU;
  std::optional<uint8_t> recovery;
  std::vector<std::vector<uint8_t>> addresses{{127, 0, 0, 41}, {10, 41, 0, 1}};
};

std::vector<uint8_t> pdpResponse(v1::MessageType type, const PdpResponse& r) {
  std::vector<uint8_t> buf(512);
  v1::Builder b(buf);
  b.begin(type, r.teid, r.sequence);
  b.add(v1::CauseIe{r.cause});
  if (r.cause == 128) {
    if (r.recovery) b.add(v1::Recovery{*r.recovery});
    if (r.teid_u) b.add(v1::TeidDataI{*r.teid_u});
    if (r.teid_c) b.add(v1::TeidControlPlane{*r.teid_c});
    b.add(v1::ChargingId{0x77});
    for (const auto& a : r.addresses) b.addRaw(133, a);
  } else if (r.recovery) {
    b.add(v1::Recovery{*r.recovery});
  }
  buf.resize(b.finish()->size());
  return buf;
}

// A request of the GGSN (Update, Delete, Initiate) or of the SGSN (Delete):
// the NSAPI, Teardown Ind when given.
std::vector<uint8_t> simpleV1(v1::MessageType type, uint32_t teid, uint16_t sequence, uint8_t nsapi,
                              std::optional<bool> teardown = std::nullopt, std::optional<uint8_t> cause = std::nullopt) {
  std::vector<uint8_t> buf(128);
  v1::Builder b(buf);
  b.begin(type, teid, sequence);
  if (cause) b.add(v1::CauseIe{*cause});
  if (teardown) b.add(v1::TeardownInd{*teardown});
  b.add(v1::Nsapi{nsapi});
  buf.resize(b.finish()->size());
  return buf;
}

std::vector<uint8_t> causeOnly(v1::MessageType type, uint32_t teid, uint16_t sequence, uint8_t cause) {
  std::vector<uint8_t> buf(64);
  v1::Builder b(buf);
  b.begin(type, teid, sequence);
  b.add(v1::CauseIe{cause});
  buf.resize(b.finish()->size());
  return buf;
}

struct Decoded {
  explicit Decoded(const std::vector<uint8_t>& b) : bytes(b) { ok = static_cast<bool>(m.decode(bytes)); }
  // The Message points into `bytes`: a copy decodes its own.
  Decoded(const Decoded& o) : Decoded(o.bytes) {}
  Decoded& operator=(const Decoded& o) {
    bytes = o.bytes;
    ok = static_cast<bool>(m.decode(bytes));
    return *this;
  }
  std::vector<uint8_t> bytes;
  v1::Message m;
  bool ok = false;
  uint32_t teid() const { return m.header().teid; }
  uint16_t sequence() const { return m.header().sequence_number; }
  uint8_t cause() const { return v1::readNth<v1::CauseIe>(m)->value; }
  std::optional<uint32_t> teidC() const {
    auto t = v1::readNth<v1::TeidControlPlane>(m);
    return t ? std::optional<uint32_t>(t->value) : std::nullopt;
  }
  std::vector<uint8_t> gsnAddress(std::size_t n) const {
    const v1::Ie* ie = m.find(v1::IeType::kGsnAddress, n);
    if (ie == nullptr) return {};
    auto v = m.value(*ie);
    return {v.begin(), v.end()};
  }
  std::vector<uint8_t> value(v1::IeType type, std::size_t n = 0) const {
    const v1::Ie* ie = m.find(type, n);
    if (ie == nullptr) return {};
    auto v = m.value(*ie);
    return {v.begin(), v.end()};
  }
};

std::vector<uint8_t> octets(const Ipv4& a) { return {a.octets.begin(), a.octets.end()}; }

class ProxyV1Test : public ProxyTest {
 protected:
  ProxyV1Test() { useDocument(kV1Routing); }

  void useDocument(const std::string& text) {
    auto routing = config::parseRoutingDocument(text, "routing.yaml");
    ASSERT_TRUE(routing) << routing.error().toString();
    next_routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
    proxy_->setRouting(*next_routing_);
    routing_.swap(next_routing_);
  }

  net::Address sgsn() const { return net::Address::v4(kSgsn, kPort); }

  // A primary context through the proxy: what the GGSN got and what the SGSN got.
  struct Created {
    Decoded to_ggsn;
    Decoded to_sgsn;
    net::Address ggsn;
    uint32_t access_teid;   // the proxy's TEID-C the SGSN uses
    uint32_t gateway_teid;  // the proxy's TEID-C the GGSN uses
  };
  Created create(PdpRequest r = {}, PdpResponse answer = {}) {
    auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, r), sgsn());
    EXPECT_EQ(out.size(), 1u);
    if (out.empty()) return Created{Decoded({}), Decoded({}), {}, 0, 0};
    Decoded to_ggsn(out[0].bytes);
    answer.teid = to_ggsn.teidC().value_or(0);
    answer.sequence = to_ggsn.sequence();
    auto back = feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, answer), out[0].to);
    EXPECT_EQ(back.size(), 1u);
    Decoded to_sgsn(back.empty() ? std::vector<uint8_t>{} : back[0].bytes);
    return Created{to_ggsn, to_sgsn, out[0].to, to_sgsn.ok ? to_sgsn.teidC().value_or(0) : 0,
                   to_ggsn.teidC().value_or(0)};
  }
};

TEST_F(ProxyV1Test, CreatePdpContextGoesToAGgsnWithTheProxysTeidCAndSignallingAddress) {
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, PdpRequest{}), sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kGgsn1, kPort));
  Decoded d(out[0].bytes);
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.teid(), 0u) << "the GGSN has no TEID-C for this context yet";
  ASSERT_TRUE(d.teidC());
  EXPECT_NE(*d.teidC(), kSgsnTeidC);
  EXPECT_EQ(splitTeid(*d.teidC()).leg, Leg::kGateway);
  EXPECT_EQ(d.gsnAddress(0), octets(kProxy)) << "SGSN Address for signalling: the proxy's";
  EXPECT_EQ(d.gsnAddress(1), octets(kSgsnUser)) << "user traffic passes through";
  EXPECT_EQ(gtp::load32(d.value(v1::IeType::kTeidDataI).data()), kSgsnTeidU);
  EXPECT_TRUE(v1::checkMandatory(d.m, v1::Sender::kSgsn));
  EXPECT_EQ(header_->counters.v1_datagrams_received.load(), 1u);
}

TEST_F(ProxyV1Test, AcceptedCreationReachesTheSgsnTranslatedAndHoldsTheNsapi) {
  Created c = create();
  ASSERT_TRUE(c.to_sgsn.ok);
  EXPECT_EQ(c.to_sgsn.teid(), kSgsnTeidC) << "header: the SGSN's own TEID-C";
  EXPECT_EQ(c.to_sgsn.sequence(), 100) << "the SGSN's own number";
  EXPECT_EQ(c.to_sgsn.cause(), 128);
  ASSERT_TRUE(c.to_sgsn.teidC());
  EXPECT_NE(*c.to_sgsn.teidC(), kGgsnTeidC);
  EXPECT_EQ(splitTeid(*c.to_sgsn.teidC()).leg, Leg::kAccess);
  EXPECT_EQ(c.to_sgsn.gsnAddress(0), octets(kProxy)) << "GGSN Address for control plane: the proxy's";
  EXPECT_EQ(c.to_sgsn.gsnAddress(1), octets(kGgsnUser));
  EXPECT_EQ(gtp::load32(c.to_sgsn.value(v1::IeType::kTeidDataI).data()), kGgsnTeidU);
  const SessionShm* s = sessions_.find(c.access_teid);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->gtp_version, 1);
  EXPECT_EQ(s->state, static_cast<uint8_t>(SessionState::kActive));
  EXPECT_EQ(s->default_ebi, 5);
  EXPECT_EQ(s->ebis, 1u << 5);
  EXPECT_EQ(s->sgw.teid, kSgsnTeidC);
  EXPECT_EQ(s->pgw.teid, kGgsnTeidC);
  EXPECT_EQ(s->pgw.address, net::Address::v4(kGgsn1, kPort));
  EXPECT_EQ(std::string(s->imsi, s->imsi_length), "901700000000011");
  EXPECT_EQ(header_->counters.sessions_created.load(), 1u);
}

TEST_F(ProxyV1Test, AGtpv2SessionNeverLandsInAGtpv1PoolNorTheOpposite) {
  Sent to_pgw = createFrom("001010000000001", "internet", 0x1111, 7);
  EXPECT_EQ(to_pgw.to, net::Address::v4(kPgw1, kPort));
  useDocument(R"(
version: 1
pools:
  internet:
    gateways: [{name: pgw1, address: 127.0.0.21}]
rules:
  - {name: default, pool: internet}
)");
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, PdpRequest{}), sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn()) << "refused, not sent to a PGW";
  Decoded d(out[0].bytes);
  EXPECT_EQ(d.m.messageType(), v1::MessageType::kCreatePdpContextResponse);
  EXPECT_EQ(d.cause(), 199);
  EXPECT_EQ(d.teid(), kSgsnTeidC);
  EXPECT_EQ(d.sequence(), 100);
  EXPECT_EQ(header_->counters.no_route.load(), 1u);
}

TEST_F(ProxyV1Test, UpdatesAreRelayedBothWaysWithEachSidesTeidAndNumber) {
  Created c = create();
  // SGSN-initiated (a routing area update).
  PdpRequest u;
  u.teid = c.access_teid;
  u.sequence = 101;
  auto out = feed(pdpRequest(v1::MessageType::kUpdatePdpContextRequest, u), sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kGgsn1, kPort));
  Decoded to_ggsn(out[0].bytes);
  EXPECT_EQ(to_ggsn.teid(), kGgsnTeidC);
  EXPECT_EQ(*to_ggsn.teidC(), c.gateway_teid) << "the SGSN's TEID-C is the proxy's, as at creation";
  EXPECT_EQ(to_ggsn.gsnAddress(0), octets(kProxy));
  EXPECT_EQ(to_ggsn.gsnAddress(1), octets(kSgsnUser));
  PdpResponse ur;
  ur.teid = c.gateway_teid;
  ur.sequence = to_ggsn.sequence();
  auto back = feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, ur), out[0].to);
  ASSERT_EQ(back.size(), 1u);
  Decoded to_sgsn(back[0].bytes);
  EXPECT_EQ(to_sgsn.teid(), kSgsnTeidC);
  EXPECT_EQ(to_sgsn.sequence(), 101);
  EXPECT_EQ(*to_sgsn.teidC(), c.access_teid);
  EXPECT_EQ(to_sgsn.gsnAddress(0), octets(kProxy));

  // GGSN-initiated (a QoS change): the SGSN's answer carries only its
  // user-traffic address, which passes through.
  out = feed(simpleV1(v1::MessageType::kUpdatePdpContextRequest, c.gateway_teid, 900, 5), c.ggsn);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn());
  Decoded to_sgsn2(out[0].bytes);
  EXPECT_EQ(to_sgsn2.teid(), kSgsnTeidC);
  PdpResponse sr;
  sr.teid = c.access_teid;
  sr.sequence = to_sgsn2.sequence();
  sr.teid_c.reset();
  sr.addresses = {{10, 31, 0, 9}};
  back = feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, sr), sgsn());
  ASSERT_EQ(back.size(), 1u);
  Decoded to_ggsn2(back[0].bytes);
  EXPECT_EQ(back[0].to, c.ggsn);
  EXPECT_EQ(to_ggsn2.teid(), kGgsnTeidC);
  EXPECT_EQ(to_ggsn2.sequence(), 900);
  EXPECT_EQ(to_ggsn2.gsnAddress(0), (std::vector<uint8_t>{10, 31, 0, 9})) << "user traffic: untouched";
}

TEST_F(ProxyV1Test, AnAnswerForAContextTornDownMeanwhileClosesItsTransaction) {
  Created c = create();
  PdpRequest u;
  u.teid = c.access_teid;
  u.sequence = 101;
  const auto update = pdpRequest(v1::MessageType::kUpdatePdpContextRequest, u);
  auto out = feed(update, sgsn());
  ASSERT_EQ(out.size(), 1u);
  Decoded to_ggsn(out[0].bytes);
  // The SGSN tears the context down before the update's answer comes.
  auto del = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.access_teid, 102, 5, true), sgsn());
  ASSERT_EQ(del.size(), 1u);
  ASSERT_EQ(feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, c.gateway_teid, Decoded(del[0].bytes).sequence(),
                           128),
                 del[0].to)
                .size(),
            1u);
  ASSERT_EQ(sessions_.find(c.access_teid), nullptr);
  ASSERT_EQ(transactions_.pending(), 1u) << "the update's";

  PdpResponse ur;
  ur.teid = c.gateway_teid;
  ur.sequence = to_ggsn.sequence();
  EXPECT_TRUE(feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, ur), out[0].to).empty());
  EXPECT_EQ(header_->counters.responses_session_gone.load(), 1u);
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 0u);
  EXPECT_EQ(transactions_.pending(), 0u) << "closed, not left to expire";
  // The SGSN's copy of the update is a new request for a context the proxy no longer has.
  auto again = feed(update, sgsn());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(Decoded(again[0].bytes).cause(), 192) << "Non-existent";
  EXPECT_EQ(header_->counters.requests_retransmitted.load(), 0u);
}

TEST_F(ProxyV1Test, AnAnswerNamingAnotherContextsTeidLeavesTheTransactionPending) {
  Created a = create();
  PdpRequest second;
  second.imsi = "901700000000012";
  second.sequence = 200;
  Created b = create(second);
  PdpRequest u;
  u.teid = a.access_teid;
  u.sequence = 101;
  auto out = feed(pdpRequest(v1::MessageType::kUpdatePdpContextRequest, u), sgsn());
  ASSERT_EQ(out.size(), 1u);
  PdpResponse ur;
  ur.teid = b.gateway_teid;
  ur.sequence = Decoded(out[0].bytes).sequence();
  EXPECT_TRUE(feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, ur), out[0].to).empty());
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 1u);
  EXPECT_EQ(header_->counters.responses_session_gone.load(), 0u);
  EXPECT_EQ(transactions_.pending(), 1u) << "still waiting for its answer";
  ur.teid = a.gateway_teid;
  auto answer = feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, ur), out[0].to);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(Decoded(answer[0].bytes).sequence(), 101);
  EXPECT_EQ(transactions_.pending(), 0u);
}

TEST_F(ProxyV1Test, ANewSgsnTakingTheContextOverIsRecordedAndAnswered) {
  Created c = create();
  PdpRequest u;
  u.teid = c.access_teid;
  u.sequence = 5;
  u.teid_c = 0x52520001;
  u.control_address = {127, 0, 0, 32};
  const auto new_sgsn = net::Address::v4(Ipv4{{127, 0, 0, 32}}, kPort);
  auto out = feed(pdpRequest(v1::MessageType::kUpdatePdpContextRequest, u), new_sgsn);
  ASSERT_EQ(out.size(), 1u);
  Decoded to_ggsn(out[0].bytes);
  PdpResponse ur;
  ur.teid = c.gateway_teid;
  ur.sequence = to_ggsn.sequence();
  auto back = feed(pdpResponse(v1::MessageType::kUpdatePdpContextResponse, ur), out[0].to);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].to, new_sgsn);
  EXPECT_EQ(Decoded(back[0].bytes).teid(), 0x52520001u);
  // The GGSN's next request reaches the new SGSN.
  out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.gateway_teid, 901, 5, true), c.ggsn);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, new_sgsn);
  EXPECT_EQ(Decoded(out[0].bytes).teid(), 0x52520001u);
}

TEST_F(ProxyV1Test, SecondaryContextsComeAndGoAndTheTeardownEndsTheSession) {
  Created c = create();
  PdpRequest sec;
  sec.teid = c.access_teid;
  sec.sequence = 102;
  sec.teid_c.reset();
  sec.nsapi = 6;
  sec.linked_nsapi = 5;
  sec.teid_u = kSgsnTeidU + 1;
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, sec), sgsn());
  ASSERT_EQ(out.size(), 1u);
  Decoded to_ggsn(out[0].bytes);
  EXPECT_EQ(to_ggsn.teid(), kGgsnTeidC) << "a secondary names the primary's context";
  EXPECT_FALSE(to_ggsn.teidC());
  PdpResponse r;
  r.teid = c.gateway_teid;
  r.sequence = to_ggsn.sequence();
  r.teid_c.reset();
  r.teid_u = kGgsnTeidU + 1;
  auto back = feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, r), out[0].to);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Decoded(back[0].bytes).teid(), kSgsnTeidC);
  const SessionShm* s = sessions_.find(c.access_teid);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ebis, (1u << 5) | (1u << 6));

  // The secondary goes alone (Teardown Ind 0).
  out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.access_teid, 103, 6, false), sgsn());
  ASSERT_EQ(out.size(), 1u);
  Decoded del(out[0].bytes);
  EXPECT_EQ(del.teid(), kGgsnTeidC);
  back = feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, c.gateway_teid, del.sequence(), 128), out[0].to);
  ASSERT_EQ(back.size(), 1u);
  s = sessions_.find(c.access_teid);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ebis, 1u << 5);

  // The primary with Teardown Ind 1: the session is over.
  out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.access_teid, 104, 5, true), sgsn());
  ASSERT_EQ(out.size(), 1u);
  back = feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, c.gateway_teid, Decoded(out[0].bytes).sequence(), 128),
              out[0].to);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Decoded(back[0].bytes).sequence(), 104);
  EXPECT_EQ(sessions_.find(c.access_teid), nullptr);
  EXPECT_EQ(header_->counters.sessions_deleted.load(), 1u);
}

TEST_F(ProxyV1Test, ANetworkInitiatedSecondaryAndDeletionReachTheSgsn) {
  Created c = create();
  // Initiate PDP Context Activation (the GGSN asks for a secondary).
  std::vector<uint8_t> buf(128);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kInitiatePdpContextActivationRequest, c.gateway_teid, 700);
  b.add(v1::Nsapi{5});
  b.addRaw(135, std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f});
  b.addRaw(183, std::vector<uint8_t>{0x01});  // Correlation-ID
  buf.resize(b.finish()->size());
  auto out = feed(buf, c.ggsn);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn());
  Decoded init(out[0].bytes);
  EXPECT_EQ(init.teid(), kSgsnTeidC);
  auto back = feed(causeOnly(v1::MessageType::kInitiatePdpContextActivationResponse, c.access_teid, init.sequence(), 128),
                   sgsn());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Decoded(back[0].bytes).sequence(), 700);
  EXPECT_EQ(Decoded(back[0].bytes).teid(), kGgsnTeidC);

  // The GGSN deletes the context.
  out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.gateway_teid, 701, 5, true), c.ggsn);
  ASSERT_EQ(out.size(), 1u);
  Decoded del(out[0].bytes);
  back = feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, c.access_teid, del.sequence(), 128), sgsn());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].to, c.ggsn);
  EXPECT_EQ(sessions_.find(c.access_teid), nullptr);
}

TEST_F(ProxyV1Test, RetransmissionsGoToTheSameGgsnWhilePendingAndGetTheCachedAnswerAfter) {
  const auto request = pdpRequest(v1::MessageType::kCreatePdpContextRequest, PdpRequest{});
  auto first = feed(request, sgsn());
  auto second = feed(request, sgsn());
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].bytes, second[0].bytes);
  EXPECT_EQ(first[0].to, second[0].to);
  EXPECT_EQ(sessions_.active(), 1u);
  Decoded d(first[0].bytes);
  PdpResponse r;
  r.teid = *d.teidC();
  r.sequence = d.sequence();
  auto answer = feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, r), first[0].to);
  ASSERT_EQ(answer.size(), 1u);
  auto replay = feed(request, sgsn());
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].to, sgsn());
  EXPECT_EQ(replay[0].bytes, answer[0].bytes);
  // A second copy of the response is a duplicate, not relayed again.
  EXPECT_TRUE(feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, r), first[0].to).empty());
  EXPECT_EQ(header_->counters.responses_duplicate.load(), 1u);
  EXPECT_EQ(header_->counters.answers_replayed.load(), 1u);
}

TEST_F(ProxyV1Test, AGsnAddressOfLengthZeroIsRefusedAndNeverForwarded) {
  // The Create PDP Context Request that crashes osmo-ggsn 1.9.0
  // (../shared/peers/gtpv1/ggsn_crash_gsnaddr_len0.hex).
  const std::string hex =
      "3210004500000000000200000200010100000070f70e010ffd100000111111000022221405800002f121830009086"
      "96e7465726e6574850000850000860007913316325476f887000401000000";
  std::vector<uint8_t> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  auto out = feed(bytes, sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn()) << "answered, not forwarded";
  Decoded d(out[0].bytes);
  EXPECT_EQ(d.m.messageType(), v1::MessageType::kCreatePdpContextResponse);
  EXPECT_EQ(d.cause(), 201) << "Mandatory IE incorrect";
  EXPECT_EQ(d.teid(), 0x2222u) << "the request's TEID-C";
  EXPECT_EQ(sessions_.active(), 0u);

  // An Alternative address of length 0 (optional) is refused too.
  Created c = create();
  PdpRequest u;
  u.teid = c.access_teid;
  u.sequence = 7;
  auto update = pdpRequest(v1::MessageType::kUpdatePdpContextRequest, u);
  // Appended after the QoS Profile: ascending order is not what is tested.
  update.insert(update.end() - 4, {133, 0, 0});
  gtp::store16(update.data() + 2, static_cast<uint16_t>(update.size() - 8));
  out = feed(update, sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn());
  EXPECT_EQ(Decoded(out[0].bytes).cause(), 203) << "Optional IE incorrect";
  EXPECT_EQ(header_->counters.v1_gsn_address_invalid.load(), 2u);
}

TEST_F(ProxyV1Test, AnUnknownTeidIsNonExistentAndAnErrorIndicationIsDropped) {
  auto out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, 0x00012345, 9, 5, true), sgsn());
  ASSERT_EQ(out.size(), 1u);
  Decoded d(out[0].bytes);
  EXPECT_EQ(d.m.messageType(), v1::MessageType::kDeletePdpContextResponse);
  EXPECT_EQ(d.cause(), 192);
  EXPECT_EQ(d.teid(), 0u);
  EXPECT_EQ(d.sequence(), 9);

  std::vector<uint8_t> buf(64);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kErrorIndication, 0, 3);
  b.add(v1::TeidDataI{1});
  b.addRaw(133, octets(kSgsnUser));
  buf.resize(b.finish()->size());
  EXPECT_TRUE(feed(buf, sgsn()).empty());
  EXPECT_EQ(header_->counters.v1_error_indications.load(), 1u);
}

TEST_F(ProxyV1Test, SequenceNumbersAreTheProxysPerLegAndWrapWithinSixteenBits) {
  header_->v1_sequence_counter[static_cast<uint8_t>(Leg::kGateway)] = 0xfffe;
  std::vector<uint16_t> seen;
  for (int i = 0; i < 3; ++i) {
    PdpRequest r;
    r.imsi = "90170000000010" + std::to_string(i);
    r.sequence = 100;  // the same number from the SGSN each time: new subscribers, new numbers toward the GGSN
    r.teid_c = kSgsnTeidC + i;
    r.control_address = {127, 0, 0, static_cast<uint8_t>(50 + i)};
    auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, r),
                    net::Address::v4(Ipv4{{127, 0, 0, static_cast<uint8_t>(50 + i)}}, kPort));
    ASSERT_EQ(out.size(), 1u);
    seen.push_back(Decoded(out[0].bytes).sequence());
  }
  EXPECT_EQ(seen, (std::vector<uint16_t>{0xfffe, 0xffff, 0x0000}));
}

TEST_F(ProxyV1Test, AGgsnRejectionWithATryAnotherCauseGoesToTheNextGgsnThenNoneIsLeft) {
  std::string two(kV1Routing);
  const std::string line = "      - {name: ggsn1, address: 127.0.0.41}\n";
  two.insert(two.find(line) + line.size(), "      - {name: ggsn2, address: 127.0.0.42}\n");
  useDocument(two);
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, PdpRequest{}), sgsn());
  ASSERT_EQ(out.size(), 1u);
  const net::Address first = out[0].to;
  Decoded d(out[0].bytes);
  auto next = feed(causeOnly(v1::MessageType::kCreatePdpContextResponse, *d.teidC(), d.sequence(), 199), first);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next[0].to, first) << "the other GGSN of the pool";
  Decoded d2(next[0].bytes);
  EXPECT_EQ(d2.teidC(), d.teidC());
  EXPECT_EQ(header_->counters.creations_failed_over.load(), 1u);
  auto last = feed(causeOnly(v1::MessageType::kCreatePdpContextResponse, *d2.teidC(), d2.sequence(), 199), next[0].to);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].to, sgsn());
  Decoded refused(last[0].bytes);
  EXPECT_EQ(refused.cause(), 204) << "no GGSN left (failover.when_exhausted: remote_peer_not_responding)";
  EXPECT_EQ(refused.teid(), kSgsnTeidC);
  EXPECT_EQ(sessions_.active(), 0u);
}

TEST_F(ProxyV1Test, AGgsnRestartSeenInARecoveryTellsTheSgsnToTearDown) {
  PdpResponse with_recovery;
  with_recovery.recovery = 3;
  Created c = create(PdpRequest{}, with_recovery);
  ASSERT_NE(sessions_.find(c.access_teid), nullptr);
  PdpRequest second;
  second.imsi = "901700000000022";
  second.teid_c = kSgsnTeidC + 1;
  second.sequence = 200;
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, second), sgsn(), 2'000'000'000);
  ASSERT_EQ(out.size(), 1u);
  Decoded d(out[0].bytes);
  PdpResponse restarted;
  restarted.teid = *d.teidC();
  restarted.sequence = d.sequence();
  restarted.recovery = 4;
  restarted.teid_c = kGgsnTeidC + 1;
  feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, restarted), out[0].to, 2'000'000'000);
  egress_.sent.clear();
  proxy_->tick(3'000'000'000);
  std::vector<Decoded> deletions;
  for (const Sent& s : egress_.sent) deletions.emplace_back(s.bytes);
  ASSERT_EQ(deletions.size(), 1u) << "only the context created before the restart";
  EXPECT_EQ(deletions[0].m.messageType(), v1::MessageType::kDeletePdpContextRequest);
  EXPECT_EQ(deletions[0].teid(), kSgsnTeidC);
  EXPECT_EQ(deletions[0].value(v1::IeType::kTeardownInd), (std::vector<uint8_t>{0xff}));
  EXPECT_EQ(deletions[0].value(v1::IeType::kNsapi), (std::vector<uint8_t>{5}));
  EXPECT_EQ(sessions_.find(c.access_teid), nullptr);
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_EQ(header_->counters.restart_sessions_removed.load(), 1u);
  // The SGSN's answer is taken as the answer to the proxy's own request.
  EXPECT_TRUE(feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, c.access_teid, deletions[0].sequence(), 128),
                   sgsn(), 3'100'000'000)
                  .empty());
  EXPECT_EQ(header_->counters.own_requests_answered.load(), 1u);
}

TEST_F(ProxyV1Test, ARulesApnRewriteAndQosCapReachTheGgsnAndTheSgsnGetsItsOwnApnBack) {
  PdpRequest r;
  r.apn = "iot";
  auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, r), sgsn());
  ASSERT_EQ(out.size(), 1u);
  Decoded d(out[0].bytes);
  ASSERT_TRUE(d.ok);
  auto apn = v1::readNth<v1::Apn>(d.m);
  ASSERT_TRUE(apn);
  EXPECT_EQ(apn->text.view(), "iot.operator.example");
  EXPECT_TRUE(v1::checkMandatory(d.m, v1::Sender::kSgsn));
  // IEs stay in ascending type order (TS 29.060 §7.7.0).
  for (std::size_t i = 1; i < d.m.ieCount(); ++i) EXPECT_LE(d.m.ie(i - 1).type, d.m.ie(i).type);
  const auto qos = d.value(v1::IeType::kQosProfile);
  ASSERT_EQ(qos.size(), 13u);
  // 24.008 octets 8 and 9: 256 kbps is 64 + (256 - 64) / 8, 512 kbps 64 + (512 - 64) / 8.
  EXPECT_EQ(qos, (std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f, 0x91, 0x97, 0x58, 0x78, 0xfe, 0x4b, 0x11, 0x40, 0x40}))
      << "maximum bit rates capped, nothing else changed";
  EXPECT_EQ(header_->counters.v1_qos_capped.load(), 1u);
}

TEST_F(ProxyV1Test, APduNotificationReachesTheSgsnOfTheSubscribersContextsOnly) {
  auto notification = [](const std::string& imsi, uint16_t sequence) {
    std::vector<uint8_t> buf(256);
    v1::Builder b(buf);
    b.begin(v1::MessageType::kPduNotificationRequest, 0, sequence);
    v1::Imsi i;
    for (char c : imsi) i.digits.push(c);
    b.add(i);
    b.add(v1::TeidControlPlane{0x61619999});
    b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21, 100, 64, 0, 7});
    v1::Apn a;
    for (char c : std::string("internet")) a.text.push(c);
    b.add(a);
    b.addRaw(133, std::vector<uint8_t>{127, 0, 0, 41});
    buf.resize(b.finish()->size());
    return buf;
  };
  const net::Address ggsn = net::Address::v4(kGgsn1, kPort);
  auto out = feed(notification("901700000000099", 50), ggsn);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, ggsn);
  EXPECT_EQ(Decoded(out[0].bytes).cause(), 194) << "IMSI/IMEI not known: no context tells its SGSN";

  Created c = create();
  out = feed(notification("901700000000011", 51), ggsn);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgsn());
  Decoded n(out[0].bytes);
  EXPECT_EQ(n.teid(), 0u);
  ASSERT_TRUE(n.teidC());
  EXPECT_NE(*n.teidC(), 0x61619999u);
  EXPECT_EQ(n.gsnAddress(0), octets(kProxy));
  auto back = feed(causeOnly(v1::MessageType::kPduNotificationResponse, *n.teidC(), n.sequence(), 128), sgsn());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].to, ggsn);
  EXPECT_EQ(Decoded(back[0].bytes).teid(), 0x61619999u);
  EXPECT_EQ(sessions_.active(), 2u);
  // The MS then refuses: the SGSN's reject reaches the GGSN, and the
  // notification's session ends with it.
  std::vector<uint8_t> buf(128);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kPduNotificationRejectRequest, *n.teidC(), 60);
  b.add(v1::CauseIe{197});
  b.add(v1::TeidControlPlane{kSgsnTeidC + 9});
  b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21});
  v1::Apn a;
  for (char ch : std::string("internet")) a.text.push(ch);
  b.add(a);
  buf.resize(b.finish()->size());
  out = feed(buf, sgsn());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, ggsn);
  Decoded reject(out[0].bytes);
  EXPECT_EQ(reject.teid(), 0x61619999u);
  ASSERT_TRUE(reject.teidC());
  EXPECT_EQ(splitTeid(*reject.teidC()).leg, Leg::kGateway);
  back = feed(causeOnly(v1::MessageType::kPduNotificationRejectResponse, *reject.teidC(), reject.sequence(), 128), ggsn);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Decoded(back[0].bytes).teid(), kSgsnTeidC + 9);
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_NE(sessions_.find(c.access_teid), nullptr);
}

TEST_F(ProxyV1Test, AnUnansweredCreationExpiresAndFreesTheSession) {
  feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, PdpRequest{}), sgsn(), 1'000'000'000);
  EXPECT_EQ(sessions_.active(), 1u);
  for (uint64_t t = 2; t <= 14; ++t) proxy_->tick(t * 1'000'000'000);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.sessions_expired.load(), 1u);
}

TEST_F(ProxyV1Test, TheRecoveryRelayedIsTheGroupsAndAResponseWithTeidZeroIsMatched) {
  PdpResponse r;
  r.recovery = 9;
  Created c = create(PdpRequest{}, r);
  EXPECT_EQ(c.to_sgsn.value(v1::IeType::kRecovery), (std::vector<uint8_t>{1})) << "the group's Recovery";
  auto out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, c.access_teid, 300, 5, true), sgsn());
  ASSERT_EQ(out.size(), 1u);
  // The GGSN lost the context: Non-existent, TEID 0 (TS 29.060 §7.3.6).
  auto back = feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, 0, Decoded(out[0].bytes).sequence(), 192),
                   out[0].to);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(Decoded(back[0].bytes).sequence(), 300);
  EXPECT_EQ(sessions_.find(c.access_teid), nullptr) << "gone there, gone here";
}

// -- metrics (common/group/worker_metrics.h; the GTPv2 side is worker_metrics_test.cc)

constexpr unsigned kV1 = 0;  // metricVersion(1)
constexpr uint8_t kAccessLeg = static_cast<uint8_t>(Leg::kAccess);
constexpr uint8_t kGatewayLeg = static_cast<uint8_t>(Leg::kGateway);
constexpr uint8_t v1Type(v1::MessageType t) { return static_cast<uint8_t>(t); }

class ProxyV1MetricsTest : public ProxyV1Test {
 protected:
  const WorkerMetricsShm& m() const { return header_->metrics; }
  uint64_t received(uint8_t leg, v1::MessageType type) const { return m().received[kV1][leg][v1Type(type)].load(); }
  uint64_t sent(uint8_t leg, v1::MessageType type) const { return m().sent[kV1][leg][v1Type(type)].load(); }
  const GatewayMetricsShm& ggsn1() const { return m().gateways[routing_->findGateway("ggsn1").value()]; }

  // A Create PDP Context Request at `now` (the forwarder's reception
  // `receive_ns`); what went to the GGSN.
  Sent request(uint64_t now, uint64_t receive_ns, PdpRequest r = {}) {
    auto out = feed(pdpRequest(v1::MessageType::kCreatePdpContextRequest, r), sgsn(), now, receive_ns);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Sent{} : out[0];
  }
  // The GGSN answers `to_ggsn` with `cause` at `now`.
  std::vector<Sent> answer(const Sent& to_ggsn, uint8_t cause, uint64_t now, uint64_t receive_ns = 0) {
    Decoded d(to_ggsn.bytes);
    PdpResponse r;
    r.cause = cause;
    r.teid = d.teidC().value_or(0);
    r.sequence = d.sequence();
    return feed(pdpResponse(v1::MessageType::kCreatePdpContextResponse, r), to_ggsn.to, now, receive_ns);
  }
};

TEST_F(ProxyV1MetricsTest, ACreatePdpContextExchangeIsCountedByLegTypeCauseRuleAndGgsn) {
  EXPECT_EQ(m().routing_hash.load(), routing_->contentHash()) << "published again after the fixture's reload";
  EXPECT_EQ(m().gateways[2].creations_sent.load(), 0u);
  const Sent to_ggsn = request(1'000'000'000, 1234);
  EXPECT_EQ(to_ggsn.receive_ns, 1234u);
  EXPECT_EQ(m().sessions_by_version[kV1].load(), 1u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 1u);
  auto to_sgsn = answer(to_ggsn, 128, 1'040'000'000, 5678);
  ASSERT_EQ(to_sgsn.size(), 1u);
  EXPECT_EQ(to_sgsn[0].receive_ns, 5678u);

  EXPECT_EQ(received(kAccessLeg, v1::MessageType::kCreatePdpContextRequest), 1u);
  EXPECT_EQ(sent(kGatewayLeg, v1::MessageType::kCreatePdpContextRequest), 1u);
  EXPECT_EQ(received(kGatewayLeg, v1::MessageType::kCreatePdpContextResponse), 1u);
  EXPECT_EQ(sent(kAccessLeg, v1::MessageType::kCreatePdpContextResponse), 1u);
  EXPECT_EQ(m().received[1][kAccessLeg][32].load(), 0u) << "nothing counted as GTPv2";
  EXPECT_EQ(m().creation_causes[kV1][128].load(), 1u);
  EXPECT_EQ(m().answers[kV1][v1Type(v1::MessageType::kCreatePdpContextResponse)][0].load(), 1u);
  EXPECT_EQ(m().rule_sessions[routing_->findRule("gn-default").value()].load(), 1u);
  EXPECT_EQ(ggsn1().sessions_active.load(), 1u);
  EXPECT_EQ(ggsn1().creations_sent.load(), 1u);
  EXPECT_EQ(ggsn1().creations_accepted.load(), 1u);
  EXPECT_EQ(ggsn1().requests_sent.load(), 1u);
  EXPECT_EQ(ggsn1().response_time.count(), 1u);
  EXPECT_EQ(ggsn1().response_time.sumNs(), 40'000'000u);
  EXPECT_EQ(m().sessions_by_version[kV1].load(), 1u);
  EXPECT_EQ(m().sessions_by_version[1].load(), 0u);

  // Deleted from the SGSN: the gauges drop, the answer is counted.
  const uint32_t access_teid = Decoded(to_sgsn[0].bytes).teidC().value();
  const uint32_t gateway_teid = Decoded(to_ggsn.bytes).teidC().value();
  auto del = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, access_teid, 101, 5, true), sgsn(),
                  2'000'000'000, 91);
  ASSERT_EQ(del.size(), 1u);
  EXPECT_EQ(del[0].receive_ns, 91u);
  auto back = feed(causeOnly(v1::MessageType::kDeletePdpContextResponse, gateway_teid, Decoded(del[0].bytes).sequence(),
                             128),
                   del[0].to, 2'000'000'000, 92);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].receive_ns, 92u);
  EXPECT_EQ(ggsn1().sessions_active.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV1].load(), 0u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 0u);
  EXPECT_EQ(ggsn1().requests_sent.load(), 2u);
  EXPECT_EQ(m().answers[kV1][v1Type(v1::MessageType::kDeletePdpContextResponse)][0].load(), 1u);
  EXPECT_EQ(sent(kAccessLeg, v1::MessageType::kDeletePdpContextResponse), 1u);
}

TEST_F(ProxyV1MetricsTest, AGgsnsRejectionAndTheProxysOwnRefusalAreCountedApart) {
  // try_another: [199], but pool gn has no other GGSN: the proxy answers itself.
  const Sent to_ggsn = request(1'000'000'000, 10);
  auto to_sgsn = answer(to_ggsn, 199, 1'000'000'000, 20);
  ASSERT_EQ(to_sgsn.size(), 1u);
  EXPECT_EQ(Decoded(to_sgsn[0].bytes).cause(), 204);
  EXPECT_EQ(to_sgsn[0].receive_ns, 20u) << "the refusal answers the GGSN's rejection";
  EXPECT_EQ(m().creation_causes[kV1][199].load(), 1u);
  EXPECT_EQ(ggsn1().creations_rejected.load(), 1u);
  EXPECT_EQ(ggsn1().creation_rejections[rejectionSlot(1, 199)].load(), 1u);
  EXPECT_EQ(rejectionSlot(1, 199), 7u);
  EXPECT_EQ(m().refusal_causes[kV1][204].load(), 1u);
  EXPECT_EQ(m().answers[kV1][v1Type(v1::MessageType::kCreatePdpContextResponse)][1].load(), 0u)
      << "the GGSN's answer was not relayed";
  EXPECT_EQ(ggsn1().sessions_active.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV1].load(), 0u);

  // A TEID nobody holds: Non-existent, the proxy's.
  auto out = feed(simpleV1(v1::MessageType::kDeletePdpContextRequest, 0x00012345, 9, 5, true), sgsn(),
                  1'000'000'000, 30);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].receive_ns, 30u);
  EXPECT_EQ(m().refusal_causes[kV1][192].load(), 1u);
}

TEST_F(ProxyV1MetricsTest, AnUnansweredCreationTimesOutForItsGgsn) {
  request(1'000'000'000, 0);
  EXPECT_EQ(ggsn1().sessions_active.load(), 1u);
  for (uint64_t t = 2; t <= 14; ++t) proxy_->tick(t * 1'000'000'000);  // response_timeout_ms: 0, the lifetime: 9 s
  EXPECT_EQ(m().requests_timed_out[kV1][v1Type(v1::MessageType::kCreatePdpContextRequest)].load(), 1u);
  EXPECT_EQ(ggsn1().creations_timed_out.load(), 1u);
  EXPECT_EQ(ggsn1().sessions_active.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV1].load(), 0u);
  EXPECT_EQ(ggsn1().response_time.count(), 0u);
}

}  // namespace
}  // namespace gtpcp::worker::test
