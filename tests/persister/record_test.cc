// Session records in Redis (common/session/record.h, persister/lib/batch.h): what a worker's change
// records become (commands, coalesced per batch), and how the hash fields
// they write read back as one SessionRecord; and a Channel
// (persister/lib/persister.h) sending a batch from a ring, sending it again
// after a failure, releasing the ring once it is acknowledged.
#include "persister/lib/batch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <optional>
#include <set>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/ring/ring.h"
#include "persister/lib/persister.h"
#include "workers/lib/persist.h"
#include "persister/lib/redis_slot.h"

// Counts operator new calls, for the test that a warmed-up channel allocates
// nothing. Out of line (-Wmismatched-new-delete).
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace
[[gnu::noinline]] void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace gtpcp::persister {
namespace {

using session::assemble;
using session::coreRecord;
using session::partialRecord;
using session::slotFromRecord;

using namespace gtp;
using namespace gtp::v2;
using worker::Leg;

// A persist ring in memory.
class VectorSink final : public worker::PersistSink {
 public:
  std::span<uint8_t> reserve(worker::ChangeKind, uint16_t, std::size_t max) noexcept override {
    buffer_.assign((max + 7) / 8, 0);
    return {reinterpret_cast<uint8_t*>(buffer_.data()), max};
  }
  void commit(std::size_t length) noexcept override {
    const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data());
    records.emplace_back(p, p + length);
  }
  std::vector<std::vector<uint8_t>> records;

 private:
  std::vector<uint64_t> buffer_;  // aligned as ring slots are
};

Message decoded(std::vector<uint8_t>& buf) {
  Message m;
  EXPECT_TRUE(m.decode(buf));
  return m;
}

FTeid fteid(uint8_t type, uint32_t teid, Ipv4 a) {
  FTeid f;
  f.interface_type = type;
  f.teid = teid;
  f.ipv4 = a;
  return f;
}

std::vector<uint8_t> createSessionRequest() {
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, 1);
  Imsi imsi;
  for (char c : std::string_view("001010000000042")) imsi.digits.push(c);
  b.add(imsi);
  Msisdn msisdn;
  for (char c : std::string_view("33612345678")) msisdn.digits.push(c);
  b.add(msisdn);
  Mei mei;
  for (char c : std::string_view("3568540512345670")) mei.digits.push(c);
  b.add(mei);
  b.add(RatType{6});
  b.add(fteid(6, 0x1111, Ipv4{{127, 0, 0, 11}}), 0);
  b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{5});
  BearerQos qos;
  qos.qci = 9;
  qos.pl = 8;
  b.add(qos);
  b.add(fteid(4, 0xabcd, Ipv4{{10, 1, 1, 1}}), 2);
  b.endGrouped();
  buf.resize(b.finish()->size());
  return buf;
}

std::vector<uint8_t> createSessionResponse() {
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionResponse, 0x1111, 1);
  CauseIe ok;
  ok.value = 16;
  b.add(ok);
  Paa paa;
  paa.pdn_type = 1;
  paa.ipv4 = Ipv4{{100, 64, 0, 7}};
  b.add(paa);
  b.add(Ambr{5000, 10000});
  b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{5});
  b.add(ok);
  b.add(fteid(5, 0x5555, Ipv4{{10, 2, 2, 2}}), 2);
  b.add(ChargingId{0x77});
  b.endGrouped();
  buf.resize(b.finish()->size());
  return buf;
}

worker::SessionShm session() {
  worker::SessionShm s{};
  s.state = static_cast<uint8_t>(worker::SessionState::kActive);
  s.gtp_version = 2;
  s.default_ebi = 5;
  s.ebis = 1 << 5;
  std::memcpy(s.imsi, "001010000000042", 15);
  s.imsi_length = 15;
  s.sgw.teid = 0x1111;
  s.sgw.address = net::Address::v4(Ipv4{{127, 0, 0, 11}}, 2123);
  s.pgw.teid = 0x2222;
  s.pgw.address = net::Address::v4(Ipv4{{127, 0, 0, 21}}, 2123);
  s.created_ns = 1000;
  s.updated_ns = 2000;
  return s;
}

// A command's arguments, copied.
using Command = std::vector<std::string>;

std::vector<Command> commandsOf(const Commands::Transaction& t) {
  std::vector<Command> out;
  for (const RedisArgv& argv : t.commands) out.emplace_back(argv.begin(), argv.end());
  return out;
}

// Per session: its key and its commands.
std::vector<std::pair<std::string, std::vector<Command>>> build(Batch& batch) {
  Commands commands;
  batch.build(commands);
  std::vector<std::pair<std::string, std::vector<Command>>> out;
  for (const Commands::Transaction& t : commands.transactions()) {
    EXPECT_EQ(t.slot, keySlot(t.key));
    out.emplace_back(std::string(t.key), commandsOf(t));
  }
  return out;
}

// Applies a partition's commands to an in-memory keyspace of hashes and sets.
struct Keyspace {
  std::map<std::string, std::map<std::string, std::string>> hashes;
  std::map<std::string, std::set<std::string>> sets;
  void apply(Batch& batch) {
    for (const auto& [key, commands] : build(batch)) apply(commands);
  }
  void apply(const std::vector<Command>& commands) {
    ASSERT_GE(commands.size(), 1u);
    // Several writes go as one transaction; one goes alone.
    const bool transaction = commands.size() > 1;
    if (transaction) {
      EXPECT_EQ(commands.front(), Command{"MULTI"});
      EXPECT_EQ(commands.back(), Command{"EXEC"});
    }
    const std::size_t first = transaction ? 1 : 0, end = transaction ? commands.size() - 1 : commands.size();
    for (std::size_t i = first; i < end; ++i) {
      const Command& c = commands[i];
      if (c[0] == "HSET") {
        for (std::size_t f = 2; f + 1 < c.size(); f += 2) hashes[c[1]][c[f]] = c[f + 1];
      } else if (c[0] == "HDEL") {
        for (std::size_t f = 2; f < c.size(); ++f) hashes[c[1]].erase(c[f]);
      } else if (c[0] == "DEL") {
        hashes.erase(c[1]);
      } else if (c[0] == "SADD") {
        sets[c[1]].insert(c[2]);
      } else if (c[0] == "SREM") {
        sets[c[1]].erase(c[2]);
        if (sets[c[1]].empty()) sets.erase(c[1]);
      } else {
        ADD_FAILURE() << "unexpected command " << c[0];
      }
    }
  }
};

constexpr uint16_t kPartition = 77;
constexpr uint32_t kTeid = 0x13400001;

TEST(KeyNames, ASessionAndItsIndexShareTheirPartitionsSlot) {
  KeyNames keys("g1");
  const std::string s = keys.session(kPartition, kTeid);
  EXPECT_EQ(s, "gtpcp:g1:{g1.77}:s:13400001");
  const std::string i = keys.imsi(kPartition, "001010000000042");
  EXPECT_EQ(i, "gtpcp:g1:{g1.77}:imsi:001010000000042");
  EXPECT_EQ(keySlot(s), keySlot(i));
  EXPECT_NE(keySlot(s), keySlot(keys.session(78, kTeid)));
}

TEST(Batch, ASessionsChangesBecomeOneWriteAndReadBackAsOneRecord) {
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  auto csr = createSessionRequest();
  auto csresp = createSessionResponse();
  const Message request = decoded(csr), response = decoded(csresp);
  const worker::SessionShm s = session();
  worker::SessionShm creating = s;
  creating.state = static_cast<uint8_t>(worker::SessionState::kCreating);
  const std::string names("internet\0pgw-7\0default\0", 23);
  const std::span<const uint8_t> routing(reinterpret_cast<const uint8_t*>(names.data()), names.size());
  ASSERT_TRUE(writer.upsert(creating, kTeid, kPartition, 3000, &request, Leg::kAccess, routing));
  ASSERT_TRUE(writer.upsert(s, kTeid, kPartition, 4000, &response, Leg::kGateway, routing));

  KeyNames keys("g1");
  Batch batch(keys);
  for (const auto& r : sink.records) ASSERT_TRUE(batch.add(r, kPartition));
  EXPECT_EQ(batch.sessions(), 1u);
  Keyspace redis;
  int partitions = 0;
  for (const auto& [key, commands] : build(batch)) {
    ++partitions;
    EXPECT_EQ(key, keys.session(kPartition, kTeid));
    // MULTI, one HSET for both changes, the two indexes, EXEC.
    ASSERT_EQ(commands.size(), 5u);
    EXPECT_EQ(commands[1][0], "HSET");
    EXPECT_EQ(commands[2], (Command{"SADD", keys.imsi(kPartition, "001010000000042"), keys.session(kPartition, kTeid)}));
    EXPECT_EQ(commands[3], (Command{"SADD", keys.teids(kPartition), "13400001"}));
    redis.apply(commands);
  }
  EXPECT_EQ(partitions, 1);

  proto::SessionRecord r;
  ASSERT_TRUE(assemble(redis.hashes.at(keys.session(kPartition, kTeid)), r));
  EXPECT_EQ(r.imsi(), "001010000000042");
  EXPECT_EQ(r.msisdn(), "33612345678");
  EXPECT_EQ(r.mei(), "3568540512345670");
  EXPECT_EQ(r.rat_type(), 6u);
  EXPECT_EQ(r.apn_ambr_uplink_kbps(), 5000u);
  EXPECT_EQ(r.paa().size(), 5u);
  EXPECT_EQ(r.charging_id(), 0x77u) << "the default bearer's";
  EXPECT_EQ(r.proxy().access_teid(), kTeid);
  EXPECT_EQ(r.proxy().sgw_control().teid(), 0x1111u);
  EXPECT_EQ(r.proxy().pgw_control().teid(), 0x2222u);
  EXPECT_TRUE(r.proxy().active());
  EXPECT_EQ(r.proxy().pool_name(), "internet");
  EXPECT_EQ(r.proxy().gateway_name(), "pgw-7");
  EXPECT_EQ(r.proxy().rule_name(), "default");
  session::RoutingNames read{};
  session::routingNamesOf(r, read);
  EXPECT_STREQ(read.gateway, "pgw-7");
  ASSERT_EQ(r.bearers_size(), 1);
  const proto::Bearer& b = r.bearers(0);
  EXPECT_EQ(b.ebi(), 5u);
  EXPECT_EQ(b.sgw_user_plane().teid(), 0xabcdu) << "the SGW's side";
  EXPECT_EQ(b.pgw_user_plane().teid(), 0x5555u) << "and the PGW's, merged by EBI";
  EXPECT_EQ(b.qos().qci(), 9u);
  EXPECT_EQ(b.charging_id(), 0x77u);
  EXPECT_EQ(r.created_unix_ns(), 1000u);
  EXPECT_EQ(r.updated_unix_ns(), 4000u);

  // A modification alone is one HSET, no transaction, the index untouched.
  batch.clear();
  sink.records.clear();
  ASSERT_TRUE(writer.upsert(s, kTeid, kPartition, 4500, &response, Leg::kGateway));
  batch.add(sink.records[0], kPartition);
  for (const auto& [key, commands] : build(batch)) {
    ASSERT_EQ(commands.size(), 1u);
    EXPECT_EQ(commands[0][0], "HSET");
  }
  redis.apply(batch);

  // A later batch: the bearer goes, then the session.
  batch.clear();
  sink.records.clear();
  ASSERT_TRUE(writer.removeBearers(s, kTeid, kPartition, 5000, 1 << 5));
  batch.add(sink.records[0], kPartition);
  redis.apply(batch);
  ASSERT_TRUE(assemble(redis.hashes.at(keys.session(kPartition, kTeid)), r));
  EXPECT_EQ(r.bearers_size(), 0);
  EXPECT_EQ(r.msisdn(), "33612345678") << "the rest stays";

  batch.clear();
  sink.records.clear();
  ASSERT_TRUE(writer.erase(s, kTeid, kPartition, 6000));
  batch.add(sink.records[0], kPartition);
  redis.apply(batch);
  EXPECT_TRUE(redis.hashes.empty());
  EXPECT_TRUE(redis.sets.empty()) << "the indexes go with their last session";
}

// A GTPv1 PDP context (Gn/Gp): the SGSN's Create PDP Context Request and the
// GGSN's answer read back with their v1 parameters; a secondary's user
// plane comes and goes by NSAPI.
TEST(Batch, AGtpv1ContextReadsBackWithItsV1Parameters) {
  namespace v1 = gtp::v1;
  auto build1 = [](v1::MessageType type, auto&& add) {
    std::vector<uint8_t> buf(512);
    v1::Builder b(buf);
    b.begin(type, 0, 1);
    add(b);
    buf.resize(b.finish()->size());
    return buf;
  };
  auto cpcr = build1(v1::MessageType::kCreatePdpContextRequest, [](v1::Builder& b) {
    v1::Imsi imsi;
    for (char c : std::string_view("901700000000042")) imsi.digits.push(c);
    b.add(imsi);
    b.addRaw(3, std::vector<uint8_t>{0x09, 0xf1, 0x07, 0x12, 0x34, 0x05});  // RAI 901-70
    b.add(v1::TeidDataI{0xabcd});
    b.add(v1::TeidControlPlane{0x1111});
    b.add(v1::Nsapi{5});
    b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21});
    b.addRaw(133, std::vector<uint8_t>{127, 0, 0, 31});  // for signalling: not kept
    b.addRaw(133, std::vector<uint8_t>{10, 1, 1, 1});    // for user traffic
    v1::Msisdn msisdn;
    for (char c : std::string_view("33612345678")) msisdn.digits.push(c);
    b.add(msisdn);
    b.addRaw(135, std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f});
    b.add(v1::RatType{1});
  });
  auto cpcresp = build1(v1::MessageType::kCreatePdpContextResponse, [](v1::Builder& b) {
    b.add(v1::CauseIe{128});
    b.add(v1::TeidDataI{0x5555});
    b.add(v1::TeidControlPlane{0x2222});
    b.add(v1::ChargingId{0x77});
    b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21, 100, 64, 0, 7});
    b.addRaw(133, std::vector<uint8_t>{127, 0, 0, 41});
    b.addRaw(133, std::vector<uint8_t>{10, 2, 2, 2});
    b.addRaw(135, std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1e});
  });
  v1::Message request, response;
  ASSERT_TRUE(request.decode(cpcr));
  ASSERT_TRUE(response.decode(cpcresp));
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  worker::SessionShm s = session();
  s.gtp_version = 1;
  std::memcpy(s.imsi, "901700000000042", 15);
  ASSERT_TRUE(writer.upsertV1(s, kTeid, kPartition, 3000, request, Leg::kAccess, 5));
  ASSERT_TRUE(writer.upsertV1(s, kTeid, kPartition, 4000, response, Leg::kGateway, 5));
  KeyNames keys("g1");
  Batch batch(keys);
  for (const auto& r : sink.records) ASSERT_TRUE(batch.add(r, kPartition));
  Keyspace redis;
  redis.apply(batch);
  proto::SessionRecord r;
  ASSERT_TRUE(assemble(redis.hashes.at(keys.session(kPartition, kTeid)), r));
  EXPECT_EQ(r.gtp_version(), 1u);
  EXPECT_EQ(r.nsapi(), 5u);
  EXPECT_EQ(r.imsi(), "901700000000042");
  EXPECT_EQ(r.msisdn(), "33612345678");
  EXPECT_EQ(r.rat_type(), 1u);
  EXPECT_EQ(r.serving_network(), std::string("\x09\xf1\x07", 3)) << "the RAI's PLMN";
  EXPECT_EQ(r.paa(), std::string("\xf1\x21\x64\x40\x00\x07", 6)) << "the End User Address the GGSN gave";
  EXPECT_EQ(r.charging_id(), 0x77u);
  EXPECT_EQ(r.v1_qos_profile(), std::string("\x02\x23\x92\x1e", 4)) << "the GGSN's, negotiated";
  EXPECT_EQ(r.proxy().sgw_control().interface_type(), 0u) << "GTPv1 has no interface types";
  ASSERT_EQ(r.bearers_size(), 1);
  const proto::Bearer& b = r.bearers(0);
  EXPECT_EQ(b.ebi(), 5u);
  EXPECT_EQ(b.sgw_user_plane().teid(), 0xabcdu);
  EXPECT_EQ(b.sgw_user_plane().ipv4(), std::string("\x0a\x01\x01\x01", 4)) << "the user-traffic address, not the signalling one";
  EXPECT_EQ(b.pgw_user_plane().teid(), 0x5555u);
  EXPECT_EQ(b.pgw_user_plane().ipv4(), std::string("\x0a\x02\x02\x02", 4));

  // A secondary (NSAPI 6) from the SGSN, then deleted.
  auto secondary = build1(v1::MessageType::kCreatePdpContextRequest, [](v1::Builder& w) {
    w.add(v1::TeidDataI{0xabce});
    w.add(v1::Nsapi{6});
    w.add(v1::Nsapi{5});
    w.addRaw(133, std::vector<uint8_t>{127, 0, 0, 31});
    w.addRaw(133, std::vector<uint8_t>{10, 1, 1, 1});
    w.addRaw(135, std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f});
  });
  v1::Message sec;
  ASSERT_TRUE(sec.decode(secondary));
  batch.clear();
  sink.records.clear();
  ASSERT_TRUE(writer.upsertV1(s, kTeid, kPartition, 5000, sec, Leg::kAccess, 6));
  batch.add(sink.records[0], kPartition);
  redis.apply(batch);
  ASSERT_TRUE(assemble(redis.hashes.at(keys.session(kPartition, kTeid)), r));
  ASSERT_EQ(r.bearers_size(), 2);
  batch.clear();
  sink.records.clear();
  ASSERT_TRUE(writer.removeBearers(s, kTeid, kPartition, 6000, 1 << 6));
  batch.add(sink.records[0], kPartition);
  redis.apply(batch);
  ASSERT_TRUE(assemble(redis.hashes.at(keys.session(kPartition, kTeid)), r));
  ASSERT_EQ(r.bearers_size(), 1);
  EXPECT_EQ(r.bearers(0).ebi(), 5u);
}

TEST(Batch, ADeletionInTheSameBatchLeavesOnlyTheDeletion) {
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  auto csr = createSessionRequest();
  const Message request = decoded(csr);
  const worker::SessionShm s = session();
  worker::SessionShm creating = s;
  creating.state = static_cast<uint8_t>(worker::SessionState::kCreating);
  writer.upsert(creating, kTeid, kPartition, 3000, &request, Leg::kAccess);
  writer.erase(s, kTeid, kPartition, 3001);
  KeyNames keys("g1");
  Batch batch(keys);
  for (const auto& r : sink.records) batch.add(r, kPartition);
  for (const auto& [key, commands] : build(batch)) {
    ASSERT_EQ(commands.size(), 5u);
    EXPECT_EQ(commands[1][0], "DEL");
    EXPECT_EQ(commands[2][0], "SREM");
    EXPECT_EQ(commands[3], (Command{"SREM", keys.teids(kPartition), "13400001"}));
  }
}

TEST(Batch, ATornRecordIsRefused) {
  KeyNames keys("g1");
  Batch batch(keys);
  std::vector<uint64_t> storage(8, 0);
  EXPECT_FALSE(batch.add({reinterpret_cast<uint8_t*>(storage.data()), 20}, 1));
  EXPECT_TRUE(batch.empty());
}

// A Create Session Request and its Response, decoded.
struct Creation {
  std::vector<uint8_t> request_bytes = createSessionRequest(), response_bytes = createSessionResponse();
  Message request = decoded(request_bytes), response = decoded(response_bytes);
};

// A Create Session Request with a Bearer Context for each of `ebis`.
std::vector<uint8_t> createSessionRequestWithBearers(std::initializer_list<uint8_t> ebis) {
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, 1);
  b.add(RatType{6});
  for (uint8_t ebi : ebis) {
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{ebi});
    b.add(fteid(4, 0xab00u + ebi, Ipv4{{10, 1, 1, ebi}}), 2);
    b.endGrouped();
  }
  buf.resize(b.finish()->size());
  return buf;
}

TEST(Batch, AnHsetNamesItsFieldsInTheirNamesOrder) {
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  auto csr = createSessionRequestWithBearers({1, 10, 2});
  const Message request = decoded(csr);
  ASSERT_TRUE(writer.upsert(session(), kTeid, kPartition, 3000, &request, Leg::kAccess));
  KeyNames keys("g1");
  Batch batch(keys);
  ASSERT_TRUE(batch.add(sink.records[0], kPartition));
  const auto sessions = build(batch);
  ASSERT_EQ(sessions.size(), 1u);
  ASSERT_EQ(sessions[0].second.size(), 1u);
  const Command& hset = sessions[0].second[0];
  std::vector<std::string> fields;
  for (std::size_t i = 2; i < hset.size(); i += 2) fields.push_back(hset[i]);
  // As strings sort: "b10a" before "b1a".
  EXPECT_EQ(fields, (std::vector<std::string>{"core", "b10a", "b1a", "b2a", "rat"}));
}

TEST(Batch, ManySessionsInOneBatchEachGetOneTransaction) {
  const Creation c;
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  constexpr uint32_t kSessions = 3000;  // well past the table's first size
  const auto teidOf = [](uint32_t n) {
    return worker::makeTeid(static_cast<uint16_t>(n % 1024), static_cast<uint16_t>(n / 1024), Leg::kAccess, 1);
  };
  for (uint32_t n = 0; n < kSessions; ++n) {
    ASSERT_TRUE(writer.upsert(session(), teidOf(n), static_cast<uint16_t>(n % 1024), 3000, &c.request, Leg::kAccess));
  }
  for (uint32_t n = 0; n < kSessions; ++n) {
    ASSERT_TRUE(
        writer.upsert(session(), teidOf(n), static_cast<uint16_t>(n % 1024), 4000, &c.response, Leg::kGateway));
  }
  KeyNames keys("g1");
  Batch batch(keys);
  for (uint32_t round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < sink.records.size(); ++i) {
      ASSERT_TRUE(batch.add(sink.records[i], static_cast<uint16_t>(i % kSessions % 1024)));
    }
    EXPECT_EQ(batch.sessions(), kSessions);
    const auto sessions = build(batch);
    ASSERT_EQ(sessions.size(), kSessions);
    std::set<std::string> seen;
    for (uint32_t n = 0; n < kSessions; ++n) {
      // In the order the batch first saw them.
      EXPECT_EQ(sessions[n].first, keys.session(static_cast<uint16_t>(n % 1024), teidOf(n)));
      seen.insert(sessions[n].first);
      ASSERT_EQ(sessions[n].second.size(), 1u) << "a modification: one HSET";
      // HSET, the key, and nine fields: core, and from both records imsi,
      // mei, msisdn, rat, b5a, then ambr, paa, b5g.
      EXPECT_EQ(sessions[n].second[0].size(), 2u + 2 * 9);
    }
    EXPECT_EQ(seen.size(), kSessions);
    // The next batch reuses the entries and starts empty.
    batch.clear();
    EXPECT_TRUE(batch.empty());
  }
}

TEST(Batch, ABatchReusedGivesTheSameCommandsAsANewOne) {
  const Creation c;
  auto bearers = createSessionRequestWithBearers({6, 7});
  const Message more = decoded(bearers);
  VectorSink sink;
  worker::ChangeWriter writer(sink);
  worker::SessionShm creating = session();
  creating.state = static_cast<uint8_t>(worker::SessionState::kCreating);
  writer.upsert(creating, kTeid, kPartition, 3000, &c.request, Leg::kAccess);
  writer.upsert(session(), kTeid, kPartition, 4000, &c.response, Leg::kGateway);
  writer.upsert(session(), kTeid + 1, kPartition, 4001, &more, Leg::kAccess);
  writer.removeBearers(session(), kTeid + 1, kPartition, 4002, 1 << 6);
  writer.erase(session(), kTeid + 2, kPartition, 4003);
  KeyNames keys("g1");
  Batch used(keys);
  // Other sessions first, so that the entries, the arenas and the protobuf
  // objects all hold something else.
  for (const auto& r : sink.records) used.add(r, kPartition + 1);
  build(used);
  used.clear();
  for (const auto& r : sink.records) used.add(r, kPartition);
  Batch fresh(keys);
  for (const auto& r : sink.records) fresh.add(r, kPartition);
  const auto a = build(used);
  EXPECT_EQ(a, build(fresh));
  EXPECT_EQ(a, build(used)) << "building again changes nothing";
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[1].second[1], (Command{"HDEL", keys.session(kPartition, kTeid + 1), "b6a", "b6g"}));
}

TEST(CoreRecord, AReusedRecordSerialisesAsANewOne) {
  std::vector<worker::SessionShm> snapshots;
  worker::SessionShm s = session();
  s.csids[0].node_id_type = 1;
  s.csids[0].csid = 7;
  s.csids[1].node_id_type = 2;
  std::memset(s.csids[1].node_id, 0xfe, 16);
  s.gateway_address = net::Address::v4(Ipv4{{127, 0, 0, 21}}, 2123);
  static constexpr char kApn[] = "\x08internet\x03com";
  std::memcpy(s.apn, kApn, sizeof kApn - 1);
  s.apn_length = sizeof kApn - 1;
  snapshots.push_back(s);
  worker::SessionShm creating = s;  // no PGW yet, fewer CSIDs, an APN that does not decode
  creating.state = static_cast<uint8_t>(worker::SessionState::kCreating);
  creating.pgw = {};
  creating.csids[1] = {};
  creating.apn[0] = 60;
  snapshots.push_back(creating);
  worker::SessionShm v6 = s;
  Ipv6 a{};
  a.octets[0] = 0xfd;
  a.octets[15] = 1;
  v6.sgw.address = net::Address::v6(a, 2123);
  v6.gateway_address = v6.sgw.address;
  snapshots.push_back(v6);
  snapshots.push_back(s);
  snapshots.push_back(worker::SessionShm{});
  snapshots.push_back(v6);

  proto::SessionRecord reused;
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    proto::SessionRecord fresh;
    coreRecord(snapshots[i], kTeid, kPartition, 5000 + i, fresh);
    coreRecord(snapshots[i], kTeid, kPartition, 5000 + i, reused);
    EXPECT_EQ(reused.SerializeAsString(), fresh.SerializeAsString()) << "snapshot " << i;
  }
}

// A ring in memory, and the change records of two sessions.
class ChannelTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kSlots = ring::kMinCapacitySlots;

  ChannelTest() : memory_(static_cast<uint8_t*>(std::aligned_alloc(64, ring::ringBytes(kSlots)))) {
    std::memset(memory_.get(), 0, ring::ringBytes(kSlots));
    EXPECT_TRUE(ring::initRing(memory_.get(), ring::ringBytes(kSlots), kSlots));
    producer_.emplace(std::move(*ring::Producer::attach(memory_.get(), ring::ringBytes(kSlots))));
    consumer_.emplace(std::move(*ring::Consumer::attach(memory_.get(), ring::ringBytes(kSlots))));
    const Creation c;
    worker::ChangeWriter writer(sink_);
    worker::SessionShm creating = session();
    creating.state = static_cast<uint8_t>(worker::SessionState::kCreating);
    writer.upsert(creating, kTeid, kPartition, 3000, &c.request, Leg::kAccess);
    writer.upsert(session(), kTeid, kPartition, 4000, &c.response, Leg::kGateway);
    writer.upsert(session(), kTeid + 1, kPartition + 1, 4001, &c.response, Leg::kGateway);
  }

  // Publishes the records; returns the ring's free slots before.
  std::size_t push() {
    const std::size_t free = producer_->freeSlots();
    for (std::size_t i = 0; i < sink_.records.size(); ++i) {
      ring::DatagramMeta meta{};
      meta.aux = i < 2 ? kPartition : kPartition + 1;
      EXPECT_TRUE(producer_->push(meta, sink_.records[i]));
    }
    producer_->publish();
    return free;
  }

  // Records what is submitted; completions run when the test says.
  class RecordingRedis final : public RedisClient {
   public:
    struct Submitted {
      uint16_t slot;
      uint8_t flags;
      std::vector<Command> commands;
      friend bool operator==(const Submitted&, const Submitted&) = default;
    };
    RedisErrc submit(uint16_t, RedisArgv, RedisCompletion, uint8_t) noexcept override {
      ADD_FAILURE() << "a channel submits groups";
      return RedisErrc::kBadCommand;
    }
    RedisErrc submitGroup(uint16_t slot, std::span<const RedisArgv> commands, RedisCompletion done,
                          uint8_t flags) noexcept override {
      if (record) {
        Submitted s{slot, flags, {}};
        for (const RedisArgv& argv : commands) s.commands.emplace_back(argv.begin(), argv.end());
        submitted.push_back(std::move(s));
      }
      pending.push_back(done);
      return RedisErrc::kOk;
    }
    const RedisCounters& counters() const noexcept override { return counters_; }
    // Answers every pending command; the first with `first` when given.
    void answer(std::optional<RedisErrc> first = std::nullopt) {
      redisReply reply{};
      reply.type = REDIS_REPLY_ARRAY;
      for (std::size_t i = 0; i < pending.size(); ++i) {
        RedisResult r;
        r.error = i == 0 && first ? *first : RedisErrc::kOk;
        r.reply = r.error == RedisErrc::kOk ? &reply : nullptr;
        pending[i].fn(pending[i].user, r);
      }
      pending.clear();
    }
    bool record = true;
    std::vector<Submitted> submitted;
    std::vector<RedisCompletion> pending;

   private:
    RedisCounters counters_;
  };

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> memory_;
  std::optional<ring::Producer> producer_;
  std::optional<ring::Consumer> consumer_;
  VectorSink sink_;
  RecordingRedis redis_;
  KeyNames keys_{"g1"};
  PersisterCounters counters_;
};

TEST_F(ChannelTest, ABatchIsOneTransactionPerSessionAndTheRingIsReleasedOnceAcknowledged) {
  Channel channel(*consumer_, redis_, keys_, counters_, 64, 1000);
  const std::size_t free = push();
  EXPECT_TRUE(channel.turn(1));
  ASSERT_EQ(redis_.submitted.size(), 2u);
  const std::string first = keys_.session(kPartition, kTeid), second = keys_.session(kPartition + 1, kTeid + 1);
  EXPECT_EQ(redis_.submitted[0].slot, keySlot(first));
  EXPECT_EQ(redis_.submitted[0].flags, kRedisIdempotent);
  EXPECT_EQ(redis_.submitted[0].commands.size(), 5u) << "MULTI, HSET, SADD, SADD, EXEC";
  EXPECT_EQ(redis_.submitted[0].commands[1][1], first);
  EXPECT_EQ(redis_.submitted[1].slot, keySlot(second));
  ASSERT_EQ(redis_.submitted[1].commands.size(), 1u) << "a modification alone";
  EXPECT_EQ(redis_.submitted[1].commands[0][1], second);
  EXPECT_EQ(channel.pendingRecords(), 3u);
  EXPECT_FALSE(channel.turn(2)) << "waiting for Redis";
  EXPECT_LT(producer_->freeSlots(), free) << "nothing released before the acknowledgement";

  redis_.answer();
  EXPECT_TRUE(channel.turn(3));
  EXPECT_FALSE(channel.inFlight());
  EXPECT_EQ(producer_->freeSlots(), free);
  EXPECT_EQ(counters_.sessions_written.load(), 2u);
  EXPECT_EQ(counters_.batches_written.load(), 1u);
  EXPECT_TRUE(channel.idle());
}

TEST_F(ChannelTest, AFailedBatchIsSentAgainWholeAndByteForByteAfterThePause) {
  Channel channel(*consumer_, redis_, keys_, counters_, 64, 1000);
  const std::size_t free = push();
  EXPECT_TRUE(channel.turn(1));
  const auto sent = redis_.submitted;
  ASSERT_EQ(sent.size(), 2u);
  redis_.answer(RedisErrc::kTimeout);
  EXPECT_FALSE(channel.turn(10)) << "the pause starts";
  EXPECT_FALSE(channel.turn(500));
  EXPECT_EQ(redis_.submitted.size(), 2u);
  EXPECT_TRUE(channel.turn(1010));
  ASSERT_EQ(redis_.submitted.size(), 4u);
  EXPECT_EQ(std::vector(redis_.submitted.begin() + 2, redis_.submitted.end()), sent);
  EXPECT_LT(producer_->freeSlots(), free);
  redis_.answer();
  EXPECT_TRUE(channel.turn(1011));
  EXPECT_EQ(producer_->freeSlots(), free);
  EXPECT_EQ(counters_.write_failures.load(), 1u);
  EXPECT_EQ(counters_.batch_retries.load(), 1u);
  EXPECT_EQ(counters_.batches_written.load(), 1u);
}

// The wall clock of the lag measurement: what it says, and how often read.
uint64_t g_wall_ns = 0;
unsigned g_wall_reads = 0;
uint64_t fakeWall() noexcept {
  ++g_wall_reads;
  return g_wall_ns;
}

TEST_F(ChannelTest, EachBatchReleasedIsObservedOnceWithItsOldestChangesAge) {
  Channel channel(*consumer_, redis_, keys_, counters_, 64, 1000);
  metrics::Histogram lag;
  channel.measureLag(&lag, &fakeWall);
  g_wall_reads = 0;
  // The records are stamped 3000, 4000 and 4001 (the fixture's).
  g_wall_ns = 3000 + 7'000'000;
  push();
  EXPECT_TRUE(channel.turn(1));
  redis_.answer(RedisErrc::kTimeout);
  EXPECT_FALSE(channel.turn(10));
  EXPECT_TRUE(channel.turn(1010)) << "sent again";
  EXPECT_EQ(lag.count(), 0u) << "nothing acknowledged yet";
  EXPECT_EQ(g_wall_reads, 0u);
  redis_.answer();
  EXPECT_TRUE(channel.turn(1011));
  EXPECT_EQ(counters_.batches_written.load(), 1u);
  EXPECT_EQ(lag.count(), 1u);
  EXPECT_EQ(lag.sumNs(), 7'000'000u) << "from the oldest change to the release";
  EXPECT_EQ(lag.bucket(9), 1u) << "(5 ms, 10 ms]";
  EXPECT_EQ(g_wall_reads, 1u) << "one clock read per batch";

  // A clock stepped back: 0, still one observation.
  g_wall_ns = 1000;
  push();
  EXPECT_TRUE(channel.turn(2000));
  redis_.answer();
  EXPECT_TRUE(channel.turn(2001));
  EXPECT_EQ(counters_.batches_written.load(), 2u);
  EXPECT_EQ(lag.count(), 2u);
  EXPECT_EQ(lag.bucket(0), 1u);
  EXPECT_EQ(lag.sumNs(), 7'000'000u);
}

TEST_F(ChannelTest, AWarmedUpChannelAllocatesNothing) {
  Channel channel(*consumer_, redis_, keys_, counters_, 64, 1000);
  redis_.record = false;
  redis_.pending.reserve(16);
  for (int round = 0; round < 3; ++round) {
    push();
    const uint64_t before = g_allocations.load();
    ASSERT_TRUE(channel.turn(1));
    if (round == 2) {  // a failure, and the batch sent again
      redis_.answer(RedisErrc::kTimeout);
      ASSERT_FALSE(channel.turn(2));
      ASSERT_TRUE(channel.turn(2000));
    }
    redis_.answer();
    ASSERT_TRUE(channel.turn(2001));
    ASSERT_FALSE(channel.inFlight());
    const uint64_t allocations = g_allocations.load() - before;
    if (round == 0) {
      // The first batch sizes the buffers: nothing counted means another
      // operator new replaced ours (valgrind's, a sanitizer's).
      if (allocations == 0) GTEST_SKIP() << "allocations are not counted in this run";
    } else {
      EXPECT_EQ(allocations, 0u) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace gtpcp::persister
