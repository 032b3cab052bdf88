// The emulated SGW receiving a Delete Bearer Request (TS 29.274 §7.2.9.2) as
// the proxy sends one after a PGW restart: the answer's octets, the
// subscriber detached, an unknown TEID, a retransmission, and a transaction
// in flight cancelled so that its late answer is not a mismatch.
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "tests/peer/engine_harness.h"
#include "tests/peer/proxy_messages.h"

namespace gtpcp::peer {
namespace {

using gtp::v2::MessageType;
using testing::deleteBearerRequest;
using testing::Harness;
using testing::kMs;
using testing::kProxy;
using testing::kReactivationRequested;

constexpr int64_t kSecond = 1000 * kMs;
// Where the proxy's requests come from: its access socket.
const Endpoint kProxyEndpoint{kProxy, kGtpcPort};

// The octets of a Delete Bearer Response: header with TEID, Cause, and the
// LBI when accepted.
std::vector<uint8_t> expectedResponse(uint32_t teid, uint32_t seq, uint8_t cause,
                                      std::optional<uint8_t> lbi) {
  std::vector<uint8_t> v{0x48, 100, 0, 0,
                         static_cast<uint8_t>(teid >> 24), static_cast<uint8_t>(teid >> 16),
                         static_cast<uint8_t>(teid >> 8), static_cast<uint8_t>(teid),
                         static_cast<uint8_t>(seq >> 16), static_cast<uint8_t>(seq >> 8),
                         static_cast<uint8_t>(seq), 0,
                         2, 0, 2, 0, cause, 0};  // Cause: value, no flags
  if (lbi) v.insert(v.end(), {73, 0, 1, 0, *lbi});  // EBI, instance 0
  v[3] = static_cast<uint8_t>(v.size() - 4);
  return v;
}

class SgwDeleteBearer : public ::testing::Test {
 protected:
  // Attaches every subscriber of `h` and learns, for each, the control TEID
  // the PGW gave it (what the SGW's later requests carry in their header).
  void attachAll(Harness& h) {
    h.sgw->setPhase(AccessPhase::kAttach, false);
    while (!h.sgw->phaseExhausted()) {
      h.sgw->issue(1, now_);
      while (!h.out.sent.empty()) {
        testing::Sent d = std::move(h.out.sent.front());
        h.out.sent.pop_front();
        gtp::v2::Message m;
        if (m.decode(d.bytes) && m.messageType() == MessageType::kCreateSessionResponse) {
          auto f = gtp::v2::readFirst<gtp::v2::FTeid>(m, 1);
          if (f) peer_teid_[m.header().teid] = f->teid;
        }
        h.deliver(d, now_);
      }
      now_ += kMs;
    }
    h.sgw->setPhase(AccessPhase::kIdle, false);
    ASSERT_EQ(h.sgw->sessionsUp(), h.sgw_stats.sessions_created);
  }
  // Feeds `request` to SGW node `node` and returns its single answer.
  std::vector<uint8_t> feed(Harness& h, const std::vector<uint8_t>& request,
                            const Endpoint& from = kProxyEndpoint, uint32_t node = 0) {
    h.out.sent.clear();
    h.sgw->onDatagram(node, from, request, now_);
    EXPECT_EQ(h.out.sent.size(), 1u);
    if (h.out.sent.size() != 1) return {};
    const testing::Sent answer = h.out.sent.front();
    h.out.sent.clear();
    EXPECT_EQ(answer.socket, node);
    EXPECT_EQ(answer.to, from);  // to the request's source address and port
    gtp::v2::Message m;
    EXPECT_TRUE(m.decode(answer.bytes));
    EXPECT_TRUE(gtp::v2::checkMandatory(m));
    return answer.bytes;
  }
  uint32_t peerTeid(Harness& h, uint32_t index) { return peer_teid_[h.sgw->sgwTeid(index)]; }

  int64_t now_ = 0;
  std::map<uint32_t, uint32_t> peer_teid_;  // SGW control TEID -> the peer's
};

TEST_F(SgwDeleteBearer, AcceptsAndDetachesAnAttachedSubscriber) {
  Harness h(3, 1, /*sgw_relay_mode=*/true);
  attachAll(h);
  const uint32_t teid = h.sgw->sgwTeid(1);
  const uint32_t peer = peerTeid(h, 1);
  ASSERT_NE(peer, 0u);

  const auto answer = feed(h, deleteBearerRequest(teid, 0x4242));
  EXPECT_EQ(answer, expectedResponse(peer, 0x4242, kCauseAccepted, kDefaultEbi));
  const auto& s = h.sgw_stats;
  EXPECT_EQ(s.delete_bearer_requests, 1u);
  EXPECT_EQ(s.sessions_deleted_by_network, 1u);
  EXPECT_EQ(s.delete_bearer_unknown, 0u);
  EXPECT_EQ(s.delete_bearer_duplicates, 0u);
  EXPECT_EQ(s.transactions_cancelled, 0u);
  EXPECT_EQ(s.delete_bearer_causes[kReactivationRequested], 1u);
  EXPECT_EQ(h.sgw->sessionsUp(), 2u);
  EXPECT_EQ(h.mismatches.total, 0u);

  // Modify-only no longer modifies it; the others still are.
  h.sgw->setPhase(AccessPhase::kModify, true);
  for (int i = 0; i < 10; ++i) {
    h.sgw->issue(1, now_);
    for (const auto& d : h.out.sent) {
      gtp::v2::Message m;
      ASSERT_TRUE(m.decode(d.bytes));
      EXPECT_EQ(m.messageType(), MessageType::kModifyBearerRequest);
      EXPECT_NE(m.header().teid, peer);
    }
    h.pump(now_);
    now_ += kMs;
  }
  EXPECT_EQ(h.sgw_stats.completed[static_cast<std::size_t>(Txn::kModify)], 10u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(SgwDeleteBearer, LifecycleAttachesAgainAfterward) {
  Harness h(1, 1, true, 0, false, [](SgwConfig& c) { c.cycles = 2; });
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.pump(now_);
  ASSERT_EQ(h.sgw->sessionsUp(), 1u);
  feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 7));
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  EXPECT_FALSE(h.sgw->phaseExhausted());  // one of its two cycles is left
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  gtp::v2::Message m;
  ASSERT_TRUE(m.decode(h.out.sent.front().bytes));
  EXPECT_EQ(m.messageType(), MessageType::kCreateSessionRequest);
  h.pump(now_);
  EXPECT_EQ(h.sgw_stats.sessions_created, 2u);
  EXPECT_EQ(h.sgw->sessionsUp(), 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(SgwDeleteBearer, UnknownTeidIsContextNotFound) {
  Harness h(3, 1, true);
  attachAll(h);
  // Not a TEID this SGW gave out.
  uint32_t index = 0;
  const uint32_t stranger = 0x12345678;
  ASSERT_FALSE(h.sgw->indexOfTeid(stranger, index));
  EXPECT_EQ(feed(h, deleteBearerRequest(stranger, 0x100)),
            expectedResponse(0, 0x100, kCauseContextNotFound, std::nullopt));
  EXPECT_EQ(h.sgw_stats.delete_bearer_requests, 1u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_unknown, 1u);
  EXPECT_EQ(h.sgw_stats.sessions_deleted_by_network, 0u);
  EXPECT_EQ(h.sgw->sessionsUp(), 3u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(SgwDeleteBearer, SubscriberNotAttachedIsContextNotFound) {
  Harness h(2, 1, true);  // nobody attached
  EXPECT_EQ(feed(h, deleteBearerRequest(h.sgw->sgwTeid(1), 0x101)),
            expectedResponse(0, 0x101, kCauseContextNotFound, std::nullopt));
  EXPECT_EQ(h.sgw_stats.delete_bearer_unknown, 1u);
}

TEST_F(SgwDeleteBearer, WrongLbiIsAMismatchAndKeepsTheSession) {
  Harness h(1, 1, true);
  attachAll(h);
  const uint32_t peer = peerTeid(h, 0);
  EXPECT_EQ(feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 0x102, /*lbi=*/6)),
            expectedResponse(peer, 0x102, kCauseContextNotFound, std::nullopt));
  EXPECT_EQ(h.mismatches[Mismatch::kSgwDeleteBearerRequest], 1u);
  EXPECT_EQ(h.sgw->sessionsUp(), 1u);
  feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 0x103, std::nullopt));
  EXPECT_EQ(h.mismatches[Mismatch::kSgwDeleteBearerRequest], 2u);
  EXPECT_EQ(h.sgw_stats.sessions_deleted_by_network, 0u);
}

TEST_F(SgwDeleteBearer, RetransmissionIsAnsweredAgainAndCountedOnce) {
  Harness h(2, 1, true);
  attachAll(h);
  const auto request = deleteBearerRequest(h.sgw->sgwTeid(0), 0x200);
  const auto first = feed(h, request);
  now_ += 3 * kSecond;  // the proxy's T3
  EXPECT_EQ(feed(h, request), first);
  now_ += 3 * kSecond;
  EXPECT_EQ(feed(h, request), first);
  EXPECT_EQ(h.sgw_stats.delete_bearer_requests, 1u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_duplicates, 2u);
  EXPECT_EQ(h.sgw_stats.sessions_deleted_by_network, 1u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_unknown, 0u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_causes[kReactivationRequested], 1u);
  EXPECT_EQ(h.sgw->sessionsUp(), 1u);

  // The same number from another source is another request: the session it
  // names is gone by now.
  const auto other = feed(h, request, Endpoint{kProxy, 2124});
  EXPECT_EQ(other, expectedResponse(0, 0x200, kCauseContextNotFound, std::nullopt));
  EXPECT_EQ(h.sgw_stats.delete_bearer_requests, 2u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_unknown, 1u);

  // Past the duplicate window it is a new request too.
  now_ += kDuplicateWindowNs;
  EXPECT_EQ(feed(h, request), other);
  EXPECT_EQ(h.sgw_stats.delete_bearer_requests, 3u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_duplicates, 2u);
  EXPECT_EQ(h.sgw_stats.answers_evicted, 0u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(SgwDeleteBearer, EachSgwTellsItsOwnRetransmissionsApart) {
  // Subscriber k is on SGW node k; the same sequence number from the same
  // source reaches both: two requests, not a retransmission.
  Harness h(2, 2, true);
  attachAll(h);
  EXPECT_EQ(feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 0x250), kProxyEndpoint, 0),
            expectedResponse(peerTeid(h, 0), 0x250, kCauseAccepted, kDefaultEbi));
  EXPECT_EQ(feed(h, deleteBearerRequest(h.sgw->sgwTeid(1), 0x250), kProxyEndpoint, 1),
            expectedResponse(peerTeid(h, 1), 0x250, kCauseAccepted, kDefaultEbi));
  EXPECT_EQ(h.sgw_stats.sessions_deleted_by_network, 2u);
  EXPECT_EQ(h.sgw_stats.delete_bearer_duplicates, 0u);
  // A session's TEID at an SGW that does not hold it names nothing there.
  Harness g(2, 2, true);
  attachAll(g);
  EXPECT_EQ(feed(g, deleteBearerRequest(g.sgw->sgwTeid(0), 0x251), kProxyEndpoint, 1),
            expectedResponse(0, 0x251, kCauseContextNotFound, std::nullopt));
  EXPECT_EQ(g.sgw->sessionsUp(), 2u);
}

TEST_F(SgwDeleteBearer, CancelsAModifyInFlightWhoseLateAnswerIsNotAMismatch) {
  Harness h(1, 1, true);
  attachAll(h);
  const uint32_t peer = peerTeid(h, 0);
  h.sgw->setPhase(AccessPhase::kModify, true);
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  const testing::Sent modify = h.out.sent.front();  // held in the network
  h.out.sent.clear();
  ASSERT_EQ(h.sgw->outstanding(), 1u);

  EXPECT_EQ(feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 0x300)),
            expectedResponse(peer, 0x300, kCauseAccepted, kDefaultEbi));
  EXPECT_EQ(h.sgw_stats.transactions_cancelled, 1u);
  EXPECT_EQ(h.sgw->outstanding(), 0u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  // Cancelled: no retransmission, no timeout.
  EXPECT_EQ(h.sgw->nextTimer(), std::numeric_limits<int64_t>::max());
  h.sgw->onTimers(now_ + 10 * kSecond);
  EXPECT_TRUE(h.out.sent.empty());
  EXPECT_EQ(h.sgw_stats.retransmissions[static_cast<std::size_t>(Txn::kModify)], 0u);

  // The Modify Bearer Response arrives after all: late, not a mismatch.
  h.deliver(modify, now_);
  h.pump(now_);
  EXPECT_EQ(h.sgw_stats.late_responses, 1u);
  EXPECT_EQ(h.sgw_stats.completed[static_cast<std::size_t>(Txn::kModify)], 0u);
  EXPECT_EQ(h.sgw_stats.timeouts[static_cast<std::size_t>(Txn::kModify)], 0u);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.malformed.total, 0u);
  // And the subscriber is no longer modified.
  EXPECT_EQ(h.sgw->issue(1, now_), 0u);
  EXPECT_TRUE(h.out.sent.empty());
}

TEST_F(SgwDeleteBearer, CancelsADeleteSessionInFlight) {
  Harness h(1, 1, true);
  attachAll(h);
  h.sgw->setPhase(AccessPhase::kDetach, false);
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  const testing::Sent detach = h.out.sent.front();
  h.out.sent.clear();
  feed(h, deleteBearerRequest(h.sgw->sgwTeid(0), 0x301));
  EXPECT_EQ(h.sgw_stats.transactions_cancelled, 1u);
  EXPECT_EQ(h.sgw_stats.sessions_deleted_by_network, 1u);
  EXPECT_TRUE(h.sgw->phaseExhausted());
  h.deliver(detach, now_);
  h.pump(now_);
  EXPECT_EQ(h.sgw_stats.late_responses, 1u);
  EXPECT_EQ(h.sgw_stats.sessions_deleted, 0u);
  EXPECT_EQ(h.sgw->sessionsUp(), 0u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

}  // namespace
}  // namespace gtpcp::peer
