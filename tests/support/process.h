// Test support: real processes and loopback addresses for integration tests.
//
// Tests start the product's binaries, the tools (gtpcp-peer, gtpcp-relay) and
// third-party peers as children, bounded in time, and stop them by PID (never
// by name); every child still running when its Child object goes away is
// killed. Exit statuses read as a shell reports them: the exit code, or
// 128 + the signal that ended the process.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/gtp/values.h"

namespace gtpcp::testing {

class Child {
 public:
  // Starts argv[0] (a path) with stdout and stderr appended to `log` (or
  // inherited when empty). The child gets SIGKILL if the test process dies,
  // and starts with no signal blocked whatever the test's threads block.
  static Child spawn(const std::vector<std::string>& argv, const std::string& log = "");
  // The same with stderr to a file of its own (`err`).
  static Child spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err);
  Child() = default;
  Child(Child&& o) noexcept;
  Child& operator=(Child&& o) noexcept;
  ~Child();

  int pid() const noexcept { return pid_; }
  bool running();
  // Waits for the exit status (WEXITSTATUS, or 128 + signal); nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after `grace`; returns the exit status.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  void kill(int signal);

 private:
  int pid_ = -1;
  std::optional<int> status_;
};

// Runs a command to completion (bounded by `timeout`), capturing stdout and
// stderr together. nullopt when it had to be killed.
struct Output {
  int status = -1;
  std::string text;
  std::string errors;  // stderr, when runSeparately() kept it apart
};
std::optional<Output> run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));
// As run(), with stdout in `text` and stderr in `errors`.
std::optional<Output> runSeparately(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A temporary directory removed (with its contents) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A 127.x.y.z address on which UDP port `port` is free now: parallel tests
// each get their own addresses, so they can all use port 2123.
gtp::Ipv4 freeLoopback(uint16_t port = 2123);
std::string toString(const gtp::Ipv4& a);

// A 127.X.Y.0/24 of a test's own (X in 2..251, clear of 127.0.0.x where
// people run things by hand) on which UDP port `port` is free now at every
// host number of `hosts`: the proxy, the emulated SGWs and PGWs of one test.
struct Subnet {
  uint8_t x = 0, y = 0;
  gtp::Ipv4 addr(uint8_t host) const { return gtp::Ipv4{{127, x, y, host}}; }
  std::string ip(uint8_t host) const { return testing::toString(addr(host)); }
  // "a,b,c" of the given hosts, as gtpcp-peer takes them.
  std::string list(std::initializer_list<uint8_t> hosts) const;
};
Subnet freeSubnet(std::initializer_list<uint8_t> hosts, uint16_t port = 2123);

// Whether a UDP socket is bound to address:port now, as /proc/net/udp lists
// it: the way to see that a child is ready without taking the port from it.
bool udpBound(const gtp::Ipv4& address, uint16_t port);
// Polls udpBound() until it holds (true) or `timeout` passes (false).
bool waitUdpBound(const gtp::Ipv4& address, uint16_t port, std::chrono::milliseconds timeout);

// Polls `condition` every `poll` until it holds (true) or `timeout` passes
// (false, after one last look). The way tests wait: never a bare sleep.
bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll = std::chrono::milliseconds(5));

// The path of `program` found on PATH, empty when there is none.
std::string findOnPath(const std::string& program);

// The directory of the build tree's programs (build/<tree>/bin).
std::string binDir();

void writeFile(const std::string& path, const std::string& text);
std::string readFile(const std::string& path);
// The last `lines` lines of a file ("" when it cannot be read).
std::string tailFile(const std::string& path, std::size_t lines);

}  // namespace gtpcp::testing
