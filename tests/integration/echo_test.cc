// What the forwarder answers itself, seen from a UDP socket of the test: Echo
// Requests of both GTP versions (with the group's Recovery), Version Not
// Supported for another GTP version, and silence (plus a counter) for what is
// not GTP-C at all.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <memory>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using testing::TestGroup;
using testing::UdpSocket;

constexpr uint8_t kGroupRecovery = 42;

TEST_F(DataPathTest, EchoIsAnsweredWithTheGroupRecoveryAndOtherVersionsAndGarbageAreHandled) {
  testing::GroupOptions o;
  o.workers = 2;
  o.recovery = kGroupRecovery;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost);
  UdpSocket sock(net_.addr(30), 0);  // a stranger's ephemeral port

  // Every answer comes from the proxy's GTP-C socket, to the port asking.
  auto answer = [&](const char* what) -> std::optional<testing::Received> {
    auto r = sock.receive(3s);
    EXPECT_TRUE(r.has_value()) << "no answer to " << what;
    if (r) {
      EXPECT_EQ(testing::toString(r->from), proxy()) << what;
      EXPECT_EQ(r->port, 2123) << what;
    }
    return r;
  };

  // GTPv2 Echo Request: Echo Response, same sequence number, group Recovery.
  const uint32_t v2_sequence = 0x123456;
  ASSERT_TRUE(sock.sendTo(proxy_addr, 2123, echoRequest(v2_sequence, 7)));
  auto r = answer("the GTPv2 Echo Request");
  ASSERT_TRUE(r);
  Decoded d = decode(r->bytes);
  ASSERT_TRUE(d.ok) << d.describe();
  EXPECT_EQ(d.type, static_cast<uint8_t>(gtp::v2::MessageType::kEchoResponse)) << d.describe();
  EXPECT_FALSE(d.teid_present) << "Echo carries no TEID (T=0)";
  EXPECT_EQ(d.sequence, v2_sequence);
  EXPECT_EQ(d.recovery, std::optional<uint8_t>(kGroupRecovery)) << d.describe();

  // GTPv1 Echo Request: the same, in GTPv1.
  const uint16_t v1_sequence = 0xbeef;
  std::array<uint8_t, 64> buffer{};
  gtp::v1::Builder v1b(buffer);
  v1b.begin(gtp::v1::MessageType::kEchoRequest, 0, v1_sequence);
  v1b.add(gtp::v1::Recovery{3});
  auto v1_request = v1b.finish();
  ASSERT_TRUE(v1_request);
  ASSERT_TRUE(sock.sendTo(proxy_addr, 2123, *v1_request));
  r = answer("the GTPv1 Echo Request");
  ASSERT_TRUE(r);
  {
    auto m = std::make_unique<gtp::v1::Message>();
    ASSERT_TRUE(m->decode(r->bytes)) << "the GTPv1 Echo Response does not decode";
    EXPECT_EQ(m->header().version(), 1);
    EXPECT_EQ(m->messageType(), gtp::v1::MessageType::kEchoResponse);
    EXPECT_TRUE(m->header().hasSequenceNumber());
    EXPECT_EQ(m->header().sequence_number, v1_sequence);
    auto recovery = gtp::v1::readNth<gtp::v1::Recovery>(*m);
    ASSERT_TRUE(recovery) << "no Recovery IE in the GTPv1 Echo Response";
    EXPECT_EQ(recovery->value, kGroupRecovery);
  }

  // GTP version 3: Version Not Supported Indication.
  const std::array<uint8_t, 12> v3{0x68, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00};
  ASSERT_TRUE(sock.sendTo(proxy_addr, 2123, v3));
  r = answer("the GTP version 3 datagram");
  ASSERT_TRUE(r);
  d = decode(r->bytes);
  ASSERT_TRUE(d.ok) << d.describe();
  EXPECT_EQ(d.type, static_cast<uint8_t>(gtp::v2::MessageType::kVersionNotSupportedIndication)) << d.describe();

  // Not GTP-C: nothing comes back, each is counted. The Echo after them is
  // answered first, so nothing was sent for them (one socket, in order).
  const std::vector<std::vector<uint8_t>> garbage{
      {},                                                                      // empty
      {0x48, 0x01, 0x00},                                                      // GTPv2, shorter than a header
      {0x48, 0x20, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00},  // length past the datagram
      {0x61, 0x02, 0x03},                                                      // "version 3", too short for GTP
  };
  for (const auto& bytes : garbage) ASSERT_TRUE(sock.sendTo(proxy_addr, 2123, bytes));
  const uint32_t last_sequence = 0x000777;
  ASSERT_TRUE(sock.sendTo(proxy_addr, 2123, echoRequest(last_sequence, 7)));
  r = answer("the Echo Request sent after the garbage");
  ASSERT_TRUE(r);
  d = decode(r->bytes);
  EXPECT_EQ(d.type, static_cast<uint8_t>(gtp::v2::MessageType::kEchoResponse))
      << "the first datagram back after the garbage is not the Echo Response: " << d.describe();
  EXPECT_EQ(d.sequence, last_sequence);

  // The counters, as `gtpcp status` shows them.
  nlohmann::json s;
  const bool settled = testing::waitUntil(
      [&] {
        s = g.status();
        return s.at("counters").value("forwarder.datagrams_sent", 0ull) == 4;
      },
      3s, 10ms);
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  EXPECT_TRUE(settled);
  const auto& c = s.at("counters");
  EXPECT_EQ(c.value("forwarder.datagrams_received", 0ull), 4u + garbage.size());
  EXPECT_EQ(c.value("forwarder.echo_answered", 0ull), 3u);
  EXPECT_EQ(c.value("forwarder.version_not_supported_sent", 0ull), 1u);
  EXPECT_EQ(c.value("forwarder.dropped_not_gtp", 0ull), garbage.size());
  EXPECT_EQ(c.value("forwarder.datagrams_to_new_ring", 0ull), 0u);
  EXPECT_EQ(c.value("forwarder.datagrams_to_priority_ring", 0ull), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.datagrams_received"), 0u) << "Echo never reaches a worker";
}

}  // namespace
}  // namespace gtpcp::integration
