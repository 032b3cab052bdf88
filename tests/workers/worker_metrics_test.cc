// The worker's metrics table (common/group/worker_metrics.h, filled by
// workers/lib): GTPv2-C messages by leg and type, causes, transactions'
// outcomes, the gauges of sessions by version and by gateway, the gateways'
// and rules' figures and how a routing reload carries them over by name
// (WKM-R1), and the reception time the egress records carry back to the
// forwarder. The GTPv1-C side is in proxy_v1_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tests/workers/proxy_fixture.h"

namespace gtpcp::worker::test {
namespace {

constexpr unsigned kV2 = 1;  // metricVersion(2)
constexpr uint8_t kAccess = static_cast<uint8_t>(Leg::kAccess);
constexpr uint8_t kGateway = static_cast<uint8_t>(Leg::kGateway);
constexpr uint8_t t(MessageType type) { return static_cast<uint8_t>(type); }

// kRouting's gateways and rules in another order, pgw9 and rule corp new.
constexpr const char* kReordered = R"(
version: 1
pools:
  corp:
    gateways:
      - {name: pgw9, address: 127.0.0.29}
  ims:
    gateways:
      - {name: pgw3, address: 127.0.0.23}
  internet:
    gateways:
      - {name: pgw2, address: 127.0.0.22, weight: 1}
      - {name: pgw1, address: 127.0.0.21, weight: 3}
rules:
  - name: corp
    match: {apn: [corp]}
    pool: corp
  - name: ims
    match: {apn: [ims]}
    pool: ims
  - name: default
    pool: internet
)";

class WorkerMetricsTest : public ProxyTest {
 protected:
  const WorkerMetricsShm& m() const { return header_->metrics; }
  uint64_t received(uint8_t leg, MessageType type) const { return m().received[kV2][leg][t(type)].load(); }
  uint64_t sent(uint8_t leg, MessageType type) const { return m().sent[kV2][leg][t(type)].load(); }
  // Gateway `name`'s entry, by its index in the document in force.
  const GatewayMetricsShm& gateway(const std::string& name) const {
    return m().gateways[routing_->findGateway(name).value()];
  }
  uint64_t ruleSessions(const std::string& name) const {
    return m().rule_sessions[routing_->findRule(name).value()].load();
  }
  static uint64_t total(const metrics::Counter (&table)[kMetricVersions][kMetricLegs][256]) {
    uint64_t n = 0;
    for (const auto& version : table)
      for (const auto& leg : version)
        for (const metrics::Counter& c : leg) n += c.load();
    return n;
  }
  net::Address sgw() const { return net::Address::v4(kSgw, kPort); }

  // A Create Session Request on apn `apn` from the SGW at `now`, received
  // by the forwarder at `receive_ns`; where it went.
  Sent request(const std::string& imsi, const std::string& apn, uint32_t n, uint64_t now = 1'000'000'000,
               uint64_t receive_ns = 0) {
    auto out = feed(createSessionRequest(imsi, apn, n, n, kSgw), sgw(), now, receive_ns);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Sent{} : out[0];
  }
  // The gateway that got `to_pgw` answers it with `cause` at `now`.
  std::vector<Sent> answer(const Sent& to_pgw, uint8_t cause, uint64_t now, uint64_t receive_ns = 0) {
    Message m = decode(to_pgw.bytes);
    return feed(createSessionResponse(readFirst<FTeid>(m, 0)->teid, m.header().sequence_number, cause, 0x2222,
                                      to_pgw.to.ipv4()),
                to_pgw.to, now, receive_ns);
  }

  // Replaces the document with `text` (the one before kept alive).
  void useDocument(const std::string& text) {
    auto routing = config::parseRoutingDocument(text, "routing.yaml");
    ASSERT_TRUE(routing) << routing.error().toString();
    next_routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
    proxy_->setRouting(*next_routing_);
    routing_.swap(next_routing_);
  }

  // A worker started again on the same segment with document `routing`.
  void restartWith(const config::RoutingTable& routing) {
    proxy_.reset();
    ProxySettings settings;
    settings.sockets = group::SocketPlan::make(kProxy, std::nullopt, kProxy, std::nullopt, kPort);
    proxy_ = std::make_unique<Proxy>(settings, *header_, sessions_, transactions_, routing, egress_);
  }
};

TEST_F(WorkerMetricsTest, ACreateSessionExchangeIsCountedByLegTypeCauseRuleAndGateway) {
  EXPECT_EQ(m().routing_hash.load(), routing_->contentHash()) << "published at start";
  const Sent to_pgw = request("001010000000501", "ims", 0x501, 1'000'000'000, 777);
  EXPECT_EQ(to_pgw.to, net::Address::v4(kPgw3, kPort));
  EXPECT_EQ(to_pgw.receive_ns, 777u) << "the relayed request carries its datagram's reception";
  EXPECT_EQ(gateway("pgw3").sessions_active.load(), 1u) << "a session being created is held";
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 1u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 1u);

  auto to_sgw = answer(to_pgw, 16, 1'250'000'000, 888);
  ASSERT_EQ(to_sgw.size(), 1u);
  EXPECT_EQ(to_sgw[0].receive_ns, 888u);

  EXPECT_EQ(received(kAccess, MessageType::kCreateSessionRequest), 1u);
  EXPECT_EQ(sent(kGateway, MessageType::kCreateSessionRequest), 1u);
  EXPECT_EQ(received(kGateway, MessageType::kCreateSessionResponse), 1u);
  EXPECT_EQ(sent(kAccess, MessageType::kCreateSessionResponse), 1u);
  EXPECT_EQ(total(m().received), 2u);
  EXPECT_EQ(total(m().sent), 2u);
  EXPECT_EQ(total(m().received), header_->counters.datagrams_received.load());
  EXPECT_EQ(total(m().sent), header_->counters.datagrams_sent.load());
  EXPECT_EQ(m().creation_causes[kV2][16].load(), 1u);
  EXPECT_EQ(m().answers[kV2][t(MessageType::kCreateSessionResponse)][0].load(), 1u);
  EXPECT_EQ(m().answers[kV2][t(MessageType::kCreateSessionResponse)][1].load(), 0u);
  EXPECT_EQ(ruleSessions("ims"), 1u);
  EXPECT_EQ(ruleSessions("default"), 0u);

  const GatewayMetricsShm& g = gateway("pgw3");
  EXPECT_EQ(g.sessions_active.load(), 1u);
  EXPECT_EQ(g.creations_sent.load(), 1u);
  EXPECT_EQ(g.creations_accepted.load(), 1u);
  EXPECT_EQ(g.creations_rejected.load(), 0u);
  EXPECT_EQ(g.requests_sent.load(), 1u);
  EXPECT_EQ(g.response_time.count(), 1u);
  EXPECT_EQ(g.response_time.sumNs(), 250'000'000u);
  EXPECT_EQ(g.response_time.bucket(13), 1u) << "the bucket of (100 ms, 250 ms]";
  EXPECT_EQ(gateway("pgw1").creations_sent.load() + gateway("pgw2").creations_sent.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 1u);
  EXPECT_EQ(m().sessions_by_version[0].load(), 0u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 1u);
}

TEST_F(WorkerMetricsTest, ARejectedCreationCountsTheGatewaysCauseAndLeavesNoSession) {
  const Sent to_pgw = request("001010000000502", "ims", 0x502);
  auto to_sgw = answer(to_pgw, 73, 1'100'000'000);
  ASSERT_EQ(to_sgw.size(), 1u);
  const GatewayMetricsShm& g = gateway("pgw3");
  EXPECT_EQ(g.creations_rejected.load(), 1u);
  EXPECT_EQ(g.creations_accepted.load(), 0u);
  EXPECT_EQ(g.creation_rejections[rejectionSlot(2, 73)].load(), 1u);
  EXPECT_EQ(rejectionSlot(2, 73), 9u);
  EXPECT_EQ(g.response_time.count(), 1u);
  EXPECT_EQ(m().creation_causes[kV2][73].load(), 1u);
  EXPECT_EQ(m().answers[kV2][t(MessageType::kCreateSessionResponse)][1].load(), 1u);
  EXPECT_EQ(m().refusal_causes[kV2][73].load(), 0u) << "the gateway's refusal, relayed: not the proxy's";
  EXPECT_EQ(ruleSessions("ims"), 0u);
  EXPECT_EQ(g.sessions_active.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 0u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 0u);
}

TEST_F(WorkerMetricsTest, RequestsNoGatewayAnswersTimeOutByTypeAndTheCreationsGateway) {
  useRouting("failover: {response_timeout_ms: 0}\n");  // only the lifetime (9 s) runs out
  const Attached a = attach("001010000000503");
  const std::string attached_to = a.pgw == net::Address::v4(kPgw1, kPort) ? "pgw1" : "pgw2";
  auto mbr = feed(simple(MessageType::kModifyBearerRequest, a.access_teid, 50), sgw(), 1'000'000'000);
  ASSERT_EQ(mbr.size(), 1u);
  request("001010000000504", "ims", 0x504);
  EXPECT_EQ(gateway(attached_to).requests_sent.load(), 2u) << "the creation and the Modify Bearer Request";
  for (uint64_t s = 10; s <= 16; ++s) proxy_->tick(s * 1'000'000'000);
  EXPECT_EQ(header_->counters.transactions_expired.load(), 2u);
  EXPECT_EQ(m().requests_timed_out[kV2][t(MessageType::kCreateSessionRequest)].load(), 1u);
  EXPECT_EQ(m().requests_timed_out[kV2][t(MessageType::kModifyBearerRequest)].load(), 1u);
  EXPECT_EQ(gateway("pgw3").creations_timed_out.load(), 1u);
  EXPECT_EQ(gateway("pgw3").sessions_active.load(), 0u);
  EXPECT_EQ(gateway(attached_to).creations_timed_out.load(), 0u) << "it answered its creation";
  EXPECT_EQ(gateway(attached_to).sessions_active.load(), 1u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 1u);
}

TEST_F(WorkerMetricsTest, ASilentGatewaysCreationGoesToTheNextWhoseResponseTimeRunsFromItsSend) {
  const Sent first = request("001010000000505", "internet", 0x505, 1'000'000'000, 111);
  egress_.sent.clear();
  proxy_->tick(3'100'000'000);  // past response_timeout_ms (2000)
  ASSERT_EQ(egress_.sent.size(), 1u);
  const Sent second = egress_.sent[0];
  EXPECT_EQ(second.receive_ns, 0u) << "sent by a timer, for no datagram";
  const std::string a = first.to == net::Address::v4(kPgw1, kPort) ? "pgw1" : "pgw2";
  const std::string b = a == "pgw1" ? "pgw2" : "pgw1";
  EXPECT_EQ(gateway(a).creations_timed_out.load(), 1u);
  EXPECT_EQ(gateway(a).creations_sent.load(), 1u);
  EXPECT_EQ(gateway(b).creations_sent.load(), 1u);
  EXPECT_EQ(gateway(b).requests_sent.load(), 1u);
  EXPECT_EQ(gateway(a).sessions_active.load(), 0u) << "the session follows its creation";
  EXPECT_EQ(gateway(b).sessions_active.load(), 1u);
  EXPECT_EQ(sent(kGateway, MessageType::kCreateSessionRequest), 2u);
  ASSERT_EQ(answer(second, 16, 3'600'000'000).size(), 1u);
  EXPECT_EQ(gateway(b).creations_accepted.load(), 1u);
  EXPECT_EQ(gateway(b).response_time.sumNs(), 500'000'000u) << "from the failover, not the first send";
  EXPECT_EQ(gateway(a).response_time.count(), 0u);
  EXPECT_EQ(ruleSessions("default"), 1u);
}

TEST_F(WorkerMetricsTest, CreationsNoGatewayIsLeftForAreTheProxysRefusals) {
  request("001010000000506", "ims", 0x506);
  egress_.sent.clear();
  proxy_->tick(3'100'000'000);  // pgw3 silent, and no other gateway in pool ims
  ASSERT_EQ(egress_.sent.size(), 1u);
  EXPECT_EQ(egress_.sent[0].to, sgw());
  EXPECT_EQ(egress_.sent[0].receive_ns, 0u);
  EXPECT_EQ(m().refusal_causes[kV2][static_cast<uint8_t>(Cause::kRemotePeerNotResponding)].load(), 1u);
  EXPECT_EQ(sent(kAccess, MessageType::kCreateSessionResponse), 1u);
  EXPECT_EQ(gateway("pgw3").creations_timed_out.load(), 1u);
  EXPECT_EQ(gateway("pgw3").sessions_active.load(), 0u);
  EXPECT_EQ(m().answers[kV2][t(MessageType::kCreateSessionResponse)][1].load(), 0u) << "nothing relayed";
}

TEST_F(WorkerMetricsTest, RefusalsAreCountedByCauseAndCarryTheirDatagramsReception) {
  useDocument(R"(
version: 1
pools:
  ims:
    gateways:
      - {name: pgw3, address: 127.0.0.23}
rules:
  - name: ims
    match: {apn: [ims]}
    pool: ims
)");
  auto out = feed(createSessionRequest("001010000000507", "internet", 0x507, 507, kSgw), sgw(), 1'000'000'000, 4242);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgw());
  EXPECT_EQ(out[0].receive_ns, 4242u);
  EXPECT_EQ(header_->counters.no_route.load(), 1u);
  EXPECT_EQ(m().refusal_causes[kV2][static_cast<uint8_t>(Cause::kNoResourcesAvailable)].load(), 1u);
  EXPECT_EQ(sent(kAccess, MessageType::kCreateSessionResponse), 1u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 0u);

  // A TEID the worker does not hold: Context Not Found, to the leg it came from.
  const uint32_t unknown = makeTeid(0, 9, Leg::kAccess, kFirstGeneration);
  out = feed(simple(MessageType::kModifyBearerRequest, unknown, 60), sgw(), 1'000'000'000, 5151);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].receive_ns, 5151u);
  EXPECT_EQ(m().refusal_causes[kV2][static_cast<uint8_t>(Cause::kContextNotFound)].load(), 1u);
  EXPECT_EQ(received(kAccess, MessageType::kModifyBearerRequest), 1u);
  EXPECT_EQ(sent(kAccess, MessageType::kModifyBearerResponse), 1u);
}

TEST_F(WorkerMetricsTest, ADeletionDropsTheGaugesAndItsAnswerIsCounted) {
  const Sent to_pgw = request("001010000000508", "ims", 0x508);
  ASSERT_EQ(answer(to_pgw, 16, 1'000'000'000).size(), 1u);
  const uint32_t access_teid = readFirst<FTeid>(decode(egress_.sent[0].bytes), 1)->teid;
  auto dsr = feed(simple(MessageType::kDeleteSessionRequest, access_teid, 70), sgw(), 2'000'000'000, 31);
  ASSERT_EQ(dsr.size(), 1u);
  EXPECT_EQ(dsr[0].receive_ns, 31u);
  const uint32_t gateway_teid = readFirst<FTeid>(decode(to_pgw.bytes), 0)->teid;  // the proxy's, toward pgw3
  auto back = feed(simple(MessageType::kDeleteSessionResponse, gateway_teid, decode(dsr[0].bytes).header().sequence_number, 16),
                   dsr[0].to, 2'010'000'000, 32);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].receive_ns, 32u);
  EXPECT_EQ(header_->counters.sessions_deleted.load(), 1u);
  const GatewayMetricsShm& g = gateway("pgw3");
  EXPECT_EQ(g.sessions_active.load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 0u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 0u);
  EXPECT_EQ(g.requests_sent.load(), 2u);
  EXPECT_EQ(g.creations_sent.load(), 1u) << "a deletion is no creation";
  EXPECT_EQ(g.response_time.count(), 2u);
  EXPECT_EQ(g.response_time.sumNs(), 10'000'000u);
  EXPECT_EQ(received(kAccess, MessageType::kDeleteSessionRequest), 1u);
  EXPECT_EQ(sent(kGateway, MessageType::kDeleteSessionRequest), 1u);
  EXPECT_EQ(received(kGateway, MessageType::kDeleteSessionResponse), 1u);
  EXPECT_EQ(sent(kAccess, MessageType::kDeleteSessionResponse), 1u);
  EXPECT_EQ(m().answers[kV2][t(MessageType::kDeleteSessionResponse)][0].load(), 1u);
  EXPECT_EQ(ruleSessions("ims"), 1u) << "sessions created, not held";
}

TEST_F(WorkerMetricsTest, AnswersFromTheCacheCarryTheRetransmissionsReceptionAndOwnRequestsNone) {
  const Sent to_pgw = request("001010000000509", "ims", 0x509);
  ASSERT_EQ(answer(to_pgw, 16, 1'000'000'000).size(), 1u);
  auto again = feed(createSessionRequest("001010000000509", "ims", 0x509, 0x509, kSgw), sgw(), 1'500'000'000, 6060);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].to, sgw()) << "answered from the cache";
  EXPECT_EQ(again[0].receive_ns, 6060u);
  EXPECT_EQ(sent(kAccess, MessageType::kCreateSessionResponse), 2u);
  EXPECT_EQ(received(kAccess, MessageType::kCreateSessionRequest), 2u);
  EXPECT_EQ(gateway("pgw3").creations_sent.load(), 1u) << "a retransmission answered here goes nowhere";
  EXPECT_EQ(m().retransmissions[kV2][t(MessageType::kCreateSessionRequest)][1].load(), 1u) << "replayed";
  EXPECT_EQ(m().retransmissions[kV2][t(MessageType::kCreateSessionRequest)][0].load(), 0u);

  // An accepted answer to no creation of this worker: the proxy asks its
  // gateway to delete the session, a request of its own while handling the
  // answer.
  auto orphan = feed(createSessionResponse(0, 4242, 16, 0x7777, kPgw1), net::Address::v4(kPgw1, kPort),
                     1'600'000'000, 7070);
  ASSERT_EQ(orphan.size(), 1u);
  EXPECT_EQ(decode(orphan[0].bytes).messageType(), MessageType::kDeleteSessionRequest);
  EXPECT_EQ(orphan[0].receive_ns, 0u) << "the proxy's own request";
  EXPECT_EQ(received(kGateway, MessageType::kCreateSessionResponse), 2u) << "TEID 0: the leg of a gateway's host";
  EXPECT_EQ(sent(kGateway, MessageType::kDeleteSessionRequest), 1u);
  EXPECT_EQ(gateway("pgw1").requests_sent.load(), 0u) << "forwarded requests only";
}

TEST_F(WorkerMetricsTest, AReloadCarriesEachGatewaysAndRulesFiguresOverByName) {
  const Sent ims = request("001010000000510", "ims", 0x510);
  ASSERT_EQ(answer(ims, 16, 1'200'000'000).size(), 1u);
  const Sent web = request("001010000000511", "internet", 0x511);
  ASSERT_EQ(answer(web, 16, 1'000'000'000).size(), 1u);
  const std::string web_gateway = web.to == net::Address::v4(kPgw1, kPort) ? "pgw1" : "pgw2";
  const uint64_t before_hash = routing_->contentHash();
  EXPECT_EQ(m().routing_hash.load(), before_hash);

  useDocument(kReordered);
  EXPECT_NE(routing_->contentHash(), before_hash);
  EXPECT_EQ(m().routing_hash.load(), routing_->contentHash()) << "published again once carried over";
  EXPECT_EQ(routing_->findGateway("pgw3"), 1u);
  const GatewayMetricsShm& g3 = gateway("pgw3");
  EXPECT_EQ(g3.sessions_active.load(), 1u);
  EXPECT_EQ(g3.creations_sent.load(), 1u);
  EXPECT_EQ(g3.creations_accepted.load(), 1u);
  EXPECT_EQ(g3.requests_sent.load(), 1u);
  EXPECT_EQ(g3.response_time.count(), 1u);
  EXPECT_EQ(g3.response_time.sumNs(), 200'000'000u);
  EXPECT_EQ(gateway(web_gateway).sessions_active.load(), 1u);
  EXPECT_EQ(gateway(web_gateway).creations_accepted.load(), 1u);
  const std::string idle = web_gateway == "pgw1" ? "pgw2" : "pgw1";
  EXPECT_EQ(gateway(idle).creations_sent.load(), 0u);
  EXPECT_EQ(gateway(idle).sessions_active.load(), 0u);
  EXPECT_EQ(gateway("pgw9").creations_sent.load(), 0u) << "new: nothing yet";
  EXPECT_EQ(gateway("pgw9").sessions_active.load(), 0u);
  EXPECT_EQ(ruleSessions("corp"), 0u);
  EXPECT_EQ(ruleSessions("ims"), 1u);
  EXPECT_EQ(ruleSessions("default"), 1u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 2u);

  // New figures land at the new indexes.
  const Sent more = request("001010000000512", "ims", 0x512);
  ASSERT_EQ(answer(more, 16, 1'000'000'000).size(), 1u);
  EXPECT_EQ(gateway("pgw3").creations_sent.load(), 2u);
  EXPECT_EQ(gateway("pgw3").sessions_active.load(), 2u);
  EXPECT_EQ(ruleSessions("ims"), 2u);

  // Without pgw3 and its rule: their figures go, their sessions stay held
  // outside every gateway.
  useDocument("version: 1\npools:\n  internet:\n    gateways:\n      - {name: " + web_gateway + ", address: " +
              (web_gateway == "pgw1" ? "127.0.0.21" : "127.0.0.22") + "}\nrules:\n  - {name: default, pool: internet}\n");
  EXPECT_EQ(m().routing_hash.load(), routing_->contentHash());
  EXPECT_EQ(gateway(web_gateway).sessions_active.load(), 1u);
  EXPECT_EQ(gateway(web_gateway).creations_accepted.load(), 1u);
  EXPECT_EQ(ruleSessions("default"), 1u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(m().gateways[i].creations_sent.load(), 0u) << "entry " << i << ": no gateway of the document";
    EXPECT_EQ(m().gateways[i].sessions_active.load(), 0u) << "entry " << i;
    EXPECT_EQ(m().gateways[i].response_time.count(), 0u) << "entry " << i;
    EXPECT_EQ(m().rule_sessions[i].load(), 0u) << "rule entry " << i;
  }
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 3u);
  EXPECT_EQ(header_->counters.sessions_unrouted.load(), 2u);
}

TEST_F(WorkerMetricsTest, AWorkerThatAdoptsItsSegmentKeepsItsDocumentsFiguresAndCountsTheGaugesAgain) {
  const Sent to_pgw = request("001010000000513", "ims", 0x513);
  ASSERT_EQ(answer(to_pgw, 16, 1'000'000'000).size(), 1u);
  const uint16_t pgw3 = routing_->findGateway("pgw3").value();
  header_->metrics.gateways[pgw3].sessions_active.set(99);  // whatever the predecessor left
  header_->metrics.sessions_by_version[kV2].set(99);
  restartWith(*routing_);
  EXPECT_EQ(m().routing_hash.load(), routing_->contentHash());
  EXPECT_EQ(m().gateways[pgw3].sessions_active.load(), 1u) << "counted from the sessions held";
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 1u);
  EXPECT_EQ(m().gateways[pgw3].creations_sent.load(), 1u) << "the same document: kept";
  EXPECT_EQ(m().received[kV2][kAccess][t(MessageType::kCreateSessionRequest)].load(), 1u)
      << "messages are no document's: kept";

  // Started with another document: nothing says which gateway an entry was.
  auto other = config::parseRoutingDocument(kReordered, "routing.yaml");
  ASSERT_TRUE(other);
  const config::RoutingTable reordered = std::move(*other);
  restartWith(reordered);
  EXPECT_EQ(m().routing_hash.load(), reordered.contentHash());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(m().gateways[i].creations_sent.load(), 0u) << "entry " << i;
  EXPECT_EQ(m().rule_sessions[0].load() + m().rule_sessions[1].load() + m().rule_sessions[2].load(), 0u);
  EXPECT_EQ(m().sessions_by_version[kV2].load(), 1u);
  restartWith(*routing_);  // before `reordered` goes
}

}  // namespace
}  // namespace gtpcp::worker::test
