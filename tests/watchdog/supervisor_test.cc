// The thread watchdog's judgement (watchdog/lib/supervisor.h) on a clock of
// the test's own: when a process is replaced, how replacements are spaced,
// and when the watchdog gives up.
#include <gtest/gtest.h>

#include <set>

#include "watchdog/lib/supervisor.h"

namespace gtpcp::watchdog {
namespace {

constexpr uint64_t kMs = 1'000'000;

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() {
    settings_.timeout_ns = 1000 * kMs;
    settings_.start_grace_ns = 3000 * kMs;
    settings_.backoff_min_ns = 100 * kMs;
    settings_.backoff_max_ns = 1600 * kMs;
    settings_.max_restarts = 4;
    settings_.window_ns = 60'000 * kMs;
    settings_.stable_ns = 30'000 * kMs;
  }
  std::vector<Supervisor::Replacement> due(Supervisor& s, uint64_t now) {
    return s.due(now, [&](const std::string& name) { return !dead_.contains(name); });
  }
  SupervisorSettings settings_;
  std::set<std::string> dead_;
};

TEST_F(SupervisorTest, ABeatingProcessIsLeftAlone) {
  Supervisor s(settings_);
  s.watch("worker-0", 0);
  for (uint64_t t = 100; t < 10'000; t += 100) {
    s.heartbeat("worker-0", 42, t * kMs);
    EXPECT_TRUE(due(s, t * kMs).empty()) << t;
  }
}

TEST_F(SupervisorTest, ASilentProcessIsReplacedOnceTheTimeoutIsOver) {
  Supervisor s(settings_);
  s.watch("worker-0", 0);
  s.heartbeat("worker-0", 42, 500 * kMs);
  EXPECT_TRUE(due(s, 1400 * kMs).empty()) << "silent 900 ms: not yet";
  const auto r = due(s, 1600 * kMs);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].name, "worker-0");
  EXPECT_EQ(r[0].reason, "silent for 1100 ms");
  EXPECT_EQ(r[0].detected_ns, 1600 * kMs);
}

TEST_F(SupervisorTest, SilenceDuringTheStartGraceIsNotAFailureButDeathIs) {
  Supervisor s(settings_);
  s.watch("forwarder", 0);
  EXPECT_TRUE(due(s, 2500 * kMs).empty()) << "never beat, still starting";
  EXPECT_EQ(due(s, 3100 * kMs).size(), 1u) << "grace over";
  Supervisor t(settings_);
  t.watch("forwarder", 0);
  dead_.insert("forwarder");
  const auto r = due(t, 10 * kMs);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].reason, "exited");
}

TEST_F(SupervisorTest, ReplacementsBackOffAndTheWatchdogGivesUpAfterTheLimit) {
  Supervisor s(settings_);
  s.watch("persister", 0);
  dead_.insert("persister");  // it dies at every start
  uint64_t now = 0;
  std::vector<uint64_t> at;
  while (now < 20'000 * kMs) {
    for (const auto& r : due(s, now)) {
      at.push_back(now / kMs);
      s.replaced(r.name, false, now);
    }
    now += 10 * kMs;
  }
  // At once, then 100, 200 and 400 ms later; the fifth would exceed 4 a minute.
  ASSERT_EQ(at.size(), 4u);
  EXPECT_EQ(at[0], 0u);
  EXPECT_EQ(at[1], 100u);
  EXPECT_EQ(at[2], 300u);
  EXPECT_EQ(at[3], 700u);
  EXPECT_TRUE(s.givenUp("persister"));
  const auto status = s.status(now);
  EXPECT_EQ(status["persister"]["state"], "given up");
  EXPECT_EQ(status["persister"]["restarts"], 4);
  EXPECT_NE(status["persister"]["why"].get<std::string>().find("exited after 4 restarts"), std::string::npos)
      << status.dump();
}

TEST_F(SupervisorTest, TheBackOffResetsOnceAProcessRanStable) {
  Supervisor s(settings_);
  s.watch("worker-1", 0);
  dead_.insert("worker-1");
  ASSERT_EQ(due(s, 0).size(), 1u);
  s.replaced("worker-1", true, 0);
  ASSERT_EQ(due(s, 100 * kMs).size(), 1u);
  s.replaced("worker-1", true, 100 * kMs);
  dead_.clear();
  // It runs and beats for more than stable_ns: the next failure is replaced at once.
  for (uint64_t t = 200; t <= 31'000; t += 100) s.heartbeat("worker-1", 7, t * kMs);
  dead_.insert("worker-1");
  const auto r = due(s, 31'010 * kMs);
  ASSERT_EQ(r.size(), 1u);
}

TEST_F(SupervisorTest, AReplacementByTheOperatorStartsANewGracePeriod) {
  Supervisor s(settings_);
  s.watch("worker-0", 0);
  s.heartbeat("worker-0", 1, 100 * kMs);
  s.restartedElsewhere("worker-0", 1200 * kMs);
  EXPECT_TRUE(due(s, 2500 * kMs).empty());
  EXPECT_EQ(s.restarts(), 0u);
}

}  // namespace
}  // namespace gtpcp::watchdog
