// Session records in Redis (persister/lib/record.h): what a worker's change
// records become (commands, coalesced per batch), and how the hash fields
// they write read back as one SessionRecord.
#include "persister/lib/record.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "persister/lib/redis_slot.h"

namespace gtpcp::persister {
namespace {

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

// Applies a partition's commands to an in-memory keyspace of hashes and sets.
struct Keyspace {
  std::map<std::string, std::map<std::string, std::string>> hashes;
  std::map<std::string, std::set<std::string>> sets;
  void apply(const Batch& batch) {
    batch.forEachSession([&](const std::string&, const std::vector<Command>& commands) { apply(commands); });
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
  ASSERT_TRUE(writer.upsert(creating, kTeid, kPartition, 3000, &request, Leg::kAccess));
  ASSERT_TRUE(writer.upsert(s, kTeid, kPartition, 4000, &response, Leg::kGateway));

  KeyNames keys("g1");
  Batch batch(keys);
  for (const auto& r : sink.records) ASSERT_TRUE(batch.add(r, kPartition));
  EXPECT_EQ(batch.sessions(), 1u);
  Keyspace redis;
  int partitions = 0;
  batch.forEachSession([&](const std::string& key, const std::vector<Command>& commands) {
    ++partitions;
    EXPECT_EQ(key, keys.session(kPartition, kTeid));
    // MULTI, one HSET for both changes, the two indexes, EXEC.
    ASSERT_EQ(commands.size(), 5u);
    EXPECT_EQ(commands[1][0], "HSET");
    EXPECT_EQ(commands[2], (Command{"SADD", keys.imsi(kPartition, "001010000000042"), keys.session(kPartition, kTeid)}));
    EXPECT_EQ(commands[3], (Command{"SADD", keys.teids(kPartition), "13400001"}));
    redis.apply(commands);
  });
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
  batch.forEachSession([&](const std::string&, const std::vector<Command>& commands) {
    ASSERT_EQ(commands.size(), 1u);
    EXPECT_EQ(commands[0][0], "HSET");
  });
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
  batch.forEachSession([&](const std::string&, const std::vector<Command>& commands) {
    ASSERT_EQ(commands.size(), 5u);
    EXPECT_EQ(commands[1][0], "DEL");
    EXPECT_EQ(commands[2][0], "SREM");
    EXPECT_EQ(commands[3], (Command{"SREM", keys.teids(kPartition), "13400001"}));
  });
}

TEST(Batch, ATornRecordIsRefused) {
  KeyNames keys("g1");
  Batch batch(keys);
  std::vector<uint64_t> storage(8, 0);
  EXPECT_FALSE(batch.add({reinterpret_cast<uint8_t*>(storage.data()), 20}, 1));
  EXPECT_TRUE(batch.empty());
}

}  // namespace
}  // namespace gtpcp::persister
