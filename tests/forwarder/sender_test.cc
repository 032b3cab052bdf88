// The forwarder's send side (forwarder/lib/sender.h) with real UDP sockets on
// loopback, an in-memory egress ring and a fake clock: what the proxy adds to
// a relayed datagram (proxy_latency, one observation per datagram whose
// record carries a receive time, by version, none for 0), its own answers
// measured the same way, one clock read per send batch, and the egress ring's
// depth gauge and high-water mark.
#include "forwarder/lib/sender.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "common/group/meta.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v2/builder.h"
#include "common/ring/ring.h"
#include "tests/support/udp.h"

namespace gtpcp::forwarder {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kSlots = ring::kMinCapacitySlots;
constexpr gtp::Ipv4 kLoopback{{127, 0, 0, 1}};

// The fake clock: what it says, and how often it was read.
uint64_t g_now = 0;
unsigned g_reads = 0;
uint64_t fakeNow() noexcept {
  ++g_reads;
  return g_now;
}

std::vector<uint8_t> v2Message(gtp::v2::MessageType type, uint32_t seq) {
  std::vector<uint8_t> buf(64);
  gtp::v2::Builder b(buf);
  b.begin(type, 0x1234, seq);
  buf.resize(b.finish()->size());
  return buf;
}

std::vector<uint8_t> v1Message(gtp::v1::MessageType type, uint16_t seq) {
  std::vector<uint8_t> buf(64);
  gtp::v1::Builder b(buf);
  b.begin(type, 0x1234, seq);
  buf.resize(b.finish()->size());
  return buf;
}

// The bucket of kLatencyBoundsNs an observation of `ns` lands in.
std::size_t bucketOf(uint64_t ns) {
  std::size_t i = 0;
  while (i < std::size(metrics::kLatencyBoundsNs) && ns > metrics::kLatencyBoundsNs[i]) ++i;
  return i;
}

class SenderTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kBatch = 8;

  SenderTest()
      : shm_(std::make_unique<ForwarderShm>()),
        memory_(static_cast<uint8_t*>(std::aligned_alloc(64, ring::ringBytes(kSlots)))),
        fds_{forwarder_.fd()},
        sender_(fds_, kBatch, *shm_, &fakeNow) {
    std::memset(memory_.get(), 0, ring::ringBytes(kSlots));
    EXPECT_TRUE(ring::initRing(memory_.get(), ring::ringBytes(kSlots), kSlots));
    producer_.emplace(std::move(*ring::Producer::attach(memory_.get(), ring::ringBytes(kSlots))));
    consumer_.emplace(std::move(*ring::Consumer::attach(memory_.get(), ring::ringBytes(kSlots))));
    g_now = 10'000'000'000;
    g_reads = 0;
  }

  // A worker's egress record for the peer socket, published.
  void push(const std::vector<uint8_t>& bytes, uint64_t receive_ns, const net::Address& to) {
    ring::DatagramMeta meta{};
    meta.receive_ns = receive_ns;
    meta.local_socket = 0;
    group::setPeer(meta, to);
    ASSERT_TRUE(producer_->push(meta, bytes));
    producer_->publish();
  }
  void push(const std::vector<uint8_t>& bytes, uint64_t receive_ns) { push(bytes, receive_ns, peerAddress()); }

  net::Address peerAddress() const { return net::Address::v4(kLoopback, peer_.port()); }

  // Datagrams the peer received, waiting a little for each.
  std::size_t received(std::size_t expected) {
    std::size_t n = 0;
    while (n < expected && peer_.receive(2s)) ++n;
    return n + (peer_.receive(0ms) ? 1 : 0);
  }

  std::size_t drain(std::size_t max = 4 * kBatch) { return drainEgressRing(*consumer_, 3, max, sender_, *shm_); }

  const metrics::Histogram& v1() const { return shm_->proxy_latency[0]; }
  const metrics::Histogram& v2() const { return shm_->proxy_latency[1]; }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  testing::UdpSocket forwarder_{kLoopback, 0};
  testing::UdpSocket peer_{kLoopback, 0};
  std::unique_ptr<ForwarderShm> shm_;
  std::unique_ptr<uint8_t, Free> memory_;
  std::optional<ring::Producer> producer_;
  std::optional<ring::Consumer> consumer_;
  std::vector<int> fds_;
  Sender sender_;
};

TEST_F(SenderTest, EachRelayedDatagramWithAReceiveTimeIsObservedInItsVersion) {
  // Three GTPv2 records received 30 µs before the send, two GTPv1 ones 2 ms
  // before, and two the worker made itself (receive_ns 0).
  for (uint32_t i = 0; i < 3; ++i) push(v2Message(gtp::v2::MessageType::kModifyBearerResponse, i), g_now - 30'000);
  for (uint16_t i = 0; i < 2; ++i)
    push(v1Message(gtp::v1::MessageType::kUpdatePdpContextResponse, i), g_now - 2'000'000);
  push(v2Message(gtp::v2::MessageType::kDeleteBearerRequest, 9), 0);
  push(v1Message(gtp::v1::MessageType::kDeletePdpContextRequest, 9), 0);

  EXPECT_EQ(drain(), 7u);
  EXPECT_EQ(received(7), 7u) << "all sent";
  EXPECT_EQ(shm_->counters.datagrams_sent.load(), 7u);
  EXPECT_EQ(v2().count(), 3u);
  EXPECT_EQ(v2().bucket(bucketOf(30'000)), 3u);
  EXPECT_EQ(v2().sumNs(), 90'000u);
  EXPECT_EQ(v1().count(), 2u);
  EXPECT_EQ(v1().bucket(bucketOf(2'000'000)), 2u);
  EXPECT_EQ(v1().sumNs(), 4'000'000u);
  EXPECT_EQ(g_reads, 1u) << "one clock read for the batch";
}

TEST_F(SenderTest, DatagramsWithoutAReceiveTimeAreNotObservedAndCostNoClockRead) {
  for (uint32_t i = 0; i < 5; ++i) push(v2Message(gtp::v2::MessageType::kEchoRequest, i), 0);
  EXPECT_EQ(drain(), 5u);
  EXPECT_EQ(received(5), 5u);
  EXPECT_EQ(v1().count() + v2().count(), 0u);
  EXPECT_EQ(g_reads, 0u);
}

TEST_F(SenderTest, OneClockReadPerSendBatch) {
  // 2.5 batches of one socket: three sendmmsg, three reads.
  for (uint32_t i = 0; i < 2 * kBatch + kBatch / 2; ++i)
    push(v2Message(gtp::v2::MessageType::kModifyBearerResponse, i), g_now - 100'000);
  EXPECT_EQ(drain(), 2 * kBatch + kBatch / 2);
  EXPECT_EQ(received(2 * kBatch + kBatch / 2), 2 * kBatch + kBatch / 2);
  EXPECT_EQ(v2().count(), 2 * kBatch + kBatch / 2);
  EXPECT_EQ(g_reads, 3u);
}

TEST_F(SenderTest, ADatagramTheKernelRefusesIsNotObserved) {
  push(v2Message(gtp::v2::MessageType::kModifyBearerResponse, 1), g_now - 50'000);
  // An IPv6 destination on an IPv4 socket: refused.
  push(v2Message(gtp::v2::MessageType::kModifyBearerResponse, 2), g_now - 50'000,
       net::Address::v6(gtp::Ipv6{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, 2123));
  push(v2Message(gtp::v2::MessageType::kModifyBearerResponse, 3), g_now - 50'000);
  EXPECT_EQ(drain(), 3u);
  EXPECT_EQ(received(2), 2u);
  EXPECT_EQ(shm_->counters.send_errors.load(), 1u);
  EXPECT_EQ(v2().count(), 2u);
}

TEST_F(SenderTest, TheForwardersOwnAnswersAreMeasuredFromTheirRequestsReception) {
  const auto echo = v2Message(gtp::v2::MessageType::kEchoResponse, 1);
  EXPECT_TRUE(sender_.reply(0, peerAddress(), echo, g_now - 15'000));
  EXPECT_TRUE(sender_.reply(0, peerAddress(), echo, 0));  // an Echo Request of the health checks
  const auto refusal = v1Message(gtp::v1::MessageType::kCreatePdpContextResponse, 2);
  EXPECT_TRUE(sender_.reply(0, peerAddress(), refusal, g_now - 700'000));
  sender_.flushAll();
  EXPECT_EQ(received(3), 3u);
  EXPECT_EQ(v2().count(), 1u);
  EXPECT_EQ(v2().sumNs(), 15'000u);
  EXPECT_EQ(v1().count(), 1u);
  EXPECT_EQ(v1().bucket(bucketOf(700'000)), 1u);
}

TEST_F(SenderTest, TheEgressHighWaterMarkKeepsTheDeepestBacklog) {
  const auto bytes = v2Message(gtp::v2::MessageType::kModifyBearerResponse, 1);
  const std::size_t slots = ring::recordSlots(bytes.size());
  for (uint32_t i = 0; i < 50; ++i) push(bytes, 0);
  // One drain of 10: the gauge says what is left, the mark what was there.
  EXPECT_EQ(drain(10), 10u);
  EXPECT_EQ(shm_->egress_depth[3].load(), 40 * slots);
  EXPECT_EQ(shm_->egress_high_water[3].load(), 50 * slots);
  while (drain() != 0) {
  }
  EXPECT_EQ(shm_->egress_depth[3].load(), 0u);
  push(bytes, 0);
  push(bytes, 0);
  EXPECT_EQ(drain(1), 1u);
  EXPECT_EQ(shm_->egress_depth[3].load(), slots);
  EXPECT_GT(shm_->egress_high_water[3].load(), shm_->egress_depth[3].load());
  EXPECT_EQ(shm_->egress_high_water[3].load(), 50 * slots);
  EXPECT_EQ(shm_->egress_high_water[0].load(), 0u) << "another worker's";
  EXPECT_EQ(received(51), 51u) << "one record is still on the ring";
}

}  // namespace
}  // namespace gtpcp::forwarder
