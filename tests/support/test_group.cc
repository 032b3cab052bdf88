#include "tests/support/test_group.h"

#include <fstream>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace gtpcp::testing {

namespace {
std::atomic<int> g_groups{0};

GroupOptions legacyOptions(unsigned workers, const std::string& routing_yaml, const std::string& extra_yaml) {
  GroupOptions o;
  o.workers = workers;
  o.routing_yaml = routing_yaml;
  o.extra_yaml = extra_yaml;
  return o;
}
}  // namespace

TestGroup::TestGroup(unsigned workers, const std::string& routing_yaml, const std::string& extra_yaml)
    : TestGroup(legacyOptions(workers, routing_yaml, extra_yaml)) {}

TestGroup::TestGroup(const GroupOptions& o)
    : address_(o.address ? *o.address : freeLoopback()), workers_(o.workers) {
  group_ = !o.group.empty() ? o.group : "t" + std::to_string(getpid()) + "-" + std::to_string(g_groups++);
  instance_ = o.instance.empty() ? "a" : o.instance;
  netns_ = o.netns;
  run_dir_ = dir_.file("run");
  config_ = dir_.file("gtpcp.yaml");
  writeFile(dir_.file("routing.yaml"), o.routing_yaml);
  std::ostringstream y;
  y << "group: " << group_ << "\nrun_dir: " << run_dir_ << "\nworkers: " << o.workers
    << "\nrouting: routing.yaml\n";
  if (!o.instance.empty()) y << "instance: " << o.instance << "\n";
  if (!o.log_level.empty()) y << "log:\n  level: " << o.log_level << "\n";
  y << "gtpc:\n  access:\n    ipv4: " << testing::toString(address_) << "\n";
  if (!o.address6.empty()) y << "    ipv6: \"" << o.address6 << "\"\n";
  if (o.recovery) y << "  recovery: " << *o.recovery << "\n";
  if (o.t3_ms || o.n3) {
    y << "timers:\n";
    if (o.t3_ms) y << "  t3_ms: " << *o.t3_ms << "\n";
    if (o.n3) y << "  n3: " << *o.n3 << "\n";
  }
  if (o.priority_slots || o.new_slots) {
    y << "rings:\n";
    if (o.priority_slots) y << "  priority_slots: " << *o.priority_slots << "\n";
    if (o.new_slots) y << "  new_slots: " << *o.new_slots << "\n";
  }
  y << "storage:\n" << o.storage_yaml;
  // gtpcp-console on the group's own loopback address: groups of parallel
  // tests never share a management port.
  if (o.extra_yaml.find("management:") == std::string::npos)
    y << "management:\n  listen: [\"" << testing::toString(address_) << ":" << kManagementPort << "\"]\n";
  y << o.extra_yaml;
  writeFile(config_, y.str());
}

TestGroup::~TestGroup() { stop(); }

Output TestGroup::gtpcp(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (!netns_.empty()) argv = {"ip", "netns", "exec", netns_};
  for (const auto& a : {binDir() + "/gtpcp", std::string("-c"), config_}) argv.push_back(a);
  argv.insert(argv.end(), args.begin(), args.end());
  auto out = run(argv, std::chrono::seconds(30));
  if (!out) throw std::runtime_error("gtpcp " + (args.empty() ? std::string() : args[0]) + " did not finish");
  return *out;
}

bool TestGroup::start() {
  started_ = true;
  const Output out = gtpcp({"start"});
  launcher_output_ += "$ gtpcp start\n" + out.text;
  return out.status == 0;
}

void TestGroup::stop() {
  // A group whose processes a test started itself (no launcher) still has
  // shared memory to remove.
  if (!started_ && sharedMemoryObjects().empty()) return;
  started_ = false;
  const Output out = gtpcp({"stop"});
  launcher_output_ += "$ gtpcp stop\n" + out.text;
}

std::string TestGroup::managementUrl() const {
  return "http://" + testing::toString(address_) + ":" + std::to_string(kManagementPort);
}

nlohmann::json TestGroup::status() {
  const Output out = gtpcp({"status", "--json"});
  return nlohmann::json::parse(out.text);
}

uint64_t TestGroup::counter(const std::string& process, const std::string& name) {
  const nlohmann::json s = status();
  if (process == "forwarder") return s.at("counters").value(name, uint64_t{0});
  for (const auto& p : s.at("processes")) {
    if (p.at("name") == process && p.contains("counters")) return p.at("counters").value(name, uint64_t{0});
  }
  return 0;
}

uint64_t TestGroup::workerSum(const nlohmann::json& status, const std::string& name) {
  uint64_t sum = 0;
  for (const auto& p : status.at("processes")) {
    if (p.contains("counters")) sum += p.at("counters").value(name, uint64_t{0});
  }
  return sum;
}

nlohmann::json TestGroup::process(const nlohmann::json& status, const std::string& name) {
  for (const auto& p : status.at("processes")) {
    if (p.at("name") == name) return p;
  }
  return nlohmann::json::object();
}

int TestGroup::pidOf(const std::string& name) {
  const nlohmann::json p = process(status(), name);
  return p.contains("pid") && p.at("pid").is_number() ? p.at("pid").get<int>() : 0;
}

std::vector<std::string> TestGroup::sharedMemoryObjects() const {
  std::vector<std::string> out;
  const std::string prefix = "gtpcp." + group_ + "." + instance_ + ".";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

std::string TestGroup::diagnostics() {
  std::string out = "---- group " + group_ + " on " + addressText() + " (" + config_ + ")\n" + launcher_output_;
  try {
    out += "$ gtpcp status\n" + gtpcp({"status"}).text;
  } catch (const std::exception& e) {
    out += std::string("gtpcp status: ") + e.what() + "\n";
  }
  std::vector<std::string> logs{"forwarder"};
  for (unsigned w = 0; w < workers_; ++w) logs.push_back("worker-" + std::to_string(w));
  for (const char* other : {"persister", "console", "watchdog", "bgp-watchdog", "bgpd-bridge"}) {
    if (std::ifstream(run_dir_ + "/" + other + ".log")) logs.push_back(other);
  }
  for (const auto& name : logs) {
    out += "---- " + run_dir_ + "/" + name + ".log (last 60 lines)\n" + tailFile(run_dir_ + "/" + name + ".log", 60);
  }
  return out;
}

}  // namespace gtpcp::testing
