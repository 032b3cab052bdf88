// The thread watchdog through the real group under emulator load: a worker
// stopped with SIGSTOP (alive, its loop silent) is replaced within 2 s; the
// forwarder, a worker and the persister killed with SIGKILL in turn are each
// replaced; each process type restarted by the operator; the peers see no
// error (`gtpcp restart` going through the control channel). A forwarder that cannot start (its port
// taken) is retried with back-off, then given up on, and gtpcp status says why.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/support/redis.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

class WatchdogTest : public DataPathTest {
 protected:
  TestGroup& startWatchedGroup(const std::string& extra_yaml = "") {
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
    o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(testing::freeTcpPort()) + "\n";
    o.extra_yaml = extra_yaml;
    return startGroup(o);
  }
  // The emulator's PGW and SGW: `subscribers` attach, then Modify Bearer at
  // 1,000/s for `seconds`, then detach; retransmissions every second, three
  // times (a peer's T3 and N3), so a replacement within that costs nothing.
  void startLoad(int subscribers, int seconds) {
    pgw_ = std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--pgw", ip(21), "--proxy", proxy(), "--subscribers", std::to_string(subscribers),
                                 "--duration", "120"},
        group_->dir().path(), "pgw");
    ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(21), 2123); }, 5s, 10ms)) << "the PGW never bound";
    sgw_ = std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(subscribers),
                                 "--mode", "modify-only", "--setup-rate", "2000", "--rate", "1000", "--duration",
                                 std::to_string(seconds), "--t3-ms", "1000", "--n3", "3"},
        group_->dir().path(), "sgw");
    ASSERT_TRUE(testing::waitUntil(
        [&] { return TestGroup::workerSum(group_->status(), "worker.sessions_created") == uint64_t(subscribers); },
        15s, 20ms));
  }
  // The load's end: no error seen by the SGW; its retransmissions reported.
  void expectNoPeerError(const std::string& what) {
    const testing::PeerResult r = sgw_->wait(90s);
    note(r.describe());
    EXPECT_TRUE(r.ok()) << what;
    EXPECT_EQ(r.value("/timeouts"), 0u) << what;
    EXPECT_EQ(r.value("/mismatches/total"), 0u) << what;
    uint64_t retransmitted = 0;
    if (r.summary.contains("transactions")) {
      for (const auto& [name, t] : r.summary["transactions"].items()) retransmitted += t.value("retransmissions", 0ull);
    }
    std::cout << "FIGURE: " << what << ": the SGW retransmitted " << retransmitted << " requests, "
              << r.value("/timeouts") << " timeouts" << std::endl;
    ::kill(pgw_->pid(), SIGTERM);
    pgw_->wait(30s);
  }
  // Kills `process` with `signal` and waits until another pid of it serves;
  // prints and returns the time that took (ms), -1 if it never did.
  double replaced(const std::string& process, int signal, const std::string& what) {
    const int before = group_->pidOf(process);
    EXPECT_GT(before, 0) << process;
    if (before <= 0) return -1;
    const json before_status = group_->status();
    const uint64_t restarts =
        before_status.contains("watchdog") ? before_status["watchdog"][process].value("restarts", 0ull) : 0;
    const uint64_t starts = TestGroup::process(before_status, process).value("starts", 0ull);
    const auto t0 = Clock::now();
    ::kill(before, signal);
    json s;
    double serving = -1;
    // Serving under another pid, then the watchdog's account of it written.
    const bool ok = testing::waitUntil(
        [&] {
          s = group_->status();
          const json p = TestGroup::process(s, process);
          // Its own start counted: the state alone may still be its predecessor's.
          if (serving < 0 && p.value("state", "") == "serving" && p.value("starts", 0ull) > starts &&
              !p["pid"].is_null() && p["pid"].get<int>() != before)
            serving = msSince(t0);
          return serving >= 0 && s.contains("watchdog") && s["watchdog"][process].value("restarts", 0ull) > restarts;
        },
        15s, 10ms);
    // The watchdog's own account: how long the replacement itself took
    // (kill, start, serving); the rest is detection.
    const double took = s.contains("watchdog") ? s["watchdog"][process].value("last_replacement_ms", 0.0) : 0.0;
    std::cout << "FIGURE: " << what << ": serving again " << serving << " ms after the signal: detected after about "
              << serving - took << " ms, replaced in " << took << " ms" << std::endl;
    EXPECT_TRUE(ok) << process << " was not replaced";
    return serving;
  }
  std::unique_ptr<testing::PeerRun> pgw_, sgw_;
};

TEST_F(WatchdogTest, AStoppedWorkerIsReplacedWithinTwoSecondsUnderLoad) {
  TestGroup& g = startWatchedGroup();
  ASSERT_FALSE(HasFailure());
  startLoad(500, 8);
  ASSERT_FALSE(HasFailure());
  std::this_thread::sleep_for(1s);
  // Silence counts from its last beat (every 100 ms), so about 1 s.
  const double ms = replaced("worker-1", SIGSTOP, "worker-1 stopped (SIGSTOP)");
  EXPECT_GT(ms, 500) << "not long before the watchdog's timeout (1 s)";
  EXPECT_LT(ms, 2000) << "within 2 s";
  expectNoPeerError("worker-1 stopped");
  const json s = g.status();
  ASSERT_TRUE(s.contains("watchdog")) << s.dump(1);
  EXPECT_EQ(s["watchdog"]["worker-1"]["restarts"], 1);
  EXPECT_NE(s["watchdog"]["worker-1"]["last_failure"].get<std::string>().find("silent"), std::string::npos);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.context_not_found"), 0u) << "sessions kept across the replacement";
  // gtpcp status shows how long the group took to start.
  ASSERT_TRUE(s.contains("start_seconds")) << s.dump(1);
  EXPECT_GT(s["start_seconds"].get<double>(), 0.0);
  std::cout << "FIGURE: gtpcp start until every process serves: " << s["start_seconds"].get<double>() << " s"
            << std::endl;
}

TEST_F(WatchdogTest, EachProcessKilledInTurnUnderLoadIsReplacedWithoutAPeerError) {
  TestGroup& g = startWatchedGroup();
  ASSERT_FALSE(HasFailure());
  startLoad(500, 12);
  ASSERT_FALSE(HasFailure());
  for (const std::string process : {"forwarder", "worker-0", "persister"}) {
    std::this_thread::sleep_for(1500ms);
    EXPECT_GE(replaced(process, SIGKILL, process + " killed (SIGKILL)"), 0) << process;
  }
  expectNoPeerError("forwarder, worker-0 and persister killed in turn");
  const json s = g.status();
  for (const std::string process : {"forwarder", "worker-0", "persister"})
    EXPECT_EQ(s["watchdog"][process]["last_failure"], "exited") << process;
  EXPECT_EQ(TestGroup::process(s, "watchdog")["counters"].value("watchdog.restarts", 0ull), 3u);
}

TEST_F(WatchdogTest, TheOperatorsRestartOfEachProcessTypeUnderLoadCostsThePeersNothing) {
  TestGroup& g = startWatchedGroup();
  ASSERT_FALSE(HasFailure());
  startLoad(500, 12);
  ASSERT_FALSE(HasFailure());
  for (const std::string process : {"forwarder", "worker-1", "persister", "watchdog"}) {
    std::this_thread::sleep_for(1500ms);
    const int before = g.pidOf(process);
    const uint64_t starts = TestGroup::process(g.status(), process).value("starts", 0ull);
    const auto t0 = Clock::now();
    const auto out = g.gtpcp({"restart", process});
    const double took = msSince(t0);
    note(out.text);
    EXPECT_EQ(out.status, 0) << process << ": " << out.text;
    // The watchdog executes itself again in its own process (its pid file
    // stays right); the others are new processes.
    if (process == "watchdog") {
      EXPECT_EQ(g.pidOf(process), before);
    } else {
      EXPECT_NE(g.pidOf(process), before) << process;
    }
    EXPECT_GT(TestGroup::process(g.status(), process).value("starts", 0ull), starts) << process;
    std::cout << "FIGURE: gtpcp restart " << process << " under load: " << took << " ms" << std::endl;
  }
  expectNoPeerError("gtpcp restart of each process type");
  const json s = g.status();
  note("---- watchdog.log\n" + testing::readFile(g.dir().file("run/watchdog.log")));
  EXPECT_EQ(TestGroup::process(s, "watchdog")["counters"].value("watchdog.restarts", 0ull), 0u)
      << "the watchdog left the operator's restarts alone";
}

TEST_F(WatchdogTest, AProcessThatCannotStartIsRetriedWithBackOffThenGivenUp) {
  TestGroup& g = startWatchedGroup("watchdog:\n  max_restarts: 3\n");
  ASSERT_FALSE(HasFailure());
  const int forwarder = g.pidOf("forwarder");
  ASSERT_GT(forwarder, 0);
  ::kill(forwarder, SIGKILL);
  // Its port taken as soon as it is free: every replacement fails to bind.
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(2123);
  ::inet_pton(AF_INET, proxy().c_str(), &a.sin_addr);
  ASSERT_TRUE(testing::waitUntil([&] { return ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0; }, 5s, 1ms));
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        const json s = g.status();
        return s.contains("watchdog") && s["watchdog"]["forwarder"].value("state", "") == "given up";
      },
      30s, 50ms))
      << g.status().dump(1);
  // Its replacements are the watchdog's children: their end is named.
  EXPECT_NE(testing::readFile(g.dir().file("run/watchdog.log")).find("forwarder: exited with status "),
            std::string::npos)
      << testing::tailFile(g.dir().file("run/watchdog.log"), 20);
  const json s = g.status();
  note(s.dump(1));
  EXPECT_EQ(s["watchdog"]["forwarder"]["restarts"], 3);
  EXPECT_NE(s["watchdog"]["forwarder"]["why"].get<std::string>().find("after 3 restarts"), std::string::npos);
  // And what the forwarder itself said when it failed to start.
  EXPECT_NE(s["watchdog"]["forwarder"].value("last_error", "").find("in use"), std::string::npos)
      << s["watchdog"].dump(1);
  EXPECT_EQ(TestGroup::process(s, "watchdog")["counters"].value("watchdog.given_up", 0ull), 1u);
  // gtpcp status says so in words too.
  const auto text = g.gtpcp({"status"});
  EXPECT_NE(text.text.find("GIVEN UP"), std::string::npos) << text.text;
  EXPECT_NE(text.text.find("its last start failed with"), std::string::npos) << text.text;
  // Not restarted any more.
  const uint64_t restarts = g.counter("watchdog", "watchdog.restarts");
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(g.counter("watchdog", "watchdog.restarts"), restarts);
  ::close(fd);
}

}  // namespace
}  // namespace gtpcp::integration
