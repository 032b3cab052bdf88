// The bridge's turns (bgpd-bridge/lib/bridge.h) over a fake FRR that keeps
// its configuration as FRR prints it and applies the bridge's commands the
// way vtysh does: the lease, the fast path, reconciling what FRR lost after
// a restart, and reading BGP and BFD state back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "bgpd-bridge/lib/bridge.h"

namespace gtpcp::bridge {
namespace {

using group::BgpIntent;
using group::BgpPreference;
constexpr uint64_t kMs = 1'000'000;

// A configuration tree applied command by command: a header line enters its
// block, "exit" leaves it, "no LINE" removes the line (and its block) whose
// text starts with LINE, any other line replaces the line of the same first
// words or is added.
class FakeFrr final : public FrrControl {
 public:
  struct Node {
    std::string text;
    std::vector<Node> children;
  };

  FrrResult<std::string> runningConfig(const std::string& daemon) override {
    ++reads;
    read_daemons.push_back(daemon);
    if (down) return tl::unexpected(std::string("vtysh: no daemon"));
    std::string out = "Building configuration...\n\nCurrent configuration:\n!\n";
    for (const auto& n : root.children) render(n, 0, out);
    return out + "end\n";
  }
  FrrResult<void> configure(const std::vector<std::string>& commands) override {
    if (down) return tl::unexpected(std::string("vtysh: no daemon"));
    calls.push_back("configure");
    batches.push_back(commands);
    std::vector<Node*> stack{&root};
    for (const auto& c : commands) {
      if (c == "exit") {
        if (stack.size() > 1) stack.pop_back();
        continue;
      }
      Node* at = stack.back();
      if (c.rfind("no ", 0) == 0) {
        const std::string what = c.substr(3);
        auto& v = at->children;
        v.erase(std::remove_if(v.begin(), v.end(), [&](const Node& n) { return n.text.rfind(what, 0) == 0; }), v.end());
        continue;
      }
      Node* node = nullptr;
      for (auto& n : at->children) {
        if (n.text == c || sameKey(n.text, c)) {
          n.text = c;
          node = &n;
        }
      }
      if (!node) {
        at->children.push_back({c, {}});
        node = &at->children.back();
      }
      if (isBlock(c)) stack.push_back(node);
    }
    return {};
  }
  FrrResult<nlohmann::json> showJson(const std::string& command) override {
    if (down) return tl::unexpected(std::string("vtysh: no daemon"));
    calls.push_back(command);
    // A slow look: it waits once, the way VtyshFrr does.
    if (slow_looks && waiting()) return tl::unexpected(std::string(kGaveWay));
    if (command == "show bgp neighbors json") return neighbors;
    if (command == "show bgp ipv4 unicast json") {
      // bgpd's table: every network statement, unless bgpd is stuck.
      nlohmann::json routes = nlohmann::json::object();
      if (!stuck) collectNetworks(root, routes);
      return nlohmann::json{{"routes", routes}};
    }
    return bfd;
  }
  FrrDaemons daemons() override { return {identity, youngest_ms}; }

  bool has(const std::string& text) const { return find(root, text); }
  void restart() {
    root = {};
    identity["bgpd"] = std::to_string(++generation_);
  }

  Node root;
  bool down = false;
  bool stuck = false;  // configured, but bgpd's table does not hold the network
  bool slow_looks = false;
  std::vector<std::string> calls;  // "configure" or the show command, in order
  std::vector<std::string> read_daemons;
  int reads = 0;
  std::vector<std::vector<std::string>> batches;
  nlohmann::json neighbors = nlohmann::json::object();
  nlohmann::json bfd = nlohmann::json::array();
  std::map<std::string, std::string> identity{{"bgpd", "1"}};
  std::optional<uint64_t> youngest_ms;

 private:
  static bool isBlock(const std::string& c) {
    return c.rfind("router bgp", 0) == 0 || c.rfind("address-family", 0) == 0 || c.rfind("route-map", 0) == 0 ||
           c == "bfd" || c.rfind("profile", 0) == 0;
  }
  static std::string words(const std::string& s, int n) {
    std::string out;
    int seen = 0;
    for (char ch : s) {
      if (ch == ' ' && ++seen == n) break;
      out += ch;
    }
    return out;
  }
  static bool sameKey(const std::string& a, const std::string& b) {
    if (a.rfind("network ", 0) == 0) return words(a, 2) == words(b, 2);
    if (a.rfind("ip route ", 0) == 0) return words(a, 4) == words(b, 4);
    if (a.rfind("set ", 0) == 0) return words(a, 2) == words(b, 2);
    return false;
  }
  static void render(const Node& n, int depth, std::string& out) {
    out += std::string(depth, ' ') + n.text + "\n";
    for (const auto& c : n.children) render(c, depth + 1, out);
    if (depth == 0) out += isBlock(n.text) ? "exit\n!\n" : "!\n";
  }
  static void collectNetworks(const Node& n, nlohmann::json& routes) {
    if (n.text.rfind("network ", 0) == 0) routes[words(n.text, 2).substr(8)] = {{{"valid", true}}};
    for (const auto& c : n.children) collectNetworks(c, routes);
  }
  static bool find(const Node& n, const std::string& text) {
    if (n.text == text) return true;
    return std::any_of(n.children.begin(), n.children.end(), [&](const Node& c) { return find(c, text); });
  }
  int generation_ = 1;
};

class BridgeTest : public ::testing::Test {
 protected:
  BridgeTest() {
    settings_.frr.group = "g1";
    settings_.frr.lease_interface = leaseInterfaceName("g1");
    settings_.frr.local_as = 65001;
    settings_.frr.neighbors = {{"10.250.0.2", 65000, ""}};
    settings_.frr.service_addresses = {"10.99.0.1"};
    settings_.lease_ns = 2000 * kMs;
    settings_.reconcile_interval_ns = 5000 * kMs;
    settings_.state_interval_ns = 1000 * kMs;
  }
  group::BgpDecision decision(BgpIntent intent, BgpPreference p = BgpPreference::kActive, uint64_t generation = 1) {
    group::BgpDecision d;
    d.intent = intent;
    d.preference = p;
    d.generation = generation;
    return d;
  }
  void step(Bridge& b, const std::optional<group::BgpDecision>& d, uint64_t renewed_ms, uint64_t now_ms) {
    b.step(d, renewed_ms * kMs, now_ms * kMs, 1'700'000'000'000 * kMs + now_ms * kMs);
  }
  static constexpr const char* kNetwork = "network 10.99.0.1/32 route-map gtpcp-g1-active";
  FakeFrr frr_;
  BridgeSettings settings_;
  group::BridgeCounters counters_;
};

TEST_F(BridgeTest, WithoutADecisionEverythingIsPreparedAndNothingAnnounced) {
  Bridge b(frr_, settings_, counters_);
  step(b, std::nullopt, 0, 1000);
  EXPECT_TRUE(b.state().known);
  EXPECT_TRUE(frr_.has("route-map gtpcp-g1-active permit 10"));
  EXPECT_TRUE(frr_.has("neighbor 10.250.0.2 remote-as 65000"));
  EXPECT_FALSE(frr_.has(kNetwork));
  EXPECT_EQ(b.state().applied.intent, BgpIntent::kWithdraw);
}

TEST_F(BridgeTest, ADecisionGoesToFrrInOneCallAndIsThenChecked) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kWithdraw), 1000, 1000);
  const auto batches = frr_.batches.size();
  const auto reads = frr_.reads;
  step(b, decision(BgpIntent::kAnnounce, BgpPreference::kActive, 2), 1020, 1020);
  EXPECT_TRUE(frr_.has(kNetwork));
  ASSERT_EQ(frr_.batches.size(), batches + 1);  // the fast path; the reconcile found nothing to do
  EXPECT_THAT(frr_.batches.back(), ::testing::Contains(kNetwork));
  EXPECT_EQ(frr_.reads, reads + 3);  // staticd, bfdd, bgpd
  EXPECT_EQ(b.state().applied_generation, 2u);
  EXPECT_EQ(counters_.changes_applied.load(), 2u);
}

TEST_F(BridgeTest, TheStandbyAnnouncesWithTheWorseRouteMap) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce, BgpPreference::kStandby), 1000, 1000);
  EXPECT_TRUE(frr_.has("network 10.99.0.1/32 route-map gtpcp-g1-standby"));
  EXPECT_TRUE(frr_.has("set metric 200"));
}

TEST_F(BridgeTest, AStaleDecisionIsAWithdraw) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  ASSERT_TRUE(frr_.has(kNetwork));
  step(b, decision(BgpIntent::kAnnounce), 1000, 2900);  // within the lease
  EXPECT_TRUE(frr_.has(kNetwork));
  step(b, decision(BgpIntent::kAnnounce), 1000, 3100);  // 2.1 s old
  EXPECT_FALSE(frr_.has(kNetwork));
  EXPECT_TRUE(b.state().lease_expired);
  EXPECT_EQ(counters_.lease_expiries.load(), 1u);
  step(b, decision(BgpIntent::kAnnounce), 3200, 3200);  // renewed again
  EXPECT_TRUE(frr_.has(kNetwork));
  EXPECT_FALSE(b.state().lease_expired);
}

TEST_F(BridgeTest, WhatARestartedFrrLostIsGivenBack) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  frr_.restart();
  EXPECT_FALSE(frr_.has(kNetwork));
  // Seen at the next look at the daemons (daemons_interval, 100 ms).
  step(b, decision(BgpIntent::kAnnounce), 1120, 1120);
  EXPECT_TRUE(frr_.has(kNetwork));
  EXPECT_TRUE(frr_.has("route-map gtpcp-g1-out permit 10"));
  EXPECT_EQ(counters_.frr_restarts.load(), 1u);
}

TEST_F(BridgeTest, AFreshlyStartedFrrIsConfiguredOnceItSettled) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  frr_.restart();
  frr_.youngest_ms = 100;
  step(b, decision(BgpIntent::kAnnounce), 1120, 1120);
  EXPECT_FALSE(frr_.has(kNetwork));
  EXPECT_TRUE(b.state().settling);
  frr_.youngest_ms = 1100;
  step(b, decision(BgpIntent::kAnnounce), 1140, 1140);  // looked at every turn while settling
  EXPECT_TRUE(frr_.has(kNetwork));
  EXPECT_FALSE(b.state().settling);
}

TEST_F(BridgeTest, AnEditByHandIsUndoneAtTheNextPeriodicReconcile) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  ASSERT_TRUE(frr_.configure({"router bgp 65001", "address-family ipv4 unicast", "no network 10.99.0.1/32", "exit", "exit"}));
  step(b, decision(BgpIntent::kAnnounce), 2000, 2000);
  EXPECT_FALSE(frr_.has(kNetwork));  // not yet: reconciles are 5 s apart
  step(b, decision(BgpIntent::kAnnounce), 6100, 6100);
  EXPECT_TRUE(frr_.has(kNetwork));
}

TEST_F(BridgeTest, AnUnreachableFrrIsRetriedAndReported) {
  frr_.down = true;
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  EXPECT_FALSE(b.state().frr_reachable);
  EXPECT_FALSE(b.state().known);
  EXPECT_GT(counters_.vtysh_failures.load(), 0u);
  frr_.down = false;
  step(b, decision(BgpIntent::kAnnounce), 1020, 1020);  // retried at once: the last one failed
  EXPECT_TRUE(frr_.has(kNetwork));
  EXPECT_TRUE(b.state().frr_reachable);
}

TEST_F(BridgeTest, AConflictingBgpInstanceIsReportedAndLeftAlone) {
  ASSERT_TRUE(frr_.configure({"router bgp 64999", "exit"}));
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  ASSERT_EQ(b.state().problems.size(), 1u);
  EXPECT_THAT(b.state().problems[0], ::testing::HasSubstr("64999"));
  EXPECT_FALSE(frr_.has("router bgp 65001"));
}

TEST_F(BridgeTest, WithdrawAtStop) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  b.withdraw(0);
  EXPECT_FALSE(frr_.has(kNetwork));
  EXPECT_TRUE(frr_.has("route-map gtpcp-g1-active permit 10"));  // the objects stay
}

TEST_F(BridgeTest, AnAnnouncementBgpdDoesNotHoldIsGivenAgain) {
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  EXPECT_TRUE(b.state().in_bgp_table);
  frr_.stuck = true;
  const auto batches = frr_.batches.size();
  for (uint64_t t = 1100; t <= 2100; t += 100) step(b, decision(BgpIntent::kAnnounce), t, t);
  EXPECT_FALSE(b.state().in_bgp_table);
  EXPECT_EQ(frr_.batches.size(), batches);  // missing for 1 s: not yet
  for (uint64_t t = 2200; t <= 4200; t += 100) step(b, decision(BgpIntent::kAnnounce), t, t);
  ASSERT_EQ(counters_.announcements_given_again.load(), 1u);
  const auto& kick = frr_.batches.back();
  const auto no = std::find(kick.begin(), kick.end(), "no network 10.99.0.1/32");
  const auto again = std::find(kick.begin(), kick.end(), kNetwork);
  ASSERT_NE(no, kick.end());
  ASSERT_NE(again, kick.end());
  EXPECT_LT(no, again);
  frr_.stuck = false;
  for (uint64_t t = 4300; t <= 6300; t += 100) step(b, decision(BgpIntent::kAnnounce), t, t);
  EXPECT_TRUE(b.state().in_bgp_table);
  EXPECT_EQ(counters_.announcements_given_again.load(), 1u);
}

TEST_F(BridgeTest, NeighbourAndBfdStateAreReadBack) {
  frr_.neighbors = {{"10.250.0.2", {{"bgpState", "Established"}, {"bgpTimerUpMsec", 1234}}},
                    {"10.1.1.1", {{"bgpState", "Active"}}}};
  frr_.bfd = nlohmann::json::array({{{"peer", "10.250.0.2"}, {"status", "up"}, {"uptime", 5}},
                                    {{"peer", "10.1.1.1"}, {"status", "down"}}});
  Bridge b(frr_, settings_, counters_);
  step(b, decision(BgpIntent::kAnnounce), 1000, 1000);
  EXPECT_EQ(b.state().neighbors, 1u);
  EXPECT_EQ(b.state().neighbors_up, 1u);
  EXPECT_EQ(b.state().bfd_up, 1u);
  ASSERT_EQ(b.state().bfd_state.size(), 1u);  // only the group's neighbours
  const auto status = b.status();
  EXPECT_EQ(status["neighbors"][0]["state"], "Established");
  EXPECT_EQ(status["announced"], true);
}

// gtpcp switchover withdrew 1.6 s late on a loaded host: the decision
// arrived while the bridge waited on vtysh for FRR's neighbour state.
TEST_F(BridgeTest, ADecisionArrivingDuringALookCutsItShortAndGoesFirstNextTurn) {
  frr_.neighbors = {{"10.250.0.2", {{"bgpState", "Established"}}}};
  Bridge b(frr_, settings_, counters_);
  std::optional<group::BgpDecision> latest = decision(BgpIntent::kAnnounce);
  uint64_t now_ms = 1000;
  frr_.onWaiting([&] { return b.wouldChange(latest, now_ms * kMs, now_ms * kMs); });
  int published = 0;
  std::vector<std::string> calls_when_published;
  b.onApplied([&] {
    ++published;
    calls_when_published = frr_.calls;
  });
  step(b, latest, now_ms, now_ms);
  ASSERT_TRUE(frr_.has(kNetwork));
  ASSERT_EQ(b.state().neighbors_up, 1u);
  const auto failures = counters_.vtysh_failures.load();

  // The withdraw is decided while the next state look waits on FRR.
  frr_.slow_looks = true;
  frr_.calls.clear();
  now_ms = 2100;
  latest = decision(BgpIntent::kWithdraw, BgpPreference::kActive, 2);
  step(b, decision(BgpIntent::kAnnounce), now_ms, now_ms);
  EXPECT_EQ(counters_.looks_given_way.load(), 1u);
  EXPECT_EQ(counters_.vtysh_failures.load(), failures);  // no failure: FRR answered nothing wrong
  EXPECT_EQ(b.state().neighbors_up, 1u);                 // the last state stands whole
  EXPECT_TRUE(frr_.has(kNetwork));

  // The next turn applies it before it looks at anything, and says so.
  frr_.calls.clear();
  published = 0;
  now_ms = 2120;
  step(b, latest, now_ms, now_ms);
  EXPECT_FALSE(frr_.has(kNetwork));
  EXPECT_EQ(published, 1);
  EXPECT_EQ(calls_when_published, std::vector<std::string>{"configure"});
  EXPECT_EQ(b.state().applied_generation, 2u);
}

TEST_F(BridgeTest, AnUnchangedDecisionLetsEveryLookFinish) {
  frr_.neighbors = {{"10.250.0.2", {{"bgpState", "Established"}}}};
  frr_.slow_looks = true;
  Bridge b(frr_, settings_, counters_);
  const auto d = decision(BgpIntent::kAnnounce);
  uint64_t now_ms = 1000;
  frr_.onWaiting([&] { return b.wouldChange(d, now_ms * kMs, now_ms * kMs); });
  for (; now_ms <= 4000; now_ms += 100) step(b, d, now_ms, now_ms);
  EXPECT_EQ(counters_.looks_given_way.load(), 0u);
  EXPECT_EQ(b.state().neighbors_up, 1u);
  EXPECT_TRUE(b.state().in_bgp_table);
}

}  // namespace
}  // namespace gtpcp::bridge
