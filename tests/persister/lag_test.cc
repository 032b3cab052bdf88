// The persister's lag histogram (PersisterShm::lag, Channel::measureLag in
// persister/lib/persister.h) against a real redis-server: one observation per
// batch Redis acknowledged, the age of the batch's oldest change; a batch
// that waited for Redis to come back is observed once, with the wait in it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "common/metrics/histogram.h"
#include "common/ring/ring.h"
#include "common/session/change_record.h"
#include "persister/lib/persister.h"
#include "tests/persister/redis_harness.h"

namespace gtpcp::persister::test {
namespace {

using testing::RedisServer;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr uint32_t kSlots = ring::kMinCapacitySlots;
constexpr uint32_t kBatchRecords = 4;
constexpr uint64_t kMs = 1'000'000;

// A change record of session `teid` (an upsert of its slot alone), stamped `wall_ns`.
std::vector<uint8_t> change(uint32_t teid, uint64_t wall_ns) {
  session::ChangeHeader h{};
  h.session_teid = teid;
  h.kind = static_cast<uint16_t>(session::ChangeKind::kUpsert);
  h.wall_ns = wall_ns;
  h.core.state = static_cast<uint8_t>(session::SessionState::kActive);
  h.core.gtp_version = 2;
  h.core.default_ebi = 5;
  h.core.ebis = 1 << 5;
  std::memcpy(h.core.imsi, "001010000000042", 15);
  h.core.imsi_length = 15;
  std::vector<uint8_t> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

// Observations of `h` above `ns` (by bucket: `ns` is one of the bounds).
uint64_t countAbove(const metrics::Histogram& h, uint64_t ns) {
  uint64_t n = 0;
  for (std::size_t i = 0; i < metrics::kLatencyBuckets; ++i)
    if (i == std::size(metrics::kLatencyBoundsNs) || metrics::kLatencyBoundsNs[i] > ns) n += h.bucket(i);
  return n;
}

class LagTest : public ::testing::Test {
 protected:
  LagTest()
      : server_(dir_.path(), {}),
        client_(makeClient(loop_, configFor(RedisMode::kSingle, {server_.port()}))),
        memory_(static_cast<uint8_t*>(std::aligned_alloc(64, ring::ringBytes(kSlots)))) {
    std::memset(memory_.get(), 0, ring::ringBytes(kSlots));
    EXPECT_TRUE(ring::initRing(memory_.get(), ring::ringBytes(kSlots), kSlots));
    producer_.emplace(std::move(*ring::Producer::attach(memory_.get(), ring::ringBytes(kSlots))));
    consumer_.emplace(std::move(*ring::Consumer::attach(memory_.get(), ring::ringBytes(kSlots))));
  }

  // Publishes `n` changes of sessions first..first+n-1, stamped `wall_ns`.
  void push(uint32_t first, uint32_t n, uint64_t wall_ns) {
    for (uint32_t i = 0; i < n; ++i) {
      ring::DatagramMeta meta{};
      meta.aux = 7;  // the partition
      ASSERT_TRUE(producer_->push(meta, change(0x1c00'0000 + first + i, wall_ns)));
    }
    producer_->publish();
  }

  // Turns the channel and the loop until `batches` batches are written and
  // nothing is left, or 20 s pass.
  bool writeUntil(Channel& channel, uint64_t batches) {
    return runUntil(loop_, [&] {
      channel.turn(monotonicNs());
      return counters_.batches_written.load() >= batches && channel.idle();
    }, 20s);
  }

  TempDir dir_;
  RedisServer server_;
  EventLoop loop_;
  std::unique_ptr<RedisClientImpl> client_;
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> memory_;
  std::optional<ring::Producer> producer_;
  std::optional<ring::Consumer> consumer_;
  KeyNames keys_{"lag"};
  PersisterCounters counters_;
  metrics::Histogram lag_;
};

TEST_F(LagTest, OneObservationPerBatchAcknowledgedAndItsOldestChangesAge) {
  ASSERT_TRUE(client_);
  ASSERT_TRUE(runUntil(loop_, [&] { return client_->connected(); }, 5s));
  Channel channel(*consumer_, *client_, keys_, counters_, kBatchRecords);
  channel.measureLag(&lag_);

  // Ten fresh changes: batches of 4, 4 and 2.
  const uint64_t start = realtimeNs();
  push(0, 10, start);
  ASSERT_TRUE(writeUntil(channel, 3));
  const uint64_t end = realtimeNs();
  EXPECT_EQ(counters_.batches_written.load(), 3u);
  EXPECT_EQ(counters_.sessions_written.load(), 10u);
  EXPECT_EQ(lag_.count(), counters_.batches_written.load());
  EXPECT_GT(lag_.sumNs(), 0u);
  EXPECT_LE(lag_.sumNs(), 3 * (end - start)) << "no batch is older than the test";

  // A batch whose oldest change is 300 ms old (the other one is fresh).
  push(100, 1, realtimeNs() - 300 * kMs);
  push(101, 2, realtimeNs());
  ASSERT_TRUE(writeUntil(channel, 4));
  EXPECT_EQ(lag_.count(), 4u);
  EXPECT_EQ(countAbove(lag_, 250 * kMs), 1u) << "the oldest change names the batch's age";
  EXPECT_EQ(countAbove(lag_, 10'000 * kMs), 0u);
  // What Redis holds: the sessions' records.
  for (const uint32_t teid : {0u, 9u, 100u, 102u})
    EXPECT_EQ(testing::redisCommand(server_.port(), {"EXISTS", keys_.session(7, 0x1c00'0000 + teid)})
                  .value_or("(unreachable)"),
              "1")
        << teid;
}

TEST_F(LagTest, ABatchThatWaitedForRedisIsObservedOnceWithTheWait) {
  ASSERT_TRUE(client_);
  ASSERT_TRUE(runUntil(loop_, [&] { return client_->connected(); }, 5s));
  // A short pause between attempts, so that the test does not wait long.
  Channel channel(*consumer_, *client_, keys_, counters_, kBatchRecords, 20 * kMs);
  channel.measureLag(&lag_);
  push(0, 2, realtimeNs());
  ASSERT_TRUE(writeUntil(channel, 1));
  ASSERT_EQ(lag_.count(), 1u);

  // Redis goes away; two changes wait for it (held by the client or sent
  // again after a failure), then it comes back.
  server_.kill();
  const uint64_t stamped = realtimeNs();
  push(10, 2, stamped);
  EXPECT_TRUE(channel.turn(monotonicNs()));
  ASSERT_TRUE(channel.inFlight());
  for (int i = 0; i < 10; ++i) {
    loop_.runOnce(1);
    channel.turn(monotonicNs());
  }
  EXPECT_EQ(counters_.batches_written.load(), 1u) << "nothing is written while Redis is down";
  EXPECT_EQ(lag_.count(), 1u) << "nor observed";
  server_.restart();
  const uint64_t back = realtimeNs();
  ASSERT_TRUE(writeUntil(channel, 2));
  EXPECT_EQ(counters_.batches_written.load(), 2u);
  EXPECT_EQ(lag_.count(), 2u) << "once, however many attempts it took";
  EXPECT_GE(lag_.sumNs(), back - stamped) << "the wait for Redis is in its age";
}

}  // namespace
}  // namespace gtpcp::persister::test
