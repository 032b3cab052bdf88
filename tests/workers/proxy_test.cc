// The worker's procedures (workers/lib/proxy.h) fed directly, without rings
// or sockets: what leaves the proxy for each message, octet by octet where it
// matters (TEIDs, sequence numbers, F-TEIDs), and what the session and
// transaction tables hold afterwards.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <map>
#include <set>
#include <memory>
#include <vector>

#include "common/partition.h"
#include "tests/workers/proxy_fixture.h"

namespace gtpcp::worker::test {
namespace {

TEST_F(ProxyTest, CreateSessionRequestGoesToAGatewayWithTheProxysControlFTeid) {
  auto out = feed(createSessionRequest("001010000000001", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  // pgw1 or pgw2 of pool internet, on GTP-C's port.
  EXPECT_TRUE(out[0].to == net::Address::v4(kPgw1, kPort) || out[0].to == net::Address::v4(kPgw2, kPort))
      << out[0].to.toString();
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.header().teid, 0u) << "the PGW has no TEID for the session yet";
  auto sender = readFirst<FTeid>(m, 0);
  ASSERT_TRUE(sender);
  EXPECT_EQ(sender->interface_type, 6);
  EXPECT_EQ(*sender->ipv4, kProxy) << "the PGW must answer the proxy, not the SGW";
  EXPECT_NE(sender->teid, 0x1111u);
  EXPECT_EQ(partitionOf(sender->teid), partitionOf(std::string_view("001010000000001")));
  // The bearer's user-plane F-TEID is left exactly as the SGW sent it.
  const Ie* bc = m.find(IeType::kBearerContext);
  ASSERT_NE(bc, nullptr);
  auto user = read<FTeid>(m, *m.findChild(*bc, IeType::kFTeid, 2));
  EXPECT_EQ(user->teid, 0xabcd0001u);
  EXPECT_EQ(*user->ipv4, (Ipv4{{10, 1, 1, 1}}));
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, AcceptedCreateSessionResponseReachesTheSgwTranslated) {
  auto out = feed(createSessionRequest("001010000000002", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
  // A PGW answering from an ephemeral port: matched by sequence number and TEID.
  auto resp = feed(createSessionResponse(gateway_teid, to_pgw.header().sequence_number, 16, 0x2222, kPgw1),
                   net::Address::v4(out[0].to.ipv4(), 40000));
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, net::Address::v4(kSgw, kPort));
  Message m = decode(resp[0].bytes);
  EXPECT_EQ(m.header().teid, 0x1111u) << "the SGW's own TEID";
  EXPECT_EQ(m.header().sequence_number, 7u) << "the SGW's own sequence number";
  auto pgw = readFirst<FTeid>(m, 1);
  EXPECT_EQ(*pgw->ipv4, kProxy);
  EXPECT_NE(pgw->teid, gateway_teid) << "each leg has its own proxy TEID";
  EXPECT_EQ(partitionOf(pgw->teid), partitionOf(gateway_teid));
  EXPECT_EQ(header_->counters.sessions_created.load(), 1u);
}

TEST_F(ProxyTest, RejectedCreationLeavesNoSession) {
  auto out = feed(createSessionRequest("001010000000003", "internet", 0x1111, 9, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  auto resp = feed(createSessionResponse(readFirst<FTeid>(to_pgw, 0)->teid, to_pgw.header().sequence_number, 73, 0, kPgw1),
                   out[0].to);
  ASSERT_EQ(resp.size(), 1u);
  Message m = decode(resp[0].bytes);
  EXPECT_EQ(readFirst<CauseIe>(m)->value, 73);
  EXPECT_EQ(m.header().sequence_number, 9u);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.sessions_rejected.load(), 1u);
}

TEST_F(ProxyTest, ModifyBearerAndDeleteSessionAreRelayedBothWays) {
  Attached s = attach("001010000000004");
  // SGW -> proxy: Modify Bearer Request to the proxy's access TEID.
  auto mbr = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 100), net::Address::v4(kSgw, 33000));
  ASSERT_EQ(mbr.size(), 1u);
  EXPECT_EQ(mbr[0].to, s.pgw);
  Message to_pgw = decode(mbr[0].bytes);
  EXPECT_EQ(to_pgw.header().teid, 0x2222u) << "the PGW's TEID";
  const uint32_t proxy_seq = to_pgw.header().sequence_number;
  // PGW -> proxy: response to the proxy's gateway TEID, the proxy's number.
  auto resp = feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw);
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, net::Address::v4(kSgw, 33000)) << "to where the request came from";
  Message to_sgw = decode(resp[0].bytes);
  EXPECT_EQ(to_sgw.header().teid, 0x1111u);
  EXPECT_EQ(to_sgw.header().sequence_number, 100u);

  auto dsr = feed(simple(MessageType::kDeleteSessionRequest, s.access_teid, 101), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(dsr.size(), 1u);
  auto dresp = feed(simple(MessageType::kDeleteSessionResponse, s.gateway_teid,
                           decode(dsr[0].bytes).header().sequence_number, 16),
                    s.pgw);
  ASSERT_EQ(dresp.size(), 1u);
  EXPECT_EQ(sessions_.active(), 0u);
  // The session is gone: its TEID now gets Context Not Found.
  auto late = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 102), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(late.size(), 1u);
  Message cnf = decode(late[0].bytes);
  EXPECT_EQ(cnf.messageType(), MessageType::kModifyBearerResponse);
  EXPECT_EQ(readFirst<CauseIe>(cnf)->value, static_cast<uint8_t>(Cause::kContextNotFound));
  EXPECT_EQ(cnf.header().sequence_number, 102u);
}

// -- answers that come after their session ended, or that name another ------------

class CrossedAnswerTest : public ProxyTest {
 protected:
  // A Modify Bearer Request relayed to the PGW, then the session deleted
  // before its answer comes back (with the proxy's TEID in its header, or
  // TEID 0): the answer closes the transaction (nobody is left to relay it
  // to), and the SGW's copy of the request is a new request for an unknown
  // session.
  void answerAfterADeleteCrossedIt(const std::string& imsi, bool with_header_teid) {
    const Attached s = attach(imsi);
    const net::Address sgw = net::Address::v4(kSgw, kPort);
    const auto mbr = simple(MessageType::kModifyBearerRequest, s.access_teid, 430);
    auto out = feed(mbr, sgw);
    ASSERT_EQ(out.size(), 1u);
    const uint32_t proxy_seq = decode(out[0].bytes).header().sequence_number;
    auto dsr = feed(simple(MessageType::kDeleteSessionRequest, s.access_teid, 431), sgw);
    ASSERT_EQ(dsr.size(), 1u);
    const uint32_t dsr_seq = decode(dsr[0].bytes).header().sequence_number;
    ASSERT_EQ(feed(simple(MessageType::kDeleteSessionResponse, s.gateway_teid, dsr_seq, 16), s.pgw).size(), 1u);
    ASSERT_EQ(sessions_.active(), 0u);
    ASSERT_EQ(transactions_.pending(), 1u) << "the Modify Bearer Request's";

    const uint32_t teid = with_header_teid ? s.gateway_teid : 0;
    EXPECT_TRUE(feed(simple(MessageType::kModifyBearerResponse, teid, proxy_seq, 16), s.pgw).empty());
    const WorkerCounters& counters = header_->counters;
    EXPECT_EQ(counters.responses_session_gone.load(), 1u);
    EXPECT_EQ(counters.responses_unmatched.load(), 0u);
    EXPECT_EQ(transactions_.pending(), 0u) << "closed, not left to expire";
    EXPECT_EQ(counters.transactions_live.load(), transactions_.live());
    auto again = feed(mbr, sgw);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(readFirst<CauseIe>(decode(again[0].bytes))->value, static_cast<uint8_t>(Cause::kContextNotFound));
    EXPECT_EQ(counters.requests_retransmitted.load(), 0u) << "no transaction took the copy for a retransmission";
    for (uint64_t now = 10; now <= 16; ++now) proxy_->tick(now * 1'000'000'000);
    EXPECT_EQ(counters.transactions_expired.load(), 0u);
  }
};

TEST_F(CrossedAnswerTest, AnAnswerWithTheTeidOfASessionThatEndedMeanwhileClosesItsTransaction) {
  answerAfterADeleteCrossedIt("001010000000430", true);
}

TEST_F(CrossedAnswerTest, AnAnswerWithoutATeidForASessionThatEndedMeanwhileClosesItsTransaction) {
  answerAfterADeleteCrossedIt("001010000000431", false);
}

TEST_F(ProxyTest, AnAnswerNamingAnotherSessionsTeidLeavesTheTransactionPending) {
  Attached a = attach("001010000000432", 0x4321, 432);
  Attached b = attach("001010000000433", 0x4331, 433);
  auto out = feed(simple(MessageType::kModifyBearerRequest, a.access_teid, 434), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  const uint32_t proxy_seq = decode(out[0].bytes).header().sequence_number;
  // The proxy's number with another session's TEID, then with no session's:
  // neither is this transaction's answer.
  for (uint32_t teid : {b.gateway_teid, a.gateway_teid ^ 0x1u}) {
    EXPECT_TRUE(feed(simple(MessageType::kModifyBearerResponse, teid, proxy_seq, 16), a.pgw).empty());
  }
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 2u);
  EXPECT_EQ(header_->counters.responses_session_gone.load(), 0u);
  EXPECT_EQ(transactions_.pending(), 1u) << "still waiting for its answer";
  auto answer = feed(simple(MessageType::kModifyBearerResponse, a.gateway_teid, proxy_seq, 16), a.pgw);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(decode(answer[0].bytes).header().teid, 0x4321u);
  EXPECT_EQ(transactions_.pending(), 0u);
}

TEST_F(ProxyTest, TwoSgwsWithTheSameSequenceNumberDoNotCollide) {
  auto a = feed(createSessionRequest("001010000000005", "ims", 0x10, 5000, kSgw), net::Address::v4(kSgw, kPort));
  auto b = feed(createSessionRequest("001010000000006", "ims", 0x20, 5000, kSgw2), net::Address::v4(kSgw2, kPort));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].to, net::Address::v4(kPgw3, kPort));
  EXPECT_EQ(b[0].to, net::Address::v4(kPgw3, kPort));
  Message ma = decode(a[0].bytes), mb = decode(b[0].bytes);
  EXPECT_NE(ma.header().sequence_number, mb.header().sequence_number);
  // Answered in the opposite order, each answer reaches its own SGW.
  auto rb = feed(createSessionResponse(readFirst<FTeid>(mb, 0)->teid, mb.header().sequence_number, 16, 0x99, kPgw3), b[0].to);
  auto ra = feed(createSessionResponse(readFirst<FTeid>(ma, 0)->teid, ma.header().sequence_number, 16, 0x98, kPgw3), a[0].to);
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(ra[0].to, net::Address::v4(kSgw, kPort));
  EXPECT_EQ(rb[0].to, net::Address::v4(kSgw2, kPort));
  EXPECT_EQ(decode(ra[0].bytes).header().teid, 0x10u);
  EXPECT_EQ(decode(rb[0].bytes).header().teid, 0x20u);
}

TEST_F(ProxyTest, WeightsSplitSessionsExactly) {
  std::map<std::string, int> split;
  for (int i = 0; i < 400; ++i) {
    auto out = feed(createSessionRequest("00101" + std::to_string(1000000000 + i), "internet", 0x100 + i, i, kSgw),
                    net::Address::v4(kSgw, kPort));
    ASSERT_EQ(out.size(), 1u);
    split[out[0].to.toString()]++;
  }
  EXPECT_EQ(split["127.0.0.21:2123"], 300);
  EXPECT_EQ(split["127.0.0.22:2123"], 100);
}

TEST_F(ProxyTest, CreateSessionRequestWithoutMandatoryIeIsRejectedWithTheOffendingIe) {
  std::vector<uint8_t> buf(128);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, 77);
  FTeid sender;
  sender.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpC);
  sender.teid = 0x4242;
  sender.ipv4 = kSgw;
  b.add(sender);
  buf.resize(b.finish()->size());
  auto out = feed(buf, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0x4242u) << "the sender F-TEID's TEID";
  auto cause = readFirst<CauseIe>(m);
  EXPECT_EQ(cause->value, static_cast<uint8_t>(Cause::kMandatoryIeMissing));
  ASSERT_TRUE(cause->offending_ie);
  EXPECT_EQ(cause->offending_ie->type, static_cast<uint8_t>(IeType::kRatType));
  EXPECT_EQ(sessions_.active(), 0u);
}

TEST_F(ProxyTest, UnansweredCreationExpiresAndFreesTheSession) {
  feed(createSessionRequest("001010000000007", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort), 1'000'000'000);
  ASSERT_EQ(sessions_.active(), 1u);
  // The lifetime is 9 s; a quarter of it later the whole table has been seen.
  for (uint64_t t = 10; t <= 16; ++t) proxy_->tick(t * 1'000'000'000);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.transactions_expired.load(), 1u);
  EXPECT_EQ(header_->counters.sessions_expired.load(), 1u);
}

TEST_F(ProxyTest, UnknownResponseIsDroppedAndCounted) {
  auto out = feed(simple(MessageType::kModifyBearerResponse, 0x12345678, 4242, 16), net::Address::v4(kPgw1, kPort));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 1u);
}

TEST_F(ProxyTest, PiggybackedCreateBearerRequestIsTranslatedWithTheResponse) {
  auto out = feed(createSessionRequest("001010000000008", "internet", 0x1111, 7, kSgw), net::Address::v4(kSgw, kPort));
  Message to_pgw = decode(out[0].bytes);
  const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionResponse, gateway_teid, to_pgw.header().sequence_number);
  CauseIe ok;
  ok.value = 16;
  b.add(ok);
  FTeid f;
  f.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8PgwGtpC);
  f.teid = 0x2222;
  f.ipv4 = kPgw1;
  b.add(f, 1);
  b.beginPiggybacked(MessageType::kCreateBearerRequest, gateway_teid, 0x300);
  b.add(Ebi{5});
  buf.resize(b.finish()->size());
  auto resp = feed(buf, out[0].to);
  ASSERT_EQ(resp.size(), 1u);
  Datagram d;
  ASSERT_TRUE(d.decode(resp[0].bytes));
  ASSERT_TRUE(d.has_piggybacked);
  EXPECT_EQ(d.message.header().teid, 0x1111u);
  EXPECT_EQ(d.piggybacked.header().teid, 0x1111u) << "the SGW's TEID in the piggybacked request too";
  EXPECT_NE(d.piggybacked.header().sequence_number, 0x300u) << "a proxy sequence number toward the SGW";
  EXPECT_EQ(header_->counters.transactions_started.load(), 2u);
}

// -- retransmissions (TS 29.274 §7.6) ---------------------------------------------

TEST_F(ProxyTest, RetransmittedCreationWhilePendingGoesToTheSameGatewayWithTheSameBytes) {
  const auto csr = createSessionRequest("001010000000010", "internet", 0x1111, 7, kSgw);
  auto first = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(first.size(), 1u);
  // Many copies: weighted picking would move some to the other gateway if
  // they were handled as new.
  for (int i = 0; i < 8; ++i) {
    auto again = feed(csr, net::Address::v4(kSgw, kPort), 1'500'000'000);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].to, first[0].to);
    EXPECT_EQ(again[0].bytes, first[0].bytes) << "the same translated request: same TEIDs, same sequence number";
  }
  EXPECT_EQ(sessions_.active(), 1u) << "one session, not one per copy";
  EXPECT_EQ(header_->counters.requests_retransmitted.load(), 8u);
  EXPECT_EQ(header_->counters.transactions_started.load(), 1u);
}

TEST_F(ProxyTest, RetransmittedCreationCarriesTheRulesOverridesAsTheFirstCopy) {
  // kRouting has no overrides: a document whose one rule has some.
  auto routing = config::parseRoutingDocument(R"(
version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21}
rules:
  - name: rewrite
    pool: internet
    overrides: {apn: internet.example.net, charging_characteristics: 0x0800, selection_mode: 1}
)", "routing.yaml");
  ASSERT_TRUE(routing) << routing.error().toString();
  next_routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
  proxy_->setRouting(*next_routing_);
  routing_.swap(next_routing_);

  const auto csr = createSessionRequest("001010000000413", "internet", 0x4131, 4131, kSgw);
  auto first = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(readFirst<Apn>(decode(first[0].bytes))->text.view(), "internet.example.net");
  // The first copy was lost on its way to the PGW: the SGW sends it again.
  auto again = feed(csr, net::Address::v4(kSgw, kPort), 1'500'000'000);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].to, first[0].to);
  EXPECT_EQ(again[0].bytes, first[0].bytes) << "the PGW gets the request the rule made, whichever copy reaches it";
  EXPECT_EQ(header_->counters.requests_retransmitted.load(), 1u);
}

TEST_F(ProxyTest, RetransmittedCreationOnceAnsweredGetsTheCachedAnswer) {
  const auto csr = createSessionRequest("001010000000011", "internet", 0x1111, 7, kSgw);
  auto answer = createAnswered(csr, 16);
  ASSERT_EQ(answer.size(), 1u);
  // The answer was lost on its way to the SGW: the SGW sends its request again.
  auto replay = feed(csr, net::Address::v4(kSgw, kPort), 3'000'000'000);
  ASSERT_EQ(replay.size(), 1u) << "answered by the proxy, nothing sent to the PGW";
  EXPECT_EQ(replay[0].to, net::Address::v4(kSgw, kPort));
  EXPECT_EQ(replay[0].bytes, answer[0].bytes);
  EXPECT_EQ(sessions_.active(), 1u);
  EXPECT_EQ(header_->counters.answers_replayed.load(), 1u);
  EXPECT_EQ(header_->counters.sessions_created.load(), 1u);
}

TEST_F(ProxyTest, RejectedCreationRetransmittedGetsTheSameRejection) {
  const auto csr = createSessionRequest("001010000000012", "internet", 0x1111, 9, kSgw);
  auto rejected = createAnswered(csr, static_cast<uint8_t>(Cause::kMissingOrUnknownApn));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(sessions_.active(), 0u);
  auto replay = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].bytes, rejected[0].bytes) << "not a second attempt at a gateway";
  EXPECT_EQ(sessions_.active(), 0u);
}

TEST_F(ProxyTest, RetransmittedModifyBearerIsAnsweredFromTheCacheAndNewNumbersAreNew) {
  Attached s = attach("001010000000013");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  const auto mbr = simple(MessageType::kModifyBearerRequest, s.access_teid, 200);
  auto out = feed(mbr, sgw);
  ASSERT_EQ(out.size(), 1u);
  const uint32_t proxy_seq = decode(out[0].bytes).header().sequence_number;
  // While pending: the same request again, same proxy number.
  auto pending = feed(mbr, sgw);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].bytes, out[0].bytes);
  auto answer = feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw);
  ASSERT_EQ(answer.size(), 1u);
  // The PGW answered twice (it saw two copies): the second is a duplicate.
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw).empty());
  EXPECT_EQ(header_->counters.responses_duplicate.load(), 1u);
  // Answered: the cached answer.
  auto replay = feed(mbr, sgw);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].bytes, answer[0].bytes);
  // The same number from another port of the SGW is another peer's request.
  auto other_port = feed(mbr, net::Address::v4(kSgw, 40000));
  ASSERT_EQ(other_port.size(), 1u);
  EXPECT_EQ(other_port[0].to, s.pgw);
  EXPECT_NE(decode(other_port[0].bytes).header().sequence_number, proxy_seq);
  // A different message with a number still live: the peer reused it; the new request wins.
  auto reused = feed(simple(MessageType::kDeleteSessionRequest, s.access_teid, 200), sgw);
  ASSERT_EQ(reused.size(), 1u);
  EXPECT_EQ(decode(reused[0].bytes).messageType(), MessageType::kDeleteSessionRequest);
  EXPECT_EQ(header_->counters.sequence_reused.load(), 1u);
}

TEST_F(ProxyTest, AnswersAreKeptForTheLifetimeThenForgotten) {
  Attached s = attach("001010000000014");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  const auto mbr = simple(MessageType::kModifyBearerRequest, s.access_teid, 300);
  auto out = feed(mbr, sgw, 2'000'000'000);
  ASSERT_EQ(out.size(), 1u);
  const uint32_t proxy_seq = decode(out[0].bytes).header().sequence_number;
  ASSERT_EQ(feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw).size(), 1u);
  EXPECT_EQ(transactions_.live(), 2u) << "the creation's and this one, both answered";
  EXPECT_EQ(transactions_.pending(), 0u);
  // 9 s after the request's arrival its answer is gone; the late response
  // is then unmatched rather than a duplicate.
  for (uint64_t t = 11; t <= 20; ++t) proxy_->tick(t * 1'000'000'000);
  EXPECT_EQ(transactions_.live(), 0u);
  EXPECT_EQ(header_->counters.transactions_expired.load(), 0u) << "answered transactions do not expire";
  EXPECT_TRUE(feed(simple(MessageType::kModifyBearerResponse, s.gateway_teid, proxy_seq, 16), s.pgw).empty());
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 1u);
  // The same request now is a new one (the SGW's number came round again).
  auto fresh = feed(mbr, sgw, 21'000'000'000);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].to, s.pgw);
}

// -- commands and the requests they trigger (TS 29.274 §7.6) -------------------------

TEST_F(ProxyTest, CommandTriggeredRequestReachesTheSgwWithItsOwnCommandNumber) {
  Attached s = attach("001010000000015");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  constexpr uint32_t kSgwCommandSeq = 0x800005;
  const auto command = simple(MessageType::kModifyBearerCommand, s.access_teid, kSgwCommandSeq);
  auto to_pgw = feed(command, sgw);
  ASSERT_EQ(to_pgw.size(), 1u);
  Message cmd = decode(to_pgw[0].bytes);
  EXPECT_EQ(cmd.header().teid, 0x2222u);
  const uint32_t proxy_cmd_seq = cmd.header().sequence_number;
  EXPECT_TRUE(proxy_cmd_seq & gtp::v2::kCommandBit) << "a command's number keeps the top bit";
  EXPECT_NE(proxy_cmd_seq, kSgwCommandSeq);

  // The PGW's Update Bearer Request carries the command's number back.
  auto to_sgw = feed(simple(MessageType::kUpdateBearerRequest, s.gateway_teid, proxy_cmd_seq), s.pgw);
  ASSERT_EQ(to_sgw.size(), 1u);
  EXPECT_EQ(to_sgw[0].to, sgw);
  Message ubr = decode(to_sgw[0].bytes);
  EXPECT_EQ(ubr.messageType(), MessageType::kUpdateBearerRequest);
  EXPECT_EQ(ubr.header().teid, 0x1111u);
  EXPECT_EQ(ubr.header().sequence_number, kSgwCommandSeq) << "the SGW sees its own command's number";

  // The SGW's response, numbered like its command, goes back to the PGW
  // with the PGW's number.
  auto back = feed(simple(MessageType::kUpdateBearerResponse, s.access_teid, kSgwCommandSeq, 16), sgw);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].to, s.pgw);
  Message ubresp = decode(back[0].bytes);
  EXPECT_EQ(ubresp.header().teid, 0x2222u);
  EXPECT_EQ(ubresp.header().sequence_number, proxy_cmd_seq);

  // The SGW repeats its command (the Update Bearer Request was late): it gets
  // the triggered request again, the PGW is not asked twice.
  auto replay = feed(command, sgw);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].to, sgw);
  EXPECT_EQ(replay[0].bytes, to_sgw[0].bytes);
  EXPECT_EQ(header_->counters.triggered_unmatched.load(), 0u);
}

TEST_F(ProxyTest, CommandNumbersOfTwoSessionsDoNotCollide) {
  Attached a = attach("001010000000016", 0x1111, 7);
  Attached b = attach("001010000000017", 0x3333, 8);
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  // Both commands from one SGW would need distinct numbers; from two SGW
  // ports they may be equal.
  const net::Address sgw_b = net::Address::v4(kSgw, 2124);
  constexpr uint32_t kSeq = 0x800010;
  auto ca = feed(simple(MessageType::kDeleteBearerCommand, a.access_teid, kSeq), sgw);
  auto cb = feed(simple(MessageType::kDeleteBearerCommand, b.access_teid, kSeq), sgw_b);
  ASSERT_EQ(ca.size(), 1u);
  ASSERT_EQ(cb.size(), 1u);
  const uint32_t pa = decode(ca[0].bytes).header().sequence_number;
  const uint32_t pb = decode(cb[0].bytes).header().sequence_number;
  ASSERT_NE(pa, pb);
  auto da = feed(simple(MessageType::kDeleteBearerRequest, a.gateway_teid, pa), a.pgw);
  auto db = feed(simple(MessageType::kDeleteBearerRequest, b.gateway_teid, pb), b.pgw);
  ASSERT_EQ(da.size(), 1u);
  ASSERT_EQ(db.size(), 1u);
  EXPECT_EQ(decode(da[0].bytes).header().sequence_number, kSeq);
  EXPECT_EQ(decode(db[0].bytes).header().sequence_number, kSeq);
  // Both SGW answers carry the same number; the TEID tells them apart.
  auto rb = feed(simple(MessageType::kDeleteBearerResponse, b.access_teid, kSeq, 16), sgw_b);
  auto ra = feed(simple(MessageType::kDeleteBearerResponse, a.access_teid, kSeq, 16), sgw);
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(decode(ra[0].bytes).header().sequence_number, pa);
  EXPECT_EQ(decode(ra[0].bytes).header().teid, 0x2222u);
  EXPECT_EQ(decode(rb[0].bytes).header().sequence_number, pb);
}

TEST_F(ProxyTest, CommandFailureIndicationReturnsWithTheSgwsNumber) {
  Attached s = attach("001010000000018");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  auto out = feed(simple(MessageType::kBearerResourceCommand, s.access_teid, 0x800123), sgw);
  ASSERT_EQ(out.size(), 1u);
  const uint32_t proxy_seq = decode(out[0].bytes).header().sequence_number;
  auto fail = feed(simple(MessageType::kBearerResourceFailureIndication, s.gateway_teid, proxy_seq,
                          static_cast<uint8_t>(Cause::kServiceDenied)),
                   s.pgw);
  ASSERT_EQ(fail.size(), 1u);
  EXPECT_EQ(fail[0].to, sgw);
  EXPECT_EQ(decode(fail[0].bytes).header().sequence_number, 0x800123u);
  EXPECT_EQ(decode(fail[0].bytes).header().teid, 0x1111u);
}

TEST_F(ProxyTest, PgwRequestWithTheTopBitButNoCommandGetsAProxyNumber) {
  Attached s = attach("001010000000019");
  auto out = feed(simple(MessageType::kUpdateBearerRequest, s.gateway_teid, 0x8000ff), s.pgw);
  ASSERT_EQ(out.size(), 1u);
  const uint32_t seq = decode(out[0].bytes).header().sequence_number;
  EXPECT_TRUE(seq & gtp::v2::kCommandBit);
  EXPECT_NE(seq, 0x8000ffu);
  EXPECT_EQ(header_->counters.triggered_unmatched.load(), 1u);
  // The SGW's answer, with the proxy's number, reaches the PGW with its own.
  auto back = feed(simple(MessageType::kUpdateBearerResponse, s.access_teid, seq, 16),
                   net::Address::v4(kSgw, kPort));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(decode(back[0].bytes).header().sequence_number, 0x8000ffu);
}

TEST_F(ProxyTest, PgwInitiatedRequestIsRelayedAndItsRetransmissionIsNotRepeated) {
  Attached s = attach("001010000000020");
  const auto cbr = simple(MessageType::kCreateBearerRequest, s.gateway_teid, 0x4444);
  auto out = feed(cbr, s.pgw);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kSgw, kPort)) << "the SGW's GTP-C endpoint from its F-TEID";
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.header().teid, 0x1111u);
  auto again = feed(cbr, s.pgw);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].bytes, out[0].bytes);
  auto resp = feed(simple(MessageType::kCreateBearerResponse, s.access_teid, m.header().sequence_number, 16),
                   net::Address::v4(kSgw, kPort));
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, s.pgw);
  EXPECT_EQ(decode(resp[0].bytes).header().sequence_number, 0x4444u);
  EXPECT_EQ(decode(resp[0].bytes).header().teid, 0x2222u);
  auto replay = feed(cbr, s.pgw);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].bytes, resp[0].bytes);
}

TEST_F(ProxyTest, TransactionTableFullRefusesWithNoResources) {
  Attached s = attach("001010000000021");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  // 1024 records; the creation holds one.
  for (uint32_t i = 0; i < 1023; ++i) {
    auto out = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 1000 + i), sgw);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].to, s.pgw) << i;
  }
  auto refused = feed(simple(MessageType::kModifyBearerRequest, s.access_teid, 5000), sgw);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].to, sgw);
  EXPECT_EQ(readFirst<CauseIe>(decode(refused[0].bytes))->value, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
  EXPECT_EQ(header_->counters.transactions_full.load(), 1u);
}

// -- gateways: health, failover, restarts ------------------------------------------

TEST_F(ProxyTest, GatewayDownIsNotChosenAndTakesItsShareAgainWhenUp) {
  forwarder::GatewayTableShm& f = healthChecks();
  f.gateways[0].up.store(0);  // pgw1, weight 3
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(createFrom("00101000000010" + std::to_string(i), "internet", 0x100 + i, 100 + i).to,
              net::Address::v4(kPgw2, kPort));
  f.gateways[0].up.store(1);
  std::map<std::string, int> split;
  for (int i = 0; i < 8; ++i) split[createFrom("00101000000020" + std::to_string(i), "internet", 0x200 + i, 200 + i).to.toString()]++;
  EXPECT_EQ(split["127.0.0.21:2123"], 6);
  EXPECT_EQ(split["127.0.0.22:2123"], 2);
}

TEST_F(ProxyTest, NoGatewayUpRejectsTheCreationWithNoResources) {
  forwarder::GatewayTableShm& f = healthChecks();
  f.gateways[2].up.store(0);  // pgw3, the only one of pool ims
  auto out = feed(createSessionRequest("001010000000300", "ims", 0x300, 300, kSgw), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kSgw, kPort));
  EXPECT_EQ(readFirst<CauseIe>(decode(out[0].bytes))->value, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
  EXPECT_EQ(header_->counters.no_gateway.load(), 1u);
  EXPECT_EQ(sessions_.active(), 0u);
}

TEST_F(ProxyTest, SilentGatewayHandsTheCreationToTheNextAfterTheResponseTimeout) {
  const Sent first = createFrom("001010000000310", "internet", 0x310, 310, 1'000'000'000);
  egress_.sent.clear();
  proxy_->tick(2'900'000'000);
  EXPECT_TRUE(egress_.sent.empty()) << "before response_timeout_ms (2000)";
  egress_.sent.clear();
  proxy_->tick(3'100'000'000);
  ASSERT_EQ(egress_.sent.size(), 1u);
  const Sent second = egress_.sent[0];
  EXPECT_NE(second.to, first.to) << "the other gateway of pool internet";
  Message m1 = decode(first.bytes), m2 = decode(second.bytes);
  EXPECT_NE(m2.header().sequence_number, m1.header().sequence_number);
  EXPECT_EQ(readFirst<FTeid>(m2, 0)->teid, readFirst<FTeid>(m1, 0)->teid) << "the same session";
  EXPECT_EQ(second.bytes.size(), first.bytes.size());
  // The SGW's retransmission now goes to the second gateway.
  auto again = feed(createSessionRequest("001010000000310", "internet", 0x310, 310, kSgw), net::Address::v4(kSgw, kPort),
                    3'500'000'000);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].to, second.to);
  EXPECT_EQ(again[0].bytes, second.bytes);
  // The first gateway wakes up late and accepts: its answer matches nothing,
  // and the session it made is deleted there.
  auto orphan = answerCreate(first, 16, std::nullopt, 3'600'000'000);
  ASSERT_EQ(orphan.size(), 1u);
  EXPECT_EQ(orphan[0].to, first.to);
  Message dsr = decode(orphan[0].bytes);
  EXPECT_EQ(dsr.messageType(), MessageType::kDeleteSessionRequest);
  EXPECT_EQ(dsr.header().teid, 0x2222u) << "the TEID the first gateway gave";
  EXPECT_EQ(readFirst<Ebi>(dsr, 0)->value, 5);
  EXPECT_TRUE(feed(simple(MessageType::kDeleteSessionResponse, 0, dsr.header().sequence_number, 16), first.to).empty());
  EXPECT_EQ(header_->counters.orphans_deleted.load(), 1u);
  EXPECT_EQ(header_->counters.own_requests_answered.load(), 1u);
  auto answer = answerCreate(second, 16, std::nullopt, 3'700'000'000);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(answer[0].to, net::Address::v4(kSgw, kPort));
  EXPECT_EQ(readFirst<CauseIe>(decode(answer[0].bytes))->value, 16);
  EXPECT_EQ(header_->counters.creations_timed_out.load(), 1u);
  EXPECT_EQ(header_->counters.creations_failed_over.load(), 1u);
  EXPECT_EQ(header_->counters.responses_unmatched.load(), 1u);
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, FailoverToAGatewayOfTheOtherFamilyRewritesTheSenderFTeid) {
  // A pool of an IPv4 and an IPv6 gateway, the proxy on both families toward them.
  const Ipv6 proxy_v6{{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
  proxy_.reset();
  auto routing = config::parseRoutingDocument(
      "version: 1\npools:\n  mixed:\n    gateways:\n      - {name: v4, address: 127.0.0.24}\n"
      "      - {name: v6, address: 'fd00::24'}\nrules:\n  - {name: all, pool: mixed}\n"
      "failover: {try_another: [73]}\n",
      "routing.yaml");
  ASSERT_TRUE(routing) << routing.error().toString();
  routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
  ProxySettings settings;
  settings.sockets = group::SocketPlan::make(kProxy, std::nullopt, kProxy, proxy_v6, kPort);
  proxy_ = std::make_unique<Proxy>(settings, *header_, sessions_, transactions_, *routing_, egress_);

  const Sent first = createFrom("001010000000340", "internet", 0x340, 340);
  Message m1 = decode(first.bytes);
  auto moved = answerCreate(first, 73);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].to.family, first.to.family) << "the other gateway of the pool";
  Message m2 = decode(moved[0].bytes);
  auto f1 = readFirst<FTeid>(m1, 0), f2 = readFirst<FTeid>(m2, 0);
  ASSERT_TRUE(f1 && f2);
  EXPECT_EQ(f2->teid, f1->teid) << "the same session";
  if (moved[0].to.family == AF_INET6) {
    EXPECT_FALSE(f2->ipv4);
    ASSERT_TRUE(f2->ipv6);
    EXPECT_EQ(*f2->ipv6, proxy_v6);
  } else {
    EXPECT_FALSE(f2->ipv6);
    ASSERT_TRUE(f2->ipv4);
    EXPECT_EQ(*f2->ipv4, kProxy);
  }
  // Everything else as the first gateway got it.
  EXPECT_EQ(readFirst<Imsi>(m2)->digits.view(), "001010000000340");
  EXPECT_NE(m2.find(IeType::kBearerContext), nullptr);
  EXPECT_EQ(header_->counters.creations_failed_over.load(), 1u);
}

TEST_F(ProxyTest, RecoveryInRelayedMessagesIsTheGroups) {
  // The SGW's Recovery (7) does not reach the PGW, nor the PGW's (3) the SGW:
  // each sees the proxy, one node with one restart counter (TS 23.007).
  auto csr = createSessionRequest("001010000000350", "internet", 0x350, 350, kSgw);
  {
    std::vector<uint8_t> buf(csr.size() + 5);
    std::copy(csr.begin(), csr.end(), buf.begin());
    // Append a Recovery IE (type 3, length 1, instance 0, value 7) and fix the length.
    const uint8_t ie[] = {3, 0, 1, 0, 7};
    std::copy(std::begin(ie), std::end(ie), buf.begin() + static_cast<std::ptrdiff_t>(csr.size()));
    const uint16_t length = static_cast<uint16_t>(buf.size() - 4);
    buf[2] = static_cast<uint8_t>(length >> 8);
    buf[3] = static_cast<uint8_t>(length);
    csr = buf;
  }
  auto out = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  Message to_pgw = decode(out[0].bytes);
  ASSERT_TRUE(readFirst<Recovery>(to_pgw));
  EXPECT_EQ(readFirst<Recovery>(to_pgw)->value, 1) << "the group's (ProxySettings::recovery)";
  auto back = answerCreate(out[0], 16, 3);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(readFirst<Recovery>(decode(back[0].bytes))->value, 1);
  EXPECT_EQ(header_->counters.recovery_rewritten.load(), 2u);
}

TEST_F(ProxyTest, TryAnotherCauseSendsTheCreationToTheNextGateway) {
  useRouting("failover: {try_another: [73]}\n");
  const Sent first = createFrom("001010000000320", "internet", 0x320, 320);
  auto moved = answerCreate(first, 73);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].to, first.to);
  EXPECT_NE(moved[0].to, net::Address::v4(kSgw, kPort)) << "the SGW hears nothing of the first gateway's refusal";
  auto answer = answerCreate(moved[0], 16);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(answer[0].bytes))->value, 16);
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, NoGatewayLeftAnswersTheConfiguredCauseAndRepeatsIt) {
  useRouting("failover: {try_another: [73], attempts: 2}\n");
  const auto csr = createSessionRequest("001010000000330", "internet", 0x330, 330, kSgw);
  auto first = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(first.size(), 1u);
  auto second = answerCreate(first[0], 73);
  ASSERT_EQ(second.size(), 1u);
  auto refused = answerCreate(second[0], 73);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].to, net::Address::v4(kSgw, kPort));
  Message m = decode(refused[0].bytes);
  EXPECT_EQ(readFirst<CauseIe>(m)->value, static_cast<uint8_t>(Cause::kRemotePeerNotResponding));
  EXPECT_EQ(m.header().teid, 0x330u);
  EXPECT_EQ(m.header().sequence_number, 330u);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.creations_exhausted.load(), 1u);
  auto replay = feed(csr, net::Address::v4(kSgw, kPort));
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].bytes, refused[0].bytes);

  useRouting("failover: {try_another: [73], attempts: 1, when_exhausted: no_resources_available}\n");
  auto only = createFrom("001010000000331", "internet", 0x331, 331);
  auto no_resources = answerCreate(only, 73);
  ASSERT_EQ(no_resources.size(), 1u);
  EXPECT_EQ(readFirst<CauseIe>(decode(no_resources[0].bytes))->value,
            static_cast<uint8_t>(Cause::kNoResourcesAvailable));
}

TEST_F(ProxyTest, RestartSeenInACreateSessionResponseRemovesTheOlderSessionsAndTellsTheSgw) {
  // Pool ims has one gateway, pgw3: every session lands there.
  std::vector<uint32_t> proxy_teids;
  for (uint32_t i = 0; i < 3; ++i) {
    const Sent s = createFrom("00101000000034" + std::to_string(i), "ims", 0x340 + i, 340 + i, 1'000'000'000 + i);
    ASSERT_EQ(answerCreate(s, 16, uint8_t{5}).size(), 1u);
  }
  ASSERT_EQ(sessions_.active(), 3u);
  // A later creation learns that pgw3 restarted (Recovery 5 -> 6).
  const Sent later = createFrom("001010000000349", "ims", 0x349, 349, 2'000'000'000);
  ASSERT_EQ(answerCreate(later, 16, uint8_t{6}, 2'000'000'000).size(), 1u);
  EXPECT_EQ(header_->counters.gateway_restarts.load(), 1u);
  egress_.sent.clear();
  proxy_->tick(2'000'000'000);
  proxy_->tick(3'000'000'000);  // a second of credit: 1000 notifications
  ASSERT_EQ(egress_.sent.size(), 3u);
  const std::vector<Sent> notifications = egress_.sent;  // feed() below clears egress_.sent
  std::set<uint32_t> teids;
  for (const Sent& out : notifications) {
    EXPECT_EQ(out.to, net::Address::v4(kSgw, kPort));
    Message m = decode(out.bytes);
    EXPECT_EQ(m.messageType(), MessageType::kDeleteBearerRequest);
    teids.insert(m.header().teid);
    EXPECT_EQ(readFirst<Ebi>(m, 0)->value, 5) << "the default bearer's EBI as LBI";
    EXPECT_EQ(readFirst<CauseIe>(m)->value, 8) << "Reactivation requested";
    // The SGW answers; nothing goes on.
    auto none = feed(simple(MessageType::kDeleteBearerResponse, 0, m.header().sequence_number, 16),
                     net::Address::v4(kSgw, kPort), 3'100'000'000);
    EXPECT_TRUE(none.empty());
  }
  EXPECT_EQ(teids, (std::set<uint32_t>{0x340, 0x341, 0x342}));
  EXPECT_EQ(sessions_.active(), 1u) << "the session created with the new Recovery stays";
  EXPECT_EQ(header_->counters.restart_sessions_removed.load(), 3u);
  EXPECT_EQ(header_->counters.own_requests_answered.load(), 3u);
}

TEST_F(ProxyTest, RestartSeenByTheForwarderIsFollowedAtTheConfiguredRate) {
  useRouting("health_check: {restart_notify_rate: 2}\n");
  forwarder::GatewayTableShm& f = healthChecks();
  f.gateways[2].recovery.store(5);
  proxy_->setGatewayStatus(&f);  // learns Recovery 5 of pgw3
  for (uint32_t i = 0; i < 5; ++i) {
    const Sent s = createFrom("00101000000035" + std::to_string(i), "ims", 0x350 + i, 350 + i, 1'000'000'000);
    ASSERT_EQ(answerCreate(s, 16).size(), 1u);
  }
  // An Echo Response with Recovery 6.
  f.gateways[2].recovery.store(6);
  f.gateways[2].restarts.store(1);
  egress_.sent.clear();
  // A token bucket of one second's worth: 2 at once, then 2 per second.
  proxy_->tick(10'000'000'000);
  EXPECT_EQ(egress_.sent.size(), 2u);
  proxy_->tick(10'400'000'000);
  EXPECT_EQ(egress_.sent.size(), 2u) << "0.8 of a notification owed: none sent";
  proxy_->tick(11'100'000'000);
  EXPECT_EQ(egress_.sent.size(), 4u);
  proxy_->tick(12'100'000'000);
  EXPECT_EQ(egress_.sent.size(), 5u);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.gateway_restarts.load(), 1u);
  // The same count again is not a second restart.
  proxy_->tick(14'100'000'000);
  EXPECT_EQ(header_->counters.gateway_restarts.load(), 1u);
}

// -- bearers ----------------------------------------------------------------------

TEST_F(ProxyTest, DedicatedBearersAreTrackedAsThePeersAcceptThem) {
  Attached a = attach("001010000000400");
  SessionShm* s = sessions_.find(a.access_teid);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ebis, 1u << 5) << "the default bearer, from the Create Session Response";
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  // PGW-initiated dedicated bearers 6 and 7; the SGW accepts both.
  auto cbr = feed(withBearers(MessageType::kCreateBearerRequest, a.gateway_teid, 0x500, std::nullopt, {0, 0}, 5), a.pgw);
  ASSERT_EQ(cbr.size(), 1u);
  const uint32_t seq = decode(cbr[0].bytes).header().sequence_number;
  ASSERT_EQ(feed(withBearers(MessageType::kCreateBearerResponse, a.access_teid, seq, 16, {6, 7}), sgw).size(), 1u);
  EXPECT_EQ(s->ebis, (1u << 5) | (1u << 6) | (1u << 7));
  // The PGW deletes bearer 6 (EBIs, no LBI): the session stays.
  auto dbr = feed(withBearers(MessageType::kDeleteBearerRequest, a.gateway_teid, 0x501, std::nullopt, {}), a.pgw);
  ASSERT_EQ(dbr.size(), 1u);
  const uint32_t dseq = decode(dbr[0].bytes).header().sequence_number;
  ASSERT_EQ(feed(withBearers(MessageType::kDeleteBearerResponse, a.access_teid, dseq, 16, {6}), sgw).size(), 1u);
  EXPECT_EQ(s->ebis, (1u << 5) | (1u << 7));
  EXPECT_EQ(sessions_.active(), 1u);
  // A refused bearer is not counted.
  auto cbr2 = feed(withBearers(MessageType::kCreateBearerRequest, a.gateway_teid, 0x502, std::nullopt, {0}, 5), a.pgw);
  const uint32_t seq2 = decode(cbr2[0].bytes).header().sequence_number;
  ASSERT_EQ(feed(withBearers(MessageType::kCreateBearerResponse, a.access_teid, seq2, 72, {8}), sgw).size(), 1u);
  EXPECT_EQ(s->ebis, (1u << 5) | (1u << 7));
}

TEST_F(ProxyTest, PgwDeletingTheDefaultBearerEndsTheSession) {
  Attached a = attach("001010000000401");
  auto dbr = feed(withBearers(MessageType::kDeleteBearerRequest, a.gateway_teid, 0x600, std::nullopt, {}, 5), a.pgw);
  ASSERT_EQ(dbr.size(), 1u);
  EXPECT_EQ(dbr[0].to, net::Address::v4(kSgw, kPort));
  Message m = decode(dbr[0].bytes);
  EXPECT_EQ(m.header().teid, 0x1111u);
  auto resp = feed(withBearers(MessageType::kDeleteBearerResponse, a.access_teid, m.header().sequence_number, 16, {}),
                   net::Address::v4(kSgw, kPort));
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(resp[0].to, a.pgw);
  EXPECT_EQ(decode(resp[0].bytes).header().sequence_number, 0x600u);
  EXPECT_EQ(sessions_.active(), 0u);
  EXPECT_EQ(header_->counters.sessions_deleted.load(), 1u);
  EXPECT_EQ(sessions_.find(a.access_teid), nullptr);
}

TEST_F(ProxyTest, RefusedDeletionOfTheDefaultBearerKeepsTheSession) {
  Attached a = attach("001010000000402");
  auto dbr = feed(withBearers(MessageType::kDeleteBearerRequest, a.gateway_teid, 0x601, std::nullopt, {}, 5), a.pgw);
  ASSERT_EQ(dbr.size(), 1u);
  ASSERT_EQ(feed(withBearers(MessageType::kDeleteBearerResponse, a.access_teid, decode(dbr[0].bytes).header().sequence_number,
                             static_cast<uint8_t>(Cause::kSystemFailure), {}),
                 net::Address::v4(kSgw, kPort))
                .size(),
            1u);
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, ARefusalAfterTranslationNamesTheSgwsOwnTeid) {
  Attached a = attach("001010000000410");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  for (uint32_t i = 0; i < 1023; ++i) ASSERT_EQ(feed(simple(MessageType::kModifyBearerRequest, a.access_teid, 2000 + i), sgw).size(), 1u);
  // No transaction left: the creation is refused after its F-TEID was translated.
  auto out = feed(createSessionRequest("001010000000411", "internet", 0x4111, 4111, kSgw), sgw);
  ASSERT_EQ(out.size(), 1u);
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0x4111u) << "the SGW's TEID, not the proxy's";
  EXPECT_EQ(readFirst<CauseIe>(m)->value, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
  EXPECT_EQ(sessions_.active(), 1u);
}

TEST_F(ProxyTest, AnApnTheRuleRewroteIsRestoredInMessagesFromThePgw) {
  // kRouting has no overrides: a document whose one rule rewrites the APN.
  auto routing = config::parseRoutingDocument(R"(
version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21}
rules:
  - name: rewrite
    pool: internet
    overrides: {apn: internet.example.net}
)", "routing.yaml");
  ASSERT_TRUE(routing) << routing.error().toString();
  next_routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
  proxy_->setRouting(*next_routing_);
  routing_.swap(next_routing_);

  auto out = feed(createSessionRequest("001010000000412", "internet", 0x4121, 4121, kSgw), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  Message to_pgw = decode(out[0].bytes);
  EXPECT_EQ(readFirst<Apn>(to_pgw)->text.view(), "internet.example.net");
  ASSERT_EQ(answerCreate(out[0], 16).size(), 1u);
  const uint32_t gateway_teid = readFirst<FTeid>(to_pgw, 0)->teid;
  // An Update Bearer Request from the PGW naming the APN it knows.
  std::vector<uint8_t> buf(128);
  Builder b(buf);
  b.begin(MessageType::kUpdateBearerRequest, gateway_teid, 0x4200);
  b.add(Ebi{5});
  Apn apn;
  for (char ch : std::string("internet.example.net")) apn.text.push(ch);
  b.add(apn);
  buf.resize(b.finish()->size());
  auto to_sgw = feed(buf, out[0].to);
  ASSERT_EQ(to_sgw.size(), 1u);
  Message m = decode(to_sgw[0].bytes);
  EXPECT_EQ(readFirst<Apn>(m)->text.view(), "internet") << "the SGW's own APN";
  EXPECT_EQ(m.header().teid, 0x4121u);
  EXPECT_EQ(m.header().length + 4u, to_sgw[0].bytes.size()) << "lengths recomputed";
}

// -- messages without a session TEID, and without a reply ----------------------------

TEST_F(ProxyTest, TraceSessionActivationIsRelayedWithoutATransaction) {
  Attached a = attach("001010000000420");
  const uint64_t live = transactions_.live();
  auto out = feed(simple(MessageType::kTraceSessionActivation, a.access_teid, 0x4300), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, a.pgw);
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kTraceSessionActivation);
  EXPECT_EQ(m.header().teid, 0x2222u);
  EXPECT_EQ(transactions_.live(), live) << "no reply is expected";
  EXPECT_EQ(header_->counters.one_way_relayed.load(), 1u);
  // For a TEID the proxy does not hold: nothing goes anywhere.
  EXPECT_TRUE(feed(simple(MessageType::kTraceSessionDeactivation, 0x0badbeef, 0x4301), net::Address::v4(kSgw, kPort)).empty());
}

TEST_F(ProxyTest, ASessionsRequestWithTeidZeroGetsContextNotFound) {
  // An Update PDN Connection Set Request names its session by TEID like any
  // other (TS 29.274 §7.9.5); only its Delete counterpart is node-level.
  for (auto type : {MessageType::kModifyBearerRequest, MessageType::kUpdatePdnConnectionSetRequest}) {
    auto out = feed(simple(type, 0, 0x4401), net::Address::v4(kSgw, kPort));
    ASSERT_EQ(out.size(), 1u);
    Message m = decode(out[0].bytes);
    EXPECT_EQ(m.header().message_type, static_cast<uint8_t>(type) + 1);
    EXPECT_EQ(m.header().sequence_number, 0x4401u);
    EXPECT_EQ(readFirst<CauseIe>(m)->value, static_cast<uint8_t>(Cause::kContextNotFound));
  }
}

}  // namespace

// A restart of pgw3 seen in a Create Session Response at t = 2 s: one Delete
// Bearer Request for the session created before, sent at t = 2.1 s; returns
// it (empty when it was not sent).
std::vector<uint8_t> ProxyTest::deleteBearerAfterARestart(const std::string& imsi_base) {
  const Sent old = createFrom(imsi_base + "0", "ims", 0x430, 430, 1'000'000'000);
  EXPECT_EQ(answerCreate(old, 16, uint8_t{5}).size(), 1u);
  const Sent later = createFrom(imsi_base + "1", "ims", 0x431, 431, 2'000'000'000);
  EXPECT_EQ(answerCreate(later, 16, uint8_t{6}, 2'000'000'000).size(), 1u);
  egress_.sent.clear();
  proxy_->tick(2'100'000'000);
  EXPECT_EQ(egress_.sent.size(), 1u);
  return egress_.sent.size() == 1 ? egress_.sent[0].bytes : std::vector<uint8_t>{};
}

namespace {

TEST_F(ProxyTest, TheProxysOwnRequestsAreSentAgainEveryT3UntilAnswered) {
  // The SGW does not answer at first.
  ASSERT_FALSE(deleteBearerAfterARestart("00101000000043").empty());
  const std::vector<uint8_t> first = egress_.sent[0].bytes;
  proxy_->tick(4'000'000'000);
  EXPECT_EQ(egress_.sent.size(), 1u) << "T3 (3 s) not over";
  proxy_->tick(5'200'000'000);
  ASSERT_EQ(egress_.sent.size(), 2u);
  EXPECT_EQ(egress_.sent[1].bytes, first) << "the same request, same sequence number";
  EXPECT_EQ(egress_.sent[1].to, net::Address::v4(kSgw, kPort));
  proxy_->tick(8'300'000'000);
  ASSERT_EQ(egress_.sent.size(), 3u) << "N3 = 2 retransmissions";
  proxy_->tick(11'400'000'000);
  EXPECT_EQ(egress_.sent.size(), 3u);
  EXPECT_EQ(header_->counters.own_requests_retransmitted.load(), 2u);
  EXPECT_EQ(header_->counters.own_requests_unanswered.load(), 1u);
}

TEST_F(ProxyTest, AnAnsweredOwnRequestIsNotSentAgain) {
  const auto request = deleteBearerAfterARestart("00101000000044");
  ASSERT_FALSE(request.empty());
  const uint32_t seq = decode(request).header().sequence_number;
  feed(simple(MessageType::kDeleteBearerResponse, 0, seq, 16), net::Address::v4(kSgw, kPort), 2'200'000'000);
  egress_.sent.clear();
  proxy_->tick(5'500'000'000);
  proxy_->tick(9'000'000'000);
  EXPECT_TRUE(egress_.sent.empty());
  EXPECT_EQ(header_->counters.own_requests_retransmitted.load(), 0u);
}

TEST_F(ProxyTest, PgwDownlinkTriggeringReachesTheSgwOfTheSubscribersSession) {
  Attached a = attach("001010000000440");
  auto out = feed(downlinkTriggering("001010000000440", 0x4500, 0x2222, a.pgw.ipv4()), a.pgw);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, net::Address::v4(kSgw, kPort));
  Message m = decode(out[0].bytes);
  EXPECT_EQ(m.messageType(), MessageType::kPgwDownlinkTriggeringNotification);
  EXPECT_TRUE(m.header().teidPresent());
  EXPECT_EQ(m.header().teid, 0u) << "TEID 0, as the PGW sent it";
  EXPECT_NE(m.header().sequence_number, 0x4500u);
  auto f = readFirst<FTeid>(m, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->ipv4, kProxy) << "the SGW answers the proxy";
  EXPECT_EQ(f->teid, a.access_teid);
  // The SGW's acknowledgement to the proxy's F-TEID goes back to the PGW.
  auto ack = feed(simple(MessageType::kPgwDownlinkTriggeringAcknowledge, a.access_teid, m.header().sequence_number, 16),
                  net::Address::v4(kSgw, kPort));
  ASSERT_EQ(ack.size(), 1u);
  EXPECT_EQ(ack[0].to, a.pgw);
  Message back = decode(ack[0].bytes);
  EXPECT_EQ(back.header().sequence_number, 0x4500u);
  EXPECT_EQ(back.header().teid, 0x2222u);
}

TEST_F(ProxyTest, PgwDownlinkTriggeringForNoSessionOfThatPgwGetsContextNotFound) {
  Attached a = attach("001010000000441");
  // Another PGW, or another subscriber: no session to tell.
  for (const auto& [imsi, from] : {std::pair{std::string("001010000000441"), net::Address::v4(kPgw3, kPort)},
                                   {std::string("001010000000449"), a.pgw}}) {
    auto out = feed(downlinkTriggering(imsi, 0x4501, 0x3333, from.ipv4()), from);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to, from);
    Message m = decode(out[0].bytes);
    EXPECT_EQ(m.messageType(), MessageType::kPgwDownlinkTriggeringAcknowledge);
    EXPECT_EQ(readFirst<CauseIe>(m)->value, static_cast<uint8_t>(Cause::kContextNotFound));
    EXPECT_EQ(m.header().teid, 0x3333u) << "the PGW's TEID from its F-TEID";
  }
}

}  // namespace
}  // namespace gtpcp::worker::test

namespace gtpcp::worker::test {
namespace {

// The routing document reordered: another rule, pool and gateway first.
constexpr const char* kReordered = R"(
version: 1
pools:
  corp:
    gateways:
      - {name: pgw9, address: 127.0.0.29}
  ims:
    gateways:
      - {name: pgw3, address: 127.0.0.23}
  internet:
    gateways:
      - {name: pgw2, address: 127.0.0.22, weight: 1}
      - {name: pgw1, address: 127.0.0.21, weight: 3}
rules:
  - name: corp
    match: {apn: [corp]}
    pool: corp
  - name: ims
    match: {apn: [ims]}
    pool: ims
  - name: default
    pool: internet
)";

TEST_F(ProxyTest, AReloadKeepsEachSessionsPoolGatewayAndRuleByName) {
  for (uint32_t i = 0; i < 3; ++i) {
    const Sent s = createFrom("00101000000036" + std::to_string(i), "ims", 0x360 + i, 360 + i, 1'000'000'000 + i);
    ASSERT_EQ(answerCreate(s, 16, uint8_t{5}).size(), 1u);
  }
  auto reordered = config::parseRoutingDocument(kReordered, "routing.yaml");
  ASSERT_TRUE(reordered) << reordered.error().toString();
  config::RoutingTable next = std::move(*reordered);
  proxy_->setRouting(next);
  std::size_t seen = 0;
  sessions_.forEach([&](SessionShm& s) {
    ++seen;
    EXPECT_EQ(next.pool(s.pool).name, "ims");
    EXPECT_EQ(next.gateway(s.gateway).name, "pgw3");
    EXPECT_EQ(next.rule(s.rule).name, "ims");
  });
  EXPECT_EQ(seen, 3u);
  EXPECT_EQ(header_->counters.sessions_unrouted.load(), 0u);
  // pgw3 restarts: its sessions, wherever it now sits in the document, go.
  const Sent later = createFrom("001010000000369", "ims", 0x369, 369, 2'000'000'000);
  ASSERT_EQ(answerCreate(later, 16, uint8_t{6}, 2'000'000'000).size(), 1u);
  EXPECT_EQ(header_->counters.gateway_restarts.load(), 1u);
  egress_.sent.clear();
  proxy_->tick(2'000'000'000);
  proxy_->tick(3'000'000'000);
  std::set<uint32_t> told;
  for (const Sent& out : egress_.sent) told.insert(decode(out.bytes).header().teid);
  EXPECT_EQ(told, (std::set<uint32_t>{0x360, 0x361, 0x362})) << "the SGW is told of pgw3's three older sessions";

  // A document without pgw3: the session keeps going, outside every walk.
  auto without = config::parseRoutingDocument(
      "version: 1\npools:\n  internet:\n    gateways:\n      - {name: pgw1, address: 127.0.0.21}\n"
      "rules:\n  - {name: default, pool: internet}\n",
      "routing.yaml");
  ASSERT_TRUE(without) << without.error().toString();
  config::RoutingTable last = std::move(*without);
  proxy_->setRouting(last);
  EXPECT_EQ(header_->counters.sessions_unrouted.load(), sessions_.active());
  sessions_.forEach([&](SessionShm& s) {
    EXPECT_EQ(s.pool, kNoSelection);
    EXPECT_EQ(s.gateway, kNoSelection);
    EXPECT_EQ(s.rule, kNoSelection);
  });
  proxy_->setRouting(*routing_);  // the fixture's, before `next` and `last` go
}

TEST_F(ProxyTest, ASessionReadBackFindsItsSelectionByNameInTheDocumentInForce) {
  auto reordered = config::parseRoutingDocument(kReordered, "routing.yaml");
  ASSERT_TRUE(reordered);
  const config::RoutingTable table = std::move(*reordered);
  Engine engine(ProxySettings{}, *header_, sessions_, transactions_, table, egress_);
  SessionShm s{};
  s.pool = 0;  // the storing document's indexes: ims, pgw3, rule ims there too
  s.gateway = 2;
  s.rule = 0;
  session::RoutingNames names{};
  std::strcpy(names.pool, "ims");
  std::strcpy(names.gateway, "pgw3");
  std::strcpy(names.rule, "ims");
  engine.resolveSelection(s, names);
  EXPECT_EQ(table.pool(s.pool).name, "ims");
  EXPECT_EQ(table.gateway(s.gateway).name, "pgw3");
  EXPECT_EQ(table.rule(s.rule).name, "ims");
  EXPECT_EQ(header_->counters.restore_unrouted.load(), 0u);
  // Without names (a record from before them): the indexes stand.
  SessionShm old{};
  old.gateway = 2;
  engine.resolveSelection(old, session::RoutingNames{});
  EXPECT_EQ(old.gateway, 2u);
  // A gateway the document no longer has.
  std::strcpy(names.gateway, "pgw7");
  engine.resolveSelection(s, names);
  EXPECT_EQ(s.gateway, kNoSelection);
  EXPECT_EQ(header_->counters.restore_unrouted.load(), 1u);
}

}  // namespace
}  // namespace gtpcp::worker::test
