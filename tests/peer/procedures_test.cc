// The procedures beyond attach, modify and detach, in the SGW and PGW engines
// wired together in memory (engine_harness.h, a relay-like network) and fed
// hand-made datagrams: the dedicated bearer a PGW creates, updates and
// deletes (alone and piggybacked), the SGW waiting for its deletion before
// detaching, Modify Bearer Commands and what they trigger, probes of TEIDs
// nobody gave, and each check failing when it should.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "tests/peer/engine_harness.h"

namespace gtpcp::peer {
namespace {

using gtp::v2::MessageType;
using testing::Harness;
using testing::kMs;
using testing::kPgw0;
using testing::kProxy;
using testing::Sent;

constexpr std::size_t at(Procedure p) { return static_cast<std::size_t>(p); }
constexpr std::size_t at(Txn t) { return static_cast<std::size_t>(t); }

// What a datagram carries first: type, header TEID, sequence number, P flag.
struct Head {
  MessageType type{};
  uint32_t teid = 0;
  uint32_t seq = 0;
  bool piggyback = false;
};
Head headOf(const std::vector<uint8_t>& bytes) {
  auto h = gtp::v2::decodeHeader(bytes);
  EXPECT_TRUE(h.has_value());
  if (!h) return {};
  return Head{static_cast<MessageType>(h->message_type), h->teid, h->sequence_number, h->piggyback()};
}

// The second message of a piggybacked datagram.
std::vector<uint8_t> piggybacked(const std::vector<uint8_t>& bytes) {
  auto h = gtp::v2::decodeHeader(bytes);
  EXPECT_TRUE(h && h->piggyback());
  if (!h) return {};
  return std::vector<uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(h->messageSize()), bytes.end());
}

// Options of both sides.
auto sgwWith(bool dedicated, bool commands, uint32_t modifies = 1) {
  return [=](SgwConfig& c) {
    c.dedicated_bearer = dedicated;
    c.commands = commands;
    c.modifies = modifies;
  };
}
auto pgwWith(bool dedicated, bool commands, bool piggyback = false) {
  return [=](PgwConfig& c) {
    c.dedicated_bearer = dedicated;
    c.commands = commands;
    c.piggyback = piggyback;
  };
}

class Procedures : public ::testing::Test {
 protected:
  // Delivers what is in flight, noting each datagram, until nothing is.
  void pump(Harness& h) {
    while (!h.out.sent.empty()) {
      Sent d = std::move(h.out.sent.front());
      h.out.sent.pop_front();
      log_.push_back(d);
      h.deliver(d, now_);
    }
  }
  // A lifecycle run to its end: every subscriber its cycles.
  void runLifecycle(Harness& h) {
    h.sgw->setPhase(AccessPhase::kLifecycle, true);
    for (int turn = 0; turn < 5000 && !h.sgw->phaseExhausted(); ++turn) {
      h.sgw->issue(2, now_);
      pump(h);
      now_ += kMs;
    }
    EXPECT_TRUE(h.sgw->phaseExhausted());
    EXPECT_EQ(h.sgw->outstanding(), 0u);
    EXPECT_EQ(h.pgw->outstanding(), 0u);
    EXPECT_EQ(h.sgw->waitingForNetwork(), 0u);
  }
  // Datagrams of `type` sent by the SGWs (true) or the PGW (false), as noted.
  std::vector<Sent> sent(MessageType type, bool by_sgw, uint32_t sgws = 1) const {
    std::vector<Sent> v;
    for (const Sent& d : log_)
      if ((d.socket < sgws) == by_sgw && headOf(d.bytes).type == type) v.push_back(d);
    return v;
  }
  void expectRows(const ProcedureTable& t, std::initializer_list<Procedure> rows, uint64_t count) {
    for (Procedure p : rows) {
      EXPECT_EQ(t[at(p)].started, count) << procedureName(p);
      EXPECT_EQ(t[at(p)].completed, count) << procedureName(p);
      EXPECT_EQ(t[at(p)].timeouts, 0u) << procedureName(p);
      EXPECT_EQ(t[at(p)].mismatches, 0u) << procedureName(p);
    }
  }

  int64_t now_ = 0;
  std::vector<Sent> log_;
};

TEST_F(Procedures, APgwCreatesUpdatesAndDeletesADedicatedBearerBeforeEachDetach) {
  constexpr uint32_t kSubs = 20;
  Harness h(kSubs, 2, /*sgw_relay_mode=*/true, 0, false, sgwWith(true, false), {}, pgwWith(true, false));
  runLifecycle(h);
  const std::initializer_list<Procedure> bearer = {Procedure::kCreateBearer, Procedure::kUpdateBearer,
                                                   Procedure::kDeleteBearer};
  expectRows(h.sgw_stats.procedures, bearer, kSubs);
  expectRows(h.pgw_stats[0].procedures, bearer, kSubs);
  EXPECT_EQ(h.sgw_stats.sessions_created, kSubs);
  EXPECT_EQ(h.sgw_stats.sessions_deleted, kSubs);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.malformed.total, 0u);

  // The Create Bearer Request as TS 29.274 §7.2.3 has it: the SGW's TEID,
  // LBI 5, EBI 0 offered, TFT, QoS, the PGW's S5/S8-U F-TEID (instance 1).
  const auto cbr = sent(MessageType::kCreateBearerRequest, false, 2);
  ASSERT_EQ(cbr.size(), kSubs);
  gtp::v2::Message m;
  ASSERT_TRUE(m.decode(cbr[0].bytes));
  EXPECT_TRUE(gtp::v2::checkMandatory(m));
  EXPECT_EQ(cbr[0].to, (Endpoint{kProxy, kGtpcPort})) << "to where the session's requests come from, port 2123";
  uint32_t index = 0;
  ASSERT_TRUE(h.sgw->indexOfTeid(m.header().teid, index));
  auto v = viewBearerRequest(m);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->lbi, kDefaultEbi);
  EXPECT_EQ(v->bearer.ebi, 0);
  EXPECT_TRUE(v->bearer.tft);
  ASSERT_TRUE(v->bearer.fteid[1]);
  EXPECT_EQ(v->bearer.fteid[1]->interface_type, kIfS5S8PgwGtpU);
  EXPECT_EQ(v->bearer.fteid[1]->teid, userPlaneTeid(PlaneSide::kPgwDedicated, testing::ids(kSubs).imsi(index), kPgw0));

  // Each session's Delete Session Request reached the PGW after its Delete
  // Bearer Response: the SGW waited for the bearer to go.
  std::map<uint32_t, int> order;  // PGW TEID -> 1 after the Delete Bearer Response
  for (const Sent& d : log_) {
    if (d.socket >= 2) continue;
    const Head head = headOf(d.bytes);
    if (head.type == MessageType::kDeleteBearerResponse) order[head.teid] = 1;
    if (head.type == MessageType::kDeleteSessionRequest) {
      EXPECT_EQ(order[head.teid], 1) << "detach before the dedicated bearer's deletion";
    }
  }
}

TEST_F(Procedures, EveryProcedureOnIpv6AndOnMixedFamilies) {
  using testing::ula;
  // IPv6 on both legs; IPv6 SGWs before IPv4 PGWs.
  for (const testing::Addresses& at : {testing::Addresses{ula(1), ula(11), ula(2), ula(21)},
                                       testing::Addresses{ula(1), ula(11), kProxy, kPgw0}}) {
    constexpr uint32_t kSubs = 8;
    log_.clear();
    Harness h(kSubs, 2, true, 0, false, sgwWith(true, true), at, pgwWith(true, true, true));
    runLifecycle(h);
    EXPECT_EQ(h.mismatches.total, 0u);
    EXPECT_EQ(h.malformed.total, 0u);
    EXPECT_EQ(h.sgw_stats.internal_errors, 0u);
    EXPECT_EQ(h.pgw_stats[0].internal_errors, 0u);
    expectRows(h.pgw_stats[0].procedures,
               {Procedure::kCreateBearer, Procedure::kUpdateBearer, Procedure::kDeleteBearer,
                Procedure::kTriggeredUpdateBearer, Procedure::kFailureIndication},
               kSubs);
    EXPECT_EQ(h.sgw_stats.piggybacked, kSubs);
    EXPECT_EQ(h.sgw_stats.sessions_deleted, kSubs);
  }
}

TEST_F(Procedures, ThePiggybackedCreateBearerRequestRidesOnTheCreateSessionResponse) {
  constexpr uint32_t kSubs = 10;
  Harness h(kSubs, 1, true, 0, false, sgwWith(true, false, 0), {}, pgwWith(true, false, true));
  runLifecycle(h);
  const auto answers = sent(MessageType::kCreateSessionResponse, false);
  ASSERT_EQ(answers.size(), kSubs);
  for (const Sent& d : answers) {
    EXPECT_TRUE(headOf(d.bytes).piggyback);
    EXPECT_EQ(headOf(piggybacked(d.bytes)).type, MessageType::kCreateBearerRequest);
  }
  EXPECT_TRUE(sent(MessageType::kCreateBearerRequest, false).empty()) << "none sent on its own";
  EXPECT_EQ(h.pgw_stats[0].piggybacked, kSubs);
  EXPECT_EQ(h.sgw_stats.piggybacked, kSubs);
  expectRows(h.pgw_stats[0].procedures,
             {Procedure::kCreateBearer, Procedure::kUpdateBearer, Procedure::kDeleteBearer}, kSubs);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(Procedures, TheSgwDetachesOnlyOnceTheNetworkDeletedTheDedicatedBearer) {
  Harness h(1, 1, true, 0, false, sgwWith(true, false, 0), {}, pgwWith(true, false));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  // Everything but the Delete Bearer Request goes through.
  std::vector<Sent> held;
  while (!h.out.sent.empty()) {
    Sent d = std::move(h.out.sent.front());
    h.out.sent.pop_front();
    if (headOf(d.bytes).type == MessageType::kDeleteBearerRequest) {
      held.push_back(d);
      continue;
    }
    h.deliver(d, now_);
  }
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(h.sgw->issue(1, now_), 0u) << "nothing to start but a detach, which waits";
  EXPECT_EQ(h.sgw->waitingForNetwork(), 1u);
  EXPECT_TRUE(h.out.sent.empty());
  EXPECT_EQ(h.sgw->sessionsUp(), 1u);
  h.deliver(held[0], now_);
  EXPECT_EQ(h.sgw->waitingForNetwork(), 0u);
  h.pump(now_);  // the Delete Bearer Response
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  EXPECT_EQ(headOf(h.out.sent.front().bytes).type, MessageType::kDeleteSessionRequest);
  h.pump(now_);
  EXPECT_EQ(h.sgw_stats.sessions_deleted, 1u);
  EXPECT_EQ(h.mismatches.total, 0u);
}

TEST_F(Procedures, CommandsComeBackAsATriggeredRequestThenAFailureIndicationWithTheirNumbers) {
  constexpr uint32_t kSubs = 10;
  Harness h(kSubs, 1, true, 0, false, sgwWith(false, true), {}, pgwWith(false, true));
  runLifecycle(h);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.sgw_stats.attempted[at(Txn::kModifyBearerCommand)], 2 * kSubs);
  EXPECT_EQ(h.sgw_stats.completed[at(Txn::kModifyBearerCommand)], 2 * kSubs);
  expectRows(h.sgw_stats.procedures, {Procedure::kTriggeredUpdateBearer, Procedure::kFailureIndication}, kSubs);
  expectRows(h.pgw_stats[0].procedures, {Procedure::kModifyBearerCommand}, 2 * kSubs);
  expectRows(h.pgw_stats[0].procedures, {Procedure::kTriggeredUpdateBearer, Procedure::kFailureIndication}, kSubs);
  EXPECT_EQ(h.sgw_stats.causes[kCauseSystemFailure], kSubs);
  EXPECT_EQ(h.sgw_stats.sessions_deleted, kSubs);

  // The numbers: each command with the top bit, answered with its own.
  std::set<uint32_t> commands;
  for (const Sent& d : sent(MessageType::kModifyBearerCommand, true)) {
    const Head head = headOf(d.bytes);
    EXPECT_TRUE(head.seq & kCommandBit);
    commands.insert(head.seq);
  }
  ASSERT_EQ(commands.size(), 2 * kSubs);
  const auto triggered = sent(MessageType::kUpdateBearerRequest, false);
  const auto refused = sent(MessageType::kModifyBearerFailureIndication, false);
  ASSERT_EQ(triggered.size(), kSubs);
  ASSERT_EQ(refused.size(), kSubs);
  for (const auto* list : {&triggered, &refused})
    for (const Sent& d : *list) EXPECT_EQ(commands.count(headOf(d.bytes).seq), 1u);
  for (const Sent& d : sent(MessageType::kUpdateBearerResponse, true))
    EXPECT_EQ(commands.count(headOf(d.bytes).seq), 1u) << "answered with the command's number";
}

TEST_F(Procedures, ATriggeredRequestNumberedLikeNoCommandIsAMismatch) {
  Harness h(1, 1, true, 0, false, sgwWith(false, true, 0), {}, pgwWith(false, true));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.pump(now_);  // attached
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  const Sent command = h.out.sent.front();  // held in the network
  h.out.sent.clear();
  const Head head = headOf(command.bytes);
  ASSERT_EQ(head.type, MessageType::kModifyBearerCommand);

  // The SGW's own TEID, but a number it never used.
  std::array<uint8_t, kMaxBuiltMessage> buf{};
  BearerModificationArgs a;
  a.sequence = ((head.seq + 1) & (kCommandBit - 1)) | kCommandBit;
  a.header_teid = h.sgw->sgwTeid(0);
  a.ebi = kDefaultEbi;
  a.qos = commandedQos();
  a.apn_ambr = commandedAmbr(0);
  auto n = buildBearerModification(MessageType::kUpdateBearerRequest, a, buf);
  ASSERT_TRUE(n);
  h.sgw->onDatagram(0, Endpoint{kProxy, kGtpcPort}, std::span<const uint8_t>(buf.data(), *n), now_);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwCommandSequence], 1u);
  EXPECT_EQ(h.sgw_stats.procedures[at(Procedure::kTriggeredUpdateBearer)].mismatches, 1u);
  ASSERT_EQ(h.out.sent.size(), 1u);
  gtp::v2::Message m;
  ASSERT_TRUE(m.decode(h.out.sent.front().bytes));
  EXPECT_EQ(m.messageType(), MessageType::kUpdateBearerResponse);
  EXPECT_EQ(gtp::v2::readFirst<gtp::v2::CauseIe>(m)->value, kCauseContextNotFound);
  h.out.sent.clear();

  // The real one completes the command.
  h.deliver(command, now_);
  h.pump(now_);
  EXPECT_EQ(h.sgw_stats.completed[at(Txn::kModifyBearerCommand)], 1u);
  EXPECT_EQ(h.sgw_stats.procedures[at(Procedure::kTriggeredUpdateBearer)].completed, 1u);
  EXPECT_EQ(h.mismatches.total, 1u);
}

TEST_F(Procedures, AFailureIndicationForTheFirstCommandIsAMismatch) {
  Harness h(1, 1, true, 0, false, sgwWith(false, true, 0), {}, pgwWith(false, true));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.pump(now_);
  ASSERT_EQ(h.sgw->issue(1, now_), 1u);
  const Head head = headOf(h.out.sent.front().bytes);
  h.out.sent.clear();
  std::array<uint8_t, kMaxBuiltMessage> buf{};
  auto n = buildCauseOnlyResponse(MessageType::kModifyBearerFailureIndication, head.seq, h.sgw->sgwTeid(0),
                                  kCauseSystemFailure, buf);
  ASSERT_TRUE(n);
  h.sgw->onDatagram(0, Endpoint{kProxy, kGtpcPort}, std::span<const uint8_t>(buf.data(), *n), now_);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwCommandOutcome], 1u);
  EXPECT_EQ(h.sgw_stats.procedures[at(Procedure::kFailureIndication)].mismatches, 1u);
  EXPECT_EQ(h.sgw_stats.completed[at(Txn::kModifyBearerCommand)], 1u) << "answered, though not as expected";
}

TEST_F(Procedures, ProbesGoToTeidsNobodyGaveAndWantContextNotFoundWithTeidZero) {
  auto probes = [](uint64_t seed) {
    return [=](SgwConfig& c) {
      c.unknown_teid = 5;
      c.probe_seed = seed;
    };
  };
  Harness h(3, 1, true, 0, false, probes(42));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  EXPECT_EQ(h.sgw->issue(5, now_), 3u) << "one at a time per subscriber";
  std::vector<Sent> first(h.out.sent.begin(), h.out.sent.end());
  h.out.sent.clear();
  std::set<uint32_t> teids;
  for (const Sent& d : first) {
    const Head head = headOf(d.bytes);
    EXPECT_EQ(head.type, MessageType::kModifyBearerRequest);
    EXPECT_NE(head.teid, 0u);
    EXPECT_NE(head.teid, 0xffffffffu);
    EXPECT_EQ(d.to, (Endpoint{kProxy, kGtpcPort}));
    teids.insert(head.teid);
  }
  EXPECT_EQ(teids.size(), 3u);
  // The same seed probes the same TEIDs.
  Harness again(3, 1, true, 0, false, probes(42));
  again.sgw->setPhase(AccessPhase::kLifecycle, true);
  again.sgw->issue(3, now_);
  for (std::size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(headOf(again.out.sent[i].bytes).teid, headOf(first[i].bytes).teid);

  std::array<uint8_t, kMaxBuiltMessage> buf{};
  auto answer = [&](const Sent& probe, uint32_t teid, uint8_t cause) {
    auto n = buildCauseOnlyResponse(MessageType::kModifyBearerResponse, headOf(probe.bytes).seq, teid, cause, buf);
    ASSERT_TRUE(n);
    h.sgw->onDatagram(0, Endpoint{kProxy, kGtpcPort}, std::span<const uint8_t>(buf.data(), *n), now_);
  };
  for (const Sent& d : first) answer(d, 0, kCauseContextNotFound);
  EXPECT_EQ(h.mismatches.total, 0u);
  EXPECT_EQ(h.sgw_stats.completed[at(Txn::kUnknownTeid)], 3u);
  EXPECT_EQ(h.sgw_stats.causes[kCauseContextNotFound], 3u);
  // Two probes left, then the attaches.
  EXPECT_EQ(h.sgw->issue(3, now_), 3u);
  ASSERT_EQ(h.out.sent.size(), 3u);
  EXPECT_EQ(headOf(h.out.sent[0].bytes).type, MessageType::kModifyBearerRequest);
  EXPECT_EQ(headOf(h.out.sent[1].bytes).type, MessageType::kModifyBearerRequest);
  EXPECT_EQ(headOf(h.out.sent[2].bytes).type, MessageType::kCreateSessionRequest);
  answer(h.out.sent[0], 0, kCauseAccepted);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwUnknownTeidAnswer], 1u);
  answer(h.out.sent[1], 7, kCauseContextNotFound);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwHeaderTeid], 1u);
  EXPECT_EQ(h.sgw_stats.procedures[at(Procedure::kUnknownTeid)].mismatches, 2u);
  EXPECT_EQ(h.sgw_stats.attempted[at(Txn::kUnknownTeid)], 5u);
}

TEST_F(Procedures, APgwRetransmitsItsRequestAfterT3AndCountsATimeoutAfterN3) {
  Harness h(1, 1, true, 0, false, sgwWith(true, false), {}, pgwWith(true, false));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.deliver(h.out.sent.front(), now_);  // the Create Session Request
  h.out.sent.pop_front();
  ASSERT_EQ(h.out.sent.size(), 2u);
  const std::vector<uint8_t> cbr = h.out.sent[1].bytes;
  ASSERT_EQ(headOf(cbr).type, MessageType::kCreateBearerRequest);
  h.out.sent.clear();  // both lost
  EXPECT_EQ(h.pgw->outstanding(), 1u);
  EXPECT_EQ(h.pgw->nextTimer(), now_ + 100 * kMs);
  for (int i = 1; i <= 2; ++i) {
    h.pgw->onTimers(now_ + i * 100 * kMs);
    ASSERT_EQ(h.out.sent.size(), 1u);
    EXPECT_EQ(h.out.sent.front().bytes, cbr) << "the same bytes again";
    h.out.sent.clear();
  }
  h.pgw->onTimers(now_ + 300 * kMs);
  EXPECT_TRUE(h.out.sent.empty());
  const ProcedureCounters& c = h.pgw_stats[0].procedures[at(Procedure::kCreateBearer)];
  EXPECT_EQ(c.started, 1u);
  EXPECT_EQ(c.retransmissions, 2u);
  EXPECT_EQ(c.timeouts, 1u);
  EXPECT_EQ(h.pgw->outstanding(), 0u);
}

TEST_F(Procedures, APgwChecksTheAnswersToItsRequests) {
  Harness h(1, 1, true, 0, false, sgwWith(true, false), {}, pgwWith(true, false));
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.deliver(h.out.sent.front(), now_);
  h.out.sent.pop_front();
  h.deliver(h.out.sent.front(), now_);  // the Create Session Response
  h.out.sent.pop_front();
  h.deliver(h.out.sent.front(), now_);  // the Create Bearer Request
  h.out.sent.pop_front();
  ASSERT_EQ(h.out.sent.size(), 1u);
  const Sent answer = h.out.sent.front();
  h.out.sent.clear();
  ASSERT_EQ(headOf(answer.bytes).type, MessageType::kCreateBearerResponse);

  // Another TEID in the header; then another number.
  Sent wrong = answer;
  wrong.bytes[7] ^= 0x01;
  h.deliver(wrong, now_);
  EXPECT_EQ(h.mismatches[Mismatch::kPgwHeaderTeid], 1u);
  EXPECT_EQ(h.pgw_stats[0].procedures[at(Procedure::kCreateBearer)].mismatches, 1u);
  h.out.sent.clear();  // the Update Bearer Request it moved on to
  h.deliver(answer, now_);
  EXPECT_EQ(h.pgw_stats[0].duplicate_responses, 1u) << "a second answer is no mismatch";
  Sent stranger = answer;
  stranger.bytes[8] ^= 0x40;  // far from any number of the PGW's
  h.deliver(stranger, now_);
  EXPECT_EQ(h.mismatches[Mismatch::kPgwUnmatchedResponse], 1u);
  EXPECT_EQ(h.mismatches.total, 2u);
}

TEST_F(Procedures, AnSgwChecksTheCreateBearerRequestAndAnswersARepeatOnce) {
  Harness h(2, 1, true, 0, false, sgwWith(true, false));
  h.sgw->setPhase(AccessPhase::kAttach, false);
  while (!h.sgw->phaseExhausted()) {
    h.sgw->issue(1, now_);
    h.pump(now_);
  }
  ASSERT_EQ(h.sgw->sessionsUp(), 2u);
  const Endpoint proxy{kProxy, kGtpcPort};
  std::array<uint8_t, kMaxBuiltMessage> buf{};
  auto feed = [&](uint32_t teid, uint32_t seq, uint64_t imsi) {
    CreateBearerRequestArgs a;
    a.sequence = seq;
    a.header_teid = teid;
    a.imsi = imsi;
    a.pgw_addr = kPgw0;
    auto n = buildCreateBearerRequest(a, buf);
    EXPECT_TRUE(n);
    h.out.sent.clear();
    h.sgw->onDatagram(0, proxy, std::span<const uint8_t>(buf.data(), *n), now_);
    EXPECT_EQ(h.out.sent.size(), 1u);
    gtp::v2::Message m;
    EXPECT_TRUE(m.decode(h.out.sent.front().bytes));
    EXPECT_EQ(m.messageType(), MessageType::kCreateBearerResponse);
    return gtp::v2::readFirst<gtp::v2::CauseIe>(m)->value;
  };
  const Identities id = testing::ids(2);
  // The PGW's user-plane F-TEID is not the one it made for this subscriber.
  EXPECT_EQ(feed(h.sgw->sgwTeid(0), 0x10, id.imsi(1)), kCauseAccepted);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwUserPlaneFteid], 1u);
  // A TEID of nobody's.
  EXPECT_EQ(feed(0x12345678, 0x11, id.imsi(0)), kCauseContextNotFound);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwRequestTeid], 1u);
  // Right, and repeated: answered twice, counted once.
  EXPECT_EQ(feed(h.sgw->sgwTeid(1), 0x12, id.imsi(1)), kCauseAccepted);
  EXPECT_EQ(feed(h.sgw->sgwTeid(1), 0x12, id.imsi(1)), kCauseAccepted);
  const ProcedureCounters& c = h.sgw_stats.procedures[at(Procedure::kCreateBearer)];
  EXPECT_EQ(c.started, 3u);
  EXPECT_EQ(c.completed, 2u);
  EXPECT_EQ(c.retransmissions, 1u);
  EXPECT_EQ(c.mismatches, 2u);
  // A second dedicated bearer for the same session is not expected.
  EXPECT_EQ(feed(h.sgw->sgwTeid(1), 0x13, id.imsi(1)), kCauseContextNotFound);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwBearerRequest], 1u);
}

TEST_F(Procedures, WithoutTheOptionsTheNewMessagesAreUnexpected) {
  Harness h(1, 1, true);
  h.sgw->setPhase(AccessPhase::kLifecycle, true);
  h.sgw->issue(1, now_);
  h.pump(now_);
  std::array<uint8_t, kMaxBuiltMessage> buf{};
  CreateBearerRequestArgs a;
  a.header_teid = h.sgw->sgwTeid(0);
  auto n = buildCreateBearerRequest(a, buf);
  ASSERT_TRUE(n);
  h.sgw->onDatagram(0, Endpoint{kProxy, kGtpcPort}, std::span<const uint8_t>(buf.data(), *n), now_);
  EXPECT_EQ(h.mismatches[Mismatch::kSgwUnexpectedMessage], 1u);
  BearerModificationArgs c;
  c.sequence = kCommandBit | 1;
  c.header_teid = 1;
  n = buildBearerModification(MessageType::kModifyBearerCommand, c, buf);
  ASSERT_TRUE(n);
  h.pgw->onDatagram(0, Endpoint{kProxy, 40000}, std::span<const uint8_t>(buf.data(), *n), now_);
  EXPECT_EQ(h.mismatches[Mismatch::kPgwUnexpectedMessage], 1u);
  EXPECT_TRUE(h.out.sent.empty());
}

}  // namespace
}  // namespace gtpcp::peer
