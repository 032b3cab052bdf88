// Running the real gtpcp-peer and gtpcp-relay binaries from a test: start
// with fork/exec (output to files), wait with a bound, stop by PID.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gtpcp::peer::testing {

class Subprocess {
 public:
  // Starts argv[0] with argv; stdout and stderr go to `out_path` and
  // `err_path`. The child gets SIGKILL if the test process dies.
  Subprocess(const std::vector<std::string>& argv, const std::string& out_path,
             const std::string& err_path);
  // Kills the child (SIGKILL) if it is still running.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // Waits up to `timeout` for the exit; the exit status, or nullopt if the
  // child is still running (or died of a signal: then -signal).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, then wait up to `timeout`, then SIGKILL. Returns the status.
  std::optional<int> terminate(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// True once a UDP socket is bound to addr:port (host order), from
// /proc/net/udp. Polls up to `timeout`.
bool waitUdpBound(uint32_t addr, uint16_t port, std::chrono::milliseconds timeout);

std::string readFile(const std::string& path);

}  // namespace gtpcp::peer::testing
