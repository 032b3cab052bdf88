// RedisClientImpl against one real redis-server: pipelining, reconnection
// with the commands held while down, the bound on what is held, command
// timeouts on a server that stops answering, error replies and groups.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

#include "tests/persister/redis_harness.h"
#include "persister/lib/writes_watch.h"
#include "common/group/persister_shm.h"

namespace gtpcp::persister::test {
namespace {

using testing::RedisServer;
using testing::TempDir;
using namespace std::chrono_literals;

// A server, and a client of it (configured by `tune`).
struct ServerAndClient {
  explicit ServerAndClient(const std::function<void(RedisClientConfig&)>& tune = {}) : server(dir.path(), {}) {
    auto config = configFor(RedisMode::kSingle, {server.port()});
    if (tune) tune(config);
    client = makeClient(loop, config);
  }
  TempDir dir;
  RedisServer server;
  EventLoop loop;
  std::unique_ptr<RedisClientImpl> client;
};

std::size_t countErrors(const std::vector<Outcome>& outcomes, RedisErrc e) {
  std::size_t n = 0;
  for (const auto& o : outcomes) n += o.done && o.error == e ? 1 : 0;
  return n;
}

std::size_t countDone(const std::vector<Outcome>& outcomes) {
  std::size_t n = 0;
  for (const auto& o : outcomes) n += o.done ? 1 : 0;
  return n;
}

TEST(RedisSingle, HundredThousandPipelinedSetsAreAllAnswered) {
  ServerAndClient s([](RedisClientConfig& c) { c.max_pending = 100'000; });
  auto& [dir, server, loop, client] = s;
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 5s));

  constexpr std::size_t kWrites = 100'000;
  std::vector<Outcome> outcomes(kWrites);
  const uint64_t start = monotonicNs();
  for (std::size_t i = 0; i < kWrites; ++i)
    ASSERT_EQ(submitSet(*client, "k:" + std::to_string(i), "v" + std::to_string(i), outcomes[i]), RedisErrc::kOk);
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 60s)) << client->held() << " unanswered";
  const double ms = msSince(start, monotonicNs());
  std::printf("100000 pipelined SETs in %.0f ms (%.0f per second)\n", ms, kWrites / ms * 1000);

  EXPECT_EQ(countErrors(outcomes, RedisErrc::kOk), kWrites);
  EXPECT_EQ(outcomes.back().text, "OK");
  const auto& c = client->counters();
  EXPECT_EQ(c.submitted.load(), kWrites);
  EXPECT_EQ(c.completed.load(), kWrites);
  EXPECT_EQ(c.refused.load(), 0u);
  EXPECT_EQ(c.in_flight.load(), 0u);
  EXPECT_EQ(c.queued.load(), 0u);
  EXPECT_EQ(testing::redisCommand(server.port(), {"DBSIZE"}), "100000");
  EXPECT_EQ(testing::redisCommand(server.port(), {"GET", "k:99999"}), "v99999");
}

TEST(RedisSingle, CommandsHeldWhileDownAreSentAfterRestart) {
  ServerAndClient s;
  auto& [dir, server, loop, client] = s;
  ASSERT_TRUE(client);
  Outcome before;
  ASSERT_EQ(submitSet(*client, "before", "1", before), RedisErrc::kOk);
  ASSERT_TRUE(runUntil(loop, [&] { return before.done; }, 5s));
  ASSERT_EQ(before.error, RedisErrc::kOk);

  server.kill();
  ASSERT_TRUE(runUntil(loop, [&] { return !client->connected(); }, 5s));
  std::vector<Outcome> outcomes(1000);
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    ASSERT_EQ(submitSet(*client, "held:" + std::to_string(i), std::to_string(i), outcomes[i]), RedisErrc::kOk);
  EXPECT_EQ(client->counters().queued.load(), 1000u);
  EXPECT_EQ(client->counters().in_flight.load(), 0u);
  runUntil(loop, [] { return false; }, 200ms);
  EXPECT_EQ(countDone(outcomes), 0u);

  server.restart();
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 10s));
  EXPECT_EQ(countErrors(outcomes, RedisErrc::kOk), outcomes.size());
  EXPECT_TRUE(client->connected());
  EXPECT_GE(client->counters().reconnects.load(), 1u);
  EXPECT_GE(client->counters().disconnects.load(), 1u);
  EXPECT_EQ(testing::redisCommand(server.port(), {"GET", "held:999"}), "999");
}

TEST(RedisSingle, RefusesBeyondTheBoundWhileNoServerAnswers) {
  TempDir dir;
  const uint16_t port = testing::freeTcpPort();
  EventLoop loop;
  auto config = configFor(RedisMode::kSingle, {port});
  config.max_pending = 100;
  auto client = makeClient(loop, config);
  ASSERT_TRUE(client);
  runUntil(loop, [] { return false; }, 100ms);
  EXPECT_FALSE(client->connected());
  EXPECT_GE(client->counters().connect_failures.load(), 1u);

  std::vector<Outcome> outcomes(150);
  std::size_t refused = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    refused += submitSet(*client, "b:" + std::to_string(i), "x", outcomes[i]) == RedisErrc::kRefused ? 1 : 0;
  EXPECT_EQ(refused, 50u);
  EXPECT_EQ(client->counters().refused.load(), 50u);
  EXPECT_EQ(client->counters().queued.load(), 100u);

  RedisServer::Options o;
  o.port = port;
  RedisServer server(dir.path(), o);
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 10s));
  EXPECT_EQ(countErrors(outcomes, RedisErrc::kOk), 100u);
  EXPECT_EQ(countDone(outcomes), 100u);  // the refused ones are never called
  EXPECT_EQ(testing::redisCommand(port, {"DBSIZE"}), "100");
}

TEST(RedisSingle, ServerThatStopsAnsweringTimesCommandsOut) {
  ServerAndClient s([](RedisClientConfig& c) { c.command_timeout_ms = 300; });
  auto& [dir, server, loop, client] = s;
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 5s));

  server.pause();
  std::vector<Outcome> plain(10), idempotent(10);
  for (std::size_t i = 0; i < 10; ++i) {
    ASSERT_EQ(submitSet(*client, "p:" + std::to_string(i), "1", plain[i]), RedisErrc::kOk);
    ASSERT_EQ(submitSet(*client, "i:" + std::to_string(i), "1", idempotent[i], kRedisIdempotent), RedisErrc::kOk);
  }
  const uint64_t start = monotonicNs();
  ASSERT_TRUE(runUntil(loop, [&] { return countDone(plain) == 10; }, 5s));
  const double ms = msSince(start, monotonicNs());
  EXPECT_GE(ms, 250);
  EXPECT_EQ(countErrors(plain, RedisErrc::kTimeout), 10u);
  EXPECT_EQ(countDone(idempotent), 0u);  // sent again, still waiting

  server.resume();
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 10s));
  EXPECT_EQ(countErrors(idempotent, RedisErrc::kOk), 10u);
  EXPECT_EQ(client->counters().timeouts.load(), 10u);
  EXPECT_GE(client->counters().resent.load(), 10u);
}

TEST(RedisSingle, ErrorRepliesGroupsAndBadCommands) {
  ServerAndClient s;
  auto& [dir, server, loop, client] = s;
  ASSERT_TRUE(client);

  Outcome set, wrong_type, after;
  ASSERT_EQ(submitSet(*client, "s", "text", set), RedisErrc::kOk);
  const std::string_view lpush[] = {"LPUSH", "s", "x"};
  ASSERT_EQ(client->submit(keySlot("s"), lpush, recordInto(wrong_type)), RedisErrc::kOk);
  ASSERT_EQ(submitSet(*client, "t", "1", after), RedisErrc::kOk);

  Outcome tx;
  const std::string_view multi[] = {"MULTI"}, set1[] = {"SET", "{g}a", "1"}, set2[] = {"SET", "{g}b", "2"},
                         exec[] = {"EXEC"};
  const RedisArgv group[] = {multi, set1, set2, exec};
  ASSERT_EQ(client->submitGroup(keySlot("{g}"), group, recordInto(tx)), RedisErrc::kOk);
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 5s));

  EXPECT_EQ(set.error, RedisErrc::kOk);
  EXPECT_EQ(wrong_type.error, RedisErrc::kReplyError);
  EXPECT_EQ(wrong_type.text.substr(0, 9), "WRONGTYPE");
  EXPECT_EQ(after.error, RedisErrc::kOk);  // the pipeline goes on after an error
  EXPECT_EQ(tx.error, RedisErrc::kOk);
  EXPECT_EQ(tx.elements, 2u);  // EXEC's answer: one per queued command
  EXPECT_EQ(client->counters().reply_errors.load(), 1u);
  EXPECT_EQ(testing::redisCommand(server.port(), {"GET", "{g}b"}), "2");

  Outcome unused;
  EXPECT_EQ(client->submit(0, RedisArgv(), recordInto(unused)), RedisErrc::kBadCommand);
  std::vector<RedisArgv> too_many(kMaxGroupCommands + 1, RedisArgv(multi));
  EXPECT_EQ(client->submitGroup(0, too_many, recordInto(unused)), RedisErrc::kBadCommand);
  EXPECT_FALSE(unused.done);
}

TEST(RedisSingle, DestroyingTheClientCompletesWhatItHolds) {
  EventLoop loop;
  std::vector<Outcome> outcomes(5);
  {
    auto client = makeClient(loop, configFor(RedisMode::kSingle, {testing::freeTcpPort()}));
    ASSERT_TRUE(client);
    for (auto& o : outcomes) ASSERT_EQ(submitSet(*client, "x", "y", o), RedisErrc::kOk);
  }
  EXPECT_EQ(countErrors(outcomes, RedisErrc::kShutdown), outcomes.size());
}

// hiredis writes with write(2); a server that resets its connections while
// commands are being written (a killed primary) must fail them, never raise
// SIGPIPE. The test starts with SIGPIPE's default action, which ends the
// process, so a regression is a crash here, not a flake elsewhere.
TEST(RedisSingle, AServerResettingItsConnectionsFailsCommandsAndNeverEndsTheProcess) {
  signal(SIGPIPE, SIG_DFL);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);

  EventLoop loop;
  auto config = configFor(RedisMode::kSingle, {ntohs(a.sin_port)});
  config.command_timeout_ms = 500;
  config.request_timeout_ms = 500;
  config.connection.reconnect_min_ms = 1;
  config.connection.reconnect_max_ms = 5;
  auto client = makeClient(loop, config);
  ASSERT_TRUE(client);
  struct sigaction now{};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, SIG_IGN) << "a Redis client must not leave SIGPIPE able to end its process";

  // Every connection: read what the client wrote, then reset it (linger 0),
  // while the client keeps writing 64 KiB values into it.
  const std::string value(64 * 1024, 'v');
  std::vector<Outcome> outcomes(200);
  std::size_t submitted = 0;
  int resets = 0;
  int connection = -1;
  char buf[4096];
  runUntil(loop, [&] {
    if (submitted < outcomes.size()) {
      if (submitSet(*client, "k" + std::to_string(submitted), value, outcomes[submitted]) == RedisErrc::kOk) ++submitted;
    }
    if (connection < 0) connection = accept(listener, nullptr, nullptr);
    if (connection >= 0 && recv(connection, buf, sizeof buf, MSG_DONTWAIT) > 0) {
      linger l{1, 0};
      setsockopt(connection, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      close(connection);
      connection = -1;
      ++resets;
    }
    return resets >= 20 && submitted == outcomes.size();
  }, 5s);
  if (connection >= 0) close(connection);
  EXPECT_GE(resets, 3);
  client.reset();
  close(listener);
  EXPECT_EQ(countDone(outcomes), submitted) << "every command submitted is completed";
  for (const auto& o : outcomes) EXPECT_NE(o.error == RedisErrc::kOk && o.done, true) << "nothing answered, nothing acknowledged";
}

}  // namespace
}  // namespace gtpcp::persister::test

namespace gtpcp::persister {
namespace {

using namespace std::chrono_literals;
using test::runUntil;

// Two instances' watches on one real Redis: each sees the other's writes,
// never its own, and nothing when nothing was written.
TEST(WritesWatch, EachInstanceSeesTheOthersWritesAndNotItsOwn) {
  testing::TempDir dir;
  testing::RedisServer server(dir.path(), {});
  EventLoop loop;
  auto client = test::makeClient(loop, test::configFor(RedisMode::kSingle, {server.port()}));
  ASSERT_TRUE(client);
  ASSERT_TRUE(runUntil(loop, [&] { return client->connected(); }, 5s));
  PersisterShm shm_a{}, shm_b{};
  WritesWatch a(*client, "g", "a", shm_a.writes, shm_a.counters, 1000);
  WritesWatch b(*client, "g", "b", shm_b.writes, shm_b.counters, 2000);
  uint64_t now = WritesWatch::kPeriodNs;
  // One period of both: every command of it answered.
  auto period = [&](uint64_t written_a, uint64_t written_b) {
    now += WritesWatch::kPeriodNs;
    a.turn(now, written_a);
    b.turn(now, written_b);
    ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 5s));
  };
  period(0, 0);
  period(0, 0);
  EXPECT_EQ(shm_a.writes.foreign_epoch.load(), 0u) << "nobody wrote";
  EXPECT_EQ(shm_b.writes.foreign_epoch.load(), 0u);
  // Neither wrote and neither sees another: each may be alone.
  EXPECT_EQ(shm_a.writes.acts_for_stored.load(), 1u);

  period(5, 0);  // a marks its writes
  period(5, 0);  // b reads them
  EXPECT_EQ(shm_b.writes.foreign_epoch.load(), 1u);
  EXPECT_EQ(shm_a.writes.foreign_epoch.load(), 0u) << "its own writes are not foreign";
  period(5, 0);
  EXPECT_EQ(shm_b.writes.foreign_epoch.load(), 1u) << "no new write, no new epoch";
  // a carries the traffic: it acts for the stored sessions, b does not.
  EXPECT_EQ(shm_a.writes.acts_for_stored.load(), 1u);
  EXPECT_EQ(shm_b.writes.acts_for_stored.load(), 0u);

  period(9, 3);
  period(9, 3);
  EXPECT_EQ(shm_b.writes.foreign_epoch.load(), 2u);
  EXPECT_EQ(shm_a.writes.foreign_epoch.load(), 1u);
  EXPECT_EQ(shm_a.counters.foreign_writes.load(), 1u);
  // The traffic moved to b: b writes on, a no longer.
  period(9, 7);
  period(9, 7);
  EXPECT_EQ(shm_b.writes.acts_for_stored.load(), 1u);
  EXPECT_EQ(shm_a.writes.acts_for_stored.load(), 0u);

  // A restarted persister of b (a new start, the same segment) compares with
  // what its predecessor saw: a's entry did not change.
  WritesWatch b2(*client, "g", "b", shm_b.writes, shm_b.counters, 3000);
  now += WritesWatch::kPeriodNs;
  b2.turn(now, 3);
  ASSERT_TRUE(runUntil(loop, [&] { return client->held() == 0; }, 5s));
  EXPECT_EQ(shm_b.writes.foreign_epoch.load(), 2u);
}

}  // namespace
}  // namespace gtpcp::persister
