// What a peer sees of each restart of a group's processes, planned and
// not: the table of README's "Restarts" rows, printed as FIGURE lines.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string_view>

#include "tests/integration/fixture.h"
#include "tests/support/redis.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;


// What a peer sees of each restart, planned (gtpcp restart) and not
// (SIGKILL, the thread watchdog replacing it): 2,000 subscribers, Modify
// Bearer at 2,000/s from an SGW that retransmits after 1 s up to 3 times,
// sessions in the embedded Redis. Printed as FIGURE lines; asserted: nothing
// lost, and no retransmission for any planned restart.
struct RestartCase {
  const char* name;
  const char* process;
  bool planned;
};

class RestartTable : public DataPathTest, public ::testing::WithParamInterface<RestartCase> {};

TEST_P(RestartTable, WhatThePeersSee) {
  const RestartCase& c = GetParam();
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(testing::freeTcpPort()) + "\n";
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  constexpr int kRestartSubscribers = 2000;
  testing::PeerRun pgw({"--pgw", ip(21), "--proxy", proxy(), "--subscribers", std::to_string(kRestartSubscribers),
                        "--duration", "60"},
                       g.dir().path(), "pgw");
  ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(21), 2123); }, 5s, 10ms));
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kRestartSubscribers),
                        "--mode", "modify-only", "--setup-rate", "2000", "--rate", "2000", "--duration", "6",
                        "--t3-ms", "1000", "--n3", "3"},
                       g.dir().path(), "sgw");
  ASSERT_TRUE(testing::waitUntil([&] { return g.status().value("sessions", 0ull) == kRestartSubscribers; }, 10s,
                                 20ms));
  // Modify Bearer under way: a second's worth completed.
  const auto completed = [&] { return TestGroup::workerSum(g.status(), "worker.transactions_completed"); };
  const uint64_t before = completed();
  ASSERT_TRUE(testing::waitUntil([&] { return completed() >= before + 2000; }, 10s, 20ms)) << "no Modify Bearer load";
  const int pid = g.pidOf(c.process);
  ASSERT_GT(pid, 0);
  if (c.planned) {
    const testing::Output out = g.gtpcp({"restart", c.process});
    ASSERT_EQ(out.status, 0) << out.text;
  } else {
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
  }
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        const json p = TestGroup::process(g.status(), c.process);
        return p.value("state", "") == "serving" && p["pid"].is_number() && p["pid"].get<int>() != pid;
      },
      10s, 20ms))
      << c.process << " was not replaced";
  const testing::PeerResult r = sgw.wait(60s);
  note(r.describe());
  std::cout << "FIGURE: " << c.name << ": " << r.value("/retransmissions") << " retransmissions, "
            << r.value("/timeouts") << " transactions lost\n";
  EXPECT_EQ(r.value("/timeouts"), 0u) << r.describe();
  EXPECT_EQ(r.value("/mismatches/total"), 0u) << r.describe();
  EXPECT_EQ(r.value("/sessions/deleted"), static_cast<uint64_t>(kRestartSubscribers)) << r.describe();
  // A worker's successor adopts its segment and rings, the persister's its
  // ring: the datagrams wait in shared memory, not in the peers' timers. The
  // forwarder's successor takes the very sockets over: they wait in the
  // kernel's buffers.
  if (c.planned) {
    EXPECT_EQ(r.value("/retransmissions"), 0u);
  }
  if (c.planned && std::string_view(c.process) == "forwarder") {
    const json s = g.status();
    EXPECT_EQ(s["counters"].value("forwarder.handovers", 0ull), 1u) << s.dump();
    EXPECT_EQ(s["counters"].value("forwarder.socket_overflows", 0ull), 0u);
    EXPECT_NE(testing::readFile(g.dir().file("run/forwarder.log")).find("handed the sockets over to the successor"),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Restarts, RestartTable,
                         ::testing::Values(RestartCase{"restart worker-0", "worker-0", true},
                                           RestartCase{"worker-0 killed", "worker-0", false},
                                           RestartCase{"restart persister", "persister", true},
                                           RestartCase{"persister killed", "persister", false},
                                           RestartCase{"restart forwarder", "forwarder", true},
                                           RestartCase{"forwarder killed", "forwarder", false}),
                         [](const ::testing::TestParamInfo<RestartCase>& i) {
                           std::string n = std::string(i.param.process) + (i.param.planned ? "Restarted" : "Killed");
                           n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
                           return n;
                         });

}  // namespace
}  // namespace gtpcp::integration
