// Test support: FRR (zebra, bgpd, bfdd, staticd) run by hand inside a
// network namespace of the test's own, the router of the proxy's BGP
// failover tests and the BGP speaker beside a proxy.
//
// No watchfrr, no /etc/frr/daemons: each daemon is a Child of the test,
// started through `ip netns exec` (so its PID is the daemon's), with every
// path of its own in a private state directory: config, pid file, logs,
// vty sockets (--vty_socket), the zebra API socket (-z) and bfdd's control
// socket (--bfdctl, /var/run/frr/bfdd.sock otherwise, shared by every bfdd
// of the machine). The daemons drop to user frr, so the directory belongs
// to frr and sits under /tmp with mode 0755 (every directory above it must
// be traversable by frr: TMPDIR may not be). They start with an empty
// configuration; configure() sends commands through vtysh and remembers
// them, so restart() brings the daemons back configured.
//
// Stopped by PID: SIGCONT then SIGTERM, SIGKILL after a grace. A daemon
// that changed user has lost Child's parent-death signal: if the test
// process dies, the next test process's first Netns kills them (see
// netns.h) and its first Frr removes the state directories left.
//
// Root only. Not thread-safe: one test thread drives it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/netns.h"
#include "tests/support/process.h"

namespace gtpcp::testing {

enum class FrrDaemon { kZebra, kBgpd, kBfdd, kStaticd };
// "zebra", "bgpd", "bfdd", "staticd": the program and its file names.
const char* toString(FrrDaemon d) noexcept;

struct BgpNeighbor {
  std::string address;
  uint32_t remote_as = 0;
};

// A BFD profile: transmit and receive intervals, detect multiplier (a peer
// is down after interval x multiplier without a packet).
struct BfdProfile {
  std::chrono::milliseconds interval{300};
  unsigned multiplier = 3;
};

// Per-neighbour BGP timers. FRR's defaults (60 / 180 / 120 s) make a test
// wait minutes after a failed first connection; these suit a test.
struct BgpTimers {
  std::chrono::seconds keepalive{3};
  std::chrono::seconds hold{9};
  std::chrono::seconds connect_retry{1};
};

class Frr {
 public:
  // Empty when FRR can run here, else why not (not root, a daemon or vtysh
  // missing, no user frr): the reason a test gives GTEST_SKIP.
  static std::string unavailable();

  // Starts the four daemons in `ns` (which must outlive this object) and
  // waits, 10 s at most each, for zebra's API socket and every daemon's vty
  // socket. Throws, naming the daemon and with its log's tail, when one
  // does not come up; nothing is left running then.
  explicit Frr(const Netns& ns);
  // stop(), then the state directory is removed.
  ~Frr();
  Frr(const Frr&) = delete;
  Frr& operator=(const Frr&) = delete;

  // `ip netns exec NS vtysh --vty_socket DIR -c C1 -c C2 ...`: stdout and
  // stderr together, status 0 when every command succeeded (vtysh stops at
  // the first that fails, status 1). nullopt when killed after `timeout`.
  std::optional<Output> vtysh(const std::vector<std::string>& commands,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  // One show command ending in "json", parsed; null when vtysh fails or
  // prints no JSON, so polls can just retry. vtysh waits for a frozen
  // (SIGSTOP) daemon it asks: null after `timeout` then.
  nlohmann::json vtyshJson(const std::string& command,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // `configure terminal`, `lines`, `end` in one vtysh call; throws with the
  // output when a line fails. Remembered, in order, for restart().
  void configure(const std::vector<std::string>& lines);
  // A BGP speaker: `router bgp AS`, router-id, no eBGP policy required
  // (FRR 8 drops eBGP routes without one otherwise), each neighbour with
  // `timers` and, when `bfd` is given, BFD with that profile (named
  // kBfdProfileName). Address families and announcements are the caller's.
  void configureRouter(uint32_t as, const std::string& router_id, const std::vector<BgpNeighbor>& neighbors,
                       std::optional<BfdProfile> bfd, const BgpTimers& timers = {});
  static constexpr const char* kBfdProfileName = "gtpcp";

  // The neighbour's BGP state ("Established", "Active", ...) from `show bgp
  // neighbors json`, and the BFD session's status with `peer` ("up", "down",
  // "init") from `show bfd peers json`; "" when unknown or vtysh fails.
  std::string bgpState(const std::string& neighbor) const;
  std::string bfdStatus(const std::string& peer) const;

  // The daemon's PID as last started (it may have exited since: running()).
  int pid(FrrDaemon d) const noexcept { return children_[index(d)].pid(); }
  bool running(FrrDaemon d) { return children_[index(d)].running(); }
  // A signal to one daemon: SIGSTOP / SIGCONT freeze and resume it (a hung
  // host keeps its TCP connections open), SIGKILL kills it.
  void kill(FrrDaemon d, int signal) { children_[index(d)].kill(signal); }
  // Stops every daemon (staticd, bfdd, bgpd, zebra): SIGCONT, SIGTERM,
  // SIGKILL after 3 s. Idempotent.
  void stop();
  // stop(), start again in the same directory, and replay configure().
  void restart();

  const std::string& stateDir() const noexcept { return dir_; }
  const std::string& vtySocketDir() const noexcept { return dir_; }
  std::string logFile(FrrDaemon d) const { return dir_ + "/" + toString(d) + ".log"; }
  // The last `lines` of every daemon's log and output, for a failure message.
  std::string logTails(std::size_t lines = 15) const;

 private:
  static constexpr std::array<FrrDaemon, 4> kDaemons{FrrDaemon::kZebra, FrrDaemon::kBgpd, FrrDaemon::kBfdd,
                                                     FrrDaemon::kStaticd};
  static std::size_t index(FrrDaemon d) noexcept { return static_cast<std::size_t>(d); }
  void start();
  void waitForSocket(FrrDaemon d, const std::string& path);
  void runConfig(const std::vector<std::string>& lines) const;

  const Netns& ns_;
  std::string dir_;
  unsigned uid_ = 0, gid_ = 0;  // user frr
  std::array<Child, 4> children_;
  std::vector<std::vector<std::string>> journal_;  // every configure(), for restart()
};

}  // namespace gtpcp::testing
