// A producer thread and a consumer thread over one shared mapping, with the
// doorbell between them: every octet of every record is checked, in order.
// This is what the ThreadSanitizer build exercises: the slots are plain
// memory handed over by the release/acquire pairs on head and tail.
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/ring/segment.h"
#include "tests/ring/ring_test_util.h"

namespace gtpcp::ring {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Outcome {
  uint64_t records = 0;
  uint64_t octets = 0;
  uint64_t sleeps = 0;
  std::string failure;
};

// Writes records 0..count-1 of the pattern: even ones with push(), odd ones
// with reserve() (for more than needed) and commit(); publishes in batches of
// random size and rings after each. Returns how many it wrote before `stop`
// or the deadline.
uint64_t producePattern(Producer& producer, Doorbell& bell, uint64_t count, uint32_t seed,
                        const std::atomic<bool>& stop, Clock::time_point deadline) {
  std::minstd_rand rng(seed);
  std::vector<uint8_t> scratch(kMaxPayload);
  uint64_t seq = 0;
  while (seq < count && !stop.load(std::memory_order_relaxed) && Clock::now() < deadline) {
    const uint64_t batch = rng() % 48 + 1;
    for (uint64_t k = 0; k < batch && seq < count; ++k) {
      const std::size_t length = test::patternLength(seq);
      const DatagramMeta meta = test::patternMeta(seq);
      if (seq % 2 == 0) {
        test::fillPattern(seq, scratch.data(), length);
        if (!producer.push(meta, std::span<const uint8_t>(scratch.data(), length))) break;
      } else {
        const std::size_t room = std::min<std::size_t>(kMaxPayload, length + rng() % 200);
        uint8_t* out = producer.reserve(meta, room);
        if (out == nullptr) break;
        test::fillPattern(seq, out, length);
        producer.commit(length);
      }
      ++seq;
    }
    producer.publish();
    bell.ring();
    // Full: let the consumer run (there is no doorbell for room).
    if (!producer.fits(test::patternLength(seq))) std::this_thread::yield();
  }
  return seq;
}

// Reads and checks records until `count` arrived, the producer is done and the
// ring is empty, or the deadline.
Outcome consumePattern(Consumer& consumer, Doorbell& bell, uint64_t count,
                       const std::atomic<bool>& producer_done, Clock::time_point deadline) {
  Outcome out;
  while (out.records < count && Clock::now() < deadline) {
    int taken = 0;
    while (auto view = consumer.peek()) {
      if (std::string why = test::checkRecord(out.records, *view); !why.empty()) {
        out.failure = why;
        return out;
      }
      out.octets += view->payload.size();
      consumer.pop();
      ++out.records;
      if (++taken % 32 == 0) consumer.release();  // give room back during long batches
    }
    consumer.release();
    if (producer_done.load() && consumer.empty()) break;
    ++out.sleeps;
    bell.wait([&] { return !consumer.empty(); }, 200ms);
  }
  return out;
}

class RingThreadsTest : public test::ShmTest {};

TEST_F(RingThreadsTest, PatternThroughOneSharedMapping) {
  constexpr uint64_t kRecords = GTPCP_UNDER_TSAN ? 30000 : 300000;
  constexpr uint32_t kCapacity = 16384;
  const auto deadline = Clock::now() + 30s;
  auto segment = SharedSegment::createOrAttach(newName(), test::ringSegmentBytes(kCapacity),
                                               test::kTestKind, test::ringSegmentInit(kCapacity));
  ASSERT_TRUE(segment) << segment.error().message;
  auto producer = Producer::attach(test::ringOf(*segment), test::ringSizeOf(*segment));
  auto consumer = Consumer::attach(test::ringOf(*segment), test::ringSizeOf(*segment));
  ASSERT_TRUE(producer && consumer);

  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  uint64_t produced = 0;
  std::thread producer_thread([&] {
    Doorbell bell(test::doorbellOf(*segment));
    produced = producePattern(*producer, bell, kRecords, 11, stop, deadline);
    done.store(true);
  });
  test::StopAndJoin guard(stop, producer_thread);

  Doorbell bell(test::doorbellOf(*segment));
  const Outcome out = consumePattern(*consumer, bell, kRecords, done, deadline);
  stop.store(true);
  producer_thread.join();
  EXPECT_EQ(out.failure, "");
  EXPECT_EQ(produced, kRecords);
  EXPECT_EQ(out.records, kRecords);
  EXPECT_EQ(consumer->corruptions(), 0u);
  RecordProperty("octets", std::to_string(out.octets));
  RecordProperty("sleeps", std::to_string(out.sleeps));
}

// Producer and consumer each through their own mapping of the segment, as two
// processes have (TSan cannot relate the two addresses; the pattern can).
TEST_F(RingThreadsTest, PatternThroughTwoMappings) {
  constexpr uint64_t kRecords = GTPCP_UNDER_TSAN ? 10000 : 50000;
  constexpr uint32_t kCapacity = kMinCapacitySlots;
  const auto deadline = Clock::now() + 30s;
  const std::string name = newName();
  auto mine = SharedSegment::createOrAttach(name, test::ringSegmentBytes(kCapacity),
                                            test::kTestKind, test::ringSegmentInit(kCapacity));
  ASSERT_TRUE(mine) << mine.error().message;
  auto theirs = SharedSegment::attach(name, test::kTestKind);
  ASSERT_TRUE(theirs) << theirs.error().message;
  ASSERT_NE(mine->payload(), theirs->payload());
  auto consumer = Consumer::attach(test::ringOf(*mine), test::ringSizeOf(*mine));
  ASSERT_TRUE(consumer);

  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  uint64_t produced = 0;
  std::thread producer_thread([&] {
    auto producer = Producer::attach(test::ringOf(*theirs), test::ringSizeOf(*theirs));
    if (producer) {
      Doorbell bell(test::doorbellOf(*theirs));
      produced = producePattern(*producer, bell, kRecords, 12, stop, deadline);
    }
    done.store(true);
  });
  test::StopAndJoin guard(stop, producer_thread);

  Doorbell bell(test::doorbellOf(*mine));
  const Outcome out = consumePattern(*consumer, bell, kRecords, done, deadline);
  stop.store(true);
  producer_thread.join();
  EXPECT_EQ(out.failure, "");
  EXPECT_EQ(produced, kRecords);
  EXPECT_EQ(out.records, kRecords);
}

}  // namespace
}  // namespace gtpcp::ring
