// The SGW and PGW engines wired together in memory, with a fake clock and a
// fake network that behaves like gtpcp-relay: transactions complete, the
// SGW retransmits the same bytes, times out, and the PGW answers a duplicate
// from its cache.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tools/peer/pgw.h"
#include "tools/peer/sgw.h"

namespace gtpcp::peer {
namespace {

constexpr uint32_t kProxy = 0x7f000001;
constexpr uint32_t kSgw0 = 0x7f00000b;
constexpr uint32_t kPgw0 = 0x7f000015;
constexpr int64_t kMs = 1'000'000;
constexpr uint16_t kPairPortBase = 40000;

struct Sent {
  uint32_t socket;
  Endpoint to;
  std::vector<uint8_t> bytes;
};

class FakeOutbox : public Outbox {
 public:
  std::span<uint8_t> reserve(uint32_t) noexcept override { return buf_; }
  void commit(uint32_t socket, const Endpoint& to, std::size_t length) noexcept override {
    sent.push_back(Sent{socket, to, std::vector<uint8_t>(buf_.begin(), buf_.begin() + length)});
  }
  std::deque<Sent> sent;

 private:
  std::array<uint8_t, 2048> buf_{};
};

Identities ids(uint32_t count) {
  Identities i;
  i.imsi_start = 1010000000001;
  i.imsi_digits = 15;
  i.msisdn_start = 15550000001;
  i.msisdn_digits = 11;
  i.count = count;
  i.plmn = *gtp::makePlmn("001", "01");
  return i;
}

// SGW nodes on sockets 0..S-1, PGW nodes after them. The network relays like
// gtpcp-relay: SGW node k's datagrams reach PGW 0 from (proxy, 40000 + k),
// and the PGW's answers to that endpoint come back to SGW node k from the
// proxy's endpoint.
class Harness {
 public:
  Harness(uint32_t subscribers, uint32_t sgws, bool sgw_relay_mode, uint8_t reject = 0,
          bool same_sequence = false) {
    SgwConfig s;
    for (uint32_t k = 0; k < sgws; ++k) s.nodes.push_back(SgwNodeConfig{kSgw0 + k, k});
    s.proxy = Endpoint{kProxy, kGtpcPort};
    s.relay = sgw_relay_mode;
    s.ids = ids(subscribers);
    s.modifies = 2;
    s.cycles = 1;
    s.t3_ns = 100 * kMs;
    s.n3 = 2;
    s.same_sequence = same_sequence;
    s.sequence_seed = 1000;
    if (reject) s.expected_rejections.set(reject);
    s.local_pgws = {kPgw0};
    s.local_pgw_causes = {reject};
    sgw_nodes_ = sgws;
    PgwConfig p;
    PgwNodeConfig n;
    n.addr = kPgw0;
    n.socket = sgws;
    n.reject_cause = reject;
    p.nodes.push_back(n);
    p.relay = true;  // the network is a relay
    p.proxy_gateway = kProxy;
    p.ids = ids(subscribers);
    p.capacity = subscribers * 2 + 16;
    sgw = std::make_unique<SgwEngine>(s, out, sgw_stats, mismatches, malformed);
    pgw = std::make_unique<PgwEngine>(p, out, pgw_stats, mismatches, malformed);
  }

  // Delivers everything in flight (and what it causes) at `now`.
  void pump(int64_t now) {
    while (!out.sent.empty()) {
      Sent d = std::move(out.sent.front());
      out.sent.pop_front();
      deliver(d, now);
    }
  }
  void deliver(const Sent& d, int64_t now) {
    if (d.socket < sgw_nodes_) {
      pgw->onDatagram(0, Endpoint{kProxy, static_cast<uint16_t>(kPairPortBase + d.socket)}, d.bytes, now);
    } else {
      const uint32_t node = d.to.port - kPairPortBase;
      sgw->onDatagram(node, Endpoint{kProxy, kGtpcPort}, d.bytes, now);
    }
  }

  FakeOutbox out;
  SgwStats sgw_stats;
  std::vector<PgwNodeStats> pgw_stats;
  MismatchCounters mismatches;
  MalformedCounters malformed;
  std::unique_ptr<SgwEngine> sgw;
  std::unique_ptr<PgwEngine> pgw;

 private:
  uint32_t sgw_nodes_ = 1;
};

uint32_t sequenceOf(const std::vector<uint8_t>& bytes) {
  gtp::v2::Message m;
  EXPECT_TRUE(m.decode(bytes).has_value());
  return m.header().sequence_number;
}

TEST(Engines, LifecycleThroughARelayCompletesWithoutMismatch) {
  Harness h(20, 2, /*sgw_relay_mode=*/true);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  int64_t now = 0;
  for (int turn = 0; turn < 1000 && !h.sgw->phaseExhausted(); ++turn) {
    h.sgw->issue(3, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_TRUE(h.sgw->phaseExhausted());
  const auto& s = h.sgw_stats;
  EXPECT_EQ(s.attempted[0], 20u);
  EXPECT_EQ(s.completed[0], 20u);
  EXPECT_EQ(s.completed[1], 40u);
  EXPECT_EQ(s.completed[2], 20u);
  EXPECT_EQ(s.sessions_created, 20u);
  EXPECT_EQ(s.sessions_deleted, 20u);
  EXPECT_EQ(s.causes[16], 80u);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.malformed.total, 0u);
  EXPECT_EQ(h.sgw->outstanding(), 0u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  EXPECT_EQ(h.pgw_stats[0].sessions_created, 20u);
  EXPECT_EQ(h.pgw_stats[0].sessions_deleted, 20u);
  EXPECT_EQ(h.pgw_stats[0].sessions_up, 0u);
  ASSERT_EQ(s.split.size, 1u);
  EXPECT_EQ(s.split.addr[0], kPgw0);
  EXPECT_EQ(s.latency[0].count(), 20u);
}

TEST(Engines, RetransmitsTheSameBytesAndCompletes) {
  Harness h(1, 1, true);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  ASSERT_EQ(h.sgw->issue(1, 0), 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  const std::vector<uint8_t> first = h.out.sent.front().bytes;
  h.out.sent.clear();  // lost
  EXPECT_EQ(h.sgw->nextTimer(), 100 * kMs);
  h.sgw->onTimers(99 * kMs);
  EXPECT_TRUE(h.out.sent.empty());
  h.sgw->onTimers(100 * kMs);
  ASSERT_EQ(h.out.sent.size(), 1u);
  EXPECT_EQ(h.out.sent.front().bytes, first);
  h.pump(101 * kMs);
  EXPECT_EQ(h.sgw_stats.completed[0], 1u);
  EXPECT_EQ(h.sgw_stats.retransmissions[0], 1u);
  EXPECT_EQ(h.sgw_stats.latency[0].max(), static_cast<uint64_t>(101 * kMs));
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(Engines, TimesOutAfterN3RetransmissionsAndAbandons) {
  Harness h(1, 1, true);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  h.sgw->issue(1, 0);
  for (int64_t t = 100; t <= 300; t += 100) {
    h.out.sent.clear();
    h.sgw->onTimers(t * kMs);
  }
  EXPECT_EQ(h.sgw_stats.retransmissions[0], 2u);
  EXPECT_EQ(h.sgw_stats.timeouts[0], 1u);
  EXPECT_EQ(h.sgw->outstanding(), 0u);
  EXPECT_TRUE(h.sgw->phaseExhausted());  // the only subscriber is abandoned
  // A late answer is recognised as such, not as a mismatch.
  h.out.sent.clear();
  h.sgw->setPhase(SgwPhase::kIdle, false);
}

TEST(Engines, PgwAnswersADuplicateFromItsCache) {
  Harness h(1, 1, true);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  h.sgw->issue(1, 0);
  const Sent request = h.out.sent.front();
  h.out.sent.clear();
  h.deliver(request, 0);
  h.deliver(request, 5 * kMs);  // the retransmission crossed the answer
  ASSERT_EQ(h.out.sent.size(), 2u);
  EXPECT_EQ(h.out.sent[0].bytes, h.out.sent[1].bytes);
  EXPECT_EQ(h.pgw_stats[0].sessions_created, 1u);
  EXPECT_EQ(h.pgw_stats[0].duplicates, 1u);
  h.pump(6 * kMs);
  EXPECT_EQ(h.sgw_stats.completed[0], 1u);
  EXPECT_EQ(h.sgw_stats.duplicate_responses, 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(Engines, ConfiguredRejectionIsExpected) {
  Harness h(5, 1, true, /*reject=*/73);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  int64_t now = 0;
  for (int turn = 0; turn < 100 && !h.sgw->phaseExhausted(); ++turn) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw_stats.sessions_rejected, 5u);
  EXPECT_EQ(h.sgw_stats.sessions_created, 0u);
  EXPECT_EQ(h.sgw_stats.causes[73], 5u);
  EXPECT_EQ(h.pgw_stats[0].sessions_rejected, 5u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST(Engines, SameSequenceGivesEveryNodeTheSameNumbers) {
  Harness h(4, 2, true, 0, /*same_sequence=*/true);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  h.sgw->issue(4, 0);
  ASSERT_EQ(h.out.sent.size(), 4u);
  EXPECT_EQ(h.out.sent[0].socket, 0u);
  EXPECT_EQ(h.out.sent[1].socket, 1u);
  EXPECT_EQ(sequenceOf(h.out.sent[0].bytes), sequenceOf(h.out.sent[1].bytes));
  EXPECT_EQ(sequenceOf(h.out.sent[2].bytes), sequenceOf(h.out.sent[3].bytes));
  EXPECT_NE(sequenceOf(h.out.sent[0].bytes), sequenceOf(h.out.sent[2].bytes));
}

TEST(Engines, ProxyChecksFailWhenNothingRewritesTheFteids) {
  // The SGW expects a proxy, but the network is a bare relay.
  Harness h(2, 1, /*sgw_relay_mode=*/false);
  h.sgw->setPhase(SgwPhase::kLifecycle, true);
  h.sgw->issue(1, 0);
  h.pump(0);
  EXPECT_GT(h.mismatches[Mismatch::kSgwPgwFteidNotProxy], 0u);
}

TEST(Engines, ModifyOnlyPhases) {
  Harness h(6, 2, true);
  h.sgw->setPhase(SgwPhase::kAttach, false);
  int64_t now = 0;
  while (!h.sgw->phaseExhausted()) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw->sessionsUp(), 6u);
  h.sgw->setPhase(SgwPhase::kModify, true);
  for (int i = 0; i < 30; ++i) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw_stats.completed[1], 30u);
  EXPECT_EQ(h.sgw_stats.latency[0].count(), 0u);  // attach not measured
  EXPECT_EQ(h.sgw_stats.latency[1].count(), 30u);
  h.sgw->setPhase(SgwPhase::kDetach, false);
  while (!h.sgw->phaseExhausted()) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw_stats.completed[2], 6u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

}  // namespace
}  // namespace gtpcp::peer
