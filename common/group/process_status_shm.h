// The liveness record every gtpcp process keeps at the start of its own
// segment, read by the launcher (`gtpcp start` waits for kServing, `gtpcp
// status` prints it) and later by the watchdogs.
#pragma once

#include <atomic>
#include <cstdint>

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
// release store (S1) makes pid and started_ns visible to a reader that
// acquires it (A1 in the launcher).
struct alignas(64) ProcessStatusShm {
  std::atomic<uint32_t> state{0};
  std::atomic<uint32_t> pid{0};
  std::atomic<uint64_t> started_ns{0};    // CLOCK_REALTIME
  std::atomic<uint64_t> heartbeat_ns{0};  // CLOCK_MONOTONIC, refreshed by the main loop
  std::atomic<uint64_t> starts{0};        // how many times a process attached: restarts + 1
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace gtpcp::group
