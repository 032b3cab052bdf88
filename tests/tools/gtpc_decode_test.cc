// gtpc-decode's JSON: field by field against third-party decodes (the
// vectors' "expect", which is TShark 4.0.17's reading of the same bytes),
// and the format rules of the tool (keys, masking, errors, piggyback).
#include <array>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v2/builder.h"
#include "tests/tools/gtpc_decode_support.h"
#include "tools/gtpc_decode/cli.h"
#include "tools/gtpc_decode/json.h"

namespace gtpcp::gtpc_decode {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::bytesOf;
using testing::dataPath;
using testing::readJsonLines;

namespace v1 = gtp::v1;
namespace v2 = gtp::v2;

// Every IE object in wire order, children after their grouped parent.
void walk(const Json& ies, std::vector<const Json*>& out) {
  for (const Json& ie : ies) {
    out.push_back(&ie);
    if (ie.contains("ies")) walk(ie["ies"], out);
  }
}
std::vector<const Json*> allIes(const Json& message) {
  std::vector<const Json*> out;
  if (message.contains("ies")) walk(message["ies"], out);
  return out;
}
std::vector<Json> valuesOf(const Json& message, int type) {
  std::vector<Json> out;
  for (const Json* ie : allIes(message)) {
    if ((*ie)["type"] == type && ie->contains("value")) out.push_back((*ie)["value"]);
  }
  return out;
}
const Json& topIe(const Json& message, int type, int instance = 0) {
  for (const Json& ie : message["ies"]) {
    if (ie["type"] == type && ie.value("instance", 0) == instance) return ie;
  }
  static const Json kNone;
  ADD_FAILURE() << "no IE " << type << "/" << instance << " in " << message.dump();
  return kNone;
}

Json decodeHex(std::string_view hex, Options options = {}) {
  return decodeDatagram(bytesOf(hex), options);
}

// The pycrate Create Session Request (nextepc capture), first line of gtpv2.jsonl.
constexpr std::string_view kCreateSessionRequest =
    "482000b300000000000012000100080042041728114920f656000d001842f470102342f47000ad7b0253000300"
    "42f47052000100065700090086800000097f0000024700090008696e7465726e657480000100fc630001000"
    "14f00050001000000007f000100004e00100080000a00000d00001000ff00031301845d002c00490001000557"
    "00090284000000120a554bd3500016004d0900000000000000000000000000000000000000007200020021005f"
    "0002005400";

// Known differences between the codec and TShark, each reported as a codec
// doubt: the strict TBCD decoder accepts two 0xF filler nibbles at the end of
// a GTPv2 MEI (71655774980786ff), TShark shows the low one as '?'.
const std::set<std::string> kKnownCodecDeviations = {"gtpv2.jsonl:31:mei"};

// ---------------------------------------------------------------------------
// Third-party facts, every vector.

TEST(GtpcDecodeVectors, Gtpv2FactsMatchTshark) {
  std::set<std::string> deviations;
  int checked = 0;
  int line = 0;
  for (const auto& record : readJsonLines(dataPath("vectors/gtpv2.jsonl"))) {
    ++line;
    if (record.contains("bad_reasons") || record.contains("form")) continue;
    const std::string where = "gtpv2.jsonl:" + std::to_string(line);
    const auto& expect = record["expect"];
    const Json j = decodeHex(record["hex"].get<std::string>());
    ASSERT_FALSE(isError(j)) << where << " " << j.dump();
    EXPECT_EQ(j["message_type"], expect["message_type"]) << where;
    EXPECT_EQ(j["sequence_number"], expect["seq"]) << where;
    if (expect.contains("teid")) {
      EXPECT_EQ(j["teid"], expect["teid"]) << where;
    }
    EXPECT_EQ(j["length"], expect["declared_length"]) << where;

    auto first = [&](int type) { auto v = valuesOf(j, type); return v.empty() ? Json() : v.front(); };
    for (auto [key, type] : std::array<std::pair<const char*, int>, 4>{
             {{"imsi", 1}, {"apn", 71}, {"msisdn", 76}, {"mei", 75}}}) {
      if (!expect.contains(key)) continue;
      const Json got = first(type);
      if (got.is_null()) continue;  // TShark found it inside an opaque IE (MM Context)
      if (got != expect[key]) {
        deviations.insert(where + ":" + key);
        continue;
      }
      ++checked;
    }
    if (expect.contains("recovery")) {
      EXPECT_EQ(first(3), expect["recovery"]) << where;
      ++checked;
    }
    if (expect.contains("cause")) {
      std::vector<int> causes;
      for (const Json& c : valuesOf(j, 2)) causes.push_back(c["cause"]);
      EXPECT_EQ(Json(causes), expect["cause"]) << where;
      ++checked;
    }
    if (expect.contains("ebi")) {
      // TShark also lists EBI sub-fields of other IEs: ours must be among its.
      std::multiset<int> theirs(expect["ebi"].begin(), expect["ebi"].end());
      for (const Json& e : valuesOf(j, 73)) {
        auto it = theirs.find(e.get<int>());
        ASSERT_NE(it, theirs.end()) << where << " EBI " << e;
        theirs.erase(it);
      }
      ++checked;
    }
    if (expect.contains("paa")) {
      std::vector<std::string> addresses;
      for (const Json& p : valuesOf(j, 79)) addresses.push_back(p.value("ipv4", p.value("ipv6", "")));
      EXPECT_EQ(Json(addresses), expect["paa"]) << where;
      ++checked;
    }
    if (expect.contains("fteid")) {
      // Plain (key-sorted) JSON: TShark's facts list the keys in another order.
      nlohmann::json got = nlohmann::json::array();
      for (const Json* ie : allIes(j)) {
        if ((*ie)["type"] != 87) continue;
        const Json& v = (*ie)["value"];
        nlohmann::json f{{"instance", (*ie)["instance"]},
               {"interface_type", v["interface_type"]},
               {"interface", v["interface"]},
               {"teid", v["teid"]}};
        if (v.contains("ipv4")) f["ipv4"] = v["ipv4"];
        if (v.contains("ipv6")) f["ipv6"] = v["ipv6"];
        got.push_back(f);
      }
      nlohmann::json want = nlohmann::json::array();
      for (const auto& f : expect["fteid"]) {
        nlohmann::json w = f;
        w.erase("in_grouped_ie");
        want.push_back(w);
      }
      EXPECT_EQ(got, want) << where;
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
  for (const auto& d : deviations) {
    EXPECT_TRUE(kKnownCodecDeviations.count(d)) << "new difference from TShark at " << d;
  }
}

TEST(GtpcDecodeVectors, Gtpv1FactsMatchTshark) {
  int checked = 0;
  int line = 0;
  for (const auto& record : readJsonLines(dataPath("vectors/gtpv1.jsonl"))) {
    ++line;
    if (record.contains("bad_reasons") || record.value("plane", "C") != "C") continue;
    const std::string where = "gtpv1.jsonl:" + std::to_string(line);
    const auto& expect = record["expect"];
    const Json j = decodeHex(record["hex"].get<std::string>());
    ASSERT_FALSE(isError(j)) << where << " " << j.dump();
    EXPECT_EQ(j["message_type"], expect["message_type"]) << where;
    EXPECT_EQ(j["teid"], expect["teid"]) << where;
    if (expect["flags"]["S"] == 1) {
      EXPECT_EQ(j["sequence_number"], expect["seq"]) << where;
    }
    auto first = [&](int type) { auto v = valuesOf(j, type); return v.empty() ? Json() : v.front(); };
    auto check = [&](const char* key, int type) {
      if (!expect.contains(key)) return;
      EXPECT_EQ(first(type), expect[key]) << where << " " << key;
      ++checked;
    };
    check("imsi", 2);
    check("apn", 131);
    check("recovery", 14);
    check("teid_data", 16);
    check("teid_cp", 17);
    check("nsapi", 20);
    if (expect.contains("cause")) {
      EXPECT_EQ(first(1)["cause"], expect["cause"]) << where;
      ++checked;
    }
    if (expect.contains("gsn_ipv4")) {
      EXPECT_EQ(Json(valuesOf(j, 133)), expect["gsn_ipv4"]) << where;
      ++checked;
    }
    if (expect.contains("end_user_address")) {
      const Json eua = first(128);
      std::vector<std::string> addresses;
      if (eua.contains("ipv4")) addresses.push_back(eua["ipv4"]);
      if (eua.contains("ipv6")) addresses.push_back(eua["ipv6"]);
      EXPECT_EQ(Json(addresses), expect["end_user_address"]) << where;
      ++checked;
    }
  }
  EXPECT_GT(checked, 120);
}

// ---------------------------------------------------------------------------
// Hand-picked messages, every field an operator looks at.

TEST(GtpcDecodeJson, CreateSessionRequestFieldByField) {
  // Facts from TShark 4.0.17 on the same bytes (text2pcap -u 2123,2123).
  const Json j = decodeHex(kCreateSessionRequest);
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["message_type"], 32);
  EXPECT_EQ(j["message_name"], "Create Session Request");
  EXPECT_EQ(j["flags"], (Json{{"piggyback", false}, {"teid_present", true}, {"message_priority_present", false}}));
  EXPECT_FALSE(j.contains("message_priority"));
  EXPECT_EQ(j["length"], 179);
  EXPECT_EQ(j["teid"], "0x00000000");
  EXPECT_EQ(j["sequence_number"], 18);
  EXPECT_FALSE(j.contains("piggybacked"));

  const Json& imsi = topIe(j, 1);
  EXPECT_EQ(imsi["name"], "International Mobile Subscriber Identity (IMSI)");
  EXPECT_EQ(imsi["instance"], 0);
  EXPECT_EQ(imsi["length"], 8);
  EXPECT_EQ(imsi["hex"], "42041728114920f6");
  EXPECT_EQ(imsi["value"], "244071821194026");
  EXPECT_FALSE(imsi.contains("cr_spare"));

  EXPECT_EQ(topIe(j, 71)["value"], "internet");
  EXPECT_EQ(topIe(j, 83)["value"], (Json{{"mcc", "244"}, {"mnc", "07"}}));
  EXPECT_EQ(topIe(j, 86)["value"],
            (Json{{"tai", {{"mcc", "244"}, {"mnc", "07"}, {"tac", 4131}}},
                  {"ecgi", {{"mcc", "244"}, {"mnc", "07"}, {"eci", 11369218}}}}));
  EXPECT_EQ(topIe(j, 82)["value"], 6);
  EXPECT_EQ(topIe(j, 87)["value"], (Json{{"interface_type", 6},
                                         {"interface", "S5/S8 SGW GTP-C interface"},
                                         {"teid", "0x80000009"},
                                         {"ipv4", "127.0.0.2"}}));
  EXPECT_EQ(topIe(j, 128)["value"], 0);
  EXPECT_EQ(topIe(j, 99)["value"], 1);
  EXPECT_EQ(topIe(j, 79)["value"], (Json{{"pdn_type", 1}, {"ipv4", "0.0.0.0"}}));
  EXPECT_EQ(topIe(j, 127)["value"], 0);
  EXPECT_FALSE(topIe(j, 78).contains("value"));  // PCO: hex only
  EXPECT_TRUE(topIe(j, 78).contains("hex"));
  EXPECT_EQ(topIe(j, 114)["value"], (Json{{"time_zone", "0x21"}, {"daylight_saving_time", 0}}));
  EXPECT_EQ(topIe(j, 95)["value"], "0x5400");

  const Json& bearer = topIe(j, 93);
  EXPECT_EQ(bearer["name"], "Bearer Context");
  EXPECT_FALSE(bearer.contains("hex"));
  EXPECT_FALSE(bearer.contains("value"));
  ASSERT_EQ(bearer["ies"].size(), 3u);
  EXPECT_EQ(bearer["ies"][0]["value"], 5);
  EXPECT_EQ(bearer["ies"][1]["instance"], 2);
  EXPECT_EQ(bearer["ies"][1]["value"], (Json{{"interface_type", 4},
                                             {"interface", "S5/S8 SGW GTP-U interface"},
                                             {"teid", "0x00000012"},
                                             {"ipv4", "10.85.75.211"}}));
  EXPECT_EQ(bearer["ies"][2]["value"], (Json{{"pci", true},
                                             {"pl", 3},
                                             {"pvi", true},
                                             {"qci", 9},
                                             {"mbr_uplink_kbps", 0},
                                             {"mbr_downlink_kbps", 0},
                                             {"gbr_uplink_kbps", 0},
                                             {"gbr_downlink_kbps", 0}}));
}

TEST(GtpcDecodeJson, KeysComeInTheDocumentedOrder) {
  const Json j = decodeHex(kCreateSessionRequest);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_THAT(keys, ElementsAre("version", "message_type", "message_name", "flags", "length", "teid",
                                "sequence_number", "ies"));
  std::vector<std::string> ie_keys;
  const Json& imsi = j["ies"][0];
  for (auto it = imsi.begin(); it != imsi.end(); ++it) ie_keys.push_back(it.key());
  EXPECT_THAT(ie_keys, ElementsAre("type", "name", "instance", "length", "hex", "value"));
}

TEST(GtpcDecodeJson, CreateSessionResponseFromNdpiCapture) {
  // gtp_c.pcap frame 2; TShark: cause 16, recovery 1, PAA 33.23.23.1.
  std::string hex;
  for (const auto& r : readJsonLines(dataPath("vectors/gtpv2.jsonl"))) {
    if (r["source"].get<std::string>().ends_with("gtp_c.pcap") && r["origin"]["pcap_frame"] == 2) hex = r["hex"];
  }
  ASSERT_FALSE(hex.empty());
  const Json j = decodeHex(hex);
  EXPECT_EQ(j["message_name"], "Create Session Response");
  EXPECT_EQ(topIe(j, 2)["value"], (Json{{"cause", 16},
                                        {"name", "Request accepted"},
                                        {"pce", false},
                                        {"bce", false},
                                        {"cs", false}}));
  EXPECT_EQ(topIe(j, 3)["value"], 1);
  EXPECT_EQ(topIe(j, 79)["value"]["ipv4"], "33.23.23.1");
}

TEST(GtpcDecodeJson, Gtpv1CreatePdpContextFromZeekCapture) {
  // gtp_create_pdp_ctx.pcap frames 2 and 3 (TShark's facts in the vectors).
  std::vector<std::string> hex;
  for (const auto& r : readJsonLines(dataPath("vectors/gtpv1.jsonl"))) {
    if (r["source"].get<std::string>().ends_with("gtp_create_pdp_ctx.pcap")) hex.push_back(r["hex"]);
  }
  ASSERT_EQ(hex.size(), 2u);
  const Json request = decodeHex(hex[0]);
  EXPECT_EQ(request["version"], 1);
  EXPECT_EQ(request["protocol_type"], 1);
  EXPECT_EQ(request["message_name"], "Create PDP Context Request");
  EXPECT_EQ(request["flags"], (Json{{"extension_header", false}, {"sequence_number", true}, {"npdu", false}}));
  EXPECT_EQ(request["sequence_number"], 4875);
  EXPECT_EQ(request["npdu_number"], 0);
  EXPECT_EQ(request["next_extension_header_type"], "0x00");
  EXPECT_FALSE(request.contains("extension_headers"));
  EXPECT_EQ(topIe(request, 2)["value"], "460004100000101");
  EXPECT_EQ(topIe(request, 2)["format"], "tv");
  EXPECT_EQ(topIe(request, 14)["value"], 176);
  EXPECT_EQ(topIe(request, 16)["value"], "0x32f02bf9");
  EXPECT_EQ(topIe(request, 17)["value"], "0x32f02bf9");
  EXPECT_EQ(topIe(request, 20)["value"], 5);
  EXPECT_EQ(topIe(request, 131)["value"], "eetest");
  EXPECT_EQ(topIe(request, 131)["format"], "tlv");
  EXPECT_EQ(Json(valuesOf(request, 133)), (Json{"192.169.100.1", "192.169.100.1"}));

  const Json response = decodeHex(hex[1]);
  EXPECT_EQ(response["message_name"], "Create PDP Context Response");
  EXPECT_EQ(topIe(response, 1)["value"], (Json{{"cause", 128}, {"name", "Request accepted"}}));
  EXPECT_EQ(topIe(response, 16)["value"], "0x10000085");
  EXPECT_EQ(topIe(response, 17)["value"], "0x10000080");
  EXPECT_EQ(topIe(response, 128)["value"],
            (Json{{"pdp_type_organization", 1}, {"pdp_type_number", "0x21"}, {"ipv4", "192.168.252.130"}}));
  EXPECT_EQ(Json(valuesOf(response, 133)), (Json{"10.100.200.34", "10.100.200.49"}));
}

TEST(GtpcDecodeJson, LenientDigitsCarryAWarning) {
  // scapy's Create Session Request with MEI 000000000001e240; TShark shows
  // "0000000000102?04".
  std::string hex;
  int line = 0;
  for (const auto& r : readJsonLines(dataPath("vectors/gtpv2.jsonl"))) {
    if (++line == 29) hex = r["hex"];
  }
  const Json mei = topIe(decodeHex(hex), 75);
  EXPECT_EQ(mei["hex"], "000000000001e240");
  EXPECT_EQ(mei["value"], "0000000000102?04");
  EXPECT_EQ(mei["value_warning"], "ie_invalid_value");
}

// ---------------------------------------------------------------------------
// Built messages: piggyback, every typed value, header variants.

v2::CauseIe accepted() {
  v2::CauseIe c;
  c.value = 16;
  return c;
}

std::vector<uint8_t> build(auto&& fill) {
  std::vector<uint8_t> buffer(4096);
  v2::Builder b(buffer);
  fill(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes.has_value());
  return bytes ? std::vector<uint8_t>(bytes->begin(), bytes->end()) : std::vector<uint8_t>{};
}

TEST(GtpcDecodeJson, PiggybackedMessageAppearsUnderPiggybacked) {
  const auto bytes = build([](v2::Builder& b) {
    b.begin(v2::MessageType::kCreateSessionResponse, 0x11223344u, 0x000102);
    b.add(accepted());
    b.beginPiggybacked(v2::MessageType::kCreateBearerRequest, 0x55667788u, 0x000103, 5);
    b.add(v2::Ebi{5});
    b.beginGrouped(v2::IeType::kBearerContext);
    b.add(v2::Ebi{0});
    b.endGrouped();
  });
  const Json j = decodeDatagram(bytes);
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_EQ(j["message_name"], "Create Session Response");
  EXPECT_EQ(j["flags"]["piggyback"], true);
  EXPECT_EQ(j["teid"], "0x11223344");
  EXPECT_EQ(j["sequence_number"], 0x102);
  EXPECT_EQ(topIe(j, 2)["value"]["cause"], 16);
  ASSERT_TRUE(j.contains("piggybacked"));
  const Json& p = j["piggybacked"];
  EXPECT_EQ(p["message_type"], 95);
  EXPECT_EQ(p["message_name"], "Create Bearer Request");
  EXPECT_EQ(p["flags"], (Json{{"piggyback", false}, {"teid_present", true}, {"message_priority_present", true}}));
  EXPECT_EQ(p["message_priority"], 5);
  EXPECT_EQ(p["teid"], "0x55667788");
  EXPECT_EQ(p["sequence_number"], 0x103);
  EXPECT_EQ(topIe(p, 73)["value"], 5);
  EXPECT_EQ(topIe(p, 93)["ies"][0]["value"], 0);
  EXPECT_FALSE(p.contains("piggybacked"));
}

TEST(GtpcDecodeJson, ErrorInPiggybackedMessageSaysSo) {
  auto bytes = build([](v2::Builder& b) {
    b.begin(v2::MessageType::kCreateSessionResponse, 1u, 7);
    b.add(accepted());
    b.beginPiggybacked(v2::MessageType::kCreateBearerRequest, 2u, 8);
    b.add(v2::Ebi{5});
  });
  bytes[bytes.size() - 3] = 0x07;  // the last IE (EBI) claims 7 octets: past the end
  const Json j = decodeDatagram(bytes);
  ASSERT_TRUE(isError(j)) << j.dump();
  EXPECT_EQ(j["error"], "ie_truncated");
  EXPECT_EQ(j["ie_type"], 73);
  EXPECT_EQ(j["message_name"], "Create Session Response");
  EXPECT_EQ(j["in_piggybacked"], true);
}

TEST(GtpcDecodeJson, EveryTypedGtpv2Value) {
  gtp::Ipv4 a4;
  gtp::Ipv6 a6;
  ASSERT_TRUE(gtp::parseIpv4("192.0.2.1", a4));
  ASSERT_TRUE(gtp::parseIpv6("2001:db8::1", a6));
  const auto plmn = *gtp::makePlmn("001", "01");
  const auto plmn3 = *gtp::makePlmn("310", "410");
  v2::Uli uli;
  uli.cgi = v2::Uli::Cgi{plmn, 0x1234, 0x5678};
  uli.sai = v2::Uli::Sai{plmn, 0x1234, 0x0101};
  uli.rai = v2::Uli::Rai{plmn3, 0x1234, 0x22};
  uli.tai = v2::Uli::Tai{plmn, 0x00ab};
  uli.ecgi = v2::Uli::Ecgi{plmn, 0x0abcdef};
  uli.lai = v2::Uli::Lai{plmn, 0x4321};
  uli.macro_enb = v2::Uli::MacroEnb{plmn, 0xabcde};
  uli.extended_macro_enb = v2::Uli::ExtendedMacroEnb{plmn, true, 0x1abcde};
  v2::FqCsid csid;
  csid.node_id_type = 2;
  csid.node_id = 0x12345678;
  csid.csid_count = 2;
  csid.csids = {1, 0xffff};
  const std::array<uint8_t, 3> private_value{0xde, 0xad, 0x01};
  v2::Paa paa;
  paa.pdn_type = 3;
  paa.ipv4 = a4;
  paa.ipv6 = a6;
  paa.ipv6_prefix_length = 64;
  v2::Indication indication;
  indication.size = 3;
  indication.octets = {0x80, 0x00, 0x01};
  v2::CauseIe cause{64, true, false, true, v2::CauseIe::OffendingIe{87, 1}};

  const auto bytes = build([&](v2::Builder& b) {
    b.begin(v2::MessageType::kCreateSessionRequest, 0u, 1);
    b.add(v2::Msisdn{*gtp::decodeTbcd(bytesOf("94710000000010f0"))});
    b.add(uli);
    b.add(v2::FTeid{10, 0xabcdef01, a4, a6});
    b.add(cause);
    b.add(v2::Ambr{1000, 2000});
    b.add(paa);
    b.add(indication);
    b.add(v2::IpAddress{std::nullopt, a6});
    b.add(v2::IpAddress{a4, std::nullopt}, 1);
    b.add(csid);
    b.add(v2::PrivateExtension{10415, private_value});
    b.add(v2::NodeType{1});
    b.add(v2::PortNumber{2123});
    b.add(v2::ChargingId{0xfffffffe});
    b.add(v2::ApnRestriction{3});
    b.add(v2::Recovery{255});
  });
  const Json j = decodeDatagram(bytes);
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_EQ(topIe(j, 76)["value"], "491700000000010");
  EXPECT_EQ(topIe(j, 86)["value"],
            (Json{{"cgi", {{"mcc", "001"}, {"mnc", "01"}, {"lac", 0x1234}, {"ci", 0x5678}}},
                  {"sai", {{"mcc", "001"}, {"mnc", "01"}, {"lac", 0x1234}, {"sac", 0x0101}}},
                  {"rai", {{"mcc", "310"}, {"mnc", "410"}, {"lac", 0x1234}, {"rac", 0x22}}},
                  {"tai", {{"mcc", "001"}, {"mnc", "01"}, {"tac", 0xab}}},
                  {"ecgi", {{"mcc", "001"}, {"mnc", "01"}, {"eci", 0x0abcdef}}},
                  {"lai", {{"mcc", "001"}, {"mnc", "01"}, {"lac", 0x4321}}},
                  {"macro_enb", {{"mcc", "001"}, {"mnc", "01"}, {"id", 0xabcde}}},
                  {"extended_macro_enb", {{"mcc", "001"}, {"mnc", "01"}, {"smenb", true}, {"id", 0x1abcde}}}}));
  EXPECT_EQ(topIe(j, 87)["value"], (Json{{"interface_type", 10},
                                         {"interface", "S11 MME GTP-C interface"},
                                         {"teid", "0xabcdef01"},
                                         {"ipv4", "192.0.2.1"},
                                         {"ipv6", "2001:db8::1"}}));
  EXPECT_EQ(topIe(j, 2)["value"], (Json{{"cause", 64},
                                        {"name", "Context Not Found"},
                                        {"pce", true},
                                        {"bce", false},
                                        {"cs", true},
                                        {"offending_ie", {{"type", 87}, {"instance", 1}}}}));
  EXPECT_EQ(topIe(j, 72)["value"], (Json{{"uplink_kbps", 1000}, {"downlink_kbps", 2000}}));
  EXPECT_EQ(topIe(j, 79)["value"],
            (Json{{"pdn_type", 3}, {"ipv4", "192.0.2.1"}, {"ipv6", "2001:db8::1"}, {"ipv6_prefix_length", 64}}));
  EXPECT_EQ(topIe(j, 77)["value"], (Json{{"flags", "800001"}}));
  EXPECT_EQ(topIe(j, 74, 0)["value"], "2001:db8::1");
  EXPECT_EQ(topIe(j, 74, 1)["value"], "192.0.2.1");
  EXPECT_EQ(topIe(j, 132)["value"],
            (Json{{"node_id_type", 2}, {"node_id", 0x12345678}, {"csids", {1, 0xffff}}}));
  EXPECT_EQ(topIe(j, 255)["value"], (Json{{"enterprise_id", 10415}, {"value", "dead01"}}));
  EXPECT_EQ(topIe(j, 135)["value"], 1);
  EXPECT_EQ(topIe(j, 126)["value"], 2123);
  EXPECT_EQ(topIe(j, 94)["value"], 0xfffffffeu);
  EXPECT_EQ(topIe(j, 127)["value"], 3);
  EXPECT_EQ(topIe(j, 3)["value"], 255);
}

TEST(GtpcDecodeJson, CrSpareUnknownTypesAndBrokenValues) {
  const std::array<uint8_t, 5> no_address{0x0a, 0, 0, 0, 1};  // F-TEID without V4/V6
  const std::array<uint8_t, 2> unknown{0xca, 0xfe};
  const auto bytes = build([&](v2::Builder& b) {
    b.begin(v2::MessageType::kEchoRequest, std::nullopt, 9);
    b.add(v2::Recovery{1});
    b.addRaw(87, 0, no_address);
    b.addRaw(240, 3, unknown);  // unassigned
  });
  auto patched = bytes;
  patched[8 + 3] = 0x90;  // Recovery's CR/instance octet: CR nibble 9, instance 0
  const Json j = decodeDatagram(patched);
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_FALSE(j.contains("teid"));
  EXPECT_EQ(j["flags"]["teid_present"], false);
  EXPECT_EQ(j["ies"][0]["cr_spare"], 9);
  EXPECT_EQ(j["ies"][0]["value"], 1);
  EXPECT_EQ(j["ies"][1]["value_error"], "ie_invalid_value");
  EXPECT_FALSE(j["ies"][1].contains("value"));
  EXPECT_EQ(j["ies"][1]["hex"], "0a00000001");
  EXPECT_EQ(j["ies"][2]["name"], "Unknown");
  EXPECT_EQ(j["ies"][2]["instance"], 3);
  EXPECT_EQ(j["ies"][2]["hex"], "cafe");
  EXPECT_FALSE(j["ies"][2].contains("value"));
}

TEST(GtpcDecodeJson, MaskHidesSubscriberIdentitiesEverywhere) {
  Options mask;
  mask.mask = true;
  const Json j = decodeHex(kCreateSessionRequest, mask);
  EXPECT_EQ(topIe(j, 1)["value"], "24407**********");
  EXPECT_EQ(topIe(j, 1)["hex"], "4204************");
  const std::string text = j.dump();
  EXPECT_THAT(text, Not(HasSubstr("244071821194026")));
  EXPECT_THAT(text, Not(HasSubstr("1728114920f6")));

  // MSISDN and MEI too, and GTPv1's MSISDN keeps its address-type octet.
  const auto bytes = build([](v2::Builder& b) {
    b.begin(v2::MessageType::kCreateSessionRequest, 0u, 1);
    b.add(v2::Msisdn{*gtp::decodeTbcd(bytesOf("94710000000010f0"))});
    b.add(v2::Mei{*gtp::decodeTbcd(bytesOf("5300105600000070"))});
  });
  const Json m = decodeDatagram(bytes, mask);
  EXPECT_EQ(topIe(m, 76)["value"], "49170**********");
  EXPECT_EQ(topIe(m, 75)["value"], "35000***********");
  EXPECT_EQ(decodeDatagram(bytes)["ies"][0]["value"], "491700000000010");

  std::vector<uint8_t> buffer(256);
  v1::Builder b1(buffer);
  b1.begin(v1::MessageType::kCreatePdpContextRequest, 0, 1);
  b1.add(v1::Imsi{*gtp::decodeTbcd(bytesOf("42041728114920f6"))});
  b1.add(v1::Msisdn{0x91, *gtp::decodeTbcd(bytesOf("94710000000010f0"))});
  auto v1bytes = b1.finish();
  ASSERT_TRUE(v1bytes.has_value());
  const Json g = decodeDatagram(*v1bytes, mask);
  EXPECT_EQ(topIe(g, 2)["value"], "24407**********");
  EXPECT_EQ(topIe(g, 134)["value"], "49170**********");
  EXPECT_EQ(topIe(g, 134)["hex"], "919471************");

  // go-gtp's Context Response: TShark finds MEI 2143658709000000 inside the
  // MM Context, whose layout the tool does not take apart.
  std::string context_response;
  for (const auto& r : readJsonLines(dataPath("vectors/gtpv2.jsonl"))) {
    if (r["name"] == "ContextResponse" && r["expect"].value("mei", "") == "2143658709000000")
      context_response = r["hex"];
  }
  ASSERT_FALSE(context_response.empty());
  EXPECT_THAT(decodeHex(context_response).dump(), HasSubstr("1234567890"));
  const Json c = decodeHex(context_response, mask);
  EXPECT_THAT(c.dump(), Not(HasSubstr("1234567890")));
  EXPECT_EQ(topIe(c, 107)["hex"], std::string(2 * topIe(c, 107)["length"].get<std::size_t>(), '*'));
}

TEST(GtpcDecodeJson, EveryTypedGtpv1Value) {
  // Built by hand from TS 29.060 §7.7, in ascending type order.
  const std::string hex =
      "32" "10" "0000" "00000000" "0001" "00" "00"  // header, length patched below
      "0200010121436587f9"                           // IMSI 001010123456789
      "0321f354123499"                               // RAI 123/45 LAC 0x1234 RAC 0x99
      "04c0ffee01"                                   // TLLI
      "05c0ffee02"                                   // P-TMSI
      "08ff"                                         // Reordering Required: yes
      "0e07"                                         // Recovery 7
      "0ffd"                                         // Selection Mode 1
      "1000000010"                                   // TEID Data I
      "1100000011"                                   // TEID Control Plane
      "120500000012"                                 // TEID Data II: NSAPI 5
      "13fe"                                         // Teardown Ind: no
      "1405"                                         // NSAPI 5
      "1a0800"                                       // Charging Characteristics
      "1b0102"                                       // Trace Reference
      "1c0304"                                       // Trace Type
      "7f01020304"                                   // Charging ID
      "800006f1210a000001"                           // End User Address IPv4
      "830009" "08696e7465726e6574"                  // APN
      "850004c0000201"                               // GSN Address
      "860006" "919471000000"                        // MSISDN 4917000000 (address type 0x91)
      "870004" "021f9196"                            // QoS Profile ARP 2
      "940001" "40"                                  // Common Flags
      "950001" "03"                                  // APN Restriction
      "970001" "06"                                  // RAT Type
      "980008" "0221f354123499ff"                    // ULI RAI: RAC 0x99, then a spare octet
      "990002" "4001"                                // MS Time Zone
      "9a0008" "5300105600000070"                    // IMEI(SV)
      "fb0004" "c0000202"                            // Charging Gateway Address
      "ff0004" "28af" "abcd";                        // Private Extension
  auto bytes = bytesOf(hex);
  const auto length = static_cast<uint16_t>(bytes.size() - 8);
  bytes[2] = static_cast<uint8_t>(length >> 8);
  bytes[3] = static_cast<uint8_t>(length);
  const Json j = decodeDatagram(bytes);
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_EQ(topIe(j, 2)["value"], "001010123456789");
  EXPECT_EQ(topIe(j, 3)["value"], (Json{{"mcc", "123"}, {"mnc", "45"}, {"lac", 0x1234}, {"rac", 0x99}}));
  EXPECT_EQ(topIe(j, 4)["value"], "0xc0ffee01");
  EXPECT_EQ(topIe(j, 5)["value"], "0xc0ffee02");
  EXPECT_EQ(topIe(j, 8)["value"], true);
  EXPECT_EQ(topIe(j, 14)["value"], 7);
  EXPECT_EQ(topIe(j, 15)["value"], 1);
  EXPECT_EQ(topIe(j, 16)["value"], "0x00000010");
  EXPECT_EQ(topIe(j, 17)["value"], "0x00000011");
  EXPECT_EQ(topIe(j, 18)["value"], (Json{{"nsapi", 5}, {"teid", "0x00000012"}}));
  EXPECT_EQ(topIe(j, 19)["value"], false);
  EXPECT_EQ(topIe(j, 20)["value"], 5);
  EXPECT_EQ(topIe(j, 26)["value"], "0x0800");
  EXPECT_EQ(topIe(j, 27)["value"], 0x0102);
  EXPECT_EQ(topIe(j, 28)["value"], 0x0304);
  EXPECT_EQ(topIe(j, 127)["value"], 0x01020304);
  EXPECT_EQ(topIe(j, 128)["value"],
            (Json{{"pdp_type_organization", 1}, {"pdp_type_number", "0x21"}, {"ipv4", "10.0.0.1"}}));
  EXPECT_EQ(topIe(j, 131)["value"], "internet");
  EXPECT_EQ(topIe(j, 133)["value"], "192.0.2.1");
  EXPECT_EQ(topIe(j, 134)["value"], "4917000000");
  EXPECT_EQ(topIe(j, 135)["value"], (Json{{"allocation_retention_priority", 2}, {"qos", "1f9196"}}));
  EXPECT_EQ(topIe(j, 148)["value"], "0x40");
  EXPECT_EQ(topIe(j, 149)["value"], 3);
  EXPECT_EQ(topIe(j, 151)["value"], 6);
  EXPECT_EQ(topIe(j, 152)["value"],
            (Json{{"geographic_location_type", 2}, {"mcc", "123"}, {"mnc", "45"}, {"lac", 0x1234}, {"rac", 0x99}}));
  EXPECT_EQ(topIe(j, 153)["value"], (Json{{"time_zone", "0x40"}, {"daylight_saving_time", 1}}));
  EXPECT_EQ(topIe(j, 154)["value"], "3500016500000007");
  EXPECT_EQ(topIe(j, 251)["value"], "192.0.2.2");
  EXPECT_EQ(topIe(j, 255)["value"], (Json{{"extension_identifier", 10415}, {"value", "abcd"}}));
}

TEST(GtpcDecodeJson, Gtpv1ExtensionHeadersAndGpdu) {
  // Echo Request with E=1 announcing one PDCP PDU Number extension header
  // (type 0xc0, one 4-octet unit, next type 0).
  const Json j = decodeHex("36010008000000000000" "00c0" "01123400");
  ASSERT_FALSE(isError(j)) << j.dump();
  EXPECT_EQ(j["flags"]["extension_header"], true);
  EXPECT_EQ(j["next_extension_header_type"], "0xc0");
  ASSERT_EQ(j["extension_headers"].size(), 1u);
  EXPECT_EQ(j["extension_headers"][0], (Json{{"type", "0xc0"}, {"hex", "01123400"}}));
  EXPECT_EQ(j["ies"], Json::array());

  const Json gpdu = decodeHex("30ff000400000001" "45000000");
  ASSERT_FALSE(isError(gpdu)) << gpdu.dump();
  EXPECT_EQ(gpdu["message_name"], "G-PDU");
  EXPECT_EQ(gpdu["payload_length"], 4);
  EXPECT_FALSE(gpdu.contains("ies"));
  EXPECT_FALSE(gpdu.contains("sequence_number"));
}

// ---------------------------------------------------------------------------
// Error objects.

TEST(GtpcDecodeJson, TruncatedMessageIsAnErrorObjectWithItsHeader) {
  const auto whole = bytesOf(kCreateSessionRequest);
  const std::vector<uint8_t> cut(whole.begin(), whole.end() - 10);
  const Json j = decodeDatagram(cut);
  ASSERT_TRUE(isError(j));
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["error"], "invalid_length");
  EXPECT_THAT(j["detail"].get<std::string>(), HasSubstr("Length"));
  EXPECT_EQ(j["offset"], 2);
  EXPECT_FALSE(j.contains("ie_type"));
  EXPECT_EQ(j["message_type"], 32);
  EXPECT_EQ(j["message_name"], "Create Session Request");
  EXPECT_EQ(j["teid"], "0x00000000");
  EXPECT_EQ(j["sequence_number"], 18);
}

TEST(GtpcDecodeJson, IeErrorNamesTheIe) {
  auto bytes = bytesOf(kCreateSessionRequest);
  bytes[12 + 1] = 0x40;  // IMSI length 0x4008: past the end of the message
  const Json j = decodeDatagram(bytes);
  ASSERT_TRUE(isError(j));
  EXPECT_EQ(j["error"], "ie_truncated");
  EXPECT_EQ(j["ie_type"], 1);
  EXPECT_EQ(j["offset"], 12);
  EXPECT_EQ(j["message_name"], "Create Session Request");
}

TEST(GtpcDecodeJson, HeaderlessErrors) {
  const Json empty = decodeDatagram({});
  EXPECT_EQ(empty["error"], "truncated_header");
  EXPECT_FALSE(empty.contains("version"));

  const Json short_v2 = decodeHex("4820");
  EXPECT_EQ(short_v2["version"], 2);
  EXPECT_EQ(short_v2["error"], "truncated_header");
  EXPECT_FALSE(short_v2.contains("message_type"));

  const Json v3 = decodeHex("6001000400000000");
  EXPECT_EQ(v3["version"], 3);
  EXPECT_EQ(v3["error"], "unsupported_version");

  const Json gtp_prime = decodeHex("2e01000400000000");  // version 1, PT=0
  EXPECT_EQ(gtp_prime["version"], 1);
  EXPECT_EQ(gtp_prime["error"], "unsupported_version");
  EXPECT_FALSE(gtp_prime.contains("message_type"));

  const Json unknown_type = decodeHex("32c800040000000000000000");
  EXPECT_EQ(unknown_type["error"], "unknown_message_type");
  EXPECT_EQ(unknown_type["message_name"], "Unknown");
  EXPECT_EQ(unknown_type["teid"], "0x00000000");
}

TEST(GtpcDecodeJson, EveryVectorDecodesOrFailsCleanly) {
  // Negative vectors included: an object either way, never an exception.
  for (const char* file : {"vectors/gtpv2.jsonl", "vectors/gtpv1.jsonl", "vectors/gtpv2_ie.jsonl",
                           "vectors/gtpv1_ie.jsonl"}) {
    for (const auto& record : readJsonLines(dataPath(file))) {
      const auto bytes = bytesOf(record["hex"].get<std::string>());
      for (std::size_t n = 0; n <= bytes.size(); ++n) {
        // Each prefix in its own allocation, so ASan sees any read past it.
        const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        const Json j = decodeDatagram(prefix);
        ASSERT_TRUE(j.is_object());
        EXPECT_NO_THROW((void)j.dump());
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Hex input and summary lines.

TEST(GtpcDecodeHex, AcceptsCaseSpacesAndColons) {
  EXPECT_EQ(*parseHex("4820 00:0a"), (std::vector<uint8_t>{0x48, 0x20, 0x00, 0x0a}));
  EXPECT_EQ(*parseHex("  AbCd\r"), (std::vector<uint8_t>{0xab, 0xcd}));
  EXPECT_EQ(*parseHex("0x4820"), (std::vector<uint8_t>{0x48, 0x20}));
}

TEST(GtpcDecodeHex, RejectsOddLengthAndNonHex) {
  EXPECT_EQ(parseHex("482").error().detail, "odd number of hex digits");
  const auto bad = parseHex("48zz");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().position, 2u);
  EXPECT_THAT(bad.error().detail, HasSubstr("'z'"));
  EXPECT_FALSE(parseHex("").has_value());
  EXPECT_FALSE(parseHex(" : ").has_value());
  const Json j = decodeHexText("48\x01", {});
  EXPECT_EQ(j["error"], "invalid_hex");
  EXPECT_THAT(j["detail"].get<std::string>(), HasSubstr("0x01"));
}

TEST(GtpcDecodeSummary, OneLineWithTheFieldsOperatorsGrepFor) {
  const auto bytes = bytesOf(kCreateSessionRequest);
  UdpDatagram d;
  d.frame = 1;
  d.endpoints.src.octets = {10, 0, 0, 1};
  d.endpoints.dst.octets = {10, 0, 0, 2};
  d.endpoints.src_port = d.endpoints.dst_port = 2123;
  d.payload = bytes;
  EXPECT_EQ(summaryLines(frameJson(d, {}), ""),
            "1  10.0.0.1:2123 -> 10.0.0.2:2123  GTPv2 Create Session Request  teid=0x00000000 seq=18 "
            "imsi=244071821194026 apn=internet");
  Options mask;
  mask.mask = true;
  EXPECT_THAT(summaryLines(frameJson(d, mask), ""), HasSubstr("imsi=24407**********"));
  EXPECT_EQ(summaryLines(decodeHexText("zz", {}), "3"), "3  error=invalid_hex (not a hex digit: 'z')");
}

TEST(GtpcDecodeSummary, PiggybackedMessageGetsItsOwnLine) {
  const auto bytes = build([](v2::Builder& b) {
    b.begin(v2::MessageType::kCreateSessionResponse, 0x11u, 1);
    b.add(accepted());
    b.beginPiggybacked(v2::MessageType::kCreateBearerRequest, 0x22u, 2);
    b.add(v2::Ebi{5});
  });
  EXPECT_EQ(summaryLines(decodeDatagram(bytes), "1"),
            "1  GTPv2 Create Session Response  teid=0x00000011 seq=1 cause=16 (Request accepted)\n"
            "1  GTPv2 Create Bearer Request (piggybacked)  teid=0x00000022 seq=2");
}

}  // namespace
}  // namespace gtpcp::gtpc_decode
