// Reading the clocks, in nanoseconds. CLOCK_MONOTONIC for timers and
// intervals (it never jumps), CLOCK_REALTIME for what is shown to people and
// stored in session records.
#pragma once

#include <time.h>

#include <cstdint>

namespace gtpcp {

inline uint64_t monotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

inline uint64_t realtimeNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace gtpcp
