// A routing rule's overrides, seen in the bytes the PGW receives: APN
// rewrite, APN-AMBR cap, Charging Characteristics, Selection Mode and PDN
// type restriction, applied by the real group to Create Session Requests
// sent from a UDP socket of the test, and nothing changed for a rule without
// overrides.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/rewrite.h"
#include "common/gtp/v2/validate.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using namespace gtp::v2;
using nlohmann::json;
using testing::TestGroup;

class OverridesTest : public DataPathTest {
 protected:
  void SetUp() override {
    DataPathTest::SetUp();
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = "version: 1\npools:\n  internet:\n    gateways:\n      - {name: only, address: " + ip(21) +
                     "}\nrules:\n"
                     "  - name: rewrite\n    match: {apn: [internet]}\n    pool: internet\n"
                     "    overrides:\n      apn: internet.example.net\n"
                     "      apn_ambr: {uplink_kbps: 20000, downlink_kbps: 40000}\n"
                     "      charging_characteristics: 0x0400\n      selection_mode: 2\n      pdn_type: ipv4\n"
                     "  - name: v6only\n    match: {apn: [v6]}\n    pool: internet\n    overrides: {pdn_type: ipv6}\n"
                     "  - {name: default, pool: internet}\n" +
                     kNoHealthChecks;
    startGroup(o);
    ASSERT_FALSE(HasFailure());
    sgw_ = std::make_unique<testing::UdpSocket>(net_.addr(11), 2123);
    pgw_ = std::make_unique<testing::UdpSocket>(net_.addr(21), 2123);
  }

  // The emulator's Create Session Request for `apn`, asking for IPv4v6
  // (PDN Type and PAA) and, unless `with_cc`, without Charging Characteristics.
  Bytes request(uint32_t sequence, uint64_t imsi, const std::string& apn, bool with_cc = true) {
    const Bytes base = createSessionRequest(sequence, imsi, net_.addr(11), 0x7000 + sequence, apn);
    Message m;
    EXPECT_TRUE(m.decode(base));
    Rewriter rw(m);
    EXPECT_TRUE(rw.replace(*m.find(IeType::kPdnType), PdnType{3}));
    Paa v4v6;
    v4v6.pdn_type = 3;
    v4v6.ipv4 = gtp::Ipv4{};
    v4v6.ipv6 = gtp::Ipv6{};
    v4v6.ipv6_prefix_length = 64;
    EXPECT_TRUE(rw.replace(*m.find(IeType::kPaa), v4v6));
    if (!with_cc) {
      EXPECT_TRUE(rw.remove(*m.find(IeType::kChargingCharacteristics)));
    }
    Bytes out(2048);
    auto n = rw.write(out);
    EXPECT_TRUE(n);
    out.resize(n ? *n : 0);
    return out;
  }

  // Sends `csr` from the SGW; what the PGW received (empty if nothing).
  Bytes atPgw(const Bytes& csr) {
    EXPECT_TRUE(sgw_->sendTo(net_.addr(kProxyHost), 2123, csr));
    auto r = pgw_->receive(2s);
    return r ? r->bytes : Bytes{};
  }

  std::unique_ptr<testing::UdpSocket> sgw_, pgw_;
};

TEST_F(OverridesTest, EveryOverrideOfTheRuleIsInWhatThePgwReceives) {
  const Bytes sent = request(1, 1010000000501ull, "internet");
  const Bytes got = atPgw(sent);
  ASSERT_FALSE(got.empty()) << "nothing reached the PGW";
  Message m;
  ASSERT_TRUE(m.decode(got));
  ASSERT_TRUE(checkMandatory(m)) << "a Create Session Request the PGW can take";
  EXPECT_EQ(readFirst<Apn>(m)->text.view(), "internet.example.net");
  const auto ambr = readFirst<Ambr>(m);
  EXPECT_EQ(ambr->uplink, 20000u) << "capped from 50000";
  EXPECT_EQ(ambr->downlink, 40000u) << "capped from 100000";
  EXPECT_EQ(readFirst<ChargingCharacteristics>(m)->value, 0x0400);
  EXPECT_EQ(readFirst<SelectionMode>(m)->value, 2);
  EXPECT_EQ(readFirst<PdnType>(m)->value, 1) << "IPv4v6 narrowed to IPv4";
  const auto paa = readFirst<Paa>(m);
  EXPECT_EQ(paa->pdn_type, 1);
  EXPECT_TRUE(paa->ipv4);
  EXPECT_FALSE(paa->ipv6);
  // The rest as the SGW sent it: same IEs in the same order.
  Message original;
  ASSERT_TRUE(original.decode(sent));
  ASSERT_EQ(m.topLevel().empty(), false);
  std::vector<uint8_t> types_sent, types_got;
  for (const Ie& ie : original.topLevel()) types_sent.push_back(ie.type);
  for (const Ie& ie : m.topLevel()) types_got.push_back(ie.type);
  EXPECT_EQ(types_got, types_sent);
  EXPECT_EQ(readFirst<Imsi>(m)->digits.view(), readFirst<Imsi>(original)->digits.view());
  const json s = group_->status();
  EXPECT_EQ(TestGroup::workerSum(s, "worker.overrides_applied"), 1u) << s.dump(1);
  EXPECT_EQ(TestGroup::workerSum(s, "worker.messages_rewritten"), 1u);
}

TEST_F(OverridesTest, AChargingCharacteristicsTheRequestLacksIsAdded) {
  const Bytes got = atPgw(request(2, 1010000000502ull, "internet", false));
  ASSERT_FALSE(got.empty());
  Message m;
  ASSERT_TRUE(m.decode(got));
  ASSERT_TRUE(readFirst<ChargingCharacteristics>(m));
  EXPECT_EQ(readFirst<ChargingCharacteristics>(m)->value, 0x0400);
}

TEST_F(OverridesTest, APdnTypeTheRuleDoesNotAllowIsRefusedWithCause83) {
  // Rule v6only allows IPv6 only; this request asks for IPv4.
  const Bytes base = createSessionRequest(3, 1010000000503ull, net_.addr(11), 0x7003, "v6");
  ASSERT_TRUE(sgw_->sendTo(net_.addr(kProxyHost), 2123, base));
  auto answer = sgw_->receive(2s);
  ASSERT_TRUE(answer);
  const Decoded d = decode(answer->bytes);
  EXPECT_EQ(d.type, static_cast<uint8_t>(MessageType::kCreateSessionResponse));
  EXPECT_EQ(d.cause, std::optional<uint8_t>(static_cast<uint8_t>(Cause::kPreferredPdnTypeNotSupported)));
  EXPECT_EQ(d.sequence, 3u);
  EXPECT_EQ(d.teid, 0x7003u);
  EXPECT_FALSE(pgw_->receive(300ms)) << "refused by the proxy, not sent on";
  // IPv4v6 is narrowed to IPv6 for the same rule.
  const Bytes got = atPgw(request(4, 1010000000504ull, "v6"));
  ASSERT_FALSE(got.empty());
  Message m;
  ASSERT_TRUE(m.decode(got));
  EXPECT_EQ(readFirst<PdnType>(m)->value, 2);
  EXPECT_EQ(readFirst<Paa>(m)->pdn_type, 2);
  EXPECT_FALSE(readFirst<Paa>(m)->ipv4);
}

TEST_F(OverridesTest, ARuleWithoutOverridesChangesOnlyTheTranslatedFields) {
  const Bytes sent = request(5, 1010000000505ull, "other");
  const Bytes got = atPgw(sent);
  ASSERT_EQ(got.size(), sent.size());
  Message m, original;
  ASSERT_TRUE(m.decode(got));
  ASSERT_TRUE(original.decode(sent));
  // Sequence number, the sender F-TEID and the Recovery (the group's)
  // differ; every other IE is identical.
  for (std::size_t i = 0; i < original.ieCount(); ++i) {
    const Ie& a = original.ie(i);
    const Ie& b = m.ie(i);
    ASSERT_EQ(a.type, b.type);
    if (a.type == static_cast<uint8_t>(IeType::kFTeid) && original.indexOf(a) == original.indexOf(*original.find(IeType::kFTeid, 0)))
      continue;
    if (a.type == static_cast<uint8_t>(IeType::kRecovery)) {
      EXPECT_EQ(readFirst<Recovery>(m)->value, 1) << "the group's Recovery (gtpc.recovery)";
      continue;
    }
    EXPECT_TRUE(std::equal(original.raw(a).begin(), original.raw(a).end(), m.raw(b).begin(), m.raw(b).end()))
        << "IE " << int(a.type) << " changed";
  }
  EXPECT_EQ(TestGroup::workerSum(group_->status(), "worker.overrides_applied"), 0u);
}

}  // namespace
}  // namespace gtpcp::integration
