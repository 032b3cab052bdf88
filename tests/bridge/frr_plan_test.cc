// What the bridge wants FRR to hold, how it reads FRR's running
// configuration, and the commands between (bgpd-bridge/lib/frr_plan.h). The
// running configurations are as FRR 8.4 prints them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bgpd-bridge/lib/frr_plan.h"

namespace gtpcp::bridge {
namespace {

using group::BgpIntent;
using group::BgpPreference;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

FrrSettings settings() {
  FrrSettings s;
  s.group = "g1";
  s.lease_interface = leaseInterfaceName("g1");
  s.local_as = 65001;
  s.router_id = "10.250.0.1";
  s.neighbors = {{"10.250.0.2", 65000, ""}};
  s.service_addresses = {"10.99.0.1"};
  s.standby_med = 200;
  s.standby_prepend = 2;
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// FRR's rendering of what desiredLines() asks for (the shape FRR 8.4 prints).
std::string rendered(const FrrSettings& s, bool announced, const std::string& role = "active") {
  const std::string tag = std::to_string(routeTag(s.group));
  std::string t = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\n"
                  "hostname vm\nservice integrated-vtysh-config\n!\n";
  t += "ip route 10.99.0.1/32 " + s.lease_interface + " tag " + tag + "\n!\n";
  t += "router bgp 65001\n bgp router-id 10.250.0.1\n neighbor 10.250.0.2 remote-as 65000\n"
       " neighbor 10.250.0.2 bfd profile gtpcp-g1\n neighbor 10.250.0.2 timers 3 9\n !\n address-family ipv4 unicast\n";
  if (announced) t += "  network 10.99.0.1/32 route-map gtpcp-g1-" + role + "\n";
  t += "  neighbor 10.250.0.2 route-map gtpcp-g1-out out\n exit-address-family\nexit\n!\n";
  t += "ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32\n!\n";
  t += "route-map gtpcp-g1-active permit 10\nexit\n!\n";
  t += "route-map gtpcp-g1-standby permit 10\n set as-path prepend 65001 65001\n set metric 200\nexit\n!\n";
  t += "route-map gtpcp-g1-out permit 10\n match ip address prefix-list gtpcp-g1\nexit\n!\n";
  t += "route-map other permit 10\n set metric 5\nexit\n!\n";
  t += "bfd\n profile gtpcp-g1\n exit\n !\n profile other\n  transmit-interval 100\n exit\n !\nexit\n!\nend\n";
  return t;
}

TEST(FrrPlanTest, NamesAreShortAndPerGroup) {
  EXPECT_LE(leaseInterfaceName("a-very-long-group-name-of-32-chars").size(), 15u);
  EXPECT_NE(leaseInterfaceName("g1"), leaseInterfaceName("g2"));
  EXPECT_NE(routeTag("g1"), routeTag("g2"));
  EXPECT_GT(routeTag("g1"), 0u);
}

TEST(FrrPlanTest, TheRunningConfigurationIsReadAsLinesInTheirContext) {
  const auto lines = parseRunningConfig(rendered(settings(), true));
  EXPECT_THAT(lines, Contains(FrrLine{{"router bgp 65001", "address-family ipv4 unicast"},
                                      "network 10.99.0.1/32 route-map gtpcp-g1-active"}));
  EXPECT_THAT(lines, Contains(FrrLine{{"route-map gtpcp-g1-standby permit 10"}, "set metric 200"}));
  EXPECT_THAT(lines, Contains(FrrLine{{"bfd", "profile other"}, "transmit-interval 100"}));
  EXPECT_THAT(lines, Contains(FrrLine{{}, "route-map gtpcp-g1-active permit 10"}));
  for (const auto& l : lines) {
    EXPECT_NE(l.line, "exit");
    EXPECT_NE(l.line, "exit-address-family");
    EXPECT_NE(l.line[0], '!');
  }
}

TEST(FrrPlanTest, AnEmptyFrrGetsEveryObjectThenTheStatements) {
  const auto s = settings();
  const auto cmds = reconcileCommands(s, parseRunningConfig("!\nend\n"), desiredLines(s, {BgpIntent::kAnnounce}));
  const std::string text = join(cmds);
  EXPECT_THAT(text, HasSubstr("ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32\n"));
  EXPECT_THAT(text, HasSubstr("ip route 10.99.0.1/32 " + s.lease_interface + " tag "));
  EXPECT_THAT(text, HasSubstr("route-map gtpcp-g1-standby permit 10\nset metric 200\nexit\n"));
  EXPECT_THAT(text, HasSubstr("bfd\nprofile gtpcp-g1\nexit\nexit\n"));
  EXPECT_THAT(text, HasSubstr("router bgp 65001\nneighbor 10.250.0.2 remote-as 65000\nexit\n"));
  EXPECT_THAT(text, HasSubstr("router bgp 65001\naddress-family ipv4 unicast\nnetwork 10.99.0.1/32 route-map gtpcp-g1-active\nexit\nexit\n"));
  // Objects before the statements that refer to them.
  EXPECT_LT(text.find("route-map gtpcp-g1-active permit 10"), text.find("network 10.99.0.1/32"));
  EXPECT_LT(text.find("route-map gtpcp-g1-out permit 10"), text.find("route-map gtpcp-g1-out out"));
  // Every context entered is left.
  int depth = 0;
  for (const auto& c : cmds) {
    if (c == "exit") --depth;
    else if (c.rfind("router bgp", 0) == 0 || c.rfind("address-family", 0) == 0 || c.rfind("route-map", 0) == 0 ||
             c == "bfd" || c.rfind("profile", 0) == 0)
      ++depth;
    EXPECT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

TEST(FrrPlanTest, WhatFrrHoldsAlreadyNeedsNoCommand) {
  const auto s = settings();
  EXPECT_THAT(reconcileCommands(s, parseRunningConfig(rendered(s, true)), desiredLines(s, {BgpIntent::kAnnounce})),
              IsEmpty());
  EXPECT_THAT(reconcileCommands(s, parseRunningConfig(rendered(s, false)), desiredLines(s, {BgpIntent::kWithdraw})),
              IsEmpty());
}

TEST(FrrPlanTest, AWithdrawRemovesOnlyTheNetworkStatement) {
  const auto s = settings();
  const auto cmds =
      reconcileCommands(s, parseRunningConfig(rendered(s, true)), desiredLines(s, {BgpIntent::kWithdraw}));
  EXPECT_THAT(cmds, ElementsAre("router bgp 65001", "address-family ipv4 unicast", "no network 10.99.0.1/32", "exit",
                                "exit"));
}

TEST(FrrPlanTest, TheStandbyPointsTheStatementAtTheOtherRouteMap) {
  const auto s = settings();
  const auto cmds = reconcileCommands(s, parseRunningConfig(rendered(s, true)),
                                      desiredLines(s, {BgpIntent::kAnnounce, BgpPreference::kStandby}));
  EXPECT_THAT(cmds, ElementsAre("router bgp 65001", "address-family ipv4 unicast",
                                "network 10.99.0.1/32 route-map gtpcp-g1-standby", "exit", "exit"));
}

TEST(FrrPlanTest, TheOperatorsObjectsAreNeverTouched) {
  const auto s = settings();
  std::string text = rendered(s, true);
  text += "ip route 10.0.0.0/8 192.0.2.1\nroute-map gtpcp-other-active permit 10\nexit\n";
  const auto cmds = reconcileCommands(s, parseRunningConfig(text), desiredLines(s, {BgpIntent::kWithdraw}));
  const std::string all = join(cmds);
  EXPECT_THAT(all, Not(HasSubstr("other")));
  EXPECT_THAT(all, Not(HasSubstr("timers")));
  EXPECT_THAT(all, Not(HasSubstr("10.0.0.0/8")));
}

TEST(FrrPlanTest, ChangedSettingsReplaceTheirLinesAndStaleOnesGo) {
  auto s = settings();
  s.standby_med = 300;
  s.service_addresses = {"10.99.0.2"};
  const auto cmds = reconcileCommands(s, parseRunningConfig(rendered(settings(), true)),
                                      desiredLines(s, {BgpIntent::kAnnounce}));
  const std::string all = join(cmds);
  EXPECT_THAT(all, HasSubstr("route-map gtpcp-g1-standby permit 10\nset metric 300\nexit\n"));
  EXPECT_THAT(all, Not(HasSubstr("no set metric")));  // replaced, not removed first
  EXPECT_THAT(all, HasSubstr("no network 10.99.0.1/32"));
  EXPECT_THAT(all, HasSubstr("no ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32"));
  EXPECT_THAT(all, HasSubstr("no ip route 10.99.0.1/32 " + s.lease_interface));
  EXPECT_THAT(all, HasSubstr("network 10.99.0.2/32 route-map gtpcp-g1-active"));
  // Statements go before the objects they refer to.
  EXPECT_LT(all.find("no network 10.99.0.1/32"), all.find("no ip prefix-list"));
}

TEST(FrrPlanTest, IPv6AddressesAreAnnouncedInTheirFamily) {
  auto s = settings();
  s.service_addresses = {"10.99.0.1", "2001:db8::1"};
  s.neighbors.push_back({"2001:db8:ff::2", 65000, "secret"});
  const std::string all =
      join(reconcileCommands(s, parseRunningConfig("end\n"), desiredLines(s, {BgpIntent::kAnnounce})));
  EXPECT_THAT(all, HasSubstr("ipv6 prefix-list gtpcp-g1-v6 seq 5 permit 2001:db8::1/128"));
  EXPECT_THAT(all, HasSubstr("ipv6 route 2001:db8::1/128 " + s.lease_interface));
  EXPECT_THAT(all, HasSubstr("address-family ipv6 unicast\nnetwork 2001:db8::1/128 route-map gtpcp-g1-active"));
  EXPECT_THAT(all, HasSubstr("address-family ipv6 unicast\nneighbor 2001:db8:ff::2 activate"));
  EXPECT_THAT(all, HasSubstr("neighbor 2001:db8:ff::2 password secret"));
  EXPECT_THAT(all, HasSubstr("route-map gtpcp-g1-out permit 20\nmatch ipv6 address prefix-list gtpcp-g1-v6"));
}

TEST(FrrPlanTest, NonDefaultBfdTimersAreSet) {
  auto s = settings();
  s.bfd_interval_ms = 100;
  s.bfd_multiplier = 5;
  const std::string all =
      join(reconcileCommands(s, parseRunningConfig(rendered(settings(), true)), desiredLines(s, {BgpIntent::kAnnounce})));
  EXPECT_THAT(all, HasSubstr("bfd\nprofile gtpcp-g1\ntransmit-interval 100\nexit\nexit\n"));
  EXPECT_THAT(all, HasSubstr("detect-multiplier 5"));
  s.bfd = false;
  const std::string off =
      join(reconcileCommands(s, parseRunningConfig(rendered(settings(), true)), desiredLines(s, {BgpIntent::kAnnounce})));
  EXPECT_THAT(off, HasSubstr("no neighbor 10.250.0.2 bfd"));
  EXPECT_THAT(off, HasSubstr("bfd\nno profile gtpcp-g1\nexit\n"));
}

TEST(FrrPlanTest, TheFastPathChangesOnlyNetworkStatements) {
  const auto s = settings();
  EXPECT_THAT(intentCommands(s, {BgpIntent::kWithdraw}, {BgpIntent::kAnnounce}),
              ElementsAre("router bgp 65001", "address-family ipv4 unicast",
                          "network 10.99.0.1/32 route-map gtpcp-g1-active", "exit", "exit"));
  EXPECT_THAT(intentCommands(s, {BgpIntent::kAnnounce}, {BgpIntent::kWithdraw}),
              ElementsAre("router bgp 65001", "address-family ipv4 unicast", "no network 10.99.0.1/32", "exit", "exit"));
  EXPECT_THAT(intentCommands(s, {BgpIntent::kWithdraw}, {BgpIntent::kWithdraw, BgpPreference::kStandby}), IsEmpty());
}

TEST(FrrPlanTest, EachDaemonIsComparedWithWhatItKeeps) {
  const auto s = settings();
  const auto desired = desiredLines(s, {BgpIntent::kAnnounce});
  for (const auto& l : linesOf(desired, "staticd")) EXPECT_EQ(l.line.rfind("ip route ", 0), 0u) << l.line;
  for (const auto& l : linesOf(desired, "bfdd")) EXPECT_EQ(l.context.empty() ? l.line : l.context[0], "bfd");
  const auto bgpd = linesOf(desired, "bgpd");
  EXPECT_THAT(bgpd, Contains(FrrLine{{}, "ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32"}));
  EXPECT_THAT(bgpd, Contains(FrrLine{{}, "route-map gtpcp-g1-active permit 10"}));
  EXPECT_EQ(linesOf(desired, "staticd").size() + linesOf(desired, "bfdd").size() + bgpd.size(), desired.size());
  // bgpd was down when the prefix list was given: the other daemons have
  // it, bgpd does not, and gets it again.
  std::string text = rendered(s, true);
  const std::string pl = "ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32\n";
  text.erase(text.find(pl), pl.size());
  const auto cmds = reconcileCommands(s, linesOf(parseRunningConfig(text), "bgpd"), bgpd);
  EXPECT_THAT(cmds, ElementsAre("ip prefix-list gtpcp-g1 seq 5 permit 10.99.0.1/32"));
}

TEST(FrrPlanTest, AnotherAsOrNoImportCheckIsAConflict) {
  const auto s = settings();
  EXPECT_THAT(conflicts(s, parseRunningConfig(rendered(s, true))), IsEmpty());
  const auto other = conflicts(s, parseRunningConfig("router bgp 64999\n neighbor 1.2.3.4 remote-as 1\nexit\n"));
  ASSERT_EQ(other.size(), 1u);
  EXPECT_THAT(other[0], HasSubstr("router bgp 64999"));
  const auto nocheck = conflicts(s, parseRunningConfig("router bgp 65001\n no bgp network import-check\nexit\n"));
  ASSERT_EQ(nocheck.size(), 1u);
  EXPECT_THAT(nocheck[0], HasSubstr("import-check"));
}

}  // namespace
}  // namespace gtpcp::bridge
