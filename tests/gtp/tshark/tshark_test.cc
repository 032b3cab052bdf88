// The codec's encoder against TShark 4.0.17 (integration).
//
// Messages are built with v2::Builder / v1::Builder from known values, framed
// as Ethernet/IPv4/UDP 2123 in a pcap file, and decoded by the installed
// tshark; every field tshark reports is compared with the value that was
// encoded, and no frame may be malformed or carry an expert warning or error
// (tests/gtp/tshark/tshark_fixture.h runs tshark and those checks).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tests/gtp/gtp_test_util.h"
#include "tests/gtp/tshark/tshark_fixture.h"

namespace gtpcp::gtp {
namespace {

using testing::apnText;
using testing::digits;
using testing::dec;
using testing::Frame;
using testing::hex32;
using testing::hexN;
using testing::join;
using testing::RunResult;
using testing::v2Frame;

Ipv4 v4(std::string_view text) {
  Ipv4 a;
  EXPECT_TRUE(parseIpv4(text, a));
  return a;
}

Ipv6 v6(std::string_view text) {
  Ipv6 a;
  EXPECT_TRUE(parseIpv6(text, a));
  return a;
}

Frame v1Frame(std::string name, std::span<const uint8_t> bytes,
              std::map<std::string, std::string> expect) {
  Frame f{std::move(name), {bytes.begin(), bytes.end()}, std::move(expect)};
  v1::Message m;
  auto ok = m.decode(f.bytes);
  EXPECT_TRUE(ok) << f.name;
  if (!ok) return f;
  f.expect.emplace("gtp.message", hexN(m.header().message_type, 2));
  f.expect.emplace("gtp.teid", hex32(m.header().teid));
  f.expect.emplace("gtp.seq_number", hexN(m.header().sequence_number, 4));
  return f;
}

// ---------------------------------------------------------------------------
// GTPv2-C messages.

constexpr uint32_t kMmeTeid = 0x11111111, kSgwTeid = 0x22222222, kPgwTeid = 0x33333333;
constexpr uint32_t kSgwUserTeid = 0x44444444, kPgwUserTeid = 0x55555555, kEnbTeid = 0x66666666;
const char* const kImsi = "001010123456789";
const char* const kMsisdn = "46702123456";
const char* const kImeisv = "3569380356438091";
const char* const kApn = "internet.mnc001.mcc001.gprs";

v2::BearerQos bearerQos() {
  v2::BearerQos q;
  q.pci = true;
  q.pl = 11;
  q.pvi = false;
  q.qci = 9;
  q.mbr_uplink = 100000;
  q.mbr_downlink = 200000;
  q.gbr_uplink = 50000;
  q.gbr_downlink = 60000;
  return q;
}

std::map<std::string, std::string> bearerQosFields() {
  const auto q = bearerQos();
  return {{"gtpv2.bearer_qos_pci", q.pci ? "1" : "0"},
          {"gtpv2.bearer_qos_pl", dec(q.pl)},
          {"gtpv2.bearer_qos_pvi", q.pvi ? "1" : "0"},
          {"gtpv2.bearer_qos_label_qci", dec(q.qci)},
          {"gtpv2.bearer_qos_mbr_up", dec(q.mbr_uplink)},
          {"gtpv2.bearer_qos_mbr_down", dec(q.mbr_downlink)},
          {"gtpv2.bearer_qos_gbr_up", dec(q.gbr_uplink)},
          {"gtpv2.bearer_qos_gbr_down", dec(q.gbr_downlink)}};
}

// TS 24.008 §10.5.6.12 TFT: "create new TFT" (001), E=0, one packet filter;
// filter 1 bidirectional (11), precedence 0, contents: protocol 17 (UDP).
const std::vector<uint8_t> kTft = testing::fromHex(
    "21" "31" "00" "02" "30" "11");

Frame createSessionRequest() {
  std::array<uint8_t, 1024> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateSessionRequest, 0u, 0x000101);
  b.add(v2::Imsi{digits(kImsi)});
  b.add(v2::Msisdn{digits(kMsisdn)});
  b.add(v2::Mei{digits(kImeisv)});
  v2::Uli uli;
  uli.tai = v2::Uli::Tai{*makePlmn("001", "01"), 0x1234};
  uli.ecgi = v2::Uli::Ecgi{*makePlmn("001", "01"), 0x0abcdef};
  b.add(uli);
  b.add(v2::ServingNetwork{*makePlmn("310", "410")});
  b.add(v2::RatType{6});
  v2::Indication ind;
  ind.octets = {0x80, 0x00};  // DAF (octet 5, bit 8)
  ind.size = 2;
  b.add(ind);
  b.add(v2::FTeid{10, kMmeTeid, v4("192.0.2.10"), std::nullopt});  // S11 MME GTP-C
  b.add(v2::FTeid{7, 0, v4("192.0.2.20"), std::nullopt}, 1);       // S5/S8 PGW GTP-C
  b.add(v2::Apn{apnText(kApn)});
  b.add(v2::SelectionMode{0});
  b.add(v2::PdnType{1});
  b.add(v2::Paa{1, v4("0.0.0.0"), 0, std::nullopt});
  b.add(v2::ApnRestriction{0});
  b.add(v2::Ambr{100000, 200000});
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{5});
  b.add(bearerQos());
  b.add(v2::FTeid{4, kSgwUserTeid, v4("192.0.2.30"), std::nullopt}, 2);  // S5/S8 SGW GTP-U
  b.endGrouped();
  b.add(v2::Recovery{7});
  b.add(v2::UeTimeZone{0x40, 1});
  b.add(v2::ChargingCharacteristics{0x0800});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  auto expect = bearerQosFields();
  expect.insert({
      {"gtpv2.teid", hex32(0)},
      {"e212.imsi", kImsi},
      {"e164.msisdn", kMsisdn},
      {"gtpv2.mei", kImeisv},
      {"e212.tai.mcc", "1"},
      {"e212.tai.mnc", "1"},
      {"gtpv2.tai_tac", hexN(0x1234, 4)},
      {"e212.ecgi.mcc", "1"},
      {"e212.ecgi.mnc", "1"},
      // e212.mcc/mnc: first tshark's own split of the IMSI (its table makes
      // MCC 001 take a 3-digit MNC), then the Serving Network: 310 / 410.
      {"e212.mcc", "1,310"},
      {"e212.mnc", "10,410"},
      {"gtpv2.ecgi_eci", dec(0x0abcdef)},
      {"gtpv2.rat_type", "6"},
      {"gtpv2.daf", "1"},
      {"gtpv2.f_teid_interface_type", "10,7,4"},
      {"gtpv2.f_teid_gre_key", join({hex32(kMmeTeid), hex32(0), hex32(kSgwUserTeid)})},
      {"gtpv2.f_teid_ipv4", "192.0.2.10,192.0.2.20,192.0.2.30"},
      {"gtpv2.apn", kApn},
      {"gtpv2.selec_mode", "0"},
      {"gtpv2.pdn_type", "1,1"},  // the PDN Type IE, then the PAA's own PDN type octet
      {"gtpv2.pdn_addr_and_prefix.ipv4", "0.0.0.0"},
      {"gtpv2.apn_rest", "0"},
      {"gtpv2.ambr_up", "100000"},
      {"gtpv2.ambr_down", "200000"},
      {"gtpv2.ebi", "5"},
      {"gtpv2.rec", "7"},
      {"gtpv2.ue_time_zone_dst", "1"},
      {"gtpv2.charging_characteristic", hexN(0x0800, 4)},
  });
  return v2Frame("CreateSessionRequest", *bytes, expect);
}

// Create Session Response: Cause, PGW F-TEID (instance 1), PAA, Bearer
// Context created {EBI, Cause, S5/S8-U PGW F-TEID (instance 2), Charging ID}.
void addCreateSessionResponse(v2::Builder& b) {
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.add(v2::FTeid{7, kPgwTeid, v4("192.0.2.20"), std::nullopt}, 1);
  b.add(v2::Paa{1, v4("10.45.0.2"), 0, std::nullopt});
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{5});
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.add(v2::FTeid{5, kPgwUserTeid, v4("192.0.2.21"), std::nullopt}, 2);
  b.add(v2::ChargingId{0x01020304});
  b.endGrouped();
}

Frame createSessionResponse() {
  std::array<uint8_t, 512> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateSessionResponse, kMmeTeid, 0x000101);
  addCreateSessionResponse(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("CreateSessionResponse", *bytes,
                 {{"gtpv2.teid", hex32(kMmeTeid)},
                  {"gtpv2.cause", "16,16"},
                  {"gtpv2.f_teid_interface_type", "7,5"},
                  {"gtpv2.f_teid_gre_key", join({hex32(kPgwTeid), hex32(kPgwUserTeid)})},
                  {"gtpv2.f_teid_ipv4", "192.0.2.20,192.0.2.21"},
                  {"gtpv2.pdn_addr_and_prefix.ipv4", "10.45.0.2"},
                  {"gtpv2.ebi", "5"},
                  {"gtpv2.charging_id", dec(0x01020304)}});
}

Frame modifyBearerRequest() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kModifyBearerRequest, kSgwTeid, 0x000102);
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{5});
  b.add(v2::FTeid{0, kEnbTeid, v4("198.51.100.1"), std::nullopt});  // S1-U eNodeB GTP-U
  b.endGrouped();
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("ModifyBearerRequest", *bytes,
                 {{"gtpv2.teid", hex32(kSgwTeid)},
                  {"gtpv2.ebi", "5"},
                  {"gtpv2.f_teid_interface_type", "0"},
                  {"gtpv2.f_teid_gre_key", hex32(kEnbTeid)},
                  {"gtpv2.f_teid_ipv4", "198.51.100.1"}});
}

Frame modifyBearerResponse() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kModifyBearerResponse, kMmeTeid, 0x000102);
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{5});
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  b.endGrouped();
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("ModifyBearerResponse", *bytes,
                 {{"gtpv2.teid", hex32(kMmeTeid)}, {"gtpv2.cause", "16,16"}, {"gtpv2.ebi", "5"}});
}

Frame deleteSessionRequest() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kDeleteSessionRequest, kSgwTeid, 0x000103);
  b.add(v2::Ebi{5});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("DeleteSessionRequest", *bytes,
                 {{"gtpv2.teid", hex32(kSgwTeid)}, {"gtpv2.ebi", "5"}});
}

Frame deleteSessionResponse() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kDeleteSessionResponse, kMmeTeid, 0x000103);
  b.add(v2::CauseIe{16, false, false, false, std::nullopt});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("DeleteSessionResponse", *bytes,
                 {{"gtpv2.teid", hex32(kMmeTeid)}, {"gtpv2.cause", "16"}});
}

// Create Bearer Request: LBI, Bearer Context {EBI 0, TFT, S1-U SGW F-TEID, QoS}.
void addCreateBearerRequest(v2::Builder& b) {
  b.add(v2::Ebi{5});
  b.beginGrouped(v2::IeType::kBearerContext);
  b.add(v2::Ebi{0});
  b.addRaw(static_cast<uint8_t>(v2::IeType::kBearerTft), 0, kTft);
  b.add(v2::FTeid{1, kSgwUserTeid, v4("192.0.2.31"), std::nullopt});  // S1-U SGW GTP-U
  b.add(bearerQos());
  b.endGrouped();
}

Frame createBearerRequest() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateBearerRequest, kSgwTeid, 0x000104);
  addCreateBearerRequest(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  auto expect = bearerQosFields();
  expect.insert({{"gtpv2.teid", hex32(kSgwTeid)},
                 {"gtpv2.ebi", "5,0"},
                 {"gtpv2.f_teid_interface_type", "1"},
                 {"gtpv2.f_teid_gre_key", hex32(kSgwUserTeid)},
                 {"gtpv2.f_teid_ipv4", "192.0.2.31"}});
  return v2Frame("CreateBearerRequest", *bytes, expect);
}

Frame echo(v2::MessageType type, uint8_t recovery) {
  std::array<uint8_t, 64> buf{};
  v2::Builder b(buf);
  b.begin(type, std::nullopt, 0x00abcd);
  b.add(v2::Recovery{recovery});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  // T=0: tshark shows no TEID.
  return v2Frame(type == v2::MessageType::kEchoRequest ? "EchoRequest" : "EchoResponse", *bytes,
                 {{"gtpv2.teid", ""}, {"gtpv2.rec", dec(recovery)}});
}

Frame piggybacked() {
  std::array<uint8_t, 512> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateSessionResponse, kMmeTeid, 0x000105);
  addCreateSessionResponse(b);
  b.beginPiggybacked(v2::MessageType::kCreateBearerRequest, kSgwTeid, 0x000106);
  addCreateBearerRequest(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("CreateSessionResponse+CreateBearerRequest", *bytes,
                 {{"gtpv2.p", "1,0"},
                  {"gtpv2.teid", join({hex32(kMmeTeid), hex32(kSgwTeid)})},
                  {"gtpv2.cause", "16,16"},
                  {"gtpv2.ebi", "5,5,0"},
                  {"gtpv2.f_teid_gre_key",
                   join({hex32(kPgwTeid), hex32(kPgwUserTeid), hex32(kSgwUserTeid)})}});
}

Frame ipv6FTeid() {
  std::array<uint8_t, 256> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kModifyBearerRequest, kSgwTeid, 0x000107);
  b.add(v2::FTeid{10, kMmeTeid, std::nullopt, v6("2001:db8::10")});
  b.add(v2::FTeid{10, kMmeTeid, v4("192.0.2.10"), v6("2001:db8::11")}, 1);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("ModifyBearerRequestIpv6FTeid", *bytes,
                 {{"gtpv2.f_teid_v4", "0,1"},
                  {"gtpv2.f_teid_v6", "1,1"},
                  {"gtpv2.f_teid_ipv4", "192.0.2.10"},
                  {"gtpv2.f_teid_ipv6", "2001:db8::10,2001:db8::11"}});
}

Frame rejection() {
  std::array<uint8_t, 64> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kCreateSessionResponse, kMmeTeid, 0x000108);
  b.add(v2::CauseIe{69, false, false, false, v2::CauseIe::OffendingIe{87, 0}});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  // tshark reads the offending IE's Length and instance (§8.4) with the
  // fields of an IE header: 6 and 0 for the Cause, then 0 and 0.
  return v2Frame("CreateSessionResponseMandatoryIeIncorrect", *bytes,
                 {{"gtpv2.cause", "69"},
                  {"gtpv2.cause_off_ie_t", "87"},
                  {"gtpv2.ie_len", "6,0"},
                  {"gtpv2.instance", "0,0"}});
}

Frame versionNotSupported() {
  std::array<uint8_t, 16> buf{};
  v2::Builder b(buf);
  b.begin(v2::MessageType::kVersionNotSupportedIndication, std::nullopt, 0x000109);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v2Frame("VersionNotSupportedIndication", *bytes, {{"gtpv2.msg_length", "4"}});
}

// ---------------------------------------------------------------------------
// GTPv1-C messages (IEs in ascending type order, TS 29.060 §7.7.0).

constexpr uint32_t kSgsnTeid = 0x0a0b0c0d, kGgsnTeid = 0x01020304;
const std::vector<uint8_t> kQosProfile = testing::fromHex("0b921f");  // R99 QoS octets 3-5

Frame createPdpContextRequest() {
  std::array<uint8_t, 256> buf{};
  v1::Builder b(buf);
  b.begin(v1::MessageType::kCreatePdpContextRequest, 0, 0x0201);
  b.add(v1::Imsi{digits(kImsi)});
  b.add(v1::Recovery{3});
  b.add(v1::SelectionMode{0});
  b.add(v1::TeidDataI{kSgsnTeid});
  b.add(v1::TeidControlPlane{kSgsnTeid + 1});
  b.add(v1::Nsapi{5});
  b.add(v1::EndUserAddress{1, 0x21, std::nullopt, std::nullopt});  // dynamic IPv4
  v1::Apn apn;
  apn.text = apnText("internet");
  b.add(apn);
  b.add(v1::GsnAddress{v4("192.0.2.40"), std::nullopt});
  b.add(v1::GsnAddress{v4("192.0.2.41"), std::nullopt});
  b.add(v1::Msisdn{0x91, digits(kMsisdn)});
  b.add(v1::QosProfile{2, kQosProfile});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v1Frame("CreatePdpContextRequest", *bytes,
                 {{"e212.imsi", kImsi},
                  {"gtp.recovery", "3"},
                  {"gtp.sel_mode", "0"},
                  {"gtp.teid_data", hex32(kSgsnTeid)},
                  {"gtp.teid_cp", hex32(kSgsnTeid + 1)},
                  {"gtp.nsapi", "5"},
                  {"gtp.user_addr_pdp_org", "1"},
                  {"gtp.user_addr_pdp_type", hexN(0x21, 2)},
                  {"gtp.apn", "internet"},
                  {"gtp.gsn_ipv4", "192.0.2.40,192.0.2.41"},
                  {"e164.msisdn", kMsisdn},
                  {"gtp.qos_al_ret_priority", "2"},
                  // The QoS octets 0b 92 1f (TS 24.008 §10.5.6.5): delay class 1,
                  // reliability 3, peak 9, precedence 2, mean 31.
                  {"gtp.qos_delay", "1"},
                  {"gtp.qos_reliability", "3"},
                  {"gtp.qos_peak", "9"},
                  {"gtp.qos_precedence", "2"},
                  {"gtp.qos_mean", "31"}});
}

Frame createPdpContextResponse() {
  std::array<uint8_t, 256> buf{};
  v1::Builder b(buf);
  b.begin(v1::MessageType::kCreatePdpContextResponse, kSgsnTeid + 1, 0x0201);
  b.add(v1::CauseIe{128});
  b.add(v1::ReorderingRequired{false});
  b.add(v1::Recovery{9});
  b.add(v1::TeidDataI{kGgsnTeid});
  b.add(v1::TeidControlPlane{kGgsnTeid + 1});
  b.add(v1::ChargingId{0x0badf00d});
  b.add(v1::EndUserAddress{1, 0x21, v4("10.46.0.2"), std::nullopt});
  b.add(v1::GsnAddress{v4("192.0.2.50"), std::nullopt});
  b.add(v1::GsnAddress{v4("192.0.2.51"), std::nullopt});
  b.add(v1::QosProfile{2, kQosProfile});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v1Frame("CreatePdpContextResponse", *bytes,
                 {{"gtp.cause", "128"},
                  {"gtp.recovery", "9"},
                  {"gtp.teid_data", hex32(kGgsnTeid)},
                  {"gtp.teid_cp", hex32(kGgsnTeid + 1)},
                  {"gtp.chrg_id", hex32(0x0badf00d)},
                  {"gtp.user_ipv4", "10.46.0.2"},
                  {"gtp.gsn_ipv4", "192.0.2.50,192.0.2.51"}});
}

Frame createPdpContextRejection() {
  std::array<uint8_t, 64> buf{};
  v1::Builder b(buf);
  b.begin(v1::MessageType::kCreatePdpContextResponse, kSgsnTeid + 1, 0x0202);
  b.add(v1::CauseIe{199});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v1Frame("CreatePdpContextResponseNoResources", *bytes, {{"gtp.cause", "199"}});
}

Frame v1Echo(v1::MessageType type) {
  std::array<uint8_t, 64> buf{};
  v1::Builder b(buf);
  b.begin(type, 0, 0x0203);
  if (type == v1::MessageType::kEchoResponse) b.add(v1::Recovery{9});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  const bool response = type == v1::MessageType::kEchoResponse;
  return v1Frame(response ? "V1EchoResponse" : "V1EchoRequest", *bytes,
                 {{"gtp.recovery", response ? "9" : ""}});
}

Frame deletePdpContextRequest() {
  std::array<uint8_t, 64> buf{};
  v1::Builder b(buf);
  b.begin(v1::MessageType::kDeletePdpContextRequest, kGgsnTeid + 1, 0x0204);
  b.add(v1::TeardownInd{true});
  b.add(v1::Nsapi{5});
  auto bytes = b.finish();
  EXPECT_TRUE(bytes);
  return v1Frame("DeletePdpContextRequest", *bytes, {{"gtp.tear_ind", "1"}, {"gtp.nsapi", "5"}});
}

std::vector<Frame> allFrames() {
  return {createSessionRequest(),
          createSessionResponse(),
          modifyBearerRequest(),
          modifyBearerResponse(),
          deleteSessionRequest(),
          deleteSessionResponse(),
          createBearerRequest(),
          echo(v2::MessageType::kEchoRequest, 7),
          echo(v2::MessageType::kEchoResponse, 8),
          piggybacked(),
          ipv6FTeid(),
          rejection(),
          versionNotSupported(),
          createPdpContextRequest(),
          createPdpContextResponse(),
          createPdpContextRejection(),
          v1Echo(v1::MessageType::kEchoRequest),
          v1Echo(v1::MessageType::kEchoResponse),
          deletePdpContextRequest()};
}

// ---------------------------------------------------------------------------

class GtpTsharkCrossCheck : public testing::TsharkCaptureTest {
 protected:
  void SetUp() override { capture(allFrames()); }
};

TEST_F(GtpTsharkCrossCheck, EveryFieldIsTheEncodedValue) { expectEveryField(); }

TEST_F(GtpTsharkCrossCheck, NoFrameIsMalformedOrWarned) { expectNoFrameFlagged(); }

// The whole capture is dissected as GTP: one GTP message (or two, piggybacked)
// per frame, none left as plain UDP data.
TEST_F(GtpTsharkCrossCheck, EveryFrameIsDissectedAsGtp) { expectEveryFrameIsGtp(); }

// The pcap writer itself: tshark reads back the UDP framing it was given.
TEST_F(GtpTsharkCrossCheck, PcapFramingIsRead) {
  const RunResult r =
      tshark("-T fields -E separator=, -e ip.len -e udp.length -e udp.srcport -e udp.dstport");
  ASSERT_EQ(r.exit_code, 0);
  std::stringstream lines(r.out);
  std::string line;
  for (const auto& f : frames_) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line, dec(28 + f.bytes.size()) + "," + dec(8 + f.bytes.size()) + ",2123,2123");
  }
}

}  // namespace
}  // namespace gtpcp::gtp
