// The operator's view of a group on this host: start it, stop it, restart one
// process, and read its status from the processes' own segments.
//
// Processes are started detached (their own session, stdout and stderr in
// <run_dir>/<process>.log) and remembered by pid file; the launcher only ever
// signals a pid whose /proc/<pid>/cmdline is the gtpcp binary it started.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config/instance.h"
#include "common/group/paths.h"

namespace gtpcp::launcher {

struct ProcessSpec {
  std::string name;    // "forwarder", "worker-0"
  std::string binary;  // absolute path
  std::vector<std::string> args;
};

class Group {
 public:
  // `config_path` as given; `bin_dir` holds (or leads to) the gtpcp binaries.
  Group(config::InstanceConfig config, std::string config_path, std::string bin_dir);

  const config::InstanceConfig& config() const noexcept { return config_; }
  const group::Paths& paths() const noexcept { return paths_; }
  std::vector<ProcessSpec> processes() const;

  // Starts every process not already running and waits until all serve.
  // Prints one line per process to `out`. False (after stopping what it
  // started) when one fails to come up within `timeout_ms`.
  bool start(std::ostream& out, int timeout_ms = 10000);
  // SIGTERM to every process, SIGKILL after `timeout_ms`; removes the shared
  // memory of the group unless `keep_state`.
  bool stop(std::ostream& out, bool keep_state = false, int timeout_ms = 5000);
  // Stops and starts one process (its shared memory stays: a worker resumes
  // its sessions).
  bool restart(const std::string& name, std::ostream& out, int timeout_ms = 10000);
  // The thread watchdog's replacement of a dead or hung process: SIGKILL if
  // it still runs (a stopped or hung one would not act on SIGTERM), then a
  // new one, waited for until it serves. Skipped (false, `busy` set) while
  // someone else replaces it; `was_running` says whether it had to be killed.
  bool replace(const std::string& name, std::ostream& out, int timeout_ms, bool& busy);

  // Processes, sessions per worker, ring depths and every non-zero counter.
  nlohmann::json status() const;
  static void printStatus(const nlohmann::json& status, std::ostream& out);

  // The pid of a live process started for this group, if any.
  std::optional<int> runningPid(const std::string& name) const;
  // SIGTERM to one process, SIGKILL after `timeout_ms`; false when it had to
  // be killed. (SIGTERM to the watchdog drains and stops the whole group.)
  bool terminate(const std::string& name, int timeout_ms, std::ostream& out);
  // Waits until `name` serves as pid `pid` with more than `starts_before`
  // starts (the watchdog restarting itself keeps its pid).
  bool waitServing(const std::string& name, int pid, int timeout_ms, std::ostream& out,
                   uint64_t starts_before = 0);
  // How many times `name` started, from its segment (0: none yet).
  uint64_t starts(const std::string& name) const;

 private:
  std::optional<int> spawn(const ProcessSpec& spec, std::ostream& out);
  std::string findBinary(const std::string& name) const;
  // The embedded redis-server (storage.mode embedded), or nothing.
  std::optional<ProcessSpec> embeddedRedis() const;
  bool startRedis(std::ostream& out, int timeout_ms);
  // The group's Recovery for this start, written to the run directory.
  bool settleRecovery(std::ostream& out);

  config::InstanceConfig config_;
  std::string config_path_;
  std::string bin_dir_;
  group::Paths paths_;
};

// The directory of the running executable.
std::string selfDirectory();

}  // namespace gtpcp::launcher
