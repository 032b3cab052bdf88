// The persister's side of restoration against a real redis-server: records
// as the persister keeps them are read back through
// the lookup and restore rings as the slots a worker installs, a missing one
// is "absent", a partition's stored TEIDs come back sorted and chunked, and
// an unreachable Redis is "failed", never "absent".
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/session/record.h"
#include "common/session/lookup.h"
#include "persister/lib/restore_server.h"
#include "tests/persister/redis_harness.h"
#include "tests/support/process.h"
#include "common/session/teid.h"

namespace gtpcp::persister::test {
namespace {

using namespace std::chrono_literals;
using session::coreRecord;
using session::slotFromRecord;
using session::LookupKind;
using session::RestoreOutcome;

// A ring in process memory: both ends here.
struct HeapRing {
  explicit HeapRing(uint32_t slots)
      : memory(static_cast<uint8_t*>(std::aligned_alloc(64, ring::ringBytes(slots))), &std::free) {
    EXPECT_TRUE(ring::initRing(memory.get(), ring::ringBytes(slots), slots));
    producer.emplace(std::move(*ring::Producer::attach(memory.get(), ring::ringBytes(slots))));
    consumer.emplace(std::move(*ring::Consumer::attach(memory.get(), ring::ringBytes(slots))));
  }
  std::unique_ptr<uint8_t, void (*)(void*)> memory;
  std::optional<ring::Producer> producer;
  std::optional<ring::Consumer> consumer;
};

session::SessionShm sessionOf(const char* imsi, uint32_t sgw_teid) {
  session::SessionShm s{};
  s.state = static_cast<uint8_t>(session::SessionState::kActive);
  s.gtp_version = 2;
  s.default_ebi = 5;
  s.pool = 1;
  s.gateway = 2;
  s.rule = 3;
  s.access_socket = 0;
  s.gateway_socket = 1;
  s.ebis = 1 << 5 | 1 << 6;
  s.sgw.teid = sgw_teid;
  s.sgw.address = net::Address::v4(gtp::Ipv4{{127, 0, 0, 11}}, 2123);
  s.pgw.teid = 0x2222;
  s.pgw.address = net::Address::v6(gtp::Ipv6{{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x21}}, 2123);
  s.gateway_address = net::Address::v6(s.pgw.address.ipv6(), 2123);
  s.imsi_length = static_cast<uint8_t>(std::strlen(imsi));
  std::memcpy(s.imsi, imsi, s.imsi_length);
  const uint8_t apn[] = {8, 'i', 'n', 't', 'e', 'r', 'n', 'e', 't'};
  s.apn_length = sizeof apn;
  std::memcpy(s.apn, apn, sizeof apn);
  s.csids[1].node_id_type = 1;
  s.csids[1].csid = 77;
  s.csids[1].node_id[0] = 127;
  s.csids[1].node_id[3] = 11;
  s.created_ns = 1000;
  s.updated_ns = 2000;
  return s;
}

proto::SessionRecord core(const session::SessionShm& s, uint32_t teid, uint16_t partition) {
  proto::SessionRecord r;
  coreRecord(s, teid, partition, 2000, r);
  return r;
}

TEST(SlotFromRecord, IsTheInverseOfTheCoreRecord) {
  const session::SessionShm s = sessionOf("001010000000042", 0x1111);
  const uint32_t teid = session::makeTeid(77, 12, session::Leg::kAccess, 9);
  session::SessionShm back;
  ASSERT_TRUE(slotFromRecord(core(s, teid, 77), back));
  EXPECT_EQ(back.generation, 9);
  EXPECT_EQ(back.state, s.state);
  EXPECT_EQ(back.gtp_version, 2);
  EXPECT_EQ(back.default_ebi, 5);
  EXPECT_EQ(back.pool, 1);
  EXPECT_EQ(back.gateway, 2);
  EXPECT_EQ(back.rule, 3);
  EXPECT_EQ(back.gateway_socket, 1);
  EXPECT_EQ(back.ebis, s.ebis);
  EXPECT_EQ(back.sgw.teid, 0x1111u);
  EXPECT_EQ(back.sgw.address, s.sgw.address);
  EXPECT_EQ(back.pgw.address, s.pgw.address);
  EXPECT_EQ(back.gateway_address, s.gateway_address);
  EXPECT_EQ(std::string(back.imsi, back.imsi_length), "001010000000042");
  EXPECT_EQ(back.apn_length, s.apn_length);
  EXPECT_EQ(std::memcmp(back.apn, s.apn, s.apn_length), 0);
  EXPECT_EQ(back.csids[0].node_id_type, 1) << "CSIDs in order, without the empty entries";
  EXPECT_EQ(back.csids[0].csid, 77);
  EXPECT_EQ(back.created_ns, 1000u);

  proto::SessionRecord no_sgw = core(s, teid, 77);
  no_sgw.mutable_proxy()->clear_sgw_control();
  EXPECT_FALSE(slotFromRecord(no_sgw, back)) << "a session without its SGW cannot be carried on";
}

class RestoreServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<testing::RedisServer>(dir_.file("redis"), testing::RedisServer::Options{});
    RedisClientConfig config = configFor(RedisMode::kSingle, {redis_->port()});
    // A look-up Redis cannot take fails within this, as the persister's own would.
    config.command_timeout_ms = 1000;
    config.request_timeout_ms = 1500;
    client_ = makeClient(loop_, config);
    ASSERT_NE(client_, nullptr);
    ring::initDoorbell(&bell_);
    server_ = std::make_unique<RestoreServer>(*lookups_.consumer, *answers_.producer, ring::Doorbell(&bell_),
                                              *client_, keys_, counters_);
  }

  // Writes sessions as the persister keeps them: the "core" field of the
  // session's hash, and its TEID in the partition's set.
  void store(const std::vector<std::pair<uint32_t, session::SessionShm>>& sessions) {
    std::vector<Outcome> outcomes(sessions.size());
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      const auto& [teid, s] = sessions[i];
      const uint16_t partition = session::splitTeid(teid).partition;
      const std::string key = keys_.session(partition, teid);
      const std::string value = core(s, teid, partition).SerializeAsString();
      const std::string set = keys_.teids(partition);
      char hex[9];
      std::snprintf(hex, sizeof hex, "%08x", teid);
      const std::string_view hset[] = {"HSET", key, "core", value};
      const std::string_view sadd[] = {"SADD", set, hex};
      const RedisArgv group[] = {hset, sadd};
      ASSERT_EQ(client_->submitGroup(keySlot(key), group, recordInto(outcomes[i])), RedisErrc::kOk);
    }
    ASSERT_TRUE(runUntil(loop_, [&] {
      return std::all_of(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return o.done; });
    }, 5s));
    for (const Outcome& o : outcomes) ASSERT_EQ(o.error, RedisErrc::kOk) << o.text;
  }

  void ask(LookupKind kind, uint16_t partition, std::span<const uint8_t> body) {
    ring::DatagramMeta meta{};
    meta.flags = static_cast<uint16_t>(kind);
    meta.aux = partition;
    ASSERT_TRUE(lookups_.producer->push(meta, body));
    lookups_.producer->publish();
  }
  void askSession(uint32_t teid) {
    const session::SessionLookup q{teid, session::splitTeid(teid).partition, 0};
    ask(LookupKind::kSession, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q});
  }

  // Runs the server until `n` answers are in the restore ring; returns them.
  std::vector<std::pair<LookupKind, std::vector<uint8_t>>> answers(std::size_t n) {
    std::vector<std::pair<LookupKind, std::vector<uint8_t>>> out;
    runUntil(loop_, [&] {
      server_->turn();
      while (auto r = answers_.consumer->peek()) {
        out.emplace_back(static_cast<LookupKind>(r->meta->flags),
                         std::vector<uint8_t>(r->payload.begin(), r->payload.end()));
        answers_.consumer->pop();
      }
      answers_.consumer->release();
      return out.size() >= n;
    }, 10s);
    return out;
  }
  static session::SessionRestore sessionAnswer(const std::vector<uint8_t>& bytes) {
    session::SessionRestore r{};
    EXPECT_GE(bytes.size(), sizeof r);
    std::memcpy(&r, bytes.data(), std::min(bytes.size(), sizeof r));
    return r;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::RedisServer> redis_;
  EventLoop loop_;
  std::unique_ptr<RedisClientImpl> client_;
  KeyNames keys_{"g1"};
  PersisterCounters counters_;
  HeapRing lookups_{session::kLookupRingSlots};
  HeapRing answers_{session::kLookupRingSlots};
  ring::DoorbellShm bell_;
  std::unique_ptr<RestoreServer> server_;
};

TEST_F(RestoreServerTest, AStoredSessionComesBackAsItsSlotAndAMissingOneIsAbsent) {
  const uint32_t teid = session::makeTeid(300, 4, session::Leg::kAccess, 3);
  store({{teid, sessionOf("001010000000001", 0xaaaa)}});
  askSession(teid);
  askSession(session::makeTeid(300, 4, session::Leg::kAccess, 4));
  const auto got = answers(2);
  ASSERT_EQ(got.size(), 2u);
  const auto found = sessionAnswer(got[0].second);
  EXPECT_EQ(found.access_teid, teid);
  ASSERT_EQ(found.outcome, static_cast<uint8_t>(RestoreOutcome::kFound));
  EXPECT_EQ(found.record.sgw.teid, 0xaaaau);
  EXPECT_EQ(found.record.state, static_cast<uint8_t>(session::SessionState::kActive));
  EXPECT_EQ(std::string(found.record.imsi, found.record.imsi_length), "001010000000001");
  EXPECT_EQ(sessionAnswer(got[1].second).outcome, static_cast<uint8_t>(RestoreOutcome::kAbsent))
      << "another generation of the slot is another session";
  EXPECT_EQ(counters_.lookups_found.load(), 1u);
  EXPECT_EQ(counters_.lookups_absent.load(), 1u);
}

TEST_F(RestoreServerTest, APartitionsStoredTeidsComeBackSortedInChunks) {
  std::vector<std::pair<uint32_t, session::SessionShm>> sessions;
  const uint32_t n = session::kStoredTeidsPerChunk + 10;
  for (uint32_t slot = n; slot-- > 0;) {
    sessions.emplace_back(session::makeTeid(9, static_cast<uint16_t>(slot), session::Leg::kAccess, 1),
                          sessionOf("001010000000002", slot + 1));
  }
  // Written in pieces: a pipeline of this many transactions at once is more
  // than the client's bound.
  for (std::size_t at = 0; at < sessions.size(); at += 1000) {
    store({sessions.begin() + at, sessions.begin() + std::min(sessions.size(), at + 1000)});
  }
  const session::StoredTeidsLookup q{9, 0};
  ask(LookupKind::kStoredTeids, 9, {reinterpret_cast<const uint8_t*>(&q), sizeof q});
  const session::StoredTeidsLookup empty{11, 0};
  ask(LookupKind::kStoredTeids, 11, {reinterpret_cast<const uint8_t*>(&empty), sizeof empty});
  const auto got = answers(3);
  ASSERT_EQ(got.size(), 3u);
  std::vector<uint32_t> teids;
  for (int i = 0; i < 2; ++i) {
    session::StoredTeidsChunk c;
    std::memcpy(&c, got[i].second.data(), sizeof c);
    EXPECT_EQ(c.partition, 9u);
    EXPECT_EQ(c.outcome, static_cast<uint8_t>(RestoreOutcome::kFound));
    EXPECT_EQ(c.last, i == 1 ? 1 : 0);
    const std::size_t before = teids.size();
    teids.resize(before + c.count);
    std::memcpy(teids.data() + before, got[i].second.data() + sizeof c, c.count * 4u);
  }
  ASSERT_EQ(teids.size(), n);
  EXPECT_TRUE(std::is_sorted(teids.begin(), teids.end()));
  EXPECT_EQ(teids.front(), session::makeTeid(9, 0, session::Leg::kAccess, 1));
  session::StoredTeidsChunk c;
  std::memcpy(&c, got[2].second.data(), sizeof c);
  EXPECT_EQ(c.partition, 11u);
  EXPECT_EQ(c.count, 0u);
  EXPECT_EQ(c.last, 1u) << "an empty partition is one empty, last chunk";
}

// A subscriber named by IMSI alone: the partition's IMSI index, as the
// persister keeps it (session keys), comes back as access TEIDs.
TEST_F(RestoreServerTest, ASubscribersSessionsComeBackFromItsIndexAsTeids) {
  const uint16_t partition = 77;
  const uint32_t t1 = session::makeTeid(partition, 3, session::Leg::kAccess, 1);
  const uint32_t t2 = session::makeTeid(partition, 9, session::Leg::kAccess, 2);
  const std::string index = keys_.imsi(partition, "001010000000050");
  const std::string k1 = keys_.session(partition, t1), k2 = keys_.session(partition, t2);
  Outcome added;
  const std::string_view sadd[] = {"SADD", index, k1, k2};
  ASSERT_EQ(client_->submit(keySlot(index), sadd, recordInto(added)), RedisErrc::kOk);
  ASSERT_TRUE(runUntil(loop_, [&] { return added.done; }, 5s));
  ASSERT_EQ(added.error, RedisErrc::kOk) << added.text;

  const auto lookup = [&](const std::string& imsi) {
    session::SubscriberLookup q{partition, static_cast<uint8_t>(imsi.size()), {}};
    std::memcpy(q.imsi, imsi.data(), imsi.size());
    ask(LookupKind::kSubscriber, partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q});
  };
  lookup("001010000000050");
  lookup("001010000000051");
  const auto got = answers(2);
  ASSERT_EQ(got.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got[i].first, LookupKind::kSubscriber);
    session::SubscriberSessions a;
    ASSERT_GE(got[i].second.size(), sizeof a);
    std::memcpy(&a, got[i].second.data(), sizeof a);
    EXPECT_EQ(a.outcome, static_cast<uint8_t>(RestoreOutcome::kFound));
    EXPECT_EQ(a.partition, partition);
    EXPECT_EQ(std::string(a.imsi, a.imsi_length), i == 0 ? "001010000000050" : "001010000000051");
    ASSERT_EQ(got[i].second.size(), sizeof a + a.count * 4u);
    std::vector<uint32_t> teids(a.count);
    if (a.count != 0) std::memcpy(teids.data(), got[i].second.data() + sizeof a, a.count * 4u);
    std::sort(teids.begin(), teids.end());
    if (i == 0) EXPECT_EQ(teids, (std::vector<uint32_t>{std::min(t1, t2), std::max(t1, t2)}));
    else EXPECT_TRUE(teids.empty()) << "a subscriber without a stored session: an empty list";
  }
  redis_->kill();
  lookup("001010000000050");
  const auto failed = answers(1);
  ASSERT_EQ(failed.size(), 1u);
  session::SubscriberSessions a;
  std::memcpy(&a, failed[0].second.data(), sizeof a);
  EXPECT_EQ(a.outcome, static_cast<uint8_t>(RestoreOutcome::kFailed));
}

TEST_F(RestoreServerTest, AnUnreachableRedisIsFailedNeverAbsent) {
  redis_->kill();
  const uint32_t teid = session::makeTeid(300, 4, session::Leg::kAccess, 3);
  askSession(teid);
  const auto got = answers(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(sessionAnswer(got[0].second).outcome, static_cast<uint8_t>(RestoreOutcome::kFailed));
  EXPECT_EQ(counters_.lookups_absent.load(), 0u);
}

}  // namespace
}  // namespace gtpcp::persister::test
