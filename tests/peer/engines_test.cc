// The SGW and PGW engines wired together in memory, with a fake clock and a
// fake network that behaves like gtpcp-relay: transactions complete, the
// SGW retransmits the same bytes, times out, and the PGW answers a duplicate
// from its cache.
#include <gtest/gtest.h>

#include <vector>

#include "common/gtp/v2/message.h"
#include "tests/peer/engine_harness.h"

namespace gtpcp::peer {
namespace {

using testing::Harness;
using testing::kMs;
using testing::kPgw0;
using testing::Sent;

uint32_t sequenceOf(const std::vector<uint8_t>& bytes) {
  gtp::v2::Message m;
  EXPECT_TRUE(m.decode(bytes).has_value());
  return m.header().sequence_number;
}

TEST(Engines, LifecycleThroughARelayCompletesWithoutMismatch) {
  Harness h(20, 2, /*sgw_relay_mode=*/true);
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kIdle, false);
}

TEST(Engines, PgwAnswersADuplicateFromItsCache) {
  Harness h(1, 1, true);
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
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
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, 0);
  h.pump(0);
  EXPECT_GT(h.mismatches[Mismatch::kSgwPgwFteidNotProxy], 0u);
}

TEST(Engines, ModifyOnlyPhases) {
  Harness h(6, 2, true);
  h.sgw->setPhase(AccessPhase::kAttach, false);
  int64_t now = 0;
  while (!h.sgw->phaseExhausted()) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw->sessionsUp(), 6u);
  h.sgw->setPhase(AccessPhase::kModify, true);
  for (int i = 0; i < 30; ++i) {
    h.sgw->issue(1, now);
    h.pump(now);
    now += kMs;
  }
  EXPECT_EQ(h.sgw_stats.completed[1], 30u);
  EXPECT_EQ(h.sgw_stats.latency[0].count(), 0u);  // attach not measured
  EXPECT_EQ(h.sgw_stats.latency[1].count(), 30u);
  h.sgw->setPhase(AccessPhase::kDetach, false);
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
