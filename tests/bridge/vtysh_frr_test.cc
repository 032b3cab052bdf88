// VtyshFrr's calls of a vtysh that is slow or hangs: the caller's waiting
// hook runs throughout (the bridge beats from it, so a slow FRR never looks
// like a hung bridge to the thread watchdog), and a hung one is killed at
// the timeout. The vtysh here is a script standing in for it: the point is
// how the call waits, not what FRR says.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "bgpd-bridge/lib/vtysh_frr.h"
#include "tests/support/process.h"

namespace gtpcp::bridge {
namespace {

using namespace std::chrono_literals;

std::string script(const testing::TempDir& dir, const std::string& body) {
  const std::string path = dir.file("vtysh");
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(VtyshFrrTest, ASlowVtyshKeepsTheCallerBeating) {
  testing::TempDir dir;
  VtyshSettings s;
  s.vtysh = script(dir, "sleep 0.8\necho 'bgpd running-config'");
  VtyshFrr frr(s);
  int calls = 0;
  frr.onWaiting([&] {
    ++calls;
    return false;
  });
  const auto started = std::chrono::steady_clock::now();
  const auto r = frr.runningConfig("bgpd");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, "bgpd running-config\n");
  const auto took = std::chrono::steady_clock::now() - started;
  // One call per waiting period at least, whatever the host's speed.
  EXPECT_GE(calls, static_cast<int>(took / std::chrono::milliseconds(FrrControl::kWaitingPeriodMs)));
  EXPECT_GE(calls, 5);
}

TEST(VtyshFrrTest, ALookGivesWayWhenAskedAndAChangeDoesNot) {
  testing::TempDir dir;
  VtyshSettings s;
  s.vtysh = script(dir, "sleep 0.6\necho done");
  s.timeout = 20s;
  VtyshFrr frr(s);
  int calls = 0;
  frr.onWaiting([&] { return ++calls >= 2; });
  const auto look = frr.showJson("show bgp neighbors json");
  ASSERT_FALSE(look);
  EXPECT_TRUE(FrrControl::gaveWay(look.error())) << look.error();
  EXPECT_EQ(calls, 2);  // ended at the first ask, not at the script's end
  calls = 0;
  const auto change = frr.configure({"router bgp 65001"});
  EXPECT_TRUE(change) << change.error();  // FRR would otherwise hold half of it
  EXPECT_GE(calls, 2);
}

TEST(VtyshFrrTest, AHungVtyshIsKilledAtTheTimeout) {
  testing::TempDir dir;
  VtyshSettings s;
  s.vtysh = script(dir, "exec sleep 30");
  s.timeout = 500ms;
  VtyshFrr frr(s);
  int calls = 0;
  frr.onWaiting([&] {
    ++calls;
    return false;
  });
  const auto r = frr.configure({"router bgp 65001"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("did not answer within 500 ms"), std::string::npos) << r.error();
  EXPECT_GE(calls, 3);
}

}  // namespace
}  // namespace gtpcp::bridge
