// The routing document: loading, every selection criterion alone and
// combined, rule order, the health_check and failover sections, validation
// errors and the content hash, GTPv1 pools and their overrides
// (common/config/routing.h).
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config/routing.h"
#include "config_test_util.h"

namespace gtpcp::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::lines;

Result<RoutingTable> parse(std::string_view text) {
  return parseRoutingDocument(text, "routing.yaml");
}

std::string errorText(const Result<RoutingTable>& r) {
  return r ? std::string("(no error)") : r.error().toString();
}

// True when `text` with its first `from` replaced by `to` loads (a failed
// expectation otherwise) and hashes differently from `text`.
bool hashChanges(const std::string& text, const std::string& from, const std::string& to) {
  const auto before = parse(text);
  EXPECT_TRUE(before) << errorText(before);
  std::string changed = text;
  const auto at = changed.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (!before || at == std::string::npos) return false;
  changed.replace(at, from.size(), to);
  const auto after = parse(changed);
  EXPECT_TRUE(after) << to << ": " << errorText(after);
  return after && after->contentHash() != before->contentHash();
}

constexpr const char* kPools =
    "version: 1\n"                                 // 1
    "pools:\n"                                     // 2
    "  internet:\n"                                // 3
    "    gateways:\n"                              // 4
    "      - {name: pgw1, address: 127.0.0.21, weight: 3}\n"  // 5
    "      - {name: pgw2, address: 127.0.0.22}\n"  // 6
    "  ims:\n"                                     // 7
    "    gateways: [{name: pgw3, address: \"2001:db8::23\", port: 2124}]\n";  // 8

// Rule 0 ("r", pool ims) has `match: {<match>}`; rule 1 takes the rest.
RoutingTable tableWithMatch(const std::string& match) {
  const std::string text = std::string(kPools) +
                           "rules:\n"
                           "  - name: r\n"
                           "    match: {" + match + "}\n"
                           "    pool: ims\n"
                           "  - name: default\n"
                           "    pool: internet\n";
  auto r = parse(text);
  EXPECT_TRUE(r) << match << ": " << errorText(r);
  return r ? std::move(*r) : RoutingTable{};
}

// True when rule 0 takes `key`.
bool firstRuleTakes(const RoutingTable& t, const SessionKey& key) {
  const auto s = t.select(key);
  EXPECT_TRUE(s.has_value());
  return s && s->rule == 0;
}

SessionKey apnKey(std::string_view apn) {
  SessionKey k;
  k.apn = apn;
  return k;
}
SessionKey imsiKey(std::string_view imsi) {
  SessionKey k;
  k.imsi = imsi;
  return k;
}
gtp::Plmn plmn(std::string_view mcc, std::string_view mnc) { return *gtp::makePlmn(mcc, mnc); }
gtp::Ipv4 v4(std::string_view text) {
  gtp::Ipv4 a;
  EXPECT_TRUE(gtp::parseIpv4(text, a)) << text;
  return a;
}
gtp::Ipv6 v6(std::string_view text) {
  gtp::Ipv6 a;
  EXPECT_TRUE(gtp::parseIpv6(text, a)) << text;
  return a;
}

// -- loading ------------------------------------------------------------------

static_assert(noexcept(std::declval<const RoutingTable&>().select(std::declval<const SessionKey&>())));

TEST(RoutingDocument, CompilesPoolsGatewaysAndRules) {
  const RoutingTable t = tableWithMatch("apn: [IMS]");
  EXPECT_EQ(t.schemaVersion(), 1u);
  EXPECT_EQ(t.source(), "routing.yaml");
  ASSERT_EQ(t.pools().size(), 2u);
  ASSERT_EQ(t.gateways().size(), 3u);
  ASSERT_EQ(t.rules().size(), 2u);

  EXPECT_EQ(t.pool(0).name, "internet");
  EXPECT_EQ(t.pool(0).first_gateway, 0);
  EXPECT_EQ(t.pool(0).gateway_count, 2);
  EXPECT_EQ(t.pool(0).total_weight, 4u);
  EXPECT_EQ(t.pool(0).line, 3);
  EXPECT_EQ(t.pool(1).name, "ims");
  EXPECT_EQ(t.pool(1).first_gateway, 2);
  EXPECT_EQ(t.pool(1).gateway_count, 1);

  EXPECT_EQ(t.gateway(0).name, "pgw1");
  EXPECT_EQ(t.gateway(0).addressText(), "127.0.0.21");
  EXPECT_FALSE(t.gateway(0).isIpv6());
  EXPECT_EQ(t.gateway(0).port, 2123);
  EXPECT_EQ(t.gateway(0).weight, 3);
  EXPECT_EQ(t.gateway(0).pool, 0);
  EXPECT_EQ(t.gateway(0).line, 5);
  EXPECT_EQ(t.gateway(1).weight, 1);
  EXPECT_EQ(t.gateway(2).addressText(), "2001:db8::23");
  EXPECT_TRUE(t.gateway(2).isIpv6());
  EXPECT_EQ(t.gateway(2).port, 2124);
  EXPECT_EQ(t.gateway(2).pool, 1);
  ASSERT_EQ(t.gatewaysOf(0).size(), 2u);
  EXPECT_EQ(t.gatewaysOf(1)[0].name, "pgw3");

  EXPECT_EQ(t.rules()[0].name, "r");
  EXPECT_EQ(t.rules()[0].pool, 1);
  EXPECT_EQ(t.rules()[0].line, 10);
  ASSERT_EQ(t.rules()[0].match.apn.size(), 1u);
  EXPECT_EQ(t.rules()[0].match.apn[0].text, "ims");  // lower-cased at load
  EXPECT_TRUE(t.rules()[1].match.matchesEverything());

  EXPECT_EQ(t.findPool("ims"), 1);
  EXPECT_EQ(t.findPool("nope"), std::nullopt);
  EXPECT_EQ(t.findGateway("pgw2"), 1);
  EXPECT_EQ(t.findGateway("pgw9"), std::nullopt);
  EXPECT_THAT(summary(t), ::testing::StartsWith("2 pools, 3 gateways, 2 rules, hash "));
}

TEST(RoutingDocument, ExampleLoadsAndRoutes) {
  const auto r = loadRoutingDocument(testing::sourcePath("config/routing.yaml"));
  ASSERT_TRUE(r) << errorText(r);
  const RoutingTable& t = *r;
  ASSERT_EQ(t.pools().size(), 2u);
  EXPECT_EQ(t.pool(0).name, "internet");
  EXPECT_EQ(t.pool(1).name, "ims");
  ASSERT_EQ(t.gateways().size(), 3u);
  EXPECT_EQ(t.gateway(0).name, "pgw1");
  EXPECT_EQ(t.gateway(0).addressText(), "127.0.0.21");
  EXPECT_EQ(t.gateway(0).weight, 3);
  EXPECT_EQ(t.gateway(1).addressText(), "127.0.0.22");
  EXPECT_EQ(t.gateway(1).weight, 1);
  EXPECT_EQ(t.gateway(2).addressText(), "127.0.0.23");
  ASSERT_EQ(t.rules().size(), 3u);

  SessionKey k;
  k.apn = "ims";
  k.imsi = "001019999999999";
  EXPECT_EQ(t.select(k), (Selection{0, 1}));
  k.apn = "internet";
  EXPECT_EQ(t.select(k), (Selection{2, 0}));
  k.imsi = "001010012345678";
  EXPECT_EQ(t.select(k), (Selection{1, 1}));
}

TEST(RoutingDocument, ReportsAFileThatCannotBeRead) {
  EXPECT_THAT(lines(loadRoutingDocument("/nonexistent/routing.yaml").error()),
              ElementsAre("/nonexistent/routing.yaml: cannot read: No such file or directory"));
}

TEST(RoutingDocument, ErrorsNameTheFileAsGiven) {
  testing::TempDir dir;
  const std::string path = dir.write("r.yaml", "version: 2\npools: {}\nrules: []\n");
  EXPECT_THAT(lines(loadRoutingDocument(path).error()),
              ElementsAre(path + ":1: version: 2 is not supported: this gtpcp reads version 1",
                          path + ":2: pools: needs at least one pool",
                          path + ":3: rules: needs at least one rule"));
}

// -- each criterion alone ------------------------------------------------------

TEST(RoutingSelect, ApnExactIgnoresCase) {
  const RoutingTable t = tableWithMatch("apn: [ims, Internet.Example]");
  EXPECT_TRUE(firstRuleTakes(t, apnKey("ims")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("IMS")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("internet.example")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("INTERNET.EXAMPLE")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("ims.example")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("im")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("imss")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("example")));
}

TEST(RoutingSelect, ApnWildcardNeedsAtLeastOneLabelBeforeTheSuffix) {
  const RoutingTable t = tableWithMatch("apn: [\"*.mnc001.mcc001.gprs\", \"*.X\"]");
  EXPECT_EQ(t.rules()[0].match.apn[0].text, "mnc001.mcc001.gprs");
  EXPECT_TRUE(t.rules()[0].match.apn[0].wildcard);
  EXPECT_TRUE(firstRuleTakes(t, apnKey("ims.mnc001.mcc001.gprs")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("a.b.mnc001.mcc001.gprs")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("IMS.MNC001.MCC001.GPRS")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("mnc001.mcc001.gprs")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey(".mnc001.mcc001.gprs")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("imsmnc001.mcc001.gprs")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("ims.mnc002.mcc001.gprs")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("ims.mnc001.mcc001.gprs.x")));  // by "*.x"
  EXPECT_TRUE(firstRuleTakes(t, apnKey("a.x")));
  EXPECT_TRUE(firstRuleTakes(t, apnKey("a.X")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("x")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("ax")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey(".x")));
  EXPECT_FALSE(firstRuleTakes(t, apnKey("")));
}

TEST(RoutingSelect, ImsiPrefix) {
  const RoutingTable t = tableWithMatch("imsi_prefix: [\"00101\", 310260]");
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("001010000000001")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("00101")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("310260123456789")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("0010")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("001020000000001")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("")));
}

TEST(RoutingSelect, ImsiRangeIsInclusiveAndOfOneLength) {
  const RoutingTable t = tableWithMatch(
      "imsi_range: [{from: \"001010000000100\", to: \"001010000000199\"}, "
      "{from: \"00101000000500\", to: \"00101000000500\"}]");
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("001010000000099")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("001010000000100")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("001010000000150")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("001010000000199")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("001010000000200")));
  // The 14-digit range holds one IMSI; the same digits with 15 do not match.
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("00101000000500")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("00101000000501")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("001010000005000")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("01010000000150")));  // 14 digits, in value range of 15
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("00101000000015x")));
}

TEST(RoutingSelect, ImsiRangeAtTheLimits) {
  const RoutingTable t = tableWithMatch(
      "imsi_range: [{from: \"000000000000000\", to: \"000000000000000\"}, "
      "{from: \"999999999999999\", to: \"999999999999999\"}, {from: \"5\", to: \"7\"}]");
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("000000000000000")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("999999999999999")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("999999999999998")));
  EXPECT_TRUE(firstRuleTakes(t, imsiKey("6")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("8")));
  EXPECT_FALSE(firstRuleTakes(t, imsiKey("9999999999999999")));  // 16 digits
}

TEST(RoutingSelect, ServingNetworkKeepsTwoAndThreeDigitMncApart) {
  const RoutingTable t = tableWithMatch("serving_network: [\"001-01\", 310-260]");
  SessionKey k;
  k.serving_network = plmn("001", "01");
  EXPECT_TRUE(firstRuleTakes(t, k));
  k.serving_network = plmn("001", "001");
  EXPECT_FALSE(firstRuleTakes(t, k));
  k.serving_network = plmn("310", "260");
  EXPECT_TRUE(firstRuleTakes(t, k));
  k.serving_network = plmn("310", "26");
  EXPECT_FALSE(firstRuleTakes(t, k));
  k.serving_network = plmn("001", "02");
  EXPECT_FALSE(firstRuleTakes(t, k));
  k.serving_network.reset();
  EXPECT_FALSE(firstRuleTakes(t, k));
  // A PLMN decoded from the wire (001-01: 00 f1 10) matches the configured one.
  const uint8_t wire[3] = {0x00, 0xf1, 0x10};
  k.serving_network = *gtp::decodePlmn(wire);
  EXPECT_TRUE(firstRuleTakes(t, k));
}

TEST(RoutingSelect, RatTypeByNameOrNumber) {
  const RoutingTable t = tableWithMatch("rat_type: [EUTRAN, 1, nr, 255]");
  SessionKey k;
  for (uint8_t v : {6, 1, 10, 255}) {
    k.rat_type = v;
    EXPECT_TRUE(firstRuleTakes(t, k)) << int{v};
  }
  for (uint8_t v : {0, 2, 5, 7, 8, 9, 11, 64, 128, 254}) {
    k.rat_type = v;
    EXPECT_FALSE(firstRuleTakes(t, k)) << int{v};
  }
  k.rat_type.reset();
  EXPECT_FALSE(firstRuleTakes(t, k));
}

TEST(RoutingSelect, RatTypeNames) {
  const std::pair<const char*, uint8_t> names[] = {
      {"utran", 1}, {"geran", 2},   {"wlan", 3},  {"gan", 4},  {"hspa-evolution", 5},
      {"eutran", 6}, {"virtual", 7}, {"nbiot", 8}, {"ltem", 9}, {"nr", 10}};
  for (const auto& [name, value] : names) {
    EXPECT_EQ(ratTypeFromName(name), value);
    EXPECT_EQ(ratTypeName(value), name);
    const RoutingTable t = tableWithMatch(std::string("rat_type: ") + name);
    SessionKey k;
    k.rat_type = value;
    EXPECT_TRUE(firstRuleTakes(t, k)) << name;
  }
  EXPECT_EQ(ratTypeFromName("lte"), std::nullopt);
  EXPECT_EQ(ratTypeName(0), "");
}

TEST(RoutingSelect, SgwAddressIpv4Prefixes) {
  const RoutingTable t =
      tableWithMatch("sgw_address: [\"10.0.0.0/8\", \"192.168.1.128/25\", 172.16.0.1, \"0.0.0.0/32\"]");
  auto takes = [&](std::string_view a) {
    SessionKey k;
    k.sgw_ipv4 = v4(a);
    return firstRuleTakes(t, k);
  };
  EXPECT_TRUE(takes("10.0.0.0"));
  EXPECT_TRUE(takes("10.255.255.255"));
  EXPECT_FALSE(takes("9.255.255.255"));
  EXPECT_FALSE(takes("11.0.0.0"));
  EXPECT_TRUE(takes("192.168.1.128"));
  EXPECT_TRUE(takes("192.168.1.255"));
  EXPECT_FALSE(takes("192.168.1.127"));
  EXPECT_TRUE(takes("172.16.0.1"));  // a bare address is a /32
  EXPECT_FALSE(takes("172.16.0.2"));
  EXPECT_FALSE(takes("172.16.0.0"));
  SessionKey none;
  EXPECT_FALSE(firstRuleTakes(t, none));
  SessionKey only_v6;
  only_v6.sgw_ipv6 = v6("::a00:1");
  EXPECT_FALSE(firstRuleTakes(t, only_v6));
}

TEST(RoutingSelect, SgwAddressIpv6Prefixes) {
  const RoutingTable t =
      tableWithMatch("sgw_address: [\"2001:db8::/32\", \"fd00:1:2:2::/63\", \"::1\", \"10.0.0.0/8\"]");
  auto takes = [&](std::string_view a) {
    SessionKey k;
    k.sgw_ipv6 = v6(a);
    return firstRuleTakes(t, k);
  };
  EXPECT_TRUE(takes("2001:db8::"));
  EXPECT_TRUE(takes("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"));
  EXPECT_FALSE(takes("2001:db9::"));
  EXPECT_FALSE(takes("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"));
  EXPECT_TRUE(takes("fd00:1:2:2::1"));
  EXPECT_TRUE(takes("fd00:1:2:3:ffff::"));
  EXPECT_FALSE(takes("fd00:1:2:4::"));
  EXPECT_FALSE(takes("fd00:1:2:1::"));
  EXPECT_TRUE(takes("::1"));
  EXPECT_FALSE(takes("::2"));
  // Either address of the key may match.
  SessionKey both;
  both.sgw_ipv4 = v4("192.0.2.1");
  both.sgw_ipv6 = v6("2001:db8::5");
  EXPECT_TRUE(firstRuleTakes(t, both));
  both.sgw_ipv4 = v4("10.1.1.1");
  both.sgw_ipv6 = v6("2001:dead::5");
  EXPECT_TRUE(firstRuleTakes(t, both));
}

TEST(RoutingSelect, ZeroLengthPrefixesMatchAFamily) {
  const RoutingTable t = tableWithMatch("sgw_address: [\"0.0.0.0/0\"]");
  SessionKey k;
  k.sgw_ipv4 = v4("203.0.113.9");
  EXPECT_TRUE(firstRuleTakes(t, k));
  SessionKey k6;
  k6.sgw_ipv6 = v6("2001:db8::1");
  EXPECT_FALSE(firstRuleTakes(t, k6));
  const RoutingTable t6 = tableWithMatch("sgw_address: [\"::/0\"]");
  EXPECT_TRUE(firstRuleTakes(t6, k6));
  EXPECT_FALSE(firstRuleTakes(t6, k));
}

// -- criteria together, rule order -----------------------------------------------

TEST(RoutingSelect, EveryCriterionGivenMustMatch) {
  const RoutingTable t = tableWithMatch(
      "apn: [ims], imsi_prefix: [\"00101\"], imsi_range: [{from: \"001010000000000\", to: "
      "\"001010000009999\"}], serving_network: [\"001-01\"], rat_type: [eutran], sgw_address: "
      "[\"127.0.0.0/8\"]");
  SessionKey all;
  all.apn = "ims";
  all.imsi = "001010000000042";
  all.serving_network = plmn("001", "01");
  all.rat_type = 6;
  all.sgw_ipv4 = v4("127.0.0.11");
  EXPECT_TRUE(firstRuleTakes(t, all));

  SessionKey k = all;
  k.apn = "internet";
  EXPECT_FALSE(firstRuleTakes(t, k));
  k = all;
  k.imsi = "001010000010000";  // prefix still matches, range does not
  EXPECT_FALSE(firstRuleTakes(t, k));
  k = all;
  k.serving_network = plmn("001", "02");
  EXPECT_FALSE(firstRuleTakes(t, k));
  k = all;
  k.rat_type = 1;
  EXPECT_FALSE(firstRuleTakes(t, k));
  k = all;
  k.sgw_ipv4 = v4("10.0.0.1");
  EXPECT_FALSE(firstRuleTakes(t, k));
  k = all;
  k.imsi = "";
  EXPECT_FALSE(firstRuleTakes(t, k));
}

TEST(RoutingSelect, AnyEntryOfACriterionMayMatch) {
  const RoutingTable t = tableWithMatch("apn: [a, b], rat_type: [utran, geran]");
  SessionKey k;
  k.apn = "b";
  k.rat_type = 2;
  EXPECT_TRUE(firstRuleTakes(t, k));
  k.apn = "a";
  k.rat_type = 1;
  EXPECT_TRUE(firstRuleTakes(t, k));
  k.apn = "c";
  EXPECT_FALSE(firstRuleTakes(t, k));
}

TEST(RoutingSelect, FirstMatchingRuleWins) {
  const std::string text = std::string(kPools) +
                           "rules:\n"
                           "  - {name: one, match: {apn: [ims]}, pool: ims}\n"
                           "  - {name: two, match: {imsi_prefix: [\"001\"]}, pool: internet}\n"
                           "  - {name: three, match: {apn: [ims], imsi_prefix: [\"001\"]}, pool: internet}\n";
  const auto r = parse(text);
  ASSERT_TRUE(r) << errorText(r);
  SessionKey k;
  k.apn = "ims";
  k.imsi = "001010000000001";
  EXPECT_EQ(r->select(k), (Selection{0, 1}));  // three would match too, but comes later
  k.apn = "internet";
  EXPECT_EQ(r->select(k), (Selection{1, 0}));
  k.imsi = "002010000000001";
  EXPECT_EQ(r->select(k), std::nullopt);  // no catch-all: nothing matches
}

TEST(RoutingSelect, ARuleWithoutMatchTakesEverything) {
  const std::string text = std::string(kPools) + "rules:\n  - {name: all, pool: ims}\n";
  const auto r = parse(text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->select(SessionKey{}), (Selection{0, 1}));
  EXPECT_EQ(r->select(apnKey("anything")), (Selection{0, 1}));
}

TEST(RoutingSelect, AScalarStandsForAListOfOne) {
  const RoutingTable t = tableWithMatch("apn: ims, rat_type: 6");
  SessionKey k;
  k.apn = "ims";
  k.rat_type = 6;
  EXPECT_TRUE(firstRuleTakes(t, k));
}

// -- validation ---------------------------------------------------------------------

TEST(RoutingValidation, ReportsUnknownKeysAtEveryLevel) {
  const std::string text =
      "version: 1\n"                                          // 1
      "pool: {}\n"                                            // 2
      "pools:\n"                                              // 3
      "  internet:\n"                                         // 4
      "    gateway: []\n"                                     // 5
      "    gateways:\n"                                       // 6
      "      - {name: pgw1, address: 127.0.0.21, wieght: 3}\n"  // 7
      "rules:\n"                                              // 8
      "  - name: r1\n"                                        // 9
      "    match: {apns: [ims], imsi_range: [{from: \"1\", to: \"2\", step: 1}]}\n"  // 10
      "    pool: internet\n"                                  // 11
      "    priority: 1\n";                                    // 12
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("routing.yaml:2: pool: unknown key (did you mean \"pools\"?)",
                          "routing.yaml:5: pools.internet.gateway: unknown key (did you mean "
                          "\"gateways\"?)",
                          "routing.yaml:7: pools.internet.gateways[0].wieght: unknown key (did "
                          "you mean \"weight\"?)",
                          "routing.yaml:10: rules[0].match.apns: unknown key (did you mean "
                          "\"apn\"?)",
                          "routing.yaml:10: rules[0].match.imsi_range[0].step: unknown key; "
                          "expected one of: from, to",
                          "routing.yaml:12: rules[0].priority: unknown key; expected one of: "
                          "name, match, pool, overrides"));
}

TEST(RoutingValidation, ReportsMissingSections) {
  EXPECT_THAT(lines(parse("version: 1\n").error()),
              ElementsAre("routing.yaml: pools: required key is missing",
                          "routing.yaml: rules: required key is missing"));
  EXPECT_THAT(lines(parse("").error()),
              ElementsAre("routing.yaml: is empty: expected version, pools and rules"));
  EXPECT_THAT(lines(parse("[1]\n").error()),
              ElementsAre("routing.yaml:1: expected a mapping of version, pools and rules, found a list"));
  EXPECT_THAT(lines(parse("pools: {p: {gateways: [{name: g, address: 10.0.0.1}]}}\n"
                          "rules: [{name: r, pool: p}]\n")
                        .error()),
              ElementsAre("routing.yaml: version: required key is missing"));
}

TEST(RoutingValidation, ChecksVersion) {
  const std::string rest = "pools: {p: {gateways: [{name: g, address: 10.0.0.1}]}}\n"
                           "rules: [{name: r, pool: p}]\n";
  EXPECT_THAT(lines(parse("version: 2\n" + rest).error()),
              ElementsAre("routing.yaml:1: version: 2 is not supported: this gtpcp reads version 1"));
  EXPECT_THAT(lines(parse("version: \"1\"\n" + rest).error()),
              ElementsAre("routing.yaml:1: version: expected an integer, found the string \"1\" "
                          "(write numbers without quotes)"));
  EXPECT_THAT(lines(parse("version: one\n" + rest).error()),
              ElementsAre("routing.yaml:1: version: expected an integer, found \"one\""));
}

TEST(RoutingValidation, ReportsBadPoolsAndGateways) {
  const std::string text =
      "version: 1\n"                                              // 1
      "pools:\n"                                                  // 2
      "  bad name:\n"                                             // 3
      "    gateways: [{name: g0, address: 10.0.0.1}]\n"           // 4
      "  empty:\n"                                                // 5
      "    gateways: []\n"                                        // 6
      "  nothing:\n"                                              // 7
      "  nogw: {}\n"                                              // 8
      "  p:\n"                                                    // 9
      "    gateways:\n"                                           // 10
      "      - {name: g1, address: 10.0.0.300}\n"                 // 11
      "      - {name: g2, address: 10.0.0.2, port: 0, weight: 1001}\n"  // 12
      "      - {name: g3, address: 10.0.0.3, port: 65536, weight: 0}\n" // 13
      "      - {name: g1, address: 10.0.0.4}\n"                   // 14
      "      - {name: g5}\n"                                      // 15
      "      - {address: 10.0.0.6}\n"                             // 16
      "      - {name: \"g.7\", address: 0.0.0.0}\n"               // 17
      "      - {name: g8, address: \"ff02::1\"}\n"                // 18
      "      - just-a-name\n"                                     // 19
      "      - {name: g9, address: 10.0.0.9, weight: 2}\n"        // 20
      "      - {name: g10, address: 10.0.0.9, port: 2123}\n"      // 21
      "  q:\n"                                                    // 22
      "    gateways: {name: g11}\n"                               // 23
      "  p:\n"                                                    // 24
      "    gateways: [{name: g12, address: 10.0.0.12}]\n"         // 25
      "rules:\n"                                                  // 26
      "  - {name: r, pool: p}\n";                                 // 27
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre(
          "routing.yaml:3: pools.bad name: \"bad name\" is not a valid pool name: 1 to 32 "
          "characters A-Z a-z 0-9 _ -",
          "routing.yaml:6: pools.empty.gateways: is empty: a pool needs at least one gateway",
          "routing.yaml:7: pools.nothing: has no gateways",
          "routing.yaml:8: pools.nogw: has no gateways",
          "routing.yaml:11: pools.p.gateways[0].address: \"10.0.0.300\" is not an IPv4 or IPv6 "
          "address",
          "routing.yaml:12: pools.p.gateways[1].port: 0 is out of range 1..65535",
          "routing.yaml:12: pools.p.gateways[1].weight: 1001 is out of range 1..1000",
          "routing.yaml:13: pools.p.gateways[2].port: 65536 is out of range 1..65535",
          "routing.yaml:13: pools.p.gateways[2].weight: 0 is out of range 1..1000",
          "routing.yaml:14: pools.p.gateways[3].name: duplicate gateway name \"g1\" (first given "
          "at line 11)",
          "routing.yaml:15: pools.p.gateways[4].address: required key is missing",
          "routing.yaml:16: pools.p.gateways[5].name: required key is missing",
          "routing.yaml:17: pools.p.gateways[6].name: \"g.7\" is not a valid gateway name: 1 to "
          "32 characters A-Z a-z 0-9 _ -",
          "routing.yaml:17: pools.p.gateways[6].address: \"0.0.0.0\" is the unspecified address",
          "routing.yaml:18: pools.p.gateways[7].address: \"ff02::1\" is a multicast address",
          "routing.yaml:19: pools.p.gateways[8]: expected a gateway (name, address, port, "
          "weight), found a scalar",
          "routing.yaml:21: pools.p.gateways[10].address: 10.0.0.9 port 2123 is already gateway "
          "\"g9\" (line 20) of this pool",
          "routing.yaml:23: pools.q.gateways: expected a list of gateways, found a mapping",
          "routing.yaml:24: pools.p: duplicate pool name (first given at line 9)"));
}

TEST(RoutingValidation, ReportsBadRules) {
  const std::string text = std::string(kPools) +
                           "rules:\n"                                  // 9
                           "  - {name: a, pool: imss, match: {apn: q}}\n"  // 10
                           "  - {name: a, pool: ims, match: {apn: x}}\n"  // 11
                           "  - {pool: ims, match: {apn: y}}\n"        // 12
                           "  - {name: b, match: {apn: z}}\n"          // 13
                           "  - {name: \"c d\", pool: [ims], match: {apn: w}}\n"  // 14
                           "  - {name: e, pool: ims, match: {}}\n"     // 15
                           "  - {name: f, pool: ims, match: [apn]}\n"  // 16
                           "  - just-a-name\n";                        // 17
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre(
          "routing.yaml:10: rules[0].pool: unknown pool \"imss\" (pools: internet, ims)",
          "routing.yaml:11: rules[1].name: duplicate rule name \"a\" (first given at line 10)",
          "routing.yaml:12: rules[2].name: required key is missing",
          "routing.yaml:13: rules[3].pool: required key is missing",
          "routing.yaml:14: rules[4].name: \"c d\" is not a valid rule name: 1 to 32 characters "
          "A-Z a-z 0-9 _ -",
          "routing.yaml:14: rules[4].pool: expected a pool name, found a list",
          "routing.yaml:15: rules[5].match: is empty: leave `match` out for a rule that matches "
          "every session",
          "routing.yaml:16: rules[6].match: expected a mapping of criteria (apn, imsi_prefix, "
          "imsi_range, serving_network, rat_type, sgw_address), found a list",
          "routing.yaml:17: rules[7]: expected a rule (name, match, pool), found a scalar"));
}

TEST(RoutingValidation, RulesAfterACatchAllAreUnreachable) {
  const std::string text = std::string(kPools) +
                           "rules:\n"                                   // 9
                           "  - {name: ims, match: {apn: ims}, pool: ims}\n"  // 10
                           "  - {name: default, pool: internet}\n"     // 11
                           "  - {name: late, match: {apn: x}, pool: ims}\n"  // 12
                           "  - {name: later, pool: ims}\n";            // 13
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("routing.yaml:12: rules[2]: is unreachable: rule \"default\" (rules[1], "
                          "line 11) before it has no match and takes every session",
                          "routing.yaml:13: rules[3]: is unreachable: rule \"default\" (rules[1], "
                          "line 11) before it has no match and takes every session"));
}

TEST(RoutingValidation, ACatchAllWithOtherErrorsStillHidesTheRulesAfterIt) {
  const std::string text = std::string(kPools) +
                           "rules:\n"                                   // 9
                           "  - {name: default, pool: nowhere}\n"      // 10
                           "  - {name: late, match: {apn: x}, pool: ims}\n";  // 11
  EXPECT_THAT(lines(parse(text).error()),
              ElementsAre("routing.yaml:10: rules[0].pool: unknown pool \"nowhere\" (pools: "
                          "internet, ims)",
                          "routing.yaml:11: rules[1]: is unreachable: rule \"default\" (rules[0], "
                          "line 10) before it has no match and takes every session"));
}

TEST(RoutingValidation, AnInvalidPoolIsNotAlsoUnknown) {
  const std::string text =
      "version: 1\n"
      "pools:\n"
      "  p: {gateways: [{name: g, address: nowhere}]}\n"
      "rules: [{name: r, pool: p}]\n";
  EXPECT_THAT(lines(parse(text).error()),
              ElementsAre("routing.yaml:3: pools.p.gateways[0].address: \"nowhere\" is not an "
                          "IPv4 or IPv6 address"));
}

TEST(RoutingValidation, ReportsBadCriteria) {
  const std::string text = std::string(kPools) +
      "rules:\n"                                                           // 9
      "  - name: r\n"                                                      // 10
      "    pool: ims\n"                                                    // 11
      "    match:\n"                                                       // 12
      "      apn:\n"                                                       // 13
      "        - \"*\"\n"                                                  // 14
      "        - \"*.\"\n"                                                 // 15
      "        - \"ims.*\"\n"                                              // 16
      "        - \"a..b\"\n"                                               // 17
      "        - \"a b\"\n"                                                // 18
      "        - \".ims\"\n"                                               // 19
      "        - \"ims.\"\n"                                               // 20
      "        - [ims]\n"                                                  // 21
      "      imsi_prefix: [\"\", \"12a\", \"1234567890123456\"]\n"         // 22
      "      imsi_range:\n"                                                // 23
      "        - {from: \"002\", to: \"001\"}\n"                           // 24
      "        - {from: \"001\", to: \"0010\"}\n"                          // 25
      "        - {from: \"00a\", to: \"001\"}\n"                           // 26
      "        - {from: \"001\"}\n"                                        // 27
      "        - \"001-002\"\n"                                            // 28
      "      serving_network: [\"00101\", \"01-01\", \"001-1\", \"001-0011\", \"abc-de\"]\n"  // 29
      "      rat_type: [lte, 256, -1, \"\"]\n"                             // 30
      "      sgw_address:\n"                                               // 31
      "        - 10.0.0.1/8\n"                                             // 32
      "        - 10.0.0.0/33\n"                                            // 33
      "        - 10.0.0.0/\n"                                              // 34
      "        - \"2001:db8::1/32\"\n"                                     // 35
      "        - \"2001:db8::/129\"\n"                                     // 36
      "        - example.com\n"                                            // 37
      "        - 10.0.0.0/8/8\n";                                          // 38
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre(
          "routing.yaml:14: rules[0].match.apn[0]: \"*\" matches every APN: leave apn out instead",
          "routing.yaml:15: rules[0].match.apn[1]: \"*.\" matches every APN: leave apn out instead",
          "routing.yaml:16: rules[0].match.apn[2]: \"ims.*\" has a '*' that is not the whole "
          "first label (\"*.example.com\")",
          "routing.yaml:17: rules[0].match.apn[3]: \"a..b\" has an empty label",
          "routing.yaml:18: rules[0].match.apn[4]: \"a b\" holds \" \": an APN label has only A-Z "
          "a-z 0-9 - _",
          "routing.yaml:19: rules[0].match.apn[5]: \".ims\" has an empty label",
          "routing.yaml:20: rules[0].match.apn[6]: \"ims.\" has an empty label",
          "routing.yaml:21: rules[0].match.apn[7]: expected a string, found a list",
          "routing.yaml:22: rules[0].match.imsi_prefix[0]: \"\" is not an IMSI prefix: 1 to 15 "
          "digits",
          "routing.yaml:22: rules[0].match.imsi_prefix[1]: \"12a\" is not an IMSI prefix: 1 to 15 "
          "digits",
          "routing.yaml:22: rules[0].match.imsi_prefix[2]: \"1234567890123456\" is not an IMSI "
          "prefix: 1 to 15 digits",
          "routing.yaml:24: rules[0].match.imsi_range[0]: from \"002\" is above to \"001\"",
          "routing.yaml:25: rules[0].match.imsi_range[1]: from \"001\" has 3 digits and to "
          "\"0010\" has 4: both ends need the same number of digits",
          "routing.yaml:26: rules[0].match.imsi_range[2].from: \"00a\" is not an IMSI: 1 to 15 "
          "digits",
          "routing.yaml:27: rules[0].match.imsi_range[3].to: required key is missing",
          "routing.yaml:28: rules[0].match.imsi_range[4]: expected a range {from: IMSI, to: "
          "IMSI}, found a scalar",
          "routing.yaml:29: rules[0].match.serving_network[0]: \"00101\" is not MCC-MNC: 3 "
          "digits, '-', 2 or 3 digits (\"001-01\")",
          "routing.yaml:29: rules[0].match.serving_network[1]: \"01-01\" is not MCC-MNC: 3 "
          "digits, '-', 2 or 3 digits (\"001-01\")",
          "routing.yaml:29: rules[0].match.serving_network[2]: \"001-1\" is not MCC-MNC: 3 "
          "digits, '-', 2 or 3 digits (\"001-01\")",
          "routing.yaml:29: rules[0].match.serving_network[3]: \"001-0011\" is not MCC-MNC: 3 "
          "digits, '-', 2 or 3 digits (\"001-01\")",
          "routing.yaml:29: rules[0].match.serving_network[4]: \"abc-de\" is not MCC-MNC: 3 "
          "digits, '-', 2 or 3 digits (\"001-01\")",
          "routing.yaml:30: rules[0].match.rat_type[0]: \"lte\" is not a RAT type: a number "
          "0..255 (TS 29.274 8.17) or one of utran geran wlan gan hspa-evolution eutran virtual "
          "nbiot ltem nr",
          "routing.yaml:30: rules[0].match.rat_type[1]: \"256\" is not a RAT type: a number "
          "0..255 (TS 29.274 8.17) or one of utran geran wlan gan hspa-evolution eutran virtual "
          "nbiot ltem nr",
          "routing.yaml:30: rules[0].match.rat_type[2]: \"-1\" is not a RAT type: a number "
          "0..255 (TS 29.274 8.17) or one of utran geran wlan gan hspa-evolution eutran virtual "
          "nbiot ltem nr",
          "routing.yaml:30: rules[0].match.rat_type[3]: \"\" is not a RAT type: a number 0..255 "
          "(TS 29.274 8.17) or one of utran geran wlan gan hspa-evolution eutran virtual nbiot "
          "ltem nr",
          "routing.yaml:32: rules[0].match.sgw_address[0]: \"10.0.0.1/8\" has host bits set (did "
          "you mean \"10.0.0.0/8\"?)",
          "routing.yaml:33: rules[0].match.sgw_address[1]: \"10.0.0.0/33\" has a bad prefix "
          "length: 0..32",
          "routing.yaml:34: rules[0].match.sgw_address[2]: \"10.0.0.0/\" has a bad prefix "
          "length: 0..32",
          "routing.yaml:35: rules[0].match.sgw_address[3]: \"2001:db8::1/32\" has host bits set "
          "(did you mean \"2001:db8::/32\"?)",
          "routing.yaml:36: rules[0].match.sgw_address[4]: \"2001:db8::/129\" has a bad prefix "
          "length: 0..128",
          "routing.yaml:37: rules[0].match.sgw_address[5]: \"example.com\" is not an IPv4 or "
          "IPv6 address or prefix (\"10.0.0.0/8\", \"2001:db8::/32\")",
          "routing.yaml:38: rules[0].match.sgw_address[6]: \"10.0.0.0/8/8\" has a bad prefix "
          "length: 0..32"));
}

TEST(RoutingValidation, ReportsEmptyCriteria) {
  const std::string text = std::string(kPools) +
                           "rules:\n"                                   // 9
                           "  - name: r\n"                              // 10
                           "    pool: ims\n"                            // 11
                           "    match:\n"                               // 12
                           "      apn: []\n"                            // 13
                           "      imsi_prefix:\n"                       // 14
                           "      rat_type: {a: 1}\n";                  // 15
  EXPECT_THAT(lines(parse(text).error()),
              ElementsAre("routing.yaml:13: rules[0].match.apn: is empty: give at least one entry, "
                          "or leave the criterion out to match every session",
                          "routing.yaml:14: rules[0].match.imsi_prefix: is empty: give at least one "
                          "entry, or leave the criterion out to match every session",
                          "routing.yaml:15: rules[0].match.rat_type: expected a list, found a mapping"));
}

TEST(RoutingValidation, ReportsDuplicateKeysAndSyntaxErrors) {
  const std::string dup = std::string(kPools) +
                          "rules:\n"
                          "  - name: r\n"     // 10
                          "    pool: ims\n"   // 11
                          "    pool: internet\n";  // 12
  EXPECT_THAT(lines(parse(dup).error()),
              ElementsAre("routing.yaml:12: rules[0].pool: duplicate key (first given at line 11)"));
  const auto syntax = parse("version: 1\npools: {a: [\n");
  ASSERT_FALSE(syntax);
  EXPECT_THAT(syntax.error().errors[0].message, HasSubstr("YAML syntax error"));
}

// -- the content hash ---------------------------------------------------------------

TEST(RoutingHash, IgnoresLayoutCommentsDefaultsAndCase) {
  const auto a = parse(
      "version: 1\n"
      "pools:\n"
      "  p:\n"
      "    gateways:\n"
      "      - {name: g1, address: 10.0.0.1}\n"
      "rules:\n"
      "  - {name: r, match: {apn: [IMS, b], rat_type: [EUTRAN, 1]}, pool: p}\n");
  ASSERT_TRUE(a) << errorText(a);
  const auto c = parse(
      "# a comment\n"
      "version: 1\n"
      "pools:\n"
      "  p:\n"
      "    gateways:\n"
      "      - name: g1\n"
      "        address: 10.0.0.1\n"
      "        port: 2123\n"
      "        weight: 1\n"
      "rules:\n"
      "  - name: r\n"
      "    pool: p\n"
      "    match:\n"
      "      rat_type: [utran, 6, 6]\n"
      "      apn: [b, ims]\n");
  ASSERT_TRUE(c) << errorText(c);
  EXPECT_EQ(a->contentHash(), c->contentHash()) << a->normalised() << "\n" << c->normalised();
  EXPECT_EQ(a->normalised(), c->normalised());
  EXPECT_NE(a->contentHash(), 0u);
}

TEST(RoutingHash, ChangesWithAnythingThatRoutesDifferently) {
  const std::string base = std::string(kPools) +
                           "rules:\n"
                           "  - {name: r, match: {apn: ims}, pool: ims}\n"
                           "  - {name: d, pool: internet}\n";
  auto changed = [&](const std::string& from, const std::string& to) { return hashChanges(base, from, to); };
  EXPECT_TRUE(changed("weight: 3", "weight: 2"));
  EXPECT_TRUE(changed("127.0.0.22", "127.0.0.24"));
  EXPECT_TRUE(changed("port: 2124", "port: 2125"));
  EXPECT_TRUE(changed("apn: ims", "apn: imsx"));
  EXPECT_TRUE(changed("{name: r,", "{name: r2,"));
  EXPECT_TRUE(changed("pool: ims}", "pool: internet}"));
  EXPECT_FALSE(changed("apn: ims", "apn: [IMS]"));
}

// -- health_check and failover ---------------------------------------------------------

// A valid document whose line 4 is the first of `tail`.
std::string documentWith(std::string_view tail) {
  return std::string("version: 1\n"                                            // 1
                     "pools: {p: {gateways: [{name: g1, address: 10.0.0.1}]}}\n"  // 2
                     "rules: [{name: r, pool: p}]\n") +                       // 3
         std::string(tail);
}

// The errors of documentWith(tail), "(no error)" when it loads.
std::vector<std::string> errorsWith(std::string_view tail) {
  const auto r = parse(documentWith(tail));
  if (r) return {"(no error)"};
  return lines(r.error());
}

// The cause values 0..255 for which `f` sends the request to another gateway.
std::vector<int> causesTryingAnother(const Failover& f) {
  std::vector<int> out;
  for (int c = 0; c < 256; ++c)
    if (f.triesAnother(static_cast<uint8_t>(c))) out.push_back(c);
  return out;
}

// Every health_check and failover setting of `t`, as the accessors give them.
std::string settingsOf(const RoutingTable& t) {
  const HealthCheck& h = t.healthCheck();
  const Failover& f = t.failover();
  std::string causes;
  for (int c : causesTryingAnother(f)) causes += (causes.empty() ? "" : " ") + std::to_string(c);
  return "interval_ms " + std::to_string(h.interval_ms) + ", misses " + std::to_string(h.misses) +
         ", restart_notify_rate " + std::to_string(h.restart_notify_rate) + "; response_timeout_ms " +
         std::to_string(f.response_timeout_ms) + ", attempts " + std::to_string(f.attempts) +
         ", try_another [" + causes + "], exhausted cause " + std::to_string(f.exhaustedCause());
}

// settingsOf() the document with `tail`, or its errors.
std::string settingsWith(std::string_view tail) {
  const auto r = parse(documentWith(tail));
  return r ? settingsOf(*r) : errorText(r);
}

constexpr const char* kDefaultSettings =
    "interval_ms 5000, misses 3, restart_notify_rate 1000; response_timeout_ms 2000, attempts 3, "
    "try_another [], exhausted cause 100";

TEST(RoutingHealthCheck, DefaultsWhenTheSectionsAreAbsentOrEmpty) {
  const auto r = parse(documentWith(""));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(settingsOf(*r), kDefaultSettings);
  EXPECT_EQ(r->failover().when_exhausted, Failover::WhenExhausted::kRemotePeerNotResponding);
  // Every key commented out, or the sections too.
  EXPECT_EQ(settingsWith("health_check:\nfailover:\n"), kDefaultSettings);
  EXPECT_EQ(settingsWith("health_check: {}\nfailover: {}\n"), kDefaultSettings);
  EXPECT_EQ(settingsWith("# health_check:\n#   misses: 9\n"), kDefaultSettings);
}

TEST(RoutingHealthCheck, ReadsEveryKey) {
  const auto r = parse(documentWith(
      "health_check:\n"
      "  interval_ms: 1500\n"
      "  misses: 7\n"
      "  restart_notify_rate: 25\n"
      "failover:\n"
      "  response_timeout_ms: 750\n"
      "  attempts: 2\n"
      "  try_another: [73, 100]\n"
      "  when_exhausted: no_resources_available\n"));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(settingsOf(*r),
            "interval_ms 1500, misses 7, restart_notify_rate 25; response_timeout_ms 750, attempts 2, "
            "try_another [73 100], exhausted cause 73");
  const Failover& f = r->failover();
  EXPECT_TRUE(f.triesAnother(73));
  EXPECT_TRUE(f.triesAnother(100));
  EXPECT_FALSE(f.triesAnother(72));
  EXPECT_FALSE(f.triesAnother(74));
  EXPECT_FALSE(f.triesAnother(101));
  EXPECT_EQ(f.when_exhausted, Failover::WhenExhausted::kNoResourcesAvailable);
  EXPECT_EQ(f.exhaustedCause(), 73);
}

TEST(RoutingHealthCheck, AcceptsTheBoundsOfEveryKey) {
  EXPECT_EQ(settingsWith("health_check: {interval_ms: 100, misses: 1, restart_notify_rate: 1}\n"
                         "failover: {response_timeout_ms: 50, attempts: 1, try_another: [64],\n"
                         "           when_exhausted: remote_peer_not_responding}\n"),
            "interval_ms 100, misses 1, restart_notify_rate 1; response_timeout_ms 50, attempts 1, "
            "try_another [64], exhausted cause 100");
  // try_another: bits at the edges of each 64-bit word of the set.
  EXPECT_EQ(settingsWith("health_check: {interval_ms: 3600000, misses: 100, restart_notify_rate: 1000000}\n"
                         "failover: {response_timeout_ms: 60000, attempts: 4,\n"
                         "           try_another: [255, 127, 128, 191, 192]}\n"),
            "interval_ms 3600000, misses 100, restart_notify_rate 1000000; response_timeout_ms 60000, "
            "attempts 4, try_another [127 128 191 192 255], exhausted cause 100");
}

TEST(RoutingHealthCheck, ZeroTurnsTheChecksAndTheTimeoutOff) {
  EXPECT_EQ(settingsWith("health_check: {interval_ms: 0}\nfailover: {response_timeout_ms: 0}\n"),
            "interval_ms 0, misses 3, restart_notify_rate 1000; response_timeout_ms 0, attempts 3, "
            "try_another [], exhausted cause 100");
}

TEST(RoutingHealthCheck, RefusesAnIntervalBetweenZeroAndAHundred) {
  EXPECT_THAT(errorsWith("health_check:\n"          // 4
                         "  misses: 2\n"             // 5
                         "  interval_ms: 50\n"),     // 6
              ElementsAre("routing.yaml:6: health_check.interval_ms: 50 is below 100 (0 turns "
                          "health checks off)"));
  EXPECT_THAT(errorsWith("health_check: {interval_ms: 99}\n"),
              ElementsAre("routing.yaml:4: health_check.interval_ms: 99 is below 100 (0 turns "
                          "health checks off)"));
  EXPECT_THAT(errorsWith("health_check: {interval_ms: 1}\n"),
              ElementsAre("routing.yaml:4: health_check.interval_ms: 1 is below 100 (0 turns "
                          "health checks off)"));
  EXPECT_THAT(errorsWith("health_check: {interval_ms: 3600001}\n"),
              ElementsAre("routing.yaml:4: health_check.interval_ms: 3600001 is out of range "
                          "0..3600000"));
  EXPECT_THAT(errorsWith("health_check: {interval_ms: -1}\n"),
              ElementsAre("routing.yaml:4: health_check.interval_ms: -1 is out of range 0..3600000"));
  EXPECT_THAT(errorsWith("health_check: {interval_ms: \"5000\"}\n"),
              ElementsAre("routing.yaml:4: health_check.interval_ms: expected an integer, found the "
                          "string \"5000\" (write numbers without quotes)"));
}

TEST(RoutingHealthCheck, RefusesMissesAndRatesOutOfRange) {
  EXPECT_THAT(errorsWith("health_check:\n"                 // 4
                         "  misses: 0\n"                    // 5
                         "  restart_notify_rate: 0\n"),     // 6
              ElementsAre("routing.yaml:5: health_check.misses: 0 is out of range 1..100",
                          "routing.yaml:6: health_check.restart_notify_rate: 0 is out of range "
                          "1..1000000"));
  EXPECT_THAT(errorsWith("health_check: {misses: 101, restart_notify_rate: 1000001}\n"),
              ElementsAre("routing.yaml:4: health_check.misses: 101 is out of range 1..100",
                          "routing.yaml:4: health_check.restart_notify_rate: 1000001 is out of range "
                          "1..1000000"));
}

TEST(RoutingFailover, RefusesAttemptsAndTimeoutsOutOfRange) {
  EXPECT_THAT(errorsWith("failover:\n"                     // 4
                         "  attempts: 0\n"                  // 5
                         "  response_timeout_ms: 49\n"),    // 6
              ElementsAre("routing.yaml:5: failover.attempts: 0 is out of range 1..4",
                          "routing.yaml:6: failover.response_timeout_ms: 49 is below 50 (0 turns "
                          "failover on silence off)"));
  EXPECT_THAT(errorsWith("failover: {attempts: 5, response_timeout_ms: 60001}\n"),
              ElementsAre("routing.yaml:4: failover.attempts: 5 is out of range 1..4",
                          "routing.yaml:4: failover.response_timeout_ms: 60001 is out of range "
                          "0..60000"));
}

TEST(RoutingFailover, RefusesTryAnotherEntriesThatAreNotRejections) {
  EXPECT_THAT(errorsWith("failover:\n"                     // 4
                         "  try_another:\n"                 // 5
                         "    - 73\n"                       // 6
                         "    - 63\n"                       // 7
                         "    - 256\n"                      // 8
                         "    - \"100\"\n"                  // 9
                         "    - [100]\n"),                  // 10
              ElementsAre("routing.yaml:7: failover.try_another[1]: 63 is out of range 64..255",
                          "routing.yaml:8: failover.try_another[2]: 256 is out of range 64..255",
                          "routing.yaml:9: failover.try_another[3]: expected an integer, found the "
                          "string \"100\" (write numbers without quotes)",
                          "routing.yaml:10: failover.try_another[4]: expected an integer, found a list"));
  EXPECT_THAT(errorsWith("failover: {try_another: [0, 16, 255]}\n"),
              ElementsAre("routing.yaml:4: failover.try_another[0]: 0 is out of range 64..255",
                          "routing.yaml:4: failover.try_another[1]: 16 is out of range 64..255"));
  EXPECT_THAT(errorsWith("failover: {try_another: 73}\n"),
              ElementsAre("routing.yaml:4: failover.try_another: expected a list of cause values, "
                          "found a scalar"));
  EXPECT_THAT(errorsWith("failover: {try_another: {73: yes}}\n"),
              ElementsAre("routing.yaml:4: failover.try_another: expected a list of cause values, "
                          "found a mapping"));
}

TEST(RoutingFailover, AnEmptyTryAnotherTriesNoOtherGateway) {
  EXPECT_EQ(settingsWith("failover: {try_another: []}\n"), kDefaultSettings);
  EXPECT_EQ(settingsWith("failover:\n  try_another:\n"), kDefaultSettings);
}

TEST(RoutingFailover, RefusesAnotherWordWhenExhausted) {
  EXPECT_THAT(errorsWith("failover:\n"                             // 4
                         "  when_exhausted: request_rejected\n"),   // 5
              ElementsAre("routing.yaml:5: failover.when_exhausted: \"request_rejected\" is not "
                          "remote_peer_not_responding (cause 100) or no_resources_available (cause 73)"));
  EXPECT_THAT(errorsWith("failover: {when_exhausted: 73}\n"),
              ElementsAre("routing.yaml:4: failover.when_exhausted: \"73\" is not "
                          "remote_peer_not_responding (cause 100) or no_resources_available (cause 73)"));
  EXPECT_THAT(errorsWith("failover: {when_exhausted: [no_resources_available]}\n"),
              ElementsAre("routing.yaml:4: failover.when_exhausted: expected a word, found a list"));
}

TEST(RoutingHealthCheck, RefusesUnknownKeysInEitherSection) {
  EXPECT_THAT(errorsWith("health_check:\n"                 // 4
                         "  mises: 2\n"                     // 5
                         "  interval: 1000\n"               // 6
                         "failover:\n"                      // 7
                         "  attempt: 2\n"                   // 8
                         "  priority: 1\n"),                // 9
              ElementsAre("routing.yaml:5: health_check.mises: unknown key (did you mean \"misses\"?)",
                          "routing.yaml:6: health_check.interval: unknown key; expected one of: "
                          "interval_ms, misses, restart_notify_rate",
                          "routing.yaml:8: failover.attempt: unknown key (did you mean \"attempts\"?)",
                          "routing.yaml:9: failover.priority: unknown key; expected one of: "
                          "response_timeout_ms, attempts, try_another, when_exhausted"));
  EXPECT_THAT(errorsWith("health_checks: {misses: 2}\n"),
              ElementsAre("routing.yaml:4: health_checks: unknown key (did you mean "
                          "\"health_check\"?)"));
}

TEST(RoutingHealthCheck, RefusesSectionsThatAreNotMappings) {
  EXPECT_THAT(errorsWith("health_check: [interval_ms, 1000]\n"   // 4
                         "failover:\n"                           // 5
                         "  - attempts: 2\n"),                   // 6
              ElementsAre("routing.yaml:4: health_check: expected a mapping of interval_ms, misses, "
                          "restart_notify_rate, found a list",
                          "routing.yaml:5: failover: expected a mapping of response_timeout_ms, "
                          "attempts, try_another, when_exhausted, found a list"));
  EXPECT_THAT(errorsWith("health_check: off\nfailover: 3\n"),
              ElementsAre("routing.yaml:4: health_check: expected a mapping of interval_ms, misses, "
                          "restart_notify_rate, found a scalar",
                          "routing.yaml:5: failover: expected a mapping of response_timeout_ms, "
                          "attempts, try_another, when_exhausted, found a scalar"));
}

TEST(RoutingHealthCheck, ReportsEveryProblemOfBothSectionsWithTheRest) {
  const auto r = parse(
      "version: 1\n"                                                        // 1
      "pools: {p: {gateways: [{name: g1, address: 10.0.0.300}]}}\n"         // 2
      "rules: [{name: r, pool: p}]\n"                                       // 3
      "health_check: {interval_ms: 10, misses: 0}\n"                        // 4
      "failover: {attempts: 9, try_another: [1], when_exhausted: later}\n");  // 5
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("routing.yaml:2: pools.p.gateways[0].address: \"10.0.0.300\" is not an "
                          "IPv4 or IPv6 address",
                          "routing.yaml:4: health_check.interval_ms: 10 is below 100 (0 turns health "
                          "checks off)",
                          "routing.yaml:4: health_check.misses: 0 is out of range 1..100",
                          "routing.yaml:5: failover.attempts: 9 is out of range 1..4",
                          "routing.yaml:5: failover.try_another[0]: 1 is out of range 64..255",
                          "routing.yaml:5: failover.when_exhausted: \"later\" is not "
                          "remote_peer_not_responding (cause 100) or no_resources_available (cause "
                          "73)"));
}

TEST(RoutingHash, ChangesWithEveryHealthCheckAndFailoverSetting) {
  const std::string base =
      "health_check: {interval_ms: 5000, misses: 3, restart_notify_rate: 1000}\n"
      "failover: {response_timeout_ms: 2000, attempts: 3, try_another: [73, 100], "
      "when_exhausted: remote_peer_not_responding}\n";
  auto changed = [&](const std::string& from, const std::string& to) {
    return hashChanges(documentWith(base), from, to);
  };
  EXPECT_TRUE(changed("interval_ms: 5000", "interval_ms: 5001"));
  EXPECT_TRUE(changed("interval_ms: 5000", "interval_ms: 0"));
  EXPECT_TRUE(changed("misses: 3", "misses: 4"));
  EXPECT_TRUE(changed("restart_notify_rate: 1000", "restart_notify_rate: 999"));
  EXPECT_TRUE(changed("response_timeout_ms: 2000", "response_timeout_ms: 0"));
  EXPECT_TRUE(changed("attempts: 3", "attempts: 2"));
  EXPECT_TRUE(changed("[73, 100]", "[73]"));
  EXPECT_TRUE(changed("[73, 100]", "[73, 100, 255]"));
  EXPECT_TRUE(changed("[73, 100]", "[72, 100]"));
  EXPECT_TRUE(changed("[73, 100]", "[]"));
  EXPECT_TRUE(changed("remote_peer_not_responding", "no_resources_available"));
  // Neither the order of try_another nor a cause given twice changes anything.
  EXPECT_FALSE(changed("[73, 100]", "[100, 73, 100]"));
}

TEST(RoutingHash, IgnoresHowHealthCheckAndFailoverAreWritten) {
  const auto flow = parse(documentWith(
      "health_check: {interval_ms: 1000, misses: 2}\n"
      "failover: {attempts: 2, try_another: [100, 73], when_exhausted: no_resources_available}\n"));
  ASSERT_TRUE(flow) << errorText(flow);
  const auto block = parse(documentWith(
      "# Faster checks than the default.\n"
      "failover:\n"
      "  when_exhausted: no_resources_available   # cause 73\n"
      "  try_another:\n"
      "    - 73\n"
      "    - 100\n"
      "  response_timeout_ms: 2000\n"
      "  attempts: 2\n"
      "\n"
      "health_check:\n"
      "  restart_notify_rate: 1000\n"
      "  misses: 2\n"
      "  interval_ms: 1000\n"));
  ASSERT_TRUE(block) << errorText(block);
  EXPECT_EQ(flow->normalised(), block->normalised());
  EXPECT_EQ(flow->contentHash(), block->contentHash());

  // The defaults written out are the sections left out.
  const auto absent = parse(documentWith(""));
  const auto written = parse(documentWith(
      "health_check: {interval_ms: 5000, misses: 3, restart_notify_rate: 1000}\n"
      "failover: {response_timeout_ms: 2000, attempts: 3, try_another: [],\n"
      "           when_exhausted: remote_peer_not_responding}\n"));
  ASSERT_TRUE(absent) << errorText(absent);
  ASSERT_TRUE(written) << errorText(written);
  EXPECT_EQ(absent->contentHash(), written->contentHash())
      << absent->normalised() << "\n" << written->normalised();
  EXPECT_NE(absent->contentHash(), flow->contentHash());
}

TEST(RoutingDocument, ExampleHasTheHealthCheckAndFailoverItDocuments) {
  const auto r = loadRoutingDocument(testing::sourcePath("config/routing.yaml"));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(settingsOf(*r),
            "interval_ms 5000, misses 3, restart_notify_rate 1000; response_timeout_ms 2000, attempts 3, "
            "try_another [73 100], exhausted cause 100");
}


// -- GTPv1 pools -----------------------------------------------------------------------

// A GTPv2 pool, then a GTPv1 one (line 6); `rules` from line 9 on.
std::string withGnPool(std::string_view rules) {
  return std::string("version: 1\n"                                                         // 1
                     "pools:\n"                                                             // 2
                     "  internet:\n"                                                        // 3
                     "    gateways: [{name: pgw1, address: 127.0.0.21}]\n"                  // 4
                     "  gn:\n"                                                              // 5
                     "    gtp_version: 1\n"                                                 // 6
                     "    gateways: [{name: ggsn1, address: 127.0.0.31}, {name: ggsn2, address: 127.0.0.32}]\n"  // 7
                     "rules:\n") +                                                          // 8
         std::string(rules);
}

SessionKey v1Key(std::string_view apn) {
  SessionKey k;
  k.apn = apn;
  k.gtp_version = 1;
  return k;
}

TEST(RoutingGtpVersion, PoolsAndTheirGatewaysCarryTheirVersion) {
  const auto r = parse(withGnPool("  - {name: d, pool: internet}\n"
                                  "  - {name: g, pool: gn}\n"));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->pool(0).gtp_version, 2);
  EXPECT_EQ(r->pool(1).gtp_version, 1);
  EXPECT_EQ(r->gateway(0).gtp_version, 2);
  EXPECT_EQ(r->gateway(1).gtp_version, 1);
  EXPECT_EQ(r->gateway(2).gtp_version, 1);
  EXPECT_EQ(SessionKey{}.gtp_version, 2) << "a key is GTPv2 unless told otherwise";
}

TEST(RoutingGtpVersion, ASessionIsOnlyRoutedToAPoolOfItsVersion) {
  // The first rule that matches both is GTPv2's: a GTPv1 session skips it.
  const auto r = parse(withGnPool("  - {name: ims, match: {apn: ims}, pool: internet}\n"  // rule 0
                                  "  - {name: gn-ims, match: {apn: ims}, pool: gn}\n"     // rule 1
                                  "  - {name: d, pool: internet}\n"));                    // rule 2
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->select(apnKey("ims")), (Selection{0, 0}));
  EXPECT_EQ(r->select(v1Key("ims")), (Selection{1, 1}));
  EXPECT_EQ(r->select(apnKey("internet")), (Selection{2, 0}));
  EXPECT_EQ(r->select(v1Key("internet")), std::nullopt) << "no GTPv1 rule takes it";
  // A GTPv2 session never lands in a GTPv1 pool, even when only a GTPv1 rule matches.
  const auto only_v1 = parse(withGnPool("  - {name: g, pool: gn}\n"));
  ASSERT_TRUE(only_v1) << errorText(only_v1);
  EXPECT_EQ(only_v1->select(apnKey("internet")), std::nullopt);
  EXPECT_EQ(only_v1->select(v1Key("internet")), (Selection{0, 1}));
  SessionKey v3 = apnKey("internet");
  v3.gtp_version = 3;
  EXPECT_EQ(only_v1->select(v3), std::nullopt);
}

TEST(RoutingGtpVersion, EveryCriterionAppliesToGtpv1Sessions) {
  const auto r = parse(withGnPool(
      "  - name: r\n"                                                                    // 9
      "    match: {apn: internet, imsi_prefix: \"00101\", serving_network: \"001-01\",\n"
      "            rat_type: [utran, geran], sgw_address: 10.1.0.0/16}\n"
      "    pool: gn\n"
      "  - {name: rest, pool: gn}\n"));
  ASSERT_TRUE(r) << errorText(r);
  SessionKey k = v1Key("internet");
  k.imsi = "001010000000001";
  k.serving_network = plmn("001", "01");
  k.rat_type = 2;  // GERAN (TS 29.060 §7.7.50)
  k.sgw_ipv4 = v4("10.1.2.3");
  EXPECT_EQ(r->select(k), (Selection{0, 1}));
  for (auto change : std::vector<std::function<void(SessionKey&)>>{
           [](SessionKey& c) { c.apn = "ims"; },
           [](SessionKey& c) { c.imsi = "001020000000001"; },
           [](SessionKey& c) { c.serving_network = plmn("001", "02"); },
           [](SessionKey& c) { c.rat_type = 6; },
           [](SessionKey& c) { c.sgw_ipv4 = v4("10.2.0.1"); }}) {
    SessionKey other = k;
    change(other);
    EXPECT_EQ(r->select(other), (Selection{1, 1}));
  }
}

TEST(RoutingGtpVersion, ACatchAllHidesTheLaterRulesOfItsVersionOnly) {
  const auto r = parse(withGnPool("  - {name: d, pool: internet}\n"                   // 9
                                  "  - {name: gn-ims, match: {apn: ims}, pool: gn}\n"  // 10
                                  "  - {name: gn, pool: gn}\n"));                      // 11
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->select(v1Key("ims")), (Selection{1, 1}));
  EXPECT_EQ(r->select(v1Key("internet")), (Selection{2, 1}));
  EXPECT_THAT(lines(parse(withGnPool("  - {name: gn, pool: gn}\n"                    // 9
                                     "  - {name: ims, match: {apn: ims}, pool: internet}\n"  // 10
                                     "  - {name: gn-ims, match: {apn: ims}, pool: gn}\n"))   // 11
                        .error()),
              ElementsAre("routing.yaml:11: rules[2]: is unreachable: rule \"gn\" (rules[0], line 9) "
                          "before it has no match and takes every session"));
}

TEST(RoutingGtpVersion, RefusesAVersionOtherThanOneOrTwo) {
  const std::string gateways = "    gateways: [{name: g, address: 10.0.0.1}]\n";
  auto errors = [&](std::string_view version) {
    return lines(parse("version: 1\npools:\n  p:\n    gtp_version: " + std::string(version) + "\n" + gateways +
                       "rules: [{name: r, pool: p}]\n")
                     .error());
  };
  EXPECT_THAT(errors("0"), ElementsAre("routing.yaml:4: pools.p.gtp_version: 0 is out of range 1..2"));
  EXPECT_THAT(errors("3"), ElementsAre("routing.yaml:4: pools.p.gtp_version: 3 is out of range 1..2"));
  EXPECT_THAT(errors("v1"), ElementsAre("routing.yaml:4: pools.p.gtp_version: expected an integer, found \"v1\""));
  // Written out, the default changes nothing.
  const auto two =
      parse("version: 1\npools:\n  p:\n    gtp_version: 2\n" + gateways + "rules: [{name: r, pool: p}]\n");
  const auto absent = parse("version: 1\npools:\n  p:\n" + gateways + "rules: [{name: r, pool: p}]\n");
  ASSERT_TRUE(two) << errorText(two);
  ASSERT_TRUE(absent) << errorText(absent);
  EXPECT_EQ(two->contentHash(), absent->contentHash());
}

TEST(RoutingOverrides, QosCapCapsTheMaximumBitRatesOfGtpv1Sessions) {
  const auto r = parse(withGnPool("  - name: g\n"
                                  "    pool: gn\n"
                                  "    match: {apn: internet}\n"
                                  "    overrides:\n"
                                  "      qos_cap: {uplink_kbps: 5760, downlink_kbps: 10000000}\n"
                                  "      apn: internet.example\n"
                                  "      charging_characteristics: 0x0800\n"
                                  "      selection_mode: 1\n"
                                  "  - {name: up-only, pool: gn, match: {apn: ims},\n"
                                  "     overrides: {qos_cap: {uplink_kbps: 1}}}\n"
                                  "  - {name: d, pool: internet}\n"));
  ASSERT_TRUE(r) << errorText(r);
  const Overrides& o = r->rule(0).overrides;
  EXPECT_EQ(o.qos_max_uplink_kbps, 5760u);
  EXPECT_EQ(o.qos_max_downlink_kbps, 10'000'000u);
  EXPECT_EQ(o.apn, "internet.example");
  EXPECT_EQ(o.charging_characteristics, 0x0800);
  EXPECT_EQ(o.selection_mode, 1);
  EXPECT_FALSE(o.apn_ambr_uplink_kbps);
  const Overrides& up = r->rule(1).overrides;
  EXPECT_EQ(up.qos_max_uplink_kbps, 1u);
  EXPECT_FALSE(up.qos_max_downlink_kbps);
  EXPECT_TRUE(up.any());
  Overrides down;
  down.qos_max_downlink_kbps = 1;
  EXPECT_TRUE(down.any());
  EXPECT_FALSE(r->rule(2).overrides.any());
}

TEST(RoutingOverrides, RefusesQosCapsOutOfRange) {
  EXPECT_THAT(lines(parse(withGnPool("  - name: g\n"                                               // 9
                                     "    pool: gn\n"                                              // 10
                                     "    overrides:\n"                                            // 11
                                     "      qos_cap: {uplink_kbps: 0, downlink_kbps: 10000001}\n"  // 12
                                     "    match: {apn: a}\n"                                       // 13
                                     "  - {name: q, pool: gn, match: {apn: b}, overrides: {qos_cap: 5760}}\n"  // 14
                                     "  - {name: r, pool: gn, overrides: {qos_cap: {up: 1}}}\n"))  // 15
                        .error()),
              ElementsAre("routing.yaml:12: rules[0].overrides.qos_cap.uplink_kbps: 0 is out of range 1..10000000",
                          "routing.yaml:12: rules[0].overrides.qos_cap.downlink_kbps: 10000001 is out of range "
                          "1..10000000",
                          "routing.yaml:14: rules[1].overrides.qos_cap: expected a mapping of uplink_kbps, "
                          "downlink_kbps, found a scalar",
                          "routing.yaml:15: rules[2].overrides.qos_cap.up: unknown key; expected one of: "
                          "uplink_kbps, downlink_kbps"));
}

TEST(RoutingOverrides, AnOverrideOfTheOtherVersionIsAnError) {
  EXPECT_THAT(lines(parse(withGnPool("  - name: v2\n"                                          // 9
                                     "    pool: internet\n"                                    // 10
                                     "    overrides:\n"                                        // 11
                                     "      apn: ims\n"                                        // 12
                                     "      qos_cap: {downlink_kbps: 1000}\n"                  // 13
                                     "  - name: v1\n"                                          // 14
                                     "    pool: gn\n"                                          // 15
                                     "    overrides:\n"                                        // 16
                                     "      apn_ambr: {uplink_kbps: 1000}\n"                   // 17
                                     "      pdn_type: ipv4\n"                                  // 18
                                     "      selection_mode: 0\n"))                             // 19
                        .error()),
              ElementsAre("routing.yaml:13: rules[0].overrides.qos_cap: applies to GTPv1 pools only: pool "
                          "\"internet\" has gtp_version 2",
                          "routing.yaml:17: rules[1].overrides.apn_ambr: applies to GTPv2 pools only: pool "
                          "\"gn\" has gtp_version 1",
                          "routing.yaml:18: rules[1].overrides.pdn_type: applies to GTPv2 pools only: pool "
                          "\"gn\" has gtp_version 1"));
  // A rule whose pool is unknown is reported for that alone.
  EXPECT_THAT(lines(parse(withGnPool("  - {name: x, pool: nowhere, overrides: {qos_cap: {uplink_kbps: 1}}}\n"))
                        .error()),
              ElementsAre("routing.yaml:9: rules[0].pool: unknown pool \"nowhere\" (pools: internet, gn)"));
}

TEST(RoutingHash, ChangesWithGtpVersionAndQosCap) {
  const std::string base = withGnPool("  - {name: g, pool: gn, overrides: {qos_cap: {uplink_kbps: 100}}}\n");
  EXPECT_TRUE(hashChanges(base, "uplink_kbps: 100}", "uplink_kbps: 101}"));
  EXPECT_TRUE(hashChanges(base, "uplink_kbps: 100}", "downlink_kbps: 100}"));
  EXPECT_TRUE(hashChanges(base, "{qos_cap: {uplink_kbps: 100}}", "{}"));
  // The same pool as GTPv2 (where qos_cap would be refused: none here).
  EXPECT_TRUE(hashChanges(withGnPool("  - {name: g, pool: gn}\n"), "    gtp_version: 1\n", ""));
}

TEST(RoutingFailover, TryAnotherTakesTheRejectionCausesOfBothVersions) {
  // GTPv2 rejections from 64, GTPv1 ones 192..255 (199 No resources available).
  EXPECT_EQ(settingsWith("failover: {try_another: [73, 199, 204, 255]}\n"),
            "interval_ms 5000, misses 3, restart_notify_rate 1000; response_timeout_ms 2000, attempts 3, "
            "try_another [73 199 204 255], exhausted cause 100");
  const auto r = parse(documentWith("failover: {try_another: [199]}\n"));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_TRUE(r->failover().triesAnother(199));
  EXPECT_FALSE(r->failover().triesAnother(73));
}

// config/routing.yaml with its commented GTPv1 example in force: the lines
// whose third character is '#' before YAML (a key or a list item) lose it.
std::string exampleWithGtpv1() {
  std::istringstream in(testing::readFile(testing::sourcePath("config/routing.yaml")));
  static const std::regex commented("^  # ( *)(- .*|[a-z_]+:.*)$");
  std::string out;
  int uncommented = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, commented)) {
      line = "  " + m[1].str() + m[2].str();
      ++uncommented;
    }
    out += line + "\n";
  }
  EXPECT_EQ(uncommented, 8) << "the pool (4 lines) and the rule (4 lines)";
  return out;
}

TEST(RoutingDocument, ExampleGtpv1PoolAndRuleLoadAndRouteWhenUncommented) {
  const auto r = parse(exampleWithGtpv1());
  ASSERT_TRUE(r) << errorText(r);
  ASSERT_EQ(r->pools().size(), 3u);
  const auto gn = r->findPool("gn");
  ASSERT_TRUE(gn);
  EXPECT_EQ(r->pool(*gn).gtp_version, 1);
  ASSERT_EQ(r->gatewaysOf(*gn).size(), 1u);
  EXPECT_EQ(r->gatewaysOf(*gn)[0].name, "ggsn1");
  EXPECT_EQ(r->gatewaysOf(*gn)[0].gtp_version, 1);
  SessionKey k = v1Key("ims");
  k.imsi = "001010012345678";  // the test subscribers' prefix: a GTPv2 rule
  const auto s = r->select(k);
  ASSERT_TRUE(s);
  EXPECT_EQ(r->rule(s->rule).name, "gn");
  EXPECT_EQ(r->rule(s->rule).overrides.qos_max_uplink_kbps, 5760u);
  EXPECT_EQ(r->rule(s->rule).overrides.qos_max_downlink_kbps, 42'000u);
  // GTPv2 sessions route as in the example as shipped.
  k.gtp_version = 2;
  EXPECT_EQ(r->rule(r->select(k)->rule).name, "ims");
  k.apn = "internet";
  EXPECT_EQ(r->rule(r->select(k)->rule).name, "test-subscribers");
}

}  // namespace
}  // namespace gtpcp::config
