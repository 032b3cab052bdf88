// The SGSN and GGSN engines (GTPv1-C) wired together in memory, with a fake
// clock and a network without a proxy (--relay): every procedure completes
// and both sides count the GGSN's own procedures alike, the SGSN retransmits
// the same bytes with a 16-bit sequence number, both sides answer a repeat
// from their cache, IPv6 nodes give 16-octet GSN Addresses, and a direct run
// taken for a proxied one shows the proxy's absence as mismatches.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "tests/peer/engine_harness.h"
#include "tools/peer/ggsn.h"
#include "tools/peer/sgsn.h"

namespace gtpcp::peer {
namespace {

using gtp::v1::MessageType;
using testing::FakeOutbox;
using testing::kMs;
using testing::Sent;

constexpr uint32_t kSgsn0 = 0x7f00000b;  // 127.0.0.11, SGSN k is .11 + k
constexpr uint32_t kGgsn0 = 0x7f000015;  // 127.0.0.21

// SGSN nodes on sockets 0..S-1, the GGSN on socket S, talking directly: the
// SGSNs' requests (to --proxy, the GGSN's address) reach the GGSN from
// (SGSN k, 2123); the GGSN's answers and its own requests (to the SGSN
// Address for signalling, port 2123) reach SGSN k from (GGSN, 2123).
class V1Harness {
 public:
  V1Harness(uint32_t subscribers, uint32_t sgsns, const std::function<void(SgsnConfig&)>& tweak = {},
            const std::function<void(GgsnConfig&)>& ggsn_tweak = {}) {
    SgsnConfig s;
    for (uint32_t k = 0; k < sgsns; ++k)
      s.nodes.push_back(SgsnNodeConfig{IpAddress(kSgsn0 + k), k, Endpoint{kGgsn0, kGtpcPort}});
    s.relay = true;
    s.ids = testing::ids(subscribers);
    s.modifies = 2;
    s.cycles = 1;
    s.t3_ns = 100 * kMs;
    s.n3 = 2;
    s.sequence_seed = 1000;
    s.local_ggsns = {kGgsn0};
    if (tweak) tweak(s);
    sgsn_nodes_ = sgsns;
    GgsnConfig g;
    GgsnNodeConfig n;
    n.addr = kGgsn0;
    n.proxy_gateway = kGgsn0;
    n.socket = sgsns;
    g.nodes.push_back(n);
    testing::relayGateway(g, s, subscribers);
    g.modifies = s.modifies;
    g.secondaries = s.secondaries;
    g.network_initiated = s.network_initiated;
    if (ggsn_tweak) ggsn_tweak(g);
    sgsn = std::make_unique<SgsnEngine>(s, out, sgsn_stats, mismatches, malformed);
    ggsn = std::make_unique<GgsnEngine>(g, out, ggsn_stats, mismatches, malformed);
  }

  void pump(int64_t now) {
    testing::pumpAll(out, [&](const Sent& d) { deliver(d, now); });
  }
  void deliver(const Sent& d, int64_t now) {
    if (d.socket < sgsn_nodes_) {
      ggsn->onDatagram(0, Endpoint{IpAddress(kSgsn0 + d.socket), kGtpcPort}, d.bytes, now);
    } else {
      sgsn->onDatagram(d.to.addr.v4() - kSgsn0, Endpoint{kGgsn0, kGtpcPort}, d.bytes, now);
    }
  }
  // Runs the lifecycle to its end (or `turns` ms), `tokens` a millisecond.
  void run(uint64_t tokens, int turns = 5000) {
    sgsn->setPhase(AccessPhase::kLifecycle, true);
    for (int turn = 0; turn < turns && !sgsn->phaseExhausted(); ++turn) {
      sgsn->issue(tokens, clock);
      pump(clock);
      clock += kMs;
      sgsn->onTimers(clock);
      ggsn->onTimers(clock);
      pump(clock);
    }
  }

  FakeOutbox out;
  SgsnStats sgsn_stats;
  std::vector<GgsnNodeStats> ggsn_stats;
  MismatchCounters mismatches;
  MalformedCounters malformed;
  std::unique_ptr<SgsnEngine> sgsn;
  std::unique_ptr<GgsnEngine> ggsn;
  int64_t clock = 0;

 private:
  uint32_t sgsn_nodes_ = 1;
};

std::size_t at(V1Txn t) { return static_cast<std::size_t>(t); }
std::size_t at(Procedure p) { return static_cast<std::size_t>(p); }

gtp::v1::Message decoded(const std::vector<uint8_t>& bytes) {
  gtp::v1::Message m;
  EXPECT_TRUE(m.decode(bytes).has_value());
  return m;
}

TEST(V1Engines, LifecycleWithSecondariesCompletesWithoutMismatch) {
  V1Harness h(30, 2, [](SgsnConfig& s) { s.secondaries = 2; });
  h.run(5);
  EXPECT_TRUE(h.sgsn->phaseExhausted());
  const auto& s = h.sgsn_stats;
  EXPECT_EQ(s.completed[at(V1Txn::kCreatePdp)], 30u);
  EXPECT_EQ(s.completed[at(V1Txn::kCreateSecondary)], 60u);
  EXPECT_EQ(s.completed[at(V1Txn::kUpdatePdp)], 60u);
  EXPECT_EQ(s.completed[at(V1Txn::kDeleteSecondary)], 60u);
  EXPECT_EQ(s.completed[at(V1Txn::kDeletePdp)], 30u);
  EXPECT_EQ(s.causes[128], 240u);
  EXPECT_EQ(s.secondaries_created, 60u);
  EXPECT_EQ(s.secondaries_deleted, 60u);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.malformed.total, 0u);
  EXPECT_EQ(h.sgsn->sessionsUp(), 0u);
  EXPECT_EQ(h.sgsn->outstanding(), 0u);
  const auto& g = h.ggsn_stats[0];
  EXPECT_EQ(g.sessions_created, 30u);
  EXPECT_EQ(g.sessions_deleted, 30u);
  EXPECT_EQ(g.secondaries_created, 60u);
  EXPECT_EQ(g.sessions_up, 0u);
  EXPECT_EQ(g.contexts_up, 0u);
  EXPECT_EQ(g.requests[at(V1Txn::kCreateSecondary)], 60u);
  EXPECT_EQ(g.requests[at(V1Txn::kDeleteSecondary)], 60u);
  ASSERT_EQ(s.split.size, 1u);
  EXPECT_EQ(s.split.addr[0], IpAddress(kGgsn0));
}

TEST(V1Engines, NetworkInitiatedProceduresAreCountedAlikeOnBothSides) {
  V1Harness h(200, 2, [](SgsnConfig& s) {
    s.secondaries = 1;
    s.network_initiated = 0.5;
    s.cycles = 2;
  });
  h.run(10);
  EXPECT_TRUE(h.sgsn->phaseExhausted());
  const auto& s = h.sgsn_stats;
  const auto& g = h.ggsn_stats[0];
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.sgsn->waitingForNetwork(), 0u);
  EXPECT_EQ(h.ggsn->outstanding(), 0u);
  const ProcedureCounters& su = s.procedures[at(Procedure::kNetworkUpdate)];
  const ProcedureCounters& sd = s.procedures[at(Procedure::kNetworkDelete)];
  const ProcedureCounters& gu = g.procedures[at(Procedure::kNetworkUpdate)];
  const ProcedureCounters& gd = g.procedures[at(Procedure::kNetworkDelete)];
  // About half the subscribers, each session of theirs.
  EXPECT_GT(gu.started, 100u);
  EXPECT_LT(gu.started, 300u);
  EXPECT_GT(gd.started, 30u);
  EXPECT_EQ(gu.completed, gu.started);
  EXPECT_EQ(gd.completed, gd.started);
  EXPECT_EQ(su.started, gu.started);
  EXPECT_EQ(su.completed, gu.completed);
  EXPECT_EQ(sd.completed, gd.completed);
  EXPECT_EQ(s.sessions_deleted_by_network, gd.completed);
  // Every session ends, by the SGSN or by the GGSN.
  EXPECT_EQ(s.sessions_created, 400u);
  EXPECT_EQ(s.sessions_deleted + s.sessions_deleted_by_network, 400u);
  EXPECT_EQ(g.sessions_deleted, 400u);
  // The GGSN deletes its sessions after the SGSN's updates: every update was
  // made, and the secondaries went with their sessions.
  EXPECT_EQ(s.completed[at(V1Txn::kUpdatePdp)], 800u);
  EXPECT_EQ(s.secondaries_deleted, 400u);
  EXPECT_EQ(s.completed[at(V1Txn::kDeletePdp)], 400u - sd.completed);
  EXPECT_EQ(g.contexts_up, 0u);
  EXPECT_EQ(s.transactions_cancelled, 0u);
  // Both sides pick the same subscribers.
  uint64_t picked = 0, deleted = 0;
  for (uint32_t i = 0; i < 200; ++i) {
    const NetworkPlan p = networkPlan(testing::ids(200).imsi(i), 0.5);
    picked += p != NetworkPlan::kNone;
    deleted += p == NetworkPlan::kUpdateAndDelete;
  }
  EXPECT_EQ(gu.started, picked * 2);
  EXPECT_EQ(gd.started, deleted * 2);
}

TEST(V1Engines, RetransmitsTheSameBytesAndCompletes) {
  V1Harness h(1, 1);
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  const Sent first = h.out.sent.front();
  h.out.sent.clear();  // lost
  h.sgsn->onTimers(100 * kMs);
  ASSERT_EQ(h.out.sent.size(), 1u);
  EXPECT_EQ(h.out.sent.front().bytes, first.bytes);
  const auto m = decoded(first.bytes);
  EXPECT_TRUE(m.header().hasSequenceNumber());
  EXPECT_EQ(m.header().sequence_number, 1000u);
  h.pump(100 * kMs);
  EXPECT_EQ(h.sgsn_stats.retransmissions[at(V1Txn::kCreatePdp)], 1u);
  EXPECT_EQ(h.sgsn_stats.completed[at(V1Txn::kCreatePdp)], 1u);
  EXPECT_EQ(h.sgsn->sessionsUp(), 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(V1Engines, TimesOutAfterN3AndAbandons) {
  V1Harness h(1, 1);
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  for (int k = 1; k <= 3; ++k) {
    h.out.sent.clear();
    h.sgsn->onTimers(k * 100 * kMs);
  }
  EXPECT_EQ(h.sgsn_stats.retransmissions[at(V1Txn::kCreatePdp)], 2u);
  EXPECT_EQ(h.sgsn_stats.timeouts[at(V1Txn::kCreatePdp)], 1u);
  EXPECT_EQ(h.sgsn->outstanding(), 0u);
  EXPECT_TRUE(h.sgsn->phaseExhausted());
}

TEST(V1Engines, SequenceNumbersWrapAtSixteenBits) {
  V1Harness h(4, 1, [](SgsnConfig& s) { s.sequence_seed = 0xfffe; });
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(4, 0), 4u);
  std::vector<uint32_t> seqs;
  for (const Sent& d : h.out.sent) seqs.push_back(decoded(d.bytes).header().sequence_number);
  EXPECT_EQ(seqs, (std::vector<uint32_t>{0xfffe, 0xffff, 0, 1}));
  h.pump(0);
  EXPECT_EQ(h.sgsn_stats.completed[at(V1Txn::kCreatePdp)], 4u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(V1Engines, GgsnAnswersARepeatedRequestFromItsCache) {
  V1Harness h(1, 1);
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  const Sent request = h.out.sent.front();
  h.out.sent.clear();
  h.deliver(request, 0);
  h.deliver(request, 10 * kMs);  // the SGSN's retransmission, crossing the answer
  ASSERT_EQ(h.out.sent.size(), 2u);
  EXPECT_EQ(h.out.sent[0].bytes, h.out.sent[1].bytes);
  EXPECT_EQ(h.ggsn_stats[0].duplicates, 1u);
  EXPECT_EQ(h.ggsn_stats[0].sessions_created, 1u);
  h.pump(10 * kMs);
  // The second answer is a duplicate at the SGSN, not a mismatch.
  EXPECT_EQ(h.sgsn_stats.duplicate_responses, 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(V1Engines, SgsnAnswersARepeatedNetworkRequestOnce) {
  // Every subscriber picked: the GGSN updates the session once it is made.
  V1Harness h(1, 1, [](SgsnConfig& s) { s.network_initiated = 1; });
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  h.deliver(h.out.sent.front(), 0);
  h.out.sent.pop_front();
  ASSERT_EQ(h.out.sent.size(), 2u);  // the Create PDP Context Response, the GGSN's update
  h.deliver(h.out.sent.front(), 0);
  h.out.sent.pop_front();
  const Sent update = h.out.sent.front();
  h.out.sent.pop_front();
  EXPECT_EQ(decoded(update.bytes).messageType(), MessageType::kUpdatePdpContextRequest);
  h.deliver(update, 0);
  h.deliver(update, 5 * kMs);
  ASSERT_EQ(h.out.sent.size(), 2u);
  EXPECT_EQ(h.out.sent[0].bytes, h.out.sent[1].bytes);
  const ProcedureCounters& c = h.sgsn_stats.procedures[at(Procedure::kNetworkUpdate)];
  EXPECT_EQ(c.started, 1u);
  EXPECT_EQ(c.completed, 1u);
  EXPECT_EQ(c.retransmissions, 1u);
  h.pump(5 * kMs);
  EXPECT_EQ(h.ggsn_stats[0].procedures[at(Procedure::kNetworkUpdate)].completed, 1u);
  EXPECT_EQ(h.ggsn_stats[0].duplicate_responses, 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(V1Engines, SgsnAnswersTheGgsnsOtherRequests) {
  V1Harness h(2, 1);
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  h.pump(0);  // subscriber 0 attached
  // An Initiate PDP Context Activation Request for it: refused (197).
  std::array<uint8_t, 256> buf{};
  gtp::v1::Builder b(buf);
  b.begin(MessageType::kInitiatePdpContextActivationRequest, h.sgsn->controlTeid(0), 7);
  b.add(gtp::v1::Nsapi{kPrimaryNsapi});
  b.add(gtp::v1::QosProfile{2, v1QosValue(V1Qos::kSecondary).subspan(1)});
  const uint8_t correlation[] = {0x01};
  b.addRaw(static_cast<uint8_t>(gtp::v1::IeType::kCorrelationId), correlation);
  auto r = b.finish();
  ASSERT_TRUE(r);
  h.sgsn->onDatagram(0, Endpoint{kGgsn0, kGtpcPort}, *r, 0);
  ASSERT_EQ(h.out.sent.size(), 1u);
  auto m = decoded(h.out.sent.front().bytes);
  EXPECT_EQ(m.messageType(), MessageType::kInitiatePdpContextActivationResponse);
  EXPECT_EQ(m.header().sequence_number, 7u);
  auto v = viewPdp(m);
  ASSERT_TRUE(v && v->cause);
  EXPECT_EQ(*v->cause, kV1CauseMsRefuses);
  h.out.sent.clear();
  // A Delete PDP Context Request naming nobody: 192 and TEID 0.
  auto d = buildDeletePdpContextRequest(8, 0x12345678, kPrimaryNsapi, true, buf);
  ASSERT_TRUE(d);
  h.sgsn->onDatagram(0, Endpoint{kGgsn0, kGtpcPort}, std::span<const uint8_t>(buf.data(), *d), 0);
  ASSERT_EQ(h.out.sent.size(), 1u);
  m = decoded(h.out.sent.front().bytes);
  EXPECT_EQ(m.messageType(), MessageType::kDeletePdpContextResponse);
  EXPECT_EQ(m.header().teid, 0u);
  v = viewPdp(m);
  ASSERT_TRUE(v && v->cause);
  EXPECT_EQ(*v->cause, kV1CauseNonExistent);
  EXPECT_EQ(h.sgsn_stats.network_unknown, 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(V1Engines, Ipv6NodesGiveSixteenOctetGsnAddresses) {
  const IpAddress sgsn = testing::ula(0x11), ggsn = testing::ula(0x21);
  const Identities ids = testing::ids(1);
  gtp::v1::Apn apn;
  for (char c : std::string_view("internet")) apn.text.push(c);
  PdpRequestArgs a;
  a.ids = &ids;
  a.apn = &apn;
  a.sgsn_addr = sgsn;
  a.teid_c = ControlTeids(1).teid(0);
  std::array<uint8_t, 512> buf{};
  auto r = buildCreatePdpContextRequest(a, buf);
  ASSERT_TRUE(r);
  gtp::v1::Message m;
  ASSERT_TRUE(m.decode(std::span<const uint8_t>(buf.data(), *r)));
  ASSERT_TRUE(gtp::v1::checkMandatory(m, gtp::v1::Sender::kSgsn));
  auto v = viewPdp(m);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->gsn[0], sgsn);
  EXPECT_EQ(v->gsn[1], sgsn);
  EXPECT_EQ(m.find(gtp::v1::IeType::kGsnAddress)->length, 16u);
  // A GGSN of the family, without a proxy, finds nothing to say.
  GgsnCheckContext c;
  c.relay = true;
  c.ggsn_addr = ggsn;
  const ControlTeids teids(1);
  c.sgsn_teids = &teids;
  c.imsi = ids.imsi(0);
  EXPECT_TRUE(checkSgsnRequest(*v, c, kPrimaryNsapi, true).empty());
  // An IPv4 GGSN would be on another leg.
  c.ggsn_addr = IpAddress(kGgsn0);
  const MismatchSet ms = checkSgsnRequest(*v, c, kPrimaryNsapi, true);
  EXPECT_TRUE(ms.has(Mismatch::kGgsnSgsnAddressNotProxy));
  EXPECT_TRUE(ms.has(Mismatch::kGgsnUserPlane));
}

TEST(V1Engines, WithoutAProxyTheProxiedChecksFail) {
  // Told there is a proxy (at 127.0.0.1 toward the GGSN) when there is none:
  // the SGSN Address for signalling and the TEID-C arrive as the SGSN sent
  // them, and the GGSN Addresses as the GGSN did.
  V1Harness h(
      5, 1, [](SgsnConfig& s) { s.relay = false; s.cycles = 1; s.modifies = 0; },
      [](GgsnConfig& g) {
        g.relay = false;
        g.nodes[0].proxy_gateway = IpAddress(0x7f000001);
      });
  h.sgsn->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgsn->issue(1, 0), 1u);
  h.pump(0);
  EXPECT_EQ(h.mismatches[Mismatch::kGgsnSgsnAddressNotProxy], 1u);
  EXPECT_EQ(h.mismatches[Mismatch::kGgsnControlTeid], 1u);  // the SGSN's own
  EXPECT_EQ(h.mismatches[Mismatch::kGgsnUserPlane], 0u);
  // The SGSN's --proxy is the GGSN: its GGSN Address for user traffic names
  // the "proxy".
  EXPECT_EQ(h.mismatches[Mismatch::kSgsnGgsnAddressNotProxy], 0u);
  EXPECT_EQ(h.mismatches[Mismatch::kSgsnUserPlane], 1u);
}

}  // namespace
}  // namespace gtpcp::peer
