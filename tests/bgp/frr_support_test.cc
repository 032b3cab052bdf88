// The BGP test rig itself (tests/support/netns.h, frr.h): two network
// namespaces of the test's own joined by a veth, FRR in each, eBGP between a
// proxy's speaker (AS 65001, 10.250.0.1) and a router (AS 65000,
// 10.250.0.2) with BFD 300 ms x 3.
//
// The proxy side holds its VIP as an AnyIP local route and announces it as
// the proxy's bgpd bridge will: a static route to Null0 tagged 101,
// redistributed through a route-map matching the tag. The tests check that
// the route reaches the router's FIB and leaves it when the static route
// goes, and that a frozen speaker (bgpd and bfdd stopped, TCP still open)
// loses it by BFD, well before the 30 s hold time. Times are printed as
// FIGURE lines, not asserted beyond generous bounds.
//
// Root and Debian's frr only: skipped, with the reason, otherwise.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>

#include "tests/support/frr.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"

namespace gtpcp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::BfdProfile;
using testing::BgpTimers;
using testing::Frr;
using testing::FrrDaemon;
using testing::Netns;

const std::string kProxyIp = "10.250.0.1";
const std::string kRouterIp = "10.250.0.2";
const std::string kVip = "10.99.0.1/32";
constexpr uint32_t kProxyAs = 65001;
constexpr uint32_t kRouterAs = 65000;
constexpr auto kBfdInterval = 300ms;
constexpr unsigned kBfdMultiplier = 3;
// A hold time far above BFD's 900 ms, so only BFD can drop the route within
// kFrozenBound.
const BgpTimers kTimers{10s, 30s, 1s};
constexpr auto kRouteBound = 30s;   // seen in about 1-3 s
constexpr auto kFrozenBound = 10s;  // BFD: about 1 s; hold time: 30 s
constexpr auto kStateBound = 15s;

long long msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
}

class FrrSupportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = Frr::unavailable(); !why.empty()) GTEST_SKIP() << why;
    proxy_ns_ = std::make_unique<Netns>();
    router_ns_ = std::make_unique<Netns>();
    testing::veth(*proxy_ns_, "vp0", *router_ns_, "vr0");
    proxy_ns_->addAddress("vp0", kProxyIp + "/30");
    router_ns_->addAddress("vr0", kRouterIp + "/30");
    proxy_ns_->addLocalRoute(kVip);
    if (!testing::findOnPath("ping").empty()) {
      // The link, before anything is blamed on BGP (a fresh veth may take
      // a moment to pass traffic).
      const auto ping = testing::waitFor(
          [&] {
            const auto out = router_ns_->exec({"ping", "-c1", "-W1", kProxyIp}, 5s);
            return out && out->status == 0;
          },
          10s, 50ms);
      ASSERT_TRUE(ping) << "no ping answer from " << kProxyIp << " over the veth";
    }
    proxy_ = std::make_unique<Frr>(*proxy_ns_);
    router_ = std::make_unique<Frr>(*router_ns_);
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const auto& [name, frr, ns] : {std::tuple{"proxy", proxy_.get(), proxy_ns_.get()},
                                          std::tuple{"router", router_.get(), router_ns_.get()}}) {
        if (ns != nullptr) std::cout << "---- " << name << " " << ns->name() << " FIB:\n" << ns->ip({"route"});
        if (frr == nullptr) continue;
        const auto show = frr->vtysh({"show bgp summary", "show bfd peers brief", "show ip route"}, 5s);
        std::cout << (show ? show->text : "(vtysh timed out)\n") << frr->logTails();
      }
    }
    // Daemons before their namespaces; each stops by PID whatever happened.
    proxy_.reset();
    router_.reset();
    proxy_ns_.reset();
    router_ns_.reset();
  }

  // The router peers with the proxy; the proxy announces kVip as the
  // bgpd bridge will: a tagged static route, redistributed by tag.
  void peerAndAnnounce() {
    const BfdProfile bfd{kBfdInterval, kBfdMultiplier};
    router_->configureRouter(kRouterAs, kRouterIp, {{kProxyIp, kProxyAs}}, bfd, kTimers);
    proxy_->configureRouter(kProxyAs, kProxyIp, {{kRouterIp, kRouterAs}}, bfd, kTimers);
    proxy_->configure({"route-map VIP permit 10", "match tag 101", "exit", "ip route " + kVip + " Null0 tag 101",
                       "router bgp " + std::to_string(kProxyAs), "address-family ipv4 unicast",
                       "redistribute static route-map VIP", "exit-address-family", "exit"});
  }

  // Both sides Established and their BFD sessions up.
  void expectSessionsUp() {
    for (const auto& side :
         {std::tuple{"router", router_.get(), kProxyIp}, std::tuple{"proxy", proxy_.get(), kRouterIp}}) {
      const auto& [name, frr, peer] = side;
      Frr* f = frr;
      const std::string& address = peer;
      EXPECT_TRUE(testing::waitFor([&] { return f->bgpState(address) == "Established"; }, kStateBound, 20ms))
          << name << ": BGP with " << address << " is " << f->bgpState(address);
      EXPECT_TRUE(testing::waitFor([&] { return f->bfdStatus(address) == "up"; }, kStateBound, 20ms))
          << name << ": BFD with " << address << " is '" << f->bfdStatus(address) << "'";
    }
  }

  std::unique_ptr<Netns> proxy_ns_, router_ns_;
  std::unique_ptr<Frr> proxy_, router_;
};

TEST_F(FrrSupportTest, RedistributedStaticRouteReachesTheRouterFibAndLeavesIt) {
  // The VIP is local to the proxy namespace (AnyIP), and nowhere else.
  EXPECT_EQ(proxy_ns_->ip({"route", "get", "10.99.0.1"}).rfind("local 10.99.0.1 dev lo ", 0), 0u);
  EXPECT_NE(proxy_ns_->ip({"route", "show", "table", "local", kVip}).find("local 10.99.0.1 dev lo"),
            std::string::npos);
  EXPECT_EQ(router_ns_->fibRoute(kVip), "");

  const auto t0 = std::chrono::steady_clock::now();
  peerAndAnnounce();
  const auto configured_ms = msSince(t0);
  const auto seen = testing::waitForRoute(*router_ns_, kVip, "proto bgp", kRouteBound);
  ASSERT_TRUE(seen) << "10.99.0.1/32 not in the router's FIB after " << kRouteBound.count()
                    << " s: " << router_ns_->fibRoute(kVip);
  const auto seen_ms = msSince(t0);
  std::cout << "FIGURE: route seen after " << seen_ms << " ms (from the first configuration command; "
            << configured_ms << " ms of vtysh): " << router_ns_->fibRoute(kVip) << std::endl;
  RecordProperty("route_seen_ms", static_cast<int>(seen_ms));
  EXPECT_NE(router_ns_->fibRoute(kVip).find("via " + kProxyIp), std::string::npos);
  // The proxy's own FIB holds the blackhole static route it redistributes.
  EXPECT_NE(proxy_ns_->fibRoute(kVip).find("blackhole"), std::string::npos) << proxy_ns_->fibRoute(kVip);

  expectSessionsUp();
  // The BFD profile applied, as the router sees the session.
  const json peers = router_->vtyshJson("show bfd peers json");
  ASSERT_TRUE(peers.is_array()) << peers.dump();
  bool found = false;
  for (const json& p : peers) {
    if (p.value("peer", "") != kProxyIp) continue;
    found = true;
    EXPECT_EQ(p.value("detect-multiplier", 0), static_cast<int>(kBfdMultiplier)) << p.dump();
    EXPECT_EQ(p.value("transmit-interval", 0), kBfdInterval.count()) << p.dump();
    EXPECT_EQ(p.value("receive-interval", 0), kBfdInterval.count()) << p.dump();
  }
  EXPECT_TRUE(found) << peers.dump();
  const json neighbors = router_->vtyshJson("show bgp neighbors json");
  ASSERT_TRUE(neighbors.is_object() && neighbors.contains(kProxyIp)) << neighbors.dump();
  EXPECT_EQ(neighbors[kProxyIp].value("remoteAs", 0), static_cast<int>(kProxyAs));
  EXPECT_EQ(neighbors[kProxyIp].value("bgpState", ""), "Established");

  const auto t1 = std::chrono::steady_clock::now();
  proxy_->configure({"no ip route " + kVip + " Null0 tag 101"});
  const auto gone = testing::waitForNoRoute(*router_ns_, kVip, kRouteBound);
  ASSERT_TRUE(gone) << "10.99.0.1/32 still in the router's FIB: " << router_ns_->fibRoute(kVip);
  std::cout << "FIGURE: route left the router's FIB " << msSince(t1) << " ms after the static route was removed"
            << std::endl;
  RecordProperty("route_withdrawn_ms", static_cast<int>(msSince(t1)));
  // Withdrawn, not torn down: the session stays.
  EXPECT_EQ(router_->bgpState(kProxyIp), "Established");
}

TEST_F(FrrSupportTest, FrozenBgpdAndBfddLoseTheRouteByBfd) {
  peerAndAnnounce();
  ASSERT_TRUE(testing::waitForRoute(*router_ns_, kVip, "proto bgp", kRouteBound))
      << "10.99.0.1/32 never reached the router's FIB";
  expectSessionsUp();
  ASSERT_FALSE(HasFailure()) << "BFD must be up before the freeze";

  // A hung proxy host: its daemons stop answering, their sockets stay open.
  const auto t0 = std::chrono::steady_clock::now();
  proxy_->kill(FrrDaemon::kBgpd, SIGSTOP);
  proxy_->kill(FrrDaemon::kBfdd, SIGSTOP);
  const auto lost = testing::waitForNoRoute(*router_ns_, kVip, kFrozenBound);
  const auto lost_ms = msSince(t0);
  ASSERT_TRUE(lost) << "the router kept 10.99.0.1/32 for " << kFrozenBound.count() << " s after the freeze";
  std::cout << "FIGURE: route lost after " << lost_ms << " ms of frozen bgpd+bfdd (BFD " << kBfdInterval.count()
            << " ms x " << kBfdMultiplier << ", hold time " << kTimers.hold.count() << " s)" << std::endl;
  RecordProperty("frozen_route_lost_ms", static_cast<int>(lost_ms));
  EXPECT_TRUE(testing::waitFor([&] { return router_->bfdStatus(kProxyIp) == "down"; }, 5s, 20ms))
      << "router's BFD session is '" << router_->bfdStatus(kProxyIp) << "'";
  EXPECT_NE(router_->bgpState(kProxyIp), "Established");

  const auto t1 = std::chrono::steady_clock::now();
  proxy_->kill(FrrDaemon::kBgpd, SIGCONT);
  proxy_->kill(FrrDaemon::kBfdd, SIGCONT);
  ASSERT_TRUE(testing::waitForRoute(*router_ns_, kVip, "proto bgp", kRouteBound))
      << "10.99.0.1/32 did not come back after SIGCONT";
  std::cout << "FIGURE: route back " << msSince(t1) << " ms after SIGCONT" << std::endl;
  RecordProperty("resumed_route_back_ms", static_cast<int>(msSince(t1)));
  expectSessionsUp();
}

// restart(): the proxy's daemons stopped and started again come back with
// the configuration given before, and announce the VIP again.
TEST_F(FrrSupportTest, RestartedFrrComesBackConfigured) {
  peerAndAnnounce();
  ASSERT_TRUE(testing::waitForRoute(*router_ns_, kVip, "proto bgp", kRouteBound))
      << "10.99.0.1/32 never reached the router's FIB";
  const int old_bgpd = proxy_->pid(FrrDaemon::kBgpd);
  const auto dropped = [&] {
    const json n = router_->vtyshJson("show bgp neighbors " + kProxyIp + " json");
    return n.is_object() && n.contains(kProxyIp) ? n[kProxyIp].value("connectionsDropped", -1) : -1;
  };
  const int dropped_before = dropped();
  ASSERT_GE(dropped_before, 0);

  const auto t0 = std::chrono::steady_clock::now();
  proxy_->restart();
  const auto restart_ms = msSince(t0);
  EXPECT_NE(proxy_->pid(FrrDaemon::kBgpd), old_bgpd);
  // The route may be gone and back before a look at the FIB: the router's
  // count of dropped sessions tells that the old one ended.
  ASSERT_TRUE(testing::waitForRoute(*router_ns_, kVip, "proto bgp", kRouteBound))
      << "10.99.0.1/32 did not come back after the restart";
  std::cout << "FIGURE: route back " << msSince(t0) << " ms after the proxy's FRR restart began (restart() "
            << restart_ms << " ms)" << std::endl;
  RecordProperty("restart_route_back_ms", static_cast<int>(msSince(t0)));
  expectSessionsUp();
  // More than one when both sides' connections collided on the way back.
  EXPECT_GT(dropped(), dropped_before);
}

}  // namespace
}  // namespace gtpcp
