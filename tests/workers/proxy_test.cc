// The worker's procedures (workers/lib/proxy.h) fed directly, without rings
// or sockets: what leaves the proxy for each message, octet by octet where it
// matters (TEIDs, sequence numbers, F-TEIDs), and what the session and
// transaction tables hold afterwards.
#include "workers/lib/proxy.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <map>
#include <memory>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/partition.h"

namespace gtpcp::worker {
namespace {

using namespace gtp;
using namespace gtp::v2;

constexpr uint16_t kPort = 2123;
const Ipv4 kProxy{{127, 0, 0, 1}};
const Ipv4 kSgw{{127, 0, 0, 11}};
const Ipv4 kSgw2{{127, 0, 0, 12}};
const Ipv4 kPgw1{{127, 0, 0, 21}};
const Ipv4 kPgw2{{127, 0, 0, 22}};
const Ipv4 kPgw3{{127, 0, 0, 23}};

constexpr const char* kRouting = R"(
version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21, weight: 3}
      - {name: pgw2, address: 127.0.0.22, weight: 1}
  ims:
    gateways:
      - {name: pgw3, address: 127.0.0.23}
rules:
  - name: ims
    match: {apn: [ims]}
    pool: ims
  - name: default
    pool: internet
)";

struct Sent {
  uint8_t socket;
  net::Address to;
  std::vector<uint8_t> bytes;
};

class RecordingEgress final : public Egress {
 public:
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept override {
    sent.push_back(Sent{socket, to, {bytes.begin(), bytes.end()}});
    return true;
  }
  std::vector<Sent> sent;
};

// A worker (index 0 of 1) with its tables on the heap instead of shared memory.
class ProxyTest : public ::testing::Test {
 protected:
  ProxyTest()
      : layout_(WorkerLayout::compute(1, 0, 64, 1024)),
        memory_(layout_.total / 8 + 1),
        header_(new (memory_.data()) WorkerShmHeader()),
        sessions_(layout_, reinterpret_cast<PartitionShm*>(base() + layout_.partitions_offset),
                  reinterpret_cast<SessionShm*>(base() + layout_.sessions_offset)),
        transactions_(reinterpret_cast<TransactionShm*>(base() + layout_.transactions_offset), 1024) {
    auto routing = config::parseRoutingDocument(kRouting, "routing.yaml");
    EXPECT_TRUE(routing) << (routing ? "" : routing.error().toString());
    routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
    ProxySettings settings;
    // One address for both legs, as when gtpcp.yaml has no gtpc.gateway section.
    settings.sockets = group::SocketPlan::make(kProxy, std::nullopt, kProxy, std::nullopt, kPort);
    settings.transaction_timeout_ns = 9'000'000'000;
    sessions_.rebuild();
    proxy_ = std::make_unique<Proxy>(settings, *header_, sessions_, transactions_, *routing_, egress_);
  }

  uint8_t* base() { return reinterpret_cast<uint8_t*>(memory_.data()); }

  // Feeds `bytes` as if received from `from` on socket 0; returns what left.
  std::vector<Sent> feed(std::vector<uint8_t> bytes, const net::Address& from, uint64_t now = 1'000'000'000) {
    egress_.sent.clear();
    Arrival a;
    a.peer = from;
    a.socket = 0;
    a.now_ns = now;
    a.wall_ns = now;
    proxy_->handle(a, bytes);
    return egress_.sent;
  }

  static std::vector<uint8_t> createSessionRequest(const std::string& imsi, const std::string& apn,
                                                   uint32_t sgw_teid, uint32_t sequence, const Ipv4& sgw) {
    std::vector<uint8_t> buf(512);
    Builder b(buf);
    b.begin(MessageType::kCreateSessionRequest, 0, sequence);
    Imsi i;
    for (char c : imsi) i.digits.push(c);
    b.add(i);
    b.add(RatType{6});
    FTeid sender;
    sender.interface_type = 6;
    sender.teid = sgw_teid;
    sender.ipv4 = sgw;
    b.add(sender, 0);
    Apn a;
    for (char c : apn) a.text.push(c);
    b.add(a);
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    BearerQos qos;
    qos.qci = 9;
    b.add(qos);
    FTeid user;
    user.interface_type = 4;  // S5/S8 SGW GTP-U: passes through untouched
    user.teid = 0xabcd0001;
    user.ipv4 = Ipv4{{10, 1, 1, 1}};
    b.add(user, 2);
    b.endGrouped();
    auto out = b.finish();
    buf.resize(out->size());
    return buf;
  }

  static std::vector<uint8_t> createSessionResponse(uint32_t teid, uint32_t sequence, uint8_t cause,
                                                    uint32_t pgw_teid, const Ipv4& pgw) {
    std::vector<uint8_t> buf(512);
    Builder b(buf);
    b.begin(MessageType::kCreateSessionResponse, teid, sequence);
    CauseIe c;
    c.value = cause;
    b.add(c);
    if (cause == 16) {
      FTeid f;
      f.interface_type = 7;
      f.teid = pgw_teid;
      f.ipv4 = pgw;
      b.add(f, 1);
      b.beginGrouped(IeType::kBearerContext);
      b.add(Ebi{5});
      b.add(c);
      FTeid user;
      user.interface_type = 5;
      user.teid = 0x55550001;
      user.ipv4 = Ipv4{{10, 2, 2, 2}};
      b.add(user, 2);
      b.endGrouped();
    }
    auto out = b.finish();
    buf.resize(out->size());
    return buf;
  }

  static std::vector<uint8_t> simple(MessageType type, uint32_t teid, uint32_t sequence,
                                     std::optional<uint8_t> cause = std::nullopt) {
    std::vector<uint8_t> buf(128);
    Builder b(buf);
    b.begin(type, teid, sequence);
    if (cause) {
      CauseIe c;
      c.value = *cause;
      b.add(c);
    } else {
      b.add(Ebi{5});
    }
    auto out = b.finish();
    buf.resize(out->size());
    return buf;
  }

  static Message decode(const std::vector<uint8_t>& bytes) {
    Message m;
    EXPECT_TRUE(m.decode(bytes));
    return m;
  }

  // Attaches one subscriber through the proxy; returns (proxy TEID the SGW
  // must use, proxy TEID the PGW must use, PGW address chosen).
  struct Attached {
    uint32_t access_teid;
    uint32_t gateway_teid;
    net::Address pgw;
  };
  Attached attach(const std::string& imsi, uint32_t sgw_teid = 0x1111, uint32_t sgw_seq = 7) {
    auto out = feed(createSessionRequest(imsi, "internet", sgw_teid, sgw_seq, kSgw), net::Address::v4(kSgw, kPort));
    EXPECT_EQ(out.size(), 1u);
    Message to_pgw = decode(out[0].bytes);
    auto sender = readFirst<FTeid>(to_pgw, 0);
    auto resp = feed(createSessionResponse(sender->teid, to_pgw.header().sequence_number, 16, 0x2222, out[0].to.ipv4()),
                     out[0].to);
    EXPECT_EQ(resp.size(), 1u);
    Message to_sgw = decode(resp[0].bytes);
    auto pgw_fteid = readFirst<FTeid>(to_sgw, 1);
    return Attached{pgw_fteid->teid, sender->teid, out[0].to};
  }

  WorkerLayout layout_;
  std::vector<uint64_t> memory_;
  WorkerShmHeader* header_;
  SessionTable sessions_;
  TransactionTable transactions_;
  std::unique_ptr<config::RoutingTable> routing_;
  RecordingEgress egress_;
  std::unique_ptr<Proxy> proxy_;
};

TEST_F(ProxyTest, CreateSessionRequestGoesToAGatewayWithTheProxysControlFTeid) {
  auto out = feed(createSessionRequest("001010000000001", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  // pgw1 or pgw2 of pool internet, on GTP-C's port.
  EXPECT_TRUE(out[0].to == net::Address::v4(kPgw1, kPort) || out[0].to == net::Address::v4(kPgw2, kPort))
      << out[0].to.toString();
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.header().teid, 0u) << "the PGW has no TEID for the session yet";
  auto sender = readFirst<FTeid>(m, 0);
  ASSERT_TRUE(sender);
  EXPECT_EQ(sender->interface_type, 6);
  EXPECT_EQ(*sender->ipv4, kProxy) << "the PGW must answer the proxy, not the SGW";
  EXPECT_NE(sender->teid, 0x1111u);
  EXPECT_EQ(partitionOf(sender->teid), partitionOf(std::string_view("001010000000001")));
  // The bearer's user-plane F-TEID is left exactly as the SGW sent it.
  const Ie* bc = m.find(IeType::kBearerContext);
  ASSERT_NE(bc, nullptr);
  auto user = read<FTeid>(m, *m.findChild(*bc, IeType::kFTeid, 2));
  EXPECT_EQ(user->teid, 0xabcd0001u);
  EXPECT_EQ(*user->ipv4, (Ipv4{{10, 1, 1, 1}}));
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, AcceptedCreateSessionResponseReachesTheSgwTranslated) {
  auto out = feed(createSessionRequest("001010000000002", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
  // A PGW answering from an ephemeral port: matched by sequence number and TEID.
  auto resp = feed(createSessionResponse(gateway_teid, to_pgw.header().sequence_number, 16, 0x2222, kPgw1),
                   net::Address::v4(out[0].to.ipv4(), 40000));
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, net::Address::v4(kSgw, kPort));
  Message m = decode(resp[0].bytes);
  EXPECT_EQ(m.header().teid, 0x1111u) << "the SGW's own TEID";
  EXPECT_EQ(m.header().sequence_number, 7u) << "the SGW's own sequence number";
  auto pgw = readFirst<FTeid>(m, 1);
  EXPECT_EQ(*pgw->ipv4, kProxy);
  EXPECT_NE(pgw->teid, gateway_teid) << "each leg has its own proxy TEID";
  EXPECT_EQ(partitionOf(pgw->teid), partitionOf(gateway_teid));
  EXPECT_EQ(header_->counters.sessions_created.load(), 1u);
}

TEST_F(ProxyTest, RejectedCreationLeavesNoSession) {
  auto out = feed(createSessionRequest("001010000000003", "internet", 0x1111, 9, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  auto resp = feed(createSessionResponse(readFirst<FTeid>(to_pgw, 0)->teid, to_pgw.header().sequence_number, 73, 0, kPgw1),
                   out[0].to);
  ASSERT_EQ(resp.size(), 1u);
  Message m = decode(resp[0].bytes);
  EXPECT_EQ(readFirst<CauseIe>(m)->value, 73);
  EXPECT_EQ(m.header().sequence_number, 9u);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.sessions_rejected.load(), 1u);
}

TEST_F(ProxyTest, ModifyBearerAndDeleteSessionAreRelayedBothWays) {
  Attached s = attach("001010000000004");
  // SGW -> proxy: Modify Bearer Request to the proxy's access TEID.
  auto mbr = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), net::Address::v4(kSgw, 33000));
  ASSERT_EQ(mbr.size(), 1u);
  EXPECT_EQ(mbr[0].to, s.pgw);
  Message to_pgw = decode(mbr[0].bytes);
  EXPECT_EQ(to_pgw.header().teid, 0x2222u) << "the PGW's TEID";
  const uint32_t proxy_seq = to_pgw.header().sequence_number;
  // PGW -> proxy: response to the proxy's gateway TEID, the proxy's number.
  auto resp = feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw);
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, net::Address::v4(kSgw, 33000)) << "to where the request came from";
  Message to_sgw = decode(resp[0].bytes);
  EXPECT_EQ(to_sgw.header().teid, 0x1111u);
  EXPECT_EQ(to_sgw.header().sequence_number, 100u);

  auto dsr = feed(simple(MessageType::kDeleteSessionRequest, s.access_teid, 101), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(dsr.size(), 1u);
  auto dresp = feed(simple(MessageType::kDeleteSessionResponse, s.gateway_teid,
                           decode(dsr[0].bytes).header().sequence_number, 16),
                    s.pgw);
  ASSERT_EQ(dresp.size(), 1u);
  EXPECT_EQ(sessions_.active(), 0u);
  // The session is gone: its TEID now gets Context Not Found.
  auto late = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 102), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(late.size(), 1u);
  Message cnf = decode(late[0].bytes);
  EXPECT_EQ(cnf.messageType(), MessageType::kModifyBearerResponse);
  EXPECT_EQ(readFirst<CauseIe>(cnf)->value, static_cast<uint8_t>(Cause::kContextNotFound));
  EXPECT_EQ(cnf.header().sequence_number, 102u);
}

TEST_F(ProxyTest, TwoSgwsWithTheSameSequenceNumberDoNotCollide) {
  auto a = feed(createSessionRequest("001010000000005", "ims", 0x10, 5000, kSgw), net::Address::v4(kSgw, kPort));
  auto b = feed(createSessionRequest("001010000000006", "ims", 0x20, 5000, kSgw2), net::Address::v4(kSgw2, kPort));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].to, net::Address::v4(kPgw3, kPort));
  EXPECT_EQ(b[0].to, net::Address::v4(kPgw3, kPort));
  Message ma = decode(a[0].bytes), mb = decode(b[0].bytes);
  EXPECT_NE(ma.header().sequence_number, mb.header().sequence_number);
  // Answered in the opposite order, each answer reaches its own SGW.
  auto rb = feed(createSessionResponse(readFirst<FTeid>(mb, 0)->teid, mb.header().sequence_number, 16, 0x99, kPgw3), b[0].to);
  auto ra = feed(createSessionResponse(readFirst<FTeid>(ma, 0)->teid, ma.header().sequence_number, 16, 0x98, kPgw3), a[0].to);
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(ra[0].to, net::Address::v4(kSgw, kPort));
  EXPECT_EQ(rb[0].to, net::Address::v4(kSgw2, kPort));
  EXPECT_EQ(decode(ra[0].bytes).header().teid, 0x10u);
  EXPECT_EQ(decode(rb[0].bytes).header().teid, 0x20u);
}

TEST_F(ProxyTest, WeightsSplitSessionsExactly) {
  std::map<std::string, int> split;
  for (int i = 0; i < 400; ++i) {
    auto out = feed(createSessionRequest("00101" + std::to_string(1000000000 + i), "internet", 0x100 + i, i, kSgw),
                    net::Address::v4(kSgw, kPort));
    ASSERT_EQ(out.size(), 1u);
    split[out[0].to.toString()]++;
  }
  EXPECT_EQ(split["127.0.0.21:2123"], 300);
  EXPECT_EQ(split["127.0.0.22:2123"], 100);
}

TEST_F(ProxyTest, CreateSessionRequestWithoutMandatoryIeIsRejectedWithTheOffendingIe) {
  std::vector<uint8_t> buf(128);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, 77);
  FTeid sender;
  sender.interface_type = 6;
  sender.teid = 0x4242;
  sender.ipv4 = kSgw;
  b.add(sender);
  buf.resize(b.finish()->size());
  auto out = feed(buf, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0x4242u) << "the sender F-TEID's TEID";
  auto cause = readFirst<CauseIe>(m);
  EXPECT_EQ(cause->value, static_cast<uint8_t>(Cause::kMandatoryIeMissing));
  ASSERT_TRUE(cause->offending_ie);
  EXPECT_EQ(cause->offending_ie->type, static_cast<uint8_t>(IeType::kRatType));
  EXPECT_EQ(sessions_.active(), 0u);
}

TEST_F(ProxyTest, UnansweredCreationExpiresAndFreesTheSession) {
  feed(createSessionRequest("001010000000007", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort), 1'000'000'000);
  ASSERT_EQ(sessions_.active(), 1u);
  // The lifetime is 9 s; a quarter of it later the whole table has been seen.
  for (uint64_t t = 10; t <= 16; ++t) proxy_->tick(t * 1'000'000'000);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.transactions_expired.load(), 1u);
  EXPECT_EQ(header_->counters.sessions_expired.load(), 1u);
}

TEST_F(ProxyTest, UnknownResponseIsDroppedAndCounted) {
  auto out = feed(simple(MessageType::kModifyBearerResponse, 0x12345678, 4242, 16), net::Address::v4(kPgw1, kPort));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 1u);
}

TEST_F(ProxyTest, PiggybackedCreateBearerRequestIsTranslatedWithTheResponse) {
  auto out = feed(createSessionRequest("001010000000008", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionResponse, gateway_teid, to_pgw.header().sequence_number);
  CauseIe ok;
  ok.value = 16;
  b.add(ok);
  FTeid f;
  f.interface_type = 7;
  f.teid = 0x2222;
  f.ipv4 = kPgw1;
  b.add(f, 1);
  b.beginPiggybacked(MessageType::kCreateBearerRequest, gateway_teid, 0x300);
  b.add(Ebi{5});
  buf.resize(b.finish()->size());
  auto resp = feed(buf, out[0].to);
  ASSERT_EQ(resp.size(), 1u);
  Datagram d;
  ASSERT_TRUE(d.decode(resp[0].bytes));
  ASSERT_TRUE(d.has_piggybacked);
  EXPECT_EQ(d.message.header().teid, 0x1111u);
  EXPECT_EQ(d.piggybacked.header().teid, 0x1111u) << "the SGW's TEID in the piggybacked request too";
  EXPECT_NE(d.piggybacked.header().sequence_number, 0x300u) << "a proxy sequence number toward the SGW";
  EXPECT_EQ(header_->counters.transactions_started.load(), 2u);
}

}  // namespace
}  // namespace gtpcp::worker
