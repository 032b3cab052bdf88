// Structured logs of a real group: with log.format json, every line of every
// process's log file is a JSON object with the fields operators' tools
// parse, a refused reload's several errors one of them; SIGHUP to one
// process (by its PID, as logrotate's postrotate sends it) after its log was
// moved has it write to a new file, stderr included.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/integration/fixture.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether descriptor `fd` of process `pid` is open on `path`.
bool openOn(int pid, int fd, const std::string& path) {
  struct stat a {}, b {};
  const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  return ::stat(link.c_str(), &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// Every line of `path` as a JSON object of `process`; failures name the line.
std::vector<json> jsonLines(const std::string& path, const std::string& process) {
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  std::vector<json> out;
  std::istringstream in(readText(path));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    SCOPED_TRACE(path + ":" + std::to_string(n) + ": " + line);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      ADD_FAILURE() << "not JSON: " << e.what();
      continue;
    }
    const bool fields = j.is_object() && j.size() >= 5 && j.contains("time") && j["time"].is_string() &&
                        j.contains("level") && j["level"].is_string() && j.contains("process") &&
                        j.contains("pid") && j["pid"].is_number_integer() && j.contains("event") &&
                        j["event"].is_string();
    if (!fields) {
      ADD_FAILURE() << "not an object of time, level, process, pid, event";
      continue;
    }
    EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(), kTime));
    EXPECT_EQ(j["process"], process);
    out.push_back(j);
  }
  return out;
}

TEST_F(DataPathTest, JsonLogsOfEveryProcessAndSighupReopensOne) {
  testing::GroupOptions o;
  o.workers = 2;
  // Nothing answers the gateway's Echo Requests: it goes down, an event
  // with fields.
  o.routing_yaml = onlyGateway(ip(21), "health_check: {interval_ms: 200, misses: 2}\n");
  o.extra_yaml = "log:\n  format: json\n";
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  const bool down_event = testing::waitUntil(
      [&] {
        for (const json& j : jsonLines(g.runDir() + "/forwarder.log", "forwarder"))
          if (j.value("gateway_event", "") == "down" && j.value("gateway", "") == "only" &&
              j.value("misses", 0) == 2 && j.value("address", "") == ip(21) + ":2123" && j["level"] == "warning")
            return true;
        return false;
      },
      5s, 50ms);
  EXPECT_TRUE(down_event) << readText(g.runDir() + "/forwarder.log");

  // A refused reload logs its list of errors: several lines, one event.
  const std::string bad = g.dir().path() + "/routing-bad.yaml";
  std::ofstream(bad) << "version: 1\npools:\n  internet:\n    gateways:\n      - {name: only, address: " << ip(21)
                     << "}\nrules:\n  - {name: a, pool: nowhere1}\n  - {name: b, pool: nowhere2}\n";
  const auto refused = g.gtpcp({"reload", "--routing", bad});
  note(refused.text);
  EXPECT_NE(refused.status, 0) << refused.text;
  const bool logged_refusal = testing::waitUntil(
      [&] {
        for (const json& j : jsonLines(g.runDir() + "/watchdog.log", "watchdog")) {
          const std::string event = j["event"];
          if (event.rfind("reload refused:", 0) == 0 && event.find('\n') != std::string::npos &&
              event.find("nowhere1") != std::string::npos && event.find("nowhere2") != std::string::npos)
            return true;
        }
        return false;
      },
      5s, 20ms);
  EXPECT_TRUE(logged_refusal) << readText(g.runDir() + "/watchdog.log");

  // Every process of the group, gtpcp-console included when it runs.
  std::set<std::string> logged;
  for (const auto& entry : std::filesystem::directory_iterator(g.runDir())) {
    if (entry.path().extension() != ".log") continue;
    const std::string process = entry.path().stem().string();
    const std::vector<json> lines = jsonLines(entry.path().string(), process);
    if (!lines.empty()) logged.insert(process);
  }
  for (const std::string process : {"watchdog", "forwarder", "worker-0", "worker-1"})
    EXPECT_TRUE(logged.count(process)) << process << " logged nothing";

  // logrotate's scheme: move the file, signal the process by its pid file.
  const std::string log = g.runDir() + "/worker-1.log";
  const std::string moved = log + ".1";
  int pid = 0;
  std::ifstream(g.runDir() + "/worker-1.pid") >> pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(pid, g.pidOf("worker-1"));
  ASSERT_TRUE(openOn(pid, STDERR_FILENO, log)) << "the launcher points stderr at the log";
  std::filesystem::rename(log, moved);
  ASSERT_EQ(::kill(pid, SIGHUP), 0);

  // Nothing else makes the worker log: the reopen's own line is the proof.
  const bool reopened = testing::waitUntil(
      [&] {
        if (!std::filesystem::exists(log)) return false;
        for (const json& j : jsonLines(log, "worker-1"))
          if (j["event"] == "log file reopened on SIGHUP" && j["pid"] == pid) return true;
        return false;
      },
      5s, 20ms);
  ASSERT_TRUE(reopened) << "new file: " << readText(log) << "\nmoved file: " << readText(moved);
  EXPECT_TRUE(openOn(pid, STDERR_FILENO, log)) << "stderr follows the new file";
  EXPECT_TRUE(openOn(pid, STDOUT_FILENO, log)) << "stdout follows the new file";
  EXPECT_EQ(readText(moved).find("reopened"), std::string::npos);
  jsonLines(moved, "worker-1");  // still every line JSON

  // The worker served on: same process, and the group still answers status.
  EXPECT_EQ(::kill(pid, 0), 0);
  EXPECT_EQ(g.pidOf("worker-1"), pid);
}

TEST_F(DataPathTest, WithLogDirectoryJournaldEveryProcessWritesToTheLaunchersStderrWithPriorities) {
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = onlyGateway(ip(21), kNoHealthChecks);
  o.extra_yaml = "log:\n  directory: journald\n";
  TestGroup& g = makeGroup(o);
  // As systemd starts it: the launcher's stderr is the journal's stream, and
  // every process it starts keeps it (here a file, since a pipe would be held
  // open by the group after the launcher exits).
  const std::string journal = g.dir().path() + "/journal.txt";
  const auto started = testing::run({"/bin/sh", "-c",
                                     "exec " + testing::binDir() + "/gtpcp -c " + g.configPath() + " start >>" +
                                         journal + " 2>&1"},
                                    30s);
  ASSERT_TRUE(started);
  ASSERT_EQ(started->status, 0) << readText(journal);
  // The processes say they serve; the journal gets those lines, each with
  // its sd-daemon priority and no time stamp of its own (journald adds one).
  static const std::regex kLine(R"(<[0-7]>.*)");
  std::set<std::string> seen;
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        seen.clear();
        std::istringstream in(readText(journal));
        for (std::string line; std::getline(in, line);) {
          if (line.rfind("<6>", 0) != 0) continue;
          for (const std::string process : {"forwarder", "worker-0", "worker-1", "console", "watchdog"})
            if (line.find(process) != std::string::npos) seen.insert(process);
        }
        return seen.size() == 5;
      },
      5s, 50ms))
      << readText(journal);
  std::istringstream in(readText(journal));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("group ", 0) == 0 || line.find(" pid ") != std::string::npos || line.rfind("recovery:", 0) == 0)
      continue;  // the launcher's own report on stdout
    EXPECT_TRUE(std::regex_match(line, kLine)) << line;
    EXPECT_FALSE(std::regex_search(line, std::regex(R"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d)"))) << line;
  }
  // No log file is made.
  for (const auto& entry : std::filesystem::directory_iterator(g.runDir()))
    EXPECT_NE(entry.path().extension(), ".log") << entry.path();
  EXPECT_EQ(g.gtpcp({"stop"}).status, 0);
}

}  // namespace
}  // namespace gtpcp::integration
