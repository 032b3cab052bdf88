// Messages rewritten by v2::Rewriter against TShark 4.0.17 (integration).
//
// The rewriter recomputes the header Length and the Length of every grouped
// IE it changed; tshark is the independent reader. Each frame is a message
// after length-changing edits (address family of an F-TEID, APN, PAA, IEs
// added and removed, at the top level and in nested groups); tshark must find
// the new values and the IE and message lengths counted by hand here (a
// wrong grouped Length can still parse as a sequence of IEs, so the codec's
// own reading is not enough), and flag no frame.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/rewrite.h"
#include "tests/gtp/gtp_test_util.h"
#include "tests/gtp/tshark/tshark_fixture.h"

namespace gtpcp::gtp {
namespace {

using testing::apnText;
using testing::digits;
using testing::Frame;
using testing::hex32;
using testing::hexN;
using testing::v2Frame;

constexpr uint32_t kSgwUserTeid = 0x44444444;
const Ipv4 kMmeV4{{192, 0, 2, 10}};
const Ipv4 kSgwV4{{192, 0, 2, 30}};
const Ipv6 kSgwV6{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x30}};
const Ipv4 kUeV4{{10, 45, 0, 2}};

// Decodes `bytes` (one message, or two piggybacked), applies `edit` to the
// first message and returns the rewritten octets.
template <class Edit>
std::vector<uint8_t> rewritten(std::span<const uint8_t> bytes, Edit edit) {
  v2::Datagram d;
  auto ok = d.decode(bytes);
  EXPECT_TRUE(ok) << describe(ok.error());
  v2::Rewriter rw(d.message);
  edit(d.message, rw);
  std::vector<uint8_t> out(4096);
  auto n = rw.write(out);
  EXPECT_TRUE(n) << describe(n.error());
  out.resize(n ? *n : 0);
  return out;
}

template <class Fill>
std::vector<uint8_t> built(v2::MessageType type, uint32_t sequence, Fill fill) {
  std::array<uint8_t, 1024> buf{};
  v2::Builder b(buf);
  b.begin(type, 0x0a0b0c0du, sequence);
  fill(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  if (!bytes) return {};
  return {bytes->begin(), bytes->end()};
}

v2::BearerQos bearerQos() {
  v2::BearerQos q;
  q.pl = 11;
  q.qci = 9;
  return q;
}

// Create Session Request with an IPv6 S5/S8-U F-TEID, an IPv4v6 PAA and a
// short APN; rewritten to IPv4, a longer APN, an IPv4 PAA, without MSISDN and
// with Selection Mode and Charging Characteristics added.
Frame createSessionRequest() {
  const auto original = built(v2::MessageType::kCreateSessionRequest, 0x000201, [](v2::Builder& b) {
    b.add(v2::Imsi{digits("001010123456789")});
    b.add(v2::Msisdn{digits("46702123456")});
    b.add(v2::RatType{6});
    b.add(v2::FTeid{10, 0x11111111, kMmeV4, std::nullopt});
    b.add(v2::Apn{apnText("internet")});
    b.add(v2::PdnType{3});
    b.add(v2::Paa{3, kUeV4, 64, kSgwV6});
    b.beginGrouped(v2::IeType::kBearerContext);
    b.add(v2::Ebi{5});
    b.add(bearerQos());
    b.add(v2::FTeid{4, kSgwUserTeid, std::nullopt, kSgwV6}, 2);
    b.endGrouped();
  });
  const auto bytes = rewritten(original, [](const v2::Message& m, v2::Rewriter& rw) {
    const v2::Ie* bearer = m.find(v2::IeType::kBearerContext);
    EXPECT_TRUE(rw.remove(*m.find(v2::IeType::kMsisdn)));
    EXPECT_TRUE(rw.replace(*m.find(v2::IeType::kApn),
                           v2::Apn{apnText("internet.mnc001.mcc001.gprs")}));
    EXPECT_TRUE(rw.replace(*m.find(v2::IeType::kPaa), v2::Paa{1, kUeV4, 0, std::nullopt}));
    EXPECT_TRUE(rw.replace(*m.findChild(*bearer, v2::IeType::kFTeid, 2),
                           v2::FTeid{4, kSgwUserTeid, kSgwV4, std::nullopt}));
    EXPECT_TRUE(rw.append(v2::SelectionMode{1}));
    EXPECT_TRUE(rw.append(v2::ChargingCharacteristics{0x0800}));
  });
  return v2Frame("RewrittenCreateSessionRequest", bytes,
                 {// IMSI, RAT Type, F-TEID, APN (1 + 27), PDN Type, PAA, Bearer Context
                  // (5 + 26 + 13) {EBI, Bearer QoS, F-TEID}, Selection Mode, CC.
                  {"gtpv2.ie_len", "8,1,9,28,1,5,44,1,22,9,1,2"},
                  {"gtpv2.msg_length", "143"},
                  {"e164.msisdn", ""},
                  {"gtpv2.apn", "internet.mnc001.mcc001.gprs"},
                  {"gtpv2.pdn_addr_and_prefix.ipv4", "10.45.0.2"},
                  {"gtpv2.f_teid_v6", "0,0"},
                  {"gtpv2.f_teid_ipv4", "192.0.2.10,192.0.2.30"},
                  {"gtpv2.f_teid_gre_key", hex32(0x11111111) + "," + hex32(kSgwUserTeid)},
                  {"gtpv2.selec_mode", "1"},
                  {"gtpv2.charging_characteristic", hexN(0x0800, 4)}});
}

// gtpv2.jsonl line 50 (go-gtp): a Bearer QoS removed from the second Bearer
// Context, an F-TEID added to the first, a Recovery at the end.
Frame vectorCreateSessionRequest() {
  const auto records = testing::loadVectors("gtpv2.jsonl");
  const auto original = records.at(49).bytes();
  const auto bytes = rewritten(original, [](const v2::Message& m, v2::Rewriter& rw) {
    const v2::Ie* first = m.findNth(v2::IeType::kBearerContext, 0, 0);
    const v2::Ie* second = m.findNth(v2::IeType::kBearerContext, 0, 1);
    EXPECT_TRUE(rw.remove(*m.findChild(*second, v2::IeType::kBearerQos)));
    EXPECT_TRUE(rw.appendTo(*first, v2::FTeid{4, kSgwUserTeid, std::nullopt, kSgwV6}, 2));
    EXPECT_TRUE(rw.append(v2::Recovery{9}));
  });
  return v2Frame("RewrittenGoGtpCreateSessionRequest", bytes,
                 {// Received: Length 237, Bearer Contexts of 31 {1, 22}. The first
                  // grows by an F-TEID (4 + 21), the second shrinks by its Bearer
                  // QoS (4 + 22), Recovery (4 + 1) is added.
                  {"gtpv2.ie_len", "8,8,8,13,3,1,7,9,9,17,1,1,5,1,8,56,1,22,21,5,1,1"},
                  {"gtpv2.msg_length", "241"},
                  {"gtpv2.ebi", "5,6"},
                  {"gtpv2.f_teid_ipv6", "2001:db8::30"},
                  {"gtpv2.rec", "9"}});
}

// Context Response: PDN Connection > Bearer Context, the F-TEID two levels
// down changes from IPv6 to IPv4 and a Charging ID is added next to it.
Frame nestedContextResponse() {
  const auto original = built(v2::MessageType::kContextResponse, 0x000202, [](v2::Builder& b) {
    b.add(v2::CauseIe{16, false, false, false, std::nullopt});
    b.beginGrouped(v2::IeType::kPdnConnection);
    b.add(v2::Apn{apnText("internet")});
    b.beginGrouped(v2::IeType::kBearerContext);
    b.add(v2::Ebi{5});
    b.add(v2::FTeid{4, kSgwUserTeid, std::nullopt, kSgwV6}, 2);
    b.endGrouped();
    b.add(v2::Ambr{1000, 2000});
    b.endGrouped();
  });
  const auto bytes = rewritten(original, [](const v2::Message& m, v2::Rewriter& rw) {
    const v2::Ie* pdn = m.find(v2::IeType::kPdnConnection);
    const v2::Ie* bearer = m.findChild(*pdn, v2::IeType::kBearerContext);
    EXPECT_TRUE(rw.replace(*m.findChild(*bearer, v2::IeType::kFTeid, 2),
                           v2::FTeid{4, kSgwUserTeid, kSgwV4, std::nullopt}));
    EXPECT_TRUE(rw.appendTo(*bearer, v2::ChargingId{0x01020304}));
  });
  return v2Frame("RewrittenNestedContextResponse", bytes,
                 {// Cause, PDN Connection (13 + 30 + 12) {APN, Bearer Context (5 + 13
                  // + 8) {EBI, F-TEID, Charging ID}, AMBR}.
                  {"gtpv2.ie_len", "2,55,9,26,1,9,4,8"},
                  {"gtpv2.msg_length", "73"},
                  {"gtpv2.f_teid_ipv4", "192.0.2.30"},
                  {"gtpv2.charging_id", std::to_string(0x01020304)},
                  {"gtpv2.ambr_up", "1000"}});
}

// A Create Session Response carrying a piggybacked Create Bearer Request:
// only the first message is written, with P=0.
Frame piggybacked() {
  std::array<uint8_t, 512> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateSessionResponse, 0x11111111u, 0x000203);
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.add(v2::FTeid{7, 0x33333333, std::nullopt, kSgwV6}, 1);
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{5});
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.endGrouped();
  b.beginPiggybacked(v2::MessageType::kCreateBearerRequest, 0x22222222u, 0x000204);
  b.add(v2::Ebi{5});
  auto original = b.finish();
  EXPECT_TRUE(original);
  const auto bytes = rewritten(*original, [](const v2::Message& m, v2::Rewriter& rw) {
    EXPECT_TRUE(rw.replace(*m.find(v2::IeType::kFTeid, 1),
                           v2::FTeid{7, 0x33333333, kSgwV4, std::nullopt}));
  });
  return v2Frame("RewrittenCreateSessionResponseWithoutPiggyback", bytes,
                 {// Cause, F-TEID, Bearer Context {EBI, Cause}: nothing of the second
                  // message.
                  {"gtpv2.ie_len", "2,9,11,1,2"},
                  {"gtpv2.msg_length", "42"},
                  {"gtpv2.p", "0"},
                  {"gtpv2.message_type", "33"},
                  {"gtpv2.f_teid_ipv4", "192.0.2.30"}});
}

class GtpTsharkRewrite : public testing::TsharkCaptureTest {
 protected:
  void SetUp() override {
    capture({createSessionRequest(), vectorCreateSessionRequest(), nestedContextResponse(),
             piggybacked()});
  }
};

TEST_F(GtpTsharkRewrite, EveryFieldIsTheRewrittenValue) { expectEveryField(); }

TEST_F(GtpTsharkRewrite, NoFrameIsMalformedOrWarned) { expectNoFrameFlagged(); }

TEST_F(GtpTsharkRewrite, EveryFrameIsDissectedAsGtp) { expectEveryFrameIsGtp(); }

}  // namespace
}  // namespace gtpcp::gtp
