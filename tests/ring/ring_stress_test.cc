// Two processes, as in production: a forked producer child and the parent as
// consumer, each attaching to the ring's segment by name through
// SharedSegment. The child writes up to kRecords records of the pattern
// (0..2000 octets, one in 512 of 65535), publishing in batches of random size
// and ringing the doorbell; the parent sleeps on the doorbell, checks every
// octet and the order of every record, and the child's exit status.
//
// GTPCP_RING_STRESS_RECORDS overrides the record count (e.g. for a longer run
// by hand).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

constexpr uint32_t kCapacity = 16384;  // 1 MiB of slots
constexpr uint64_t kDefaultRecords = 2'000'000;
// The producer stops writing after this long (a loaded machine writes fewer
// records; the end record says how many) ...
constexpr auto kProducerTime = 20s;
// ... and the consumer gives up this long after the start.
constexpr auto kConsumerTime = 60s;
// The last record: flags has this bit (the pattern's flags never do) and
// receive_ns carries the number of records written before it.
constexpr uint16_t kEndFlag = 0x8000;

// Child exit statuses.
enum : int { kChildOk = 0, kChildAttachFailed = 3, kChildStuck = 4 };

uint64_t recordCount() {
  if (const char* env = std::getenv("GTPCP_RING_STRESS_RECORDS")) {
    return std::strtoull(env, nullptr, 10);
  }
  return kDefaultRecords;
}

// Waits for room for `length` octets, yielding then napping; false after 10 s
// without room (the consumer is gone).
bool waitForRoom(Producer& producer, std::size_t length) {
  const auto give_up = Clock::now() + 10s;
  for (uint64_t round = 0; !producer.fits(length); ++round) {
    if (Clock::now() > give_up) return false;
    if (round < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(50us);  // the consumer is slower: do not burn the core
    }
  }
  return true;
}

// The child. Never returns: _exit() keeps gtest's and the fixture's cleanup
// (which belongs to the parent) from running here.
[[noreturn]] void runProducer(const std::string& name, uint64_t count, uint32_t seed) {
  auto segment = SharedSegment::createOrAttach(name, test::ringSegmentBytes(kCapacity),
                                               test::kTestKind, test::ringSegmentInit(kCapacity));
  if (!segment || segment->created()) ::_exit(kChildAttachFailed);
  auto producer = Producer::attach(test::ringOf(*segment), test::ringSizeOf(*segment));
  if (!producer) ::_exit(kChildAttachFailed);
  Doorbell bell(test::doorbellOf(*segment));
  std::minstd_rand rng(seed);
  std::vector<uint8_t> scratch(kMaxPayload);
  const auto stop_at = Clock::now() + kProducerTime;

  uint64_t seq = 0;
  while (seq < count && Clock::now() < stop_at) {
    const uint64_t batch = rng() % 64 + 1;
    for (uint64_t k = 0; k < batch && seq < count; ++k) {
      const std::size_t length = test::patternLength(seq);
      if (!producer->fits(length)) {
        // Publish what we have before waiting, or the consumer never frees room.
        producer->publish();
        bell.ring();
        if (!waitForRoom(*producer, length)) ::_exit(kChildStuck);
      }
      const DatagramMeta meta = test::patternMeta(seq);
      if (seq % 3 == 0) {
        uint8_t* out = producer->reserve(meta, length);
        if (out == nullptr) ::_exit(kChildStuck);
        test::fillPattern(seq, out, length);
        producer->commit(length);
      } else {
        test::fillPattern(seq, scratch.data(), length);
        if (!producer->push(meta, std::span<const uint8_t>(scratch.data(), length))) {
          ::_exit(kChildStuck);
        }
      }
      ++seq;
    }
    producer->publish();
    bell.ring();
  }
  DatagramMeta end{};
  end.flags = kEndFlag;
  end.receive_ns = seq;
  if (!waitForRoom(*producer, 0) || !producer->push(end, {})) ::_exit(kChildStuck);
  producer->publish();
  bell.ring();
  ::_exit(kChildOk);
}

class RingStressTest : public test::ShmTest {};

TEST_F(RingStressTest, TwoProcessesEveryOctetChecked) {
  const uint64_t count = recordCount();
  const uint32_t seed = static_cast<uint32_t>(Clock::now().time_since_epoch().count());
  RecordProperty("seed", std::to_string(seed));
  const std::string name = newName();

  // The parent creates the segment (as the consumer, e.g. a worker, may); the
  // child attaches to it by name with the same call.
  auto segment = SharedSegment::createOrAttach(name, test::ringSegmentBytes(kCapacity),
                                               test::kTestKind, test::ringSegmentInit(kCapacity));
  ASSERT_TRUE(segment) << segment.error().message;
  ASSERT_TRUE(segment->created());

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) runProducer(name, count, seed);

  // From here on the child must be reaped whatever happens.
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    int status = 0;
    ~Reaper() {
      if (!reaped) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
      }
    }
  } reaper{child};

  auto attached = SharedSegment::attach(name, test::kTestKind);
  ASSERT_TRUE(attached) << attached.error().message;
  auto consumer = Consumer::attach(test::ringOf(*attached), test::ringSizeOf(*attached));
  ASSERT_TRUE(consumer) << consumer.error().message;
  Doorbell bell(test::doorbellOf(*attached));

  const auto start = Clock::now();
  const auto give_up = start + kConsumerTime;
  uint64_t next = 0;
  uint64_t octets = 0;
  uint64_t sleeps = 0;
  uint64_t timeouts = 0;
  bool ended = false;
  uint64_t announced = 0;
  std::string failure;
  while (!ended && failure.empty() && Clock::now() < give_up) {
    int taken = 0;
    while (auto view = consumer->peek()) {
      if (view->meta->flags & kEndFlag) {
        announced = view->meta->receive_ns;
        ended = true;
        consumer->pop();
        break;
      }
      failure = test::checkRecord(next, *view);
      if (!failure.empty()) break;
      octets += view->payload.size();
      consumer->pop();
      ++next;
      if (++taken % 64 == 0) consumer->release();
    }
    consumer->release();
    if (ended || !failure.empty()) break;
    ++sleeps;
    if (!bell.wait([&] { return !consumer->empty(); }, 200ms)) {
      ++timeouts;
      // Nothing for a while: is the child still there?
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) {
        reaper.reaped = true;
        reaper.status = status;
        if (consumer->empty()) {
          failure = "the producer exited (status " + std::to_string(status) +
                    ") without its end record";
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (!reaper.reaped) {
    // The child exits right after its end record; bound the wait anyway.
    const auto deadline = Clock::now() + 10s;
    while (!reaper.reaped && Clock::now() < deadline) {
      if (::waitpid(child, &reaper.status, WNOHANG) == child) {
        reaper.reaped = true;
      } else {
        std::this_thread::sleep_for(1ms);
      }
    }
  }
  EXPECT_EQ(failure, "");
  ASSERT_TRUE(reaper.reaped) << "the producer did not exit";
  ASSERT_TRUE(WIFEXITED(reaper.status)) << "producer status " << reaper.status;
  EXPECT_EQ(WEXITSTATUS(reaper.status), kChildOk);
  EXPECT_TRUE(ended) << "no end record after " << next << " records";
  EXPECT_EQ(next, announced);
  EXPECT_GT(next, 0u);
  EXPECT_EQ(consumer->corruptions(), 0u);
  EXPECT_TRUE(consumer->empty());

  std::printf("[ stress   ] %llu of %llu records, %.1f MiB in %.2f s (%.0f records/s), "
              "%llu doorbell waits, %llu timed out, seed %u\n",
              static_cast<unsigned long long>(next), static_cast<unsigned long long>(count),
              static_cast<double>(octets) / (1 << 20), seconds, static_cast<double>(next) / seconds,
              static_cast<unsigned long long>(sleeps), static_cast<unsigned long long>(timeouts),
              seed);
  RecordProperty("records", std::to_string(next));
}

}  // namespace
}  // namespace gtpcp::ring
