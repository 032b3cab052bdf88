// The group's control channel through the real processes: `gtpcp stop` with
// transactions open (every one answered, creations meanwhile refused with
// cause 73), SIGTERM to the watchdog doing the same, `gtpcp drain` refusing
// creations while established sessions go on, `gtpcp reload` applying a new
// routing document to every process (and to a process started after it) and
// refusing a bad one, and status read over the channel or, without the
// watchdog, from shared memory.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <iostream>
#include <regex>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/support/redis.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class LifecycleTest : public DataPathTest {
 protected:
  TestGroup& startEmbedded(unsigned workers, const std::string& routing, const std::string& extra = "") {
    testing::GroupOptions o;
    o.workers = workers;
    o.routing_yaml = routing;
    o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(testing::freeTcpPort()) + "\n";
    o.extra_yaml = extra;
    return startGroup(o);
  }
  std::unique_ptr<testing::PeerRun> startPgw(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--proxy", proxy(), "--subscribers", "4000", "--duration", "120"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto pgw = std::make_unique<testing::PeerRun>(args, group_->dir().path(), "pgw");
    EXPECT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(21), 2123); }, 5s, 10ms)) << "the PGW never bound";
    return pgw;
  }
  // SGW `host` attaching `subscribers` from IMSI `imsi` at `rate`/s and
  // holding them `seconds` (no detach); cause 73 is an expected answer.
  std::unique_ptr<testing::PeerRun> startHold(uint8_t host, int subscribers, const std::string& imsi, int rate,
                                              double seconds, const std::string& name) {
    return std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--sgw", ip(host), "--proxy", proxy(), "--subscribers", std::to_string(subscribers),
                                 "--imsi-start", imsi, "--mode", "hold", "--setup-rate", std::to_string(rate),
                                 "--rate", std::to_string(rate), "--duration", std::to_string(seconds),
                                 "--expect-cause", "73"},
        group_->dir().path(), name);
  }
  static uint64_t cause(const testing::PeerResult& r, int cause) {
    return r.summary.contains("causes") ? r.summary["causes"].value(std::to_string(cause), 0ull) : 0;
  }
  bool allStopped(TestGroup& g) {
    for (const std::string p : {"forwarder", "worker-0", "worker-1", "persister", "console", "watchdog"})
      if (g.pidOf(p) != 0) return false;
    return true;
  }
};

TEST_F(LifecycleTest, StopWithOpenTransactionsAnswersEveryOneAndRefusesNewSessions) {
  TestGroup& g = startEmbedded(2, onlyGateway(ip(21), kNoHealthChecks));
  ASSERT_FALSE(HasFailure());
  // The PGW answers 1.5 s late: every creation sent in the first second is
  // still open when the stop begins.
  auto pgw = startPgw({"--pgw", ip(21), "--pgw-delay-ms", ip(21) + "=1500"});
  ASSERT_FALSE(HasFailure());
  auto sgw = startHold(11, 400, "001010000100001", 1000, 30, "sgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.transactions_pending") >= 300; }, 10s, 10ms))
      << g.status().dump(1);
  const auto t0 = Clock::now();
  auto stopping = std::async(std::launch::async, [&] { return g.gtpcp({"stop"}); });
  // While it drains: a second SGW's creations get cause 73.
  std::this_thread::sleep_for(300ms);
  auto late = startHold(12, 20, "001010000900001", 200, 0.5, "sgw-late");
  const testing::PeerResult late_result = late->wait(30s);
  note(late_result.describe());
  const testing::Output out = stopping.get();
  const double took = secondsSince(t0);
  note(out.text);
  EXPECT_EQ(out.status, 0) << out.text;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out.text, m, std::regex(R"(drained in ([0-9.]+) s: (\d+) transactions were open, (\d+) left unanswered)")))
      << out.text;
  const uint64_t open = std::stoull(m[2]);
  EXPECT_GE(open, 300u) << "the stop began with the creations open";
  EXPECT_EQ(std::stoull(m[3]), 0u) << "every open transaction answered";
  EXPECT_GT(took, 0.5) << "the stop waited for the PGW's late answers";
  EXPECT_LT(took, 5.0) << "within watchdog.stop_drain_ms";
  EXPECT_TRUE(allStopped(g));
  std::cout << "FIGURE: gtpcp stop with " << open << " transactions open: drained in " << m[1] << " s, group stopped in "
            << took << " s" << std::endl;

  ::kill(sgw->pid(), SIGTERM);
  const testing::PeerResult r = sgw->wait(30s);
  note(r.describe());
  EXPECT_EQ(r.value("/timeouts"), 0u) << "no transaction left unanswered";
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  EXPECT_EQ(r.value("/sessions/created") + cause(r, 73), 400u) << "each attach answered: created, or refused with 73";
  EXPECT_GE(r.value("/sessions/created"), open);
  EXPECT_EQ(late_result.value("/timeouts"), 0u);
  EXPECT_EQ(cause(late_result, 73), 20u) << "creations during the stop get No resources available";
  ::kill(pgw->pid(), SIGTERM);
  pgw->wait(30s);
}

TEST_F(LifecycleTest, SigtermToTheWatchdogDrainsAndStopsTheGroup) {
  TestGroup& g = startEmbedded(2, onlyGateway(ip(21), kNoHealthChecks));
  ASSERT_FALSE(HasFailure());
  auto pgw = startPgw({"--pgw", ip(21), "--pgw-delay-ms", ip(21) + "=800"});
  auto sgw = startHold(11, 100, "001010000200001", 1000, 30, "sgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.transactions_pending") >= 50; }, 10s, 10ms));
  const int watchdog = g.pidOf("watchdog");
  ASSERT_GT(watchdog, 0);
  const auto t0 = Clock::now();
  ASSERT_EQ(::kill(watchdog, SIGTERM), 0);
  EXPECT_TRUE(testing::waitUntil([&] { return allStopped(g); }, 10s, 10ms)) << g.status().dump(1);
  std::cout << "FIGURE: SIGTERM to the watchdog with transactions open: group stopped in " << secondsSince(t0) << " s"
            << std::endl;
  std::ifstream log(g.runDir() + "/watchdog.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("0 left unanswered"), std::string::npos) << text;
  ::kill(sgw->pid(), SIGTERM);
  const testing::PeerResult r = sgw->wait(30s);
  note(r.describe());
  EXPECT_EQ(r.value("/timeouts"), 0u) << "no transaction left unanswered";
  EXPECT_EQ(r.value("/sessions/created") + cause(r, 73), 100u) << "each attach answered: created, or refused with 73";
  EXPECT_GE(r.value("/sessions/created"), 50u);
  ::kill(pgw->pid(), SIGTERM);
  pgw->wait(30s);
}

TEST_F(LifecycleTest, DrainRefusesNewSessionsWhileEstablishedOnesGoOn) {
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  auto pgw = startPgw({"--pgw", ip(21)});
  // Established subscribers modify at 500/s throughout.
  auto sgw = std::make_unique<testing::PeerRun>(
      std::vector<std::string>{"--sgw", ip(11), "--proxy", proxy(), "--subscribers", "200", "--mode", "modify-only",
                               "--setup-rate", "2000", "--rate", "500", "--duration", "4"},
      g.dir().path(), "sgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == 200u; }, 10s, 10ms));
  const auto drain = g.gtpcp({"drain"});
  note(drain.text);
  EXPECT_EQ(drain.status, 0) << drain.text;
  EXPECT_NE(drain.text.find("draining"), std::string::npos) << drain.text;
  json s = g.status();
  EXPECT_TRUE(s.value("draining", false)) << s.dump(1);
  EXPECT_EQ(s.value("via", ""), "control channel");
  const uint64_t completed = TestGroup::workerSum(s, "worker.transactions_completed");
  auto refused = startHold(12, 20, "001010000900001", 200, 0.3, "sgw-refused");
  const testing::PeerResult rr = refused->wait(30s);
  note(rr.describe());
  EXPECT_EQ(cause(rr, 73), 20u);
  EXPECT_EQ(rr.value("/timeouts"), 0u);
  s = g.status();
  EXPECT_GT(TestGroup::workerSum(s, "worker.transactions_completed"), completed + 100)
      << "established sessions kept being modified during the drain";
  EXPECT_EQ(s["counters"].value("forwarder.rejected_draining", 0ull), 20u);
  EXPECT_NE(g.gtpcp({"status"}).text.find("DRAINING"), std::string::npos);

  EXPECT_EQ(g.gtpcp({"drain", "--off"}).status, 0);
  EXPECT_FALSE(g.status().value("draining", true));
  auto accepted = startHold(12, 20, "001010000950001", 200, 0.3, "sgw-accepted");
  const testing::PeerResult ra = accepted->wait(30s);
  note(ra.describe());
  EXPECT_EQ(ra.value("/sessions/created"), 20u) << "creations accepted again";
  const testing::PeerResult r = sgw->wait(30s);
  note(r.describe());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.value("/timeouts"), 0u);
  ::kill(pgw->pid(), SIGTERM);
  pgw->wait(30s);
}

TEST_F(LifecycleTest, ReloadAppliesANewRoutingDocumentEverywhereAndRefusesABadOne) {
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  auto pgw = startPgw({"--pgw", ip(21) + "," + ip(22)});
  ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(22), 2123); }, 5s, 10ms));
  auto before = startHold(11, 50, "001010000300001", 500, 0.3, "sgw-before");
  EXPECT_EQ(before->wait(30s).value("/sessions/created"), 50u);

  const std::string next = g.dir().path() + "/routing-next.yaml";
  std::ofstream(next) << onlyGateway(ip(22), kNoHealthChecks);
  const auto t0 = Clock::now();
  const auto reload = g.gtpcp({"reload", "--routing", next});
  const double took = secondsSince(t0);
  note(reload.text);
  ASSERT_EQ(reload.status, 0) << reload.text;
  EXPECT_NE(reload.text.find("applied in"), std::string::npos) << reload.text;
  for (const std::string p : {"forwarder", "worker-0", "worker-1"})
    EXPECT_TRUE(std::regex_search(reload.text, std::regex(p + " +applied version"))) << p << ": " << reload.text;
  std::cout << "FIGURE: gtpcp reload applied by every process in " << took << " s" << std::endl;
  json s = g.status();
  EXPECT_EQ(s["routing"]["path"], next);
  const std::string version = s["routing"]["processes"]["forwarder"]["version"];
  auto after = startHold(12, 50, "001010000400001", 500, 0.3, "sgw-after");
  EXPECT_EQ(after->wait(30s).value("/sessions/created"), 50u);

  // A worker started after the reload runs the document in force, not the
  // configuration's.
  EXPECT_EQ(g.gtpcp({"restart", "worker", "1"}).status, 0);
  s = g.status();
  EXPECT_EQ(s["routing"]["processes"]["worker-1"]["version"], version) << s["routing"].dump(1);

  // A document that does not load: refused with its file and key named; the
  // one in force stays.
  const std::string bad = g.dir().path() + "/routing-bad.yaml";
  std::ofstream(bad) << "version: 1\npools:\n  internet:\n    gateways:\n      - {name: only, address: " << ip(23)
                     << "}\nrules:\n  - {name: default, pool: nowhere}\n";
  const auto refused = g.gtpcp({"reload", "--routing", bad});
  note(refused.text);
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.text.find("routing-bad.yaml"), std::string::npos) << refused.text;
  EXPECT_NE(refused.text.find("nowhere"), std::string::npos) << refused.text;
  s = g.status();
  EXPECT_EQ(s["routing"]["path"], next);
  EXPECT_EQ(s["routing"]["processes"]["worker-0"]["version"], version);

  ::kill(pgw->pid(), SIGTERM);
  testing::PeerResult p = pgw->wait(30s);
  note(p.describe());
  EXPECT_EQ(p.summary["pgw"][ip(21)]["requests"].value("create_session", 0ull), 50u) << p.summary.dump(1);
  EXPECT_EQ(p.summary["pgw"][ip(22)]["requests"].value("create_session", 0ull), 50u) << p.summary.dump(1);
}

TEST_F(LifecycleTest, StatusComesFromSharedMemoryWhenTheWatchdogIsGone) {
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(g.status().value("via", ""), "control channel");
  const int watchdog = g.pidOf("watchdog");
  ASSERT_GT(watchdog, 0);
  ::kill(watchdog, SIGKILL);
  ASSERT_TRUE(testing::waitUntil([&] { return g.pidOf("watchdog") == 0; }, 5s, 10ms));
  const json s = g.status();
  EXPECT_NE(s.value("via", "").find("shared memory"), std::string::npos) << s.dump(1);
  EXPECT_EQ(TestGroup::process(s, "worker-0").value("state", ""), "serving");
  // Commands that need the control server say so.
  const auto drain = g.gtpcp({"drain"});
  EXPECT_NE(drain.status, 0);
  EXPECT_NE(drain.text.find("not running"), std::string::npos) << drain.text;
  // The operator's restart brings it back.
  EXPECT_EQ(g.gtpcp({"restart", "watchdog"}).status, 0);
  EXPECT_EQ(g.status().value("via", ""), "control channel");
}

}  // namespace
}  // namespace gtpcp::integration
