// gtpcp-peer's GTPv1-C roles (--sgsn, --ggsn) as real processes over
// loopback UDP (fixture in peer_fixture.h), without a proxy (--relay, the
// SGSNs sending to the GGSN): the lifecycle with a secondary context, the
// GGSN's own procedures counted alike on both sides, drops retransmitted,
// separate SGSN and GGSN processes; and, with the test playing the other
// side, every message either role sends decoded by the codec (mandatory IEs,
// ascending IE order, what each carries), repeats answered from the cache,
// and the whole exchange dissected by tshark without a warning.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "tests/peer/engine_harness.h"
#include "tests/peer/peer_fixture.h"
#include "tests/peer/tshark_view.h"
#include "tools/peer/v1_messages.h"

namespace gtpcp::peer {
namespace {

using namespace std::chrono_literals;
using gtp::v1::MessageType;
using gtp::v1::Sender;
using nlohmann::json;
using testing::kPeer;
using testing::PeerIntegration;
using testing::UdpClient;

class V1Run : public PeerIntegration {
 protected:
  // gtpcp-peer with SGSNs .11 and .12 and GGSN .21, sending to it directly.
  int runDirect(std::vector<std::string> extra) {
    std::vector<std::string> argv{kPeer, "--sgsn", ip(11) + "," + ip(12), "--ggsn", ip(21),
                                  "--proxy", ip(21), "--relay", "--json", path("peer.json")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto peer = start("peer", argv);
    auto status = peer.wait(60s);
    EXPECT_TRUE(status.has_value()) << "gtpcp-peer did not finish in time";
    if (!status) peer.stop(2s);
    return status.value_or(-1);
  }

  // Decodes `bytes` as a GTPv1-C message that `sender` sent and checks what
  // every message must: version 1 with a sequence number, the mandatory IEs,
  // IE types ascending (TS 29.060 §7.7.0).
  PdpView checked(const std::vector<uint8_t>& bytes, gtp::v1::Message& m, Sender sender) {
    EXPECT_TRUE(m.decode(bytes).has_value());
    EXPECT_EQ(m.header().version(), 1);
    EXPECT_TRUE(m.header().hasSequenceNumber());
    const auto mandatory = gtp::v1::checkMandatory(m, sender);
    EXPECT_TRUE(mandatory.has_value())
        << "message " << int(m.header().message_type) << ": IE "
        << (mandatory ? 0 : int(mandatory.error().ie_type)) << " missing or incorrect";
    uint8_t last = 0;
    for (const auto& ie : m.ies()) {
      EXPECT_GE(ie.type, last) << "message " << int(m.header().message_type);
      last = ie.type;
    }
    auto v = viewPdp(m);
    EXPECT_TRUE(v.has_value());
    return v.value_or(PdpView{});
  }

  // Every datagram either way, for tshark.
  std::vector<std::vector<uint8_t>> frames_;
};

TEST_F(V1Run, LifecycleWithASecondaryContextCompletes) {
  const int status = runDirect({"--subscribers", "200", "--modify", "2", "--secondary", "1",
                                "--cycles", "1", "--rate", "2000", "--duration", "30",
                                "--t3-ms", "1000"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["roles"]["sgsn"], true);
  EXPECT_EQ(j["exit_status"], 0);
  const json& t = j["transactions"];
  EXPECT_EQ(t["create_pdp"]["completed"], 200);
  EXPECT_EQ(t["create_secondary"]["completed"], 200);
  EXPECT_EQ(t["update_pdp"]["completed"], 400);
  EXPECT_EQ(t["delete_secondary"]["completed"], 200);
  EXPECT_EQ(t["delete_pdp"]["completed"], 200);
  EXPECT_EQ(t["total"]["completed"], 1200);
  EXPECT_EQ(j["latency_ms"]["all"]["count"], 1200);
  EXPECT_GT(j["tps_achieved"].get<double>(), 0.0);
  EXPECT_EQ(j["errors"]["total"], 0);
  EXPECT_EQ(j["checks_failed"], 0);
  EXPECT_EQ(j["causes"]["128"], 1200);
  EXPECT_EQ(j["sessions"]["created"], 200);
  EXPECT_EQ(j["sessions"]["deleted"], 200);
  EXPECT_EQ(j["secondaries"]["created"], 200);
  EXPECT_EQ(j["secondaries"]["deleted"], 200);
  EXPECT_EQ(j["split"][ip(21)], 200);
  const json& g = j["ggsn"][ip(21)];
  EXPECT_EQ(g["sessions_created"], 200);
  EXPECT_EQ(g["secondaries_created"], 200);
  EXPECT_EQ(g["sessions_deleted"], 200);
  EXPECT_EQ(g["contexts_up"], 0);
  EXPECT_EQ(g["requests"]["update_pdp"], 400);
  EXPECT_NE(testing::readFile(path("peer.out")).find("sgsn+ggsn"), std::string::npos);
}

TEST_F(V1Run, NetworkInitiatedProceduresAreCountedOnBothSides) {
  const int status = runDirect({"--subscribers", "300", "--modify", "1", "--secondary", "1",
                                "--network-initiated", "0.5", "--cycles", "2", "--rate", "3000",
                                "--duration", "30", "--t3-ms", "1000"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  const json& s = j["procedures"]["sgsn"];
  const json& g = j["procedures"]["ggsn"];
  EXPECT_GT(g["network_update"]["started"].get<int>(), 150);
  EXPECT_GT(g["network_delete"]["started"].get<int>(), 50);
  for (const char* p : {"network_update", "network_delete"}) {
    EXPECT_EQ(g[p]["completed"], g[p]["started"]) << p;
    EXPECT_EQ(s[p]["started"], g[p]["started"]) << p;
    EXPECT_EQ(s[p]["completed"], g[p]["completed"]) << p;
    EXPECT_EQ(g[p]["timeouts"], 0) << p;
  }
  EXPECT_EQ(j["network_initiated"]["sessions_deleted_by_network"], g["network_delete"]["completed"]);
  EXPECT_EQ(j["sessions"]["created"], 600);
  EXPECT_EQ(j["sessions"]["deleted"].get<int>() +
                j["network_initiated"]["sessions_deleted_by_network"].get<int>(),
            600);
  EXPECT_EQ(j["sessions"]["waiting_at_end"], 0);
  EXPECT_EQ(j["transactions"]["update_pdp"]["completed"], 600);
  EXPECT_EQ(j["ggsn"][ip(21)]["sessions_deleted"], 600);
  EXPECT_EQ(j["errors"]["total"], 0);
  EXPECT_EQ(j["checks_failed"], 0);
}

TEST_F(V1Run, GgsnDropsAreRetransmittedUntilAnswered) {
  const int status = runDirect({"--subscribers", "200", "--modify", "1", "--secondary", "1",
                                "--cycles", "1", "--rate", "2000", "--t3-ms", "150", "--n3", "4",
                                "--ggsn-drop", ip(21) + "=0.05"});
  const json j = readJson("peer.json");
  EXPECT_EQ(status, 0) << testing::readFile(path("peer.out"));
  EXPECT_GT(j["retransmissions"].get<int>(), 0);
  EXPECT_GT(j["ggsn"][ip(21)]["dropped"].get<int>(), 0);
  EXPECT_EQ(j["timeouts"], 0);
  EXPECT_EQ(j["transactions"]["total"]["completed"], 1000);
  EXPECT_EQ(j["errors"]["total"], 0);
  EXPECT_EQ(j["checks_failed"], 0);
}

TEST_F(V1Run, SgsnAndGgsnInSeparateProcesses) {
  const std::vector<std::string> common{"--subscribers", "100", "--modify", "1", "--secondary",
                                        "2", "--network-initiated", "0.5", "--relay"};
  std::vector<std::string> ggsn_argv{kPeer, "--ggsn", ip(21), "--duration", "60", "--recovery",
                                     "7", "--json", path("ggsn.json")};
  ggsn_argv.insert(ggsn_argv.end(), common.begin(), common.end());
  auto ggsn = start("ggsn", ggsn_argv);
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("ggsn.err"));
  std::vector<std::string> sgsn_argv{kPeer,     "--sgsn", ip(11), "--proxy", ip(21), "--cycles",
                                     "1",       "--rate", "1000", "--json",  path("sgsn.json")};
  sgsn_argv.insert(sgsn_argv.end(), common.begin(), common.end());
  auto sgsn = start("sgsn", sgsn_argv);
  EXPECT_EQ(sgsn.wait(30s), std::optional<int>(0)) << testing::readFile(path("sgsn.out"));

  // The GGSN's Echo Responses carry its --recovery.
  UdpClient client(addr(2));
  std::array<uint8_t, 64> buf{};
  auto e = buildV1EchoRequest(0x77, buf);
  ASSERT_TRUE(e);
  client.send({buf.data(), *e}, Endpoint{addr(21), 2123});
  const auto answer = client.receive(5s);
  gtp::v1::Message m;
  const PdpView echo = checked(answer, m, Sender::kGgsn);
  EXPECT_EQ(m.messageType(), MessageType::kEchoResponse);
  EXPECT_EQ(m.header().sequence_number, 0x77);
  EXPECT_EQ(echo.recovery, std::optional<uint8_t>(7));
  EXPECT_EQ(ggsn.stop(5s), 0);

  const json s = readJson("sgsn.json");
  const json g = readJson("ggsn.json");
  EXPECT_EQ(s["roles"]["ggsn"], false);
  EXPECT_EQ(g["roles"]["sgsn"], false);
  EXPECT_EQ(s["exit_status"], 0);
  EXPECT_EQ(g["exit_status"], 0);
  EXPECT_EQ(s["sessions"]["created"], 100);
  EXPECT_EQ(g["ggsn"][ip(21)]["sessions_created"], 100);
  EXPECT_EQ(g["ggsn"][ip(21)]["secondaries_created"], 200);
  EXPECT_EQ(g["ggsn"][ip(21)]["sessions_up"], 0);
  EXPECT_EQ(g["ggsn"][ip(21)]["requests"]["echo"], 1);
  for (const char* p : {"network_update", "network_delete"}) {
    EXPECT_GT(g["procedures"]["ggsn"][p]["completed"].get<int>(), 0) << p;
    EXPECT_EQ(s["procedures"]["sgsn"][p]["completed"], g["procedures"]["ggsn"][p]["completed"])
        << p;
  }
  EXPECT_EQ(s["checks_failed"], 0);
  EXPECT_EQ(g["checks_failed"], 0);
}

// The test plays the GGSN for an SGSN-only process, then the SGSN for a
// GGSN-only one: everything either role sends decodes, carries its
// mandatory IEs in ascending order and what TS 29.060 and the README say;
// tshark dissects the whole exchange without a warning.
TEST_F(V1Run, EveryMessageDecodesAndTsharkAgrees) {
  ASSERT_EQ(::access("/usr/bin/tshark", X_OK), 0)
      << "tshark is not installed: the integration suite needs it (Debian package tshark)";
  // ---- An SGSN: 2 subscribers, a secondary context, an update each. ----
  {
    UdpClient ggsn(addr(21), 2123);
    auto sgsn = start("sgsn", {kPeer, "--sgsn", ip(11), "--proxy", ip(21), "--relay",
                               "--subscribers", "2", "--secondary", "1", "--modify", "1",
                               "--cycles", "1", "--rate", "50", "--recovery", "9", "--json",
                               path("sgsn.json")});
    std::map<uint32_t, uint32_t> sgsn_teid;  // the GGSN's TEID-C -> the SGSN's
    std::map<uint32_t, uint64_t> imsi_of;    // the GGSN's TEID-C -> the subscriber's IMSI
    std::map<MessageType, int> seen;
    for (int k = 0; k < 10; ++k) {
      const auto request = ggsn.receive(5s);
      ASSERT_FALSE(request.empty()) << "request " << k << ": " << testing::readFile(path("sgsn.err"));
      frames_.push_back(request);
      gtp::v1::Message m;
      const PdpView v = checked(request, m, Sender::kSgsn);
      ++seen[m.messageType()];
      const uint32_t seq = m.header().sequence_number;
      std::array<uint8_t, 512> buf{};
      gtp::Result<std::size_t> r;
      PdpResponseArgs a;
      a.sequence = seq;
      a.ggsn_addr = addr(21);
      a.qos = v.qos;
      if (m.messageType() != MessageType::kDeletePdpContextRequest) {
        // Both SGSN Addresses: the node's.
        EXPECT_EQ(v.gsn[0], IpAddress(addr(11)));
        EXPECT_EQ(v.gsn[1], IpAddress(addr(11)));
      }
      switch (m.messageType()) {
        case MessageType::kCreatePdpContextRequest:
          ASSERT_TRUE(v.imsi && v.teid_u && v.nsapi);
          EXPECT_EQ(v.qos.size(), 15u);  // ARP and 14 octets of TS 24.008 QoS
          if (m.header().teid == 0) {
            // Primary: Recovery on the first request only, a dynamic IPv4
            // address asked, the APN.
            EXPECT_EQ(v.recovery, k == 0 ? std::optional<uint8_t>(9) : std::nullopt);
            EXPECT_EQ(v.nsapi, kPrimaryNsapi);
            ASSERT_TRUE(v.teid_c);
            EXPECT_TRUE(v.end_user_address && !v.ue_ipv4 && v.apn);
            EXPECT_NE(m.find(gtp::v1::IeType::kImeiSv), nullptr);
            EXPECT_NE(m.find(gtp::v1::IeType::kMsisdn), nullptr);
            EXPECT_NE(m.find(gtp::v1::IeType::kSelectionMode), nullptr);
            const auto mine = static_cast<uint32_t>(0x1000u + sgsn_teid.size());
            sgsn_teid[mine] = *v.teid_c;
            imsi_of[mine] = *v.imsi;
            a.header_teid = *v.teid_c;
            a.teid_c = mine;
            a.ue_ipv4 = 0x0a000001u + static_cast<uint32_t>(k);
            a.recovery = 1;
          } else {
            // Secondary: Linked NSAPI 5, NSAPI 6, a TFT, no TEID-C.
            ASSERT_EQ(sgsn_teid.count(m.header().teid), 1u);
            EXPECT_EQ(v.nsapi, 6);
            EXPECT_EQ(v.linked_nsapi, kPrimaryNsapi);
            EXPECT_TRUE(v.tft);
            EXPECT_FALSE(v.teid_c || v.end_user_address);
            a.header_teid = sgsn_teid[m.header().teid];
          }
          a.teid_u = v1UserPlaneTeid(PlaneSide::kGgsn, *v.imsi, *v.nsapi, addr(21));
          r = buildPdpContextResponse(a, buf);
          break;
        case MessageType::kUpdatePdpContextRequest:
          ASSERT_EQ(sgsn_teid.count(m.header().teid), 1u);
          EXPECT_EQ(v.nsapi, kPrimaryNsapi);
          EXPECT_EQ(v.teid_c, sgsn_teid[m.header().teid]);
          EXPECT_TRUE(qosIs(v, V1Qos::kUpdateOdd));
          a.type = MessageType::kUpdatePdpContextResponse;
          a.header_teid = sgsn_teid[m.header().teid];
          a.teid_c = m.header().teid;
          a.teid_u = v1UserPlaneTeid(PlaneSide::kGgsn, imsi_of[m.header().teid], kPrimaryNsapi,
                                     addr(21));
          r = buildPdpContextResponse(a, buf);
          break;
        case MessageType::kDeletePdpContextRequest:
          ASSERT_EQ(sgsn_teid.count(m.header().teid), 1u);
          ASSERT_TRUE(v.teardown && v.nsapi);
          EXPECT_EQ(*v.teardown, *v.nsapi == kPrimaryNsapi);
          r = buildV1CauseOnly(MessageType::kDeletePdpContextResponse, seq,
                               sgsn_teid[m.header().teid], kV1CauseAccepted, buf);
          break;
        default:
          ADD_FAILURE() << "unexpected message " << int(m.header().message_type);
          continue;
      }
      ASSERT_TRUE(r);
      frames_.emplace_back(buf.begin(), buf.begin() + *r);
      ggsn.send(frames_.back(), Endpoint{addr(11), 2123});
    }
    EXPECT_EQ(sgsn.wait(30s), std::optional<int>(0)) << testing::readFile(path("sgsn.out"));
    EXPECT_EQ(seen[MessageType::kCreatePdpContextRequest], 4);
    EXPECT_EQ(seen[MessageType::kUpdatePdpContextRequest], 2);
    EXPECT_EQ(seen[MessageType::kDeletePdpContextRequest], 4);
    const json s = readJson("sgsn.json");
    EXPECT_EQ(s["transactions"]["total"]["completed"], 10);
    EXPECT_EQ(s["checks_failed"], 0) << s["mismatches"].dump();
  }

  // ---- A GGSN updating every session it makes, deleting some. ----
  constexpr uint32_t kCount = 100;
  // gtpcp-peer's defaults (--imsi-start 001010000000001, --msisdn-start
  // 15550000001, --plmn 00101), as the unit tests' engines have them.
  const Identities ids = testing::ids(kCount);
  // A subscriber the GGSN only updates, and one it also deletes.
  uint32_t updated = kCount, deleted = kCount;
  for (uint32_t i = 0; i < kCount; ++i) {
    const NetworkPlan p = networkPlan(ids.imsi(i), 1.0);
    if (p == NetworkPlan::kUpdate && updated == kCount) updated = i;
    if (p == NetworkPlan::kUpdateAndDelete && deleted == kCount) deleted = i;
  }
  ASSERT_LT(updated, kCount);
  ASSERT_LT(deleted, kCount);
  UdpClient sgsn(addr(11), 2123);
  auto ggsn = start("ggsn", {kPeer, "--ggsn", ip(21), "--relay", "--subscribers",
                             std::to_string(kCount), "--network-initiated", "1", "--modify", "0",
                             "--duration", "60", "--recovery", "4", "--json", path("ggsn.json")});
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("ggsn.err"));
  const Endpoint ggsn_at{addr(21), 2123};
  const ControlTeids teids(kCount);
  std::array<uint8_t, 512> buf{};
  auto sendBuilt = [&](const gtp::Result<std::size_t>& r) {
    ASSERT_TRUE(r);
    frames_.emplace_back(buf.begin(), buf.begin() + *r);
    sgsn.send(frames_.back(), ggsn_at);
  };
  // Receives the next datagram, checks it and keeps it.
  auto next = [&](gtp::v1::Message& m, std::vector<uint8_t>& bytes) {
    bytes = sgsn.receive(5s);
    EXPECT_FALSE(bytes.empty()) << testing::readFile(path("ggsn.err"));
    frames_.push_back(bytes);
    return checked(bytes, m, Sender::kGgsn);
  };
  uint16_t seq = 0x4000;
  for (const uint32_t index : {updated, deleted}) {
    PdpRequestArgs a;
    a.sequence = ++seq;
    a.index = index;
    a.ids = &ids;
    gtp::v1::Apn apn;
    for (char c : std::string_view("internet")) apn.text.push(c);
    a.apn = &apn;
    a.sgsn_addr = addr(11);
    a.teid_c = teids.teid(index);
    a.recovery = 1;
    sendBuilt(buildCreatePdpContextRequest(a, buf));
    sendBuilt(buildCreatePdpContextRequest(a, buf));  // a repeat: the same answer again
    gtp::v1::Message m;
    std::vector<uint8_t> first, second, update;
    PdpView v = next(m, first);
    EXPECT_EQ(m.messageType(), MessageType::kCreatePdpContextResponse);
    EXPECT_EQ(m.header().teid, a.teid_c);
    EXPECT_EQ(m.header().sequence_number, seq);
    EXPECT_EQ(v.cause, kV1CauseAccepted);
    EXPECT_EQ(v.recovery, std::optional<uint8_t>(4));
    ASSERT_TRUE(v.teid_c && v.ue_ipv4 && v.charging_id);
    EXPECT_EQ(v.gsn[0], IpAddress(addr(21)));
    EXPECT_EQ(v.gsn[1], IpAddress(addr(21)));
    EXPECT_EQ(v.teid_u, v1UserPlaneTeid(PlaneSide::kGgsn, ids.imsi(index), 5, addr(21)));
    EXPECT_TRUE(qosIs(v, V1Qos::kCreate));
    const uint32_t ggsn_teid = *v.teid_c;
    // The answer to the repeat, and the GGSN's update, in either order.
    gtp::v1::Message m2, m3;
    next(m2, second);
    PdpView u = next(m3, update);
    if (m2.messageType() == MessageType::kUpdatePdpContextRequest) {
      std::swap(second, update);
      u = checked(update, m3, Sender::kGgsn);
    }
    EXPECT_EQ(second, first);
    EXPECT_EQ(m3.messageType(), MessageType::kUpdatePdpContextRequest);
    EXPECT_EQ(m3.header().teid, a.teid_c);
    EXPECT_EQ(u.nsapi, kPrimaryNsapi);
    EXPECT_TRUE(qosIs(u, V1Qos::kNetwork));
    sendBuilt(buildSgsnUpdateResponse(
        m3.header().sequence_number, ggsn_teid, kV1CauseAccepted,
        v1UserPlaneTeid(PlaneSide::kSgsn, ids.imsi(index), 5, addr(11)), V1Qos::kNetwork, buf));
    if (index == deleted) {
      // Updated, no update or secondary of the SGSN's to wait for: deleted.
      std::vector<uint8_t> del;
      gtp::v1::Message m4;
      const PdpView d = next(m4, del);
      EXPECT_EQ(m4.messageType(), MessageType::kDeletePdpContextRequest);
      EXPECT_EQ(m4.header().teid, a.teid_c);
      EXPECT_EQ(d.teardown, std::optional<bool>(true));
      EXPECT_EQ(d.nsapi, kPrimaryNsapi);
      sendBuilt(buildV1CauseOnly(MessageType::kDeletePdpContextResponse,
                                 m4.header().sequence_number, ggsn_teid, kV1CauseAccepted, buf));
      continue;
    }
    // The SGSN updates and deletes the other one itself.
    a.sequence = ++seq;
    a.header_teid = ggsn_teid;
    a.qos = V1Qos::kUpdateOdd;
    sendBuilt(buildUpdatePdpContextRequest(a, buf));
    std::vector<uint8_t> bytes;
    v = next(m, bytes);
    EXPECT_EQ(m.messageType(), MessageType::kUpdatePdpContextResponse);
    EXPECT_EQ(v.cause, kV1CauseAccepted);
    EXPECT_TRUE(qosIs(v, V1Qos::kUpdateOdd));
    sendBuilt(buildDeletePdpContextRequest(++seq, ggsn_teid, kPrimaryNsapi, true, buf));
    v = next(m, bytes);
    EXPECT_EQ(m.messageType(), MessageType::kDeletePdpContextResponse);
    EXPECT_EQ(m.header().teid, a.teid_c);
    EXPECT_EQ(v.cause, kV1CauseAccepted);
  }
  // A request for a session that is gone: 192, TEID 0.
  sendBuilt(buildDeletePdpContextRequest(++seq, 0x00abcdef, kPrimaryNsapi, true, buf));
  {
    gtp::v1::Message m;
    std::vector<uint8_t> bytes;
    const PdpView v = next(m, bytes);
    EXPECT_EQ(v.cause, kV1CauseNonExistent);
    EXPECT_EQ(m.header().teid, 0u);
  }
  // The unknown TEID is a mismatch of its own: exit status 1.
  EXPECT_EQ(ggsn.stop(5s), 1);
  const json g = readJson("ggsn.json");
  const json& node = g["ggsn"][ip(21)];
  EXPECT_EQ(node["duplicates_answered"], 2);
  EXPECT_EQ(node["sessions_created"], 2);
  EXPECT_EQ(node["sessions_deleted"], 2);
  EXPECT_EQ(g["procedures"]["ggsn"]["network_update"]["completed"], 2);
  EXPECT_EQ(g["procedures"]["ggsn"]["network_delete"]["completed"], 1);
  // Only the unknown TEID: everything else passed the GGSN's checks.
  EXPECT_EQ(g["checks_failed"], 1);
  EXPECT_EQ(g["mismatches"]["by_kind"]["ggsn_unknown_teid"], 1);

  // ---- A third party decodes it all. ----
  const testing::TsharkView t =
      testing::tsharkView(frames_, path("v1.pcap"), path("tshark.log"), "gtp.message");
  EXPECT_EQ(t.flagged, "") << "frames flagged by tshark (frame, expert messages)";
  std::size_t lines = 0;
  for (char c : t.types) lines += c == '\n';
  EXPECT_EQ(lines, frames_.size()) << t.types;
  EXPECT_EQ(t.types.find("\n\n"), std::string::npos) << "a frame not dissected as GTP:\n"
                                                      << t.types;
}

}  // namespace
}  // namespace gtpcp::peer
