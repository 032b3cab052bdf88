// The two segments of a group's BGP announcement (DESIGN.md, gtpcp-bgp-watchdog
// and gtpcp-bgpd-bridge):
//
//   BgpWatchdogShm   owner gtpcp-bgp-watchdog: the decision (announce or
//                    withdraw, with which preference, why, since when) and
//                    its lease
//   BridgeShm        owner gtpcp-bgpd-bridge: what FRR was last told and
//                    what it reports back (BGP neighbours, BFD peers)
//
// The bridge follows the decision only while its lease runs: the
// bgp-watchdog renews it once per check, and a decision older than
// bgp.lease_ms is read as "withdraw", so that a dead or hung bgp-watchdog
// never leaves the route announced on a stale verdict. A dead bridge takes
// the announcement with it by construction (bgpd-bridge/lib/lease_link.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"

namespace gtpcp::group {

// The layout version is the last character: bump it whenever a struct changes.
inline constexpr uint32_t kBgpWatchdogSegmentKind = 0x42475731;  // "BGW1"
inline constexpr uint32_t kBridgeSegmentKind = 0x42524732;       // "BRG2"

enum class BgpIntent : uint32_t { kWithdraw = 0, kAnnounce = 1 };
enum class BgpPreference : uint32_t { kActive = 0, kStandby = 1 };
// The instance's health as the bgp-watchdog judged it at its last check.
enum class BgpHealth : uint32_t {
  kHealthy = 0,
  kRecoverable = 1,    // withdrawn only after bgp.withdraw_hold_ms
  kUnrecoverable = 2,  // withdrawn at once
  kAdministrative = 3, // gtpcp switchover or gtpcp stop: withdrawn at once
};

const char* toString(BgpIntent v) noexcept;      // "announce", "withdraw"
const char* toString(BgpPreference v) noexcept;  // "active", "standby"
const char* toString(BgpHealth v) noexcept;      // "healthy", "recoverable", ...

inline constexpr std::size_t kBgpReasonBytes = 160;

// The decision. Writer: the bgp-watchdog, once per check. Readers: the
// bridge (applies it), gtpcp status, the control server (waits for a
// withdraw before a stop drains).
//
// A seqlock over every field but `renewed_ns`: the writer makes `sequence`
// odd (relaxed), fences (release), writes the fields (relaxed), then makes
// `sequence` even with a release store (BGPD-R1). A reader acquires
// `sequence` (BGPD-A1), copies, fences (acquire) and reads `sequence` again
// (BGPD-A2): equal and even means the copy is whole.
//
// `renewed_ns` is the lease, alone in its word: the writer stores it
// (relaxed) after every check, decision changed or not; the bridge compares
// it with its own clock. Both are CLOCK_MONOTONIC of one host.
struct alignas(64) BgpDecisionShm {
  std::atomic<uint64_t> sequence{0};
  std::atomic<uint32_t> intent{0};      // BgpIntent
  std::atomic<uint32_t> preference{0};  // BgpPreference
  std::atomic<uint32_t> health{0};      // BgpHealth at the last check
  std::atomic<uint32_t> pad{0};
  std::atomic<uint64_t> generation{0};  // +1 per change of intent or preference
  std::atomic<uint64_t> since_ns{0};    // CLOCK_REALTIME of the last change of intent
  std::atomic<uint64_t> announce_at_ns{0};  // CLOCK_REALTIME the route returns if health holds; 0: not pending
  std::atomic<uint64_t> withdraw_at_ns{0};  // CLOCK_REALTIME a recoverable fault withdraws; 0: not pending
  char reason[kBgpReasonBytes]{};        // why the intent is what it is (plain bytes, under the seqlock)
  alignas(64) std::atomic<uint64_t> renewed_ns{0};  // the lease: CLOCK_MONOTONIC of the last check
};

// A consistent copy of the decision.
struct BgpDecision {
  BgpIntent intent = BgpIntent::kWithdraw;
  BgpPreference preference = BgpPreference::kActive;
  BgpHealth health = BgpHealth::kHealthy;
  uint64_t generation = 0;
  uint64_t since_ns = 0;
  uint64_t announce_at_ns = 0;
  uint64_t withdraw_at_ns = 0;
  std::string reason;
};

inline void publish(BgpDecisionShm& shm, const BgpDecision& d) noexcept {
  const uint64_t s = shm.sequence.load(std::memory_order_relaxed);
  shm.sequence.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  shm.intent.store(static_cast<uint32_t>(d.intent), std::memory_order_relaxed);
  shm.preference.store(static_cast<uint32_t>(d.preference), std::memory_order_relaxed);
  shm.health.store(static_cast<uint32_t>(d.health), std::memory_order_relaxed);
  shm.generation.store(d.generation, std::memory_order_relaxed);
  shm.since_ns.store(d.since_ns, std::memory_order_relaxed);
  shm.announce_at_ns.store(d.announce_at_ns, std::memory_order_relaxed);
  shm.withdraw_at_ns.store(d.withdraw_at_ns, std::memory_order_relaxed);
  char text[kBgpReasonBytes]{};
  std::strncpy(text, d.reason.c_str(), kBgpReasonBytes - 1);
  // The reader copies these bytes while they may change, and throws the copy
  // away when the sequence moved: byte-wise relaxed atomics keep that defined.
  for (std::size_t i = 0; i < kBgpReasonBytes; ++i)
    std::atomic_ref<char>(shm.reason[i]).store(text[i], std::memory_order_relaxed);
  shm.sequence.store(s + 2, std::memory_order_release);  // BGPD-R1
}

// False when the writer kept changing it (try again at the next look).
inline bool read(const BgpDecisionShm& shm, BgpDecision& out) noexcept {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t s = shm.sequence.load(std::memory_order_acquire);  // BGPD-A1: pairs with BGPD-R1
    if (s & 1) continue;
    BgpDecision d;
    d.intent = static_cast<BgpIntent>(shm.intent.load(std::memory_order_relaxed));
    d.preference = static_cast<BgpPreference>(shm.preference.load(std::memory_order_relaxed));
    d.health = static_cast<BgpHealth>(shm.health.load(std::memory_order_relaxed));
    d.generation = shm.generation.load(std::memory_order_relaxed);
    d.since_ns = shm.since_ns.load(std::memory_order_relaxed);
    d.announce_at_ns = shm.announce_at_ns.load(std::memory_order_relaxed);
    d.withdraw_at_ns = shm.withdraw_at_ns.load(std::memory_order_relaxed);
    char text[kBgpReasonBytes];
    for (std::size_t i = 0; i < kBgpReasonBytes; ++i)
      text[i] = std::atomic_ref<const char>(shm.reason[i]).load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (shm.sequence.load(std::memory_order_relaxed) != s) continue;  // BGPD-A2
    text[kBgpReasonBytes - 1] = '\0';
    d.reason = text;
    out = std::move(d);
    return true;
  }
  return false;
}

#define GTPCP_BGP_WATCHDOG_COUNTERS(X)                                                                   \
  X(checks, "bgp_watchdog.checks", "health checks made (one per bgp.check_interval_ms)")               \
  X(unhealthy_checks, "bgp_watchdog.unhealthy_checks", "checks that found the instance unhealthy")     \
  X(withdraws, "bgp_watchdog.withdraws", "decisions to withdraw the route")                            \
  X(announces, "bgp_watchdog.announces", "decisions to announce the route")                            \
  X(flaps_damped, "bgp_watchdog.flaps_damped", "returns held down for longer because health kept flapping") \
  X(announced, "bgp_watchdog.announced", "1 while the decision is to announce (gauge)")

struct BgpWatchdogCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_BGP_WATCHDOG_COUNTERS)
};
inline constexpr metrics::CounterInfo kBgpWatchdogCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_BGP_WATCHDOG_COUNTERS)};

struct BgpWatchdogShm {
  ProcessStatusShm status;
  BgpDecisionShm decision;
  alignas(64) BgpWatchdogCounters counters;
};

// What the bridge last applied. Writer: the bridge. It stores the fields
// (relaxed), then `applied_generation` (release, BRG-R1); a reader that
// acquires `applied_generation` (BRG-A1, the control server waiting for a
// withdraw) sees the fields of that generation or a later one.
struct alignas(64) BridgeAppliedShm {
  std::atomic<uint32_t> intent{0};      // BgpIntent as FRR has it now
  std::atomic<uint32_t> preference{0};  // BgpPreference as FRR has it now
  std::atomic<uint32_t> lease_expired{0};  // 1: withdrawn because the decision's lease ran out
  std::atomic<uint32_t> frr_reachable{0};  // 1: vtysh answered at the last reconcile
  std::atomic<uint64_t> applied_ns{0};     // CLOCK_REALTIME of the last change FRR accepted
  std::atomic<uint32_t> neighbors_up{0};   // BGP sessions Established
  std::atomic<uint32_t> neighbors{0};      // configured
  std::atomic<uint32_t> bfd_up{0};         // BFD peers up
  std::atomic<uint32_t> bfd_peers{0};      // configured (0 with BFD off)
  std::atomic<uint64_t> applied_generation{0};  // the decision's generation FRR has, last
};

#define GTPCP_BRIDGE_COUNTERS(X)                                                                         \
  X(reconciles, "bridge.reconciles", "comparisons of FRR's configuration with the wanted one")        \
  X(changes_applied, "bridge.changes_applied", "configuration changes FRR accepted")                  \
  X(vtysh_calls, "bridge.vtysh_calls", "vtysh invocations")                                            \
  X(vtysh_failures, "bridge.vtysh_failures", "vtysh invocations that failed or timed out")             \
  X(frr_restarts, "bridge.frr_restarts", "FRR restarts seen (a daemon's pid changed)")                 \
  X(lease_expiries, "bridge.lease_expiries", "withdrawals because the bgp-watchdog's decision was stale") \
  X(announcements_given_again, "bridge.announcements_given_again", "announcements bgpd was configured with but did not hold, given again") \
  X(looks_given_way, "bridge.looks_given_way", "looks at FRR's state cut short so that a new decision reached FRR at once") \
  X(last_apply_us, "bridge.last_apply_us", "how long FRR took to accept the last change, vtysh included (gauge)")

struct BridgeCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_BRIDGE_COUNTERS)
};
inline constexpr metrics::CounterInfo kBridgeCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_BRIDGE_COUNTERS)};

struct BridgeShm {
  ProcessStatusShm status;
  BridgeAppliedShm applied;
  alignas(64) BridgeCounters counters;
};

}  // namespace gtpcp::group
