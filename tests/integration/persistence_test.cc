// Sessions in Redis through the real processes: the group with its embedded
// redis-server and gtpcp-persister, driven by the emulator, and Redis read
// back directly (never through the proxy's counters): every session the
// proxy holds is a record there, with its index, and none is left once the
// subscribers detached; a persister killed under load loses no change.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "common/session/record.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"
#include "tests/support/redis.h"
#include "tests/support/process.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

// A synchronous look at a Redis server.
class RedisReader {
 public:
  explicit RedisReader(uint16_t port) {
    timeval tv{2, 0};
    c_ = redisConnectWithTimeout("127.0.0.1", port, tv);
  }
  ~RedisReader() {
    if (c_ != nullptr) redisFree(c_);
  }
  bool ok() const { return c_ != nullptr && c_->err == 0; }

  std::vector<std::string> keys(const std::string& pattern) {
    std::vector<std::string> out;
    std::string cursor = "0";
    do {
      auto* r = static_cast<redisReply*>(
          redisCommand(c_, "SCAN %s MATCH %s COUNT 1000", cursor.c_str(), pattern.c_str()));
      if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (r) freeReplyObject(r);
        ADD_FAILURE() << "SCAN failed";
        return out;
      }
      cursor = r->element[0]->str;
      for (std::size_t i = 0; i < r->element[1]->elements; ++i) out.emplace_back(r->element[1]->element[i]->str);
      freeReplyObject(r);
    } while (cursor != "0");
    return out;
  }
  std::map<std::string, std::string> hash(const std::string& key) {
    std::map<std::string, std::string> out;
    auto* r = static_cast<redisReply*>(redisCommand(c_, "HGETALL %b", key.data(), key.size()));
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < r->elements; i += 2)
        out[std::string(r->element[i]->str, r->element[i]->len)] =
            std::string(r->element[i + 1]->str, r->element[i + 1]->len);
    }
    if (r) freeReplyObject(r);
    return out;
  }
  void flush() { freeReplyObject(redisCommand(c_, "FLUSHALL")); }
  void del(const std::string& key) { freeReplyObject(redisCommand(c_, "DEL %b", key.data(), key.size())); }
  std::set<std::string> members(const std::string& key) {
    std::set<std::string> out;
    auto* r = static_cast<redisReply*>(redisCommand(c_, "SMEMBERS %b", key.data(), key.size()));
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY)
      for (std::size_t i = 0; i < r->elements; ++i) out.emplace(r->element[i]->str, r->element[i]->len);
    if (r) freeReplyObject(r);
    return out;
  }

 private:
  redisContext* c_ = nullptr;
};

class PersistenceTest : public DataPathTest {
 protected:
  // Host 2: a second instance of the group.
  void SetUp() override { net_ = testing::freeSubnet({kProxyHost, 2, 11, 12, 21, 22, 23, 24, 25, 30}); }

  TestGroup& startPersistingGroup(unsigned workers) {
    port_ = testing::freeTcpPort();
    testing::GroupOptions o;
    o.workers = workers;
    o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
    o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(port_) + "\n";
    return startGroup(o);
  }
  // The session hashes in Redis, each read back as one record.
  std::map<std::string, proto::SessionRecord> records() {
    RedisReader r(port_);
    EXPECT_TRUE(r.ok());
    std::map<std::string, proto::SessionRecord> out;
    for (const std::string& key : r.keys("gtpcp:" + group_->group() + ":*:s:*")) {
      proto::SessionRecord rec;
      EXPECT_TRUE(session::assemble(r.hash(key), rec)) << key;
      out[key] = rec;
    }
    return out;
  }
  // Waits until Redis holds `n` sessions, each of them accepted by its PGW
  // (the sessions this test leaves are), and the persister nothing unwritten.
  bool settledWith(std::size_t n) {
    return testing::waitUntil(
        [&] {
          const json p = TestGroup::process(group_->status(), "persister");
          if (!p.contains("counters") || p["counters"].value("persister.pending_changes", 1ull) != 0) return false;
          const auto all = records();
          return all.size() == n &&
                 std::all_of(all.begin(), all.end(), [](const auto& r) { return r.second.proxy().active(); });
        },
        10s, 50ms);
  }
  // A group of 2 workers on a Redis of the test's own (storage.mode single),
  // with more storage keys in `storage_extra`.
  TestGroup& startGroupOn(const testing::RedisServer& redis, const std::string& storage_extra = "") {
    port_ = redis.port();
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
    o.storage_yaml =
        "  mode: single\n  servers: [\"127.0.0.1:" + std::to_string(port_) + "\"]\n" + storage_extra;
    return startGroup(o);
  }
  // The Recovery value the group (the instance on `host`) answers Echo with.
  int echoRecovery(uint8_t host = kProxyHost) {
    testing::UdpSocket sock(net_.addr(30), 0);
    if (!sock.sendTo(net_.addr(host), 2123, echoRequest(0x77, 1))) return -1;
    auto r = sock.receive(3s);
    if (!r) return -1;
    Decoded d = decode(r->bytes);
    return d.ok && d.recovery ? *d.recovery : -1;
  }
  // An emulated PGW on `address`, once its GTP-C socket is bound: creations
  // sent before that would be lost and fail over to no other gateway.
  std::unique_ptr<testing::PeerRun> startPgw(const std::string& address, int subscribers) {
    auto pgw = std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--pgw", address, "--proxy", proxy(), "--subscribers", std::to_string(subscribers),
                                 "--duration", "60"},
        group_->dir().path(), "pgw");
    EXPECT_TRUE(testing::waitUntil([&] { return udpPortTaken(address, 2123); }, 5s, 10ms)) << "the PGW never bound";
    return pgw;
  }
  // Instance a of a group of two (share 0) on its embedded Redis (port_).
  testing::GroupOptions instanceA(unsigned workers) {
    port_ = testing::freeTcpPort();
    testing::GroupOptions o;
    o.workers = workers;
    o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
    o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(port_) + "\n";
    o.extra_yaml = "group_size: 2\ninstance_index: 0\n";
    return o;
  }
  // Instance b of a's group, on host 2, on a's Redis, with `shares` as its
  // group_size and instance_index keys.
  testing::GroupOptions instanceB(const testing::GroupOptions& a, const std::string& group,
                                  const std::string& shares) {
    testing::GroupOptions o = a;
    o.group = group;
    o.instance = "b";
    o.address = net_.addr(2);
    o.storage_yaml = "  mode: single\n  servers: [\"127.0.0.1:" + std::to_string(port_) + "\"]\n";
    o.extra_yaml = shares;
    return o;
  }
  // 200 subscribers attaching at 100/s through `g` (storage.persist: sync),
  // `stalled` SIGSTOPped for 1.8 s once a quarter of them are up: the
  // group's status at the end of the stall and what it held 0.3 s into it,
  // then the SGW's result once it is resumed.
  struct Stall {
    json during;
    uint64_t held_before = 0;
    testing::PeerResult result;
  };
  Stall attachThroughAStall(TestGroup& g, testing::RedisServer& stalled) {
    constexpr int kSubscribers = 200;
    Stall out;
    auto pgw = startPgw(ip(21), kSubscribers);
    testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers),
                          "--mode", "hold", "--setup-rate", "100", "--duration", "2", "--t3-ms", "1000", "--n3", "8"},
                         g.dir().path(), "sgw");
    EXPECT_TRUE(testing::waitUntil(
        [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") >= kSubscribers / 4; }, 10s, 10ms));
    stalled.pause();
    std::this_thread::sleep_for(300ms);
    out.held_before = TestGroup::workerSum(g.status(), "worker.sync_holding");
    std::this_thread::sleep_for(1500ms);
    out.during = g.status();
    stalled.resume();
    note("during the stall: " + out.during.dump());
    out.result = sgw.wait(60s);
    note(out.result.describe());
    EXPECT_TRUE(out.result.ok());
    EXPECT_EQ(out.result.value("/timeouts"), 0u);
    EXPECT_EQ(out.result.value("/sessions/up_at_end"), static_cast<uint64_t>(kSubscribers));
    return out;
  }
  uint16_t port_ = 0;
};

TEST_F(PersistenceTest, EverySessionIsARecordWithItsIndexAndNoneIsLeftAfterTheDetach) {
  TestGroup& g = startPersistingGroup(2);
  ASSERT_FALSE(HasFailure());
  constexpr int kSubscribers = 300;
  const std::string dir = g.dir().path();
  auto pgw = startPgw(ip(21), kSubscribers);
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers), "--mode",
                        "hold", "--setup-rate", "2000", "--duration", "60", "--t3-ms", "1000"},
                       dir, "sgw");
  // Every creation answered (a session counts from its request on).
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == kSubscribers; }, 15s, 50ms))
      << g.status().dump(1);
  ASSERT_TRUE(settledWith(kSubscribers)) << records().size() << " records; " << g.status().dump(1);

  RedisReader redis(port_);
  std::set<std::string> imsis;
  for (const auto& [key, rec] : records()) {
    SCOPED_TRACE(key);
    EXPECT_EQ(rec.gtp_version(), 2u);
    EXPECT_TRUE(rec.proxy().active());
    EXPECT_EQ(rec.proxy().pool_name(), "internet");
    EXPECT_EQ(rec.proxy().gateway_name(), "only");
    EXPECT_EQ(rec.proxy().rule_name(), "default");
    EXPECT_EQ(rec.imsi().size(), 15u);
    EXPECT_FALSE(rec.msisdn().empty()) << "from the Create Session Request";
    EXPECT_FALSE(rec.mei().empty());
    EXPECT_NE(rec.rat_type(), 0u);
    EXPECT_FALSE(rec.uli().empty());
    EXPECT_FALSE(rec.paa().empty()) << "from the PGW's answer";
    EXPECT_NE(rec.proxy().sgw_control().teid(), 0u);
    EXPECT_NE(rec.proxy().pgw_control().teid(), 0u);
    EXPECT_EQ(rec.proxy().gateway_teid() & ~0x80u, rec.proxy().access_teid() & ~0x80u) << "one slot, two legs";
    ASSERT_EQ(rec.bearers_size(), 1);
    EXPECT_EQ(rec.bearers(0).ebi(), 5u);
    EXPECT_NE(rec.bearers(0).sgw_user_plane().teid(), 0u) << "both sides of the default bearer";
    EXPECT_NE(rec.bearers(0).pgw_user_plane().teid(), 0u);
    imsis.insert(rec.imsi());
    // Found by IMSI too: the index, in the same slot.
    const std::string index = "gtpcp:" + g.group() + ":{" + g.group() + "." +
                              std::to_string(rec.proxy().partition()) + "}:imsi:" + rec.imsi();
    EXPECT_EQ(redis.members(index), std::set<std::string>{key});
    // And among its partition's stored TEIDs, which a cold start reserves.
    const std::string teids =
        "gtpcp:" + g.group() + ":{" + g.group() + "." + std::to_string(rec.proxy().partition()) + "}:teids";
    EXPECT_TRUE(redis.members(teids).contains(key.substr(key.size() - 8))) << key;
  }
  EXPECT_EQ(imsis.size(), static_cast<std::size_t>(kSubscribers));

  // The operator's look-up by IMSI reads the same record.
  const std::string imsi = *imsis.begin();
  const auto lookup = g.gtpcp({"session", imsi});
  ASSERT_EQ(lookup.status, 0) << lookup.text;
  const json found = json::parse(lookup.text);
  ASSERT_EQ(found.size(), 1u) << lookup.text;
  EXPECT_EQ(found[0]["imsi"], imsi);
  EXPECT_EQ(found[0]["proxy"]["sgw_control"]["ipv4"], ip(11));
  EXPECT_EQ(found[0]["proxy"]["pgw_control"]["ipv4"], ip(21));
  EXPECT_TRUE(found[0]["paa"].contains("ipv4")) << lookup.text;
  EXPECT_EQ(g.gtpcp({"session", "001019999999999"}).status, 3) << "no session: exit status 3";

  // The SGW detaches everyone (a second run of the same subscribers: the
  // hold run ends without detaching, so this one deletes).
  ASSERT_EQ(::kill(sgw.pid(), SIGTERM), 0);
  sgw.wait(30s);
  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.persist_ring_full"), 0u) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.persist_changes"), 2u * kSubscribers) << "a creation and its answer each";
  // Sessions the hold left: a full cycle of other subscribers, attached and
  // detached, must leave exactly those.
  auto cycle = runPeer({"--sgw", ip(12), "--pgw", ip(21), "--proxy", proxy(), "--subscribers", "200", "--imsi-start",
                        "001019000000001", "--modify", "2", "--cycles", "1", "--rate", "2000", "--duration", "20"},
                       30s, "cycle");
  EXPECT_EQ(cycle.value("/timeouts"), 0u);
  ASSERT_TRUE(settledWith(kSubscribers)) << records().size() << " records";
  for (const auto& [key, rec] : records()) EXPECT_FALSE(rec.imsi().starts_with("00101900")) << key;
  EXPECT_TRUE(redis.keys("gtpcp:" + g.group() + ":*:imsi:00101900*").empty()) << "their index entries went too";
  std::size_t stored_teids = 0;
  for (const std::string& key : redis.keys("gtpcp:" + g.group() + ":*:teids")) stored_teids += redis.members(key).size();
  EXPECT_EQ(stored_teids, static_cast<std::size_t>(kSubscribers)) << "and their TEIDs";
}

TEST_F(PersistenceTest, APersisterKilledUnderLoadLosesNoChange) {
  TestGroup& g = startPersistingGroup(2);
  ASSERT_FALSE(HasFailure());
  constexpr int kSubscribers = 2000;
  const std::string dir = g.dir().path();
  auto pgw = startPgw(ip(21), kSubscribers);
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers), "--mode",
                        "hold", "--setup-rate", "1000", "--duration", "60", "--t3-ms", "1000"},
                       dir, "sgw");
  // Halfway through the attaches, SIGKILL; restarted a moment later.
  ASSERT_TRUE(testing::waitUntil([&] { return g.status().value("sessions", 0ull) >= kSubscribers / 2; }, 15s, 10ms));
  const int before = g.pidOf("persister");
  ASSERT_GT(before, 0);
  ASSERT_EQ(::kill(before, SIGKILL), 0);
  std::this_thread::sleep_for(300ms);
  const auto restart = g.gtpcp({"restart", "persister"});
  note(restart.text);
  ASSERT_EQ(restart.status, 0) << restart.text;
  ASSERT_NE(g.pidOf("persister"), before);

  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == kSubscribers; }, 20s, 50ms))
      << g.status().dump(1);
  ASSERT_TRUE(settledWith(kSubscribers)) << records().size() << " records of " << kSubscribers;
  std::size_t active = 0;
  for (const auto& [key, rec] : records()) active += rec.proxy().active() ? 1 : 0;
  EXPECT_EQ(active, static_cast<std::size_t>(kSubscribers)) << "every creation's acceptance written";
  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.persist_ring_full"), 0u);
  ASSERT_EQ(::kill(sgw.pid(), SIGTERM), 0);
  sgw.wait(30s);
}

TEST_F(PersistenceTest, TheGroupsRecoveryChangesOnlyWhenItsStoredSessionsAreGone) {
  TestGroup& g = startPersistingGroup(2);
  ASSERT_FALSE(HasFailure());
  // Fresh storage: gtpc.recovery (1) + 1.
  EXPECT_EQ(echoRecovery(), 2);
  {
    auto pgw = startPgw(ip(21), 50);
    testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", "50", "--mode", "hold",
                          "--setup-rate", "500", "--duration", "30"},
                         g.dir().path(), "sgw");
    ASSERT_TRUE(testing::waitUntil(
        [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == 50; }, 10s, 20ms));
    ASSERT_TRUE(settledWith(50));
    ::kill(sgw.pid(), SIGTERM);
    sgw.wait(10s);
  }
  // A restart of the whole group, its embedded Redis included (its data in
  // the run directory): the sessions are still stored, the value stays.
  g.stop();
  ASSERT_TRUE(g.start()) << "second start";
  EXPECT_EQ(echoRecovery(), 2) << "sessions survived: peers must not drop theirs";
  EXPECT_EQ(records().size(), 50u);
  // The storage loses everything: the next start announces a new value.
  {
    RedisReader redis(port_);
    ASSERT_TRUE(redis.ok());
    redis.flush();
  }
  g.stop();
  ASSERT_TRUE(g.start()) << "third start";
  EXPECT_EQ(echoRecovery(), 3);
}

// A GTPv1 PDP context (Gn/Gp) is kept like a GTPv2 session: in Redis with
// its v1 parameters, and served after a restart of the whole group from
// Redis alone (the worker's memory is gone): the SGSN's Update PDP Context
// Request reaches the GGSN with the GGSN's TEID-C, the answer the SGSN.
TEST_F(PersistenceTest, AGtpv1ContextIsStoredAndServedAfterARestartFromRedisAlone) {
  namespace v1 = gtp::v1;
  port_ = testing::freeTcpPort();
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = "version: 1\npools:\n  gn:\n    gtp_version: 1\n    gateways:\n      - {name: ggsn, address: " +
                   ip(21) + "}\nrules:\n  - {name: gn, pool: gn}\n" + kNoHealthChecks;
  o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(port_) + "\n";
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  testing::UdpSocket sgsn(net_.addr(11), 2123), ggsn(net_.addr(21), 2123);
  auto message = [](v1::MessageType type, uint32_t teid, uint16_t sequence, auto&& add) {
    std::vector<uint8_t> buf(512);
    v1::Builder b(buf);
    b.begin(type, teid, sequence);
    add(b);
    buf.resize(b.finish()->size());
    return buf;
  };
  const gtp::Ipv4 sgsn_ip = net_.addr(11), ggsn_ip = net_.addr(21);
  const std::vector<uint8_t> sgsn_address(sgsn_ip.octets.begin(), sgsn_ip.octets.end());
  const std::vector<uint8_t> ggsn_address(ggsn_ip.octets.begin(), ggsn_ip.octets.end());
  const std::vector<uint8_t> qos{0x02, 0x23, 0x92, 0x1f};
  auto cpcr = message(v1::MessageType::kCreatePdpContextRequest, 0, 0x4001, [&](v1::Builder& b) {
    v1::Imsi imsi;
    for (char c : std::string_view("901700000000777")) imsi.digits.push(c);
    b.add(imsi);
    b.add(v1::TeidDataI{0xaaaa0001});
    b.add(v1::TeidControlPlane{0xcccc0001});
    b.add(v1::Nsapi{5});
    b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21});
    v1::Apn apn;
    for (char c : std::string_view("internet")) apn.text.push(c);
    b.add(apn);
    b.addRaw(133, sgsn_address);
    b.addRaw(133, std::vector<uint8_t>{10, 11, 0, 1});
    b.addRaw(135, qos);
  });
  ASSERT_TRUE(sgsn.sendTo(net_.addr(kProxyHost), 2123, cpcr));
  auto at_ggsn = ggsn.receive(3s);
  ASSERT_TRUE(at_ggsn) << "the creation did not reach the GGSN";
  v1::Message request;
  ASSERT_TRUE(request.decode(at_ggsn->bytes));
  const uint32_t proxy_gateway_teid = v1::readNth<v1::TeidControlPlane>(request)->value;
  auto cpcresp = message(v1::MessageType::kCreatePdpContextResponse, proxy_gateway_teid,
                         request.header().sequence_number, [&](v1::Builder& b) {
                           b.add(v1::CauseIe{128});
                           b.add(v1::TeidDataI{0xbbbb0001});
                           b.add(v1::TeidControlPlane{0xdddd0001});
                           b.add(v1::ChargingId{0x99});
                           b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21, 100, 70, 0, 9});
                           b.addRaw(133, ggsn_address);
                           b.addRaw(133, std::vector<uint8_t>{10, 21, 0, 1});
                           b.addRaw(135, qos);
                         });
  ASSERT_TRUE(ggsn.sendTo(net_.addr(kProxyHost), 2123, cpcresp));
  auto at_sgsn = sgsn.receive(3s);
  ASSERT_TRUE(at_sgsn) << "the answer did not reach the SGSN";
  v1::Message response;
  ASSERT_TRUE(response.decode(at_sgsn->bytes));
  ASSERT_EQ(v1::readNth<v1::CauseIe>(response)->value, 128);
  const uint32_t proxy_access_teid = v1::readNth<v1::TeidControlPlane>(response)->value;
  ASSERT_TRUE(settledWith(1));
  {
    const auto all = records();
    ASSERT_EQ(all.size(), 1u);
    const proto::SessionRecord& r = all.begin()->second;
    EXPECT_EQ(r.gtp_version(), 1u);
    EXPECT_EQ(r.imsi(), "901700000000777");
    EXPECT_EQ(r.nsapi(), 5u);
    EXPECT_EQ(r.apn(), "internet");
    EXPECT_EQ(r.charging_id(), 0x99u);
    EXPECT_EQ(r.paa(), std::string("\xf1\x21\x64\x46\x00\x09", 6));
    EXPECT_EQ(r.proxy().sgw_control().teid(), 0xcccc0001u);
    EXPECT_EQ(r.proxy().pgw_control().teid(), 0xdddd0001u);
    ASSERT_EQ(r.bearers_size(), 1);
    EXPECT_EQ(r.bearers(0).sgw_user_plane().teid(), 0xaaaa0001u);
    EXPECT_EQ(r.bearers(0).pgw_user_plane().teid(), 0xbbbb0001u);
  }

  // The whole group again, the worker's memory gone: the context is in Redis only.
  g.stop();
  ASSERT_TRUE(g.start()) << "second start";
  auto upcr = message(v1::MessageType::kUpdatePdpContextRequest, proxy_access_teid, 0x4002, [&](v1::Builder& b) {
    b.add(v1::TeidDataI{0xaaaa0001});
    b.add(v1::Nsapi{5});
    b.addRaw(133, sgsn_address);
    b.addRaw(133, std::vector<uint8_t>{10, 11, 0, 1});
    b.addRaw(135, qos);
  });
  ASSERT_TRUE(sgsn.sendTo(net_.addr(kProxyHost), 2123, upcr));
  at_ggsn = ggsn.receive(5s);
  ASSERT_TRUE(at_ggsn) << "the update did not reach the GGSN after the restart";
  ASSERT_TRUE(request.decode(at_ggsn->bytes));
  EXPECT_EQ(request.messageType(), v1::MessageType::kUpdatePdpContextRequest);
  EXPECT_EQ(request.header().teid, 0xdddd0001u) << "the GGSN's TEID-C, from Redis";
  const v1::Ie* control = request.find(v1::IeType::kGsnAddress, 0);
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(testing::toString(gtp::Ipv4{{request.value(*control)[0], request.value(*control)[1],
                                         request.value(*control)[2], request.value(*control)[3]}}),
            proxy());
  auto upcresp = message(v1::MessageType::kUpdatePdpContextResponse, proxy_gateway_teid,
                         request.header().sequence_number, [&](v1::Builder& b) { b.add(v1::CauseIe{128}); });
  ASSERT_TRUE(ggsn.sendTo(net_.addr(kProxyHost), 2123, upcresp));
  at_sgsn = sgsn.receive(3s);
  ASSERT_TRUE(at_sgsn) << "the update's answer did not reach the SGSN";
  ASSERT_TRUE(response.decode(at_sgsn->bytes));
  EXPECT_EQ(response.header().teid, 0xcccc0001u);
  EXPECT_EQ(response.header().sequence_number, 0x4002);
  EXPECT_EQ(TestGroup::workerSum(g.status(), "worker.restore_found"), 1u);
}

TEST_F(PersistenceTest, RedisUnreachableForFiveSecondsUnderLoadIsCaughtUpWithNothingLost) {
  // A Redis of the test's own (storage.mode single), stopped under load.
  testing::RedisServer redis(tmp_.file("redis"), {});
  TestGroup& g = startGroupOn(redis);
  ASSERT_FALSE(HasFailure());
  constexpr int kSubscribers = 1000;
  auto pgw = startPgw(ip(21), kSubscribers);
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers), "--mode",
                        "modify-only", "--setup-rate", "2000", "--rate", "2000", "--duration", "12", "--t3-ms",
                        "1000", "--n3", "2"},
                       g.dir().path(), "sgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == kSubscribers; }, 10s, 20ms));
  std::this_thread::sleep_for(1s);
  redis.pause();
  std::this_thread::sleep_for(5s);
  const json during = TestGroup::process(g.status(), "persister");
  redis.resume();
  note("persister while Redis was stopped: " + during.dump());
  // The proxy kept answering: the emulator saw no timeout.
  const auto r = sgw.wait(60s);
  note(r.describe());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_GT(during["counters"].value("persister.lag_ms", 0ull), 1000u) << "changes waited while Redis was stopped";
  // Caught up: every session (detached at the end of the modify-only run)
  // gone from Redis, nothing dropped.
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        const json p = TestGroup::process(g.status(), "persister");
        return p["counters"].value("persister.pending_changes", 1ull) == 0 && records().empty();
      },
      20s, 100ms))
      << records().size() << " records left; " << g.status().dump(1);
  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.persist_ring_full"), 0u);
  EXPECT_EQ(TestGroup::process(s, "persister")["counters"].value("persister.storage_up", 0ull), 1u);
}

TEST_F(PersistenceTest, InSyncModeNothingLeavesBeforeRedisAcknowledgedIt) {
  testing::RedisServer redis(tmp_.file("redis"), {});
  TestGroup& g = startGroupOn(redis, "  persist: sync\n");
  ASSERT_FALSE(HasFailure());
  // Redis stops answering: the answers wait, the creations still go to the
  // PGW (which answers them), for as long.
  const Stall stall = attachThroughAStall(g, redis);
  EXPECT_GT(TestGroup::workerSum(stall.during, "worker.sync_holding"), stall.held_before)
      << "answers left before Redis had their changes";
  EXPECT_GE(TestGroup::workerSum(stall.during, "worker.sync_holding"), 100u) << "1.8 s of attaches at 100/s";
  // The SGW holds every session it was answered for: Redis has each, at
  // once, accepted, without waiting for the persister.
  const auto all = records();
  EXPECT_EQ(all.size(), 200u);
  EXPECT_TRUE(std::all_of(all.begin(), all.end(), [](const auto& e) { return e.second.proxy().active(); }));
  const json s = g.status();
  EXPECT_GT(TestGroup::workerSum(s, "worker.sync_held"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sync_overflow"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sync_holding"), 0u) << "all gone once Redis answered";
  // A primary without replicas is reported, not waited on.
  EXPECT_EQ(TestGroup::process(s, "persister")["counters"].value("persister.replicas_missing", 0ull), 1u);
}

// storage.sync_replicas: an answer leaves once a replica holds its change too,
// so the primary's loss right after loses nothing that was answered.
TEST_F(PersistenceTest, InSyncModeAnswersWaitForAReplica) {
  testing::RedisServer primary(tmp_.file("primary"), {});
  testing::RedisServer::Options ro;
  ro.args = {"--replicaof", "127.0.0.1", std::to_string(primary.port())};
  testing::RedisServer replica(tmp_.file("replica"), ro);
  // The replica is connected and in sync before the group starts.
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        redisContext* c = redisConnect("127.0.0.1", primary.port());
        if (c == nullptr || c->err) {
          if (c) redisFree(c);
          return false;
        }
        auto* r = static_cast<redisReply*>(redisCommand(c, "ROLE"));
        const bool ok = r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
                        r->element[2]->type == REDIS_REPLY_ARRAY && r->element[2]->elements == 1;
        if (r) freeReplyObject(r);
        redisFree(c);
        return ok;
      },
      10s, 50ms))
      << "the replica never attached";
  TestGroup& g = startGroupOn(primary, "  persist: sync\n  sync_replicas: 1\n  sync_wait_ms: 200\n");
  ASSERT_FALSE(HasFailure());
  // The replica stops copying; the primary still acknowledges every write.
  const Stall stall = attachThroughAStall(g, replica);
  EXPECT_GT(TestGroup::workerSum(stall.during, "worker.sync_holding"), stall.held_before)
      << "answers left on the primary's word alone";
  const json p = TestGroup::process(stall.during, "persister")["counters"];
  EXPECT_GT(p.value("persister.replica_waits_repeated", 0ull), 0u);
  EXPECT_EQ(p.value("persister.replicas_missing", 1ull), 0u);
  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sync_holding"), 0u) << "all gone once the replica caught up";
  EXPECT_GT(TestGroup::process(s, "persister")["counters"].value("persister.replica_waits", 0ull), 0u);
  // What was answered is on the replica: read it there.
  port_ = replica.port();
  EXPECT_TRUE(settledWith(200)) << records().size() << " records on the replica";
  port_ = primary.port();
}

TEST_F(PersistenceTest, DedicatedBearersAreStoredWhileTheyLastAndRemovedWithThem) {
  TestGroup& g = startPersistingGroup(2);
  ASSERT_FALSE(HasFailure());
  constexpr int kSubscribers = 100;
  // The PGW answers and asks 400 ms late: each dedicated bearer lives about
  // a second (Create, Update, then Delete Bearer), long enough to be seen.
  auto pgw = std::make_unique<testing::PeerRun>(
      std::vector<std::string>{"--pgw", ip(21), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers),
                               "--duration", "60", "--dedicated-bearer", "--pgw-delay-ms", ip(21) + "=400",
                               "--t3-ms", "3000"},
      g.dir().path(), "pgw");
  ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(21), 2123); }, 5s, 10ms));
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers), "--mode",
                        "hold", "--setup-rate", "200", "--duration", "4", "--t3-ms", "3000", "--dedicated-bearer"},
                       g.dir().path(), "sgw");
  // While it runs: records with the dedicated bearer, both its sides.
  std::size_t with_dedicated = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (sgw.running() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& [key, rec] : records()) {
      for (const proto::Bearer& b : rec.bearers()) {
        if (b.ebi() == 6 && b.sgw_user_plane().teid() != 0 && b.pgw_user_plane().teid() != 0) ++with_dedicated;
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  const testing::PeerResult r = sgw.wait(30s);
  note(r.describe());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  EXPECT_GT(with_dedicated, 0u) << "no record ever held the dedicated bearer";
  // Deleted, it left the records: the default bearer alone, both sides.
  ASSERT_TRUE(settledWith(kSubscribers));
  for (const auto& [key, rec] : records()) {
    ASSERT_EQ(rec.bearers_size(), 1) << key << " " << rec.ShortDebugString();
    EXPECT_EQ(rec.bearers(0).ebi(), 5u);
    EXPECT_NE(rec.bearers(0).pgw_user_plane().teid(), 0u) << key;
    EXPECT_EQ(rec.proxy().bearer_mask(), 1u << 5) << key;
  }
}

// The access TEIDs (the key's last 8 hex digits) of `records`, of subscribers
// whose IMSI starts with `prefix`.
std::set<std::string> teidsOf(const std::map<std::string, proto::SessionRecord>& records, const std::string& prefix) {
  std::set<std::string> out;
  for (const auto& [key, rec] : records) {
    if (rec.imsi().starts_with(prefix)) out.insert(key.substr(key.size() - 8));
  }
  return out;
}

TEST_F(PersistenceTest, AColdStartServesTheStoredSessionsAndNeverGivesAwayTheirTeids) {
  TestGroup& g = startPersistingGroup(2);
  ASSERT_FALSE(HasFailure());
  constexpr int kSubscribers = 500;
  constexpr int kNewcomers = 300;
  const std::string dir = g.dir().path();
  auto pgw = startPgw(ip(21), kSubscribers + kNewcomers);
  // Subscribers attach, then run Modify Bearer across the restart, then detach.
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers),
                        "--imsi-start", "001010000000001", "--mode", "modify-only", "--setup-rate", "2000", "--rate",
                        "400", "--duration", "8", "--t3-ms", "1000", "--n3", "3"},
                       dir, "sgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == kSubscribers; }, 15s, 20ms))
      << g.status().dump(1);
  ASSERT_TRUE(settledWith(kSubscribers));
  const std::set<std::string> stored = teidsOf(records(), "00101000");
  ASSERT_EQ(stored.size(), static_cast<std::size_t>(kSubscribers));

  // The whole group stops, its shared memory removed: a cold start against
  // the storage (the embedded Redis keeps its append-only file).
  g.stop();
  ASSERT_TRUE(g.start()) << "restart";
  // Newcomers attach while the stored sessions come back one message at a time.
  testing::PeerRun newcomers({"--sgw", ip(12), "--proxy", proxy(), "--subscribers", std::to_string(kNewcomers),
                              "--imsi-start", "001019000000001", "--mode", "hold", "--setup-rate", "1000",
                              "--duration", "60", "--t3-ms", "1000"},
                             dir, "newcomers");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(g.status(), "worker.sessions_created") == kNewcomers; }, 20s, 20ms))
      << g.status().dump(1);

  const testing::PeerResult r = sgw.wait(60s);
  note(r.describe());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.value("/timeouts"), 0u) << "every Modify Bearer and Delete Session answered, across the restart";
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.restore_found"), static_cast<uint64_t>(kSubscribers)) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.context_not_found"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.restore_conflicts"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_stored"), 0u) << "every stored session came back";

  // The detach removed the stored ones; the newcomers' TEIDs are all new.
  ASSERT_TRUE(settledWith(kNewcomers));
  const std::set<std::string> fresh = teidsOf(records(), "00101900");
  EXPECT_EQ(fresh.size(), static_cast<std::size_t>(kNewcomers));
  for (const std::string& t : fresh) EXPECT_FALSE(stored.contains(t)) << "TEID " << t << " was a stored session's";
  ::kill(newcomers.pid(), SIGTERM);
  newcomers.wait(30s);
}

TEST_F(PersistenceTest, ASecondInstanceOfTheGroupServesTheFirstOnesSessions) {
  const testing::GroupOptions oa = instanceA(2);
  TestGroup& a = startGroup(oa);
  ASSERT_FALSE(HasFailure());
  // Instance b of the same group, on its own address and run directory,
  // against the same Redis (a's embedded one).
  TestGroup b(instanceB(oa, a.group(), "group_size: 2\ninstance_index: 1\n"));
  ASSERT_TRUE(b.start()) << b.diagnostics();
  // The storage is empty, but a runs: b keeps the group's value, or the
  // peers of a's sessions would drop them at the failover.
  EXPECT_EQ(echoRecovery(2), echoRecovery(kProxyHost));

  constexpr int kSubscribers = 500;
  auto pgw = startPgw(ip(21), kSubscribers);
  // Attach and modify through a; after 3 s everything the SGW sends goes to
  // b instead, as when the group's address moves to the other instance.
  const testing::PeerResult r =
      runPeer({"--sgw", ip(11), "--proxy", proxy(), "--failover-to", ip(2), "--failover-after", "3",
               "--subscribers", std::to_string(kSubscribers), "--mode", "modify-only", "--setup-rate", "2000",
               "--rate", "400", "--duration", "6", "--t3-ms", "1000"},
              60s, "sgw");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  EXPECT_TRUE(r.summary.value("/failover/switched"_json_pointer, false)) << r.describe();

  const json sa = a.status();
  const json sb = b.status();
  note(sb.dump(1));
  EXPECT_EQ(TestGroup::workerSum(sa, "worker.sessions_created"), static_cast<uint64_t>(kSubscribers));
  EXPECT_EQ(TestGroup::workerSum(sb, "worker.sessions_created"), 0u) << "b made none";
  // Every session once, and again those b gave back because a still wrote
  // (answers to what it forwarded before the switch) once b served them.
  EXPECT_GE(TestGroup::workerSum(sb, "worker.restore_found"), static_cast<uint64_t>(kSubscribers));
  EXPECT_LE(TestGroup::workerSum(sb, "worker.restore_found"),
            kSubscribers + TestGroup::workerSum(sb, "worker.sessions_demoted"))
      << "b read every session back once, and those it gave back at most once more";
  EXPECT_EQ(TestGroup::workerSum(sb, "worker.context_not_found"), 0u);
  EXPECT_GT(TestGroup::workerSum(sb, "worker.transactions_completed"), static_cast<uint64_t>(kSubscribers));
  // b's detaches removed them from the storage.
  EXPECT_TRUE(settledWith(0)) << records().size() << " records left";
  b.stop();
}


// The stale-state rule of a group (persister/lib/writes_watch.h,
// workers/lib/stale_sessions.h): traffic moves from a to b, b changes a
// session (its SGW moves, a dedicated bearer is added), traffic comes back
// to a. a must act on what b stored, not on what it still holds.
TEST_F(PersistenceTest, AnInstanceServingAgainActsOnWhatTheOtherChangedMeanwhile) {
  const testing::GroupOptions oa = instanceA(2);
  TestGroup& a = startGroup(oa);
  ASSERT_FALSE(HasFailure());
  TestGroup b(instanceB(oa, a.group(), "group_size: 2\ninstance_index: 1\n"));
  ASSERT_TRUE(b.start()) << b.diagnostics();

  const gtp::Ipv4 at_a = net_.addr(kProxyHost), at_b = net_.addr(2);
  const gtp::Ipv4 x = net_.addr(11), y = net_.addr(12), pgw_addr = net_.addr(21);
  testing::UdpSocket sgw_x(x, 2123), sgw_y(y, 2123), pgw(pgw_addr, 2123);
  PgwResponder responder(pgw_addr);
  const uint64_t imsi = 1010000000777;
  // Relays one request the proxy forwarded to the PGW and gives it the
  // PGW's answer; the request as forwarded.
  auto pgwAnswers = [&](const char* what) -> Decoded {
    auto r = pgw.receive(3s);
    if (!r) {
      ADD_FAILURE() << "the PGW got no " << what;
      return {};
    }
    const Bytes answer = responder.answer(r->bytes);
    EXPECT_FALSE(answer.empty()) << what;
    pgw.sendTo(r->from, r->port, answer);
    return decode(r->bytes);
  };

  // 1. Created through a, from SGW address x.
  ASSERT_TRUE(sgw_x.sendTo(at_a, 2123, createSessionRequest(1, imsi, x, 0x1001)));
  const Decoded csr = pgwAnswers("Create Session Request");
  ASSERT_TRUE(csr.fteid(kIfSgwGtpC).has_value()) << csr.describe();
  const uint32_t gateway_teid = csr.fteid(kIfSgwGtpC)->teid;
  auto created = sgw_x.receive(3s);
  ASSERT_TRUE(created);
  const Decoded csresp = decode(created->bytes);
  ASSERT_EQ(csresp.cause, kCauseAccepted) << csresp.describe();
  ASSERT_TRUE(csresp.fteid(kIfPgwGtpC).has_value());
  const uint32_t access_teid = csresp.fteid(kIfPgwGtpC)->teid;
  ASSERT_TRUE(settledWith(1));

  // 2. Traffic on b: the SGW moved to y (a new sender F-TEID).
  const uint32_t y_teid = 0x2002;
  const Bytes mbr = modifyBearerRequest(2, access_teid, imsi, y, 1, y_teid);
  ASSERT_TRUE(sgw_y.sendTo(at_b, 2123, mbr));
  pgwAnswers("Modify Bearer Request");
  auto modified = sgw_y.receive(3s);
  ASSERT_TRUE(modified);
  EXPECT_EQ(decode(modified->bytes).cause, kCauseAccepted);
  EXPECT_EQ(modified->from, at_b);

  // 3. A dedicated bearer added through b: asked at y.
  ASSERT_TRUE(pgw.sendTo(at_b, 2123, createBearerRequest(0x10, gateway_teid, imsi, pgw_addr)));
  auto cbreq = sgw_y.receive(3s);
  ASSERT_TRUE(cbreq) << "b did not ask the SGW at its new address";
  const Decoded cbr = decode(cbreq->bytes);
  EXPECT_EQ(cbr.teid, y_teid);
  ASSERT_TRUE(sgw_y.sendTo(at_b, 2123, createBearerResponse(cbr.sequence, access_teid, imsi, y, pgw_addr)));
  auto cbresp = pgw.receive(3s);
  ASSERT_TRUE(cbresp);
  EXPECT_EQ(decode(cbresp->bytes).cause, kCauseAccepted);
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        for (const auto& [key, rec] : records()) {
          for (const proto::Bearer& bearer : rec.bearers())
            if (bearer.ebi() == 6) return true;
        }
        return false;
      },
      5s, 50ms))
      << "the dedicated bearer never reached Redis";
  // a learns that b wrote, and gives back what it held.
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(a.status(), "worker.sessions_demoted") >= 1; }, 5s, 50ms))
      << a.status().dump(1);

  // 4. Traffic back on a: the PGW removes the dedicated bearer. a must know
  // the bearer and ask the SGW where it is now.
  ASSERT_TRUE(pgw.sendTo(at_a, 2123, deleteBearerRequest(0x11, gateway_teid, 6)));
  auto dbreq = sgw_y.receive(3s);
  ASSERT_TRUE(dbreq) << "a did not ask the SGW at its new address: " << a.status().dump(1);
  EXPECT_EQ(dbreq->from, at_a);
  const Decoded dbr = decode(dbreq->bytes);
  EXPECT_EQ(dbr.teid, y_teid);
  EXPECT_FALSE(sgw_x.receive(300ms)) << "a asked the SGW's old address";
  ASSERT_TRUE(sgw_y.sendTo(at_a, 2123, deleteBearerResponse(dbr.sequence, access_teid, 6)));
  auto dbresp = pgw.receive(3s);
  ASSERT_TRUE(dbresp);
  EXPECT_EQ(decode(dbresp->bytes).cause, kCauseAccepted);
  const json sa = a.status();
  note(sa.dump(1));
  EXPECT_GE(TestGroup::workerSum(sa, "worker.restore_found"), 1u) << "a read the session again";

  // 5. Detached through a, from y: nothing is left.
  ASSERT_TRUE(sgw_y.sendTo(at_a, 2123, deleteSessionRequest(3, access_teid)));
  pgwAnswers("Delete Session Request");
  auto deleted = sgw_y.receive(3s);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(decode(deleted->bytes).cause, kCauseAccepted);
  EXPECT_TRUE(settledWith(0)) << records().size() << " records left";
  b.stop();
}


// Sessions held only in Redis are walked too. 300 subscribers attach
// through a, which stops; b carries the traffic from then on (its first
// write makes it the group's latest writer) and holds none of them in
// memory. The PGW restarts: b reads every stored session of its partitions
// in (worker.completions), tells the SGW of each, and removes them, from
// Redis too.
TEST_F(PersistenceTest, APgwRestartAfterATakeoverTellsTheSgwOfTheSessionsHeldOnlyInRedis) {
  constexpr std::size_t kSubscribers = 300;
  // A Redis of the test's own: an embedded one would stop with a.
  testing::TempDir redis_dir;
  testing::RedisServer redis(redis_dir.path(), {});
  testing::GroupOptions oa = instanceA(2);
  port_ = redis.port();
  oa.storage_yaml = "  mode: single\n  servers: [\"127.0.0.1:" + std::to_string(port_) + "\"]\n";
  oa.routing_yaml = onlyGateway(ip(21), "health_check: {interval_ms: 200, misses: 3, restart_notify_rate: 1000}\n");
  TestGroup& a = startGroup(oa);
  ASSERT_FALSE(HasFailure());
  TestGroup b(instanceB(oa, a.group(), "group_size: 2\ninstance_index: 1\n"));
  ASSERT_TRUE(b.start()) << b.diagnostics();
  const std::string dir = a.dir().path();
  const std::vector<std::string> pgw_args = {"--pgw", ip(21), "--proxy", proxy(), "--subscribers",
                                             std::to_string(kSubscribers + 10)};
  auto pgw = std::make_unique<testing::PeerRun>(
      [&] { auto v = pgw_args; v.insert(v.end(), {"--recovery", "3"}); return v; }(), dir, "pgw-before");
  ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(21), 2123); }, 5s, 10ms));
  testing::PeerRun sgw({"--sgw", ip(11), "--proxy", proxy(), "--subscribers", std::to_string(kSubscribers), "--mode",
                        "hold", "--setup-rate", "1000", "--duration", "60", "--t3-ms", "1000"},
                       dir, "sgw");
  ASSERT_TRUE(settledWith(kSubscribers)) << records().size() << " records; " << a.status().dump(1);
  a.stop();

  // Traffic now through b: one more subscriber, from another SGW.
  testing::UdpSocket other_sgw(net_.addr(12), 2123);
  ASSERT_TRUE(other_sgw.sendTo(net_.addr(2), 2123, createSessionRequest(1, 1010000000888, net_.addr(12), 0x1001)));
  auto created = other_sgw.receive(5s);
  ASSERT_TRUE(created) << b.status().dump(1);
  ASSERT_EQ(decode(created->bytes).cause, kCauseAccepted);
  ASSERT_TRUE(testing::waitUntil([&] { return records().size() == kSubscribers + 1; }, 10s, 50ms));
  EXPECT_EQ(b.status().value("sessions", 0ull), 1u) << "b holds only what it carried";
  // b acts for the stored sessions once its write is the latest the group saw.
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        return TestGroup::process(b.status(), "persister")["counters"].value("persister.acts_for_stored", 0ull) == 1;
      },
      5s, 50ms))
      << TestGroup::process(b.status(), "persister").dump(1);

  // The PGW restarts: Recovery 3 -> 4, seen by b's health checks.
  ASSERT_EQ(::kill(pgw->pid(), SIGTERM), 0);
  EXPECT_TRUE(pgw->wait(10s).status.has_value());
  pgw = std::make_unique<testing::PeerRun>(
      [&] { auto v = pgw_args; v.insert(v.end(), {"--recovery", "4"}); return v; }(), dir, "pgw-after");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(b.status(), "worker.restart_sessions_removed") == kSubscribers + 1; }, 30s,
      100ms))
      << b.status().dump(1);
  const json sb = b.status();
  note(sb.dump(1));
  EXPECT_GE(TestGroup::workerSum(sb, "worker.completions"), 1u);
  EXPECT_EQ(TestGroup::workerSum(sb, "worker.completion_reads"), kSubscribers) << "each stored session read once";
  EXPECT_TRUE(other_sgw.receive(5s)) << "the SGW b created through was told too";
  EXPECT_TRUE(testing::waitUntil([&] { return records().empty(); }, 10s, 100ms)) << records().size() << " left";
  // Every SGW session answered for: the hold ends (SIGTERM: no detach).
  EXPECT_TRUE(testing::waitUntil(
      [&] { return TestGroup::workerSum(b.status(), "worker.own_requests_answered") >= kSubscribers; }, 10s, 50ms));
  ASSERT_EQ(::kill(sgw.pid(), SIGTERM), 0);
  const auto r = sgw.wait(30s);
  note(r.describe());
  EXPECT_EQ(r.value("/network_initiated/sessions_deleted_by_network"), kSubscribers) << r.describe();
  b.stop();
}

// Processes whose command line names `config` (a group's gtpcp.yaml): what a
// start that failed must not leave behind.
std::vector<int> processesOf(const std::string& config) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(config) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

TEST_F(PersistenceTest, ASecondInstanceWithARunningInstancesShareDoesNotStart) {
  const testing::GroupOptions oa = instanceA(1);
  TestGroup& a = startGroup(oa);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(testing::waitUntil(
      [&] { return RedisReader(port_).hash("gtpcp:" + a.group() + ":shares").count("a") == 1; }, 5s, 50ms));
  EXPECT_EQ(RedisReader(port_).hash("gtpcp:" + a.group() + ":shares")["a"], "0/2");
  TestGroup b(instanceB(oa, a.group(), "group_size: 2\ninstance_index: 0\n"));  // a's share
  EXPECT_FALSE(b.start());
  EXPECT_THAT(b.diagnostics(), ::testing::HasSubstr("instance_index: instance a of group " + a.group() +
                                                    " runs with instance_index/group_size 0/2, this one has 0/2"));
  // The workers it started before the storage said no are gone again, even
  // one forked a moment before and not yet its program.
  EXPECT_THAT(processesOf(b.configPath()), ::testing::IsEmpty());
  b.stop();
  TestGroup c(instanceB(oa, a.group(), "group_size: 1\n"));
  EXPECT_FALSE(c.start());
  EXPECT_THAT(c.diagnostics(), ::testing::HasSubstr("instance_index: instance a"));
  EXPECT_THAT(processesOf(c.configPath()), ::testing::IsEmpty());
  c.stop();
}


// Scale-out: groups with their own service addresses share one Redis
// Cluster; every key names its group, so neither sees, restores or deletes
// the other's sessions, and each keeps its own Recovery.
TEST_F(PersistenceTest, TwoGroupsOnOneRedisClusterKeepToTheirOwnKeys) {
  testing::RedisCluster cluster(1000);
  const auto ports = cluster.ports();
  std::string servers = "[";
  for (std::size_t i = 0; i < ports.size(); ++i)
    servers += (i ? ", \"127.0.0.1:" : "\"127.0.0.1:") + std::to_string(ports[i]) + "\"";
  servers += "]";
  constexpr int kSubscribers = 300;
  struct Side {
    uint8_t proxy, sgw, pgw;
    std::unique_ptr<TestGroup> group;
    std::unique_ptr<testing::PeerRun> pgw_run;
  };
  Side sides[2] = {{kProxyHost, 11, 21, nullptr, nullptr}, {2, 12, 22, nullptr, nullptr}};
  for (Side& side : sides) {
    testing::GroupOptions o;
    o.workers = 1;
    o.address = net_.addr(side.proxy);
    o.routing_yaml = onlyGateway(ip(side.pgw), kNoHealthChecks);
    o.storage_yaml = "  mode: cluster\n  servers: " + servers + "\n";
    side.group = std::make_unique<TestGroup>(o);
    ASSERT_TRUE(side.group->start()) << side.group->diagnostics();
    side.pgw_run = std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--pgw", ip(side.pgw), "--proxy", ip(side.proxy), "--subscribers",
                                 std::to_string(kSubscribers), "--duration", "60"},
        side.group->dir().path(), "pgw");
    ASSERT_TRUE(testing::waitUntil([&] { return udpPortTaken(ip(side.pgw), 2123); }, 5s, 10ms));
  }
  ASSERT_NE(sides[0].group->group(), sides[1].group->group());
  // The same subscribers (same IMSIs) attach through both groups at once.
  std::vector<std::unique_ptr<testing::PeerRun>> sgws;
  for (Side& side : sides) {
    sgws.push_back(std::make_unique<testing::PeerRun>(
        std::vector<std::string>{"--sgw", ip(side.sgw), "--proxy", ip(side.proxy), "--subscribers",
                                 std::to_string(kSubscribers), "--mode", "hold", "--setup-rate", "500", "--duration",
                                 "1", "--t3-ms", "1000"},
        side.group->dir().path(), "sgw"));
  }
  for (auto& s : sgws) {
    const auto r = s->wait(60s);
    EXPECT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.value("/sessions/up_at_end"), static_cast<uint64_t>(kSubscribers));
  }
  // Each group's session keys, over every primary.
  auto sessionKeys = [&](const std::string& group) {
    std::set<std::string> out;
    for (const auto& n : cluster.nodes()) {
      if (!n.primary) continue;
      RedisReader r(n.port);
      for (const std::string& k : r.keys("gtpcp:" + group + ":*:s:*")) out.insert(k);
    }
    return out;
  };
  std::set<std::string> seen[2];
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        for (int i = 0; i < 2; ++i) seen[i] = sessionKeys(sides[i].group->group());
        return seen[0].size() == kSubscribers && seen[1].size() == kSubscribers;
      },
      10s, 100ms))
      << seen[0].size() << " and " << seen[1].size() << " session keys";
  for (const std::string& k : seen[0]) EXPECT_FALSE(seen[1].contains(k)) << k;
  for (int i = 0; i < 2; ++i) {
    const json s = sides[i].group->status();
    EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), static_cast<uint64_t>(kSubscribers));
    EXPECT_EQ(TestGroup::workerSum(s, "worker.restore_found"), 0u) << "a group read nothing of the other's";
    EXPECT_FALSE(testing::readFile(sides[i].group->runDir() + "/recovery").empty());
  }
  // One group stopped and its storage cleared leaves the other's whole.
  sides[0].group->stop();
  for (const auto& n : cluster.nodes()) {
    if (!n.primary) continue;
    RedisReader r(n.port);
    for (const std::string& k : r.keys("gtpcp:" + sides[0].group->group() + ":*")) r.del(k);
  }
  EXPECT_TRUE(sessionKeys(sides[0].group->group()).empty());
  EXPECT_EQ(sessionKeys(sides[1].group->group()).size(), static_cast<std::size_t>(kSubscribers));
  sides[1].group->stop();
}

}  // namespace
}  // namespace gtpcp::integration
