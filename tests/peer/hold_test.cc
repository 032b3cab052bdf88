// What a PGW-restart test needs from gtpcp-peer, with real processes over
// loopback UDP (fixture in peer_fixture.h): --mode hold keeps the sessions
// up and exits 0 without detaching; an SGW-only and a PGW-only process run
// side by side; a PGW-only process restarted with another --recovery says
// so in its Echo Responses; and an SGW-only process answers the Delete
// Bearer Requests a proxy sends it (the test plays the proxy), with answers
// that tshark decodes without a warning.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "tests/peer/peer_fixture.h"
#include "tests/peer/proxy_messages.h"
#include "tests/peer/tshark_view.h"
#include "tools/peer/messages.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {
namespace {

using namespace std::chrono_literals;
using gtp::v2::MessageType;
using nlohmann::json;
using testing::deleteBearerRequest;
using testing::proxiedCreateSessionResponse;
using testing::kPeer;
using testing::PeerIntegration;
using testing::tsharkView;
using testing::TsharkView;
using testing::UdpClient;

TEST_F(PeerIntegration, HoldKeepsSessionsUpAndExitsWithoutDetaching) {
  const int status = runThroughRelay({"--mode", "hold", "--subscribers", "100", "--setup-rate",
                                      "2000", "--duration", "1"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["mode"], "hold");
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["transactions"]["create_session"]["completed"], 100);
  EXPECT_EQ(j["transactions"]["modify_bearer"]["attempted"], 0);
  EXPECT_EQ(j["transactions"]["delete_session"]["attempted"], 0);
  EXPECT_EQ(j["sessions"]["created"], 100);
  EXPECT_EQ(j["sessions"]["deleted"], 0);
  EXPECT_EQ(j["sessions"]["up_at_end"], 100);
  EXPECT_EQ(j["pgw"][ip(21)]["sessions_up"], 100);
  EXPECT_EQ(j["network_initiated"]["delete_bearer_requests"], 0);
  EXPECT_EQ(j["network_initiated"]["sessions_deleted_by_network"], 0);
  EXPECT_GE(j["elapsed_s"].get<double>(), 1.0);  // held for --duration
  EXPECT_NE(testing::readFile(path("peer.out")).find("hold"), std::string::npos);
}

// Echo Request to `to` from `client`; the Recovery of the answer, if any.
std::optional<uint8_t> echoRecovery(UdpClient& client, const Endpoint& to, uint32_t seq) {
  std::array<uint8_t, 64> buf{};
  auto e = buildEchoRequest(seq, 1, buf);
  EXPECT_TRUE(e);
  client.send({buf.data(), e.value_or(0)}, to);
  const auto answer = client.receive(5s);
  gtp::v2::Message m;
  if (answer.empty() || !m.decode(answer) || m.messageType() != MessageType::kEchoResponse ||
      m.header().sequence_number != seq)
    return std::nullopt;
  auto r = gtp::v2::readFirst<gtp::v2::Recovery>(m);
  return r ? std::optional<uint8_t>(r->value) : std::nullopt;
}

TEST_F(PeerIntegration, SgwAndPgwInSeparateProcessesAndAPgwRestart) {
  auto relay = startRelay({ip(11)});
  const std::vector<std::string> pgw_args{kPeer, "--pgw", ip(21), "--relay", "--subscribers", "50",
                                          "--duration", "60"};
  auto pgw_argv = pgw_args;
  pgw_argv.insert(pgw_argv.end(), {"--recovery", "3", "--json", path("pgw.json")});
  auto pgw = start("pgw", pgw_argv);
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("pgw.err"));

  auto sgw = start("sgw", {kPeer, "--sgw", ip(11), "--proxy", ip(1), "--relay", "--mode", "hold",
                           "--subscribers", "50", "--setup-rate", "1000", "--duration", "1",
                           "--json", path("sgw.json")});
  EXPECT_EQ(sgw.wait(30s), std::optional<int>(0)) << testing::readFile(path("sgw.out"));
  const json s = readJson("sgw.json");
  EXPECT_EQ(s["roles"]["pgw"], false);
  EXPECT_EQ(s["sessions"]["created"], 50);
  EXPECT_EQ(s["sessions"]["up_at_end"], 50);
  EXPECT_EQ(s["mismatches"]["total"], 0);

  UdpClient client(addr(2));
  const Endpoint pgw_at{addr(21), 2123};
  EXPECT_EQ(echoRecovery(client, pgw_at, 0x10), std::optional<uint8_t>(3));
  EXPECT_EQ(pgw.stop(5s), 0);
  const json p = readJson("pgw.json");
  EXPECT_EQ(p["roles"]["sgw"], false);
  EXPECT_EQ(p["pgw"][ip(21)]["sessions_up"], 50);
  EXPECT_EQ(p["mismatches"]["total"], 0);

  // The same PGW again, restarted: a new Recovery value, no sessions.
  auto restarted_argv = pgw_args;
  restarted_argv.insert(restarted_argv.end(), {"--recovery", "4", "--json", path("pgw2.json")});
  auto restarted = start("pgw2", restarted_argv);
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("pgw2.err"));
  EXPECT_EQ(echoRecovery(client, pgw_at, 0x11), std::optional<uint8_t>(4));
  EXPECT_EQ(restarted.stop(5s), 0);
  EXPECT_EQ(readJson("pgw2.json")["pgw"][ip(21)]["sessions_up"], 0);
  EXPECT_EQ(relay.stop(5s), 0);
}

// ---- The test as the proxy in front of an SGW-only process ----

struct DeleteBearerAnswer {
  uint32_t teid = 0xffffffff;
  uint32_t seq = 0;
  std::optional<uint8_t> cause;
  std::optional<uint8_t> lbi;
};

DeleteBearerAnswer readAnswer(const std::vector<uint8_t>& bytes) {
  DeleteBearerAnswer a;
  gtp::v2::Message m;
  if (!m.decode(bytes) || m.messageType() != MessageType::kDeleteBearerResponse) return a;
  EXPECT_TRUE(gtp::v2::checkMandatory(m));
  EXPECT_TRUE(m.header().teidPresent());
  a.teid = m.header().teid;
  a.seq = m.header().sequence_number;
  if (auto c = gtp::v2::readFirst<gtp::v2::CauseIe>(m)) a.cause = c->value;
  if (auto e = gtp::v2::readFirst<gtp::v2::Ebi>(m, 0)) a.lbi = e->value;
  EXPECT_EQ(m.find(gtp::v2::IeType::kBearerContext), nullptr);
  return a;
}

TEST_F(PeerIntegration, SgwOnlyAnswersTheProxysDeleteBearerRequests) {
  ASSERT_EQ(::access("/usr/bin/tshark", X_OK), 0)
      << "tshark is not installed: the integration suite needs it (Debian package tshark)";
  UdpClient proxy(addr(1), 2123);
  auto sgw = start("peer", {kPeer, "--sgw", ip(11), "--proxy", ip(1), "--mode", "hold",
                            "--subscribers", "3", "--setup-rate", "100", "--duration", "60",
                            "--json", path("peer.json")});
  ASSERT_TRUE(waitBound(11)) << testing::readFile(path("peer.err"));

  // Three attaches, answered as the proxy would; the proxy's TEID for
  // subscriber k is 0x5000 + k.
  std::map<uint32_t, uint32_t> proxy_teid;  // the SGW's control TEID -> the proxy's
  std::vector<uint32_t> sgw_teids;
  for (int k = 0; k < 3; ++k) {
    const auto request = proxy.receive(5s);
    ASSERT_FALSE(request.empty()) << "no Create Session Request " << k;
    gtp::v2::Message m;
    ASSERT_TRUE(m.decode(request));
    ASSERT_EQ(m.messageType(), MessageType::kCreateSessionRequest);
    auto v = viewCreateSessionRequest(m);
    ASSERT_TRUE(v && v->sender && v->imsi);
    const uint32_t teid = 0x5000u + static_cast<uint32_t>(k);
    proxy_teid[v->sender->teid] = teid;
    sgw_teids.push_back(v->sender->teid);
    proxy.send(proxiedCreateSessionResponse(m.header().sequence_number, v->sender->teid, addr(1),
                                            teid, addr(21), *v->imsi),
               Endpoint{addr(11), 2123});
  }

  // The PGW behind the proxy restarted: delete the first session.
  const Endpoint sgw_at{addr(11), 2123};
  const auto request = deleteBearerRequest(sgw_teids[0], 0x777);
  proxy.send(request, sgw_at);
  const auto answer = proxy.receive(5s);
  ASSERT_FALSE(answer.empty());
  const DeleteBearerAnswer a = readAnswer(answer);
  EXPECT_EQ(a.teid, proxy_teid[sgw_teids[0]]);
  EXPECT_EQ(a.seq, 0x777u);
  EXPECT_EQ(a.cause, std::optional<uint8_t>(kCauseAccepted));
  EXPECT_EQ(a.lbi, std::optional<uint8_t>(kDefaultEbi));

  // The proxy's retransmission: the same answer, once more.
  proxy.send(request, sgw_at);
  EXPECT_EQ(proxy.receive(5s), answer);

  // A TEID the SGW never gave out.
  const auto unknown_request = deleteBearerRequest(0x0badf00d, 0x778);
  proxy.send(unknown_request, sgw_at);
  const auto unknown = proxy.receive(5s);
  const DeleteBearerAnswer u = readAnswer(unknown);
  EXPECT_EQ(u.teid, 0u);
  EXPECT_EQ(u.seq, 0x778u);
  EXPECT_EQ(u.cause, std::optional<uint8_t>(kCauseContextNotFound));
  EXPECT_EQ(u.lbi, std::nullopt);

  EXPECT_EQ(sgw.stop(10s), 0) << testing::readFile(path("peer.out"));
  const json j = readJson("peer.json");
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["sessions"]["created"], 3);
  EXPECT_EQ(j["sessions"]["up_at_end"], 2);
  EXPECT_EQ(j["transactions"]["delete_session"]["attempted"], 0);
  const json& n = j["network_initiated"];
  EXPECT_EQ(n["delete_bearer_requests"], 2);
  EXPECT_EQ(n["sessions_deleted_by_network"], 1);
  EXPECT_EQ(n["delete_bearer_unknown"], 1);
  EXPECT_EQ(n["delete_bearer_duplicates"], 1);
  EXPECT_EQ(n["transactions_cancelled"], 0);
  EXPECT_EQ(n["request_causes"]["8"], 2);
  EXPECT_EQ(j["mismatches"]["total"], 0);
  EXPECT_EQ(j["malformed"]["total"], 0);
  EXPECT_NE(testing::readFile(path("peer.out")).find("network-initiated"), std::string::npos);

  // A third party decodes the exchange without a warning.
  const TsharkView t = tsharkView({request, answer, unknown_request, unknown}, path("dbr.pcap"),
                                  path("tshark.log"));
  EXPECT_EQ(t.flagged, "") << "frames flagged by tshark (frame, expert messages)";
  EXPECT_EQ(t.types, "99\n100\n99\n100\n");
}

}  // namespace
}  // namespace gtpcp::peer
