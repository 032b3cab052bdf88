// Test support: network namespaces of a test's own, joined by veth pairs,
// with addresses and routes set by iproute2, and processes run inside them.
//
// Integration tests of BGP failover need several hosts (two proxies, a
// router, SGW and PGW emulators) on one machine: each is a Netns. Names are
// "gt<pid>n<counter>" (at most 15 characters, so they also fit an interface
// name), unique between test processes running in parallel; veth ends are
// created directly inside their namespaces, so interface names never meet in
// the host's namespace either.
//
// Every command is bounded in time. A Netns going away kills every process
// still inside it (found by its namespace, signalled by PID through a pidfd,
// never by name) and deletes the namespace. Daemons that change user (FRR)
// lose the parent-death signal that Child gives them, so a test process
// that dies leaves them behind: the first Netns of the next test process
// removes namespaces whose creating process is gone, with what runs in them.
//
// Root only. Not thread-safe: one test thread drives its namespaces.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace gtpcp::testing {

class Netns {
 public:
  // Creates a namespace with `lo` up. Throws, naming the command and its
  // output, when iproute2 fails (not root, no `ip`).
  Netns();
  // Kills what runs inside (SIGTERM, SIGKILL after 2 s), then deletes it.
  ~Netns();
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;

  const std::string& name() const noexcept { return name_; }

  // `ip -n NAME ARGS...`; throws with the command and output on failure or
  // timeout (10 s). Returns the output.
  std::string ip(const std::vector<std::string>& args) const;
  // Shorthands for ip(): `addr add CIDR dev IF`, `route add PREFIX via VIA
  // [dev DEV]`, an AnyIP route (`route add local PREFIX dev lo table
  // local`: every address of PREFIX is local, as the proxy's VIP is),
  // `link set IF up|down`.
  void addAddress(const std::string& ifname, const std::string& cidr) const;
  void addRoute(const std::string& prefix, const std::string& via, const std::string& dev = "") const;
  void addLocalRoute(const std::string& prefix) const;
  void removeLocalRoute(const std::string& prefix) const;
  void linkUp(const std::string& ifname) const;
  void linkDown(const std::string& ifname) const;

  // What `ip route show PREFIX` prints for the main table (trailing newline
  // removed; several lines for a multipath route), "" when there is no such
  // route or ip fails.
  std::string fibRoute(const std::string& prefix) const;

  // Runs argv (argv[0] a program on PATH or a path) inside the namespace to
  // completion, bounded by `timeout`: stdout and stderr together in `text`
  // (execSeparately: stderr in `errors`). nullopt when it had to be killed.
  std::optional<Output> exec(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  std::optional<Output> execSeparately(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Starts argv inside the namespace (`ip netns exec` execs it: the Child's
  // PID is the program's), output appended to `log` / `out` and `err`.
  Child spawn(const std::vector<std::string>& argv, const std::string& log = "") const;
  Child spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) const;

  // PIDs of the processes inside the namespace now (zombies excluded).
  std::vector<int> pids() const;
  // SIGTERM (and SIGCONT, for stopped ones) to every process inside, SIGKILL
  // to those left after `grace`; true when none is left (within 5 s more).
  // A whole host crashing, as far as its processes go.
  bool killAll(std::chrono::milliseconds grace = std::chrono::seconds(2)) const;

  // Runs `f` on the calling thread inside the namespace, and returns to the
  // one it was in: a socket made in `f` stays in this namespace, so a test
  // plays a peer of its own there without a process. Throws when setns
  // fails.
  void enter(const std::function<void()>& f) const;

 private:
  std::string name_;
  uint64_t dev_ = 0, ino_ = 0;  // the namespace's identity, as stat() of /run/netns/NAME gives it
};

// Joins `a` and `b` by a veth pair, `if_a` in `a` and `if_b` in `b` (each
// at most 15 characters), and brings both ends up. Throws on failure.
void veth(const Netns& a, const std::string& if_a, const Netns& b, const std::string& if_b);

// Polls `condition` every `poll` until it holds, for at most `timeout`: the
// time from the call to the first look that saw it, nullopt when it never
// held. Tests print the figure ("FIGURE: ...") rather than assert a tight
// bound; its resolution is `poll` plus one look.
std::optional<std::chrono::milliseconds> waitFor(const std::function<bool()>& condition,
                                                 std::chrono::milliseconds timeout,
                                                 std::chrono::milliseconds poll = std::chrono::milliseconds(5));
// waitFor() a route to `prefix` in `ns`'s FIB whose line contains `what`
// ("proto bgp", "via 10.250.0.1"; "" for any), and for its absence (which
// throws when `ip` fails rather than take the failure for no route).
std::optional<std::chrono::milliseconds> waitForRoute(const Netns& ns, const std::string& prefix,
                                                      const std::string& what, std::chrono::milliseconds timeout);
std::optional<std::chrono::milliseconds> waitForNoRoute(const Netns& ns, const std::string& prefix,
                                                        std::chrono::milliseconds timeout);

}  // namespace gtpcp::testing
