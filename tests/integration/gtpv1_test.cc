// GTPv1-C through a real group (launcher, forwarder, two workers) between the
// peer emulator's SGSNs and GGSNs: PDP contexts created, updated and deleted,
// secondaries, GGSN-initiated updates and deletions, a GGSN that loses
// requests, a rule's overrides. The emulator checks every TEID, sequence
// number and GSN Address on both sides (the proxy's own for signalling, the
// peers' for user traffic); each test holds its counts against the proxy's.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/fixture.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr uint64_t kSubscribers = 300;
constexpr auto kPeerBound = 60s;

void expectClean(const testing::PeerResult& r) {
  EXPECT_EQ(r.status, std::optional<int>(0)) << "gtpcp-peer failed (see its summary below)";
  for (const char* zero : {"/errors/total", "/checks_failed", "/outstanding_at_end", "/sessions/waiting_at_end",
                           "/ggsn_outstanding_at_end"})
    EXPECT_EQ(r.value(zero), 0u) << zero;
}

void expectProxySettled(const json& s, uint64_t sessions) {
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  EXPECT_EQ(s.value("sessions", 1ull), 0u);
  EXPECT_EQ(workers(s, "worker.sessions_created"), sessions);
  EXPECT_EQ(workers(s, "worker.sessions_deleted"), sessions);
  EXPECT_EQ(workers(s, "worker.transactions_expired"), 0u);
  EXPECT_EQ(workers(s, "worker.responses_unmatched"), 0u);
  EXPECT_EQ(workers(s, "worker.decode_errors"), 0u);
  EXPECT_EQ(workers(s, "worker.rejections_sent"), 0u);
  EXPECT_EQ(workers(s, "worker.context_not_found"), 0u);
}

class Gtpv1Test : public DataPathTest {
 protected:
  // Two workers, one GTPv1 pool of the GGSNs at .21 and .22, and a v2 pool
  // no session of these tests may reach.
  TestGroup& start(const std::string& overrides = "") {
    return startGroup(2, "version: 1\npools:\n  pgws:\n    gateways:\n      - {name: pgw, address: " + ip(23) +
                             "}\n  gn:\n    gtp_version: 1\n    gateways:\n      - {name: a, address: " + ip(21) +
                             "}\n      - {name: b, address: " + ip(22) + "}\nrules:\n  - {name: gn, pool: gn" +
                             overrides + "}\n  - {name: s5, pool: pgws}\n" + kNoHealthChecks);
  }
  testing::PeerResult run(std::vector<std::string> extra, int cycles = 1) {
    std::vector<std::string> args{"--proxy", proxy(), "--sgsn", net_.list({11, 12}), "--ggsn", net_.list({21, 22}),
                                  "--subscribers", std::to_string(kSubscribers), "--modify", "1", "--cycles",
                                  std::to_string(cycles), "--rate", "1500", "--duration", "30"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runPeer(args, kPeerBound);
  }
};

TEST_F(Gtpv1Test, PdpContextsWithASecondaryAreCreatedUpdatedAndDeletedThroughTheProxy) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--secondary", "1"}, 2);
  expectClean(r);
  EXPECT_EQ(r.value("/sessions/created"), 2 * kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), 2 * kSubscribers);
  EXPECT_EQ(r.value("/secondaries/created"), 2 * kSubscribers);
  EXPECT_EQ(r.value("/secondaries/deleted"), 2 * kSubscribers);
  for (const char* t : {"create_pdp", "create_secondary", "update_pdp", "delete_secondary", "delete_pdp"})
    EXPECT_EQ(r.value(std::string("/transactions/") + t + "/completed"), 2 * kSubscribers) << t;
  // Both GGSNs of the pool took contexts, the PGW none.
  EXPECT_GT(r.summary.at("split").value(ip(21), 0ull), kSubscribers / 2);
  EXPECT_GT(r.summary.at("split").value(ip(22), 0ull), kSubscribers / 2);
  const json s = settledStatus(g);
  expectProxySettled(s, 2 * kSubscribers);
  EXPECT_EQ(workers(s, "worker.v1_datagrams_received"), workers(s, "worker.datagrams_received"));
  if (r.value("/retransmissions") == 0) {
    // Five transactions per activation, each relayed once.
    EXPECT_EQ(workers(s, "worker.transactions_started"), 5 * 2 * kSubscribers);
  }
}

TEST_F(Gtpv1Test, GgsnInitiatedUpdatesAndDeletionsReachTheSgsns) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--network-initiated", "0.5", "--secondary", "1"});
  expectClean(r);
  const uint64_t updated = r.value("/procedures/ggsn/network_update/completed");
  const uint64_t deleted = r.value("/procedures/ggsn/network_delete/completed");
  EXPECT_GT(updated, kSubscribers / 4);
  EXPECT_GT(deleted, 0u);
  EXPECT_EQ(r.value("/procedures/sgsn/network_update/completed"), updated) << "seen alike on both sides";
  EXPECT_EQ(r.value("/procedures/sgsn/network_delete/completed"), deleted);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
}

TEST_F(Gtpv1Test, AGgsnLosingRequestsIsHelpedByTheSgsnsRetransmissionsThroughTheProxy) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--ggsn-drop", ip(21) + "=0.1", "--t3-ms", "300", "--n3", "3"});
  expectClean(r);
  EXPECT_GT(r.value("/retransmissions"), 0u);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), kSubscribers);
  const json s = settledStatus(g);
  SCOPED_TRACE(s.dump(1));
  EXPECT_EQ(workers(s, "worker.sessions_created"), kSubscribers) << "no retransmitted creation made a second context";
  EXPECT_EQ(workers(s, "worker.sessions_deleted"), kSubscribers);
  EXPECT_GT(workers(s, "worker.requests_retransmitted") + workers(s, "worker.answers_replayed"), 0u);
}

}  // namespace
}  // namespace gtpcp::integration
