// The socket bell (common/ring/bell.h): no byte while the sleeper is awake,
// a byte when it sleeps or when its flag is not known, the bytes drained on
// waking, and no lost wake-up when a producer publishes exactly while the
// sleeper is falling asleep (threads; TSan checks the hand-over).
#include "common/ring/bell.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace gtpcp::ring {
namespace {

using namespace std::chrono_literals;

class BellTest : public ::testing::Test {
 protected:
  BellTest()
      : path_((std::filesystem::temp_directory_path() /
               ("gtpcp_bell_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                  .string()) {}
  // Bytes waiting on the listener's socket, read.
  static int pending(const BellListener& l) {
    int n = 0;
    uint8_t b;
    while (::recv(l.fd(), &b, 1, MSG_DONTWAIT) == 1) ++n;
    return n;
  }
  std::string path_;
  BellShm shm_{};
};

TEST_F(BellTest, AnAwakeSleeperGetsNoByteASleepingOneGetsOnePerRing) {
  auto listener = BellListener::bind(path_);
  ASSERT_TRUE(listener) << listener.error().message;
  auto ringer = BellRinger::open(path_);
  ASSERT_TRUE(ringer) << ringer.error().message;
  for (int i = 0; i < 10; ++i) ringer->ring(&shm_);
  EXPECT_EQ(pending(*listener), 0) << "a busy sleeper costs the ringer no system call";
  BellListener::announceSleep(shm_);
  EXPECT_EQ(shm_.sleeping.load(), 1u);
  ringer->ring(&shm_);
  ringer->ring(&shm_);
  pollfd p{listener->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 1000), 1) << "epoll (here poll) reports the bell";
  listener->endSleep(shm_);
  EXPECT_EQ(shm_.sleeping.load(), 0u);
  EXPECT_EQ(pending(*listener), 0) << "endSleep() read the bytes rung meanwhile";
}

TEST_F(BellTest, ARingerThatCannotSeeTheFlagAlwaysRings) {
  auto listener = BellListener::bind(path_);
  auto ringer = BellRinger::open(path_);
  ASSERT_TRUE(listener && ringer);
  ringer->ring(nullptr);
  ringer->ringNow();
  EXPECT_EQ(pending(*listener), 2);
}

TEST_F(BellTest, RingingASleeperThatIsNotThereIsHarmless) {
  auto ringer = BellRinger::open(path_);
  ASSERT_TRUE(ringer);
  shm_.sleeping.store(1);
  ringer->ring(&shm_);  // nobody bound: the byte is lost, nothing fails
  // A sleeper binding later replaces a stale socket file and starts empty.
  auto listener = BellListener::bind(path_);
  ASSERT_TRUE(listener) << listener.error().message;
  EXPECT_EQ(pending(*listener), 0);
}

TEST_F(BellTest, TheListenerRemovesItsSocketFile) {
  {
    auto listener = BellListener::bind(path_);
    ASSERT_TRUE(listener);
    EXPECT_TRUE(std::filesystem::exists(path_));
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(BellTest, APathTooLongIsRefusedWithItsLength) {
  const std::string long_path(200, 'x');
  auto listener = BellListener::bind(long_path);
  ASSERT_FALSE(listener);
  EXPECT_NE(listener.error().message.find("a path of 1 to"), std::string::npos) << listener.error().message;
}

// A producer publishes items one by one and rings after each; the sleeper
// takes them and sleeps (bounded by a long timeout) whenever it sees none.
// A lost wake-up shows as a sleep that ends by timeout with an item waiting.
TEST_F(BellTest, NoWakeUpIsLostWhileTheSleeperFallsAsleep) {
  auto listener = BellListener::bind(path_);
  auto ringer = BellRinger::open(path_);
  ASSERT_TRUE(listener && ringer);
  constexpr uint64_t kItems = 20000;
  std::atomic<uint64_t> published{0};
  uint64_t taken = 0;
  uint64_t lost = 0;
  std::thread sleeper([&] {
    while (taken < kItems) {
      // Acquire: pairs with the producer's release, as a ring's head does.
      if (published.load(std::memory_order_acquire) > taken) {
        ++taken;
        continue;
      }
      BellListener::announceSleep(shm_);
      if (published.load(std::memory_order_acquire) == taken) {
        pollfd p{listener->fd(), POLLIN, 0};
        if (::poll(&p, 1, 2000) == 0 && published.load(std::memory_order_acquire) > taken) ++lost;
      }
      listener->endSleep(shm_);
    }
  });
  for (uint64_t i = 1; i <= kItems; ++i) {
    published.store(i, std::memory_order_release);
    ringer->ring(&shm_);
    if (i % 64 == 0) std::this_thread::yield();
  }
  sleeper.join();
  EXPECT_EQ(taken, kItems);
  EXPECT_EQ(lost, 0u);
}

}  // namespace
}  // namespace gtpcp::ring
