// The emulator's options as makeRunConfig() checks them, for what depends on
// address families: nodes and the proxy of either family, one proxy address
// per family, and each node paired with the proxy's address of its own; and
// the procedures beyond attach, modify and detach, with what each needs;
// a failover's addresses; GTPv1's nodes and options.
#include "tools/peer/config.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace gtpcp::peer {
namespace {

IpAddress address(const std::string& text) {
  IpAddress a;
  EXPECT_TRUE(parseAddress(text, a)) << text;
  return a;
}

// Options of a run on the IPv6 addresses of a test's network namespace.
PeerOptions ipv6Options() {
  PeerOptions o;
  o.proxy = {"fd00:77::1"};
  o.sgw = {"fd00:77::11", "fd00:77::12"};
  o.pgw = {"fd00:77::21"};
  o.allow_non_loopback = true;
  return o;
}

// The problems makeRunConfig() finds, one string.
std::string problems(const PeerOptions& o, RunConfig& c) {
  std::string text;
  for (const auto& e : makeRunConfig(o, c)) text += e + "\n";
  return text;
}

TEST(Config, Ipv6OnBothSides) {
  RunConfig c;
  ASSERT_EQ(problems(ipv6Options(), c), "");
  ASSERT_EQ(c.access_binds.size(), 2u);
  EXPECT_EQ(c.access_binds[0], (Endpoint{address("fd00:77::11"), kGtpcPort}));
  EXPECT_EQ(c.gateway_binds[0], (Endpoint{address("fd00:77::21"), kGtpcPort}));
  ASSERT_EQ(c.sgw.nodes.size(), 2u);
  for (const auto& n : c.sgw.nodes)
    EXPECT_EQ(n.proxy, (Endpoint{address("fd00:77::1"), kGtpcPort}));
  ASSERT_EQ(c.pgw.nodes.size(), 1u);
  EXPECT_EQ(c.pgw.nodes[0].proxy_gateway, address("fd00:77::1"));
  ASSERT_EQ(c.sgw.local_pgws.size(), 1u);
  EXPECT_EQ(c.sgw.local_pgws[0], address("fd00:77::21"));
}

TEST(Config, MixedFamiliesPairEachNodeWithTheProxysAddressOfItsFamily) {
  PeerOptions o = ipv6Options();
  o.proxy = {"[fd00:77::1]:2124"};
  o.proxy_gateway = {"127.77.7.2"};
  o.pgw = {"127.77.7.21"};
  o.pgw_cause = {"127.77.7.21=73"};
  RunConfig c;
  ASSERT_EQ(problems(o, c), "");
  EXPECT_EQ(c.sgw.nodes[0].proxy, (Endpoint{address("fd00:77::1"), 2124}));
  EXPECT_EQ(c.pgw.nodes[0].proxy_gateway, address("127.77.7.2"));
  EXPECT_EQ(c.pgw.nodes[0].reject_cause, 73);

  // A dual-stack proxy: SGWs of both families, each to its own.
  o.proxy = {"127.77.7.1", "fd00:77::1"};
  o.proxy_gateway = {};
  o.sgw = {"127.77.7.11", "fd00:77::11"};
  o.pgw = {"127.77.7.21", "fd00:77::21"};
  o.pgw_cause = {"fd00:77::21=94"};
  ASSERT_EQ(problems(o, c), "");
  EXPECT_EQ(c.sgw.nodes[0].proxy, (Endpoint{address("127.77.7.1"), kGtpcPort}));
  EXPECT_EQ(c.sgw.nodes[1].proxy, (Endpoint{address("fd00:77::1"), kGtpcPort}));
  EXPECT_EQ(c.pgw.nodes[0].proxy_gateway, address("127.77.7.1"));
  EXPECT_EQ(c.pgw.nodes[1].proxy_gateway, address("fd00:77::1"));
  EXPECT_EQ(c.pgw.nodes[1].reject_cause, 94);
}

TEST(Config, EveryFamilyProblemIsNamed) {
  RunConfig c;
  PeerOptions o = ipv6Options();
  o.proxy = {"127.0.0.1"};
  EXPECT_NE(problems(o, c).find("--sgw: fd00:77::11 is IPv6 and --proxy has no IPv6 address"),
            std::string::npos)
      << problems(o, c);
  EXPECT_NE(problems(o, c).find(
                "--pgw: fd00:77::21 is IPv6 and the proxy's gateway side (--proxy) has no IPv6"),
            std::string::npos)
      << problems(o, c);

  o = ipv6Options();
  o.proxy_gateway = {"127.0.0.1"};
  EXPECT_NE(problems(o, c).find("(--proxy-gateway) has no IPv6 address"), std::string::npos)
      << problems(o, c);
  // Through a relay the PGWs check no proxy address.
  o.relay = true;
  EXPECT_EQ(problems(o, c), "");

  o = ipv6Options();
  o.proxy = {"fd00:77::1", "[fd00:77::2]:2123"};
  EXPECT_NE(problems(o, c).find("--proxy: one IPv6 address at most"), std::string::npos)
      << problems(o, c);
  o = ipv6Options();
  o.proxy_gateway = {"127.0.0.1", "127.0.0.2"};
  EXPECT_NE(problems(o, c).find("--proxy-gateway: one IPv4 address at most"), std::string::npos)
      << problems(o, c);

  // Outside the loopback addresses (127.0.0.0/8, ::1) only when allowed.
  o = ipv6Options();
  o.allow_non_loopback = false;
  const std::string text = problems(o, c);
  for (const char* option : {"--proxy: fd00:77::1", "--sgw: fd00:77::11", "--pgw: fd00:77::21"})
    EXPECT_NE(text.find(std::string(option) + " is not a loopback address"), std::string::npos)
        << text;
  o.proxy = {"[::1]:2124"};
  o.sgw = {"::1"};
  o.pgw = {};
  EXPECT_EQ(problems(o, c), "");

  o = ipv6Options();
  o.sgw = {"fd00:77::11%lo"};
  EXPECT_NE(problems(o, c).find("'fd00:77::11%lo' is not an IPv4 or IPv6 address"),
            std::string::npos);
  o = ipv6Options();
  o.proxy = {"fd00:77::1:2124"};  // a port needs brackets: this is an address
  EXPECT_EQ(problems(o, c), "");
  EXPECT_EQ(c.sgw.nodes[0].proxy, (Endpoint{address("fd00:77::1:2124"), kGtpcPort}));
  o.sgw = {"fd00:77::11", "fd00:77:0::11"};
  EXPECT_NE(problems(o, c).find("--sgw: fd00:77:0::11 given twice"), std::string::npos)
      << problems(o, c);
}

TEST(Config, MoreProceduresWithWhatEachNeeds) {
  PeerOptions o;
  o.proxy = {"127.0.0.1"};
  o.sgw = {"127.0.0.11"};
  o.pgw = {"127.0.0.21"};
  o.dedicated_bearer = true;
  o.piggyback = true;
  o.commands = true;
  o.unknown_teid = 100;
  o.seed = 9;
  RunConfig c;
  ASSERT_EQ(problems(o, c), "");
  EXPECT_TRUE(c.sgw.dedicated_bearer);
  EXPECT_TRUE(c.sgw.commands);
  EXPECT_EQ(c.sgw.unknown_teid, 100u);
  EXPECT_EQ(c.sgw.probe_seed, 9u);
  EXPECT_TRUE(c.pgw.dedicated_bearer);
  EXPECT_TRUE(c.pgw.piggyback);
  EXPECT_TRUE(c.pgw.commands);
  EXPECT_EQ(c.pgw.t3_ns, c.t3_ns);
  EXPECT_EQ(c.pgw.sequence_seed & kCommandBit, 0u);

  auto expectProblem = [&](const PeerOptions& bad, const std::string& text) {
    RunConfig ignored;
    const std::string found = problems(bad, ignored);
    EXPECT_NE(found.find(text), std::string::npos) << "expected '" << text << "' in:\n" << found;
  };
  PeerOptions bad = o;
  bad.dedicated_bearer = false;
  expectProblem(bad, "--piggyback: needs --dedicated-bearer");
  bad = o;
  bad.pgw = {};
  expectProblem(bad, "--piggyback: the PGWs piggyback");
  bad = o;
  bad.relay = true;
  expectProblem(bad, "--relay: --dedicated-bearer, --commands and --unknown-teid need a proxy");
  bad = o;
  bad.sgw = {};
  bad.piggyback = false;
  expectProblem(bad, "--unknown-teid: the SGWs probe");
  bad = o;
  bad.mode = "hold";
  expectProblem(bad, "--commands: --mode lifecycle only");
  expectProblem(bad, "--unknown-teid: --mode lifecycle only");
  bad = o;
  bad.unknown_teid = 1'000'001;
  expectProblem(bad, "--unknown-teid: at most 1000000");
  // A PGW-only process answers commands and starts dedicated bearers.
  bad = o;
  bad.sgw = {};
  bad.unknown_teid = 0;
  EXPECT_EQ(problems(bad, c), "");
}


// --failover-to: one address per family, given to the nodes of that family
// for their checks; the proxy's configured addresses are the ones to move.
TEST(Config, FailoverAddressPerFamily) {
  PeerOptions o = ipv6Options();
  RunConfig c;
  ASSERT_EQ(problems(o, c), "");
  EXPECT_FALSE(c.failover.enabled());
  EXPECT_FALSE(c.sgw.nodes[0].failover);
  EXPECT_FALSE(c.pgw.nodes[0].failover_gateway);

  o.proxy = {"127.77.7.1", "fd00:77::1"};
  o.proxy_gateway = {"127.77.7.3"};
  o.sgw = {"127.77.7.11", "fd00:77::11"};
  o.pgw = {"127.77.7.21"};
  o.failover_to = {"127.77.7.2", "fd00:77::2"};
  o.failover_after = 2.5;
  ASSERT_EQ(problems(o, c), "");
  EXPECT_TRUE(c.failover.enabled());
  EXPECT_EQ(c.failover.to_v4, std::optional<IpAddress>(address("127.77.7.2")));
  EXPECT_EQ(c.failover.to_v6, std::optional<IpAddress>(address("fd00:77::2")));
  EXPECT_DOUBLE_EQ(c.failover.after_s, 2.5);
  EXPECT_EQ(c.failover.proxy.size(), 3u);  // both sides
  EXPECT_EQ(c.sgw.nodes[0].failover, c.failover.to_v4);
  EXPECT_EQ(c.sgw.nodes[1].failover, c.failover.to_v6);
  EXPECT_EQ(c.pgw.nodes[0].failover_gateway, c.failover.to_v4);
}

TEST(Config, EveryFailoverProblemIsNamed) {
  auto with = [](std::vector<std::string> to, double after = -1) {
    PeerOptions o;
    o.proxy = {"127.77.7.1"};
    o.sgw = {"127.77.7.11"};
    o.pgw = {"127.77.7.21"};
    o.failover_to = std::move(to);
    o.failover_after = after;
    RunConfig c;
    return problems(o, c);
  };
  EXPECT_EQ(with({"127.77.7.2"}), "");
  EXPECT_EQ(with({"127.77.7.2"}, 0), "");
  EXPECT_NE(with({"127.77.7.2", "127.77.7.4"}).find("one IPv4 address at most"), std::string::npos);
  EXPECT_NE(with({"::1"}).find("has no IPv6 address"), std::string::npos);
  EXPECT_NE(with({"10.1.1.1"}).find("not a loopback address"), std::string::npos);
  EXPECT_NE(with({"127.77.7.1"}).find("the proxy's own address"), std::string::npos);
  EXPECT_NE(with({"127.77.7.21"}).find("an emulated node's address"), std::string::npos);
  EXPECT_NE(with({"127.77.7.2:2124"}).find("no port"), std::string::npos);
  EXPECT_NE(with({}, 1).find("--failover-after: needs --failover-to"), std::string::npos);
  EXPECT_NE(with({"127.77.7.2"}, 8 * 86400).find("at most a week"), std::string::npos);
}

}  // namespace
}  // namespace gtpcp::peer

namespace gtpcp::peer {
namespace {

// GTPv1: SGSNs and GGSNs with the options of their own, and nothing of the
// other version beside them.
TEST(Config, GtpV1NodesAndTheirOptions) {
  PeerOptions o;
  o.proxy = {"127.0.0.1"};
  o.proxy_gateway = {"127.0.0.2"};
  o.sgsn = {"127.0.0.11", "127.0.0.12"};
  o.ggsn = {"127.0.0.21"};
  o.secondary = 2;
  o.network_initiated = 0.25;
  o.ggsn_cause = {"127.0.0.21=199"};
  o.ggsn_drop = {"127.0.0.21=0.1"};
  o.expect_cause = {210};
  o.modify = 3;
  RunConfig c;
  ASSERT_EQ(problems(o, c), "");
  EXPECT_EQ(c.version, 1);
  EXPECT_TRUE(c.sgsn_role && c.ggsn_role);
  EXPECT_FALSE(c.sgw_role || c.pgw_role);
  ASSERT_EQ(c.access_binds.size(), 2u);
  EXPECT_EQ(c.access_binds[1], (Endpoint{address("127.0.0.12"), kGtpcPort}));
  ASSERT_EQ(c.sgsn.nodes.size(), 2u);
  EXPECT_EQ(c.sgsn.nodes[1].socket, 1u);
  EXPECT_EQ(c.sgsn.nodes[0].proxy, (Endpoint{address("127.0.0.1"), kGtpcPort}));
  EXPECT_EQ(c.sgsn.secondaries, 2u);
  EXPECT_EQ(c.sgsn.modifies, 3u);
  EXPECT_TRUE(c.sgsn.expected_rejections.test(199));
  EXPECT_TRUE(c.sgsn.expected_rejections.test(210));
  EXPECT_LE(c.sgsn.sequence_seed, 0xffffu);
  ASSERT_EQ(c.ggsn.nodes.size(), 1u);
  EXPECT_EQ(c.ggsn.nodes[0].socket, 2u);
  EXPECT_EQ(c.ggsn.nodes[0].proxy_gateway, address("127.0.0.2"));
  EXPECT_EQ(c.ggsn.nodes[0].reject_cause, 199);
  EXPECT_EQ(c.ggsn.nodes[0].drop, 0.1);
  EXPECT_EQ(c.ggsn.secondaries, 2u);
  EXPECT_EQ(c.ggsn.modifies, 3u);
  EXPECT_EQ(c.ggsn.network_initiated, 0.25);
  EXPECT_LE(c.ggsn.sequence_seed, 0xffffu);

  auto expectProblem = [](PeerOptions bad, const std::string& text) {
    RunConfig ignored;
    const std::string found = problems(bad, ignored);
    EXPECT_NE(found.find(text), std::string::npos) << "expected '" << text << "' in:\n" << found;
  };
  PeerOptions mixed = o;
  mixed.pgw = {"127.0.0.31"};
  expectProblem(mixed, "--sgsn/--ggsn: a run has GTPv2 nodes");
  PeerOptions bad = o;
  bad.ggsn_cause = {"127.0.0.21=73"};
  expectProblem(bad, "--ggsn-cause: cause 73 is not a rejection (192..255)");
  bad = o;
  bad.expect_cause = {64};
  expectProblem(bad, "--expect-cause: 64 is not a rejection cause (192..255)");
  bad = o;
  bad.ggsn_drop = {"127.0.0.22=0.1"};
  expectProblem(bad, "--ggsn-drop: 127.0.0.22 is not a --ggsn address");
  bad = o;
  bad.secondary = 11;
  expectProblem(bad, "--secondary: at most 10");
  bad = o;
  bad.network_initiated = 1.5;
  expectProblem(bad, "--network-initiated: a fraction");
  bad = o;
  bad.commands = true;
  expectProblem(bad, "--commands: GTPv2 runs only");
  bad = o;
  bad.pgw_drop = {"127.0.0.21=0.1"};
  expectProblem(bad, "--pgw-drop: GTPv2 runs only");
  bad = o;
  bad.failover_to = {"127.0.0.3"};
  expectProblem(bad, "--failover-to: GTPv2 runs only");
  bad = o;
  bad.proxy.clear();
  bad.proxy_gateway.clear();
  expectProblem(bad, "--proxy: required with --sgsn");
  bad = o;
  bad.mode = "modify-only";
  expectProblem(bad, "--secondary: --mode lifecycle only");
  bad.secondary = 0;
  ASSERT_EQ(problems(bad, c), "");
  EXPECT_FALSE(c.ggsn.network_deletes);  // the GGSN deletes in lifecycle only

  PeerOptions v2;
  v2.proxy = {"127.0.0.1"};
  v2.sgw = {"127.0.0.11"};
  v2.secondary = 1;
  v2.ggsn_delay_ms = {"127.0.0.21=5"};
  const std::string found = problems(v2, c);
  EXPECT_NE(found.find("--secondary: GTPv1 runs only"), std::string::npos) << found;
  EXPECT_NE(found.find("--ggsn-delay-ms: GTPv1 runs only"), std::string::npos) << found;
}

}  // namespace
}  // namespace gtpcp::peer
