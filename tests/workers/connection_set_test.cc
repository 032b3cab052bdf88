// PDN connection sets (workers/lib/connection_set.h, connection_set_deletions.h):
// the FQ-CSIDs a session's messages carry are kept, a Delete PDN Connection
// Set Request deletes the sessions it names and is sent on once to each peer
// of the other leg, and Update PDN Connection Set is relayed like any request
// of a session.
#include "workers/lib/connection_set.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/workers/proxy_fixture.h"
#include "tests/workers/storage_stand_in.h"

namespace gtpcp::worker::test {
namespace {

const Ipv4 kMme{{10, 9, 9, 1}};
const Ipv4 kSgwNode{{10, 9, 9, 11}};  // the SGW's node-ID: need not be its S5/S8 address
const Ipv4 kPgwNode{{10, 9, 9, 21}};

FqCsid fqCsid(const Ipv4& node, std::initializer_list<uint16_t> csids) {
  FqCsid f;
  f.node_id_type = 0;
  f.ipv4 = node;
  for (uint16_t c : csids) f.csids[f.csid_count++] = c;
  return f;
}

class ConnectionSetTest : public ProxyTest {
 protected:
  struct Session {
    uint32_t access_teid;   // the proxy's TEID the SGW uses
    uint32_t gateway_teid;  // the proxy's TEID the PGW uses
    net::Address pgw;
  };

  // Attaches `imsi` from `sgw` with the MME's and the SGW's CSIDs in the
  // Create Session Request and the PGW's in the response.
  Session attachWith(const std::string& imsi, const Ipv4& sgw, uint16_t mme_csid, uint16_t sgw_csid,
                     uint16_t pgw_csid, const std::string& apn = "internet") {
    auto out = feed(createSessionRequest(imsi, apn, 0x1000 + mme_csid, ++sgw_sequence_, sgw,
                                         {{fqCsid(kMme, {mme_csid}), 0}, {fqCsid(kSgwNode, {sgw_csid}), 1}}),
                    net::Address::v4(sgw, kPort));
    EXPECT_EQ(out.size(), 1u);
    if (out.size() != 1) return {};
    Message to_pgw = decode(out[0].bytes);
    const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
    auto resp = feed(createSessionResponse(gateway_teid, to_pgw.header().sequence_number, 16, 0x2222,
                                           out[0].to.ipv4(), std::nullopt, {{fqCsid(kPgwNode, {pgw_csid}), 0}}),
                     out[0].to);
    EXPECT_EQ(resp.size(), 1u);
    if (resp.size() != 1) return {};
    // Passed through unchanged both ways.
    EXPECT_EQ(readFirst<FqCsid>(to_pgw, 1)->csids[0], sgw_csid);
    EXPECT_EQ(*readFirst<FqCsid>(decode(resp[0].bytes), 0)->ipv4, kPgwNode);
    return Session{readFirst<FTeid>(decode(resp[0].bytes), 1)->teid, gateway_teid, out[0].to};
  }

  // A message of FQ-CSIDs (a Cause first when given).
  static std::vector<uint8_t> withCsids(MessageType type, uint32_t teid, uint32_t sequence,
                                        const std::vector<CsidIe>& csids, std::optional<uint8_t> cause = {}) {
    std::vector<uint8_t> buf(512);
    Builder b(buf);
    b.begin(type, teid, sequence);
    addCause(b, cause);
    return finish(b, buf, csids);
  }
  static std::vector<uint8_t> deleteSet(uint32_t sequence, const std::vector<CsidIe>& csids) {
    return withCsids(MessageType::kDeletePdnConnectionSetRequest, 0, sequence, csids);
  }
  // Whether the session of `teid` is still there once `from` deleted `csid`.
  bool survives(uint32_t teid, const net::Address& from, uint32_t sequence, const CsidIe& csid) {
    feed(deleteSet(sequence, {csid}), from);
    turn();
    return live(teid);
  }

  // The worker's turns after a request: the walk over the sessions.
  std::vector<Sent> turn(uint64_t now = 1'100'000'000) {
    egress_.sent.clear();
    proxy_->tick(now);
    return egress_.sent;
  }

  bool live(uint32_t teid) { return sessions_.find(teid) != nullptr; }

  uint32_t sgw_sequence_ = 100;  // a new number for each creation: not a retransmission
};

// The sessions of the set that this worker holds only in Redis (after a
// failover, a restart, a demotion) are read in and deleted too.
TEST_F(ConnectionSetTest, TheSessionsOfTheSetHeldOnlyInRedisAreDeletedToo) {
  std::vector<Session> set1;
  for (int i = 0; i < 4; ++i) set1.push_back(attachWith("00101000000010" + std::to_string(i), kSgw, 1, 1, 1));
  const Session kept = attachWith("001010000000199", kSgw, 1, 2, 1);
  RestoreSettings settings;
  settings.load_stored_teids = false;
  RecordingLookups lookups;
  Restorer restorer(settings, layout_, sessions_, header_->counters, lookups, header_->stored_teids_loaded);
  proxy_->setRestorer(&restorer);
  StorageStandIn storage(restorer, lookups, Restorer::Replay{nullptr, nullptr});
  // Three of the set and the kept one are in Redis only.
  for (const Session& s : {set1[1], set1[2], set1[3], kept}) {
    SessionShm* slot = sessions_.find(s.access_teid);
    ASSERT_NE(slot, nullptr);
    storage.records[s.access_teid] = *slot;
    sessions_.release(*slot);
  }
  ASSERT_EQ(sessions_.active(), 1u);

  auto out = feed(deleteSet(0x3302, {{fqCsid(kSgwNode, {1}), 1}}), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(out[0].bytes))->value, static_cast<uint8_t>(Cause::kRequestAccepted));
  ASSERT_TRUE(restorer.completing());
  std::set<std::string> told;
  uint64_t now = 1'100'000'000;
  for (int i = 0; i < 4; ++i) {
    for (const Sent& r : turn(now += 1'000'000)) told.insert(r.to.toString());
    storage.completion(now);
  }
  EXPECT_EQ(storage.session_lookups, 4);
  for (const Session& s : set1) EXPECT_FALSE(live(s.access_teid));
  EXPECT_TRUE(live(kept.access_teid)) << "read in, and not of the set";
  EXPECT_EQ(header_->counters.connection_set_sessions_deleted.load(), 4u);
  EXPECT_EQ(told, (std::set<std::string>{net::Address::v4(kPgw1, kPort).toString(),
                                         net::Address::v4(kPgw2, kPort).toString()}))
      << "each PGW told once";
  proxy_->setRestorer(nullptr);
}

TEST(Csids, AreKeptPerNodeFromTheMessagesThatCarryThem) {
  std::vector<uint8_t> buf(256);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, 1);
  b.add(fqCsid(kMme, {5, 6}), 0);
  b.add(fqCsid(kSgwNode, {7}), 1);
  Message m;
  ASSERT_TRUE(m.decode(*b.finish()));
  SessionShm s{};
  noteCsids(s, m);
  const CsidShm& mme = s.csids[static_cast<int>(CsidNode::kAccessCore)];
  EXPECT_EQ(mme.node_id_type, 1);  // IPv4, + 1
  EXPECT_EQ(mme.csid, 5) << "a connection is in one set of each node: the first CSID";
  EXPECT_EQ(s.csids[static_cast<int>(CsidNode::kSgw)].csid, 7);
  EXPECT_EQ(s.csids[static_cast<int>(CsidNode::kPgw)].node_id_type, 0);
  EXPECT_TRUE(csidIn(mme, fqCsid(kMme, {1, 5})));
  EXPECT_FALSE(csidIn(mme, fqCsid(kMme, {6}))) << "only the CSID the connection is in";
  EXPECT_FALSE(csidIn(mme, fqCsid(kSgwNode, {5}))) << "a CSID names a set only with its node";

  // An IPv6 node-ID and an MCC/MNC-based one.
  FqCsid v6;
  v6.node_id_type = 1;
  v6.ipv6 = Ipv6{{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
  v6.csids[v6.csid_count++] = 9;
  FqCsid plmn;
  plmn.node_id_type = 2;
  plmn.node_id = 0x00101abc;
  plmn.csids[plmn.csid_count++] = 3;
  std::vector<uint8_t> buf2(256);
  Builder b2(buf2);
  b2.begin(MessageType::kModifyBearerRequest, 0x10, 2);
  b2.add(plmn, 0);
  b2.add(v6, 1);
  b2.add(fqCsid(kPgwNode, {1}), 2);  // not an MBR's: ignored
  Message m2;
  ASSERT_TRUE(m2.decode(*b2.finish()));
  noteCsids(s, m2);
  EXPECT_TRUE(csidIn(s.csids[0], plmn));
  EXPECT_TRUE(csidIn(s.csids[1], v6));
  FqCsid other_v6 = v6;
  other_v6.ipv6->octets[15] = 2;
  EXPECT_FALSE(csidIn(s.csids[1], other_v6));
  EXPECT_EQ(s.csids[2].node_id_type, 0);

  CsidSet set;
  EXPECT_TRUE(set.read(m2));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.matches(s));
  SessionShm none{};
  EXPECT_FALSE(set.matches(none));
}

TEST_F(ConnectionSetTest, FromTheSgwDeletesTheSessionsNamedAndTellsEachPgwOnce) {
  // Four sessions in SGW set 1 (three on pgw1, one on pgw2: weights 3:1),
  // one in SGW set 2.
  std::vector<Session> set1;
  for (int i = 0; i < 4; ++i) set1.push_back(attachWith("00101000000010" + std::to_string(i), kSgw, 1, 1, 1));
  const Session kept = attachWith("001010000000199", kSgw, 1, 2, 1);
  ASSERT_EQ(sessions_.active(), 5u);

  auto out = feed(deleteSet(0x3301, {{fqCsid(kSgwNode, {1}), 1}}), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  Message answer = decode(out[0].bytes);
  EXPECT_EQ(answer.messageType(), MessageType::kDeletePdnConnectionSetResponse);
  EXPECT_EQ(answer.header().teid, 0u);
  EXPECT_EQ(answer.header().sequence_number, 0x3301u);
  EXPECT_EQ(readFirst<CauseIe>(answer)->value, static_cast<uint8_t>(Cause::kRequestAccepted));
  EXPECT_EQ(out[0].to, net::Address::v4(kSgw, kPort));

  auto relayed = turn();
  std::set<std::string> pgws;
  std::set<uint32_t> numbers;
  for (const Sent& r : relayed) {
    Message m = decode(r.bytes);
    EXPECT_EQ(m.messageType(), MessageType::kDeletePdnConnectionSetRequest);
    EXPECT_EQ(m.header().teid, 0u);
    EXPECT_NE(m.header().sequence_number, 0x3301u) << "the proxy's own number toward each PGW";
    auto fq = readFirst<FqCsid>(m, 1);
    ASSERT_TRUE(fq) << "the FQ-CSIDs go as the SGW sent them";
    EXPECT_EQ(*fq->ipv4, kSgwNode);
    EXPECT_EQ(fq->csids[0], 1);
    pgws.insert(r.to.toString());
    numbers.insert(m.header().sequence_number);
  }
  EXPECT_EQ(relayed.size(), 2u);
  EXPECT_EQ(pgws, (std::set<std::string>{net::Address::v4(kPgw1, kPort).toString(),
                                         net::Address::v4(kPgw2, kPort).toString()}));
  EXPECT_EQ(numbers.size(), 2u);
  for (const Session& s : set1) EXPECT_FALSE(live(s.access_teid));
  EXPECT_TRUE(live(kept.access_teid));
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_EQ(header_->counters.connection_set_sessions_deleted.load(), 4u);
  EXPECT_EQ(header_->counters.connection_set_requests_sent.load(), 2u);

  // The PGWs answer; a second turn sends nothing more.
  for (const Sent& r : relayed) {
    Message m = decode(r.bytes);
    auto done = feed(simple(MessageType::kDeletePdnConnectionSetResponse, 0, m.header().sequence_number, 16), r.to);
    EXPECT_TRUE(done.empty());
  }
  EXPECT_EQ(header_->counters.own_requests_answered.load(), 2u);
  EXPECT_TRUE(turn(5'000'000'000).empty()) << "answered: not sent again after T3";
  // A modification of a deleted session: nothing left to relay it to.
  auto late = feed(simple(MessageType::kModifyBearerRequest, set1[0].access_teid, 0x3302), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(late[0].bytes))->value, static_cast<uint8_t>(Cause::kContextNotFound));
}

TEST_F(ConnectionSetTest, FromAPgwDeletesItsSessionsAndTellsEachSgw) {
  // Pool ims: one PGW, pgw3.
  const Session a = attachWith("001010000000201", kSgw, 1, 1, 40, "ims");
  const Session b = attachWith("001010000000202", kSgw2, 1, 1, 40, "ims");
  const Session c = attachWith("001010000000203", kSgw2, 1, 1, 40, "ims");
  const Session other_set = attachWith("001010000000204", kSgw, 1, 1, 41, "ims");
  ASSERT_EQ(a.pgw, net::Address::v4(kPgw3, kPort));
  ASSERT_EQ(a.pgw, b.pgw);
  ASSERT_EQ(a.pgw, c.pgw);

  auto out = feed(deleteSet(0x77, {{fqCsid(kPgwNode, {40, 99}), 2}}), a.pgw);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(out[0].bytes))->value, static_cast<uint8_t>(Cause::kRequestAccepted));
  EXPECT_EQ(out[0].to, a.pgw);
  auto relayed = turn();
  std::set<std::string> sgws;
  for (const Sent& r : relayed) {
    EXPECT_EQ(decode(r.bytes).messageType(), MessageType::kDeletePdnConnectionSetRequest);
    sgws.insert(r.to.toString());
  }
  EXPECT_EQ(sgws, (std::set<std::string>{net::Address::v4(kSgw, kPort).toString(),
                                         net::Address::v4(kSgw2, kPort).toString()}));
  EXPECT_EQ(relayed.size(), 2u);
  EXPECT_FALSE(live(a.access_teid));
  EXPECT_FALSE(live(b.access_teid));
  EXPECT_FALSE(live(c.access_teid));
  EXPECT_TRUE(live(other_set.access_teid));
}

TEST_F(ConnectionSetTest, ANodeDeletesOnlyTheSessionsItIsAPeerOf) {
  const Session s = attachWith("001010000000301", kSgw, 3, 3, 3);
  // Another SGW naming the first one's set: not its sessions.
  auto out = feed(deleteSet(0x10, {{fqCsid(kSgwNode, {3}), 1}}), net::Address::v4(kSgw2, kPort));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(out[0].bytes))->value, static_cast<uint8_t>(Cause::kRequestAccepted));
  EXPECT_TRUE(turn().empty());
  EXPECT_TRUE(live(s.access_teid));
  // A set of the requester's that holds none of its sessions: nothing goes either.
  feed(deleteSet(0x11, {{fqCsid(kSgwNode, {4}), 1}}), net::Address::v4(kSgw, kPort));
  EXPECT_TRUE(turn().empty());
  EXPECT_TRUE(live(s.access_teid));
}

TEST_F(ConnectionSetTest, ARetransmittedRequestIsAnsweredAgainAndWalkedOnce) {
  const Session s = attachWith("001010000000401", kSgw, 8, 8, 8);
  const auto request = deleteSet(0x55, {{fqCsid(kMme, {8}), 0}});
  auto first = feed(request, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(turn().size(), 1u);
  EXPECT_FALSE(live(s.access_teid));
  auto again = feed(request, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].bytes, first[0].bytes);
  EXPECT_TRUE(turn().empty());
  EXPECT_EQ(header_->counters.connection_sets_deleted.load(), 1u);
  EXPECT_EQ(header_->counters.answers_replayed.load(), 1u);
}

TEST_F(ConnectionSetTest, ARequestNamingNoSetGetsConditionalIeMissing) {
  auto out = feed(deleteSet(0x66, {}), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  auto cause = readFirst<CauseIe>(decode(out[0].bytes));
  EXPECT_EQ(cause->value, static_cast<uint8_t>(Cause::kConditionalIeMissing));
  ASSERT_TRUE(cause->offending_ie);
  EXPECT_EQ(cause->offending_ie->type, static_cast<uint8_t>(IeType::kFqCsid));
}

TEST_F(ConnectionSetTest, UpdatePdnConnectionSetIsRelayedAndMovesTheSessionToItsNewSets) {
  const Session s = attachWith("001010000000501", kSgw, 20, 20, 20);
  // The MME restarted its set 20 as set 21 (TS 23.007 §16.2): the SGW tells the PGW.
  auto out = feed(withCsids(MessageType::kUpdatePdnConnectionSetRequest, s.access_teid, 0x901, {{fqCsid(kMme, {21}), 0}}),
                  net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, s.pgw);
  Message to_pgw = decode(out[0].bytes);
  EXPECT_EQ(to_pgw.header().teid, 0x2222u) << "the PGW's own TEID";
  EXPECT_EQ(readFirst<FqCsid>(to_pgw, 0)->csids[0], 21);
  // The PGW answers with its own set, renumbered too.
  auto back = feed(withCsids(MessageType::kUpdatePdnConnectionSetResponse, s.gateway_teid,
                             to_pgw.header().sequence_number, {{fqCsid(kPgwNode, {22}), 0}}, 16),
                   s.pgw);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(decode(back[0].bytes).header().sequence_number, 0x901u);

  // The old sets no longer name the session; the new ones do.
  EXPECT_TRUE(survives(s.access_teid, net::Address::v4(kSgw, kPort), 0x902, {fqCsid(kMme, {20}), 0}));
  EXPECT_TRUE(survives(s.access_teid, s.pgw, 0x903, {fqCsid(kPgwNode, {20}), 2}));
  EXPECT_FALSE(survives(s.access_teid, s.pgw, 0x904, {fqCsid(kPgwNode, {22}), 2}));
}

TEST_F(ConnectionSetTest, AModifyBearerRequestCarryingNewSetsMovesTheSession) {
  const Session s = attachWith("001010000000601", kSgw, 30, 30, 30);
  // An SGW relocation keeps the PDN connection: the new SGW's set.
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  ASSERT_EQ(feed(withCsids(MessageType::kModifyBearerRequest, s.access_teid, 0x1001, {{fqCsid(kSgwNode, {31}), 1}}),
                 sgw).size(),
            1u);
  EXPECT_TRUE(survives(s.access_teid, sgw, 0x1002, {fqCsid(kSgwNode, {30}), 1}));
  EXPECT_FALSE(survives(s.access_teid, sgw, 0x1003, {fqCsid(kSgwNode, {31}), 1}));
}

}  // namespace
}  // namespace gtpcp::worker::test
