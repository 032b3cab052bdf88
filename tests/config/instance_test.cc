// gtpcp.yaml: the key table, defaults, bounds, types, unknown keys, derived
// values, path resolution and error reporting (common/config/instance.h).
#include <bit>
#include <cstdlib>
#include <fstream>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/config/instance.h"
#include "config_test_util.h"

namespace gtpcp::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::lines;

constexpr const char* kFile = "gtpcp.yaml";
constexpr const char* kBase = "/etc/gtpcp";

Result<InstanceConfig> parse(std::string_view text) {
  return parseInstanceConfig(text, kFile, kBase);
}

// A flat key set rendered as nested YAML, with the line of every key.
struct Rendered {
  std::string text;
  std::map<std::string, int> line;
};

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
    out.push_back(path.substr(start, dot - start));
  out.push_back(path.substr(start));
  return out;
}

// Keys in lexicographic order keep every section's keys together.
Rendered render(const std::map<std::string, std::string>& keys) {
  Rendered r;
  std::vector<std::string> open;  // sections of the previous key
  int line = 0;
  for (const auto& [path, value] : keys) {
    const std::vector<std::string> parts = split(path);
    std::size_t common = 0;
    while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common])
      ++common;
    open.resize(common);
    for (std::size_t i = common; i + 1 < parts.size(); ++i) {
      r.text += std::string(2 * i, ' ') + parts[i] + ":\n";
      ++line;
      open.push_back(parts[i]);
    }
    r.text += std::string(2 * (parts.size() - 1), ' ') + parts.back() + ": " + value + "\n";
    r.line[path] = ++line;
  }
  return r;
}

std::map<std::string, std::string> baseKeys() {
  return {{"group", "g1"}, {"routing", "routing.yaml"}, {"gtpc.access.ipv4", "127.0.0.1"}};
}

// The base configuration with `path: value` added or replaced.
Rendered withKey(const std::string& path, const std::string& value) {
  auto keys = baseKeys();
  keys[path] = value;
  return render(keys);
}

std::string errorText(const Result<InstanceConfig>& r) {
  return r ? std::string("(no error)") : r.error().toString();
}

// -- the table ---------------------------------------------------------------

TEST(InstanceKeys, TableIsWellFormed) {
  std::set<std::string_view> paths;
  for (const KeyInfo& k : instanceKeys()) {
    SCOPED_TRACE(std::string(k.path));
    EXPECT_TRUE(paths.insert(k.path).second) << "listed twice";
    EXPECT_FALSE(k.doc.empty());
    EXPECT_EQ(k.doc.find('\n'), std::string_view::npos) << "doc is one line";
    // A key's section comes before it.
    const auto dot = k.path.rfind('.');
    if (dot != std::string_view::npos) {
      const KeyInfo* parent = findInstanceKey(k.path.substr(0, dot));
      ASSERT_NE(parent, nullptr);
      EXPECT_TRUE(parent->isSection());
      EXPECT_LT(parent, &k);
    }
    if (k.isSection()) {
      EXPECT_EQ(k.store, nullptr);
      continue;
    }
    EXPECT_NE(k.store, nullptr);
    EXPECT_NE(k.show, nullptr);
    EXPECT_FALSE(k.required() && !k.default_value.empty()) << "required keys have no default";
    if (k.type == KeyType::kInteger || k.type == KeyType::kIntegerList) {
      EXPECT_LE(k.min, k.max);
    }
    if (k.powerOfTwo()) {
      EXPECT_EQ(k.type, KeyType::kInteger);
      // Rounding up never leaves the bounds.
      EXPECT_TRUE(std::has_single_bit(static_cast<uint64_t>(k.max)));
    }
  }
}

TEST(InstanceKeys, ListsTheKeysOfTheBriefWithTheirReloadClass) {
  const std::map<std::string, ReloadClass> expected = {
      {"group", ReloadClass::kRestart},
      {"instance", ReloadClass::kRestart},
      {"run_dir", ReloadClass::kRestart},
      {"workers", ReloadClass::kRestart},
      {"routing", ReloadClass::kReload},
      {"log.level", ReloadClass::kReload},
      {"log.directory", ReloadClass::kRestart},
      {"log.format", ReloadClass::kRestart},
      {"log.max_bytes", ReloadClass::kRestart},
      {"log.keep", ReloadClass::kRestart},
      {"gtpc.port", ReloadClass::kRestart},
      {"gtpc.access.ipv4", ReloadClass::kRestart},
      {"gtpc.access.ipv6", ReloadClass::kRestart},
      {"gtpc.gateway.ipv4", ReloadClass::kRestart},
      {"gtpc.gateway.ipv6", ReloadClass::kRestart},
      {"gtpc.socket_buffer_bytes", ReloadClass::kRestart},
      {"gtpc.recovery", ReloadClass::kRestart},
      {"overload.creations_per_peer", ReloadClass::kRestart},
      {"overload.creations_burst", ReloadClass::kRestart},
      {"overload.max_creation_wait_ms", ReloadClass::kRestart},
      {"timers.t3_ms", ReloadClass::kReload},
      {"timers.n3", ReloadClass::kReload},
      {"rings.priority_slots", ReloadClass::kRestart},
      {"rings.new_slots", ReloadClass::kRestart},
      {"rings.persist_slots", ReloadClass::kRestart},
      {"rings.batch", ReloadClass::kRestart},
      {"sessions.per_partition", ReloadClass::kRestart},
      {"sessions.transactions", ReloadClass::kRestart},
      {"sessions.answer_cache_bytes", ReloadClass::kRestart},
      {"storage.mode", ReloadClass::kRestart},
      {"storage.servers", ReloadClass::kRestart},
      {"storage.sentinel_master", ReloadClass::kRestart},
      {"storage.embedded_port", ReloadClass::kRestart},
      {"storage.persist", ReloadClass::kRestart},
      {"storage.sync_replicas", ReloadClass::kRestart},
      {"storage.sync_wait_ms", ReloadClass::kRestart},
      {"watchdog.timeout_ms", ReloadClass::kRestart},
      {"watchdog.max_restarts", ReloadClass::kRestart},
      {"watchdog.stop_drain_ms", ReloadClass::kRestart},
      {"management.listen", ReloadClass::kRestart},
      {"bgp.mode", ReloadClass::kRestart},
      {"bgp.role", ReloadClass::kRestart},
      {"bgp.service_addresses", ReloadClass::kRestart},
      {"bgp.local_as", ReloadClass::kRestart},
      {"bgp.router_id", ReloadClass::kRestart},
      {"bgp.neighbors", ReloadClass::kRestart},
      {"bgp.standby_med", ReloadClass::kRestart},
      {"bgp.standby_prepend", ReloadClass::kRestart},
      {"bgp.bfd.enabled", ReloadClass::kRestart},
      {"bgp.bfd.interval_ms", ReloadClass::kRestart},
      {"bgp.bfd.multiplier", ReloadClass::kRestart},
      {"bgp.check_interval_ms", ReloadClass::kRestart},
      {"bgp.withdraw_hold_ms", ReloadClass::kRestart},
      {"bgp.return_hold_ms", ReloadClass::kRestart},
      {"bgp.damping.flaps", ReloadClass::kRestart},
      {"bgp.damping.window_s", ReloadClass::kRestart},
      {"bgp.damping.hold_ms", ReloadClass::kRestart},
      {"bgp.lease_ms", ReloadClass::kRestart},
      {"bgp.stop_settle_ms", ReloadClass::kRestart},
      {"bgp.storage_ack_ms", ReloadClass::kRestart},
      {"bgp.vtysh", ReloadClass::kRestart},
      {"bgp.vty_socket_dir", ReloadClass::kRestart},
      {"cpu.forwarder", ReloadClass::kRestart},
      {"cpu.workers", ReloadClass::kRestart},
      {"group_size", ReloadClass::kRestart},
      {"instance_index", ReloadClass::kRestart},
  };
  std::map<std::string, ReloadClass> actual;
  for (const KeyInfo& k : instanceKeys())
    if (!k.isSection()) actual[std::string(k.path)] = k.reload;
  EXPECT_EQ(actual, expected);
}

TEST(InstanceKeys, DescribeTheirType) {
  EXPECT_EQ(findInstanceKey("workers")->typeText(), "integer 1..64");
  EXPECT_EQ(findInstanceKey("rings.new_slots")->typeText(),
            "integer 4096..1048576, rounded up to a power of two");
  EXPECT_EQ(findInstanceKey("log.level")->typeText(),
            "one of trace, debug, info, warn, error, off");
  EXPECT_EQ(findInstanceKey("group")->typeText(), "name of 1 to 32 characters A-Z a-z 0-9 _ -");
  EXPECT_EQ(findInstanceKey("cpu.workers")->typeText(), "list of integers 0..1023");
  EXPECT_EQ(findInstanceKey("bgp.service_addresses")->typeText(),
            "list of IPv4 and IPv6 addresses, at most 4");
  EXPECT_EQ(findInstanceKey("bgp.neighbors")->typeText(),
            "list of {address, as, password}, at most 16");
  EXPECT_EQ(findInstanceKey("bgp.local_as")->typeText(), "integer 1..4294967295");
  EXPECT_EQ(findInstanceKey("bgp.bfd.enabled")->typeText(), "one of on, off");
  EXPECT_EQ(findInstanceKey("nope"), nullptr);
}

TEST(InstanceKeys, ReferenceNamesEveryKey) {
  const std::string reference = renderInstanceKeyReference();
  for (const KeyInfo& k : instanceKeys()) {
    EXPECT_THAT(reference, HasSubstr(std::string(k.path) + "\n  " + std::string(k.doc) + "\n"));
    if (!k.isSection()) {
      EXPECT_THAT(reference, HasSubstr("  " + k.typeText() + "; "));
    }
  }
  EXPECT_THAT(reference, HasSubstr("workers\n  Number of worker processes"));
  EXPECT_THAT(reference, HasSubstr("integer 1..64; default 2; restart\n"));
  EXPECT_THAT(reference, HasSubstr("group\n"));
  EXPECT_THAT(reference, HasSubstr("; required; restart\n"));
}

// -- defaults ------------------------------------------------------------------

TEST(InstanceConfig, EveryKeyHasItsDefault) {
  const auto r = parse(render(baseKeys()).text);
  ASSERT_TRUE(r) << errorText(r);
  const InstanceConfig& c = *r;
  EXPECT_EQ(c.file, "gtpcp.yaml");
  EXPECT_EQ(c.base_dir, "/etc/gtpcp");
  EXPECT_EQ(c.group, "g1");
  EXPECT_EQ(c.instance, "a");
  EXPECT_EQ(c.run_dir.configured, "/tmp/gtpcp/<group>");
  EXPECT_EQ(c.run_dir.resolved, "/tmp/gtpcp/g1");
  EXPECT_EQ(c.workers, 2u);
  EXPECT_EQ(c.routing.configured, "routing.yaml");
  EXPECT_EQ(c.routing.resolved, "/etc/gtpcp/routing.yaml");
  EXPECT_EQ(c.log.level, LogLevel::kInfo);
  EXPECT_EQ(c.log.directory.configured, "<run_dir>");
  EXPECT_EQ(c.log.directory.resolved, "/tmp/gtpcp/g1");
  EXPECT_EQ(c.gtpc.port, 2123);
  ASSERT_TRUE(c.gtpc.access.ipv4);
  EXPECT_EQ(gtp::toString(*c.gtpc.access.ipv4), "127.0.0.1");
  EXPECT_FALSE(c.gtpc.access.ipv6);
  EXPECT_TRUE(c.gtpc.gateway_from_access);
  EXPECT_EQ(c.gtpc.gateway, c.gtpc.access);
  EXPECT_EQ(c.gtpc.socket_buffer_bytes, 8388608u);
  EXPECT_EQ(c.gtpc.recovery, 1);
  EXPECT_EQ(c.timers.t3_ms, 3000u);
  EXPECT_EQ(c.timers.n3, 2u);
  EXPECT_EQ(c.timers.transaction_lifetime_ms, 9000u);
  EXPECT_EQ(c.rings.priority_slots.configured, 16384u);
  EXPECT_EQ(c.rings.priority_slots.effective, 16384u);
  EXPECT_EQ(c.rings.new_slots.configured, 8192u);
  EXPECT_EQ(c.rings.new_slots.effective, 8192u);
  EXPECT_EQ(c.rings.batch, 64u);
  EXPECT_EQ(c.sessions.per_partition.effective, 4096u);
  EXPECT_EQ(c.sessions.transactions.effective, 524288u);
  EXPECT_EQ(c.sessions.answer_cache_bytes, 33554432u);
  EXPECT_EQ(c.cpu.forwarder, -1);
  EXPECT_TRUE(c.cpu.workers.empty());
  EXPECT_EQ(c.workerCpu(0), std::nullopt);
}

TEST(InstanceConfig, ShowGivesTheDefaultOfEveryKeyWithADefault) {
  const auto r = parse(render(baseKeys()).text);
  ASSERT_TRUE(r) << errorText(r);
  for (const KeyInfo& k : instanceKeys()) {
    if (k.isSection() || k.default_value.empty() || k.type == KeyType::kPath) continue;
    // [] in the file stands for the gtpc addresses, which show() gives.
    if (k.path == "bgp.service_addresses") continue;
    SCOPED_TRACE(std::string(k.path));
    EXPECT_EQ(k.show(*r), k.default_value);
  }
}

// -- bounds ----------------------------------------------------------------------

TEST(InstanceConfig, EveryIntegerKeyAcceptsItsBoundsAndRejectsJustOutside) {
  for (const KeyInfo& k : instanceKeys()) {
    if (k.type != KeyType::kInteger) continue;
    const std::string path(k.path);
    SCOPED_TRACE(path);
    // instance_index must also be below group_size: the largest group.
    const std::string more = path == "instance_index" ? "group_size: 4\n" : "";
    for (int64_t v : {k.min, k.max}) {
      const auto r = parse(withKey(path, std::to_string(v)).text + more);
      ASSERT_TRUE(r) << errorText(r);
      const uint64_t expected = k.powerOfTwo() ? std::bit_ceil(static_cast<uint64_t>(v))
                                               : static_cast<uint64_t>(v);
      EXPECT_EQ(k.show(*r), std::to_string(static_cast<int64_t>(expected)));
    }
    for (int64_t v : {k.min - 1, k.max + 1}) {
      const Rendered doc = withKey(path, std::to_string(v));
      const auto r = parse(doc.text);
      ASSERT_FALSE(r);
      EXPECT_THAT(lines(r.error()),
                  ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at(path)) + ": " + path +
                              ": " + std::to_string(v) + " is out of range " +
                              std::to_string(k.min) + ".." + std::to_string(k.max)));
    }
  }
}

TEST(InstanceConfig, CpuWorkersEntriesHaveBounds) {
  auto keys = baseKeys();
  keys["workers"] = "3";
  keys["cpu.workers"] = "[0, 1023, 1]";
  auto r = parse(render(keys).text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->cpu.workers, (std::vector<int32_t>{0, 1023, 1}));
  EXPECT_EQ(r->workerCpu(1), 1023);
  EXPECT_EQ(r->workerCpu(3), std::nullopt);

  keys["cpu.workers"] = "[-1, 1024, 2]";
  const Rendered doc = render(keys);
  r = parse(doc.text);
  ASSERT_FALSE(r);
  const std::string at = "gtpcp.yaml:" + std::to_string(doc.line.at("cpu.workers")) + ": ";
  EXPECT_THAT(lines(r.error()), ElementsAre(at + "cpu.workers[0]: -1 is out of range 0..1023",
                                            at + "cpu.workers[1]: 1024 is out of range 0..1023"));
}

TEST(InstanceConfig, CpuWorkersNeedsOneEntryPerWorker) {
  auto keys = baseKeys();
  keys["cpu.workers"] = "[0, 1, 2]";
  const Rendered doc = render(keys);
  const auto r = parse(doc.text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("cpu.workers")) +
                          ": cpu.workers: has 3 entries but workers is 2: give one CPU per "
                          "worker, or []"));
}

TEST(InstanceConfig, NamesHaveLengthAndCharacterBounds) {
  EXPECT_TRUE(parse(withKey("group", std::string(32, 'x')).text));
  EXPECT_TRUE(parse(withKey("group", "A-z_09").text));
  EXPECT_TRUE(parse(withKey("instance", std::string(16, 'b')).text));
  const std::string rule = " is not a valid name: name of 1 to 32 characters A-Z a-z 0-9 _ -";
  EXPECT_THAT(lines(parse(withKey("group", std::string(33, 'x')).text).error()),
              ElementsAre("gtpcp.yaml:1: group: \"" + std::string(33, 'x') + "\"" + rule));
  EXPECT_THAT(lines(parse(withKey("group", "\"\"").text).error()),
              ElementsAre("gtpcp.yaml:1: group: \"\"" + rule));
  EXPECT_THAT(lines(parse(withKey("group", "a.b").text).error()),
              ElementsAre("gtpcp.yaml:1: group: \"a.b\"" + rule));
  EXPECT_THAT(lines(parse(withKey("group", "\"a b\"").text).error()),
              ElementsAre("gtpcp.yaml:1: group: \"a b\"" + rule));
  const Rendered doc = withKey("instance", std::string(17, 'b'));
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("instance")) +
                          ": instance: \"" + std::string(17, 'b') +
                          "\" is not a valid name: name of 1 to 16 characters A-Z a-z 0-9 _ -"));
}

TEST(InstanceConfig, LogLevelsAreNamedIgnoringCase) {
  const std::pair<const char*, LogLevel> levels[] = {
      {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
      {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"off", LogLevel::kOff},
      {"WARN", LogLevel::kWarn}};
  for (const auto& [text, level] : levels) {
    const auto r = parse(withKey("log.level", text).text);
    ASSERT_TRUE(r) << text << ": " << errorText(r);
    EXPECT_EQ(r->log.level, level);
    std::string lower = text;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(logLevelName(level), lower);
  }
  const Rendered doc = withKey("log.level", "verbose");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("log.level")) +
                          ": log.level: \"verbose\" is not one of trace, debug, info, warn, "
                          "error, off"));
}

TEST(InstanceConfig, LogFormatIsTextOrJson) {
  const auto defaults = parse(render(baseKeys()).text);
  ASSERT_TRUE(defaults) << errorText(defaults);
  EXPECT_EQ(defaults->log.format, InstanceConfig::Log::Format::kText);
  EXPECT_EQ(defaults->log.max_bytes, 0u);
  EXPECT_EQ(defaults->log.keep, 5u);
  const auto json = parse(withKey("log.format", "JSON").text);
  ASSERT_TRUE(json) << errorText(json);
  EXPECT_EQ(json->log.format, InstanceConfig::Log::Format::kJson);
  EXPECT_EQ(findInstanceKey("log.format")->show(*json), "json");
  const Rendered doc = withKey("log.format", "xml");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("log.format")) +
                          ": log.format: \"xml\" is not one of text, json"));
}

TEST(InstanceConfig, LogDirectoryMayBeStderrOrJournald) {
  using Output = InstanceConfig::Log::Output;
  const std::pair<const char*, Output> outputs[] = {{"stderr", Output::kStderr}, {"journald", Output::kJournald}};
  for (const auto& [text, output] : outputs) {
    SCOPED_TRACE(text);
    const auto r = parse(withKey("log.directory", text).text);
    ASSERT_TRUE(r) << errorText(r);
    EXPECT_EQ(r->log.output, output);
    EXPECT_EQ(r->log.directory.resolved, "") << "no directory: the run directory's files stay where they were";
    EXPECT_EQ(findInstanceKey("log.directory")->show(*r), text);
  }
  // A directory of that name, written as a path.
  const auto dir = parse(withKey("log.directory", "./journald").text);
  ASSERT_TRUE(dir) << errorText(dir);
  EXPECT_EQ(dir->log.output, Output::kDirectory);
  EXPECT_EQ(dir->log.directory.resolved, "/etc/gtpcp/journald");
  // Moving the log to the journal is a change a reload cannot apply.
  std::vector<std::string> changed;
  for (const KeyInfo* k : changedKeys(*dir, *parse(withKey("log.directory", "journald").text)))
    changed.push_back(std::string(k->path));
  EXPECT_THAT(changed, ElementsAre("log.directory"));
}

TEST(InstanceConfig, LogRotationNeedsAFileOfSomeSize) {
  auto keys = baseKeys();
  keys["log.max_bytes"] = "1048576";
  keys["log.keep"] = "3";
  const auto r = parse(render(keys).text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->log.max_bytes, 1048576u);
  EXPECT_EQ(r->log.keep, 3u);
  EXPECT_TRUE(parse(withKey("log.max_bytes", "65536").text));

  Rendered doc = withKey("log.max_bytes", "1000");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("log.max_bytes")) +
                          ": log.max_bytes: 1000 is below 65536: a file that small would be rotated every few "
                          "lines (0: no rotation)"));
  doc = withKey("log.max_bytes", "-1");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("log.max_bytes")) +
                          ": log.max_bytes: -1 is out of range 0..1099511627776"));
  doc = withKey("log.keep", "0");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("log.keep")) +
                          ": log.keep: 0 is out of range 1..1000"));
  doc = withKey("log.max_bytes", "\"1M\"");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre(HasSubstr("gtpcp.yaml:" + std::to_string(doc.line.at("log.max_bytes")) +
                                    ": log.max_bytes: expected an integer")));
}

// -- types -------------------------------------------------------------------------

TEST(InstanceConfig, ReportsTypeErrors) {
  const std::string text =
      "group: g1\n"                           // 1
      "routing: routing.yaml\n"               // 2
      "workers: abc\n"                        // 3
      "gtpc:\n"                               // 4
      "  port: \"2123\"\n"                    // 5
      "  socket_buffer_bytes: [1]\n"          // 6
      "  recovery: {a: 1}\n"                  // 7
      "  access:\n"                           // 8
      "    ipv4: 300.1.1.1\n"                 // 9
      "    ipv6: 127.0.0.1\n"                 // 10
      "timers:\n"                             // 11
      "  t3_ms: 2.5\n"                        // 12
      "  n3: 0x2\n"                           // 13
      "cpu:\n"                                // 14
      "  workers: 3\n"                        // 15
      "  forwarder: [x]\n"                    // 16
      "log:\n"                                // 17
      "  level: [info]\n"                     // 18
      "  directory: {a: b}\n";                // 19
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre(
          "gtpcp.yaml:3: workers: expected an integer, found \"abc\"",
          "gtpcp.yaml:5: gtpc.port: expected an integer, found the string \"2123\" (write "
          "numbers without quotes)",
          "gtpcp.yaml:6: gtpc.socket_buffer_bytes: expected an integer, found a list",
          "gtpcp.yaml:7: gtpc.recovery: expected an integer, found a mapping",
          "gtpcp.yaml:9: gtpc.access.ipv4: \"300.1.1.1\" is not an IPv4 address",
          "gtpcp.yaml:10: gtpc.access.ipv6: \"127.0.0.1\" is not an IPv6 address (it is an IPv4 "
          "address)",
          "gtpcp.yaml:12: timers.t3_ms: expected an integer, found \"2.5\"",
          "gtpcp.yaml:13: timers.n3: expected an integer, found \"0x2\"",
          "gtpcp.yaml:15: cpu.workers: expected a list of integers 0..1023, found a scalar",
          "gtpcp.yaml:16: cpu.forwarder: expected an integer, found a list",
          "gtpcp.yaml:18: log.level: expected one of trace, debug, info, warn, error, off, found "
          "a list",
          "gtpcp.yaml:19: log.directory: expected a path, found a mapping"));
}

TEST(InstanceConfig, ReportsSectionsThatAreNotMappings) {
  const std::string text =
      "group: g1\n"
      "routing: r.yaml\n"
      "gtpc: 5\n"
      "rings: [1, 2]\n";
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:3: gtpc: expected a section (a mapping of port, access, "
                          "gateway, socket_buffer_bytes, recovery), found a scalar",
                          // gtpc being unusable, the access address is missing too.
                          "gtpcp.yaml:3: gtpc.access: is missing: give the proxy's ipv4 and/or "
                          "ipv6 address toward the SGWs",
                          "gtpcp.yaml:4: rings: expected a section (a mapping of priority_slots, "
                          "new_slots, persist_slots, batch), found a list"));
}

TEST(InstanceConfig, RejectsAddressesPeersCannotSendTo) {
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {"gtpc.access.ipv4", "0.0.0.0", "\"0.0.0.0\" is the unspecified address"},
      {"gtpc.access.ipv4", "224.0.0.1", "\"224.0.0.1\" is a multicast address"},
      {"gtpc.access.ipv4", "255.255.255.255", "\"255.255.255.255\" is the broadcast address"},
      {"gtpc.access.ipv4", "127.0.0", "\"127.0.0\" is not an IPv4 address"},
      {"gtpc.access.ipv4", "\"2001:db8::1\"", "\"2001:db8::1\" is not an IPv4 address (it is an IPv6 address)"},
      {"gtpc.access.ipv6", "\"::\"", "\"::\" is the unspecified address"},
      {"gtpc.access.ipv6", "\"ff02::1\"", "\"ff02::1\" is a multicast address"},
      {"gtpc.access.ipv6", "\"::ffff:10.0.0.1\"",
       "\"::ffff:10.0.0.1\" is an IPv4-mapped address (give the IPv4 address itself)"},
      {"gtpc.gateway.ipv6", "\"2001:db8::g\"", "\"2001:db8::g\" is not an IPv6 address"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    const Rendered doc = withKey(c.key, c.value);
    const auto r = parse(doc.text);
    ASSERT_FALSE(r);
    ASSERT_GE(r.error().size(), 1u);
    EXPECT_EQ(r.error().errors[0].toString(), "gtpcp.yaml:" + std::to_string(doc.line.at(c.key)) +
                                                  ": " + c.key + ": " + c.message);
  }
}

TEST(InstanceConfig, AcceptsIpv6Addresses) {
  auto keys = baseKeys();
  keys.erase("gtpc.access.ipv4");
  keys["gtpc.access.ipv6"] = "\"2001:db8::1\"";
  const auto r = parse(render(keys).text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_FALSE(r->gtpc.access.ipv4);
  EXPECT_EQ(gtp::toString(*r->gtpc.access.ipv6), "2001:db8::1");
  EXPECT_EQ(r->gtpc.gateway, r->gtpc.access);
}

TEST(InstanceConfig, ValuesLeftEmptyAreErrors) {
  const std::string text =
      "group: g1\n"
      "routing: r.yaml\n"
      "workers:\n"
      "gtpc:\n"
      "  access:\n"
      "    ipv4: ~\n"
      "    ipv6: 2001:db8::1\n"
      "cpu:\n"
      "  workers:\n";
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:3: workers: has no value (remove the key to use the default 2)",
                          "gtpcp.yaml:6: gtpc.access.ipv4: has no value",
                          "gtpcp.yaml:9: cpu.workers: has no value (remove the key to use the "
                          "default [])"));
}

// -- unknown, duplicate and missing keys ---------------------------------------------

TEST(InstanceConfig, ReportsUnknownKeysAtEveryLevel) {
  const std::string text =
      "grup: g1\n"                 // 1
      "group: g1\n"                // 2
      "routing: r.yaml\n"          // 3
      "gtpc.port: 2123\n"          // 4  dotted keys are not sections
      "gtpc:\n"                    // 5
      "  acess:\n"                 // 6
      "    ipv4: 127.0.0.1\n"      // 7
      "  access:\n"                // 8
      "    ipv4: 127.0.0.1\n"      // 9
      "    ipv5: 127.0.0.1\n"      // 10
      "  gateway:\n"               // 11
      "    ipv4: 127.0.0.2\n"      // 12
      "    zzz: 1\n"               // 13
      "rings:\n"                   // 14
      "  size: 4\n"                // 15
      "sessions: {per_partitions: 64}\n"  // 16
      "storage: {mod: off}\n";     // 17
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre("gtpcp.yaml:1: grup: unknown key (did you mean \"group\"?)",
                  "gtpcp.yaml:4: gtpc.port: unknown key; expected one of: group, instance, group_size, instance_index, "
                  "run_dir, workers, routing, log, gtpc, overload, timers, rings, sessions, storage, watchdog, management, "
                  "bgp, cpu",
                  "gtpcp.yaml:6: gtpc.acess: unknown key (did you mean \"access\"?)",
                  "gtpcp.yaml:10: gtpc.access.ipv5: unknown key (did you mean \"ipv4\"?)",
                  "gtpcp.yaml:13: gtpc.gateway.zzz: unknown key; expected one of: ipv4, ipv6",
                  "gtpcp.yaml:15: rings.size: unknown key; expected one of: priority_slots, "
                  "new_slots, persist_slots, batch",
                  "gtpcp.yaml:16: sessions.per_partitions: unknown key (did you mean "
                  "\"per_partition\"?)",
                  "gtpcp.yaml:17: storage.mod: unknown key (did you mean \"mode\"?)"));
}

TEST(InstanceConfig, ManagementListensOnLoopbackUnlessTold) {
  const std::string base = "group: g1\nrouting: r.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n";
  auto defaults = parse(base);
  ASSERT_TRUE(defaults) << defaults.error().toString();
  EXPECT_THAT(defaults->management.listen, ElementsAre(InstanceConfig::Storage::Server{"127.0.0.1", 9123}));
  auto two = parse(base + "management: {listen: [\"127.0.0.2:9200\", \"10.0.0.1:9200\"]}\n");
  ASSERT_TRUE(two) << two.error().toString();
  EXPECT_THAT(two->management.listen, ElementsAre(InstanceConfig::Storage::Server{"127.0.0.2", 9200},
                                                  InstanceConfig::Storage::Server{"10.0.0.1", 9200}));
  auto v6 = parse(base + "management:\n  listen:\n    - \"127.0.0.1:9123\"\n    - \"[::1]:9123\"\n");
  ASSERT_FALSE(v6);
  EXPECT_THAT(lines(v6.error()),
              ElementsAre("gtpcp.yaml:7: management.listen[1]: gtpcp-console listens on IPv4 addresses only; give an "
                          "IPv4 address (127.0.0.1 for this host alone)"));
  auto none = parse(base + "management: {listen: []}\n");
  ASSERT_TRUE(none) << none.error().toString();
  EXPECT_TRUE(none->management.listen.empty());
  auto bad = parse(base + "management:\n  listen: [\"localhost:9123\"]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(lines(bad.error()),
              ElementsAre(HasSubstr("gtpcp.yaml:5: management.listen[0]: \"localhost:9123\" is not \"address:port\"")));
  auto three = parse(base + "management:\n  listen: [\"127.0.0.1:1\", \"127.0.0.1:2\", \"127.0.0.1:3\"]\n");
  ASSERT_FALSE(three);
  EXPECT_THAT(lines(three.error()), ElementsAre(HasSubstr("gtpcp.yaml:5: management.listen")));
}

TEST(InstanceConfig, StorageServersMatchTheMode) {
  const std::string base = "group: g1\nrouting: r.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n";
  auto ok = parse(base + "storage: {mode: cluster, servers: [\"127.0.0.1:7001\", \"[::1]:7002\"]}\n");
  ASSERT_TRUE(ok) << ok.error().toString();
  ASSERT_EQ(ok->storage.servers.size(), 2u);
  EXPECT_EQ(ok->storage.mode, InstanceConfig::Storage::Mode::kCluster);
  EXPECT_EQ(ok->storage.servers[0], (InstanceConfig::Storage::Server{"127.0.0.1", 7001}));
  EXPECT_EQ(ok->storage.servers[1], (InstanceConfig::Storage::Server{"::1", 7002}));
  auto defaults = parse(base);
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->storage.mode, InstanceConfig::Storage::Mode::kEmbedded);
  EXPECT_EQ(defaults->storage.persist, InstanceConfig::Storage::Persist::kAsync);

  auto two = parse(base + "storage:\n  mode: single\n  servers: [\"127.0.0.1:1\", \"127.0.0.1:2\"]\n");
  ASSERT_FALSE(two);
  EXPECT_THAT(lines(two.error()),
              ElementsAre("gtpcp.yaml:6: storage.servers: storage.mode single needs exactly one server, found 2"));
  auto none = parse(base + "storage: {mode: sentinel}\n");
  ASSERT_FALSE(none);
  EXPECT_THAT(lines(none.error()),
              ElementsAre("gtpcp.yaml:4: storage.mode: storage.mode sentinel needs at least one sentinel in "
                          "storage.servers"));
  auto bad = parse(base + "storage:\n  mode: single\n  servers: [\"localhost:6379\", \"::1:80\", \"1.2.3.4:0\"]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(lines(bad.error()),
              ElementsAre(HasSubstr("storage.servers[0]: \"localhost:6379\" is not \"address:port\""),
                          HasSubstr("storage.servers[1]: \"::1:80\" is not"),
                          HasSubstr("storage.servers[2]: \"1.2.3.4:0\" is not")));
  auto unused = parse(base + "storage: {servers: [\"127.0.0.1:6379\"]}\n");
  ASSERT_FALSE(unused);
  EXPECT_THAT(lines(unused.error()), ElementsAre(HasSubstr("they would not be used")));
}

TEST(InstanceConfig, ReportsDuplicateKeys) {
  const std::string text =
      "group: g1\n"
      "routing: r.yaml\n"
      "gtpc:\n"
      "  access: {ipv4: 127.0.0.1}\n"
      "  port: 1\n"
      "  port: 2\n"
      "group: g2\n";
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:6: gtpc.port: duplicate key (first given at line 5)",
                          "gtpcp.yaml:7: group: duplicate key (first given at line 1)"));
}

TEST(InstanceConfig, ReportsMissingRequiredKeys) {
  const auto r = parse("workers: 1\n");
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml: group: required key is missing",
                          "gtpcp.yaml: routing: required key is missing",
                          "gtpcp.yaml: gtpc.access: is missing: give the proxy's ipv4 and/or ipv6 "
                          "address toward the SGWs"));
}

TEST(InstanceConfig, AnEmptyDocumentMissesTheRequiredKeys) {
  for (const char* text : {"", "# nothing\n"}) {
    const auto r = parse(text);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().size(), 3u) << r.error().toString();
  }
}

TEST(InstanceConfig, TheDocumentMustBeAMapping) {
  EXPECT_THAT(lines(parse("- a\n- b\n").error()),
              ElementsAre("gtpcp.yaml:1: expected a mapping of keys, found a list"));
  EXPECT_THAT(lines(parse("hello\n").error()),
              ElementsAre("gtpcp.yaml:1: expected a mapping of keys, found a scalar"));
}

TEST(InstanceConfig, ReportsYamlSyntaxErrorsWithTheirLine) {
  const auto r = parse("group: g1\nrouting: [a, b\nworkers: 2\n");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error().errors[0].file, "gtpcp.yaml");
  EXPECT_EQ(r.error().errors[0].line, 3);
  EXPECT_THAT(r.error().errors[0].message, HasSubstr("YAML syntax error"));
  EXPECT_THAT(lines(parse("group: g1\n---\ngroup: g2\n").error()),
              ElementsAre("gtpcp.yaml:3: holds 2 YAML documents; expected one"));
}

TEST(InstanceConfig, AccessNeedsAnAddress) {
  const auto r = parse("group: g1\nrouting: r.yaml\ngtpc:\n  port: 2123\n  access: {}\n");
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:5: gtpc.access: needs an ipv4 or an ipv6 address (or both)"));
  const auto r2 = parse("group: g1\nrouting: r.yaml\ngtpc:\n  port: 2123\n");
  ASSERT_FALSE(r2);
  EXPECT_THAT(lines(r2.error()),
              ElementsAre("gtpcp.yaml:3: gtpc.access: is missing: give the proxy's ipv4 and/or "
                          "ipv6 address toward the SGWs"));
}

// -- bgp -----------------------------------------------------------------------------

using Bgp = InstanceConfig::Bgp;

// Lines 1 to 4; the bgp keys follow from line 5.
constexpr const char* kBgpBase =
    "group: g1\n"
    "routing: r.yaml\n"
    "gtpc: {access: {ipv4: 127.0.0.1}}\n"
    "bgp:\n";
// The least a file with bgp.mode frr needs (lines 5 to 7 after kBgpBase).
constexpr const char* kFrr =
    "  mode: frr\n"
    "  local_as: 65001\n"
    "  neighbors: [{address: 10.250.0.2, as: 65000}]\n";

TEST(InstanceBgp, EveryKeyHasItsDefault) {
  const auto r = parse(render(baseKeys()).text);
  ASSERT_TRUE(r) << errorText(r);
  const Bgp& b = r->bgp;
  EXPECT_EQ(b.mode, Bgp::Mode::kOff);
  EXPECT_EQ(b.role, Bgp::Role::kActive);
  EXPECT_EQ(b.service_addresses, (std::vector<std::string>{"127.0.0.1"}));
  EXPECT_EQ(b.local_as, 0u);
  EXPECT_FALSE(b.router_id);
  EXPECT_TRUE(b.neighbors.empty());
  EXPECT_EQ(b.standby_med, 200u);
  EXPECT_EQ(b.standby_prepend, 3u);
  EXPECT_TRUE(b.bfd);
  EXPECT_EQ(b.bfd_interval_ms, 300u);
  EXPECT_EQ(b.bfd_multiplier, 3u);
  EXPECT_EQ(b.check_interval_ms, 1000u);
  EXPECT_EQ(b.withdraw_hold_ms, 10000u);
  EXPECT_EQ(b.return_hold_ms, 30000u);
  EXPECT_EQ(b.damping_flaps, 3u);
  EXPECT_EQ(b.damping_window_s, 300u);
  EXPECT_EQ(b.damping_hold_ms, 300000u);
  EXPECT_EQ(b.lease_ms, 2000u);
  EXPECT_EQ(b.storage_ack_ms, 5000u);
  EXPECT_EQ(b.vtysh.configured, "/usr/bin/vtysh");
  EXPECT_EQ(b.vtysh.resolved, "/usr/bin/vtysh");
  EXPECT_EQ(b.vty_socket_dir, "");
  for (const char* unset : {"bgp.local_as", "bgp.router_id", "bgp.vty_socket_dir"})
    EXPECT_EQ(findInstanceKey(unset)->show(*r), "") << unset;
}

TEST(InstanceBgp, ReadsAFullFrrSection) {
  const std::string text =
      "group: g1\n"
      "routing: r.yaml\n"
      "gtpc:\n"
      "  access: {ipv4: 127.0.0.1, ipv6: \"2001:db8::1\"}\n"
      "  gateway: {ipv4: 10.0.0.1}\n"
      "bgp:\n"
      "  mode: FRR\n"
      "  role: standby\n"
      "  service_addresses: [\"2001:DB8:0::1\", 10.0.0.1]\n"
      "  local_as: 4294967295\n"
      "  router_id: 10.250.0.1\n"
      "  neighbors:\n"
      "    - address: 10.250.0.2\n"
      "      as: 65000\n"
      "    - {address: \"2001:DB8::2\", as: 1, password: \"s3cr#t!~\"}\n"
      "  standby_med: 0\n"
      "  standby_prepend: 10\n"
      "  bfd: {enabled: OFF, interval_ms: 50, multiplier: 255}\n"
      "  check_interval_ms: 100\n"
      "  withdraw_hold_ms: 0\n"
      "  return_hold_ms: 3600000\n"
      "  damping: {flaps: 1, window_s: 86400, hold_ms: 0}\n"
      "  lease_ms: 500\n"
      "  storage_ack_ms: 600000\n"
      "  vtysh: bin/vtysh\n"
      "  vty_socket_dir: \"<run_dir>/frr/\"\n";
  const auto r = parse(text);
  ASSERT_TRUE(r) << errorText(r);
  const Bgp& b = r->bgp;
  EXPECT_EQ(b.mode, Bgp::Mode::kFrr);
  EXPECT_EQ(b.role, Bgp::Role::kStandby);
  // Canonical text, in the order of the file.
  EXPECT_EQ(b.service_addresses, (std::vector<std::string>{"2001:db8::1", "10.0.0.1"}));
  EXPECT_EQ(b.local_as, 4294967295u);
  ASSERT_TRUE(b.router_id);
  EXPECT_EQ(gtp::toString(*b.router_id), "10.250.0.1");
  EXPECT_THAT(b.neighbors, ElementsAre(Bgp::Neighbor{"10.250.0.2", 65000, ""},
                                       Bgp::Neighbor{"2001:db8::2", 1, "s3cr#t!~"}));
  EXPECT_EQ(b.standby_med, 0u);
  EXPECT_EQ(b.standby_prepend, 10u);
  EXPECT_FALSE(b.bfd);
  EXPECT_EQ(b.bfd_interval_ms, 50u);
  EXPECT_EQ(b.bfd_multiplier, 255u);
  EXPECT_EQ(b.check_interval_ms, 100u);
  EXPECT_EQ(b.withdraw_hold_ms, 0u);
  EXPECT_EQ(b.return_hold_ms, 3600000u);
  EXPECT_EQ(b.damping_flaps, 1u);
  EXPECT_EQ(b.damping_window_s, 86400u);
  EXPECT_EQ(b.damping_hold_ms, 0u);
  EXPECT_EQ(b.lease_ms, 500u);
  EXPECT_EQ(b.storage_ack_ms, 600000u);
  EXPECT_EQ(b.vtysh.configured, "bin/vtysh");
  EXPECT_EQ(b.vtysh.resolved, "/etc/gtpcp/bin/vtysh");
  EXPECT_EQ(b.vty_socket_dir, "/tmp/gtpcp/g1/frr");
  EXPECT_THAT(summary(*r), ::testing::EndsWith(", BGP frr standby AS 4294967295 to 2 neighbours"));
  EXPECT_EQ(findInstanceKey("bgp.service_addresses")->show(*r), "[\"2001:db8::1\", \"10.0.0.1\"]");
}

TEST(InstanceBgp, ModeRoleAndBfdAreNamed) {
  const std::string frr = std::string(kBgpBase) + kFrr;
  auto r = parse(frr + "  role: STANDBY\n  bfd: {enabled: off}\n");
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.role, Bgp::Role::kStandby);
  EXPECT_FALSE(r->bgp.bfd);
  EXPECT_THAT(summary(*r), ::testing::EndsWith(", BGP frr standby AS 65001 to 1 neighbour"));
  r = parse(std::string(kBgpBase) +
            "  mode: bird\n"            // 5
            "  role: backup\n"          // 6
            "  bfd:\n"                  // 7
            "    enabled: true\n");     // 8
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:5: bgp.mode: \"bird\" is not one of off, frr",
                          "gtpcp.yaml:6: bgp.role: \"backup\" is not one of active, standby",
                          "gtpcp.yaml:8: bgp.bfd.enabled: \"true\" is not one of on, off"));
}

TEST(InstanceBgp, ServiceAddressesDefaultToEveryGtpcAddress) {
  auto r = parse(
      "group: g1\nrouting: r.yaml\n"
      "gtpc:\n"
      "  access: {ipv4: 127.0.0.1, ipv6: \"::1\"}\n"
      "  gateway: {ipv4: 127.0.0.1, ipv6: \"2001:db8::9\"}\n");
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.service_addresses, (std::vector<std::string>{"127.0.0.1", "::1", "2001:db8::9"}));
  // An explicit [] is the default too.
  r = parse(std::string(kBgpBase) + "  service_addresses: []\n");
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.service_addresses, (std::vector<std::string>{"127.0.0.1"}));
}

TEST(InstanceBgp, ServiceAddressesAreGtpcAddresses) {
  // Checked with mode off too: switching to frr does not reveal the mistake.
  const auto r = parse(std::string(kBgpBase) +
                       "  service_addresses:\n"  // 5
                       "    - 127.0.0.1\n"       // 6
                       "    - 10.9.9.9\n");      // 7
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:7: bgp.service_addresses[1]: \"10.9.9.9\" is not one of the "
                          "gtpc addresses (127.0.0.1)"));

  // Each of the four gtpc addresses, at most.
  const std::string four =
      "group: g1\nrouting: r.yaml\n"
      "gtpc:\n"
      "  access: {ipv4: 127.0.0.1, ipv6: \"::1\"}\n"
      "  gateway: {ipv4: 127.0.0.2, ipv6: \"::2\"}\n"
      "bgp:\n";  // 6
  const auto ok = parse(four + "  service_addresses: [\"::2\", 127.0.0.2, \"::1\", 127.0.0.1]\n");
  ASSERT_TRUE(ok) << errorText(ok);
  EXPECT_EQ(ok->bgp.service_addresses, (std::vector<std::string>{"::2", "127.0.0.2", "::1", "127.0.0.1"}));
  const auto five =
      parse(four + "  service_addresses: [\"::2\", 127.0.0.2, \"::1\", 127.0.0.1, 127.0.0.1]\n");
  ASSERT_FALSE(five);
  EXPECT_THAT(lines(five.error()), ElementsAre("gtpcp.yaml:7: bgp.service_addresses: has 5 entries; at most 4"));
}

TEST(InstanceBgp, ServiceAddressesAreUnicastLiteralsEachOnce) {
  struct Case {
    const char* value;
    const char* error;
  };
  const Case cases[] = {
      {"127.0.0.1", "bgp.service_addresses: expected a list of IPv4 and IPv6 addresses, found a scalar"},
      {"[localhost]", "bgp.service_addresses[0]: \"localhost\" is not an IPv4 or IPv6 address"},
      {"[127.0.0.1, \"224.0.0.1\"]", "bgp.service_addresses[1]: \"224.0.0.1\" is a multicast address"},
      {"[\"::ffff:127.0.0.1\"]",
       "bgp.service_addresses[0]: \"::ffff:127.0.0.1\" is an IPv4-mapped address (give the IPv4 address itself)"},
      {"[[127.0.0.1]]", "bgp.service_addresses[0]: expected an IPv4 or IPv6 address, found a list"},
      {"[127.0.0.1, \"127.0.0.1\"]",
       "bgp.service_addresses[1]: \"127.0.0.1\" is listed twice (also bgp.service_addresses[0])"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    const auto r = parse(withKey("bgp.service_addresses", c.value).text);
    ASSERT_FALSE(r);
    EXPECT_THAT(lines(r.error()), ElementsAre(HasSubstr(std::string(": ") + c.error)));
  }
}

TEST(InstanceBgp, NeighborsMayBeSixteen) {
  std::string list = "[";
  for (int i = 1; i <= 17; ++i) {
    list += (i > 1 ? ", " : "") + std::string("{address: 10.250.0.") + std::to_string(i) + ", as: 65000}";
    if (i == 16) {
      const auto r = parse(withKey("bgp.neighbors", list + "]").text);
      ASSERT_TRUE(r) << errorText(r);
      ASSERT_EQ(r->bgp.neighbors.size(), 16u);
      EXPECT_EQ(r->bgp.neighbors[15], (Bgp::Neighbor{"10.250.0.16", 65000, ""}));
    }
  }
  const Rendered doc = withKey("bgp.neighbors", list + "]");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("bgp.neighbors")) +
                          ": bgp.neighbors: has 17 entries; at most 16"));
}

TEST(InstanceBgp, ReportsNeighborEntriesWithTheirLine) {
  const auto r = parse(std::string(kBgpBase) +
                       "  neighbors:\n"                 // 5
                       "    - address: 10.250.0.2\n"    // 6
                       "      as: 65000\n"              // 7
                       "    - address: 10.250.0.3\n"    // 8
                       "      as: 65000\n"              // 9
                       "      port: 179\n"              // 10
                       "      pasword: x\n"             // 11
                       "    - address: 10.250.0.4\n"    // 12
                       "    - as: 65000\n"              // 13
                       "    - address: 10.250.0\n"      // 14
                       "      as: 0\n"                  // 15
                       "    - address: \"0.0.0.0\"\n"   // 16
                       "      as: \"65000\"\n"          // 17
                       "    - address: [1]\n"           // 18
                       "      as: 4294967296\n"         // 19
                       "    - 10.250.0.5\n"             // 20
                       "    - address: 10.250.0.2\n"    // 21
                       "      as: 65001\n"              // 22
                       "    - address: \"2001:db8::7\"\n"  // 23
                       "      as:\n"                    // 24
                       "      as: 1\n");                // 25
  ASSERT_FALSE(r);
  EXPECT_THAT(
      lines(r.error()),
      ElementsAre(
          "gtpcp.yaml:10: bgp.neighbors[1].port: unknown key; expected one of: address, as, password",
          "gtpcp.yaml:11: bgp.neighbors[1].pasword: unknown key (did you mean \"password\"?)",
          "gtpcp.yaml:12: bgp.neighbors[2].as: required key is missing",
          "gtpcp.yaml:13: bgp.neighbors[3].address: required key is missing",
          "gtpcp.yaml:14: bgp.neighbors[4].address: \"10.250.0\" is not an IPv4 or IPv6 address",
          "gtpcp.yaml:15: bgp.neighbors[4].as: 0 is out of range 1..4294967295",
          "gtpcp.yaml:16: bgp.neighbors[5].address: \"0.0.0.0\" is the unspecified address",
          "gtpcp.yaml:17: bgp.neighbors[5].as: expected an integer, found the string \"65000\" (write "
          "numbers without quotes)",
          "gtpcp.yaml:18: bgp.neighbors[6].address: expected an IPv4 or IPv6 address, found a list",
          "gtpcp.yaml:19: bgp.neighbors[6].as: 4294967296 is out of range 1..4294967295",
          "gtpcp.yaml:20: bgp.neighbors[7]: expected a mapping of address, as and password, found a "
          "scalar",
          "gtpcp.yaml:21: bgp.neighbors[8].address: \"10.250.0.2\" is already the address of "
          "bgp.neighbors[0]",
          "gtpcp.yaml:24: bgp.neighbors[9].as: has no value",
          "gtpcp.yaml:25: bgp.neighbors[9].as: duplicate key (first given at line 24)"));
}

TEST(InstanceBgp, NeighborsIsAList) {
  const Rendered doc = withKey("bgp.neighbors", "{address: 10.250.0.2, as: 65000}");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("bgp.neighbors")) +
                          ": bgp.neighbors: expected a list of {address, as, password}, found a mapping"));
}

TEST(InstanceBgp, PasswordsArePrintableWithoutSpacesAndNeverRepeated) {
  const std::string longest(80, '~');
  auto ok = parse(withKey("bgp.neighbors", "[{address: 10.250.0.2, as: 1, password: \"" + longest + "\"}]").text);
  ASSERT_TRUE(ok) << errorText(ok);
  EXPECT_EQ(ok->bgp.neighbors[0].password, longest);
  ok = parse(withKey("bgp.neighbors", "[{address: 10.250.0.2, as: 1, password: 0123}]").text);
  ASSERT_TRUE(ok) << errorText(ok);
  EXPECT_EQ(ok->bgp.neighbors[0].password, "0123");  // as written, not a number

  struct Case {
    std::string password;  // as YAML text
    std::string secret;    // what must not appear in the message
    std::string error;
  };
  const Case cases[] = {
      {"\"\"", "", "must not be empty"},
      {"\"" + std::string(81, 'k') + "\"", std::string(81, 'k'), "is 81 characters long; at most 80"},
      {"\"open sesame\"", "open sesame",
       "character 5 is a space or not printable ASCII; a password is 1 to 80 of ! to ~"},
      {"\"p\u00e4ss\"", "p\u00e4ss",
       "character 2 is a space or not printable ASCII; a password is 1 to 80 of ! to ~"},
      {"\"tab\\tbed\"", "tab\tbed",
       "character 4 is a space or not printable ASCII; a password is 1 to 80 of ! to ~"},
      {"[x]", "", "expected a password, found a list"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.password);
    const Rendered doc =
        withKey("bgp.neighbors", "[{address: 10.250.0.2, as: 1, password: " + c.password + "}]");
    const auto r = parse(doc.text);
    ASSERT_FALSE(r);
    EXPECT_THAT(lines(r.error()),
                ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("bgp.neighbors")) +
                            ": bgp.neighbors[0].password: " + c.error));
    if (!c.secret.empty()) {
      EXPECT_THAT(r.error().toString(), Not(HasSubstr(c.secret)));
    }
  }
}

TEST(InstanceBgp, FrrNeedsLocalAsAndNeighbors) {
  auto r = parse(std::string(kBgpBase) + kFrr);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.local_as, 65001u);
  EXPECT_THAT(r->bgp.neighbors, ElementsAre(Bgp::Neighbor{"10.250.0.2", 65000, ""}));

  r = parse(std::string(kBgpBase) + "  mode: frr\n");
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:5: bgp.mode: bgp.mode frr needs bgp.local_as",
                          "gtpcp.yaml:5: bgp.mode: bgp.mode frr needs at least one neighbour in "
                          "bgp.neighbors"));
  r = parse(std::string(kBgpBase) +
            "  mode: frr\n"          // 5
            "  local_as: 65001\n"    // 6
            "  neighbors: []\n");    // 7
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:7: bgp.neighbors: bgp.mode frr needs at least one neighbour "
                          "in bgp.neighbors"));
  // A bad local_as is reported once, as out of range.
  r = parse(std::string(kBgpBase) +
            "  mode: frr\n"
            "  local_as: 0\n"        // 6
            "  neighbors: [{address: 10.250.0.2, as: 65000}]\n");
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()), ElementsAre("gtpcp.yaml:6: bgp.local_as: 0 is out of range 1..4294967295"));
  // Mode off needs neither.
  EXPECT_TRUE(parse(std::string(kBgpBase) + "  mode: off\n"));
}

TEST(InstanceBgp, TheLeaseOutlastsACheck) {
  const std::string frr = std::string(kBgpBase) + kFrr;
  auto r = parse(frr + "  check_interval_ms: 2000\n");  // 8
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:8: bgp.check_interval_ms: bgp.lease_ms (2000) must be longer than "
                          "bgp.check_interval_ms (2000): the bgp-watchdog renews its verdict once per check"));
  r = parse(frr + "  check_interval_ms: 500\n  lease_ms: 500\n");  // 9
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()), ElementsAre(HasSubstr("gtpcp.yaml:9: bgp.lease_ms: bgp.lease_ms (500) must")));
  EXPECT_TRUE(parse(frr + "  check_interval_ms: 1999\n"));
  // Without BGP there is no lease.
  EXPECT_TRUE(parse(std::string(kBgpBase) + "  check_interval_ms: 60000\n  lease_ms: 500\n"));
}

TEST(InstanceBgp, RouterIdIsAnIpv4Address) {
  const Rendered doc = withKey("bgp.router_id", "\"2001:db8::1\"");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("bgp.router_id")) +
                          ": bgp.router_id: \"2001:db8::1\" is not an IPv4 address (it is an IPv6 "
                          "address)"));
}

TEST(InstanceBgp, FrrPathsAreResolvedAndNotEmpty) {
  auto r = parse(withKey("bgp.vty_socket_dir", "run/frr").text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.vty_socket_dir, "/etc/gtpcp/run/frr");
  r = parse(withKey("bgp.vtysh", "\"<group>/vtysh\"").text);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->bgp.vtysh.resolved, "/etc/gtpcp/g1/vtysh");
  for (const char* key : {"bgp.vtysh", "bgp.vty_socket_dir"}) {
    SCOPED_TRACE(key);
    const Rendered doc = withKey(key, "\"\"");
    EXPECT_THAT(lines(parse(doc.text).error()),
                ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at(key)) + ": " + key +
                            ": must not be empty"));
  }
}

// -- derived values ------------------------------------------------------------------

TEST(InstanceConfig, RoundsSizesUpToAPowerOfTwo) {
  struct Case {
    const char* key;
    int64_t configured;
    uint32_t effective;
  };
  const Case cases[] = {
      {"rings.priority_slots", 4096, 4096},      {"rings.priority_slots", 4097, 8192},
      {"rings.priority_slots", 1000000, 1048576}, {"rings.new_slots", 5000, 8192},
      {"rings.new_slots", 1048576, 1048576},     {"sessions.per_partition", 65, 128},
      {"sessions.per_partition", 64, 64},        {"sessions.per_partition", 16383, 16384},
      {"sessions.transactions", 1025, 2048},     {"sessions.transactions", 4194303, 4194304},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.key) + " " + std::to_string(c.configured));
    const auto r = parse(withKey(c.key, std::to_string(c.configured)).text);
    ASSERT_TRUE(r) << errorText(r);
    const std::string key = c.key;
    const PowerOfTwo& p = key == "rings.priority_slots" ? r->rings.priority_slots
                          : key == "rings.new_slots"     ? r->rings.new_slots
                          : key == "sessions.per_partition" ? r->sessions.per_partition
                                                         : r->sessions.transactions;
    EXPECT_EQ(p.configured, static_cast<uint32_t>(c.configured));
    EXPECT_EQ(p.effective, c.effective);
  }
}

TEST(InstanceConfig, DerivesTheTransactionLifetime) {
  auto keys = baseKeys();
  keys["timers.t3_ms"] = "500";
  keys["timers.n3"] = "0";
  auto r = parse(render(keys).text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->timers.transaction_lifetime_ms, 500u);
  keys["timers.t3_ms"] = "60000";
  keys["timers.n3"] = "10";
  r = parse(render(keys).text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->timers.transaction_lifetime_ms, 660000u);
}

TEST(InstanceConfig, GatewayDefaultsToAccess) {
  auto keys = baseKeys();
  keys["gtpc.access.ipv6"] = "\"2001:db8::1\"";
  auto r = parse(render(keys).text);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->gtpc.gateway_from_access);
  EXPECT_EQ(r->gtpc.gateway, r->gtpc.access);
  ASSERT_TRUE(r->gtpc.gateway.ipv6);

  // A gateway section replaces both addresses, not one.
  keys["gtpc.gateway.ipv4"] = "10.0.0.1";
  r = parse(render(keys).text);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->gtpc.gateway_from_access);
  EXPECT_EQ(gtp::toString(*r->gtpc.gateway.ipv4), "10.0.0.1");
  EXPECT_FALSE(r->gtpc.gateway.ipv6);
  EXPECT_EQ(gtp::toString(*r->gtpc.access.ipv4), "127.0.0.1");
}

TEST(InstanceConfig, AGatewaySectionNeedsAnAddress) {
  const std::string text =
      "group: g1\n"
      "routing: r.yaml\n"
      "gtpc:\n"
      "  access: {ipv4: 127.0.0.1}\n"
      "  gateway:\n"
      "    # ipv4: 10.0.0.1\n";
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:5: gtpc.gateway: needs an ipv4 or an ipv6 address (or both); "
                          "remove the section to use the access addresses toward the gateways too"));
}

TEST(InstanceConfig, ResolvesPathsAgainstTheDirectoryOfTheFile) {
  struct Case {
    const char* key;
    const char* value;
    const char* resolved;
  };
  const Case cases[] = {
      {"routing", "routing.yaml", "/etc/gtpcp/routing.yaml"},
      {"routing", "./sub/../r.yaml", "/etc/gtpcp/r.yaml"},
      {"routing", "../r.yaml", "/etc/r.yaml"},
      {"routing", "/srv/routing.yaml", "/srv/routing.yaml"},
      {"routing", "<group>/routing.yaml", "/etc/gtpcp/g1/routing.yaml"},
      {"routing", "\"<run_dir>/routing.yaml\"", "/tmp/gtpcp/g1/routing.yaml"},
      {"run_dir", "/var/run/gtpcp-<group>/", "/var/run/gtpcp-g1"},
      {"run_dir", "run", "/etc/gtpcp/run"},
      {"log.directory", "\"<run_dir>/logs\"", "/tmp/gtpcp/g1/logs"},
      {"log.directory", "/var/log/<group>", "/var/log/g1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.key) + ": " + c.value);
    const auto r = parse(withKey(c.key, c.value).text);
    ASSERT_TRUE(r) << errorText(r);
    EXPECT_EQ(findInstanceKey(c.key)->show(*r), c.resolved);
  }
}

TEST(InstanceConfig, ResolvesARelativeBaseDirectoryAgainstTheCurrentOne) {
  const auto r = parseInstanceConfig(render(baseKeys()).text, kFile, "conf");
  ASSERT_TRUE(r);
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(r->base_dir, cwd + "/conf");
  EXPECT_EQ(r->routing.resolved, cwd + "/conf/routing.yaml");
  const auto here = parseInstanceConfig(render(baseKeys()).text, kFile, "");
  ASSERT_TRUE(here);
  EXPECT_EQ(here->routing.resolved, cwd + "/routing.yaml");
}

TEST(InstanceConfig, ChecksPathPlaceholdersAndLength) {
  Rendered doc = withKey("routing", "\"<grp>/r.yaml\"");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("routing")) +
                          ": routing: \"<grp>/r.yaml\": unknown placeholder \"<grp>\" (known: "
                          "<group>, <run_dir>)"));
  doc = withKey("run_dir", "\"<run_dir>/x\"");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("run_dir")) +
                          ": run_dir: cannot refer to itself (<run_dir>)"));
  doc = withKey("run_dir", "\"\"");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("run_dir")) +
                          ": run_dir: must not be empty"));
  const std::string longest = "/" + std::string(79, 'r');
  EXPECT_TRUE(parse(withKey("run_dir", longest).text));
  doc = withKey("run_dir", longest + "x");
  EXPECT_THAT(lines(parse(doc.text).error()),
              ElementsAre("gtpcp.yaml:" + std::to_string(doc.line.at("run_dir")) +
                          ": run_dir: \"" + longest + "x\" is 81 bytes long; at most 80, so that "
                          "the ipc:// sockets in it fit in a Unix socket path"));
}

// -- several errors at once -------------------------------------------------------------

TEST(InstanceConfig, ReportsEveryErrorWithItsLine) {
  const std::string text =
      "group: g1\n"                 // 1
      "workers: 0\n"                // 2
      "routing: routing.yaml\n"     // 3
      "gtpc:\n"                     // 4
      "  port: 70000\n"             // 5
      "  access:\n"                 // 6
      "    ipv4: 300.1.1.1\n"       // 7
      "timers:\n"                   // 8
      "  t3_ms: 50\n"               // 9
      "  n4: 3\n"                   // 10
      "rings:\n"                    // 11
      "  batch: 0\n";               // 12
  const auto r = parse(text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().toString(),
            "gtpcp.yaml:2: workers: 0 is out of range 1..64\n"
            "gtpcp.yaml:5: gtpc.port: 70000 is out of range 1..65535\n"
            "gtpcp.yaml:7: gtpc.access.ipv4: \"300.1.1.1\" is not an IPv4 address\n"
            "gtpcp.yaml:9: timers.t3_ms: 50 is out of range 100..60000\n"
            "gtpcp.yaml:10: timers.n4: unknown key (did you mean \"n3\"?)\n"
            "gtpcp.yaml:12: rings.batch: 0 is out of range 1..1024\n");
  const ConfigError& first = r.error().errors[0];
  EXPECT_EQ(first.file, "gtpcp.yaml");
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.key, "workers");
  EXPECT_EQ(first.message, "0 is out of range 1..64");
}

// -- files ------------------------------------------------------------------------

TEST(InstanceConfig, LoadsAFileAndResolvesAgainstItsDirectory) {
  testing::TempDir dir;
  const std::string path = dir.write("etc/gtpcp.yaml", render(baseKeys()).text);
  const auto r = loadInstanceConfig(path);
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->file, path);
  EXPECT_EQ(r->routing.resolved, dir.path() + "/etc/routing.yaml");

  const std::string bad = dir.write("bad.yaml", "group: g1\nworkers: 99\n");
  const auto e = loadInstanceConfig(bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().errors[0].toString(), bad + ": routing: required key is missing");
  EXPECT_EQ(e.error().errors[2].toString(), bad + ":2: workers: 99 is out of range 1..64");
}

TEST(InstanceConfig, ReportsAFileThatCannotBeRead) {
  testing::TempDir dir;
  EXPECT_THAT(lines(loadInstanceConfig(dir.path() + "/none.yaml").error()),
              ElementsAre(dir.path() + "/none.yaml: cannot read: No such file or directory"));
  EXPECT_THAT(lines(loadInstanceConfig(dir.path()).error()),
              ElementsAre(dir.path() + ": is a directory, not a file"));
}

TEST(InstanceConfig, ChangedKeysTellWhatAReloadCanApply) {
  const auto a = parse(render(baseKeys()).text);
  auto keys = baseKeys();
  keys["log.level"] = "debug";
  keys["workers"] = "4";
  keys["rings.new_slots"] = "8000";  // rounds up to the same 8192: no change
  const auto b = parse(render(keys).text);
  ASSERT_TRUE(a && b);
  std::vector<std::string> changed;
  for (const KeyInfo* k : changedKeys(*a, *b))
    changed.push_back(std::string(k->path) + " " + std::string(reloadClassName(k->reload)));
  EXPECT_THAT(changed, ElementsAre("workers restart", "log.level reload"));
  EXPECT_TRUE(changedKeys(*a, *a).empty());
}

TEST(InstanceConfig, ChangedKeysCoverTheBgpKeys) {
  const std::string gtpc =
      "group: g1\nrouting: r.yaml\ngtpc: {access: {ipv4: 127.0.0.1, ipv6: \"::1\"}}\n";
  const auto a = parse(gtpc);
  const std::string bgp =
      "bgp:\n"
      "  mode: frr\n"
      "  role: standby\n"
      "  service_addresses: [\"::1\"]\n"  // the default is both addresses
      "  local_as: 65001\n"
      "  router_id: 10.250.0.1\n"
      "  standby_med: 100\n"
      "  standby_prepend: 1\n"
      "  bfd: {enabled: off, interval_ms: 100, multiplier: 5}\n"
      "  check_interval_ms: 500\n"
      "  withdraw_hold_ms: 1\n"
      "  return_hold_ms: 1\n"
      "  damping: {flaps: 1, window_s: 1, hold_ms: 1}\n"
      "  lease_ms: 1000\n"
      "  stop_settle_ms: 100\n"
      "  storage_ack_ms: 100\n"
      "  vtysh: /bin/vtysh\n"
      "  vty_socket_dir: /run/frr\n"
      "  neighbors:\n"
      "    - address: 10.250.0.2\n"
      "      as: 65000\n";
  const auto b = parse(gtpc + bgp);
  ASSERT_TRUE(a && b) << errorText(a) << errorText(b);
  std::vector<std::string> expected;
  for (const KeyInfo& k : instanceKeys())
    if (!k.isSection() && k.path.starts_with("bgp.")) expected.push_back(std::string(k.path));
  std::vector<std::string> changed;
  for (const KeyInfo* k : changedKeys(*a, *b)) changed.push_back(std::string(k->path));
  EXPECT_EQ(changed, expected);

  // A new password alone is a change (of a restart key).
  const auto c = parse(gtpc + bgp + "      password: k3y\n");
  ASSERT_TRUE(c) << errorText(c);
  EXPECT_EQ(c->bgp.neighbors[0].password, "k3y");
  changed.clear();
  for (const KeyInfo* k : changedKeys(*b, *c))
    changed.push_back(std::string(k->path) + " " + std::string(reloadClassName(k->reload)));
  EXPECT_THAT(changed, ElementsAre("bgp.neighbors restart"));
}

TEST(InstanceConfig, SummaryNamesTheEssentials) {
  const auto r = parse(render(baseKeys()).text);
  ASSERT_TRUE(r);
  EXPECT_EQ(summary(*r),
            "group g1 instance a, 2 workers, GTP-C port 2123 access 127.0.0.1 gateway (= access), "
            "run_dir /tmp/gtpcp/g1, BGP off");
}

// -- the example file -----------------------------------------------------------------

// Set GTPCP_UPDATE_EXAMPLES=1 to rewrite config/gtpcp.yaml from the table.
TEST(InstanceExample, IsTheRenderingOfTheTable) {
  const std::string path = testing::sourcePath("config/gtpcp.yaml");
  const std::string rendered = renderInstanceExample();
  if (const char* update = std::getenv("GTPCP_UPDATE_EXAMPLES"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << rendered;
  }
  EXPECT_EQ(testing::readFile(path), rendered)
      << "config/gtpcp.yaml is out of date: run gtpcp_config_tests with "
         "GTPCP_UPDATE_EXAMPLES=1 --gtest_filter=InstanceExample.IsTheRenderingOfTheTable";
}

TEST(InstanceExample, Loads) {
  const auto r = loadInstanceConfig(testing::sourcePath("config/gtpcp.yaml"));
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_EQ(r->group, "local");
  EXPECT_EQ(r->workers, 2u);
  EXPECT_EQ(gtp::toString(*r->gtpc.access.ipv4), "127.0.0.1");
  EXPECT_TRUE(r->gtpc.gateway_from_access);
  EXPECT_EQ(r->routing.resolved, testing::sourcePath("config/routing.yaml"));
}

// "  # key: value" -> "  key: value"; other lines unchanged.
std::string uncomment(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && line.compare(indent, 2, "# ") == 0) {
      const std::size_t key_end = line.find(':', indent + 2);
      const std::string key =
          key_end == std::string::npos ? "" : line.substr(indent + 2, key_end - indent - 2);
      const bool is_key = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") ==
                                              std::string::npos;
      if (is_key) line.erase(indent, 2);
    }
    out += line + "\n";
    start = end + 1;
  }
  return out;
}

// Every key of the table is in the example, set or commented out; with the
// commented-out lines restored the file is still valid.
TEST(InstanceExample, NamesEveryKey) {
  const std::string text = testing::readFile(testing::sourcePath("config/gtpcp.yaml"));
  // Restore the "# key: value" lines after the header (whose prose has colons).
  const std::size_t body = text.find("\n\n");
  ASSERT_NE(body, std::string::npos);
  const std::string uncommented = text.substr(0, body) + uncomment(text.substr(body));
  const YAML::Node root = YAML::Load(uncommented);
  for (const KeyInfo& k : instanceKeys()) {
    YAML::Node node = root;
    bool found = true;
    for (const std::string& part : split(std::string(k.path))) {
      const YAML::Node parent = node;  // const: looking up does not add the key
      if (!parent.IsMap() || !parent[part]) {
        found = false;
        break;
      }
      node.reset(parent[part]);
    }
    EXPECT_TRUE(found) << k.path << " is not in config/gtpcp.yaml";
    if (!k.isSection()) {
      EXPECT_THAT(text, HasSubstr("# " + std::string(k.doc) + "\n")) << k.path;
      EXPECT_THAT(text, HasSubstr("# " + k.typeText() + "; ")) << k.path;
    }
  }
  const auto r = parseInstanceConfig(uncommented, "uncommented", "/etc/gtpcp");
  ASSERT_TRUE(r) << errorText(r);
  EXPECT_FALSE(r->gtpc.gateway_from_access);
  EXPECT_TRUE(r->gtpc.access.ipv6);
  // The commented-out BGP keys are the start of a configuration for FRR.
  EXPECT_THAT(text, HasSubstr("\n  # neighbors: [{address: 10.250.0.2, as: 65000}]\n"));
  EXPECT_EQ(r->bgp.mode, InstanceConfig::Bgp::Mode::kOff);
  EXPECT_EQ(r->bgp.local_as, 65001u);
  EXPECT_THAT(r->bgp.neighbors, ElementsAre(InstanceConfig::Bgp::Neighbor{"10.250.0.2", 65000, ""}));
  EXPECT_EQ(r->bgp.vty_socket_dir, "/var/run/frr");
}

}  // namespace
}  // namespace gtpcp::config

namespace gtpcp::config {
namespace {

TEST(InstanceShares, EachInstanceOfAGroupHasAShareBelowTheGroupsSize) {
  const std::string base = "group: g1\nrouting: r.yaml\ngtpc: {access: {ipv4: 127.0.0.1}}\n";
  auto r = parse(base);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->group_size, 1u);
  EXPECT_EQ(r->instance_index, 0u);
  r = parse(base + "group_size: 2\ninstance_index: 1\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->group_size, 2u);
  EXPECT_EQ(r->instance_index, 1u);
  r = parse(base + "instance_index: 1\n");  // 4
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()),
              ElementsAre("gtpcp.yaml:4: instance_index: instance_index (1) must be below group_size (1): each "
                          "instance of the group has its own share of the session slots, 0 to group_size - 1"));
  r = parse(base + "group_size: 5\n");
  ASSERT_FALSE(r);
  EXPECT_THAT(lines(r.error()), ElementsAre("gtpcp.yaml:4: group_size: 5 is out of range 1..4"));
}

}  // namespace
}  // namespace gtpcp::config
