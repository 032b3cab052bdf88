// A failover of the proxy group (tools/peer/failover.h) without processes:
// the routing of Failover before and after the switch, and an SGW engine
// behind a FailoverOutbox whose requests move to the new instance with their
// sessions, TEIDs and sequence numbers unchanged, including those to an
// address a control F-TEID named, and a request repeated by the new instance
// answered as a repeat. The options: config_test.cc.
#include "tools/peer/failover.h"

#include <gtest/gtest.h>

#include <memory>

#include "common/gtp/v2/message.h"
#include "tests/peer/engine_harness.h"
#include "tests/peer/proxy_messages.h"
#include "tools/peer/sgw.h"

namespace gtpcp::peer {
namespace {

using testing::FakeOutbox;
using testing::kMs;
using testing::kSgw0;
using testing::proxiedCreateSessionResponse;
using testing::ula;

constexpr uint32_t kOld = 0x7f4d0701;        // 127.77.7.1: instance A
constexpr uint32_t kNew = 0x7f4d0702;        // 127.77.7.2: instance B
constexpr uint32_t kElsewhere = 0x7f4d0703;  // an address a control F-TEID names

TEST(Failover, MovesOnlyTheProxysAddressesAndOnlyAfterTheSwitch) {
  FailoverConfig c;
  c.to_v4 = IpAddress(kNew);
  c.proxy = {kOld, ula(1)};
  Failover f(c);
  const Endpoint old_at{kOld, 2123};
  const Endpoint pgw{0x7f4d0715, 2123};
  EXPECT_EQ(f.route(old_at), old_at);
  EXPECT_FALSE(f.active());

  EXPECT_TRUE(f.activate(5 * kMs, Failover::Trigger::kSignal));
  EXPECT_FALSE(f.activate(6 * kMs, Failover::Trigger::kTimer));  // once
  EXPECT_EQ(f.trigger(), Failover::Trigger::kSignal);
  EXPECT_EQ(f.switchedAt(), 5 * kMs);
  EXPECT_EQ(f.route(old_at), (Endpoint{kNew, 2123}));
  EXPECT_EQ(f.route(Endpoint{kOld, 40001}), (Endpoint{kNew, 40001}));  // the port stays
  EXPECT_EQ(f.route(pgw), pgw);                                         // not the proxy's
  EXPECT_EQ(f.route(Endpoint{ula(1), 2123}), (Endpoint{ula(1), 2123}));  // no IPv6 target
  EXPECT_EQ(f.redirected(), 2u);

  // An address a control F-TEID named moves too; the new instance's own
  // address is not one to move.
  f.learn(kElsewhere);
  f.learn(kNew);
  EXPECT_EQ(f.route(Endpoint{kElsewhere, 2123}), (Endpoint{kNew, 2123}));
  EXPECT_EQ(f.route(Endpoint{kNew, 2123}), (Endpoint{kNew, 2123}));
  EXPECT_EQ(f.redirected(), 3u);
  EXPECT_EQ(f.addresses().size(), 3u);
  EXPECT_EQ(f.untracked(), 0u);
}

TEST(Failover, AddressesBeyondTheTableAreCounted) {
  FailoverConfig c;
  c.to_v4 = IpAddress(kNew);
  Failover f(c);
  for (uint32_t i = 0; i < Failover::kMaxAddresses + 3; ++i) f.learn(IpAddress(0x7f4e0000u + i));
  EXPECT_EQ(f.addresses().size(), Failover::kMaxAddresses);
  EXPECT_EQ(f.untracked(), 3u);
}

// The SGW engine as a proxy sees it, behind a FailoverOutbox: the test
// answers as the proxy.
class SgwFailover : public ::testing::Test {
 protected:
  SgwFailover() {
    FailoverConfig fc;
    fc.to_v4 = IpAddress(kNew);
    fc.proxy = {kOld};
    failover_ = std::make_unique<Failover>(fc);
    outbox_ = std::make_unique<FailoverOutbox>(out_, *failover_);
    SgwConfig s;
    s.nodes.push_back(SgwNodeConfig{kSgw0, 0, Endpoint{kOld, kGtpcPort}, IpAddress(kNew)});
    s.ids = testing::ids(3);
    s.modifies = 1;
    s.sequence_seed = 100;
    sgw_ = std::make_unique<SgwEngine>(s, *outbox_, stats_, mismatches_, malformed_);
  }
  // Sends the next request of the phase and returns it.
  testing::Sent next() {
    out_.sent.clear();
    EXPECT_EQ(sgw_->issue(1, now_), 1u);
    EXPECT_EQ(out_.sent.size(), 1u);
    testing::Sent d = out_.sent.empty() ? testing::Sent{} : out_.sent.front();
    out_.sent.clear();
    return d;
  }
  // Answers Create Session Request `d` with a control F-TEID naming `named`.
  void acceptCreation(const testing::Sent& d, const IpAddress& named, uint32_t index) {
    auto h = gtp::v2::decodeHeader(d.bytes);
    ASSERT_TRUE(h);
    sgw_->onDatagram(0, Endpoint{kNew, kGtpcPort},  // any source: none is checked
                     proxiedCreateSessionResponse(h->sequence_number, sgw_->sgwTeid(index), named,
                                                  0x5000 + index, testing::kPgw0,
                                                  1010000000001 + index),
                     now_);
  }

  FakeOutbox out_;
  std::unique_ptr<Failover> failover_;
  std::unique_ptr<FailoverOutbox> outbox_;
  SgwStats stats_;
  MismatchCounters mismatches_;
  MalformedCounters malformed_;
  std::unique_ptr<SgwEngine> sgw_;
  int64_t now_ = 0;
};

TEST_F(SgwFailover, RequestsMoveWithTheirSessionsAndSequenceNumbers) {
  sgw_->setPhase(AccessPhase::kAttach, false);
  // Subscriber 0 through A; subscriber 1 given a control F-TEID elsewhere
  // (a mismatch, but its requests go there, so they move too).
  auto csr0 = next();
  EXPECT_EQ(csr0.to, (Endpoint{kOld, kGtpcPort}));
  acceptCreation(csr0, kOld, 0);
  auto csr1 = next();
  acceptCreation(csr1, kElsewhere, 1);
  EXPECT_EQ(mismatches_.by_kind[static_cast<std::size_t>(Mismatch::kSgwPgwFteidNotProxy)], 1u);

  failover_->activate(now_, Failover::Trigger::kTimer);
  // Subscriber 2 attaches through B, whose F-TEID names B: as good as A's.
  auto csr2 = next();
  EXPECT_EQ(csr2.to, (Endpoint{kNew, kGtpcPort}));
  acceptCreation(csr2, kNew, 2);
  EXPECT_EQ(mismatches_.total, 1u);
  EXPECT_EQ(sgw_->sessionsUp(), 3u);

  sgw_->setPhase(AccessPhase::kModify, false);
  for (uint32_t i = 0; i < 3; ++i) {
    auto mbr = next();
    EXPECT_EQ(mbr.to, (Endpoint{kNew, kGtpcPort})) << "subscriber " << i;
    auto h = gtp::v2::decodeHeader(mbr.bytes);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->message_type, static_cast<uint8_t>(gtp::v2::MessageType::kModifyBearerRequest));
    EXPECT_EQ(h->teid, 0x5000u + i);            // the session's TEID, as before
    EXPECT_EQ(h->sequence_number, 103u + i);  // the node's numbering goes on
  }
  // Redirected: the Create Session Request of 2, the Modify Bearer Requests
  // of 0 (to A) and 1 (to the address its F-TEID named); 2's went to B.
  EXPECT_EQ(failover_->redirected(), 3u);
}

TEST_F(SgwFailover, ARepeatFromTheNewInstanceIsARepeat) {
  sgw_->setPhase(AccessPhase::kAttach, false);
  acceptCreation(next(), kOld, 0);
  const auto request = testing::deleteBearerRequest(sgw_->sgwTeid(0), 0x4242);
  sgw_->onDatagram(0, Endpoint{kOld, kGtpcPort}, request, now_);
  failover_->activate(now_, Failover::Trigger::kSignal);
  sgw_->onDatagram(0, Endpoint{kNew, kGtpcPort}, request, now_);
  EXPECT_EQ(stats_.delete_bearer_requests, 1u);
  EXPECT_EQ(stats_.sessions_deleted_by_network, 1u);
  EXPECT_EQ(stats_.delete_bearer_duplicates, 1u);
  ASSERT_EQ(out_.sent.size(), 2u);
  EXPECT_EQ(out_.sent[0].bytes, out_.sent[1].bytes);  // the same answer, to both
  EXPECT_EQ(out_.sent[1].to, (Endpoint{kNew, kGtpcPort}));
  EXPECT_EQ(mismatches_.total, 0u);
}

}  // namespace
}  // namespace gtpcp::peer
