// --check-config: gtpcp.yaml and its routing document together
// (common/config/check.h).
#include <cstdio>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config/check.h"
#include "config_test_util.h"

namespace gtpcp::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::lines;

constexpr const char* kRouting =
    "version: 1\n"
    "pools:\n"
    "  p:\n"
    "    gateways:\n"
    "      - {name: g1, address: 127.0.0.21}\n"
    "rules: [{name: r, pool: p}]\n";

TEST(CheckConfig, TheExampleFilesPass) {
  std::ostringstream out;
  const std::string path = testing::sourcePath("config/gtpcp.yaml");
  EXPECT_EQ(checkConfigMain(path, out), 0) << out.str();
  EXPECT_EQ(out.str(), "OK: " + path +
                           ": group local instance a, 2 workers, GTP-C port 2123 access 127.0.0.1 "
                           "gateway (= access), run_dir /tmp/gtpcp/local, BGP off; routing " +
                           testing::sourcePath("config/routing.yaml") +
                           ": 2 pools, 3 gateways, 3 rules, hash " +
                           [&] {
                             char hash[17];
                             const auto c = loadConfiguration(path);
                             std::snprintf(hash, sizeof hash, "%016llx",
                                           static_cast<unsigned long long>(c->routing.contentHash()));
                             return std::string(hash);
                           }() +
                           "\n");
}

TEST(CheckConfig, LoadsBothFiles) {
  testing::TempDir dir;
  dir.write("routing.yaml", kRouting);
  const std::string path =
      dir.write("gtpcp.yaml", "group: g\nrouting: routing.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n");
  const auto c = loadConfiguration(path);
  ASSERT_TRUE(c) << c.error().toString();
  EXPECT_EQ(c->instance.group, "g");
  EXPECT_EQ(c->routing.source(), dir.path() + "/routing.yaml");
  EXPECT_EQ(c->routing.gateway(0).name, "g1");
}

TEST(CheckConfig, ReportsTheErrorsOfBothFiles) {
  testing::TempDir dir;
  dir.write("routing.yaml", "version: 1\npools: {}\nrules: [{name: r, pool: p}]\n");
  const std::string path = dir.write(
      "gtpcp.yaml", "group: g\nworkers: 0\nrouting: routing.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n");
  std::ostringstream out;
  EXPECT_EQ(checkConfigMain(path, out), 1);
  EXPECT_EQ(out.str(), path + ":2: workers: 0 is out of range 1..64\n" + dir.path() +
                           "/routing.yaml:2: pools: needs at least one pool\n" + dir.path() +
                           "/routing.yaml:3: rules[0].pool: unknown pool \"p\"\n");
}

TEST(CheckConfig, ReportsAMissingRoutingDocument) {
  testing::TempDir dir;
  const std::string path =
      dir.write("gtpcp.yaml", "group: g\nrouting: nowhere.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n");
  std::ostringstream out;
  EXPECT_EQ(checkConfigMain(path, out), 1);
  EXPECT_EQ(out.str(), dir.path() + "/nowhere.yaml: cannot read: No such file or directory\n");
}

TEST(CheckConfig, ReportsAMissingInstanceFile) {
  std::ostringstream out;
  EXPECT_EQ(checkConfigMain("/nonexistent/gtpcp.yaml", out), 1);
  EXPECT_EQ(out.str(), "/nonexistent/gtpcp.yaml: cannot read: No such file or directory\n");
}

TEST(CheckConfig, EveryGatewayNeedsAnAddressOfItsFamily) {
  testing::TempDir dir;
  dir.write("routing.yaml",
            "version: 1\n"
            "pools:\n"
            "  p:\n"
            "    gateways:\n"
            "      - {name: g4, address: 127.0.0.21}\n"       // 5
            "      - {name: g6, address: \"2001:db8::21\"}\n"  // 6
            "rules: [{name: r, pool: p}]\n");
  std::string path = dir.write(
      "gtpcp.yaml", "group: g\nrouting: routing.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n");
  auto c = loadConfiguration(path);
  ASSERT_FALSE(c);
  EXPECT_THAT(lines(c.error()),
              ElementsAre(dir.path() + "/routing.yaml:6: pools.p.gateways[1].address: gateway g6 "
                                       "is IPv6 but " + path +
                          " gives no gtpc.access.ipv6 address to reach it from"));

  path = dir.write("gtpcp.yaml",
                   "group: g\nrouting: routing.yaml\ngtpc:\n  access: {ipv4: 127.0.0.1}\n"
                   "  gateway: {ipv6: \"2001:db8::1\"}\n");
  c = loadConfiguration(path);
  ASSERT_FALSE(c);
  EXPECT_THAT(lines(c.error()),
              ElementsAre(dir.path() + "/routing.yaml:5: pools.p.gateways[0].address: gateway g4 "
                                       "is IPv4 but " + path +
                          " gives no gtpc.gateway.ipv4 address to reach it from"));

  path = dir.write("gtpcp.yaml",
                   "group: g\nrouting: routing.yaml\ngtpc:\n  access: {ipv4: 127.0.0.1}\n"
                   "  gateway: {ipv4: 127.0.0.1, ipv6: \"2001:db8::1\"}\n");
  EXPECT_TRUE(loadConfiguration(path));
}

}  // namespace
}  // namespace gtpcp::config
