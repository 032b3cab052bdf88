// The emulated nodes on IPv6 and on mixed families, engines wired in memory
// (engine_harness.h): a node sends only to addresses of its own family, its
// F-TEIDs carry its own family, and the checks of what a proxy did look for
// the proxy's address in the family of each leg.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/peer/engine_harness.h"
#include "tests/peer/proxy_messages.h"

namespace gtpcp::peer {
namespace {

using gtp::v2::MessageType;
using testing::Addresses;
using testing::Harness;
using testing::kMs;
using testing::proxiedCreateSessionResponse;
using testing::Sent;
using testing::ula;

// The families of the F-TEIDs in `bytes`, control and user plane alike.
struct FTeidFamilies {
  int v4 = 0, v6 = 0;
};
FTeidFamilies fteidFamilies(const std::vector<uint8_t>& bytes) {
  gtp::v2::Message m;
  EXPECT_TRUE(m.decode(bytes));
  FTeidFamilies f;
  for (const auto& ie : m.ies()) {
    if (ie.ieType() != gtp::v2::IeType::kFTeid) continue;
    auto t = gtp::v2::read<gtp::v2::FTeid>(m, ie);
    EXPECT_TRUE(t);
    if (t && t->ipv4) ++f.v4;
    if (t && t->ipv6) ++f.v6;
  }
  return f;
}

// Runs the lifecycle of every subscriber of `h`, calling `look` on each
// datagram before it is delivered.
void runLifecycle(Harness& h, const std::function<void(const Sent&)>& look) {
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  int64_t now = 0;
  for (int turn = 0; turn < 1000 && !h.sgw->phaseExhausted(); ++turn) {
    h.sgw->issue(3, now);
    while (!h.out.sent.empty()) {
      const Sent d = std::move(h.out.sent.front());
      h.out.sent.pop_front();
      look(d);
      h.deliver(d, now);
    }
    now += kMs;
  }
  EXPECT_TRUE(h.sgw->phaseExhausted());
}

void expectCleanLifecycles(const Harness& h, uint64_t subscribers) {
  const auto& s = h.sgw_stats;
  EXPECT_EQ(s.sessions_created, subscribers);
  EXPECT_EQ(s.sessions_deleted, subscribers);
  EXPECT_EQ(s.completed[static_cast<std::size_t>(Txn::kModify)], 2 * subscribers);
  EXPECT_EQ(s.internal_errors, 0u);
  EXPECT_EQ(h.pgw_stats[0].sessions_created, subscribers);
  EXPECT_EQ(h.pgw_stats[0].internal_errors, 0u);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.malformed.total, 0u);
}

TEST(Families, Ipv6OnBothSidesThroughARelay) {
  const Addresses at{ula(1), ula(11), ula(2), ula(21)};
  Harness h(20, 2, /*sgw_relay_mode=*/true, 0, false, {}, at);
  uint64_t from_sgws = 0, from_pgw = 0;
  runLifecycle(h, [&](const Sent& d) {
    const FTeidFamilies f = fteidFamilies(d.bytes);
    EXPECT_EQ(f.v4, 0);
    if (d.socket < 2) {
      ++from_sgws;
      EXPECT_EQ(d.to, (Endpoint{ula(1), kGtpcPort}));
    } else {
      ++from_pgw;
      EXPECT_EQ(d.to.addr, ula(2));
    }
  });
  EXPECT_EQ(from_sgws, 80u);
  EXPECT_EQ(from_pgw, 80u);
  expectCleanLifecycles(h, 20);
  ASSERT_EQ(h.sgw_stats.split.size, 1u);
  EXPECT_EQ(h.sgw_stats.split.addr[0], ula(21));
}

TEST(Families, Ipv6SgwsAndAnIpv4PgwThroughARelay) {
  const Addresses at{ula(1), ula(11), testing::kProxy, testing::kPgw0};
  Harness h(10, 2, true, 0, false, {}, at);
  runLifecycle(h, [&](const Sent& d) {
    const FTeidFamilies f = fteidFamilies(d.bytes);
    gtp::v2::Message m;
    ASSERT_TRUE(m.decode(d.bytes));
    if (d.socket < 2) {
      EXPECT_EQ(d.to, (Endpoint{ula(1), kGtpcPort}));
      EXPECT_EQ(f.v4, 0);
      if (m.messageType() == MessageType::kCreateSessionRequest) {
        EXPECT_EQ(f.v6, 2);
      }
    } else {
      EXPECT_TRUE(d.to.addr.isV4());
      EXPECT_EQ(f.v6, 0);
      if (m.messageType() == MessageType::kCreateSessionResponse) {
        EXPECT_EQ(f.v4, 2);
      }
    }
  });
  expectCleanLifecycles(h, 10);
  ASSERT_EQ(h.sgw_stats.split.size, 1u);
  EXPECT_EQ(h.sgw_stats.split.addr[0], IpAddress(testing::kPgw0));
}

// The test plays an IPv6 proxy in front of one SGW node.
class Ipv6SgwBehindAProxy : public ::testing::Test {
 protected:
  // The request the SGW just sent; checks it went to the proxy from node 0.
  gtp::v2::Message takeRequest(Harness& h, MessageType type) {
    EXPECT_EQ(h.out.sent.size(), 1u);
    gtp::v2::Message m;
    if (h.out.sent.empty()) return m;
    request_ = std::move(h.out.sent.front());
    h.out.sent.clear();
    EXPECT_EQ(request_.socket, 0u);
    EXPECT_EQ(request_.to, proxy_);
    EXPECT_TRUE(m.decode(request_.bytes));
    EXPECT_EQ(m.messageType(), type);
    return m;
  }
  // Attaches the next subscriber: its Create Session Response's control
  // F-TEID names `control`.
  void attach(Harness& h, const IpAddress& control, uint32_t proxy_teid) {
    h.sgw->issue(1, now_);
    const auto m = takeRequest(h, MessageType::kCreateSessionRequest);
    auto v = viewCreateSessionRequest(m);
    ASSERT_TRUE(v && v->sender && v->imsi);
    h.sgw->onDatagram(0, proxy_,
                      proxiedCreateSessionResponse(m.header().sequence_number, v->sender->teid,
                                                   control, proxy_teid, ula(21), *v->imsi),
                      now_);
    now_ += kMs;
  }

  Endpoint proxy_{ula(1), kGtpcPort};
  Sent request_;
  int64_t now_ = 0;
};

TEST_F(Ipv6SgwBehindAProxy, LaterRequestsGoToTheProxysIpv6Address) {
  const Addresses at{ula(1), ula(11), ula(2), ula(21)};
  Harness h(
      1, 1, /*sgw_relay_mode=*/false, 0, false, [](SgwConfig& c) { c.allow_non_loopback = true; },
      at);
  h.sgw->setPhase(AccessPhase::kAttach, false);
  attach(h, ula(1), 0x5001);
  EXPECT_EQ(h.sgw->sessionsUp(), 1u);
  EXPECT_EQ(h.mismatches.total, 0u);

  h.sgw->setPhase(AccessPhase::kModify, true);
  h.sgw->issue(1, now_);
  const auto m = takeRequest(h, MessageType::kModifyBearerRequest);
  EXPECT_EQ(m.header().teid, 0x5001u);
  EXPECT_EQ(fteidFamilies(request_.bytes).v4, 0);
}

TEST_F(Ipv6SgwBehindAProxy, TheProxysAddressOfTheOtherFamilyIsAMismatchAndEndsTheSession) {
  const Addresses at{ula(1), ula(11), ula(2), ula(21)};
  Harness h(
      1, 1, false, 0, false, [](SgwConfig& c) { c.allow_non_loopback = true; }, at);
  h.sgw->setPhase(AccessPhase::kAttach, false);
  attach(h, IpAddress(testing::kProxy), 0x5001);  // 127.0.0.1: no way there from an IPv6 node
  EXPECT_EQ(h.mismatches[Mismatch::kSgwPgwFteidNotProxy], 1u);
  EXPECT_EQ(h.mismatches.total, 1u);
  EXPECT_EQ(h.sgw_stats.sessions_created, 1u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  h.sgw->setPhase(AccessPhase::kModify, true);
  h.sgw->issue(1, now_);
  EXPECT_TRUE(h.out.sent.empty());
}

TEST_F(Ipv6SgwBehindAProxy, NoRequestLeavesForANonLoopbackAddressUnlessAllowed) {
  // The proxy on ::1; its F-TEID names fd00::1 instead.
  const IpAddress loopback = IpAddress::ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  const Addresses at{loopback, ula(11), ula(2), ula(21)};
  Harness h(1, 1, false, 0, false, {}, at);
  proxy_ = Endpoint{loopback, kGtpcPort};
  h.sgw->setPhase(AccessPhase::kAttach, false);
  attach(h, ula(1), 0x5001);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwPgwFteidNotProxy], 1u);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwUnsafeDestination], 1u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  h.sgw->setPhase(AccessPhase::kModify, true);
  h.sgw->issue(1, now_);
  EXPECT_TRUE(h.out.sent.empty());
}

}  // namespace
}  // namespace gtpcp::peer
