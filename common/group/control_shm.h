// The group's control segment: what the control server (gtpcp-thread-watchdog)
// asks of every process, and each process's acknowledgement.
//
// Owner: `gtpcp start`, which makes it before it starts any process of the
// group (segments.h); every process attaches to it. It outlives every
// process, so neither the start order nor a restart of the control server
// loses a drain or a routing document in force; `gtpcp stop` removes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "common/group/segments.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

inline constexpr uint32_t kControlSegmentKind = 0x43544c32;  // "CTL2"
inline constexpr uint32_t kControlMaxWorkers = 64;           // the bound of `workers`
inline constexpr std::size_t kRoutingPathBytes = 1024;

// One process's answer to the routing generation. Writer: that process.
// It stores routing_hash and routing_failed, then routing_generation
// (release, CTL-R2); the control server acquires routing_generation (CTL-A2) and
// then reads the other two.
struct alignas(64) ControlAckShm {
  std::atomic<uint64_t> routing_generation{0};
  std::atomic<uint64_t> routing_hash{0};
  std::atomic<uint32_t> routing_failed{0};  // 1: the document did not load here; the old one stays
};

struct GroupControlShm {
  // Writer: the control server (and the launcher's start, before any process
  // of the group runs). Reader: the forwarder, once per batch, relaxed: a
  // creation that arrives a batch after the drain began is still refused
  // within microseconds.
  // 1: session-creating requests are refused with No resources available.
  alignas(64) std::atomic<uint32_t> draining{0};
  // 1: requests from peers are dropped and counted (they retransmit to the
  // instance that takes the address over); responses are still relayed, so
  // the transactions already forwarded complete. Set only while stopping.
  std::atomic<uint32_t> closing{0};
  // 1: the group's service addresses are to be withdrawn from BGP at once
  // (gtpcp switchover, and the first step of gtpcp stop), so that peers move
  // to the other instance before this one refuses anything. Reader: the
  // bgp-watchdog, once per check; relaxed, a fact of its own.
  std::atomic<uint32_t> bgp_withdraw{0};

  // Writer: the control server, one reload at a time. It writes the path
  // (plain bytes), then routing_generation (release, CTL-R1). A reader acquires
  // routing_generation (CTL-A1), copies the path, and reads routing_generation
  // again: a different value means the path changed under it; it retries.
  alignas(64) std::atomic<uint64_t> routing_generation{0};
  char routing_path[kRoutingPathBytes]{};

  ControlAckShm forwarder;
  ControlAckShm workers[kControlMaxWorkers];
};

// The routing document in force: generation and path, nullopt before the
// first reload (the configuration's path applies).
struct RoutingInForce {
  uint64_t generation = 0;
  std::string path;
};
inline std::optional<RoutingInForce> routingInForce(const GroupControlShm& c) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t g = c.routing_generation.load(std::memory_order_acquire);  // CTL-A1
    if (g == 0) return std::nullopt;
    char copy[kRoutingPathBytes];
    std::memcpy(copy, c.routing_path, sizeof copy);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (c.routing_generation.load(std::memory_order_relaxed) != g) continue;
    copy[kRoutingPathBytes - 1] = '\0';
    return RoutingInForce{g, copy};
  }
  return std::nullopt;
}

// The launcher's end: makes the group's control segment, or finds the one a
// group stopped with --keep-state left.
inline ring::Result<ring::SharedSegment> createControl(const std::string& name) {
  return ring::SharedSegment::createOrAttach(name, sizeof(GroupControlShm), kControlSegmentKind, {},
                                             ring::Prefault::kYes);
}
// Every other process's end: waits up to `wait` for `gtpcp start` to have made it.
inline ring::Result<ring::SharedSegment> attachControl(const std::string& name,
                                                       std::chrono::milliseconds wait = kOwnerWait) {
  return attachOwned(name, kControlSegmentKind, sizeof(GroupControlShm), kLauncherOwner, wait);
}
inline GroupControlShm& controlOf(ring::SharedSegment& segment) {
  return *static_cast<GroupControlShm*>(segment.payload());
}

// The routing document a process starting now loads: the one the last
// `gtpcp reload` put in force, else the configuration's (generation 0).
inline RoutingInForce routingToLoad(const std::string& segment, const std::string& configured) {
  auto control = attachControl(segment);
  if (control) {
    if (auto in_force = routingInForce(controlOf(*control))) return *in_force;
  }
  return RoutingInForce{0, configured};
}

}  // namespace gtpcp::group
