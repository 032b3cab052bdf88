// A worker's Proxy (workers/lib/proxy.h) with its tables on the heap instead
// of shared memory, fed datagrams directly, and what it sends recorded: the
// fixture of the tests of the worker's procedures.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/gtp/constants.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "workers/lib/proxy.h"

namespace gtpcp::worker::test {

using namespace gtp;
using namespace gtp::v2;

constexpr uint16_t kPort = gtp::kGtpcPort;
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
  uint64_t receive_ns = 0;  // what the egress record's meta would carry
};

class RecordingEgress final : public Egress {
 public:
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept override {
    return send(socket, to, bytes, 0);
  }
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
            uint64_t receive_ns) noexcept override {
    sent.push_back(Sent{socket, to, {bytes.begin(), bytes.end()}, receive_ns});
    return true;
  }
  std::vector<Sent> sent;
};

inline void addCause(Builder& b, std::optional<uint8_t> cause) {
  if (!cause) return;
  CauseIe c;
  c.value = *cause;
  b.add(c);
}

// A PGW Downlink Triggering Notification for `imsi` from the PGW, naming the
// PGW's F-TEID (TEID `pgw_teid`).
inline std::vector<uint8_t> downlinkTriggering(const std::string& imsi, uint32_t sequence, uint32_t pgw_teid, const Ipv4& pgw) {
  std::vector<uint8_t> buf(128);
  Builder b(buf);
  b.begin(MessageType::kPgwDownlinkTriggeringNotification, 0u, sequence);
  Imsi i;
  for (char ch : imsi) i.digits.push(ch);
  b.add(i);
  FTeid f;
  f.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8PgwGtpC);
  f.teid = pgw_teid;
  f.ipv4 = pgw;
  b.add(f);
  buf.resize(b.finish()->size());
  return buf;
}

// A message with `ebis` Bearer Contexts (EBI, and Cause `cause` when given).
inline std::vector<uint8_t> withBearers(MessageType type, uint32_t teid, uint32_t sequence, std::optional<uint8_t> cause,
                                        std::initializer_list<uint8_t> ebis, std::optional<uint8_t> lbi = std::nullopt) {
  std::vector<uint8_t> buf(256);
  Builder b(buf);
  b.begin(type, teid, sequence);
  addCause(b, cause);
  if (lbi) b.add(Ebi{*lbi}, 0);
  for (uint8_t e : ebis) {
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{e});
    addCause(b, cause);
    b.endGrouped();
  }
  buf.resize(b.finish()->size());
  return buf;
}

// A worker (index 0 of 1) with its tables on the heap instead of shared memory.
class ProxyTest : public ::testing::Test {
 protected:
  ProxyTest()
      : layout_(WorkerLayout::compute(1, 0, 64, 1024, 1 << 16)),
        memory_(layout_.total / 8 + 1),
        header_(new (memory_.data()) WorkerShmHeader()),
        sessions_(layout_, reinterpret_cast<PartitionShm*>(base() + layout_.partitions_offset),
                  reinterpret_cast<SessionShm*>(base() + layout_.sessions_offset)),
        transactions_(layout_.transactionMemory(base(), *header_)) {
    transactions_.rebuild(true);
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

  // Replaces the routing document (kRouting with `extra` appended).
  void useRouting(const std::string& extra) {
    auto routing = config::parseRoutingDocument(std::string(kRouting) + extra, "routing.yaml");
    ASSERT_TRUE(routing) << routing.error().toString();
    next_routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
    proxy_->setRouting(*next_routing_);
    routing_.swap(next_routing_);
  }

  // A gateway table whose health checks know the document's gateways,
  // all up, Recovery unknown.
  forwarder::GatewayTableShm& healthChecks() {
    forwarder_ = std::make_unique<forwarder::GatewayTableShm>();
    for (std::size_t i = 0; i < routing_->gateways().size(); ++i) {
      const config::Gateway& g = routing_->gateways()[i];
      forwarder_->gateways[i].address = net::Address::v4(std::get<Ipv4>(g.address), g.port);
    }
    forwarder_->published.store(static_cast<uint32_t>(routing_->gateways().size()));
    proxy_->setGatewayStatus(forwarder_.get());
    return *forwarder_;
  }

  // A Create Session Request of `imsi` from the SGW; returns where it went.
  Sent createFrom(const std::string& imsi, const std::string& apn, uint32_t sgw_teid, uint32_t sequence,
                  uint64_t now = 1'000'000'000) {
    auto out = feed(createSessionRequest(imsi, apn, sgw_teid, sequence, kSgw), net::Address::v4(kSgw, kPort), now);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Sent{} : out[0];
  }
  // The PGW at `at` answers the Create Session Request `request` it got.
  std::vector<Sent> answerCreate(const Sent& request, uint8_t cause, std::optional<uint8_t> recovery = std::nullopt,
                                 uint64_t now = 1'000'000'000) {
    Message m = decode(request.bytes);
    return feed(createSessionResponse(readFirst<FTeid>(m, 0)->teid, m.header().sequence_number, cause, 0x2222,
                                      request.to.ipv4(), recovery),
                request.to, now);
  }

  // Feeds `bytes` as if received from `from` on socket 0 (by the forwarder
  // at `receive_ns`); returns what left.
  std::vector<Sent> feed(std::vector<uint8_t> bytes, const net::Address& from, uint64_t now = 1'000'000'000,
                         uint64_t receive_ns = 0) {
    egress_.sent.clear();
    Arrival a;
    a.peer = from;
    a.socket = 0;
    a.now_ns = now;
    a.wall_ns = now;
    a.receive_ns = receive_ns;
    proxy_->handle(a, bytes);
    return egress_.sent;
  }

  // An FQ-CSID IE and its instance.
  struct CsidIe {
    FqCsid fq;
    uint8_t instance;
  };
  static std::vector<uint8_t> createSessionRequest(const std::string& imsi, const std::string& apn,
                                                   uint32_t sgw_teid, uint32_t sequence, const Ipv4& sgw,
                                                   const std::vector<CsidIe>& csids = {}) {
    std::vector<uint8_t> buf(512);
    Builder b(buf);
    b.begin(MessageType::kCreateSessionRequest, 0, sequence);
    Imsi i;
    for (char c : imsi) i.digits.push(c);
    b.add(i);
    b.add(RatType{6});
    FTeid sender;
    sender.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpC);
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
    user.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpU);  // passes through untouched
    user.teid = 0xabcd0001;
    user.ipv4 = Ipv4{{10, 1, 1, 1}};
    b.add(user, 2);
    b.endGrouped();
    return finish(b, buf, csids);
  }

  // The message `b` builds in `buf`, with `csids` at its end.
  static std::vector<uint8_t> finish(Builder& b, std::vector<uint8_t>& buf, const std::vector<CsidIe>& csids) {
    for (const CsidIe& csid : csids) b.add(csid.fq, csid.instance);
    buf.resize(b.finish()->size());
    return buf;
  }

  static std::vector<uint8_t> createSessionResponse(uint32_t teid, uint32_t sequence, uint8_t cause,
                                                    uint32_t pgw_teid, const Ipv4& pgw,
                                                    std::optional<uint8_t> recovery = std::nullopt,
                                                    const std::vector<CsidIe>& csids = {}) {
    std::vector<uint8_t> buf(512);
    Builder b(buf);
    b.begin(MessageType::kCreateSessionResponse, teid, sequence);
    CauseIe c;
    c.value = cause;
    b.add(c);
    if (recovery) b.add(Recovery{*recovery});
    if (cause == 16) {
      FTeid f;
      f.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8PgwGtpC);
      f.teid = pgw_teid;
      f.ipv4 = pgw;
      b.add(f, 1);
      b.beginGrouped(IeType::kBearerContext);
      b.add(Ebi{5});
      b.add(c);
      FTeid user;
      user.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8PgwGtpU);
      user.teid = 0x55550001;
      user.ipv4 = Ipv4{{10, 2, 2, 2}};
      b.add(user, 2);
      b.endGrouped();
    }
    return finish(b, buf, csids);
  }

  // A Cause when given, else an EBI (5).
  static std::vector<uint8_t> simple(MessageType type, uint32_t teid, uint32_t sequence,
                                     std::optional<uint8_t> cause = std::nullopt) {
    return withBearers(type, teid, sequence, cause, {}, cause ? std::nullopt : std::optional<uint8_t>(5));
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

  // Sends `csr` from the SGW and answers it at the PGW with `cause`; returns
  // what reached the SGW.
  std::vector<Sent> createAnswered(const std::vector<uint8_t>& csr, uint8_t cause) {
    auto out = feed(csr, net::Address::v4(kSgw, kPort));
    EXPECT_EQ(out.size(), 1u);
    if (out.size() != 1) return {};
    Message to_pgw = decode(out[0].bytes);
    return feed(createSessionResponse(readFirst<FTeid>(to_pgw, 0)->teid, to_pgw.header().sequence_number, cause,
                                      0x2222, out[0].to.ipv4()),
                out[0].to);
  }

  std::vector<uint8_t> deleteBearerAfterARestart(const std::string& imsi_base);

  WorkerLayout layout_;
  std::vector<uint64_t> memory_;
  WorkerShmHeader* header_;
  SessionTable sessions_;
  TransactionTable transactions_;
  std::unique_ptr<config::RoutingTable> routing_;
  std::unique_ptr<config::RoutingTable> next_routing_;  // the one replaced, kept alive
  std::unique_ptr<forwarder::GatewayTableShm> forwarder_;
  RecordingEgress egress_;
  std::unique_ptr<Proxy> proxy_;
};

}  // namespace gtpcp::worker::test
