// Shares of the session slots between the instances of a group, and the
// sessions a worker gives back when another instance wrote
// (workers/lib/session_table.h, workers/lib/stale_sessions.h).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "workers/lib/session_table.h"
#include "workers/lib/stale_sessions.h"
#include "workers/lib/transaction_table.h"
#include "workers/lib/worker_layout.h"

namespace gtpcp::worker {
namespace {

struct Memory {
  explicit Memory(const WorkerLayout& l) : layout(l), words(l.total / 8 + 1) {}
  uint8_t* base() { return reinterpret_cast<uint8_t*>(words.data()); }
  PartitionShm* partitions() { return reinterpret_cast<PartitionShm*>(base() + layout.partitions_offset); }
  SessionShm* sessions() { return reinterpret_cast<SessionShm*>(base() + layout.sessions_offset); }
  WorkerLayout layout;
  std::vector<uint64_t> words;
};

TEST(SessionTableShares, TwoInstancesNeverGiveOutTheSameSlot) {
  const WorkerLayout layout = WorkerLayout::compute(1, 0, 16, 64, 1 << 12);
  Memory ma(layout), mb(layout);
  SessionTable a(layout, ma.partitions(), ma.sessions(), 0, 2);
  SessionTable b(layout, mb.partitions(), mb.sessions(), 1, 2);
  a.rebuild();
  b.rebuild();
  std::set<uint32_t> slots_a, slots_b;
  for (int i = 0; i < 8; ++i) {
    SessionShm* s = a.allocate(7);
    ASSERT_NE(s, nullptr) << i;
    slots_a.insert(splitTeid(a.teid(*s, Leg::kAccess)).slot);
    s = b.allocate(7);
    ASSERT_NE(s, nullptr) << i;
    slots_b.insert(splitTeid(b.teid(*s, Leg::kAccess)).slot);
  }
  EXPECT_EQ(a.allocate(7), nullptr) << "half of 16 slots each";
  EXPECT_EQ(b.allocate(7), nullptr);
  for (uint32_t s : slots_a) EXPECT_EQ(s % 2, 0u);
  for (uint32_t s : slots_b) EXPECT_EQ(s % 2, 1u);
  EXPECT_EQ(slots_a.size(), 8u);
  EXPECT_EQ(slots_b.size(), 8u);
}

TEST(SessionTableShares, TheOtherSharesSessionsComeInAndTheirSlotsAreNeverReused) {
  const WorkerLayout layout = WorkerLayout::compute(1, 0, 16, 64, 1 << 12);
  Memory m(layout);
  SessionTable t(layout, m.partitions(), m.sessions(), 0, 2);
  t.rebuild();
  // b's session (slot 5) arrives above the high-water mark, then one below
  // it (slot 1) once a allocated past it.
  SessionShm record{};
  record.state = static_cast<uint8_t>(SessionState::kActive);
  SessionShm* in = t.install(makeTeid(7, 5, Leg::kAccess, 3), record);
  ASSERT_NE(in, nullptr);
  EXPECT_TRUE(t.reserve(makeTeid(7, 1, Leg::kAccess, 4)));
  EXPECT_EQ(t.stored(), 1u);
  std::vector<SessionShm*> mine;
  for (SessionShm* s = t.allocate(7); s != nullptr; s = t.allocate(7)) mine.push_back(s);
  EXPECT_EQ(mine.size(), 8u) << "a's share whole, whatever b's sessions";
  for (SessionShm* s : mine) EXPECT_EQ(splitTeid(t.teid(*s, Leg::kAccess)).slot % 2, 0u);
  // Ended or forgotten, b's slots go back to nobody's free chain.
  t.release(*in);
  t.forget(makeTeid(7, 1, Leg::kAccess, 4));
  t.release(*mine[0]);
  t.rebuild();
  SessionShm* again = t.allocate(7);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(splitTeid(t.teid(*again, Leg::kAccess)).slot % 2, 0u);
  EXPECT_EQ(t.allocate(7), nullptr);
}

class StaleSessionsTest : public ::testing::Test {
 protected:
  StaleSessionsTest()
      : layout_(WorkerLayout::compute(1, 0, 64, 1024, 1 << 16)),
        memory_(layout_),
        header_(reinterpret_cast<WorkerShmHeader*>(memory_.base())),
        sessions_(layout_, memory_.partitions(), memory_.sessions()),
        transactions_(layout_.transactionMemory(memory_.base(), *header_)),
        stale_(sessions_, transactions_, *header_) {
    sessions_.rebuild();
    transactions_.rebuild(true);
  }
  SessionShm& live(uint16_t partition) {
    SessionShm* s = sessions_.allocate(partition);
    s->state = static_cast<uint8_t>(SessionState::kActive);
    return *s;
  }
  // Turns until the walk is over.
  void walk(uint64_t now_ns, uint64_t epoch) {
    for (int i = 0; i < 100 && stale_.turn(now_ns, epoch); ++i) {
    }
  }

  WorkerLayout layout_;
  Memory memory_;
  WorkerShmHeader* header_;
  SessionTable sessions_;
  TransactionTable transactions_;
  StaleSessions stale_;
};

TEST_F(StaleSessionsTest, AMovedEpochGivesBackEveryIdleSessionAndKeepsTheBusyOnesUntilTheirAnswer) {
  std::vector<uint32_t> teids;
  for (uint16_t p = 0; p < 40; ++p) teids.push_back(sessions_.teid(live(p), Leg::kAccess));
  // One session has a request in flight: its answer is this worker's.
  TransactionShm* t = transactions_.open(1234, net::Address{}, 1, 1);
  ASSERT_NE(t, nullptr);
  t->session_teid = teids[3];

  walk(1, 0);
  EXPECT_EQ(sessions_.active(), 40u) << "the epoch did not move";
  walk(2, 1);
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_EQ(sessions_.stored(), 39u);
  EXPECT_NE(sessions_.find(teids[3]), nullptr);
  EXPECT_EQ(sessions_.find(teids[0]), nullptr);
  EXPECT_TRUE(sessions_.mayBeStored(teids[0])) << "reserved: its next message reads it again";
  EXPECT_EQ(header_->counters.sessions_demoted.load(), 39u);
  EXPECT_EQ(header_->foreign_epoch_seen, 0u) << "not seen whole while one was kept";

  // Answered: the walk after the pause gives it back too.
  transactions_.close(*t);
  walk(3, 1);
  EXPECT_EQ(sessions_.active(), 1u) << "not before the pause";
  walk(3 + StaleSessions::kRetryNs, 1);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->foreign_epoch_seen, 1u);
  // Brought in again (a message arrived), it stays until the epoch moves.
  SessionShm record{};
  record.state = static_cast<uint8_t>(SessionState::kActive);
  ASSERT_NE(sessions_.install(teids[0], record), nullptr);
  walk(4 + 2 * StaleSessions::kRetryNs, 1);
  EXPECT_EQ(sessions_.active(), 1u);
  walk(5 + 2 * StaleSessions::kRetryNs, 2);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->foreign_epoch_seen, 2u);
}

// A walk takes several loop turns over a large table, and the loop serves
// messages in between: a session whose request went out after the walk began
// is busy when the walk reaches it, and kept.
TEST_F(StaleSessionsTest, ASessionThatBecameBusyDuringTheWalkIsKept) {
  constexpr uint16_t kPartitions = 512;
  constexpr int kPerPartition = 40;  // 20,480 sessions: more than one step
  static_assert(kPartitions * kPerPartition > StaleSessions::kBudget);
  uint32_t late = 0;
  for (uint16_t p = 0; p < kPartitions; ++p) {
    for (int i = 0; i < kPerPartition; ++i) {
      SessionShm* s = sessions_.allocate(p);
      ASSERT_NE(s, nullptr);
      s->state = static_cast<uint8_t>(SessionState::kActive);
      late = sessions_.teid(*s, Leg::kAccess);
    }
  }
  ASSERT_TRUE(stale_.turn(1, 1)) << "the walk took one step only";
  ASSERT_NE(sessions_.find(late), nullptr) << "the first step reached the last partition";
  TransactionShm* t = transactions_.open(99, net::Address{}, 1, 1);
  ASSERT_NE(t, nullptr);
  t->session_teid = late;
  walk(2, 1);
  EXPECT_NE(sessions_.find(late), nullptr) << "demoted with its request in flight";
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_EQ(header_->foreign_epoch_seen, 0u);
}

}  // namespace
}  // namespace gtpcp::worker
