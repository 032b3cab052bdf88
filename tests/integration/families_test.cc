// The group carrying the emulator's traffic over IPv6, and over mixed
// families (IPv6 toward the SGWs, IPv4 toward the PGWs), in a network
// namespace the test makes for itself: the test process moves its thread
// into a new namespace (unshare), brings `lo` up there, adds the IPv6
// addresses to it, and everything it starts (the group, the emulator)
// inherits the namespace; TearDown stops them there and moves back. Nothing
// is configured, and no datagram sent, outside the namespace.
//
// Root only (unshare(CLONE_NEWNET), `ip addr add`): skipped, with the reason,
// when the process is not root or may not make a namespace.
//
// Each test checks the emulator's verdict (it looks for the proxy's address
// of the right family in every control F-TEID, and for the user-plane
// F-TEIDs unchanged in their own family) and the proxy's own counters.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "tests/integration/fixture.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr auto kPeerBound = 60s;  // each run below needs a few seconds
constexpr uint64_t kSubscribers = 400;

// The namespace's IPv6 addresses: the proxy's access and gateway sides, two
// SGWs, two PGWs.
const std::string kAccess6 = "fd00:78::1";
const std::string kGateway6 = "fd00:78::2";
const std::string kSgw6[] = {"fd00:78::11", "fd00:78::12"};
const std::string kPgw6[] = {"fd00:78::21", "fd00:78::22"};

class FamiliesTest : public DataPathTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the test makes a network namespace of its own";
    host_netns_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (host_netns_ < 0) GTEST_SKIP() << "/proc/self/ns/net: " << std::strerror(errno);
    if (::unshare(CLONE_NEWNET) != 0) GTEST_SKIP() << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    in_netns_ = true;
    ipCommand({"link", "set", "lo", "up"});
    for (const std::string& a : {kAccess6, kGateway6, kSgw6[0], kSgw6[1], kPgw6[0], kPgw6[1]})
      ipCommand({"-6", "addr", "add", a + "/128", "dev", "lo", "nodad"});
    if (HasFatalFailure()) return;
    DataPathTest::SetUp();  // the loopback /24, free in a namespace of its own
  }

  void TearDown() override {
    DataPathTest::TearDown();  // stops the group inside the namespace
    if (in_netns_) {
      EXPECT_EQ(::setns(host_netns_, CLONE_NEWNET), 0) << std::strerror(errno);
    }
    if (host_netns_ >= 0) ::close(host_netns_);
  }

  // Runs `ip ARGS...` in the namespace.
  void ipCommand(std::vector<std::string> args) {
    std::string program = testing::findOnPath("ip");
    if (program.empty()) program = "/usr/sbin/ip";
    args.insert(args.begin(), program);
    const auto out = testing::run(args, 10s);
    ASSERT_TRUE(out && out->status == 0) << ::testing::PrintToString(args) << ": " << (out ? out->text : "timed out");
  }

  // Starts a group whose proxy has the addresses of `access` and `gateway`
  // (YAML blocks: "    ipv6: ...\n") and one pool of the two PGWs.
  TestGroup& startGroupOn(const std::string& access, const std::string& gateway, const std::string& pgw1,
                          const std::string& pgw2) {
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: \"" + pgw1 +
                     "\"}\n      - {name: b, address: \"" + pgw2 + "\"}\nrules:\n  - {name: default, pool: internet}\n";
    TestGroup& g = makeGroup(o);
    // TestGroup writes an IPv4 access address only: this proxy's addresses
    // are the test's, the rest as TestGroup has it.
    const std::string config = "group: " + g.group() + "\nrun_dir: " + g.runDir() +
                               "\nworkers: 2\nrouting: routing.yaml\nstorage:\n  mode: off\ngtpc:\n  access:\n" + access +
                               "  gateway:\n" + gateway;
    testing::writeFile(g.configPath(), config);
    note("---- gtpcp.yaml of the namespace's group\n" + config);
    EXPECT_TRUE(g.start()) << "gtpcp start failed";
    return g;
  }

  // `kSubscribers` attach, modify twice and detach through the group, from
  // IPv6 SGWs, to PGWs `pgw1` and `pgw2`, with `extra` options.
  testing::PeerResult runLifecycles(const std::string& pgw1, const std::string& pgw2,
                                    const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--proxy", kAccess6, "--sgw", kSgw6[0] + "," + kSgw6[1], "--pgw",
                                  pgw1 + "," + pgw2, "--allow-non-loopback", "--subscribers",
                                  std::to_string(kSubscribers), "--modify", "2", "--rate", "2000", "--duration",
                                  "30", "--cycles", "1", "--t3-ms", "2000"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runPeer(args, kPeerBound);
  }

  int host_netns_ = -1;
  bool in_netns_ = false;
};

// "ADDR:2123" or "[ADDR]:2123", as the emulator names its sockets.
std::string atGtpcPort(const std::string& address) {
  return (address.find(':') == std::string::npos ? address : "[" + address + "]") + ":2123";
}

// The emulator's verdict: every subscriber's cycle done, every check passed,
// the sessions split over both PGWs, its nodes on the addresses given.
void expectEveryCycleClean(const testing::PeerResult& r, const std::string& pgw1, const std::string& pgw2) {
  EXPECT_EQ(r.status, std::optional<int>(0)) << "gtpcp-peer failed (see its summary)";
  EXPECT_EQ(r.value("/mismatches/total"), 0u) << r.summary.value("mismatches", json()).dump();
  EXPECT_EQ(r.value("/malformed/total"), 0u);
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/outstanding_at_end"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/rejected"), 0u);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/up_at_end"), 0u);
  EXPECT_EQ(r.value("/transactions/create_session/completed"), kSubscribers);
  EXPECT_EQ(r.value("/transactions/modify_bearer/completed"), 2 * kSubscribers);
  EXPECT_EQ(r.value("/transactions/delete_session/completed"), kSubscribers);
  // The split comes from the user-plane F-TEIDs: they kept the PGWs' family.
  const uint64_t at1 = r.value("/split/" + pgw1), at2 = r.value("/split/" + pgw2);
  EXPECT_EQ(at1 + at2, kSubscribers);
  EXPECT_GT(at1, 0u);
  EXPECT_GT(at2, 0u);
  for (const std::string& pgw : {pgw1, pgw2}) {
    const json p = r.summary.value("pgw", json::object()).value(pgw, json::object());
    EXPECT_EQ(p.value("context_not_found", 1ull), 0u) << pgw;
    EXPECT_EQ(p.value("sessions_up", 1ull), 0u) << pgw;
  }
  std::vector<std::string> sockets;
  for (const json& s : r.summary.value("socket", json::object()).value("sockets", json::array()))
    sockets.push_back(s.value("local", ""));
  EXPECT_EQ(sockets, (std::vector<std::string>{atGtpcPort(kSgw6[0]), atGtpcPort(kSgw6[1]), atGtpcPort(pgw1),
                                               atGtpcPort(pgw2)}));
}

// The proxy's counters once the last answer has left: every session it
// made deleted, every datagram in one out, none undecodable or expired;
// messages copied to change an F-TEID's family `rewritten` (at least).
void expectProxyCarried(TestGroup& g, uint64_t rewritten) {
  json s;
  testing::waitUntil(
      [&] {
        s = g.status();
        const json& c = s.at("counters");
        return s.value("sessions", 1ull) == 0 &&
               c.value("forwarder.datagrams_received", 0ull) - c.value("forwarder.echo_responses", 0ull) ==
                   c.value("forwarder.datagrams_sent", 0ull) - c.value("forwarder.echo_requests_sent", 0ull);
      },
      5s, 20ms);
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  EXPECT_EQ(s.value("sessions", 1ull), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), kSubscribers);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_deleted"), kSubscribers);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.transactions_expired"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.decode_errors"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.rejections_sent"), 0u);
  if (rewritten == 0) {
    EXPECT_EQ(TestGroup::workerSum(s, "worker.messages_rewritten"), 0u)
        << "F-TEIDs of the leg's family are patched in place";
  } else {
    EXPECT_GE(TestGroup::workerSum(s, "worker.messages_rewritten"), rewritten);
  }
  const json& c = s.at("counters");
  // Four transactions per subscriber, each crossing the proxy twice each way.
  EXPECT_EQ(c.value("forwarder.datagrams_received", 0ull) - c.value("forwarder.echo_responses", 0ull),
            8 * kSubscribers);
  EXPECT_EQ(c.value("forwarder.datagrams_sent", 0ull) - c.value("forwarder.echo_requests_sent", 0ull),
            8 * kSubscribers);
  EXPECT_EQ(c.value("forwarder.send_errors", 0ull), 0u);
  EXPECT_EQ(c.value("forwarder.dropped_not_gtp", 0ull), 0u);
}

TEST_F(FamiliesTest, Ipv6OnBothLegsCarriesEveryLifecycle) {
  TestGroup& g =
      startGroupOn("    ipv6: \"" + kAccess6 + "\"\n", "    ipv6: \"" + kGateway6 + "\"\n", kPgw6[0], kPgw6[1]);
  ASSERT_FALSE(HasFailure());
  const auto r = runLifecycles(kPgw6[0], kPgw6[1], {"--proxy-gateway", kGateway6});
  expectEveryCycleClean(r, kPgw6[0], kPgw6[1]);
  EXPECT_EQ(r.value("/retransmissions"), 0u);
  expectProxyCarried(g, 0);
}

TEST_F(FamiliesTest, Ipv6TowardTheSgwsAndIpv4TowardThePgwsCarriesEveryLifecycle) {
  TestGroup& g = startGroupOn("    ipv6: \"" + kAccess6 + "\"\n", "    ipv4: " + proxy() + "\n", ip(21), ip(22));
  ASSERT_FALSE(HasFailure());
  const auto r = runLifecycles(ip(21), ip(22), {"--proxy-gateway", proxy()});
  expectEveryCycleClean(r, ip(21), ip(22));
  EXPECT_EQ(r.value("/retransmissions"), 0u);
  // Each Create Session Request and Response has its control F-TEID written
  // anew in the other family.
  expectProxyCarried(g, 2 * kSubscribers);
}

}  // namespace
}  // namespace gtpcp::integration
