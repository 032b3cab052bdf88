// Test support: a gtpcp group of real processes on a loopback address of its
// own, configured in a temporary directory and stopped (with its shared
// memory removed) when the object goes away.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace gtpcp::testing {

// What a test may choose of gtpcp.yaml; everything else takes its default.
struct GroupOptions {
  unsigned workers = 2;
  std::string routing_yaml;               // the routing document's text
  std::optional<gtp::Ipv4> address;       // gtpc.access.ipv4; default: freeLoopback()
  std::string address6;                   // gtpc.access.ipv6; default: none
  std::optional<unsigned> recovery;       // gtpc.recovery
  std::optional<unsigned> t3_ms;          // timers.t3_ms
  std::optional<unsigned> n3;             // timers.n3
  std::optional<unsigned> priority_slots; // rings.priority_slots
  std::optional<unsigned> new_slots;      // rings.new_slots
  std::string log_level;                  // log.level; default info
  // The storage section's keys, as YAML indented under it; default
  // "mode: off" (no Redis), so that tests run side by side without sharing one.
  std::string storage_yaml = "  mode: off\n";
  std::string extra_yaml;                 // more top-level keys, as YAML text
  // Another instance of an existing group (same name, same storage); default:
  // a group name of its own and instance "a".
  std::string group;
  std::string instance;
  // The network namespace (`ip netns` name) the group's processes run in:
  // the launcher is started there and its processes inherit it. Empty: the
  // test's own.
  std::string netns;
};

class TestGroup {
 public:
  // gtpcp-console's port, on the group's access address (unless
  // extra_yaml has a management section of its own).
  static constexpr unsigned kManagementPort = 9123;

  // The proxy's address is options.address or a free 127.x.y.z; the group
  // name is unique. Writes gtpcp.yaml and routing.yaml; starts nothing.
  explicit TestGroup(const GroupOptions& options);
  // `routing_yaml`: the routing document's text. `extra_yaml`: more keys of
  // gtpcp.yaml (indented as top-level keys).
  TestGroup(unsigned workers, const std::string& routing_yaml, const std::string& extra_yaml = "");
  ~TestGroup();

  // `gtpcp start`; true when every process serves (the launcher's output is
  // kept for diagnostics()).
  bool start();
  // `gtpcp stop` (removes the group's shared memory) when the group was
  // started or has shared memory left. Idempotent.
  void stop();
  // Runs the launcher with these arguments after "-c <config>".
  Output gtpcp(const std::vector<std::string>& args);
  nlohmann::json status();
  // "http://127.x.y.z:9123": where the group's gtpcp-console listens.
  std::string managementUrl() const;
  // A worker's or the forwarder's counter from `gtpcp status --json`, by its
  // full name ("forwarder.rejected_overload", "worker.sessions_created").
  uint64_t counter(const std::string& process, const std::string& name);
  // `name`'s counter summed over every worker of `status`.
  static uint64_t workerSum(const nlohmann::json& status, const std::string& name);
  // The entry of `process` ("forwarder", "worker-0") in `status`.
  static nlohmann::json process(const nlohmann::json& status, const std::string& process);
  // The pid `gtpcp status` gives for `process`, 0 when it runs no more.
  int pidOf(const std::string& process);

  // The instance's objects now in /dev/shm ("gtpcp.<group>.<instance>.*"):
  // empty once stopped.
  std::vector<std::string> sharedMemoryObjects() const;
  // What a failing test prints: launcher output, `gtpcp status`, the tail of
  // every log in the run directory.
  std::string diagnostics();

  const std::string& configPath() const noexcept { return config_; }
  const std::string& runDir() const noexcept { return run_dir_; }
  const std::string& group() const noexcept { return group_; }
  const gtp::Ipv4& address() const noexcept { return address_; }
  std::string addressText() const { return testing::toString(address_); }
  unsigned workers() const noexcept { return workers_; }
  const TempDir& dir() const noexcept { return dir_; }

 private:
  TempDir dir_;
  gtp::Ipv4 address_;
  unsigned workers_;
  std::string group_;
  std::string instance_;
  std::string config_;
  std::string run_dir_;
  std::string launcher_output_;
  std::string netns_;
  bool started_ = false;
};

}  // namespace gtpcp::testing
