// gtpcp-peer and gtpcp-relay as real processes over loopback UDP (fixture in
// peer_fixture.h): lifecycle and modify-only runs, PGW behaviours on demand,
// the checks failing when they should, a PGW-only process answering
// hand-built requests, usage errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/peer/peer_fixture.h"
#include "tools/peer/messages.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::kPeer;
using testing::kRelay;
using testing::PeerIntegration;
using testing::UdpClient;

TEST_F(PeerIntegration, LifecycleThroughRelayCompletes) {
  const int status = runThroughRelay({"--subscribers", "200", "--modify", "2", "--cycles", "1",
                                      "--rate", "2000", "--duration", "30", "--t3-ms", "1000"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_EQ(j["transactions"]["create_session"]["attempted"], 200);
  EXPECT_EQ(j["transactions"]["create_session"]["completed"], 200);
  EXPECT_EQ(j["transactions"]["modify_bearer"]["completed"], 400);
  EXPECT_EQ(j["transactions"]["delete_session"]["completed"], 200);
  EXPECT_EQ(j["timeouts"], 0);
  EXPECT_EQ(j["mismatches"]["total"], 0);
  EXPECT_EQ(j["malformed"]["total"], 0);
  EXPECT_EQ(j["sessions"]["created"], 200);
  EXPECT_EQ(j["sessions"]["deleted"], 200);
  EXPECT_EQ(j["sessions"]["up_at_end"], 0);
  EXPECT_EQ(j["split"][ip(21)], 200);
  EXPECT_EQ(j["pgw"][ip(21)]["sessions_created"], 200);
  EXPECT_EQ(j["latency_ms"]["all"]["count"], 800);
  EXPECT_GT(j["latency_ms"]["all"]["p50"].get<double>(), 0.0);
  const json r = readJson("relay.json");
  EXPECT_EQ(r["from_downstream"], 800);
  EXPECT_EQ(r["to_upstream"], 800);
  EXPECT_EQ(r["from_upstream"], 800);
  EXPECT_EQ(r["to_downstream"], 800);
}

TEST_F(PeerIntegration, PgwCauseRejectsCreations) {
  const int status = runThroughRelay({"--subscribers", "50", "--cycles", "1", "--rate", "1000",
                                      "--pgw-cause", ip(21) + "=73"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["sessions"]["rejected"], 50);
  EXPECT_EQ(j["sessions"]["created"], 0);
  EXPECT_EQ(j["causes"]["73"], 50);
  EXPECT_EQ(j["pgw"][ip(21)]["sessions_rejected"], 50);
  EXPECT_EQ(j["transactions"]["modify_bearer"]["attempted"], 0);
  EXPECT_EQ(j["mismatches"]["total"], 0);
}

TEST_F(PeerIntegration, PgwDropCausesRetransmissionsThatSucceed) {
  const int status = runThroughRelay({"--subscribers", "200", "--modify", "1", "--cycles", "1",
                                      "--rate", "2000", "--t3-ms", "150", "--n3", "4",
                                      "--pgw-drop", ip(21) + "=0.05"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_GT(j["retransmissions"].get<int>(), 0);
  EXPECT_GT(j["pgw"][ip(21)]["dropped"].get<int>(), 0);
  EXPECT_EQ(j["timeouts"], 0);
  EXPECT_EQ(j["transactions"]["total"]["completed"], 600);
  EXPECT_EQ(j["mismatches"]["total"], 0);
}

TEST_F(PeerIntegration, PgwDelayShowsInLatency) {
  const int status = runThroughRelay({"--subscribers", "20", "--modify", "1", "--cycles", "1",
                                      "--rate", "500", "--pgw-delay-ms", ip(21) + "=25"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["pgw"][ip(21)]["delayed"], 60);
  EXPECT_GE(j["latency_ms"]["all"]["p50"].get<double>(), 25.0);
  EXPECT_EQ(j["transactions"]["total"]["completed"], 60);
}

TEST_F(PeerIntegration, ModifyOnlyMeasuresModificationsOnly) {
  const int status = runThroughRelay({"--mode", "modify-only", "--subscribers", "100", "--rate",
                                      "1000", "--setup-rate", "2000", "--duration", "1"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["transactions"]["create_session"]["completed"], 100);
  EXPECT_EQ(j["transactions"]["delete_session"]["completed"], 100);
  EXPECT_GT(j["transactions"]["modify_bearer"]["completed"].get<int>(), 500);
  EXPECT_EQ(j["latency_ms"]["create_session"]["count"], 0);
  EXPECT_EQ(j["latency_ms"]["all"]["count"], j["transactions"]["modify_bearer"]["completed"]);
  EXPECT_GT(j["tps_achieved"].get<double>(), 500.0);
  EXPECT_EQ(j["sessions"]["up_at_end"], 0);
}

TEST_F(PeerIntegration, SameSequenceNumbersStayApart) {
  const int status = runThroughRelay({"--subscribers", "100", "--modify", "1", "--cycles", "1",
                                      "--rate", "2000", "--same-sequence"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["transactions"]["total"]["completed"], 300);
  EXPECT_EQ(j["pgw"][ip(21)]["duplicates_answered"], 0);
}

TEST_F(PeerIntegration, WrongFteidsAreMismatches) {
  // Without --relay the SGWs expect a proxy to rewrite the control F-TEIDs;
  // the relay does not, and both sides must say so.
  const int status = runThroughRelay({"--subscribers", "20", "--cycles", "1", "--rate", "1000",
                                      "--t3-ms", "300", "--n3", "1"},
                                     /*relay_flag=*/false);
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 1);
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_GT(j["mismatches"]["total"].get<int>(), 0);
  EXPECT_EQ(j["mismatches"]["by_kind"]["sgw_pgw_fteid_not_proxy"], 20);
  EXPECT_EQ(j["mismatches"]["by_kind"]["pgw_sender_fteid_not_proxy"], 20);
}

// A Create Session Request as a proxy would forward it, built by hand with
// the codec (not with the emulator's builder).
std::vector<uint8_t> handBuiltCsr(uint32_t sender_addr, uint32_t sgw_u_addr, uint32_t seq) {
  using namespace gtp::v2;
  std::array<uint8_t, 512> buf{};
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0u, seq);
  Imsi imsi;
  for (char c : std::string_view("001010000000003")) imsi.digits.push(c);
  b.add(imsi);
  b.add(RatType{6});
  FTeid sender;
  sender.interface_type = kIfS5S8SgwGtpC;
  sender.teid = 0x00c0ffee;
  sender.ipv4 = toIpv4(sender_addr);
  b.add(sender, 0);
  Apn apn;
  for (char c : std::string_view("internet")) apn.text.push(c);
  b.add(apn);
  b.add(PdnType{1});
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{5});
  BearerQos qos;
  qos.qci = 9;
  qos.pl = 15;
  b.add(qos);
  FTeid u;
  u.interface_type = kIfS5S8SgwGtpU;
  u.teid = userPlaneTeid(PlaneSide::kSgw, 1010000000003, sgw_u_addr);
  u.ipv4 = toIpv4(sgw_u_addr);
  b.add(u, 2);
  b.endGrouped();
  auto r = b.finish();
  EXPECT_TRUE(r);
  return std::vector<uint8_t>(r->begin(), r->end());
}

TEST_F(PeerIntegration, PgwOnlyAnswersAHandBuiltCreateSessionRequest) {
  auto pgw = start("peer", {kPeer, "--pgw", ip(21), "--proxy", ip(1), "--subscribers", "10",
                            "--duration", "30", "--json", path("peer.json")});
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("peer.err"));
  UdpClient client(addr(1));
  const Endpoint to{addr(21), 2123};
  client.send(handBuiltCsr(addr(1), addr(11), 0x123), to);
  const auto answer = client.receive(5s);
  ASSERT_FALSE(answer.empty());
  gtp::v2::Message m;
  ASSERT_TRUE(m.decode(answer));
  EXPECT_EQ(m.messageType(), gtp::v2::MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0x00c0ffeeu);
  EXPECT_EQ(m.header().sequence_number, 0x123u);
  auto cause = gtp::v2::readFirst<gtp::v2::CauseIe>(m);
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->value, kCauseAccepted);
  auto f = gtp::v2::readFirst<gtp::v2::FTeid>(m, 1);
  ASSERT_TRUE(f && f->ipv4);
  EXPECT_EQ(f->interface_type, kIfS5S8PgwGtpC);
  EXPECT_EQ(fromIpv4(*f->ipv4), addr(21));
  EXPECT_NE(f->teid, 0u);
  const auto* bc = m.find(gtp::v2::IeType::kBearerContext);
  ASSERT_NE(bc, nullptr);
  const auto* u = m.findChild(*bc, gtp::v2::IeType::kFTeid, 2);
  ASSERT_NE(u, nullptr);
  auto uf = gtp::v2::read<gtp::v2::FTeid>(m, *u);
  ASSERT_TRUE(uf && uf->ipv4);
  EXPECT_EQ(uf->interface_type, kIfS5S8PgwGtpU);
  EXPECT_EQ(fromIpv4(*uf->ipv4), addr(21));

  // The same request again (a retransmission) gets the same answer.
  client.send(handBuiltCsr(addr(1), addr(11), 0x123), to);
  EXPECT_EQ(client.receive(5s), answer);

  // Echo.
  std::array<uint8_t, 64> echo{};
  auto e = buildEchoRequest(0x77, 1, echo);
  ASSERT_TRUE(e);
  client.send({echo.data(), *e}, to);
  const auto echo_answer = client.receive(5s);
  ASSERT_TRUE(m.decode(echo_answer));
  EXPECT_EQ(m.messageType(), gtp::v2::MessageType::kEchoResponse);
  EXPECT_EQ(m.header().sequence_number, 0x77u);

  EXPECT_EQ(pgw.stop(5s), 0);
  const json j = readJson("peer.json");
  EXPECT_EQ(j["pgw"][ip(21)]["sessions_created"], 1);
  EXPECT_EQ(j["pgw"][ip(21)]["duplicates_answered"], 1);
  EXPECT_EQ(j["pgw"][ip(21)]["requests"]["echo"], 1);
  EXPECT_EQ(j["mismatches"]["total"], 0);
}

TEST_F(PeerIntegration, PgwOnlyCountsASenderFteidThatIsNotTheProxy) {
  auto pgw = start("peer", {kPeer, "--pgw", ip(21), "--proxy", ip(1), "--subscribers", "10",
                            "--duration", "30", "--json", path("peer.json")});
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("peer.err"));
  UdpClient client(addr(1));
  client.send(handBuiltCsr(addr(99), addr(11), 0x124), Endpoint{addr(21), 2123});
  ASSERT_FALSE(client.receive(5s).empty());
  EXPECT_EQ(pgw.stop(5s), 1);
  const json j = readJson("peer.json");
  EXPECT_EQ(j["mismatches"]["by_kind"]["pgw_sender_fteid_not_proxy"], 1);
}

TEST_F(PeerIntegration, UsageErrorsExitWithTwo) {
  auto bad = start("peer", {kPeer, "--sgw", ip(11), "--proxy", ip(1), "--pgw-cause", ip(22) + "=73"});
  EXPECT_EQ(bad.wait(10s), std::optional<int>(2));
  EXPECT_NE(testing::readFile(path("peer.err")).find("--pgw-cause"), std::string::npos);
  auto unknown = start("peer2", {kPeer, "--no-such-flag"});
  EXPECT_EQ(unknown.wait(10s), std::optional<int>(2));
  auto relay = start("relay", {kRelay, "--listen", ip(1)});
  EXPECT_EQ(relay.wait(10s), std::optional<int>(2));
}

}  // namespace
}  // namespace gtpcp::peer
