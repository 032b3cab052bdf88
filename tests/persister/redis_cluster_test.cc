// RedisClientImpl against a real Redis Cluster of 3 primaries and 3 replicas
// (cluster-node-timeout 1000 ms): routing by slot, resharding (ASK, then
// MOVED), and the loss of a primary under a write load.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <sstream>

#include "tests/persister/redis_harness.h"

namespace gtpcp::persister::test {
namespace {

using testing::RedisCluster;
using namespace std::chrono_literals;

// One key per slot: "k<n>" for the first n that hashes there.
std::vector<std::string> keyPerSlot() {
  std::vector<std::string> keys(kSlotCount);
  std::size_t found = 0;
  for (int i = 0; found < kSlotCount; ++i) {
    std::string k = "k" + std::to_string(i);
    auto& slot = keys[keySlot(k)];
    if (slot.empty()) {
      slot = std::move(k);
      ++found;
    }
  }
  return keys;
}

std::vector<uint16_t> primaries(const RedisCluster& cluster) {
  std::vector<uint16_t> out;
  for (const auto& n : cluster.nodes())
    if (n.primary) out.push_back(n.port);
  return out;
}

TEST(RedisCluster, WritesLandOnThePrimaryOfTheirSlot) {
  RedisCluster cluster;
  EventLoop loop;
  // One seed is enough: the others are learnt from CLUSTER SLOTS.
  auto client = makeClient(loop, configFor(RedisMode::kCluster, {cluster.ports().front()}));
  ASSERT_TRUE(client);

  // Submitted before the slot map is known: they wait for it.
  const auto keys = keyPerSlot();
  std::vector<Outcome> outcomes(keys.size());
  for (std::size_t s = 0; s < keys.size(); ++s)
    ASSERT_EQ(submitSet(*client, keys[s], keys[s], outcomes[s]), RedisErrc::kOk);
  Outcome tx;
  const std::string_view multi[] = {"MULTI"}, set1[] = {"SET", "{tx}a", "1"}, set2[] = {"SET", "{tx}b", "2"},
                         exec[] = {"EXEC"};
  const RedisArgv group[] = {multi, set1, set2, exec};
  ASSERT_EQ(client->submitGroup(keySlot("{tx}"), group, recordInto(tx)), RedisErrc::kOk);
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 20s)) << client->held() << " unanswered";
  EXPECT_TRUE(client->connected());
  // Every primary of the slot map, once each, for the metrics.
  std::vector<std::string> primaries;
  client->primaries(primaries);
  std::size_t primary_nodes = 0;
  for (const auto& n : cluster.nodes()) primary_nodes += n.primary && !n.failed ? 1 : 0;
  EXPECT_EQ(primaries.size(), primary_nodes);
  for (const std::string& p : primaries) EXPECT_EQ(p.rfind("127.0.0.1:", 0), 0u) << p;

  std::size_t ok = 0;
  for (const auto& o : outcomes) ok += o.error == RedisErrc::kOk ? 1 : 0;
  EXPECT_EQ(ok, kSlotCount);
  EXPECT_EQ(tx.error, RedisErrc::kOk);
  EXPECT_EQ(tx.elements, 2u);
  const auto& c = client->counters();
  EXPECT_EQ(c.moved.load(), 0u);
  EXPECT_EQ(c.ask.load(), 0u);
  EXPECT_GE(c.topology_refreshes.load(), 1u);

  // Read back from each primary alone: its slots' keys, and nothing else.
  const auto owners = cluster.slotOwners();
  std::map<uint16_t, std::vector<std::string>> by_node;
  for (std::size_t s = 0; s < keys.size(); ++s) by_node[owners[s]].push_back(keys[s]);
  for (const char* k : {"{tx}a", "{tx}b"}) by_node[owners[keySlot("{tx}")]].push_back(k);
  ASSERT_EQ(by_node.size(), 3u);
  for (const auto& [port, list] : by_node) {
    const auto values = testing::redisGetMany(port, list);
    std::size_t right = 0;
    for (std::size_t i = 0; i < list.size(); ++i) right += values[i].has_value() ? 1 : 0;
    EXPECT_EQ(right, list.size()) << "node " << port;
    EXPECT_EQ(testing::redisCommand(port, {"DBSIZE"}), std::to_string(list.size())) << "node " << port;
  }
}

TEST(RedisCluster, ReshardingOneSlotGivesAskThenMovedAndEveryWriteSucceeds) {
  RedisCluster cluster;
  EventLoop loop;
  auto client = makeClient(loop, configFor(RedisMode::kCluster, primaries(cluster)));
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 10s));

  const uint16_t slot = keySlot("{mig}");
  const uint16_t from = cluster.ownerOf(slot);
  uint16_t to = 0;
  for (const uint16_t p : primaries(cluster))
    if (p != from) to = p;
  ASSERT_NE(from, 0);
  ASSERT_NE(to, 0);
  const std::string from_id = cluster.idOf(from), to_id = cluster.idOf(to);

  std::deque<Outcome> outcomes;
  std::vector<std::string> written;
  auto writeBatch = [&](const std::string& tag, int n) {
    for (int i = 0; i < n; ++i) {
      written.push_back("{mig}:" + tag + ":" + std::to_string(i));
      ASSERT_EQ(submitSet(*client, written.back(), written.back(), outcomes.emplace_back()), RedisErrc::kOk);
    }
    ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 10s));
  };
  // MULTI, a SET per key, EXEC: one group, sent and redirected as a whole.
  struct Transaction {
    std::vector<std::string> keys;
    Outcome outcome;
  };
  std::deque<Transaction> transactions;
  auto startTransaction = [&](const std::string& tag, int keys) -> Transaction& {
    Transaction& tx = transactions.emplace_back();
    std::vector<std::array<std::string_view, 3>> sets;
    for (int i = 0; i < keys; ++i) tx.keys.push_back("{mig}:" + tag + ":" + std::to_string(i));
    for (const auto& k : tx.keys) sets.push_back({"SET", k, k});
    const std::string_view multi[] = {"MULTI"}, exec[] = {"EXEC"};
    std::vector<RedisArgv> group{multi};
    for (const auto& set : sets) group.push_back(set);
    group.push_back(exec);
    EXPECT_EQ(client->submitGroup(slot, group, recordInto(tx.outcome)), RedisErrc::kOk);
    written.insert(written.end(), tx.keys.begin(), tx.keys.end());
    return tx;
  };
  auto transactionDone = [&](const Transaction& tx) {
    ASSERT_TRUE(runUntil(loop, [&] { return tx.outcome.done; }, 10s)) << tx.keys.front();
    EXPECT_EQ(tx.outcome.error, RedisErrc::kOk) << tx.keys.front() << ": " << tx.outcome.text;
    EXPECT_EQ(tx.outcome.elements, tx.keys.size()) << tx.keys.front();
  };
  writeBatch("old", 100);
  EXPECT_EQ(client->counters().ask.load(), 0u);

  // Migration half done: keys still on `from` are served there, new ones are
  // sent on to `to` with ASK.
  ASSERT_EQ(testing::redisCommand(to, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", from_id}), "OK");
  ASSERT_EQ(testing::redisCommand(from, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", to_id}), "OK");
  writeBatch("new", 50);
  EXPECT_GE(client->counters().ask.load(), 50u);
  const uint64_t ask_before_tx = client->counters().ask.load();
  transactionDone(startTransaction("tx-ask", 1));
  EXPECT_GT(client->counters().ask.load(), ask_before_tx);
  EXPECT_EQ(client->counters().moved.load(), 0u);
  // Several keys of the slot, not all on one side: the importing node says
  // TRYAGAIN until the migration ends, and the transaction waits for it.
  const Transaction& waiting = startTransaction("tx-wait", 2);
  runUntil(loop, [] { return false; }, 300ms);
  EXPECT_FALSE(waiting.outcome.done);
  EXPECT_GE(client->counters().retried.load(), 1u);

  // Finish: move the keys, then give the slot to `to` everywhere.
  const auto keys = testing::redisCommand(from, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "1000"});
  ASSERT_TRUE(keys && !keys->empty());
  std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(to), "", "0", "5000", "KEYS"};
  std::stringstream lines(*keys);
  for (std::string k; std::getline(lines, k);) migrate.push_back(k);
  ASSERT_EQ(testing::redisCommand(from, migrate), "OK");
  for (const uint16_t p : {to, from})
    ASSERT_EQ(testing::redisCommand(p, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id}), "OK");
  for (const uint16_t p : primaries(cluster))
    if (p != to && p != from) testing::redisCommand(p, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id});

  writeBatch("after", 50);
  EXPECT_GE(client->counters().moved.load(), 1u);
  transactionDone(waiting);
  transactionDone(startTransaction("tx-after", 2));
  EXPECT_EQ(client->counters().redirect_failures.load(), 0u);

  std::size_t ok = 0;
  for (const auto& o : outcomes) ok += o.error == RedisErrc::kOk ? 1 : 0;
  EXPECT_EQ(ok, outcomes.size());
  const auto values = testing::redisGetMany(to, written);
  std::size_t readable = 0;
  for (std::size_t i = 0; i < written.size(); ++i) readable += values[i] == written[i] ? 1 : 0;
  EXPECT_EQ(readable, written.size());
  std::printf("resharding slot %u: %llu ASK, %llu MOVED, %zu writes all on the new owner\n", slot,
              static_cast<unsigned long long>(client->counters().ask.load()),
              static_cast<unsigned long long>(client->counters().moved.load()), written.size());
}

TEST(RedisCluster, KilledPrimaryUnderLoadIsReplacedAndNoAcknowledgedWriteIsLost) {
  RedisCluster cluster;
  EventLoop loop;
  auto client = makeClient(loop, configFor(RedisMode::kCluster, cluster.ports()));
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 10s));

  const uint16_t victim = cluster.ownerOf(0);
  const uint16_t replica = cluster.replicaOf(victim);
  ASSERT_NE(replica, 0);
  const auto owners_before = cluster.slotOwners();
  auto victims = [&](const WriteLoad::Write& w) { return owners_before[w.slot] == victim; };

  WriteLoad load(*client, "f", 1000);
  load.runFor(loop, 500ms);
  ASSERT_GT(load.writes().size(), 100u);
  const uint64_t killed = monotonicNs();
  cluster.server(victim).kill();

  uint64_t promoted = 0, last_poll = 0;
  load.runFor(loop, 15s, [&] {
    const uint64_t now = monotonicNs();
    if (promoted == 0 && now - last_poll > 20'000'000) {
      last_poll = now;
      const auto role = testing::redisCommand(replica, {"ROLE"});
      if (role && role->rfind("master", 0) == 0) promoted = now;
    }
    const uint64_t resumed = load.firstAckAfter(killed, victims);
    return promoted != 0 && resumed != 0 && now - resumed > 300'000'000;
  });
  const uint64_t resumed = load.firstAckAfter(killed, victims);
  ASSERT_TRUE(runUntil(loop, [&] { return load.outstanding() == 0; }, 25s)) << load.outstanding() << " unanswered";
  std::printf(
      "cluster failover (node timeout 1000 ms): replica %u promoted after %.0f ms, writes to its slots "
      "acknowledged again after %.0f ms; %zu writes, %llu resent, %llu retried, %llu MOVED, %llu topology "
      "refreshes\n",
      replica, promoted ? msSince(killed, promoted) : -1.0, resumed ? msSince(killed, resumed) : -1.0,
      load.writes().size(), static_cast<unsigned long long>(client->counters().resent.load()),
      static_cast<unsigned long long>(client->counters().retried.load()),
      static_cast<unsigned long long>(client->counters().moved.load()),
      static_cast<unsigned long long>(client->counters().topology_refreshes.load()));
  ASSERT_NE(resumed, 0u) << "writes to the lost primary's slots never resumed";
  EXPECT_LT(msSince(killed, resumed), 15000);
  EXPECT_EQ(load.failed(), 0u);
  EXPECT_TRUE(client->connected());
  EXPECT_GE(client->counters().topology_refreshes.load(), 2u);

  const auto owners_after = cluster.slotOwners();
  EXPECT_EQ(owners_after[0], replica);
  const std::size_t unreadable =
      countUnreadable(load.writes(), [](const WriteLoad::Write&) { return true; },
                      [&](const WriteLoad::Write& w) { return owners_after[w.slot]; });
  EXPECT_EQ(unreadable, 0u);
}

}  // namespace
}  // namespace gtpcp::persister::test
