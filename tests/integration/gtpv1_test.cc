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

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "tests/integration/fixture.h"
#include "tests/support/udp.h"

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

TEST_F(Gtpv1Test, AGgsnRefusingWithATryAnotherCauseHandsItsActivationsToTheOther) {
  // .21 refuses every primary activation with 199 (No resources
  // available), which the document lists as try_another: the SGSNs never
  // see it, every context is made on .22.
  TestGroup& g = startGroup(
      2, "version: 1\npools:\n  gn:\n    gtp_version: 1\n    gateways:\n      - {name: a, address: " + ip(21) +
             "}\n      - {name: b, address: " + ip(22) +
             "}\nrules:\n  - {name: gn, pool: gn}\nfailover: {try_another: [199], attempts: 2}\n" + kNoHealthChecks);
  ASSERT_FALSE(HasFailure());
  const auto r = run({"--ggsn-cause", ip(21) + "=199"});
  expectClean(r);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  EXPECT_EQ(r.value("/sessions/rejected"), 0u);
  EXPECT_EQ(r.summary.at("split").value(ip(22), 0ull), kSubscribers);
  const uint64_t refused = r.summary.at("ggsn").at(ip(21)).value("sessions_rejected", 0ull);
  EXPECT_GT(refused, kSubscribers / 4);
  const json s = settledStatus(g);
  EXPECT_EQ(workers(s, "worker.creations_failed_over"), refused);
  EXPECT_EQ(workers(s, "worker.sessions_created"), kSubscribers);
  EXPECT_EQ(workers(s, "worker.sessions_deleted"), kSubscribers);
}

// A rule's v1 overrides, seen in the bytes the GGSN receives: the APN
// rewritten (the message grows), Charging Characteristics and Selection
// Mode set, the QoS Profile's maximum bit rates capped; IEs still in
// ascending order and every mandatory IE whole.
TEST_F(Gtpv1Test, ARulesOverridesReachTheGgsnInTheBytesOfTheCreation) {
  namespace v1 = gtp::v1;
  startGroup(2, "version: 1\npools:\n  gn:\n    gtp_version: 1\n    gateways:\n      - {name: a, address: " + ip(21) +
                    "}\nrules:\n  - name: gn\n    pool: gn\n    overrides: {apn: iot.operator.example, "
                    "charging_characteristics: 0x0800, selection_mode: 1, qos_cap: {uplink_kbps: 256, "
                    "downlink_kbps: 512}}\n" +
                    kNoHealthChecks);
  ASSERT_FALSE(HasFailure());
  testing::UdpSocket sgsn(net_.addr(11), 2123), ggsn(net_.addr(21), 2123);
  const gtp::Ipv4 sgsn_ip = net_.addr(11);
  std::vector<uint8_t> buf(512);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kCreatePdpContextRequest, 0, 0x1234);
  v1::Imsi imsi;
  for (char c : std::string_view("901700000000555")) imsi.digits.push(c);
  b.add(imsi);
  b.add(v1::SelectionMode{0});
  b.add(v1::TeidDataI{0xaaaa0002});
  b.add(v1::TeidControlPlane{0xcccc0002});
  b.add(v1::Nsapi{5});
  b.addRaw(128, std::vector<uint8_t>{0xf1, 0x21});
  v1::Apn apn;
  for (char c : std::string_view("iot")) apn.text.push(c);
  b.add(apn);
  b.addRaw(133, std::vector<uint8_t>(sgsn_ip.octets.begin(), sgsn_ip.octets.end()));
  b.addRaw(133, std::vector<uint8_t>{10, 11, 0, 2});
  // 24.008 maximum bit rate uplink 576 kbps (0x80), downlink 8640 kbps (0xfe).
  b.addRaw(135, std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f, 0x91, 0x97, 0x80, 0xfe, 0xfe, 0x4b, 0x11, 0x40, 0x40});
  buf.resize(b.finish()->size());
  ASSERT_TRUE(sgsn.sendTo(net_.addr(kProxyHost), 2123, buf));
  auto got = ggsn.receive(3s);
  ASSERT_TRUE(got) << "nothing reached the GGSN";
  v1::Message m;
  ASSERT_TRUE(m.decode(got->bytes));
  EXPECT_TRUE(v1::checkMandatory(m, v1::Sender::kSgsn));
  for (std::size_t i = 1; i < m.ieCount(); ++i) EXPECT_LE(m.ie(i - 1).type, m.ie(i).type) << "IE " << i;
  EXPECT_EQ(v1::readNth<v1::Apn>(m)->text.view(), "iot.operator.example");
  EXPECT_EQ(v1::readNth<v1::ChargingCharacteristics>(m)->value, 0x0800);
  EXPECT_EQ(v1::readNth<v1::SelectionMode>(m)->value, 1);
  const v1::Ie* qos = m.find(v1::IeType::kQosProfile);
  ASSERT_NE(qos, nullptr);
  const auto q = m.value(*qos);
  EXPECT_EQ(std::vector<uint8_t>(q.begin(), q.end()),
            (std::vector<uint8_t>{0x02, 0x23, 0x92, 0x1f, 0x91, 0x97, 0x58, 0x78, 0xfe, 0x4b, 0x11, 0x40, 0x40}))
      << "256 and 512 kbps: 64 + (rate - 64) / 8";
  EXPECT_EQ(workers(group_->status(), "worker.v1_qos_capped"), 1u);
}

}  // namespace
}  // namespace gtpcp::integration
