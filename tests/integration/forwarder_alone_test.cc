// gtpcp-forwarder on its own: the test plays both workers at the other end
// of the rings (consumer of their priority and new rings, producer of their
// egress rings, sleeping on their doorbells) and the peers on UDP sockets. It
// checks where each kind of datagram lands, with which metadata, that egress
// records leave from the forwarder's socket to the address they name, that
// Echo never touches a ring, and that the counters say the same.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "common/group/control_shm.h"
#include "common/group/meta.h"
#include "common/group/rings.h"
#include "common/partition.h"
#include "common/ring/bell.h"
#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/group/forwarder_shm.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using testing::TestGroup;
using testing::UdpSocket;

constexpr unsigned kWorkers = 2;

struct Record {
  ring::DatagramMeta meta{};
  Bytes bytes;
};

// The worker's side of one worker's rings.
struct FakeWorker {
  std::optional<ring::SharedSegment> priority_segment, new_segment, egress_segment, bell_segment;
  std::optional<ring::Consumer> priority, fresh;
  std::optional<ring::Producer> egress;
  std::optional<ring::Doorbell> bell;

  // The next record of `ring`, sleeping on the doorbell until one comes.
  std::optional<Record> next(ring::Consumer& ring, std::chrono::milliseconds timeout) {
    bell->wait([&] { return !ring.empty(); }, timeout);
    auto r = ring.peek();
    if (!r) return std::nullopt;
    Record out{*r->meta, Bytes(r->payload.begin(), r->payload.end())};
    ring.pop();
    ring.release();
    return out;
  }
};

std::string peerText(const ring::DatagramMeta& m) {
  return group::peerOf(m).toString() + " socket " + std::to_string(m.local_socket);
}

TEST_F(DataPathTest, ForwarderAloneRoutesEachDatagramToTheRightRingAndSendsEgressRecords) {
  testing::GroupOptions o;
  o.workers = kWorkers;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = makeGroup(o);
  std::filesystem::create_directories(g.runDir());
  auto config = config::loadInstanceConfig(g.configPath());
  ASSERT_TRUE(config) << config.error().toString();
  const group::Paths paths = group::pathsOf(*config);
  const group::RingSizes sizes = group::ringSizesOf(*config);
  const group::SocketPlan plan = group::socketPlanOf(*config);
  ASSERT_EQ(plan.sockets.size(), 1u);  // access and gateway share one address
  const uint8_t socket = plan.access_v4;

  // What gtpcp start makes before any process: the control segment.
  auto control = group::createControl(paths.controlSegment());
  ASSERT_TRUE(control) << control.error().message;
  // The workers' ends, before the forwarder starts: the workers own their
  // rings (common/group/segments.h), so the test makes them as a worker does.
  FakeWorker workers[kWorkers];
  for (unsigned w = 0; w < kWorkers; ++w) {
    FakeWorker& f = workers[w];
    auto p = group::createRingSegment(paths.ring(w, group::RingKind::kPriority), sizes.priority);
    auto n = group::createRingSegment(paths.ring(w, group::RingKind::kNew), sizes.fresh);
    auto e = group::createRingSegment(paths.ring(w, group::RingKind::kEgress), sizes.egress);
    auto b = group::createDoorbellSegment(paths.workerDoorbell(w));
    ASSERT_TRUE(p && n && e && b);
    f.priority_segment.emplace(std::move(*p));
    f.new_segment.emplace(std::move(*n));
    f.egress_segment.emplace(std::move(*e));
    f.bell_segment.emplace(std::move(*b));
    auto pc = ring::Consumer::attach(f.priority_segment->payload(), f.priority_segment->payloadSize());
    auto nc = ring::Consumer::attach(f.new_segment->payload(), f.new_segment->payloadSize());
    auto ep = ring::Producer::attach(f.egress_segment->payload(), f.egress_segment->payloadSize());
    ASSERT_TRUE(pc && nc && ep);
    f.priority.emplace(std::move(*pc));
    f.fresh.emplace(std::move(*nc));
    f.egress.emplace(std::move(*ep));
    f.bell.emplace(static_cast<ring::DoorbellShm*>(f.bell_segment->payload()));
  }

  testing::Child forwarder = testing::Child::spawn(
      {testing::binDir() + "/gtpcp-forwarder", "--config", g.configPath()}, paths.logFile("forwarder"));
  std::optional<ring::SharedSegment> fwd_segment;
  const forwarder::ForwarderShm* fwd = nullptr;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        if (!forwarder.running()) return false;
        if (!fwd_segment) {
          auto s = ring::SharedSegment::attach(paths.forwarderSegment(), forwarder::kForwarderSegmentKind);
          if (!s) return false;
          fwd_segment.emplace(std::move(*s));
          fwd = static_cast<const forwarder::ForwarderShm*>(fwd_segment->payload());
        }
        return fwd->status.state.load(std::memory_order_acquire) ==
               static_cast<uint32_t>(group::ProcessState::kServing);
      },
      10s))
      << "gtpcp-forwarder is not serving";

  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost);
  UdpSocket sgw(net_.addr(11), 2123);
  UdpSocket pgw(net_.addr(21), 0);  // a PGW answering from an ephemeral port

  auto expectMeta = [&](const Record& r, const UdpSocket& from, const Bytes& sent, const std::string& what) {
    EXPECT_EQ(r.bytes, sent) << what << ": payload changed";
    EXPECT_EQ(r.meta.peer_family, AF_INET) << what;
    EXPECT_EQ(std::memcmp(r.meta.peer_address, from.address().octets.data(), 4), 0) << what << ": " << peerText(r.meta);
    EXPECT_EQ(r.meta.peer_port, from.port()) << what << ": " << peerText(r.meta);
    EXPECT_EQ(r.meta.local_socket, socket) << what;
    EXPECT_EQ(r.meta.length, sent.size()) << what;
    EXPECT_NE(r.meta.receive_ns, 0u) << what;
  };
  auto allEmpty = [&] {
    for (auto& f : workers) {
      if (!f.priority->empty() || !f.fresh->empty()) return false;
    }
    return true;
  };

  // 1. A Create Session Request lands on the new ring of the worker its IMSI
  // names, for each worker.
  std::size_t to_new = 0, to_priority = 0, received = 0;
  for (uint16_t w = 0; w < kWorkers; ++w) {
    const uint64_t imsi = imsisOfWorker(1010000000100ull, 1, w, kWorkers)[0];
    const Bytes csr = createSessionRequest(0x100 + w, imsi, sgw.address(), 0xabc0 + w);
    ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, csr));
    ++received;
    auto r = workers[w].next(*workers[w].fresh, 5s);
    ASSERT_TRUE(r) << "the Create Session Request for worker " << w << " is not on its new ring";
    expectMeta(*r, sgw, csr, "Create Session Request");
    ++to_new;
    EXPECT_TRUE(allEmpty()) << "the Create Session Request landed on another ring too";
  }

  // 2. A request carrying a TEID of the proxy lands on the priority ring of
  // the worker owning the TEID's partition.
  for (uint16_t w = 0; w < kWorkers; ++w) {
    const uint16_t partition = static_cast<uint16_t>(100 + w);  // p % 2 == w
    ASSERT_EQ(workerOf(partition, kWorkers), w);
    const uint32_t teid = (uint32_t{partition} << 22) | 0x1234;
    ASSERT_EQ(partitionOf(teid), partition);
    const Bytes mbr = modifyBearerRequest(0x200 + w, teid, 1010000000001ull, sgw.address());
    ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, mbr));
    ++received;
    auto r = workers[w].next(*workers[w].priority, 5s);
    ASSERT_TRUE(r) << "the Modify Bearer Request with TEID " << teid << " is not on worker " << w << "'s priority ring";
    expectMeta(*r, sgw, mbr, "Modify Bearer Request");
    ++to_priority;
    EXPECT_TRUE(allEmpty());
  }

  // 3. A response without a TEID (a rejected creation: header TEID 0) lands
  // by its sequence number, which the proxy chose so that seq % W names the
  // worker that sent the request; the command bit does not count.
  for (const uint32_t sequence : {0x000010u, 0x000011u, 0x800013u}) {
    const uint16_t w = static_cast<uint16_t>((sequence & 0x7fffff) % kWorkers);
    const Bytes response = createSessionResponse(sequence, 0, pgw.address(), 0, 0, kCauseNoResources);
    ASSERT_TRUE(pgw.sendTo(proxy_addr, 2123, response));
    ++received;
    auto r = workers[w].next(*workers[w].priority, 5s);
    ASSERT_TRUE(r) << "the response with sequence number " << sequence << " is not on worker " << w
                   << "'s priority ring";
    expectMeta(*r, pgw, response, "response without TEID");
    ++to_priority;
    EXPECT_TRUE(allEmpty());
  }

  // 4. Records on the egress rings leave the forwarder's socket for the
  // address and port they name.
  auto bell = ring::BellRinger::open(paths.forwarderBellSocket());
  ASSERT_TRUE(bell) << bell.error().message;
  // As a worker does: publish, then ring the forwarder's bell, which sends a
  // byte only when its flag says it sleeps.
  auto wakeForwarder = [&] { bell->ring(&fwd->bell); };
  struct Out {
    unsigned worker;
    UdpSocket* to;
    Bytes bytes;
  };
  const Out outs[] = {{1, &sgw, createSessionResponse(0x100, 0xabc1, net_.addr(21), 0x77, 1010000000001ull)},
                      {0, &pgw, modifyBearerRequest(0x300, 0x9999, 1010000000001ull, sgw.address())}};
  for (const Out& out : outs) {
    ring::DatagramMeta meta{};
    meta.local_socket = socket;
    group::setPeer(meta, net::Address::v4(out.to->address(), out.to->port()));
    ASSERT_TRUE(workers[out.worker].egress->push(meta, out.bytes));
    workers[out.worker].egress->publish();
    wakeForwarder();
    auto r = out.to->receive(5s);
    ASSERT_TRUE(r) << "the egress record of worker " << out.worker << " did not arrive";
    EXPECT_EQ(r->bytes, out.bytes);
    EXPECT_EQ(testing::toString(r->from), proxy());
    EXPECT_EQ(r->port, 2123);
  }

  // 5. Echo is answered by the forwarder, without a ring.
  ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, echoRequest(0x4242)));
  ++received;
  auto echo = sgw.receive(5s);
  ASSERT_TRUE(echo) << "no Echo Response";
  const Decoded d = decode(echo->bytes);
  EXPECT_EQ(d.type, static_cast<uint8_t>(gtp::v2::MessageType::kEchoResponse)) << d.describe();
  EXPECT_EQ(d.sequence, 0x4242u);
  EXPECT_TRUE(allEmpty()) << "Echo went to a worker";

  // 6. The counters agree, in the segment and in `gtpcp status --json`.
  const nlohmann::json s = g.status();
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  const auto& c = s.at("counters");
  EXPECT_EQ(c.value("forwarder.datagrams_received", 0ull), received);
  EXPECT_EQ(c.value("forwarder.datagrams_to_new_ring", 0ull), to_new);
  EXPECT_EQ(c.value("forwarder.datagrams_to_priority_ring", 0ull), to_priority);
  EXPECT_EQ(c.value("forwarder.datagrams_from_workers", 0ull), std::size(outs));
  EXPECT_EQ(c.value("forwarder.datagrams_sent", 0ull), std::size(outs) + 1);
  EXPECT_EQ(c.value("forwarder.echo_answered", 0ull), 1u);
  EXPECT_EQ(c.value("forwarder.rejected_overload", 1ull), 0u);
  EXPECT_EQ(c.value("forwarder.dropped_not_gtp", 1ull), 0u);
  EXPECT_EQ(fwd->counters.datagrams_received.load(), received);
  EXPECT_EQ(fwd->counters.to_new.load(), to_new);
  EXPECT_EQ(fwd->counters.to_priority.load(), to_priority);

  EXPECT_EQ(forwarder.stop(5s), 0) << "gtpcp-forwarder did not exit cleanly on SIGTERM";
  EXPECT_EQ(fwd->status.state.load(), static_cast<uint32_t>(group::ProcessState::kStopped));
}

// The workers own their rings: a forwarder started without them waits for
// them, then gives up naming the segment and its owner, and makes none.
TEST_F(DataPathTest, ForwarderWithoutItsWorkersFailsNamingTheirRings) {
  testing::GroupOptions o;
  o.workers = 1;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = makeGroup(o);
  std::filesystem::create_directories(g.runDir());
  auto config = config::loadInstanceConfig(g.configPath());
  ASSERT_TRUE(config) << config.error().toString();
  const group::Paths paths = group::pathsOf(*config);
  auto control = group::createControl(paths.controlSegment());
  ASSERT_TRUE(control) << control.error().message;
  auto out = testing::run({testing::binDir() + "/gtpcp-forwarder", "--config", g.configPath()}, 20s);
  ASSERT_TRUE(out) << "gtpcp-forwarder did not give up";
  EXPECT_NE(out->status, 0);
  const std::string log = testing::readFile(paths.logFile("forwarder")) + out->text;
  EXPECT_NE(log.find("shared memory " + paths.ring(0, group::RingKind::kPriority) +
                     " does not exist: it is made by gtpcp-worker --index 0"),
            std::string::npos)
      << log;
  EXPECT_FALSE(ring::SharedSegment::attach(paths.ring(0, group::RingKind::kPriority), group::kRingSegmentKind));
}

}  // namespace
}  // namespace gtpcp::integration
