// Test support: one run of the peer emulator (gtpcp-peer), bounded in time,
// with its output and JSON summary kept for the test's checks and for the
// failure message.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace gtpcp::testing {

struct PeerResult {
  std::optional<int> status;  // nullopt: it overran its bound and was killed
  std::string output;         // stdout and stderr
  nlohmann::json summary = nlohmann::json::object();  // --json; empty when not written

  bool ok() const { return status && *status == 0; }
  // The summary's value at `pointer` ("/mismatches/total"), 0 when absent.
  uint64_t value(const std::string& pointer) const;
  // Output and summary, for a failure message.
  std::string describe() const;
};

class PeerRun {
 public:
  // Starts build/<tree>/bin/gtpcp-peer with `args` and `--json`, writing
  // <dir>/<name>.out and <dir>/<name>.json; inside network namespace
  // `netns` when given (`ip netns exec` runs it: the pid is the emulator's).
  PeerRun(const std::vector<std::string>& args, const std::string& dir, const std::string& name = "peer",
          const std::string& netns = "");

  int pid() const noexcept { return child_.pid(); }
  bool running() { return child_.running(); }
  // Waits for the exit; past `timeout` the emulator is killed (status nullopt).
  PeerResult wait(std::chrono::milliseconds timeout);

 private:
  Child child_;
  std::string out_;
  std::string json_;
};

// Starts a run and waits for it.
PeerResult runPeer(const std::vector<std::string>& args, const std::string& dir,
                   std::chrono::milliseconds timeout, const std::string& name = "peer");

}  // namespace gtpcp::testing
