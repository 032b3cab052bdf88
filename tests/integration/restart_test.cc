// A worker process that goes away (restarted by the operator, or killed)
// leaves its sessions in its shared-memory segment: the next worker process
// adopts them, and the subscribers notice nothing beyond a retransmission.
// The emulator runs modify-only (everyone attached, then Modify Bearer only,
// then everyone detached) with a short T3 and enough retransmissions to cover
// the outage, so that any lost session or mistranslation shows as a timeout or
// a mismatch.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>

#include "tests/integration/fixture.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr uint64_t kSubscribers = 400;

class WorkerRestartTest : public DataPathTest {
 protected:
  enum class How { kRestart, kKillThenRestart };

  void run(How how) {
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: " + ip(21) +
                     "}\n      - {name: b, address: " + ip(22) + "}\nrules:\n  - {name: default, pool: internet}\n";
    TestGroup& g = startGroup(o);
    ASSERT_FALSE(HasFailure());

    // T3 200 ms x (1 + 9 retransmissions): two seconds of outage covered.
    testing::PeerRun peer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22}),
                           "--subscribers", std::to_string(kSubscribers), "--mode", "modify-only", "--setup-rate",
                           "2000", "--rate", "400", "--duration", "5", "--t3-ms", "200", "--n3", "9"},
                          g.dir().path());
    // When an assertion ends the test early, the emulator is still bounded
    // and its output reported.
    struct Report {
      testing::PeerRun& peer;
      WorkerRestartTest& test;
      bool done = false;
      ~Report() {
        if (!done) test.note(peer.wait(30s).describe());
      }
    } report{peer, *this};

    // Everyone attached, modifications flowing through worker 0.
    json s;
    ASSERT_TRUE(testing::waitUntil(
        [&] {
          s = g.status();
          return s.value("sessions", 0ull) == kSubscribers;
        },
        10s, 20ms))
        << "not every subscriber attached: " << s.dump(1);
    const uint64_t held = TestGroup::process(s, "worker-0").value("sessions", 0ull);
    ASSERT_GT(held, 0u);
    auto completedOn0 = [&] { return g.counter("worker-0", "worker.transactions_completed"); };
    const uint64_t before = completedOn0();
    ASSERT_TRUE(testing::waitUntil([&] { return completedOn0() >= before + 100; }, 10s, 20ms))
        << "no modifications through worker-0";

    if (how == How::kKillThenRestart) {
      // Killed: the thread watchdog starts another.
      const int pid = g.pidOf("worker-0");
      ASSERT_GT(pid, 0);
      ASSERT_EQ(kill(pid, SIGKILL), 0);
      ASSERT_TRUE(testing::waitUntil(
          [&] {
            const json w = TestGroup::process(g.status(), "worker-0");
            // Its own start counted: the state alone may still be its predecessor's.
            return w.value("state", "") == "serving" && w.value("starts", 0ull) == 2u && !w["pid"].is_null() &&
                   w["pid"].get<int>() != pid;
          },
          10s, 20ms))
          << "worker-0 was not replaced after SIGKILL";
    } else {
      const testing::Output restart = g.gtpcp({"restart", "worker-0"});
      note("$ gtpcp restart worker-0\n" + restart.text);
      ASSERT_EQ(restart.status, 0) << restart.text;
    }

    // The new process adopted its predecessor's sessions.
    s = g.status();
    const json w0 = TestGroup::process(s, "worker-0");
    EXPECT_EQ(w0.value("state", ""), "serving") << w0.dump();
    EXPECT_EQ(w0.value("starts", 0ull), 2u) << w0.dump();
    EXPECT_EQ(w0.value("sessions", 0ull), held) << "sessions lost in the restart: " << w0.dump();
    EXPECT_EQ(TestGroup::process(s, "worker-1").value("starts", 0ull), 1u);
    const uint64_t after = completedOn0();
    EXPECT_TRUE(testing::waitUntil([&] { return completedOn0() >= after + 100; }, 10s, 20ms))
        << "the restarted worker-0 serves no modifications";

    // Every session can still be modified, then deleted.
    const testing::PeerResult r = peer.wait(60s);
    report.done = true;
    note(r.describe());
    EXPECT_EQ(r.status, std::optional<int>(0));
    EXPECT_EQ(r.value("/mismatches/total"), 0u);
    EXPECT_EQ(r.value("/timeouts"), 0u) << "the retransmissions did not cover the restart";
    EXPECT_EQ(r.value("/malformed/total"), 0u);
    EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
    EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
    EXPECT_GT(r.value("/transactions/modify_bearer/completed"), 0u);

    ASSERT_TRUE(testing::waitUntil(
        [&] {
          s = g.status();
          return s.value("sessions", 1ull) == 0;
        },
        5s, 20ms))
        << "sessions held after every subscriber detached: " << s.dump(1);
    EXPECT_EQ(TestGroup::process(s, "worker-0").value("starts", 0ull), 2u);
    EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), kSubscribers);
    EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_deleted"), kSubscribers);
  }
};

TEST_F(WorkerRestartTest, RestartedWorkerAdoptsItsSessionsWhileModificationsFlow) { run(How::kRestart); }

TEST_F(WorkerRestartTest, KilledWorkerRestartedAdoptsItsSessions) { run(How::kKillThenRestart); }

}  // namespace
}  // namespace gtpcp::integration
