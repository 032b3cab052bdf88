// The procedures beyond attach, modify and detach relayed by a real group
// (launcher, forwarder, two workers) between the peer emulator's SGWs and
// PGWs: a dedicated bearer created, updated and deleted by the PGW on every
// session (alone and piggybacked on the Create Session Response), Modify
// Bearer Commands answered by a triggered Update Bearer Request or a Modify
// Bearer Failure Indication (TS 29.274 §7.2.14, §7.6: the SGW gets its own
// command's number back), Modify Bearer Requests to TEIDs the proxy never
// gave; all of them on the same sessions, and with a PGW that loses requests.
// The emulator checks every TEID, sequence number and F-TEID on both sides;
// each test holds its counts against the proxy's (`gtpcp status`).
#include <gtest/gtest.h>

#include <signal.h>

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
// An emulator run below takes one to four seconds; one that overruns this
// is killed.
constexpr auto kPeerBound = 60s;

// The emulator's verdict on a run that should be clean: exit status 0, and
// nothing wrong, lost or left waiting on either side.
void expectClean(const testing::PeerResult& r) {
  EXPECT_EQ(r.status, std::optional<int>(0)) << "gtpcp-peer failed (see its summary below)";
  for (const char* zero : {"/mismatches/total", "/timeouts", "/malformed/total", "/outstanding_at_end",
                           "/sessions/waiting_at_end", "/pgw_outstanding_at_end"})
    EXPECT_EQ(r.value(zero), 0u) << zero << (r.summary.contains("mismatches") ? r.summary.at("mismatches").dump() : "");
}
// Every procedure of `rows` started and completed `count` times by `role`
// ("sgw", "pgw"), without a timeout or mismatch.
void expectProcedures(const testing::PeerResult& r, const std::string& role, const std::vector<std::string>& rows,
                      uint64_t count) {
  for (const std::string& row : rows) {
    const std::string at = "/procedures/" + role + "/" + row;
    EXPECT_EQ(r.value(at + "/started"), count) << at;
    EXPECT_EQ(r.value(at + "/completed"), count) << at;
    EXPECT_EQ(r.value(at + "/timeouts"), 0u) << at;
    EXPECT_EQ(r.value(at + "/mismatches"), 0u) << at;
  }
}
// The attach, the modification and the detach of every subscriber.
void expectLifecycle(const testing::PeerResult& r, uint64_t subscribers) {
  EXPECT_EQ(r.value("/sessions/created"), subscribers);
  EXPECT_EQ(r.value("/sessions/deleted"), subscribers);
  EXPECT_EQ(r.value("/sessions/up_at_end"), 0u);
  EXPECT_EQ(r.value("/transactions/modify_bearer/completed"), subscribers);
}

// The proxy after a run in which every session it made was deleted, no
// transaction expired and no response went unmatched.
void expectProxySettled(const json& s, uint64_t sessions) {
  SCOPED_TRACE("gtpcp status --json:\n" + s.dump(1));
  EXPECT_EQ(s.value("sessions", 1ull), 0u);
  EXPECT_EQ(workers(s, "worker.sessions_created"), sessions);
  EXPECT_EQ(workers(s, "worker.sessions_deleted"), sessions);
  EXPECT_EQ(workers(s, "worker.transactions_expired"), 0u);
  EXPECT_EQ(workers(s, "worker.responses_unmatched"), 0u);
  EXPECT_EQ(workers(s, "worker.triggered_unmatched"), 0u);
  EXPECT_EQ(workers(s, "worker.decode_errors"), 0u);
  EXPECT_EQ(workers(s, "worker.egress_full_dropped"), 0u);
}

class ProceduresTest : public DataPathTest {
 protected:
  // A group of two workers, one pool of the PGWs at .21 and .22.
  TestGroup& start() {
    return startGroup(2, "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: " + ip(21) +
                             "}\n      - {name: b, address: " + ip(22) +
                             "}\nrules:\n  - {name: default, pool: internet}\n" + kNoHealthChecks);
  }
  // A lifecycle run of kSubscribers over SGWs .11, .12 and PGWs .21, .22,
  // one modification per attach, `cycles` attaches each, and `extra` options.
  testing::PeerResult run(std::vector<std::string> extra, int cycles = 1) {
    std::vector<std::string> args{"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22}),
                                  "--subscribers", std::to_string(kSubscribers), "--modify", "1", "--cycles",
                                  std::to_string(cycles), "--rate", "1500", "--duration", "30"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runPeer(args, kPeerBound);
  }
};

const std::vector<std::string> kDedicated = {"create_bearer", "update_bearer", "delete_bearer"};

// Seen from both sides, after `attaches` attaches with --dedicated-bearer and
// --commands: a dedicated bearer and two commands on each.
void expectBearersAndCommands(const testing::PeerResult& r, uint64_t attaches) {
  for (const std::string role : {"sgw", "pgw"}) {
    expectProcedures(r, role, kDedicated, attaches);
    expectProcedures(r, role, {"modify_bearer_command"}, 2 * attaches);
    expectProcedures(r, role, {"triggered_update_bearer", "failure_indication"}, attaches);
  }
}

TEST_F(ProceduresTest, EveryPgwCreatesUpdatesAndDeletesADedicatedBearerThroughTheProxy) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--dedicated-bearer"});
  expectClean(r);
  expectLifecycle(r, kSubscribers);
  expectProcedures(r, "sgw", kDedicated, kSubscribers);
  expectProcedures(r, "pgw", kDedicated, kSubscribers);
  EXPECT_EQ(r.value("/network_initiated/piggybacked"), 0u);

  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
  // Create, modify, delete and the three bearer procedures, each one
  // transaction; nothing was refused.
  if (r.value("/retransmissions") == 0) {
    EXPECT_EQ(workers(s, "worker.transactions_started"), 6 * kSubscribers);
  }
  EXPECT_EQ(workers(s, "worker.transactions_completed"), workers(s, "worker.transactions_started"));
  EXPECT_EQ(workers(s, "worker.context_not_found"), 0u);
  EXPECT_EQ(workers(s, "worker.rejections_sent"), 0u);
}

TEST_F(ProceduresTest, ACreateBearerRequestPiggybackedOnTheCreateSessionResponseArrivesOnIt) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--dedicated-bearer", "--piggyback"});
  expectClean(r);
  expectLifecycle(r, kSubscribers);
  expectProcedures(r, "sgw", kDedicated, kSubscribers);
  expectProcedures(r, "pgw", kDedicated, kSubscribers);
  // Sent on every accepted creation, and each arrived still riding on it.
  uint64_t sent = 0;
  for (const std::string& pgw : {ip(21), ip(22)}) sent += r.summary.at("pgw").at(pgw).value("piggybacked", 0ull);
  EXPECT_EQ(sent, kSubscribers);
  EXPECT_EQ(r.value("/network_initiated/piggybacked"), kSubscribers);

  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
  EXPECT_EQ(workers(s, "worker.transactions_completed"), workers(s, "worker.transactions_started"));
  EXPECT_EQ(workers(s, "worker.context_not_found"), 0u);
}

TEST_F(ProceduresTest, CommandsComeBackAsTheTriggeredRequestOrTheFailureIndicationWithTheSgwsOwnNumber) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  // The PGWs in a process of their own: what the SGWs check of the
  // triggered requests (their numbers, what they carry) crosses processes.
  const std::string dir = g.dir().path();
  testing::PeerRun pgw({"--pgw", net_.list({21, 22}), "--proxy", proxy(), "--subscribers",
                        std::to_string(kSubscribers), "--commands", "--duration", "60"},
                       dir, "pgw");
  ASSERT_TRUE(testing::waitUntil(
      [&] { return testing::udpBound(net_.addr(21), 2123) && testing::udpBound(net_.addr(22), 2123); }, 5s))
      << "the PGW process did not bind";
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--subscribers",
                          std::to_string(kSubscribers), "--modify", "1", "--cycles", "1", "--rate", "1500",
                          "--duration", "30", "--commands"},
                         kPeerBound, "sgw");
  expectClean(r);
  expectLifecycle(r, kSubscribers);
  // Two commands per session: the first answered by an Update Bearer
  // Request, the second refused with cause 72.
  expectProcedures(r, "sgw", {"modify_bearer_command"}, 2 * kSubscribers);
  expectProcedures(r, "sgw", {"triggered_update_bearer", "failure_indication"}, kSubscribers);
  EXPECT_EQ(r.value("/causes/72"), kSubscribers);
  ASSERT_EQ(::kill(pgw.pid(), SIGTERM), 0);
  const auto p = pgw.wait(10s);
  note(p.describe());
  EXPECT_EQ(p.status, std::optional<int>(0));
  EXPECT_EQ(p.value("/mismatches/total"), 0u);
  EXPECT_EQ(p.value("/pgw_outstanding_at_end"), 0u);
  expectProcedures(p, "pgw", {"modify_bearer_command"}, 2 * kSubscribers);
  expectProcedures(p, "pgw", {"triggered_update_bearer", "failure_indication"}, kSubscribers);

  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
  EXPECT_EQ(workers(s, "worker.context_not_found"), 0u);
}

TEST_F(ProceduresTest, AllOfThemOnTheSameSessionsOverTwoAttachesInterleaveWithoutMismatch) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  // The PGW's bearer requests, the SGW's commands and the requests they
  // trigger cross on the same sessions; every subscriber attaches twice.
  constexpr uint64_t kProbes = 100;
  constexpr uint64_t kAttaches = 2 * kSubscribers;
  const auto r = run({"--dedicated-bearer", "--piggyback", "--commands", "--unknown-teid", std::to_string(kProbes)}, 2);
  expectClean(r);
  expectLifecycle(r, kAttaches);
  expectBearersAndCommands(r, kAttaches);
  expectProcedures(r, "sgw", {"unknown_teid"}, kProbes);
  EXPECT_EQ(r.value("/network_initiated/piggybacked"), kAttaches);

  const json s = settledStatus(g);
  expectProxySettled(s, kAttaches);
  EXPECT_EQ(workers(s, "worker.context_not_found"), kProbes);
}

TEST_F(ProceduresTest, RequestsLostBeforeAPgwAreSentAgainAndEachProcedureStillCompletesOnce) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  // One PGW drops a tenth of what it gets (commands included): the SGWs
  // send again after T3 and the proxy sends the same translated request on.
  const auto r = run({"--dedicated-bearer", "--commands", "--pgw-drop", ip(21) + "=0.1", "--t3-ms", "200", "--n3",
                      "5"});
  expectClean(r);
  expectLifecycle(r, kSubscribers);
  EXPECT_GT(r.value("/pgw/" + ip(21) + "/dropped"), 0u);
  EXPECT_GT(r.value("/transactions/modify_bearer_command/retransmissions"), 0u);
  expectBearersAndCommands(r, kSubscribers);

  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
  EXPECT_GT(workers(s, "worker.requests_retransmitted"), 0u);
}

TEST_F(ProceduresTest, ModifyBearerRequestsToTeidsNeverGivenAreAnsweredWithContextNotFound) {
  TestGroup& g = start();
  ASSERT_FALSE(HasFailure());
  constexpr uint64_t kProbes = 500;
  const auto r = run({"--unknown-teid", std::to_string(kProbes)});
  expectClean(r);
  expectLifecycle(r, kSubscribers);
  expectProcedures(r, "sgw", {"unknown_teid"}, kProbes);
  EXPECT_EQ(r.value("/causes/64"), kProbes);
  for (const std::string& pgw : {ip(21), ip(22)})
    EXPECT_EQ(r.summary.at("pgw").at(pgw).value("context_not_found", 1ull), 0u) << "a probe reached " << pgw;

  const json s = settledStatus(g);
  expectProxySettled(s, kSubscribers);
  EXPECT_EQ(workers(s, "worker.context_not_found"), kProbes);
  EXPECT_EQ(workers(s, "worker.rejections_sent"), kProbes);
}

}  // namespace
}  // namespace gtpcp::integration
