// The doorbell: no system call when nobody sleeps, no sleep when work is
// ready, timeouts, wake-ups, and no lost wake-up when a producer publishes
// exactly while the consumer is falling asleep (threads; TSan checks the
// ring's data hand-over on the way).
#include "common/ring/doorbell.h"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "common/ring/ring.h"
#include "tests/ring/ring_test_util.h"

namespace gtpcp::ring {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class DoorbellTest : public ::testing::Test {
 protected:
  void SetUp() override { initDoorbell(&shm_); }
  // Polls until the consumer has announced its sleep (bounded: 5 s).
  bool waitUntilAsleep() {
    const auto deadline = Clock::now() + 5s;
    while (shm_.sleeping.load() == 0) {
      if (Clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  DoorbellShm shm_{};
};

TEST_F(DoorbellTest, RingWithNobodyAsleepChangesNothing) {
  Doorbell bell(&shm_);
  for (int i = 0; i < 100; ++i) bell.ring();
  EXPECT_EQ(shm_.sequence.load(), 0u);
  EXPECT_EQ(shm_.sleeping.load(), 0u);
}

TEST_F(DoorbellTest, ReadyWorkMeansNoSleep) {
  Doorbell bell(&shm_);
  int calls = 0;
  EXPECT_TRUE(bell.wait([&calls] { return ++calls > 0; }, 10s));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(shm_.sleeping.load(), 0u);
}

TEST_F(DoorbellTest, TimesOut) {
  Doorbell bell(&shm_);
  const auto start = Clock::now();
  EXPECT_FALSE(bell.wait([] { return false; }, 30ms));
  EXPECT_GE(Clock::now() - start, 30ms);
  EXPECT_EQ(shm_.sleeping.load(), 0u);
}

TEST_F(DoorbellTest, ZeroOrNegativeTimeoutDoesNotSleep) {
  Doorbell bell(&shm_);
  EXPECT_FALSE(bell.wait([] { return false; }, 0ns));
  EXPECT_FALSE(bell.wait([] { return false; }, -5ms));
  EXPECT_TRUE(bell.wait([] { return true; }, 0ns));
  EXPECT_EQ(shm_.sleeping.load(), 0u);
}

TEST_F(DoorbellTest, HugeTimeoutIsAccepted) {
  Doorbell bell(&shm_);
  std::atomic<bool> ready{false};
  std::thread consumer([&] {
    EXPECT_TRUE(bell.wait([&] { return ready.load(); }, std::chrono::nanoseconds::max()));
  });
  ASSERT_TRUE(waitUntilAsleep());
  ready.store(true);
  Doorbell(&shm_).ring();
  consumer.join();
}

TEST_F(DoorbellTest, RingWakesASleeper) {
  std::atomic<int> result{-1};
  std::thread consumer([&] {
    Doorbell bell(&shm_);
    result.store(bell.wait([] { return false; }, 20s) ? 1 : 0);
  });
  ASSERT_TRUE(waitUntilAsleep());
  const auto start = Clock::now();
  Doorbell(&shm_).ring();  // woken: true even though ready() says no
  consumer.join();
  EXPECT_EQ(result.load(), 1);
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_EQ(shm_.sequence.load(), 1u);
  EXPECT_EQ(shm_.sleeping.load(), 0u);
}

// Ping-pong: the producer publishes record i only after the consumer has
// taken record i - 1, i.e. exactly while the consumer is heading into
// wait(). The producer publishes within microseconds, so a wait() that lasts
// its whole timeout slept through a ring: a lost wake-up (wait() still
// returns true then, because its last ready() sees the record). The test
// fails on the first one.
TEST_F(DoorbellTest, NoLostWakeupUnderARacingProducer) {
  constexpr uint64_t kRounds = GTPCP_UNDER_TSAN ? 5000 : 20000;
  const auto deadline = Clock::now() + 20s;
  test::AlignedBuffer memory(ringBytes(kMinCapacitySlots));
  ASSERT_TRUE(initRing(memory.data(), memory.size(), kMinCapacitySlots));
  auto producer = Producer::attach(memory.data(), memory.size());
  auto consumer = Consumer::attach(memory.data(), memory.size());
  ASSERT_TRUE(producer && consumer);

  std::atomic<uint64_t> taken{0};
  std::atomic<bool> stop{false};
  std::thread producer_thread([&] {
    Doorbell bell(&shm_);
    std::minstd_rand rng(7);
    for (uint64_t i = 0; i < kRounds && !stop.load(); ++i) {
      while (taken.load(std::memory_order_acquire) < i) {
        if (stop.load() || Clock::now() > deadline) return;
        std::this_thread::yield();
      }
      // Vary the instant of publication around the consumer's announcement.
      std::atomic<unsigned> spin{static_cast<unsigned>(rng() % 400)};
      while (spin.load(std::memory_order_relaxed) > 0) spin.fetch_sub(1, std::memory_order_relaxed);
      const uint8_t octet = static_cast<uint8_t>(i);
      DatagramMeta meta{};
      meta.receive_ns = i;
      if (!producer->push(meta, std::span<const uint8_t>(&octet, 1))) return;
      producer->publish();
      bell.ring();
    }
  });
  test::StopAndJoin guard(stop, producer_thread);

  Doorbell bell(&shm_);
  uint64_t next = 0;
  uint64_t timeouts = 0;
  uint64_t sleeps = 0;
  while (next < kRounds && Clock::now() < deadline) {
    if (auto view = consumer->peek()) {
      ASSERT_EQ(view->meta->receive_ns, next);
      ASSERT_EQ(view->payload[0], static_cast<uint8_t>(next));
      consumer->pop();
      consumer->release();
      taken.store(++next, std::memory_order_release);
      continue;
    }
    ++sleeps;
    constexpr auto kTimeout = 2s;
    const auto before = Clock::now();
    const bool woken = bell.wait([&] { return !consumer->empty(); }, kTimeout);
    if (!woken || Clock::now() - before >= kTimeout) {
      ++timeouts;
      break;
    }
  }
  stop.store(true);
  EXPECT_EQ(timeouts, 0u) << "a wake-up was lost after " << next << " records";
  EXPECT_EQ(next, kRounds) << "ran out of time";
  RecordProperty("sleeps", static_cast<int>(sleeps));
}

// One consumer, two rings (priority and new, as a worker has), one doorbell
// rung by two producers: every record of both arrives, in order per ring.
TEST_F(DoorbellTest, TwoRingsOneDoorbell) {
  constexpr uint64_t kPerRing = GTPCP_UNDER_TSAN ? 20000 : 100000;
  const auto deadline = Clock::now() + 30s;
  test::AlignedBuffer memory[2] = {test::AlignedBuffer(ringBytes(kMinCapacitySlots)),
                                   test::AlignedBuffer(ringBytes(kMinCapacitySlots))};
  std::optional<Consumer> consumers[2];
  for (auto& m : memory) ASSERT_TRUE(initRing(m.data(), m.size(), kMinCapacitySlots));
  for (int r = 0; r < 2; ++r) {
    auto c = Consumer::attach(memory[r].data(), memory[r].size());
    ASSERT_TRUE(c);
    consumers[r].emplace(std::move(*c));
  }

  std::atomic<bool> stop{false};
  auto produce = [&](int r) {
    auto producer = Producer::attach(memory[r].data(), memory[r].size());
    if (!producer) return;
    Doorbell bell(&shm_);
    std::minstd_rand rng(static_cast<unsigned>(r + 1));
    uint64_t seq = 0;
    while (seq < kPerRing && !stop.load() && Clock::now() < deadline) {
      const uint64_t batch = rng() % 16 + 1;
      for (uint64_t k = 0; k < batch && seq < kPerRing; ++k) {
        // Record seq's length is the pattern's, capped to keep the test quick.
        const std::size_t length = test::patternLength(seq) % 300;
        uint8_t payload[300];
        for (std::size_t i = 0; i < length; ++i) payload[i] = static_cast<uint8_t>(seq + i);
        DatagramMeta meta{};
        meta.receive_ns = seq;
        meta.aux = static_cast<uint32_t>(r);
        if (!producer->push(meta, std::span<const uint8_t>(payload, length))) break;
        ++seq;
      }
      producer->publish();
      bell.ring();
      if (!producer->fits(300)) std::this_thread::yield();
    }
  };
  std::thread producers[2] = {std::thread(produce, 0), std::thread(produce, 1)};
  test::StopAndJoin guard0(stop, producers[0]);
  test::StopAndJoin guard1(stop, producers[1]);

  Doorbell bell(&shm_);
  uint64_t next[2] = {0, 0};
  bool failed = false;
  while ((next[0] < kPerRing || next[1] < kPerRing) && !failed && Clock::now() < deadline) {
    for (int r = 0; r < 2 && !failed; ++r) {
      for (int n = 0; n < 64; ++n) {  // a batch from each ring in turn
        auto view = consumers[r]->peek();
        if (!view) break;
        const uint64_t seq = next[r];
        const std::size_t length = test::patternLength(seq) % 300;
        bool ok = view->meta->receive_ns == seq && view->meta->aux == static_cast<uint32_t>(r) &&
                  view->payload.size() == length;
        for (std::size_t i = 0; ok && i < length; ++i) {
          ok = view->payload[i] == static_cast<uint8_t>(seq + i);
        }
        if (!ok) {
          ADD_FAILURE() << "ring " << r << " record " << seq << " differs";
          failed = true;
          break;
        }
        consumers[r]->pop();
        ++next[r];
      }
      consumers[r]->release();
    }
    if (next[0] < kPerRing || next[1] < kPerRing) {
      bell.wait([&] { return !consumers[0]->empty() || !consumers[1]->empty(); }, 1s);
    }
  }
  stop.store(true);
  EXPECT_EQ(next[0], kPerRing);
  EXPECT_EQ(next[1], kPerRing);
}

}  // namespace
}  // namespace gtpcp::ring
