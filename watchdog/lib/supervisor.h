// The thread watchdog's judgement, apart from its sockets and processes:
// which process to replace, when, and when to give up (DESIGN.md, "Processes").
//
// A process is replaced when it is dead, or alive but silent for longer than
// the timeout (its main loop hung or it was stopped). A process (re)started
// gets a grace period to come up before silence counts. Replacements of one
// process are spaced by a back-off that doubles from backoff_min to
// backoff_max and resets once it has run stable_ns without failing; past
// max_restarts within window_ns the watchdog gives up on it and says why,
// rather than restarting a process that dies at start forever.
//
// Single-threaded; time is passed in (CLOCK_MONOTONIC), so tests drive it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gtpcp::watchdog {

struct SupervisorSettings {
  uint64_t timeout_ns = 1'000'000'000;
  uint64_t start_grace_ns = 5'000'000'000;
  uint64_t backoff_min_ns = 100'000'000;
  uint64_t backoff_max_ns = 10'000'000'000;
  uint32_t max_restarts = 5;
  uint64_t window_ns = 60'000'000'000;
  uint64_t stable_ns = 30'000'000'000;
};

class Supervisor {
 public:
  explicit Supervisor(const SupervisorSettings& settings) : settings_(settings) {}

  // Watches `name`, which was just started (its grace period begins).
  void watch(const std::string& name, uint64_t now_ns);
  void heartbeat(const std::string& name, uint32_t pid, uint64_t now_ns);

  struct Replacement {
    std::string name;
    std::string reason;        // "exited", "silent for 1234 ms"
    uint64_t detected_ns = 0;  // when the failure was first seen
  };
  // What to replace now. `alive(name)`: a process of that name runs.
  std::vector<Replacement> due(uint64_t now_ns, const std::function<bool(const std::string&)>& alive);
  // A replacement was tried: `ok` when the new process serves; it took
  // `took_ns` from the decision (kill, start, serving).
  void replaced(const std::string& name, bool ok, uint64_t now_ns, uint64_t took_ns = 0);
  // What the process said last when it failed to come up (its log's last
  // error line), for gtpcp status.
  void failedWith(const std::string& name, const std::string& error);
  // Someone else (the operator's gtpcp restart) replaced it: a new grace period.
  void restartedElsewhere(const std::string& name, uint64_t now_ns);

  bool givenUp(const std::string& name) const;
  uint64_t restarts() const noexcept { return restarts_; }
  // Per process: state, restarts, last reason, why given up.
  nlohmann::json status(uint64_t now_ns) const;

 private:
  struct Watched {
    uint64_t last_beat_ns = 0;
    uint64_t grace_until_ns = 0;
    uint64_t detected_ns = 0;      // 0: no failure pending
    uint64_t next_allowed_ns = 0;  // back-off
    uint64_t last_restart_ns = 0;
    uint32_t consecutive = 0;      // replacements since it last ran stable
    uint32_t pid = 0;
    uint64_t total = 0;
    uint64_t took_ns = 0;          // the last replacement, decision to serving
    std::deque<uint64_t> recent;   // replacement times within the window
    std::string reason;            // of the last failure
    std::string gave_up;           // empty unless given up
    std::string error;             // the last failed start's last error line
  };

  SupervisorSettings settings_;
  std::map<std::string, Watched> watched_;
  uint64_t restarts_ = 0;
};

}  // namespace gtpcp::watchdog
