// The bgp-watchdog's rule (watchdog/lib/bgp_decider.h, bgp_health.h) on facts
// and a clock of the test's own: hold-downs, at-once withdrawals, damping,
// a predecessor's decision carried on, and how facts are classed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "watchdog/lib/bgp_decider.h"
#include "watchdog/lib/bgp_health.h"
#include "common/net/local.h"

namespace gtpcp::watchdog {
namespace {

using group::BgpHealth;
using group::BgpIntent;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1000 * kMs;
constexpr uint64_t kReal = 1'700'000'000 * kS;

class BgpDeciderTest : public ::testing::Test {
 protected:
  BgpDeciderTest() {
    settings_.withdraw_hold_ns = 10 * kS;
    settings_.return_hold_ns = 30 * kS;
    settings_.damping_flaps = 3;
    settings_.damping_window_ns = 300 * kS;
    settings_.damping_hold_ns = 120 * kS;
  }
  // Checks once a second from `from` to `to` (seconds) with one finding;
  // returns the time of the first change, or 0.
  uint64_t run(BgpDecider& d, uint64_t from, uint64_t to, const BgpHealthReport& r) {
    uint64_t changed = 0;
    for (uint64_t t = from; t <= to; ++t) {
      if (d.check(r, t * kS, kReal + t * kS) && !changed) changed = t;
    }
    return changed;
  }
  static BgpHealthReport healthy() { return {}; }
  static BgpHealthReport recoverable() { return {BgpHealth::kRecoverable, "worker-0 not running"}; }
  static BgpHealthReport unrecoverable() { return {BgpHealth::kUnrecoverable, "the thread watchdog gave up"}; }
  BgpDeciderSettings settings_;
};

TEST_F(BgpDeciderTest, AStartIsAnnouncedAfterTheReturnHoldOfHealth) {
  BgpDecider d(settings_, 0, kReal);
  EXPECT_EQ(d.decision().intent, BgpIntent::kWithdraw);
  EXPECT_EQ(run(d, 0, 29, healthy()), 0u);
  EXPECT_EQ(d.decision().announce_at_ns, kReal + 30 * kS);
  EXPECT_EQ(run(d, 30, 31, healthy()), 30u);
  EXPECT_EQ(d.decision().intent, BgpIntent::kAnnounce);
  EXPECT_EQ(d.decision().generation, 1u);
}

TEST_F(BgpDeciderTest, ARecoverableFaultWithdrawsOnlyAfterTheHoldDown) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 0, 30, healthy());
  ASSERT_EQ(d.decision().intent, BgpIntent::kAnnounce);
  EXPECT_EQ(run(d, 31, 39, recoverable()), 0u);
  EXPECT_EQ(d.decision().withdraw_at_ns, kReal + 41 * kS);
  EXPECT_EQ(run(d, 40, 41, recoverable()), 41u);
  EXPECT_EQ(d.decision().intent, BgpIntent::kWithdraw);
  EXPECT_NE(d.decision().reason.find("worker-0 not running"), std::string::npos);
}

TEST_F(BgpDeciderTest, AFaultThatHealsWithinTheHoldDownMovesNothing) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 0, 30, healthy());
  EXPECT_EQ(run(d, 31, 35, recoverable()), 0u);
  EXPECT_EQ(run(d, 36, 100, healthy()), 0u);
  EXPECT_EQ(d.decision().intent, BgpIntent::kAnnounce);
  EXPECT_EQ(d.decision().generation, 1u);
}

TEST_F(BgpDeciderTest, UnrecoverableAndAdministrativeWithdrawAtTheNextCheck) {
  for (const auto& r : {unrecoverable(), BgpHealthReport{BgpHealth::kAdministrative, "gtpcp switchover"}}) {
    BgpDecider d(settings_, 0, kReal);
    run(d, 0, 30, healthy());
    EXPECT_EQ(run(d, 31, 31, r), 31u);
    EXPECT_EQ(d.decision().intent, BgpIntent::kWithdraw);
    EXPECT_EQ(d.decision().health, r.health);
  }
}

TEST_F(BgpDeciderTest, ReturnNeedsContinuousHealth) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 0, 30, healthy());
  run(d, 31, 31, unrecoverable());
  // Healthy 20 s, ill 1 s, healthy again: the clock starts over.
  EXPECT_EQ(run(d, 32, 51, healthy()), 0u);
  run(d, 52, 52, recoverable());
  EXPECT_EQ(run(d, 53, 82, healthy()), 0u);
  EXPECT_EQ(run(d, 83, 83, healthy()), 83u);
}

TEST_F(BgpDeciderTest, AProcessKilledEveryFiveSecondsNeverBringsTheRouteBack) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 0, 30, healthy());
  run(d, 31, 31, unrecoverable());
  for (uint64_t t = 32; t < 600; t += 5) {
    EXPECT_EQ(run(d, t, t, recoverable()), 0u);
    EXPECT_EQ(run(d, t + 1, t + 4, healthy()), 0u);
  }
  EXPECT_EQ(d.decision().intent, BgpIntent::kWithdraw);
}

TEST_F(BgpDeciderTest, FlappingHoldsTheRouteDownLonger) {
  BgpDecider d(settings_, 0, kReal);
  uint64_t t = 0;
  run(d, t, t + 30, healthy());
  t += 31;
  // Three unhealthy spells within the window: damped.
  for (int i = 0; i < 3; ++i) {
    run(d, t, t, unrecoverable());
    t += 1;
    if (i < 2) {
      EXPECT_EQ(run(d, t, t + 30, healthy()), t + 30) << i;
      t += 31;
    }
  }
  EXPECT_EQ(run(d, t, t + 100, healthy()), 0u);
  EXPECT_TRUE(d.damped());
  EXPECT_NE(d.decision().reason.find("damped"), std::string::npos);
  EXPECT_EQ(run(d, t + 101, t + 130, healthy()), t + 120);
}

// A slow start and switchovers are not flaps: an instance that started
// unhealthy, then was switched over and back twice, returns after the plain
// return hold.
TEST_F(BgpDeciderTest, NeitherTheStartNorSwitchoversAreDamped) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 1, 4, unrecoverable());
  uint64_t t = 5;
  EXPECT_EQ(run(d, t, t + 30, healthy()), t + 30);
  t += 31;
  const BgpHealthReport switchover{BgpHealth::kAdministrative, "gtpcp switchover"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run(d, t, t + 2, switchover), t) << i;
    t += 3;
    EXPECT_EQ(run(d, t, t + 30, healthy()), t + 30) << i;
    t += 31;
  }
  EXPECT_FALSE(d.damped());
  EXPECT_EQ(d.unhealthySpells(), 4u);
  // One unplanned fall counts.
  run(d, t, t, unrecoverable());
  EXPECT_EQ(run(d, t + 1, t + 31, healthy()), t + 31);
}

TEST_F(BgpDeciderTest, APredecessorsAnnouncementIsCarriedOn) {
  group::BgpDecision previous;
  previous.intent = BgpIntent::kAnnounce;
  previous.generation = 7;
  previous.reason = "healthy for 30.0 s";
  BgpDecider d(settings_, 0, kReal);
  d.adopt(previous, 0);
  EXPECT_EQ(run(d, 0, 5, healthy()), 0u);
  EXPECT_EQ(d.decision().intent, BgpIntent::kAnnounce);
  EXPECT_EQ(run(d, 6, 6, unrecoverable()), 6u);
  EXPECT_EQ(d.decision().generation, 8u);
}

TEST_F(BgpDeciderTest, TheHistoryKeepsEveryChangeWithItsReason) {
  BgpDecider d(settings_, 0, kReal);
  run(d, 0, 30, healthy());
  run(d, 31, 31, unrecoverable());
  const auto h = d.history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0]["intent"], "announce");
  EXPECT_EQ(h[1]["intent"], "withdraw");
  EXPECT_NE(h[1]["reason"].get<std::string>().find("gave up"), std::string::npos);
}

GroupFacts healthyFacts() {
  GroupFacts f;
  f.processes = {{"forwarder", true, true}, {"persister", true, true}, {"worker-0", true, true}};
  f.thread_watchdog_beating = true;
  f.storage = GroupFacts::Storage::kAcknowledging;
  return f;
}

TEST(BgpHealthTest, EverythingBeatingIsHealthy) {
  EXPECT_EQ(classify(healthyFacts()).health, BgpHealth::kHealthy);
}

TEST(BgpHealthTest, AProcessTheThreadWatchdogReplacesIsRecoverable) {
  auto f = healthyFacts();
  f.processes[2] = {"worker-0", false, false};
  const auto r = classify(f);
  EXPECT_EQ(r.health, BgpHealth::kRecoverable);
  EXPECT_NE(r.reason.find("worker-0 not running"), std::string::npos);
  f.processes[2] = {"worker-0", true, false};
  EXPECT_NE(classify(f).reason.find("worker-0 silent"), std::string::npos);
}

TEST(BgpHealthTest, AProcessReplacedBetweenTwoChecksIsRecoverable) {
  // Dead and back within one check interval: the check sees it only in the
  // thread watchdog's count, and must not take the interval for health.
  auto f = healthyFacts();
  f.replaced = 2;
  const auto r = classify(f);
  EXPECT_EQ(r.health, BgpHealth::kRecoverable);
  EXPECT_EQ(r.reason, "2 processes replaced since the last check");
}

TEST(BgpHealthTest, NoOneToReplaceItIsUnrecoverable) {
  auto f = healthyFacts();
  f.processes[2] = {"worker-0", false, false};
  f.thread_watchdog_beating = false;
  EXPECT_EQ(classify(f).health, BgpHealth::kUnrecoverable);
}

TEST(BgpHealthTest, TheThreadWatchdogSilentAloneIsRecoverable) {
  auto f = healthyFacts();
  f.thread_watchdog_beating = false;
  EXPECT_EQ(classify(f).health, BgpHealth::kRecoverable);
}

TEST(BgpHealthTest, GivenUpOrAllSilentIsUnrecoverable) {
  auto f = healthyFacts();
  f.given_up = 1;
  EXPECT_EQ(classify(f).health, BgpHealth::kUnrecoverable);
  f = healthyFacts();
  for (auto& p : f.processes) p.beating = false;
  EXPECT_EQ(classify(f).health, BgpHealth::kUnrecoverable);
  EXPECT_EQ(classify(f).reason, "no process of the group beats");
}

TEST(BgpHealthTest, TheServiceAddressGoneIsUnrecoverable) {
  auto f = healthyFacts();
  f.addresses_not_local = {"10.99.0.1"};
  EXPECT_EQ(classify(f).health, BgpHealth::kUnrecoverable);
  f = healthyFacts();
  f.addresses_not_held = {"10.99.0.1"};
  EXPECT_EQ(classify(f).health, BgpHealth::kUnrecoverable);
  // Not held because the forwarder is being replaced: recoverable.
  f.processes[0] = {"forwarder", false, false};
  EXPECT_EQ(classify(f).health, BgpHealth::kRecoverable);
}

TEST(BgpHealthTest, StorageNotAcknowledgingIsRecoverable) {
  auto f = healthyFacts();
  f.storage = GroupFacts::Storage::kSlow;
  f.storage_lag_ms = 7000;
  const auto r = classify(f);
  EXPECT_EQ(r.health, BgpHealth::kRecoverable);
  EXPECT_NE(r.reason.find("7000 ms"), std::string::npos);
  f.storage = GroupFacts::Storage::kDown;
  EXPECT_EQ(classify(f).health, BgpHealth::kRecoverable);
}

TEST(BgpHealthTest, SwitchoverAndStopAreAdministrative) {
  auto f = healthyFacts();
  f.withdraw_asked = true;
  EXPECT_EQ(classify(f).health, BgpHealth::kAdministrative);
  f.withdraw_asked = false;
  f.stopping = true;
  EXPECT_EQ(classify(f).health, BgpHealth::kAdministrative);
}

TEST(BgpHealthTest, TheLocalAddressCheckBindsWithoutFreebind) {
  EXPECT_TRUE(net::isLocalAddress("127.0.0.1"));
  EXPECT_FALSE(net::isLocalAddress("192.0.2.77"));  // TEST-NET-1: never local here
  EXPECT_FALSE(net::isLocalAddress("not an address"));
}

TEST(BgpHealthTest, TheForwardersSocketIsFoundThroughProc) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(0x7f000001);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const uint16_t port = ntohs(a.sin_port);
  EXPECT_TRUE(net::holdsUdpSocket(getpid(), "127.0.0.1", port));
  EXPECT_FALSE(net::holdsUdpSocket(getpid(), "127.0.0.2", port));
  EXPECT_FALSE(net::holdsUdpSocket(getpid(), "127.0.0.1", static_cast<uint16_t>(port + 1)));
  EXPECT_FALSE(net::holdsUdpSocket(1, "127.0.0.1", port));  // another process
  ::close(fd);
  EXPECT_FALSE(net::holdsUdpSocket(getpid(), "127.0.0.1", port));
}

}  // namespace
}  // namespace gtpcp::watchdog
