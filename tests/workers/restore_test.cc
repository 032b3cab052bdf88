// Restoration on the worker's side (workers/lib/restore.h): a message for a
// session the worker does not hold is held while the storage is asked, served
// when the record comes, answered Context Not Found when there is none, and
// dropped (for the peer to retransmit) when the storage cannot say; the
// stored TEIDs are reserved before any allocation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "tests/workers/proxy_fixture.h"
#include "tests/workers/storage_stand_in.h"
#include "workers/lib/restore.h"

namespace gtpcp::worker::test {
namespace {

class RestoreTest : public ProxyTest {
 protected:
  // The worker forgets the session it made, as a worker of another instance
  // (or a restarted one with a fresh segment) never had it; what the storage
  // holds of it is returned.
  SessionShm forget(const Attached& s) {
    SessionShm* slot = sessions_.find(s.access_teid);
    EXPECT_NE(slot, nullptr);
    const SessionShm stored = *slot;
    sessions_.release(*slot);
    return stored;
  }

  void useRestorer(bool load_stored_teids = false) {
    RestoreSettings settings;
    settings.load_stored_teids = load_stored_teids;
    settings.timeout_ns = 2'000'000'000;
    restorer_ = std::make_unique<Restorer>(settings, layout_, sessions_, header_->counters, lookups_,
                                           header_->stored_teids_loaded);
    proxy_->setRestorer(restorer_.get());
  }

  // The persister's answer for `teid`, applied; returns what left.
  std::vector<Sent> answer(uint32_t teid, RestoreOutcome outcome, const SessionShm* record = nullptr,
                           uint64_t now = 1'100'000'000) {
    SessionRestore r{};
    r.access_teid = teid;
    r.outcome = static_cast<uint8_t>(outcome);
    if (record != nullptr) r.record = *record;
    egress_.sent.clear();
    const Restorer::Replay replay{[](void* self, const Arrival& a, std::span<uint8_t> d) noexcept {
                                    static_cast<RestoreTest*>(self)->proxy_->handle(a, d);
                                  },
                                  this};
    restorer_->apply(LookupKind::kSession, {reinterpret_cast<const uint8_t*>(&r), sizeof r}, now, now, replay);
    return egress_.sent;
  }

  static uint8_t causeOf(const Sent& s) { return readFirst<CauseIe>(decode(s.bytes))->value; }

  // One chunk of a partition's stored TEIDs from the persister.
  void storedChunk(uint16_t partition, const std::vector<uint32_t>& teids, bool last,
                   RestoreOutcome outcome = RestoreOutcome::kFound) {
    restorer_->apply(LookupKind::kStoredTeids, storedTeidsChunk(partition, teids, last, outcome), 0, 0,
                     Restorer::Replay{nullptr, nullptr});
  }
  // The first load, every partition answered at once: `stored` its TEIDs,
  // the others none.
  void loadStored(const std::map<uint16_t, std::vector<uint32_t>>& stored, uint64_t now) {
    std::size_t answered = 0;
    restorer_->tick(now);
    while (answered < lookups_.asked.size()) {
      const uint16_t p = lookups_.asked[answered++].partition;
      const auto it = stored.find(p);
      storedChunk(p, it == stored.end() ? std::vector<uint32_t>{} : it->second, true);
      restorer_->tick(now += 1000);
    }
    ASSERT_TRUE(restorer_->ready());
  }

  RecordingLookups lookups_;
  std::unique_ptr<Restorer> restorer_;
  const net::Address sgw_ = net::Address::v4(kSgw, kPort);
};

TEST_F(RestoreTest, AMessageForAStoredSessionIsHeldThenServedOnce) {
  const Attached s = attach("001010000000001");
  const SessionShm stored = forget(s);
  useRestorer();

  const auto mbr = simple(MessageType::kModifyBearerRequest, s.access_teid, 100);
  EXPECT_TRUE(feed(mbr, sgw_).empty()) << "held, not answered";
  ASSERT_EQ(lookups_.asked.size(), 1u);
  EXPECT_EQ(lookups_.asked[0].kind, LookupKind::kSession);
  SessionLookup q;
  std::memcpy(&q, lookups_.asked[0].body.data(), sizeof q);
  EXPECT_EQ(q.access_teid, s.access_teid);
  EXPECT_EQ(q.partition, partitionOf(s.access_teid));

  // The SGW's retransmission while the storage is asked: not held twice, not asked twice.
  EXPECT_TRUE(feed(mbr, sgw_).empty());
  EXPECT_EQ(lookups_.asked.size(), 1u);
  EXPECT_EQ(header_->counters.restore_duplicates.load(), 1u);
  EXPECT_EQ(restorer_->held(), 1u);

  // The record comes: the one copy goes to the PGW with the PGW's TEID.
  const auto out = answer(s.access_teid, RestoreOutcome::kFound, &stored);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, s.pgw);
  EXPECT_EQ(decode(out[0].bytes).header().teid, 0x2222u);
  EXPECT_EQ(restorer_->held(), 0u);
  EXPECT_EQ(header_->counters.restore_found.load(), 1u);
  ASSERT_NE(sessions_.find(s.access_teid), nullptr);
  EXPECT_NE(sessions_.find(s.gateway_teid), nullptr) << "both TEIDs name it again";

  // From now on it is an ordinary session: its answer goes back to the SGW.
  const auto resp = feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid,
                                decode(out[0].bytes).header().sequence_number, 16),
                         s.pgw);
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, sgw_);
  EXPECT_EQ(decode(resp[0].bytes).header().sequence_number, 100u);
  EXPECT_EQ(lookups_.asked.size(), 1u);
}

TEST_F(RestoreTest, AHeldMessageIsCountedOnceAndWhatItCausesCarriesItsReception) {
  const Attached s = attach("001010000000002");
  const uint16_t gateway = sessions_.find(s.access_teid)->gateway;
  const WorkerMetricsShm& m = header_->metrics;
  const SessionShm stored = forget(s);
  EXPECT_EQ(m.gateways[gateway].sessions_active.load(), 0u);
  EXPECT_EQ(m.sessions_by_version[1].load(), 0u);
  useRestorer();
  constexpr auto kMbr = static_cast<uint8_t>(MessageType::kModifyBearerRequest);
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), sgw_, 1'000'000'000, 4711).empty());
  const auto out = answer(s.access_teid, RestoreOutcome::kFound, &stored);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].receive_ns, 4711u) << "the time it was held is the proxy's";
  EXPECT_EQ(m.received[1][static_cast<uint8_t>(Leg::kAccess)][kMbr].load(), 1u) << "taken from the ring once";
  EXPECT_EQ(m.sent[1][static_cast<uint8_t>(Leg::kGateway)][kMbr].load(), 1u);
  EXPECT_EQ(m.gateways[gateway].sessions_active.load(), 1u) << "read back: held here again";
  EXPECT_EQ(m.gateways[gateway].requests_sent.load(), 2u);
  EXPECT_EQ(m.sessions_by_version[1].load(), 1u);
  EXPECT_EQ(header_->counters.sessions_active.load(), 1u);
}

TEST_F(RestoreTest, SeveralMessagesOfOneSessionWaitForOneLookupInOrder) {
  const Attached s = attach("001010000000002");
  const SessionShm stored = forget(s);
  useRestorer();
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), sgw_).empty());
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.gateway_teid, 555), s.pgw).empty())
      << "the PGW's message names the other TEID of the same session";
  ASSERT_EQ(lookups_.asked.size(), 1u);
  const auto out = answer(s.access_teid, RestoreOutcome::kFound, &stored);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].to, s.pgw);
  EXPECT_EQ(out[1].to.sameHost(sgw_), true);
}

TEST_F(RestoreTest, NoRecordIsContextNotFound) {
  const Attached s = attach("001010000000003");
  forget(s);
  useRestorer();
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), sgw_).empty());
  const auto out = answer(s.access_teid, RestoreOutcome::kAbsent);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, sgw_);
  EXPECT_EQ(causeOf(out[0]), static_cast<uint8_t>(Cause::kContextNotFound));
  EXPECT_EQ(header_->counters.restore_absent.load(), 1u);
}

// Counts what the worker writes toward the persister.
class KindsSink final : public PersistSink {
 public:
  std::span<uint8_t> reserve(ChangeKind kind, uint16_t, std::size_t max) noexcept override {
    buffer_.assign(max, 0);
    kind_ = kind;
    return buffer_;
  }
  void commit(std::size_t) noexcept override { kinds.push_back(kind_); }
  std::vector<ChangeKind> kinds;

 private:
  std::vector<uint8_t> buffer_;
  ChangeKind kind_{};
};

// A record stored before its gateway's answer (the instance that sent the
// creation died, and with it the "established" write) cannot go on: the
// first request that names it removes it, from the storage too, and is
// answered Context Not Found, from whichever leg it comes.
TEST_F(RestoreTest, ASessionStoredBeforeItsGatewaysAnswerIsRemovedAndAnswered) {
  for (const bool from_gateway : {false, true}) {
    // A sequence number of its own: the same one would be the first
    // creation's retransmission.
    const Attached s = attach(from_gateway ? "001010000000031" : "001010000000030", 0x1111, from_gateway ? 8 : 7);
    SessionShm stored = forget(s);
    stored.state = static_cast<uint8_t>(SessionState::kCreating);
    useRestorer();
    KindsSink sink;
    proxy_->setPersist(&sink);
    const auto request = from_gateway ? simple(MessageType::kDeleteBearerRequest, s.gateway_teid, 300)
                                      : simple(MessageType::kModifyBearerRequest, s.access_teid, 100);
    EXPECT_TRUE(feed(request, from_gateway ? s.pgw : sgw_).empty()) << "held while the storage is asked";
    const uint64_t before = header_->counters.restore_incomplete.load();
    const auto out = answer(s.access_teid, RestoreOutcome::kFound, &stored);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to.sameHost(from_gateway ? s.pgw : sgw_), true) << "answered, not relayed";
    EXPECT_EQ(causeOf(out[0]), 64) << "Context Not Found";
    EXPECT_EQ(header_->counters.restore_incomplete.load(), before + 1);
    EXPECT_EQ(sessions_.find(s.access_teid), nullptr);
    EXPECT_EQ(sessions_.find(s.gateway_teid), nullptr);
    ASSERT_FALSE(sink.kinds.empty());
    EXPECT_EQ(sink.kinds.back(), ChangeKind::kDelete) << "and removed from the storage";
    proxy_->setPersist(nullptr);
  }
}

TEST_F(RestoreTest, AStorageThatCannotAnswerDropsForTheRetransmission) {
  const Attached s = attach("001010000000004");
  const SessionShm stored = forget(s);
  useRestorer();
  const auto mbr = simple(MessageType::kModifyBearerRequest, s.access_teid, 100);
  EXPECT_TRUE(feed(mbr, sgw_).empty());
  EXPECT_TRUE(answer(s.access_teid, RestoreOutcome::kFailed).empty()) << "no answer: never Context Not Found";
  EXPECT_EQ(header_->counters.restore_failed.load(), 1u);
  EXPECT_EQ(restorer_->held(), 0u);
  // The retransmission asks again, and is served.
  EXPECT_TRUE(feed(mbr, sgw_).empty());
  EXPECT_EQ(lookups_.asked.size(), 2u);
  EXPECT_EQ(answer(s.access_teid, RestoreOutcome::kFound, &stored).size(), 1u);
}

TEST_F(RestoreTest, AnUnansweredLookupTimesOut) {
  const Attached s = attach("001010000000005");
  forget(s);
  useRestorer();
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), sgw_, 1'000'000'000).empty());
  restorer_->tick(2'000'000'000);
  EXPECT_EQ(restorer_->held(), 1u);
  restorer_->tick(3'100'000'000);
  EXPECT_EQ(restorer_->held(), 0u);
  EXPECT_EQ(header_->counters.restore_timeouts.load(), 1u);
  EXPECT_EQ(lookups_.asked.size(), 1u);
}

TEST_F(RestoreTest, ATeidOfALiveSlotsOtherGenerationIsNotAsked) {
  const Attached s = attach("001010000000006");
  useRestorer();
  // Same slot, an older generation: a late message for a session this worker
  // ended and reused the slot of. Nothing to ask.
  const uint32_t older = (s.access_teid & ~0x7fu) | ((s.access_teid & 0x7f) == 1 ? 126 : (s.access_teid & 0x7f) - 1);
  const auto out = feed(simple(MessageType::kModifyBearerRequest, older, 100), sgw_);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(causeOf(out[0]), static_cast<uint8_t>(Cause::kContextNotFound));
  EXPECT_TRUE(lookups_.asked.empty());
}

TEST_F(RestoreTest, AFullLookupRingDropsAndCounts) {
  const Attached s = attach("001010000000007");
  forget(s);
  useRestorer();
  lookups_.full = true;
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), sgw_).empty());
  EXPECT_EQ(header_->counters.restore_overflow.load(), 1u);
  EXPECT_EQ(restorer_->held(), 0u);
}

TEST_F(RestoreTest, StoredTeidsAreReservedBeforeAnyAllocation) {
  useRestorer(/*load_stored_teids=*/true);
  EXPECT_FALSE(restorer_->ready());
  restorer_->tick(1'000'000'000);
  // A window of partitions at a time, so that a held message's look-up never
  // queues behind every partition of the cold start.
  const std::size_t window = std::min<std::size_t>(layout_.local_partitions, kStoredTeidsAsking);
  ASSERT_EQ(lookups_.asked.size(), window);
  restorer_->tick(1'000'000'000);
  EXPECT_EQ(lookups_.asked.size(), window) << "no more until some are answered";

  // Partition 5 holds slots 0 and 2 (generation 1), in two chunks; the others nothing.
  const uint16_t p5 = 5;
  const uint32_t t0 = makeTeid(p5, 0, Leg::kAccess, 1);
  const uint32_t t2 = makeTeid(p5, 2, Leg::kAccess, 1);
  auto chunk = [&](uint16_t partition, std::vector<uint32_t> teids, bool last) {
    std::vector<uint8_t> bytes(sizeof(StoredTeidsChunk) + teids.size() * 4);
    const StoredTeidsChunk c{partition, static_cast<uint8_t>(RestoreOutcome::kFound), static_cast<uint8_t>(last),
                             static_cast<uint32_t>(teids.size())};
    std::memcpy(bytes.data(), &c, sizeof c);
    if (!teids.empty()) std::memcpy(bytes.data() + sizeof c, teids.data(), teids.size() * 4);
    restorer_->apply(LookupKind::kStoredTeids, bytes, 0, 0, Restorer::Replay{nullptr, nullptr});
  };
  // Each answer lets another partition be asked, once each, until all were.
  std::size_t answered = 0;
  uint64_t now = 1'000'000'000;
  while (answered < lookups_.asked.size()) {
    const uint16_t p = lookups_.asked[answered++].partition;
    if (p == p5) {
      chunk(p5, {t0}, false);
      chunk(p5, {t2}, true);
    } else if (p == 7) {
      // A failed partition is asked again after the pause.
      const StoredTeidsChunk failed{7, static_cast<uint8_t>(RestoreOutcome::kFailed), 1, 0};
      restorer_->apply(LookupKind::kStoredTeids, {reinterpret_cast<const uint8_t*>(&failed), sizeof failed}, 0, 0,
                       Restorer::Replay{nullptr, nullptr});
    } else {
      chunk(p, {}, true);
    }
    restorer_->tick(now += 1000);
  }
  ASSERT_EQ(lookups_.asked.size(), layout_.local_partitions) << "one question per partition";
  EXPECT_FALSE(restorer_->ready()) << "partition 7 is still unknown";
  restorer_->tick(2'100'000'000);
  ASSERT_EQ(lookups_.asked.size(), layout_.local_partitions + 1u);
  EXPECT_EQ(lookups_.asked.back().partition, 7u);
  chunk(7, {}, true);
  ASSERT_TRUE(restorer_->ready());
  EXPECT_EQ(header_->stored_teids_loaded, 1u);
  EXPECT_EQ(sessions_.stored(), 2u);
  EXPECT_EQ(header_->counters.sessions_stored.load(), 2u);

  // New sessions of partition 5 never get the stored TEIDs.
  std::set<uint32_t> given;
  for (int i = 0; i < 4; ++i) {
    SessionShm* n = sessions_.allocate(p5);
    ASSERT_NE(n, nullptr);
    given.insert(sessions_.teid(*n, Leg::kAccess));
  }
  EXPECT_FALSE(given.contains(t0));
  EXPECT_FALSE(given.contains(t2));
  EXPECT_EQ(given.size(), 4u);
  EXPECT_TRUE(sessions_.mayBeStored(t2));
  EXPECT_EQ(sessions_.find(t2), nullptr) << "reserved is not live";
}

// Another instance deleted stored sessions this worker reserved the TEIDs
// of: a partition with reservations asks again, and frees what its list no
// longer names; a list the storage could not give frees nothing.
TEST_F(RestoreTest, ReservationsTheStorageNoLongerNamesAreFreed) {
  useRestorer(/*load_stored_teids=*/true);
  const uint16_t p5 = 5;
  const uint32_t t0 = makeTeid(p5, 0, Leg::kAccess, 1);
  const uint32_t t2 = makeTeid(p5, 2, Leg::kAccess, 1);
  loadStored({{p5, {t0, t2}}}, 1'000'000'000);
  ASSERT_EQ(sessions_.stored(), 2u);
  const std::size_t asked = lookups_.asked.size();

  // A second later: partition 5, the only one with reservations, asks.
  restorer_->tick(2'100'000'000);
  ASSERT_EQ(lookups_.asked.size(), asked + 1);
  EXPECT_EQ(lookups_.asked.back().kind, LookupKind::kStoredTeids);
  EXPECT_EQ(lookups_.asked.back().partition, p5);
  storedChunk(p5, {}, true, RestoreOutcome::kFailed);
  EXPECT_EQ(sessions_.stored(), 2u) << "nothing freed on a failed list";

  restorer_->tick(3'200'000'000);
  ASSERT_EQ(lookups_.asked.size(), asked + 2);
  storedChunk(p5, {t0}, false);
  EXPECT_EQ(sessions_.stored(), 2u) << "not before the list is whole";
  storedChunk(p5, {}, true);
  EXPECT_EQ(sessions_.stored(), 1u);
  EXPECT_EQ(header_->counters.stored_released.load(), 1u);
  EXPECT_EQ(header_->counters.sessions_stored.load(), 1u);
  // t2's slot is free again; t0's still reserved.
  std::set<uint32_t> given;
  for (int i = 0; i < 3; ++i) given.insert(sessions_.teid(*sessions_.allocate(p5), Leg::kAccess));
  EXPECT_FALSE(given.contains(t0));
  EXPECT_TRUE(std::any_of(given.begin(), given.end(), [&](uint32_t t) { return splitTeid(t).slot == 2; }));
}

// A request that names its subscriber by IMSI alone, for a session held only
// in Redis: held while the subscriber's index is read, then relayed once the
// session is in.
class SubscriberTest : public RestoreTest {
 protected:
  std::vector<Sent> listed(uint16_t partition, const std::string& imsi, const std::vector<uint32_t>& teids,
                           RestoreOutcome outcome = RestoreOutcome::kFound) {
    SubscriberSessions a{};
    a.partition = partition;
    a.outcome = static_cast<uint8_t>(outcome);
    a.imsi_length = static_cast<uint8_t>(imsi.size());
    std::memcpy(a.imsi, imsi.data(), imsi.size());
    a.count = static_cast<uint32_t>(teids.size());
    std::vector<uint8_t> bytes(sizeof a + teids.size() * 4);
    std::memcpy(bytes.data(), &a, sizeof a);
    if (!teids.empty()) std::memcpy(bytes.data() + sizeof a, teids.data(), teids.size() * 4);
    egress_.sent.clear();
    const Restorer::Replay replay{[](void* self, const Arrival& ar, std::span<uint8_t> d) noexcept {
                                    static_cast<SubscriberTest*>(self)->proxy_->handle(ar, d);
                                  },
                                  this};
    restorer_->apply(LookupKind::kSubscriber, bytes, 1'100'000'000, 1'100'000'000, replay);
    return egress_.sent;
  }
};

TEST_F(SubscriberTest, ADownlinkTriggeringForASessionHeldOnlyInRedisIsHeldThenRelayed) {
  const Attached a = attach("001010000000442");
  const SessionShm stored = forget(a);
  useRestorer();
  const auto ddn = downlinkTriggering("001010000000442", 0x4502, 0x2222, a.pgw.ipv4());
  EXPECT_TRUE(feed(ddn, a.pgw).empty()) << "held while the storage is asked";
  ASSERT_EQ(lookups_.asked.size(), 1u);
  EXPECT_EQ(lookups_.asked[0].kind, LookupKind::kSubscriber);
  SubscriberLookup q;
  std::memcpy(&q, lookups_.asked[0].body.data(), sizeof q);
  EXPECT_EQ(std::string(q.imsi, q.imsi_length), "001010000000442");
  EXPECT_EQ(q.partition, partitionOf(a.access_teid));
  // The PGW's retransmission: held once.
  EXPECT_TRUE(feed(ddn, a.pgw).empty());
  EXPECT_EQ(lookups_.asked.size(), 1u);
  EXPECT_EQ(header_->counters.restore_duplicates.load(), 1u);

  // The index names the session: its record is asked for.
  EXPECT_TRUE(listed(q.partition, "001010000000442", {a.access_teid}).empty());
  ASSERT_EQ(lookups_.asked.size(), 2u);
  EXPECT_EQ(lookups_.asked[1].kind, LookupKind::kSession);
  // The record: the notification goes to the SGW with the proxy's F-TEID.
  const auto out = answer(a.access_teid, RestoreOutcome::kFound, &stored);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kSgw, kPort));
  const Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kPgwDownlinkTriggeringNotification);
  EXPECT_EQ(readFirst<FTeid>(m, 0)->teid, a.access_teid);
  EXPECT_EQ(restorer_->held(), 0u);
}

TEST_F(SubscriberTest, NoStoredSessionIsContextNotFoundAndAFailedIndexIsLeftToTheRetransmission) {
  useRestorer();
  const auto ddn = downlinkTriggering("001010000000443", 0x4503, 0x3333, kPgw1);
  const net::Address pgw = net::Address::v4(kPgw1, kPort);
  EXPECT_TRUE(feed(ddn, pgw).empty());
  ASSERT_EQ(lookups_.asked.size(), 1u);
  const uint16_t partition = lookups_.asked[0].partition;
  const auto out = listed(partition, "001010000000443", {});
  ASSERT_EQ(out.size(), 1u) << "answered by the proxy once the storage has none";
  EXPECT_EQ(out[0].to, pgw);
  EXPECT_EQ(readFirst<CauseIe>(decode(out[0].bytes))->value, static_cast<uint8_t>(Cause::kContextNotFound));

  EXPECT_TRUE(feed(downlinkTriggering("001010000000443", 0x4504, 0x3333, kPgw1), pgw).empty());
  EXPECT_TRUE(listed(partition, "001010000000443", {}, RestoreOutcome::kFailed).empty())
      << "the storage could not say: dropped, the PGW retransmits";
  EXPECT_EQ(restorer_->held(), 0u);
}

// Completion (restore.h): a gateway's restart is walked over the sessions
// held only in Redis too. Three sessions of pgw3, two of them forgotten (a
// failover, a fresh segment): the walk reads those two in and tells the SGW
// of all three.
class CompletionTest : public RestoreTest {
 protected:
  // Three sessions created with pgw3's Recovery 5; all but the first then
  // held only in Redis. Returns their records by access TEID.
  std::map<uint32_t, SessionShm> threeSessionsTwoStored() {
    std::map<uint32_t, SessionShm> stored;
    for (uint32_t i = 0; i < 3; ++i) {
      const Sent s = createFrom("00101000000034" + std::to_string(i), "ims", 0x340 + i, 340 + i, 1'000'000'000 + i);
      EXPECT_EQ(answerCreate(s, 16, uint8_t{5}).size(), 1u);
    }
    std::vector<uint32_t> live;
    SessionTable::Cursor cursor;
    while (!cursor.done(sessions_))
      sessions_.scan(cursor, 1 << 20, [&](SessionShm& s) {
        live.push_back(sessions_.teid(s, Leg::kAccess));
        return true;
      });
    std::sort(live.begin(), live.end());
    EXPECT_EQ(live.size(), 3u);
    for (std::size_t i = 1; i < live.size(); ++i) {
      SessionShm* slot = sessions_.find(live[i]);
      stored[live[i]] = *slot;
      sessions_.release(*slot);
    }
    return stored;
  }
  // The persister's part, until the completion ends: every partition's
  // list, every record.
  void answerCompletion(const std::map<uint32_t, SessionShm>& stored, uint64_t now) {
    if (!storage_) {
      storage_ = std::make_unique<StorageStandIn>(*restorer_, lookups_, replay());
      storage_->records = stored;
    }
    storage_->completion(now);
    session_lookups = storage_->session_lookups;
  }
  Restorer::Replay replay() {
    return Restorer::Replay{[](void* self, const Arrival& a, std::span<uint8_t> d) noexcept {
                              static_cast<CompletionTest*>(self)->proxy_->handle(a, d);
                            },
                            this};
  }
  std::unique_ptr<StorageStandIn> storage_;
  // The Delete Bearer Requests of the restart, by header TEID, over a few
  // seconds of ticks.
  std::set<uint32_t> notifiedAfterRestart(const std::map<uint32_t, SessionShm>& stored) {
    const Sent later = createFrom("001010000000349", "ims", 0x349, 349, 2'000'000'000);
    EXPECT_EQ(answerCreate(later, 16, uint8_t{6}, 2'000'000'000).size(), 1u);
    EXPECT_EQ(header_->counters.gateway_restarts.load(), 1u);
    std::set<uint32_t> teids;
    uint64_t now = 2'000'000'000;
    for (int i = 0; i < 8; ++i) {
      egress_.sent.clear();
      proxy_->tick(now += 500'000'000);
      const std::vector<Sent> out = egress_.sent;
      for (const Sent& s : out) {
        const Message m = decode(s.bytes);
        EXPECT_EQ(m.messageType(), MessageType::kDeleteBearerRequest);
        teids.insert(m.header().teid);
      }
      answerCompletion(stored, now);
    }
    return teids;
  }
  int session_lookups = 0;
};

TEST_F(CompletionTest, AGatewayRestartIsWalkedOverTheSessionsHeldOnlyInRedis) {
  const auto stored = threeSessionsTwoStored();
  useRestorer();
  const std::set<uint32_t> teids = notifiedAfterRestart(stored);
  EXPECT_EQ(teids, (std::set<uint32_t>{0x340, 0x341, 0x342})) << "every SGW told, the stored sessions' too";
  EXPECT_EQ(session_lookups, 2) << "only the sessions not held were read";
  EXPECT_EQ(header_->counters.completions.load(), 1u);
  EXPECT_EQ(header_->counters.completion_reads.load(), 2u);
  EXPECT_EQ(header_->counters.restart_sessions_removed.load(), 3u);
  EXPECT_EQ(sessions_.active(), 1u) << "the session created with the new Recovery stays";
}

TEST_F(CompletionTest, AnInstanceThatDoesNotActForStoredSessionsWalksWhatItHolds) {
  const auto stored = threeSessionsTwoStored();
  useRestorer();
  const std::atomic<uint32_t> standby{0};
  restorer_->setActsFlag(&standby);
  const std::set<uint32_t> teids = notifiedAfterRestart(stored);
  EXPECT_EQ(teids.size(), 1u) << "the active tells the others";
  EXPECT_EQ(session_lookups, 0);
  EXPECT_EQ(header_->counters.completions.load(), 0u);
}

TEST_F(CompletionTest, ACompletionStopsWhenAnotherInstanceTakesTheTrafficOver) {
  threeSessionsTwoStored();
  useRestorer();
  std::atomic<uint32_t> acts{1};
  restorer_->setActsFlag(&acts);
  ASSERT_TRUE(restorer_->complete());
  restorer_->tick(2'000'000'000);
  EXPECT_TRUE(restorer_->completing());
  acts = 0;  // the other instance wrote since
  restorer_->tick(2'000'001'000);
  EXPECT_FALSE(restorer_->completing());
  EXPECT_EQ(restorer_->completions(), 0u) << "not a completion: a walk does not go again for it";
  EXPECT_FALSE(restorer_->complete()) << "nor starts one while the other acts";
}

TEST(SessionTableStored, ReserveInstallForget) {
  const WorkerLayout layout = WorkerLayout::compute(2, 1, 16, 64, 1 << 12);
  std::vector<uint64_t> memory(layout.total / 8 + 1);
  auto* base = reinterpret_cast<uint8_t*>(memory.data());
  SessionTable t(layout, reinterpret_cast<PartitionShm*>(base + layout.partitions_offset),
                 reinterpret_cast<SessionShm*>(base + layout.sessions_offset));
  t.rebuild();
  const uint16_t p = 3;  // worker 1 of 2 owns the odd partitions
  const uint32_t stored = makeTeid(p, 5, Leg::kAccess, 9);
  EXPECT_FALSE(t.reserve(makeTeid(2, 5, Leg::kAccess, 9))) << "another worker's partition";
  ASSERT_TRUE(t.reserve(stored));
  EXPECT_EQ(t.stored(), 1u);
  EXPECT_EQ(t.active(), 0u);
  EXPECT_TRUE(t.mayBeStored(stored));
  EXPECT_TRUE(t.mayBeStored(stored | 0x80)) << "by its gateway TEID too";
  EXPECT_FALSE(t.mayBeStored(makeTeid(p, 5, Leg::kAccess, 8))) << "another generation of a reserved slot";
  // Every other slot is still allocatable, the reserved one never.
  std::set<uint32_t> slots;
  std::vector<uint32_t> teids;
  for (int i = 0; i < 15; ++i) {
    SessionShm* s = t.allocate(p);
    ASSERT_NE(s, nullptr) << i;
    teids.push_back(t.teid(*s, Leg::kAccess));
    slots.insert(splitTeid(teids.back()).slot);
  }
  EXPECT_EQ(t.allocate(p), nullptr) << "full: 15 allocated + 1 reserved";
  EXPECT_FALSE(slots.contains(5));

  SessionShm record{};
  record.state = static_cast<uint8_t>(SessionState::kActive);
  record.default_ebi = 5;
  SessionShm* in = t.install(stored, record);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->generation, 9);
  EXPECT_EQ(t.find(stored | 0x80), in);
  EXPECT_EQ(t.stored(), 0u);
  EXPECT_EQ(t.install(stored, record), in) << "twice: the same session";
  EXPECT_EQ(t.install(makeTeid(p, 5, Leg::kAccess, 10), record), nullptr) << "its slot is live: a conflict";

  // A slot in the middle of the free chain: three sessions end, the record
  // of the middle one's slot comes back (another instance made it since).
  for (int i = 3; i < 6; ++i) t.release(*t.find(teids[i]));
  const TeidParts middle = splitTeid(teids[4]);
  const uint32_t back = makeTeid(p, middle.slot, Leg::kAccess, nextGeneration(middle.generation));
  ASSERT_NE(t.install(back, record), nullptr);
  for (int i = 0; i < 2; ++i) {
    SessionShm* s = t.allocate(p);
    ASSERT_NE(s, nullptr);
    EXPECT_NE(splitTeid(t.teid(*s, Leg::kAccess)).slot, middle.slot);
  }
  EXPECT_EQ(t.allocate(p), nullptr);
  // One far above the high-water mark: the slots below it stay allocatable.
  const uint32_t far = makeTeid(5, 12, Leg::kAccess, 4);
  ASSERT_NE(t.install(far, record), nullptr);
  for (int i = 0; i < 11; ++i) {
    SessionShm* s = t.allocate(5);
    ASSERT_NE(s, nullptr);
    EXPECT_NE(splitTeid(t.teid(*s, Leg::kAccess)).slot, 12u);
  }
  const uint32_t freed = makeTeid(7, 0, Leg::kAccess, 1);
  ASSERT_TRUE(t.reserve(freed));
  t.forget(freed);
  EXPECT_EQ(t.stored(), 0u);
  EXPECT_NE(t.allocate(7), nullptr) << "a forgotten slot is free again";
  t.rebuild();
  EXPECT_EQ(t.stored(), 0u);
}

}  // namespace
}  // namespace gtpcp::worker::test
