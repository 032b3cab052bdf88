// RedisClientImpl against a Sentinel-managed primary with two replicas and
// three sentinels (quorum 2, down-after 1000 ms): the client finds the
// primary through the sentinels and follows a failover.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/persister/redis_harness.h"

namespace gtpcp::persister::test {
namespace {

using testing::RedisSentinels;
using namespace std::chrono_literals;

TEST(RedisSentinel, ClientFollowsTheNewPrimaryAfterTheOldOneIsKilled) {
  RedisSentinels set;
  EventLoop loop;
  auto config = configFor(RedisMode::kSentinel, set.sentinelPorts());
  config.master_name = set.name();
  auto client = makeClient(loop, config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 10s));

  const uint16_t old_primary = set.primaryPort();
  ASSERT_NE(old_primary, 0);
  WriteLoad load(*client, "s", 500);
  load.runFor(loop, 500ms);
  ASSERT_GT(load.writes().size(), 100u);
  const uint64_t killed = monotonicNs();
  set.server(old_primary).kill();

  auto all = [](const WriteLoad::Write&) { return true; };
  load.runFor(loop, 15s, [&] {
    const uint64_t resumed = load.firstAckAfter(killed, all);
    return resumed != 0 && monotonicNs() - resumed > 300'000'000;
  });
  const uint64_t resumed = load.firstAckAfter(killed, all);
  ASSERT_TRUE(runUntil(loop, [&] { return load.outstanding() == 0; }, 25s)) << load.outstanding() << " unanswered";
  const uint16_t new_primary = set.primaryPort();
  std::printf(
      "sentinel failover (down-after 1000 ms): primary %u -> %u, writes acknowledged again after %.0f ms; %zu "
      "writes, %llu resent, %llu +switch-master followed, %llu topology refreshes\n",
      old_primary, new_primary, resumed ? msSince(killed, resumed) : -1.0, load.writes().size(),
      static_cast<unsigned long long>(client->counters().resent.load()),
      static_cast<unsigned long long>(client->counters().primary_switches.load()),
      static_cast<unsigned long long>(client->counters().topology_refreshes.load()));
  ASSERT_NE(resumed, 0u) << "writes never resumed";
  EXPECT_LT(msSince(killed, resumed), 15000);
  ASSERT_NE(new_primary, old_primary);
  EXPECT_EQ(load.failed(), 0u);
  EXPECT_TRUE(client->connected());
  // The sentinel asked may report the promoted replica (polled while the
  // primary is unreachable) before the failover ends and +switch-master is
  // published: the announcement arrives, just not necessarily first.
  EXPECT_TRUE(runUntil(loop, [&] { return client->counters().primary_switches.load() >= 1; }, 10s));
  // What the metrics name as the primary follows it too.
  std::vector<std::string> primaries;
  client->primaries(primaries);
  ASSERT_EQ(primaries.size(), 1u);
  EXPECT_EQ(primaries[0], "127.0.0.1:" + std::to_string(new_primary));

  // Written after the kill: only the new primary can have acknowledged them.
  auto after_kill = [&](const WriteLoad::Write& w) { return w.submitted_ns > killed; };
  EXPECT_EQ(countUnreadable(load.writes(), after_kill, [&](const WriteLoad::Write&) { return new_primary; }), 0u);
  // Before it, replication was asynchronous: reported, not required.
  auto before_kill = [&](const WriteLoad::Write& w) { return w.submitted_ns <= killed; };
  std::printf("writes acknowledged before the kill missing on the new primary: %zu\n",
              countUnreadable(load.writes(), before_kill, [&](const WriteLoad::Write&) { return new_primary; }));
}

}  // namespace
}  // namespace gtpcp::persister::test
