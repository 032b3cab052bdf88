// gtpcp-peer as a real process on the IPv6 loopback address (::1, so no
// root and no namespace): an SGW-only process with the test as an IPv6 proxy
// in front of it, and the options that pair a node with a proxy of another
// family refused. The whole group over IPv6 and mixed families runs in
// tests/integration/families_test.cc, in a network namespace.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/peer/peer_fixture.h"
#include "tests/peer/proxy_messages.h"
#include "tools/peer/messages.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {
namespace {

using namespace std::chrono_literals;
using gtp::v2::MessageType;
using testing::kPeer;
using testing::PeerIntegration;
using testing::UdpClient;

const IpAddress kLoopback6 = IpAddress::ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
// The PGW behind the proxy: only its user-plane F-TEID names it, so it needs
// no socket here.
const IpAddress kPgw6 = IpAddress::ipv6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x21});

// A UDP port free on ::1 now: the SGW's (--sgw-port-base), clear of 2123
// where another run or a proxy may be.
uint16_t freePort() {
  UdpClient probe(kLoopback6);
  return probe.local().port;
}

TEST_F(PeerIntegration, SgwOnIpv6LoopbackSpeaksIpv6ToTheProxy) {
  UdpClient proxy(kLoopback6);
  const uint16_t sgw_port = freePort();
  const std::string proxy_text = "[::1]:" + std::to_string(proxy.local().port);
  auto sgw =
      start("peer", {kPeer, "--sgw", "::1", "--sgw-port-base", std::to_string(sgw_port), "--proxy",
                     proxy_text, "--mode", "hold", "--subscribers", "3", "--setup-rate", "100",
                     "--duration", "60", "--json", path("peer.json")});
  const Endpoint sgw_at{kLoopback6, sgw_port};

  // Three attaches, each from [::1]:sgw_port with IPv6 F-TEIDs naming ::1,
  // answered as an IPv6 proxy would.
  std::vector<uint32_t> sgw_teids;
  std::map<uint32_t, uint32_t> proxy_teid;  // the SGW's control TEID -> the proxy's
  for (uint32_t k = 0; k < 3; ++k) {
    const auto request = proxy.receive(5s);
    ASSERT_FALSE(request.empty()) << "no Create Session Request " << k << ": "
                                  << testing::readFile(path("peer.err"));
    gtp::v2::Message m;
    ASSERT_TRUE(m.decode(request));
    ASSERT_EQ(m.messageType(), MessageType::kCreateSessionRequest);
    auto v = viewCreateSessionRequest(m);
    ASSERT_TRUE(v && v->sender && v->sgw_u && v->imsi);
    for (const auto& f : {*v->sender, *v->sgw_u}) {
      EXPECT_FALSE(f.ipv4);
      ASSERT_TRUE(f.ipv6);
      EXPECT_EQ(f.ipv6->octets, kLoopback6.octets);
    }
    EXPECT_EQ(v->sgw_u->teid, userPlaneTeid(PlaneSide::kSgw, *v->imsi, kLoopback6));
    sgw_teids.push_back(v->sender->teid);
    proxy_teid[v->sender->teid] = 0x5000 + k;
    proxy.send(testing::proxiedCreateSessionResponse(m.header().sequence_number, v->sender->teid,
                                                     kLoopback6, 0x5000 + k, kPgw6, *v->imsi),
               sgw_at);
  }

  // The network deletes the first session: the answer comes back over IPv6.
  proxy.send(testing::deleteBearerRequest(sgw_teids[0], 0x777), sgw_at);
  const auto answer = proxy.receive(5s);
  gtp::v2::Message m;
  ASSERT_TRUE(m.decode(answer));
  EXPECT_EQ(m.messageType(), MessageType::kDeleteBearerResponse);
  EXPECT_EQ(m.header().teid, proxy_teid[sgw_teids[0]]);

  EXPECT_EQ(sgw.stop(10s), 0) << testing::readFile(path("peer.out"));
  const nlohmann::json j = readJson("peer.json");
  EXPECT_EQ(j["sessions"]["created"], 3);
  EXPECT_EQ(j["sessions"]["up_at_end"], 2);
  EXPECT_EQ(j["network_initiated"]["sessions_deleted_by_network"], 1);
  EXPECT_EQ(j["mismatches"]["total"], 0);
  EXPECT_EQ(j["malformed"]["total"], 0);
  EXPECT_EQ(j["split"]["fd00::21"], 3);
  EXPECT_EQ(j["socket"]["sockets"][0]["local"], "[::1]:" + std::to_string(sgw_port));
}

TEST_F(PeerIntegration, ANodeWithoutAProxyAddressOfItsFamilyIsAUsageError) {
  auto bad = start("peer", {kPeer, "--sgw", "::1", "--proxy", ip(1)});
  EXPECT_EQ(bad.wait(10s), std::optional<int>(2));
  EXPECT_NE(testing::readFile(path("peer.err"))
                .find("--sgw: ::1 is IPv6 and --proxy has no IPv6 address"),
            std::string::npos)
      << testing::readFile(path("peer.err"));
  auto twice = start("peer2", {kPeer, "--sgw", ip(11), "--proxy", ip(1) + "," + ip(2)});
  EXPECT_EQ(twice.wait(10s), std::optional<int>(2));
  EXPECT_NE(testing::readFile(path("peer2.err")).find("--proxy: one IPv4 address at most"),
            std::string::npos);
  auto check = start(
      "peer3", {kPeer, "--sgw", ip(11) + ",::1", "--sgw-port-base", "40000", "--proxy",
                ip(1) + ",[::1]:2124", "--pgw", "::1", "--proxy-gateway", "::1", "--check-config"});
  EXPECT_EQ(check.wait(10s), std::optional<int>(0)) << testing::readFile(path("peer3.err"));
}

}  // namespace
}  // namespace gtpcp::peer
