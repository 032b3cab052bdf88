// One gtpcp instance announcing its service address over BGP with real FRR:
// a proxy namespace (gtpcp, and FRR driven by gtpcp-bgpd-bridge) and a
// router namespace (FRR, AS 65000), joined by a veth. The router's FIB is
// what peers follow, so every case reads it:
//   - the route appears once the instance is healthy, and the service
//     address answers Echo through it;
//   - the bridge killed: the route leaves with its lease interface, and
//     returns with the bridge the thread watchdog starts again;
//   - the bgp-watchdog dead with no one to replace it: the bridge withdraws
//     when the decision's lease runs out;
//   - FRR restarted under the bridge: it reconciles, the route returns;
//   - gtpcp switchover and --off; gtpcp stop withdraws before it stops.
// Times are printed as FIGURE lines; bounds are generous.
//
// Root and Debian's frr only: skipped, with the reason, otherwise.
#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "tests/support/frr.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"
#include "tests/support/test_group.h"

namespace gtpcp {
namespace {

using namespace std::chrono_literals;
using testing::BfdProfile;
using testing::BgpTimers;
using testing::Frr;
using testing::Netns;

const std::string kProxyIp = "10.250.0.1";
const std::string kRouterIp = "10.250.0.2";
const std::string kService = "10.99.0.1";
const std::string kServicePrefix = "10.99.0.1/32";
constexpr auto kRouteBound = 40s;  // BGP up, then the return hold-down
constexpr auto kMoveBound = 10s;

// A GTPv2-C Echo Request with a Recovery IE, sent from the router's
// namespace to the service address: "ok <recovery>" when answered.
std::string echoThrough(const Netns& ns, const std::string& address) {
  const std::string script =
      "import socket,sys\n"
      "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(2)\n"
      "s.sendto(bytes.fromhex('4001000900000100030001000a'),(sys.argv[1],2123))\n"
      "d,a=s.recvfrom(2048)\n"
      "print('ok' if d[1]==2 else 'type %d'%d[1], d[12] if len(d)>12 else -1)\n";
  auto out = ns.exec({"python3", "-c", script, address}, 10s);
  return out && out->status == 0 ? out->text : std::string("no answer");
}

class AnnounceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = Frr::unavailable(); !why.empty()) GTEST_SKIP() << why;
    proxy_ = std::make_unique<Netns>();
    router_ = std::make_unique<Netns>();
    testing::veth(*proxy_, "vp0", *router_, "vr0");
    proxy_->addAddress("vp0", kProxyIp + "/30");
    router_->addAddress("vr0", kRouterIp + "/30");
    proxy_frr_ = std::make_unique<Frr>(*proxy_);
    router_frr_ = std::make_unique<Frr>(*router_);
    router_frr_->configureRouter(65000, kRouterIp, {{kProxyIp, 65001}}, BfdProfile{300ms, 3}, BgpTimers{3s, 9s, 1s});
  }
  void TearDown() override {
    if (HasFailure() && group_) std::cerr << group_->diagnostics() << "\n";
    if (HasFailure() && router_frr_) {
      if (auto o = router_frr_->vtysh({"show bgp summary", "show bfd peers brief"})) std::cerr << o->text;
      if (auto o = proxy_frr_->vtysh({"show running-config", "show ip route", "show bgp ipv4 unicast"}))
        std::cerr << "---- the proxy's FRR\n" << o->text;
      std::cerr << proxy_frr_->logTails(10);
    }
    group_.reset();
    proxy_frr_.reset();
    router_frr_.reset();
    proxy_.reset();
    router_.reset();
  }

  void startGroup(const std::string& bgp_extra = "", unsigned withdraw_hold_ms = 2000) {
    testing::GroupOptions o;
    o.workers = 1;
    o.address = gtp::Ipv4{10, 99, 0, 1};
    o.netns = proxy_->name();
    o.address6 = address6_;
    o.routing_yaml =
        "version: 1\npools:\n  internet:\n    gateways:\n      - {name: only, address: 10.250.0.9}\n"
        "rules:\n  - {name: default, pool: internet}\nhealth_check: {interval_ms: 0}\n";
    o.extra_yaml = "watchdog:\n  timeout_ms: 1000\n"
                   "bgp:\n  mode: frr\n  local_as: 65001\n  router_id: " + kProxyIp +
                   "\n  neighbors:\n    - {address: " + kRouterIp + ", as: 65000}\n" + neighbors_extra_ +
                   "  vty_socket_dir: " + proxy_frr_->vtySocketDir() +
                   "\n  check_interval_ms: 200\n  return_hold_ms: 1000\n  lease_ms: 1000\n  withdraw_hold_ms: " +
                   std::to_string(withdraw_hold_ms) + "\n" + bgp_extra;
    group_ = std::make_unique<testing::TestGroup>(o);
    ASSERT_TRUE(group_->start()) << group_->diagnostics();
  }
  std::optional<std::chrono::milliseconds> waitAnnounced(std::chrono::milliseconds bound = kRouteBound) {
    return testing::waitForRoute(*router_, kServicePrefix, "via " + kProxyIp, bound);
  }
  std::optional<std::chrono::milliseconds> waitWithdrawn(std::chrono::milliseconds bound = kMoveBound) {
    return testing::waitForNoRoute(*router_, kServicePrefix, bound);
  }
  nlohmann::json bgpStatus() { return group_->status().value("bgp", nlohmann::json::object()); }

  std::unique_ptr<Netns> proxy_, router_;
  std::unique_ptr<Frr> proxy_frr_, router_frr_;
  std::unique_ptr<testing::TestGroup> group_;
  std::string address6_;         // gtpc.access.ipv6 of the group (a second service address)
  std::string neighbors_extra_;  // more bgp.neighbors entries, as YAML list lines
};

// IPv6: a service address of each family, each announced in its own address
// family over a BGP session of that family; the /128 reaches the router's
// FIB and the group answers Echo through it.
TEST_F(AnnounceTest, AnIpv6ServiceAddressIsAnnouncedAsA128AndAnswersThroughIt) {
  const std::string proxy6 = "fd00:250::1", router6 = "fd00:250::2", service6 = "fd00:99::1";
  for (const Netns* ns : {proxy_.get(), router_.get()}) {
    // Addresses usable at once: no duplicate address detection on the veth.
    for (const char* key : {"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                            "net.ipv6.conf.all.disable_ipv6=0"}) {
      auto o = ns->exec({"sysctl", "-w", key});
      ASSERT_TRUE(o && o->status == 0) << key;
    }
  }
  for (const auto& [ns, ifname, cidr] :
       {std::tuple{proxy_.get(), "vp0", proxy6 + "/126"}, std::tuple{router_.get(), "vr0", router6 + "/126"}}) {
    auto o = ns->exec({"sysctl", "-w", std::string("net.ipv6.conf.") + ifname + ".accept_dad=0"});
    ASSERT_TRUE(o && o->status == 0);
    ns->addAddress(ifname, cidr);
  }
  router_frr_->configureRouter(65000, kRouterIp, {{proxy6, 65001}}, BfdProfile{300ms, 3}, BgpTimers{3s, 9s, 1s});
  address6_ = service6;
  neighbors_extra_ = "    - {address: \"" + router6 + "\", as: 65000}\n";
  startGroup();
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(waitAnnounced()) << "the IPv4 service address";
  // Through the veth toward the proxy: zebra installs an eBGP IPv6 route
  // of a directly connected neighbour via its link-local next hop.
  const auto v6 = testing::waitForRoute(*router_, service6 + "/128", "dev vr0 proto bgp", kRouteBound);
  ASSERT_TRUE(v6) << router_->fibRoute(service6 + "/128") << "\n"
                  << router_->exec({"ip", "-6", "route"}).value_or(testing::Output{}).text;
  std::cout << "FIGURE: IPv6 service address in the router's FIB " << v6->count() << " ms after the IPv4 one\n";
  const std::string script =
      "import socket,sys\n"
      "s=socket.socket(socket.AF_INET6,socket.SOCK_DGRAM);s.settimeout(2)\n"
      "s.sendto(bytes.fromhex('4001000900000100030001000a'),(sys.argv[1],2123))\n"
      "d,a=s.recvfrom(2048)\n"
      "print('ok' if d[1]==2 else 'type %d'%d[1])\n";
  auto out = router_->exec({"python3", "-c", script, service6}, 10s);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->text, "ok\n") << "no Echo Response through the /128";
  // Withdrawn together.
  ASSERT_EQ(group_->gtpcp({"switchover"}).status, 0);
  EXPECT_TRUE(testing::waitForNoRoute(*router_, service6 + "/128", kMoveBound));
  EXPECT_TRUE(waitWithdrawn());
}

TEST_F(AnnounceTest, AHealthyInstanceIsAnnouncedAndAnswersThroughTheRoute) {
  startGroup();
  const auto seen = waitAnnounced();
  ASSERT_TRUE(seen) << "route never reached the router";
  std::cout << "FIGURE: route in the router's FIB " << seen->count() << " ms after gtpcp start returned\n";
  EXPECT_THAT(echoThrough(*router_, kService), ::testing::StartsWith("ok"));
  // The standby would be worse: the active's route carries MED 0, no prepend.
  const auto route = router_frr_->vtyshJson("show bgp ipv4 unicast " + kServicePrefix + " json");
  ASSERT_TRUE(route.is_object()) << route.dump();
  EXPECT_EQ(route["paths"][0].value("metric", 0), 0) << route.dump();
  EXPECT_EQ(route["paths"][0]["aspath"]["string"], "65001") << route.dump();
  const auto bgp = bgpStatus();
  EXPECT_EQ(bgp["decision"]["intent"], "announce") << bgp.dump(1);
  EXPECT_EQ(bgp["frr"]["announced"], true) << bgp.dump(1);
  ASSERT_TRUE(testing::waitFor([&] { return bgpStatus()["frr"]["neighbors"][0]["state"] == "Established"; }, 10s));
  // BFD with the configured profile (300 ms x 3).
  ASSERT_TRUE(testing::waitFor([&] { return router_frr_->bfdStatus(kProxyIp) == "up"; }, 15s));
  const auto printed = group_->gtpcp({"status"});
  EXPECT_THAT(printed.text, ::testing::HasSubstr("decision: ANNOUNCE (active)"));
  EXPECT_THAT(printed.text, ::testing::HasSubstr("neighbour 10.250.0.2 AS 65000: Established"));
}

TEST_F(AnnounceTest, TheStandbyAnnouncesAWorseRoute) {
  startGroup("  role: standby\n  standby_med: 250\n  standby_prepend: 2\n");
  ASSERT_TRUE(waitAnnounced());
  nlohmann::json route;
  ASSERT_TRUE(testing::waitFor(
      [&] {
        route = router_frr_->vtyshJson("show bgp ipv4 unicast " + kServicePrefix + " json");
        return route.is_object() && route.contains("paths") && route["paths"][0].value("metric", 0) == 250;
      },
      10s))
      << route.dump();
  EXPECT_EQ(route["paths"][0]["aspath"]["string"], "65001 65001 65001") << route.dump();
}

TEST_F(AnnounceTest, AKilledBridgeTakesTheRouteWithIt) {
  startGroup();
  ASSERT_TRUE(waitAnnounced());
  const int bridge = group_->pidOf("bgpd-bridge");
  const int watchdog = group_->pidOf("watchdog");
  ASSERT_GT(bridge, 0);
  ASSERT_GT(watchdog, 0);
  // Dead for good until the thread watchdog resumes: a bridge replaced
  // within milliseconds may take the route back before the router saw it go.
  ::kill(watchdog, SIGSTOP);
  ::kill(bridge, SIGKILL);
  const auto gone = waitWithdrawn();
  ::kill(watchdog, SIGCONT);
  ASSERT_TRUE(gone) << "the route outlived the bridge";
  std::cout << "FIGURE: bridge SIGKILLed -> route gone from the router's FIB in " << gone->count() << " ms\n";
  // The thread watchdog starts a new bridge, and the decision still holds.
  const auto back = waitAnnounced(20s);
  ASSERT_TRUE(back);
  std::cout << "FIGURE: new bridge -> route back in " << back->count() << " ms\n";
  EXPECT_NE(group_->pidOf("bgpd-bridge"), bridge);
}

TEST_F(AnnounceTest, ADeadBgpWatchdogsDecisionRunsOut) {
  startGroup();
  ASSERT_TRUE(waitAnnounced());
  // No one to replace it: the thread watchdog frozen.
  const int watchdog = group_->pidOf("watchdog");
  const int bgp_watchdog = group_->pidOf("bgp-watchdog");
  ASSERT_GT(watchdog, 0);
  ASSERT_GT(bgp_watchdog, 0);
  ::kill(watchdog, SIGSTOP);
  ::kill(bgp_watchdog, SIGKILL);
  const auto gone = waitWithdrawn();
  ::kill(watchdog, SIGCONT);
  ASSERT_TRUE(gone) << "the route stayed on a dead bgp-watchdog's decision";
  std::cout << "FIGURE: bgp-watchdog SIGKILLed -> route gone in " << gone->count() << " ms (lease 1000 ms)\n";
  EXPECT_GE(gone->count(), 500);  // the lease, not the kill, withdrew it
  // Replaced, healthy for the return hold-down: back.
  const auto back = waitAnnounced(30s);
  ASSERT_TRUE(back);
  std::cout << "FIGURE: bgp-watchdog replaced -> route back in " << back->count() << " ms (return hold 1000 ms)\n";
  EXPECT_EQ(group_->status()["bgp"]["frr"]["lease_expired"], false);
}

TEST_F(AnnounceTest, ARestartedFrrIsReconciled) {
  startGroup();
  ASSERT_TRUE(waitAnnounced());
  proxy_frr_->restart();  // empty configuration again: FRR lost everything
  ASSERT_TRUE(waitWithdrawn(20s));
  const auto back = waitAnnounced(30s);
  ASSERT_TRUE(back) << "the bridge did not give FRR back its configuration";
  std::cout << "FIGURE: proxy FRR restarted -> route back " << back->count() << " ms after it left\n";
  EXPECT_TRUE(group_->status()["bgp"]["frr"].value("announced", false));
  const auto counters = testing::TestGroup::process(group_->status(), "bgpd-bridge")["counters"];
  EXPECT_GE(counters["bridge.frr_restarts"].get<uint64_t>(), 1u) << counters.dump();
}

TEST_F(AnnounceTest, SwitchoverWithdrawsAndOffAnnouncesAgain) {
  startGroup();
  ASSERT_TRUE(waitAnnounced());
  const auto t0 = std::chrono::steady_clock::now();
  const auto reply = group_->gtpcp({"switchover"});
  EXPECT_EQ(reply.status, 0) << reply.text;
  EXPECT_THAT(reply.text, ::testing::HasSubstr("withdrawn"));
  const auto gone = waitWithdrawn();
  ASSERT_TRUE(gone);
  std::cout << "FIGURE: gtpcp switchover -> route gone in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()
            << " ms\n";
  // Still serving what reaches it.
  EXPECT_EQ(group_->pidOf("forwarder") > 0, true);
  const auto bgp = bgpStatus();
  EXPECT_EQ(bgp["decision"]["health"], "administrative") << bgp.dump(1);
  // Not back while the switchover holds.
  EXPECT_FALSE(waitAnnounced(3s));
  EXPECT_EQ(group_->gtpcp({"switchover", "--off"}).status, 0);
  ASSERT_TRUE(waitAnnounced(20s));
}

TEST_F(AnnounceTest, StopWithdrawsFirst) {
  startGroup();
  ASSERT_TRUE(waitAnnounced());
  const auto out = group_->gtpcp({"stop"});
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_EQ(router_->fibRoute(kServicePrefix), "");
  // The log says the withdraw came before the drain.
  const auto log = testing::readFile(group_->runDir() + "/watchdog.log");
  const auto withdraw = log.find("withdrawing the service addresses first");
  const auto drain = log.find("stopping: draining");
  ASSERT_NE(withdraw, std::string::npos) << log;
  ASSERT_NE(drain, std::string::npos) << log;
  EXPECT_LT(withdraw, drain);
}

TEST_F(AnnounceTest, TheServiceAddressNotLocalByTheForwarderWithdrawsAtOnce) {
  startGroup("", 60000);
  ASSERT_TRUE(waitAnnounced());
  // The address stops being local: unrecoverable, withdrawn at the next
  // check despite the long hold-down for recoverable faults.
  proxy_->removeLocalRoute(kServicePrefix);
  const auto gone = waitWithdrawn();
  ASSERT_TRUE(gone);
  std::cout << "FIGURE: service address no longer local -> route gone in " << gone->count() << " ms\n";
  EXPECT_THAT(bgpStatus()["decision"]["reason"].get<std::string>(), ::testing::HasSubstr("not local"));
  proxy_->addLocalRoute(kServicePrefix);
  ASSERT_TRUE(waitAnnounced(20s));
}

}  // namespace
}  // namespace gtpcp
