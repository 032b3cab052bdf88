// The gateways of the routing document as the group sees them: Echo health
// checks that take a dead gateway out of its pool and bring it back when it
// answers, and Create Session failover to the next gateway of the pool when
// a gateway is silent or refuses with a "try another" cause. Real processes,
// the peer emulator for the subscribers, a raw socket for a gateway that
// only answers Echo.
#include <gtest/gtest.h>

#include <signal.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include <string_view>
#include <cctype>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/integration/fixture.h"
#include "tests/support/peer.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr auto kPeerBound = 90s;

// Pool internet of gateways a (ip 21) and b (ip 22), equal weights, and `extra`.
std::string twoGateways(const std::string& a, const std::string& b, const std::string& extra) {
  return "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: " + a +
         "}\n      - {name: b, address: " + b + "}\nrules:\n  - {name: default, pool: internet}\n" + extra;
}

const json* gatewayNamed(const json& status, const std::string& name) {
  for (const json& g : status.at("gateways"))
    if (g.value("name", std::string()) == name) return &g;
  return nullptr;
}

uint64_t workerSum(TestGroup& g, const char* counter) { return TestGroup::workerSum(g.status(), counter); }

// Whether `process`'s log shows a line with every one of `parts`, within a
// bound (the sink is asynchronous).
bool logged(TestGroup& g, const std::string& process, const std::vector<std::string>& parts) {
  return testing::waitUntil(
      [&] {
        const std::string text = testing::readFile(g.runDir() + "/" + process + ".log");
        std::size_t at = 0;
        while (at < text.size()) {
          const std::size_t end = std::min(text.find('\n', at), text.size());
          const std::string_view line(text.data() + at, end - at);
          bool all = true;
          for (const auto& p : parts) all = all && line.find(p) != std::string_view::npos;
          if (all) return true;
          at = end + 1;
        }
        return false;
      },
      5s, 50ms);
}
// The sum of the numbers before `marker` in the lines of the workers' logs
// that have it.
uint64_t summedFromWorkerLogs(TestGroup& g, unsigned workers, const std::string& marker) {
  uint64_t sum = 0;
  for (unsigned w = 0; w < workers; ++w) {
    const std::string text = testing::readFile(g.runDir() + "/worker-" + std::to_string(w) + ".log");
    for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
      std::size_t start = at;
      while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
      if (start < at) sum += std::stoull(text.substr(start, at - start));
    }
  }
  return sum;
}

// Answers the group's Echo Requests on `socket` with Recovery `recovery`
// until `gtpcp status` shows gateway `name` up; false after 5 s.
bool answerEchoUntilUp(TestGroup& g, testing::UdpSocket& socket, const std::string& name, uint8_t recovery) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto echo = socket.receive(100ms)) {
      gtp::v2::Message m;
      EXPECT_TRUE(m.decode(echo->bytes));
      EXPECT_EQ(m.messageType(), gtp::v2::MessageType::kEchoRequest);
      EXPECT_FALSE(m.header().teidPresent());
      EXPECT_TRUE(gtp::v2::readFirst<gtp::v2::Recovery>(m)) << "the group's Recovery";
      std::array<uint8_t, 32> buffer;
      gtp::v2::Builder answer(buffer);
      answer.begin(gtp::v2::MessageType::kEchoResponse, std::nullopt, m.header().sequence_number);
      answer.add(gtp::v2::Recovery{recovery});
      EXPECT_TRUE(socket.sendTo(echo->from, echo->port, *answer.finish()));
    }
    const json s = g.status();
    const json* gw = gatewayNamed(s, name);
    if (gw != nullptr && gw->at("up").get<bool>()) return true;
  }
  return false;
}

TEST_F(DataPathTest, HealthChecksTakeASilentGatewayOutOfItsPoolAndBringItBackWhenItAnswers) {
  TestGroup& g = startGroup(2, twoGateways(ip(21), ip(22), "health_check: {interval_ms: 200, misses: 2}\nfailover: {response_timeout_ms: 0}\n"));
  ASSERT_FALSE(HasFailure());

  // Nothing listens on b: two intervals without an answer and it is down.
  json s;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        s = g.status();
        const json* b = gatewayNamed(s, "b");
        return b != nullptr && !b->at("up").get<bool>();
      },
      5s, 50ms))
      << s.dump(1);
  EXPECT_FALSE(gatewayNamed(s, "a")->at("up").get<bool>()) << "nothing listens on a yet either";
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), 0u);
  // The operator reads it in the log too, with the gateway's name and address.
  EXPECT_TRUE(logged(g, "forwarder", {"gateway b (" + ip(22) + ":2123) down", "2 Echo Requests in a row unanswered"}))
      << testing::tailFile(g.runDir() + "/forwarder.log", 20);

  // A creation meanwhile is refused with No resources available, and the
  // worker that refused it says why (an SGW alone: no PGW emulator answers
  // the Echo Requests meanwhile).
  const auto refused = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--subscribers", "4", "--rate", "100",
                                "--duration", "1", "--cycles", "1", "--expect-cause", "73", "--t3-ms", "1000"},
                               kPeerBound);
  const uint64_t no_gateway = workerSum(g, "worker.no_gateway");
  EXPECT_GE(no_gateway, 4u) << refused.describe();
  bool explained = false;
  for (unsigned w = 0; w < 2 && !explained; ++w)
    explained = logged(g, "worker-" + std::to_string(w), {"a creation refused", "no gateway of pool internet is up"});
  EXPECT_TRUE(explained) << testing::tailFile(g.runDir() + "/worker-0.log", 10)
                         << testing::tailFile(g.runDir() + "/worker-1.log", 10);

  // a answers Echo (from a socket of the test): up at its next interval.
  {
    testing::UdpSocket a(net_.addr(21), 2123);
    EXPECT_TRUE(answerEchoUntilUp(g, a, "a", 7)) << g.status().dump(1);
  }
  // A PGW emulator takes a's address over (well within the two intervals a
  // may miss): every session goes to a, none to the silent b.
  const auto r = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--pgw", ip(21), "--subscribers", "200", "--modify",
                          "1", "--rate", "1000", "--duration", "30", "--cycles", "1", "--t3-ms", "1000"},
                         kPeerBound);
  EXPECT_EQ(r.status, std::optional<int>(0));
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), 200u);
  s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), 200u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.no_gateway"), no_gateway);
  EXPECT_FALSE(gatewayNamed(s, "b")->at("up").get<bool>());

  // b starts answering Echo: it is up again at its next interval.
  testing::UdpSocket b(net_.addr(22), 2123);
  EXPECT_TRUE(answerEchoUntilUp(g, b, "b", 9)) << g.status().dump(1);
  EXPECT_EQ(gatewayNamed(g.status(), "b")->at("recovery"), json(9));
  EXPECT_TRUE(logged(g, "forwarder", {"gateway b (" + ip(22) + ":2123) up again after"}))
      << testing::tailFile(g.runDir() + "/forwarder.log", 20);
}

TEST_F(DataPathTest, CreationsToASilentGatewayFailOverWithinTheSgwsRetransmissionTimer) {
  TestGroup& g = startGroup(2, twoGateways(ip(21), ip(22), "health_check: {interval_ms: 0}\nfailover: {response_timeout_ms: 300}\n"));
  ASSERT_FALSE(HasFailure());

  // b never answers; half the creations go there first, then to a, well
  // before the SGW's T3 (2 s) runs out: the SGW sees one answer, no
  // retransmission.
  constexpr uint64_t kSubscribers = 100;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--pgw", ip(21), "--subscribers",
                          std::to_string(kSubscribers), "--modify", "1", "--rate", "500", "--duration", "30",
                          "--cycles", "1", "--t3-ms", "2000", "--n3", "2"},
                         kPeerBound);
  EXPECT_EQ(r.status, std::optional<int>(0));
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  EXPECT_EQ(r.value("/transactions/create_session/retransmissions"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.summary.at("pgw").at(ip(21)).value("sessions_created", 0ull), kSubscribers);
  const uint64_t timed_out = workerSum(g, "worker.creations_timed_out");
  EXPECT_GT(timed_out, kSubscribers / 4) << "weights 1:1: about half went to b first";
  EXPECT_LT(timed_out, kSubscribers * 3 / 4);
  EXPECT_EQ(workerSum(g, "worker.creations_failed_over"), timed_out);
  EXPECT_EQ(workerSum(g, "worker.creations_exhausted"), 0u);
  // Logged at a bounded rate: a line per second and worker at most, with
  // the count of those held back.
  EXPECT_TRUE(logged(g, "worker-0", {"a creation failed over from gateway b to a"}) ||
              logged(g, "worker-1", {"a creation failed over from gateway b to a"}));
}

TEST_F(DataPathTest, ARefusalListedAsTryAnotherSendsTheCreationToTheNextGateway) {
  TestGroup& g = startGroup(2, twoGateways(ip(21), ip(22), "failover: {try_another: [73]}\n"));
  ASSERT_FALSE(HasFailure());

  constexpr uint64_t kSubscribers = 200;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--pgw", net_.list({21, 22}), "--pgw-cause",
                          ip(22) + "=73", "--subscribers", std::to_string(kSubscribers), "--modify", "1", "--rate",
                          "1000", "--duration", "30", "--cycles", "1"},
                         kPeerBound);
  EXPECT_EQ(r.status, std::optional<int>(0));
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers) << "the SGW never saw b's refusal";
  EXPECT_EQ(r.value("/sessions/rejected"), 0u);
  const uint64_t refused_by_b = r.summary.at("pgw").at(ip(22)).value("sessions_rejected", 0ull);
  EXPECT_GT(refused_by_b, 0u);
  EXPECT_EQ(r.summary.at("pgw").at(ip(21)).value("sessions_created", 0ull), kSubscribers);
  EXPECT_EQ(workerSum(g, "worker.creations_failed_over"), refused_by_b);
}

TEST_F(DataPathTest, APgwRestartWithAThousandSessionsRemovesThemAndTellsTheSgwAtTheConfiguredRate) {
  // 100 notifications per second per worker, a second's worth at once: the
  // thousand sessions take about 4 s to be removed.
  TestGroup& g = startGroup(2, onlyGateway(ip(21), "health_check: {interval_ms: 200, misses: 3, restart_notify_rate: 100}\n"));
  ASSERT_FALSE(HasFailure());
  constexpr uint64_t kSessions = 1000;
  const std::string dir = g.dir().path();

  // The PGW and the SGW in processes of their own: the PGW restarts alone.
  const std::vector<std::string> pgw_args = {"--pgw", ip(21), "--proxy", proxy(), "--subscribers",
                                             std::to_string(kSessions)};
  auto pgw = std::make_unique<testing::PeerRun>(
      [&] { auto a = pgw_args; a.insert(a.end(), {"--recovery", "3"}); return a; }(), dir, "pgw-before");
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSessions), "--mode",
                        "hold", "--setup-rate", "2000", "--duration", "60", "--t3-ms", "1000"},
                       dir, "sgw");
  json s;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        s = g.status();
        const json* gw = gatewayNamed(s, "only");
        // Every session accepted by the PGW, none still being created: a
        // creation that straddles the restart lands on the new PGW and
        // rightly survives it.
        return TestGroup::workerSum(s, "worker.sessions_created") == kSessions &&
               s.value("sessions", 0ull) == kSessions && gw != nullptr && gw->at("recovery") == json(3);
      },
      15s, 50ms))
      << s.dump(1);

  // The PGW restarts: Recovery 3 -> 4.
  ASSERT_EQ(::kill(pgw->pid(), SIGTERM), 0);
  EXPECT_TRUE(pgw->wait(10s).status.has_value());
  pgw = std::make_unique<testing::PeerRun>(
      [&] { auto a = pgw_args; a.insert(a.end(), {"--recovery", "4"}); return a; }(), dir, "pgw-after");
  const auto restarted = std::chrono::steady_clock::now();
  ASSERT_TRUE(testing::waitUntil([&] { return TestGroup::workerSum(g.status(), "worker.gateway_restarts") == 2; },
                                 5s, 20ms))
      << "each worker sees the restart once: " << g.status().dump(1);
  const auto detected = std::chrono::steady_clock::now();
  ASSERT_TRUE(testing::waitUntil([&] { return g.status().value("sessions", 1ull) == 0; }, 20s, 50ms))
      << g.status().dump(1);
  const auto removed = std::chrono::steady_clock::now();
  const double detect_s = std::chrono::duration<double>(detected - restarted).count();
  const double remove_s = std::chrono::duration<double>(removed - detected).count();
  note("restart detected after " + std::to_string(detect_s) + " s, sessions removed in " + std::to_string(remove_s) + " s");
  // 2 workers x (100 at once + 100/s): 1000 sessions need 4 s; less than 3 s
  // would mean no rate limit.
  EXPECT_GT(remove_s, 3.0);

  s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.restart_sessions_removed"), kSessions) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.restart_notifications_sent"), kSessions);
  EXPECT_EQ(gatewayNamed(s, "only")->at("restarts"), json(1));
  // The log says so: the restart with both Recovery values, and what each
  // worker removed.
  EXPECT_TRUE(logged(g, "forwarder", {"gateway only (" + ip(21) + ":2123) restarted: Recovery 3 -> 4"}))
      << testing::tailFile(g.runDir() + "/forwarder.log", 20);
  EXPECT_TRUE(testing::waitUntil(
      [&] { return summedFromWorkerLogs(g, 2, " sessions created before it removed here") == kSessions; }, 5s, 50ms))
      << summedFromWorkerLogs(g, 2, " sessions created before it removed here");
  EXPECT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.own_requests_answered") == kSessions; }, 5s, 50ms))
      << g.status().dump(1);
  // Every SGW session answered for: the hold ends (SIGTERM: no detach).
  ASSERT_EQ(::kill(sgw.pid(), SIGTERM), 0);
  const auto r = sgw.wait(30s);
  note(r.describe());
  EXPECT_EQ(r.status, std::optional<int>(0));
  EXPECT_EQ(r.value("/network_initiated/delete_bearer_requests"), kSessions);
  EXPECT_EQ(r.value("/network_initiated/sessions_deleted_by_network"), kSessions);
  EXPECT_EQ(r.value("/network_initiated/request_causes/8"), kSessions) << "Reactivation requested";
  EXPECT_EQ(r.value("/sessions/up_at_end"), 0u);
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  ::kill(pgw->pid(), SIGTERM);
  pgw->wait(10s);
}

}  // namespace
}  // namespace gtpcp::integration
