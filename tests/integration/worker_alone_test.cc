// gtpcp-worker on its own, fed from its rings by the test playing the
// forwarder: no socket anywhere. The test lays out the worker's rings, its
// doorbell, the control segment and the forwarder's segment (marked asleep,
// so that the worker knocks on the forwarder's bell socket, which the test
// holds), pushes
// the SGW's and the PGW's messages of one session's life into the rings and
// reads the translated ones from the egress ring.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/config/instance.h"
#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "common/group/meta.h"
#include "common/group/rings.h"
#include "common/partition.h"
#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/group/forwarder_shm.h"
#include "common/group/gateway_table_shm.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tools/peer/messages.h"
#include "common/group/worker_shm.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using gtp::v2::MessageType;
using testing::TestGroup;

constexpr unsigned kWorkers = 2;
constexpr unsigned kIndex = 0;

struct Record {
  ring::DatagramMeta meta{};
  Bytes bytes;
  Decoded decoded;
};

// The forwarder's side of worker 0: producer of its ingress rings, consumer
// of its egress ring, owner of the doorbell socket the worker knocks on.
class FakeForwarder {
 public:
  bool open(const group::Paths& paths, const group::RingSizes& sizes, std::string& error) {
    auto fwd = ring::SharedSegment::createOrAttach(paths.forwarderSegment(), sizeof(forwarder::ForwarderShm),
                                                   forwarder::kForwarderSegmentKind,
                                                   [](void* payload, std::size_t) -> ring::Result<void> {
                                                     new (payload) forwarder::ForwarderShm();
                                                     return {};
                                                   });
    // The worker owns its rings; the test makes them as it would, and the
    // control segment as gtpcp start does.
    auto control = group::createControl(paths.controlSegment());
    if (!control) {
      error = control.error().message;
      return false;
    }
    control_.emplace(std::move(*control));
    auto p = group::createRingSegment(paths.ring(kIndex, group::RingKind::kPriority), sizes.priority);
    auto n = group::createRingSegment(paths.ring(kIndex, group::RingKind::kNew), sizes.fresh);
    auto e = group::createRingSegment(paths.ring(kIndex, group::RingKind::kEgress), sizes.egress);
    auto b = group::createDoorbellSegment(paths.workerDoorbell(kIndex));
    for (const auto* r : {&fwd, &p, &n, &e, &b}) {
      if (!*r) {
        error = r->error().message;
        return false;
      }
    }
    fwd_.emplace(std::move(*fwd));
    priority_segment_.emplace(std::move(*p));
    new_segment_.emplace(std::move(*n));
    egress_segment_.emplace(std::move(*e));
    bell_segment_.emplace(std::move(*b));
    auto pp = ring::Producer::attach(priority_segment_->payload(), priority_segment_->payloadSize());
    auto np = ring::Producer::attach(new_segment_->payload(), new_segment_->payloadSize());
    auto ec = ring::Consumer::attach(egress_segment_->payload(), egress_segment_->payloadSize());
    if (!pp || !np || !ec) {
      error = "attaching the rings failed";
      return false;
    }
    priority_.emplace(std::move(*pp));
    fresh_.emplace(std::move(*np));
    egress_.emplace(std::move(*ec));
    bell_.emplace(static_cast<ring::DoorbellShm*>(bell_segment_->payload()));

    // Asleep for good: every egress batch of the worker comes with a knock.
    bell_socket_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strncpy(un.sun_path, paths.forwarderBellSocket().c_str(), sizeof un.sun_path - 1);
    ::unlink(un.sun_path);
    if (bind(bell_socket_, reinterpret_cast<sockaddr*>(&un), sizeof un) != 0) {
      error = "bind " + paths.forwarderBellSocket() + ": " + std::strerror(errno);
      return false;
    }
    shm().bell.sleeping.store(1, std::memory_order_seq_cst);
    return true;
  }
  ~FakeForwarder() {
    if (bell_socket_ >= 0) ::close(bell_socket_);
  }

  forwarder::ForwarderShm& shm() { return *static_cast<forwarder::ForwarderShm*>(fwd_->payload()); }

  // Pushes one datagram "received" from `from` into a ring and rings the
  // worker's doorbell, as the forwarder does after a batch.
  void push(bool fresh, const net::Address& from, uint8_t socket, const Bytes& bytes) {
    ring::DatagramMeta meta{};
    meta.receive_ns = 1;
    meta.local_socket = socket;
    group::setPeer(meta, from);
    ring::Producer& p = fresh ? *fresh_ : *priority_;
    ASSERT_TRUE(p.push(meta, bytes));
    p.publish();
    bell_->ring();
  }

  // The next record of the egress ring, waiting for the worker's knock.
  std::optional<Record> next(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto r = egress_->peek()) {
        Record out{*r->meta, Bytes(r->payload.begin(), r->payload.end()), {}};
        egress_->pop();
        egress_->release();
        out.decoded = decode(out.bytes);
        return out;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return std::nullopt;
      pollfd p{bell_socket_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) > 0) {
        uint8_t buf[64];
        while (recv(bell_socket_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
        }
      }
    }
  }
  bool egressEmpty() const { return egress_->empty(); }

 private:
  std::optional<ring::SharedSegment> control_, fwd_, priority_segment_, new_segment_, egress_segment_, bell_segment_;
  std::optional<ring::Producer> priority_, fresh_;
  std::optional<ring::Consumer> egress_;
  std::optional<ring::Doorbell> bell_;
  int bell_socket_ = -1;
};

bool sameIpv4(const ring::DatagramMeta& m, const gtp::Ipv4& a) {
  return m.peer_family == AF_INET && std::memcmp(m.peer_address, a.octets.data(), 4) == 0;
}

TEST_F(DataPathTest, WorkerAloneTranslatesOneSessionsLifeBetweenItsRings) {
  testing::GroupOptions o;
  o.workers = kWorkers;
  o.routing_yaml = onlyGateway(ip(21));
  TestGroup& g = makeGroup(o);
  std::filesystem::create_directories(g.runDir());
  auto config = config::loadInstanceConfig(g.configPath());
  ASSERT_TRUE(config) << config.error().toString();
  const group::Paths paths = group::pathsOf(*config);
  const group::SocketPlan plan = group::socketPlanOf(*config);
  const uint8_t access = plan.access_v4, gateway = plan.gateway_v4;

  FakeForwarder fwd;
  std::string error;
  ASSERT_TRUE(fwd.open(paths, group::ringSizesOf(*config), error)) << error;

  testing::Child worker =
      testing::Child::spawn({testing::binDir() + "/gtpcp-worker", "--config", g.configPath(), "--index",
                             std::to_string(kIndex)},
                            paths.logFile("worker-0"));
  std::optional<ring::SharedSegment> state;
  const worker::WorkerShmHeader* header = nullptr;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        if (!worker.running()) return false;
        if (!state) {
          auto s = ring::SharedSegment::attach(paths.workerSegment(kIndex), worker::kWorkerSegmentKind);
          if (!s) return false;
          state.emplace(std::move(*s));
          header = static_cast<const worker::WorkerShmHeader*>(state->payload());
        }
        return header->status.state.load(std::memory_order_acquire) ==
               static_cast<uint32_t>(group::ProcessState::kServing);
      },
      10s))
      << "gtpcp-worker --index 0 is not serving";

  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost), sgw_addr = net_.addr(11), pgw_addr = net_.addr(21);
  const net::Address sgw = net::Address::v4(sgw_addr, 2123);
  const net::Address pgw_ephemeral = net::Address::v4(pgw_addr, 40123);  // PGWs may answer from another port
  const uint64_t imsi = imsisOfWorker(1010000000100ull, 1, kIndex, kWorkers)[0];
  const uint32_t sgw_teid = 0xa1, pgw_teid = 0x5001;
  const uint32_t sgw_up_teid = peer::userPlaneTeid(peer::PlaneSide::kSgw, imsi, peer::fromIpv4(sgw_addr));

  // Checks a translated request toward the PGW; returns the proxy's sequence number.
  auto towardPgw = [&](const Record& r, MessageType type, uint32_t header_teid) {
    EXPECT_TRUE(sameIpv4(r.meta, pgw_addr)) << "sent to " << group::peerOf(r.meta).toString();
    EXPECT_EQ(r.meta.peer_port, 2123) << "requests go to the PGW's GTP-C port";
    EXPECT_EQ(r.meta.local_socket, gateway);
    EXPECT_EQ(r.decoded.type, static_cast<uint8_t>(type)) << r.decoded.describe();
    EXPECT_EQ(r.decoded.teid, header_teid) << r.decoded.describe();
    EXPECT_EQ(r.decoded.sequence % kWorkers, kIndex) << "the proxy's sequence numbers name their worker";
    return r.decoded.sequence;
  };
  // Checks a translated response toward the SGW.
  auto towardSgw = [&](const Record& r, MessageType type, uint32_t sequence) {
    EXPECT_TRUE(sameIpv4(r.meta, sgw_addr)) << "sent to " << group::peerOf(r.meta).toString();
    EXPECT_EQ(r.meta.peer_port, 2123) << "to the port the request came from";
    EXPECT_EQ(r.meta.local_socket, access);
    EXPECT_EQ(r.decoded.type, static_cast<uint8_t>(type)) << r.decoded.describe();
    EXPECT_EQ(r.decoded.teid, sgw_teid) << r.decoded.describe();
    EXPECT_EQ(r.decoded.sequence, sequence) << r.decoded.describe();
    EXPECT_EQ(r.decoded.cause, std::optional<uint8_t>(kCauseAccepted)) << r.decoded.describe();
  };

  // 1. Create Session Request on the new ring -> toward the routing's PGW,
  // the sender F-TEID now the proxy's, the user plane untouched.
  fwd.push(true, sgw, access, createSessionRequest(0x001234, imsi, sgw_addr, sgw_teid));
  auto r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Create Session Request";
  ASSERT_TRUE(r->decoded.ok) << r->decoded.describe();
  const uint32_t create_seq = towardPgw(*r, MessageType::kCreateSessionRequest, 0);
  auto sender = r->decoded.fteid(kIfSgwGtpC);
  ASSERT_TRUE(sender && sender->ipv4) << r->decoded.describe();
  EXPECT_EQ(*sender->ipv4, proxy_addr) << r->decoded.describe();
  const uint32_t proxy_gateway_teid = sender->teid;
  EXPECT_NE(proxy_gateway_teid, 0u);
  EXPECT_NE(proxy_gateway_teid, sgw_teid);
  EXPECT_EQ(workerOf(partitionOf(proxy_gateway_teid), kWorkers), kIndex);
  auto up = r->decoded.fteid(kIfSgwGtpU);
  ASSERT_TRUE(up && up->ipv4) << r->decoded.describe();
  EXPECT_EQ(*up->ipv4, sgw_addr);
  EXPECT_EQ(up->teid, sgw_up_teid);
  EXPECT_EQ(r->decoded.imsi, std::optional<uint64_t>(imsi));

  // 2. The PGW's Create Session Response on the priority ring -> toward the
  // SGW with its TEID and sequence number, the PGW's F-TEID now the proxy's.
  fwd.push(false, pgw_ephemeral, gateway,
           createSessionResponse(create_seq, proxy_gateway_teid, pgw_addr, pgw_teid, imsi));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Create Session Response";
  towardSgw(*r, MessageType::kCreateSessionResponse, 0x001234);
  auto pgw_c = r->decoded.fteid(kIfPgwGtpC);
  ASSERT_TRUE(pgw_c && pgw_c->ipv4) << r->decoded.describe();
  EXPECT_EQ(*pgw_c->ipv4, proxy_addr);
  const uint32_t proxy_access_teid = pgw_c->teid;
  EXPECT_NE(proxy_access_teid, pgw_teid);
  EXPECT_NE(proxy_access_teid, proxy_gateway_teid);
  EXPECT_EQ(workerOf(partitionOf(proxy_access_teid), kWorkers), kIndex);
  auto pgw_u = r->decoded.fteid(kIfPgwGtpU);
  ASSERT_TRUE(pgw_u && pgw_u->ipv4) << r->decoded.describe();
  EXPECT_EQ(*pgw_u->ipv4, pgw_addr) << "the user plane F-TEID was rewritten";

  // 3. Modify Bearer, both ways.
  fwd.push(false, sgw, access, modifyBearerRequest(0x001235, proxy_access_teid, imsi, sgw_addr, 1));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Modify Bearer Request";
  const uint32_t modify_seq = towardPgw(*r, MessageType::kModifyBearerRequest, pgw_teid);
  EXPECT_NE(modify_seq, create_seq);
  fwd.push(false, pgw_ephemeral, gateway, modifyBearerResponse(modify_seq, proxy_gateway_teid));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Modify Bearer Response";
  towardSgw(*r, MessageType::kModifyBearerResponse, 0x001235);

  // 4. Delete Session, both ways.
  fwd.push(false, sgw, access, deleteSessionRequest(0x001236, proxy_access_teid));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Delete Session Request";
  const uint32_t delete_seq = towardPgw(*r, MessageType::kDeleteSessionRequest, pgw_teid);
  fwd.push(false, pgw_ephemeral, gateway, deleteSessionResponse(delete_seq, proxy_gateway_teid));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "nothing on the egress ring after the Delete Session Response";
  towardSgw(*r, MessageType::kDeleteSessionResponse, 0x001236);

  // 5. The session is gone: a late Modify Bearer Request gets Context Not Found.
  fwd.push(false, sgw, access, modifyBearerRequest(0x001237, proxy_access_teid, imsi, sgw_addr, 2));
  r = fwd.next(5s);
  ASSERT_TRUE(r) << "no answer to a request for the deleted session";
  EXPECT_TRUE(sameIpv4(r->meta, sgw_addr));
  EXPECT_EQ(r->decoded.type, static_cast<uint8_t>(MessageType::kModifyBearerResponse)) << r->decoded.describe();
  EXPECT_EQ(r->decoded.cause, std::optional<uint8_t>(kCauseContextNotFound)) << r->decoded.describe();
  EXPECT_EQ(r->decoded.sequence, 0x001237u);
  EXPECT_TRUE(fwd.egressEmpty());

  // 6. The worker's counters, as `gtpcp status --json` reads them from its
  // segment.
  const nlohmann::json s = g.status();
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  const nlohmann::json w = TestGroup::process(s, "worker-0");
  ASSERT_TRUE(w.contains("counters"));
  const auto& c = w.at("counters");
  EXPECT_EQ(w.value("sessions", 1ull), 0u);
  EXPECT_EQ(c.value("worker.datagrams_received", 0ull), 7u);
  EXPECT_EQ(c.value("worker.datagrams_sent", 0ull), 7u);
  EXPECT_EQ(c.value("worker.sessions_created", 0ull), 1u);
  EXPECT_EQ(c.value("worker.sessions_deleted", 0ull), 1u);
  EXPECT_EQ(c.value("worker.transactions_started", 0ull), 3u);
  EXPECT_EQ(c.value("worker.transactions_completed", 0ull), 3u);
  EXPECT_EQ(c.value("worker.context_not_found", 0ull), 1u);
  EXPECT_EQ(c.value("worker.egress_full_dropped", 1ull), 0u);
  EXPECT_EQ(header->counters.sessions_created.load(), 1u);

  EXPECT_EQ(worker.stop(5s), 0) << "gtpcp-worker did not exit cleanly on SIGTERM";
  EXPECT_EQ(header->status.state.load(), static_cast<uint32_t>(group::ProcessState::kStopped));
  // The forwarder's gateway table is the forwarder's to make (common/group/
  // segments.h): a worker without a forwarder made none.
  EXPECT_FALSE(ring::SharedSegment::attach(paths.gatewayTableSegment(), forwarder::kGatewayTableSegmentKind));
}

}  // namespace
}  // namespace gtpcp::integration
