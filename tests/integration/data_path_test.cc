// The data path end to end, driven by the peer emulator: a real group
// (launcher, forwarder, workers) between emulated SGWs and PGWs on a loopback
// /24 of the test's own. Each test checks the emulator's verdict (exit status,
// mismatches, timeouts, the split over PGWs) and the proxy's own counters
// (`gtpcp status --json`) against each other.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr auto kPeerBound = 90s;  // every emulator run below needs well under 15 s

// The emulator's verdict on a run that should be clean.
void expectClean(const testing::PeerResult& r) {
  EXPECT_EQ(r.status, std::optional<int>(0)) << "gtpcp-peer failed (see its summary below)";
  EXPECT_EQ(r.value("/mismatches/total"), 0u) << (r.summary.contains("mismatches") ? r.summary.at("mismatches").dump() : "");
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/malformed/total"), 0u);
  EXPECT_EQ(r.value("/outstanding_at_end"), 0u);
}

// Polls the group until the forwarder has sent as many datagrams as it
// received (the last answers may still be on their way out when the emulator
// has exited) and returns that status.
json forwarderSettledStatus(TestGroup& g) {
  json s;
  testing::waitUntil(
      [&] {
        s = g.status();
        const json& c = s.at("counters");
        return c.value("forwarder.datagrams_received", 0ull) - c.value("forwarder.echo_responses", 0ull) ==
                   c.value("forwarder.datagrams_sent", 0ull) - c.value("forwarder.echo_requests_sent", 0ull) &&
               s.value("sessions", 1ull) == 0;
      },
      5s, 20ms);
  return s;
}

uint64_t fwd(const json& status, const std::string& name) { return status.at("counters").value(name, 0ull); }

// The proxy's counters after a run in which every session it accepted was
// deleted and nothing was lost.
void expectProxyBalanced(const json& s, uint64_t created, uint64_t rejected, uint64_t transactions,
                         uint64_t retransmissions) {
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  EXPECT_EQ(s.value("sessions", 1ull), 0u) << "sessions held after every subscriber detached";
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), created);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_deleted"), created);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_rejected"), rejected);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_expired"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.transactions_started"),
            TestGroup::workerSum(s, "worker.transactions_completed"));
  EXPECT_EQ(TestGroup::workerSum(s, "worker.transactions_expired"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.context_not_found"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.decode_errors"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.egress_full_dropped"), 0u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.rejections_sent"), 0u);
  // The forwarder's health checks aside, every datagram in has one out.
  const uint64_t received = fwd(s, "forwarder.datagrams_received") - fwd(s, "forwarder.echo_responses");
  const uint64_t sent = fwd(s, "forwarder.datagrams_sent") - fwd(s, "forwarder.echo_requests_sent");
  EXPECT_EQ(fwd(s, "forwarder.echo_responses_unmatched"), 0u);
  EXPECT_EQ(received, sent);
  EXPECT_EQ(fwd(s, "forwarder.datagrams_to_new_ring") + fwd(s, "forwarder.datagrams_to_priority_ring"), received);
  EXPECT_EQ(fwd(s, "forwarder.datagrams_from_workers"), sent);
  EXPECT_EQ(fwd(s, "forwarder.rejected_overload"), 0u);
  EXPECT_EQ(fwd(s, "forwarder.dropped_priority_ring_full"), 0u);
  EXPECT_EQ(fwd(s, "forwarder.send_errors"), 0u);
  if (retransmissions == 0) {
    // Each transaction crosses the proxy twice each way; each creation is
    // one datagram on a new ring.
    EXPECT_EQ(received, 2 * transactions);
    EXPECT_EQ(fwd(s, "forwarder.datagrams_to_new_ring"), created + rejected);
  }
  // Both workers took part.
  for (const auto& p : s.at("processes")) {
    if (p.at("name").get<std::string>().starts_with("worker-")) {
      EXPECT_GT(p.at("counters").value("worker.sessions_created", 0ull), 0u) << p.dump();
    }
  }
}

TEST_F(DataPathTest, AttachModifyDetachOverTwoPoolsDeletesEverySessionAndCountersAgree) {
  TestGroup& g = startGroup(2, "version: 1\npools:\n  internet:\n    gateways:\n      - {name: pgw1, address: " + ip(21) +
                   ", weight: 3}\n      - {name: pgw2, address: " + ip(22) +
                   ", weight: 1}\n  ims:\n    gateways:\n      - {name: pgw3, address: " + ip(23) +
                   "}\nrules:\n  - {name: ims, match: {apn: [ims]}, pool: ims}\n  - {name: default, pool: internet}\n");
  ASSERT_FALSE(HasFailure());

  constexpr uint64_t kSubscribers = 3000;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22, 23}),
                          "--subscribers", std::to_string(kSubscribers), "--apn", "internet,ims", "--modify", "2",
                          "--rate", "3000", "--duration", "30", "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  EXPECT_EQ(r.value("/transactions/create_session/completed"), kSubscribers);
  EXPECT_EQ(r.value("/transactions/modify_bearer/completed"), 2 * kSubscribers);
  EXPECT_EQ(r.value("/transactions/delete_session/completed"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/up_at_end"), 0u);
  // APN ims (every second subscriber) to pool ims; the rest 3:1 over pool internet.
  const uint64_t pgw1 = r.value("/split/" + ip(21)), pgw2 = r.value("/split/" + ip(22)),
                 pgw3 = r.value("/split/" + ip(23));
  EXPECT_EQ(pgw3, kSubscribers / 2);
  EXPECT_EQ(pgw1 + pgw2, kSubscribers / 2);
  EXPECT_NEAR(double(pgw1), kSubscribers / 2 * 0.75, kSubscribers / 2 * 0.75 * 0.05);
  for (const std::string& pgw : {ip(21), ip(22), ip(23)}) {
    EXPECT_EQ(r.summary.at("pgw").at(pgw).value("sessions_up", 1ull), 0u) << pgw;
    EXPECT_EQ(r.summary.at("pgw").at(pgw).value("context_not_found", 1ull), 0u) << pgw;
  }

  const json s = forwarderSettledStatus(g);
  expectProxyBalanced(s, kSubscribers, 0, 4 * kSubscribers, r.value("/retransmissions"));
}

TEST_F(DataPathTest, WeightsSplitTenThousandSessionsAndImsiPrefixAndApnRulesChooseTheirPools) {
  TestGroup& g = startGroup(2, "version: 1\npools:\n  weighted:\n    gateways:\n"
                   "      - {name: a, address: " + ip(21) + ", weight: 5}\n"
                   "      - {name: b, address: " + ip(22) + ", weight: 3}\n"
                   "      - {name: c, address: " + ip(23) + ", weight: 2}\n"
                   "  vip:\n    gateways:\n      - {name: d, address: " + ip(24) + "}\n"
                   "  ims:\n    gateways:\n      - {name: e, address: " + ip(25) + "}\n"
                   "rules:\n"
                   "  - {name: vip, match: {imsi_prefix: [\"001010000001\"]}, pool: vip}\n"
                   "  - {name: ims, match: {apn: [ims]}, pool: ims}\n"
                   "  - {name: default, pool: weighted}\n");
  ASSERT_FALSE(HasFailure());

  constexpr uint64_t kSubscribers = 10000;
  const std::vector<std::string> apns{"internet", "web", "corp", "ims"};
  // The emulator's subscriber i has IMSI 001010000000001 + i and APN i mod 4:
  // what each rule should take.
  uint64_t vip = 0, ims = 0, weighted = 0;
  for (uint64_t i = 0; i < kSubscribers; ++i) {
    char imsi[16];
    std::snprintf(imsi, sizeof imsi, "%015llu", static_cast<unsigned long long>(1010000000001ull + i));
    if (std::string(imsi).rfind("001010000001", 0) == 0) {
      ++vip;
    } else if (apns[i % apns.size()] == "ims") {
      ++ims;
    } else {
      ++weighted;
    }
  }
  ASSERT_EQ(vip, 1000u);  // IMSIs 001010000001000..001010000001999

  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22, 23, 24, 25}),
                          "--subscribers", std::to_string(kSubscribers), "--imsi-start", "001010000000001", "--apn",
                          "internet,web,corp,ims", "--modify", "0", "--rate", "4000", "--duration", "30", "--cycles",
                          "1"},
                         kPeerBound);
  expectClean(r);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  EXPECT_EQ(r.value("/split/" + ip(24)), vip) << "the IMSI-prefix rule";
  EXPECT_EQ(r.value("/split/" + ip(25)), ims) << "the APN rule";
  const uint64_t a = r.value("/split/" + ip(21)), b = r.value("/split/" + ip(22)), c = r.value("/split/" + ip(23));
  EXPECT_EQ(a + b + c, weighted);
  for (const auto& [count, weight, name] :
       {std::tuple{a, 5.0, "a"}, std::tuple{b, 3.0, "b"}, std::tuple{c, 2.0, "c"}}) {
    const double expected = double(weighted) * weight / 10.0;
    EXPECT_NEAR(double(count), expected, expected * 0.05) << "gateway " << name << " of weight " << weight;
  }
  EXPECT_EQ(r.value("/split/other"), 0u);

  const json s = forwarderSettledStatus(g);
  expectProxyBalanced(s, kSubscribers, 0, 2 * kSubscribers, r.value("/retransmissions"));
}

TEST_F(DataPathTest, CreationRejectedByPgwReachesSgwWithItsCauseAndLeavesNoSession) {
  TestGroup& g = startGroup(2, "version: 1\npools:\n  internet:\n    gateways:\n      - {name: open, address: " + ip(21) +
                   "}\n  barred:\n    gateways:\n      - {name: closed, address: " + ip(22) +
                   "}\nrules:\n  - {name: barred, match: {apn: [barred]}, pool: barred}\n"
                   "  - {name: default, pool: internet}\n");
  ASSERT_FALSE(HasFailure());

  // Every second subscriber asks for APN "barred", whose PGW rejects every
  // creation with 94 (Request rejected, reason not specified).
  constexpr uint64_t kSubscribers = 1000;
  constexpr uint8_t kCause = 94;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22}),
                          "--subscribers", std::to_string(kSubscribers), "--apn", "internet,barred", "--modify", "1",
                          "--pgw-cause", ip(22) + "=" + std::to_string(kCause), "--rate", "2000", "--duration", "30",
                          "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  EXPECT_EQ(r.value("/causes/" + std::to_string(kCause)), kSubscribers / 2) << "the SGWs got the PGW's cause";
  EXPECT_EQ(r.value("/sessions/rejected"), kSubscribers / 2);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers / 2);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers / 2);
  EXPECT_EQ(r.summary.at("pgw").at(ip(22)).value("sessions_rejected", 0ull), kSubscribers / 2);
  EXPECT_EQ(r.summary.at("pgw").at(ip(22)).at("requests").value("modify_bearer", 1ull), 0u)
      << "a rejected subscriber has no session to modify";

  const json s = forwarderSettledStatus(g);
  const uint64_t rejected_transactions = kSubscribers / 2;           // the creation only
  const uint64_t accepted_transactions = kSubscribers / 2 * 3;       // create, modify, delete
  expectProxyBalanced(s, kSubscribers / 2, kSubscribers / 2, rejected_transactions + accepted_transactions,
                      r.value("/retransmissions"));
}

TEST_F(DataPathTest, TwoSgwsUsingTheSameSequenceNumbersTowardOnePgwEachGetTheirOwnAnswers) {
  TestGroup& g = startGroup(2, onlyGateway(ip(21)));
  ASSERT_FALSE(HasFailure());

  constexpr uint64_t kSubscribers = 2000;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", ip(21), "--same-sequence",
                          "--subscribers", std::to_string(kSubscribers), "--modify", "2", "--rate", "2000",
                          "--duration", "30", "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  for (const char* kind : {"sgw_sequence_number", "sgw_unmatched_response", "sgw_header_teid", "sgw_message_type"})
    EXPECT_EQ(r.value(std::string("/mismatches/by_kind/") + kind), 0u) << kind;
  EXPECT_EQ(r.value("/duplicate_responses"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  EXPECT_EQ(r.summary.at("pgw").at(ip(21)).value("duplicates_answered", 1ull), 0u)
      << "the PGW took a request of one SGW for a retransmission of the other's";

  const json s = forwarderSettledStatus(g);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.responses_unmatched"), 0u) << s.dump(1);
  expectProxyBalanced(s, kSubscribers, 0, 4 * kSubscribers, r.value("/retransmissions"));
}

// -- retransmissions (TS 29.274 §7.6) --------------------------------------------

TEST_F(DataPathTest, RequestsLostBeforeThePgwAreSentAgainWithoutDoubleSessions) {
  TestGroup& g = startGroup(2, onlyGateway(ip(21)));
  ASSERT_FALSE(HasFailure());

  // One request in ten never reaches the PGW: the SGW retransmits after T3,
  // and every copy must reach the PGW as the same request.
  constexpr uint64_t kSubscribers = 400;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", ip(21), "--pgw-drop",
                          ip(21) + "=0.1", "--seed", "7", "--t3-ms", "200", "--n3", "5", "--subscribers",
                          std::to_string(kSubscribers), "--modify", "2", "--rate", "1000", "--duration", "30",
                          "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  EXPECT_GT(r.value("/retransmissions"), 0u) << "the run must have lost requests to mean anything";
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  const json& pgw = r.summary.at("pgw").at(ip(21));
  EXPECT_EQ(pgw.value("sessions_created", 0ull), kSubscribers) << "a retransmitted creation became a second session";
  EXPECT_EQ(pgw.value("sessions_replaced", 1ull), 0u);

  const json s = forwarderSettledStatus(g);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.requests_retransmitted"), r.value("/retransmissions")) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sequence_reused"), 0u);
  expectProxyBalanced(s, kSubscribers, 0, 4 * kSubscribers, r.value("/retransmissions"));
}

TEST_F(DataPathTest, RetransmittedCreationIsAnsweredFromTheCacheAndASecondAnswerIsDropped) {
  TestGroup& g = startGroup(1, onlyGateway(ip(21)));
  ASSERT_FALSE(HasFailure());
  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost);
  const gtp::Ipv4 sgw_addr = net_.addr(11);
  const gtp::Ipv4 pgw_addr = net_.addr(21);
  testing::UdpSocket sgw(sgw_addr, 2123);
  testing::UdpSocket pgw(pgw_addr, 2123);

  const Bytes csr = createSessionRequest(0x1234, 1010000000042ull, sgw_addr, 0x5001);
  ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, csr));
  auto first = pgw.receive(2s);
  ASSERT_TRUE(first);
  // Sent again before the PGW answered: the same translated request.
  ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, csr));
  auto second = pgw.receive(2s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->bytes, first->bytes);

  const Decoded request = decode(first->bytes);
  ASSERT_TRUE(request.fteid(kIfSgwGtpC)) << request.describe();
  const Bytes answer =
      createSessionResponse(request.sequence, request.fteid(kIfSgwGtpC)->teid, pgw_addr, 0x7001, 1010000000042ull);
  ASSERT_TRUE(pgw.sendTo(proxy_addr, 2123, answer));
  auto relayed = sgw.receive(2s);
  ASSERT_TRUE(relayed);
  const Decoded to_sgw = decode(relayed->bytes);
  EXPECT_EQ(to_sgw.sequence, 0x1234u);
  EXPECT_EQ(to_sgw.cause, std::optional<uint8_t>(kCauseAccepted));
  // The PGW answers its second copy too: the SGW must not get two answers.
  ASSERT_TRUE(pgw.sendTo(proxy_addr, 2123, answer));
  EXPECT_FALSE(sgw.receive(300ms)) << "a duplicate response was relayed";
  // The answer was lost on its way: the SGW asks again and gets it from the
  // proxy; the PGW hears nothing.
  ASSERT_TRUE(sgw.sendTo(proxy_addr, 2123, csr));
  auto replayed = sgw.receive(2s);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->bytes, relayed->bytes);
  EXPECT_FALSE(pgw.receive(300ms)) << "a retransmission answered already went to the PGW";

  const json s = g.status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.requests_retransmitted"), 1u) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.answers_replayed"), 1u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.responses_duplicate"), 1u);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.sessions_created"), 1u);
  EXPECT_EQ(s.value("sessions", 0ull), 1u);
}

TEST_F(DataPathTest, FirstSequenceNumberTowardPeersIsRandomAcrossGroupStarts) {
  // Two cold starts of the same group: a PGW that kept the answers of the
  // first must not see the numbers again.
  std::vector<uint32_t> first_numbers;
  for (int start = 0; start < 2; ++start) {
    startGroup(1, onlyGateway(ip(21)));
    ASSERT_FALSE(HasFailure());
    const gtp::Ipv4 sgw_addr = net_.addr(11);
    testing::UdpSocket sgw(sgw_addr, 2123);
    testing::UdpSocket pgw(net_.addr(21), 2123);
    ASSERT_TRUE(sgw.sendTo(net_.addr(kProxyHost), 2123, createSessionRequest(1, 1010000000043ull, sgw_addr, 0x5002)));
    auto at_pgw = pgw.receive(2s);
    ASSERT_TRUE(at_pgw);
    first_numbers.push_back(decode(at_pgw->bytes).sequence);
    group_->stop();
    group_.reset();
  }
  // 1 in 2^23 of failing by chance.
  EXPECT_NE(first_numbers[0], first_numbers[1]);
}

}  // namespace
}  // namespace gtpcp::integration
