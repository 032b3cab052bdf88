// The liveness record every gtpcp process keeps at the start of its own
// segment, read by the launcher (`gtpcp start` waits for kServing, `gtpcp
// status` prints it), the thread watchdog's process control and the
// metrics exporter.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "common/time/clock.h"

namespace gtpcp::group {

enum class ProcessState : uint32_t {
  kAbsent = 0,    // never started (fresh segment)
  kStarting = 1,  // attached, not yet serving
  kServing = 2,
  kStopping = 3,  // draining after SIGTERM
  kStopped = 4,   // exited cleanly
};

const char* toString(ProcessState s) noexcept;

// Writer: the process the segment belongs to. Readers: any. All fields are
// independent facts published with relaxed stores except `state`, whose
// release store (PROC-R1) makes pid and started_ns visible to a reader that
// acquires it (PROC-A1 in ProcessControl::waitServing()).
struct alignas(64) ProcessStatusShm {
  std::atomic<uint32_t> state{0};
  std::atomic<uint32_t> pid{0};
  std::atomic<uint64_t> started_ns{0};    // CLOCK_REALTIME
  std::atomic<uint64_t> heartbeat_ns{0};  // CLOCK_MONOTONIC, refreshed by the main loop
  std::atomic<uint64_t> starts{0};        // how many times a process attached: restarts + 1
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// The process's main loop begins: pid, start time and start count, then the
// state (PROC-R1: release, pairs with PROC-A1 in
// ProcessControl::waitServing(), which reads the pid once it sees kServing).
inline void announceServing(ProcessStatusShm& status) noexcept {
  status.pid.store(static_cast<uint32_t>(getpid()), std::memory_order_relaxed);
  status.started_ns.store(realtimeNs(), std::memory_order_relaxed);
  status.starts.store(status.starts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  status.state.store(static_cast<uint32_t>(ProcessState::kServing), std::memory_order_release);
}

// The process's main loop ended: PROC-R1 again, so that a reader that sees
// kStopped also sees everything the process wrote before it stopped.
inline void announceStopped(ProcessStatusShm& status) noexcept {
  status.state.store(static_cast<uint32_t>(ProcessState::kStopped), std::memory_order_release);
}

}  // namespace gtpcp::group
