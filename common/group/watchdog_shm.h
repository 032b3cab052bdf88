// The thread watchdog's own segment: its liveness record (what gtpcp start
// waits for and gtpcp status shows) and its counters. Writer: the watchdog.
#pragma once

#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"

namespace gtpcp::watchdog {

inline constexpr uint32_t kWatchdogSegmentKind = 0x57444731;  // "WDG1"

#define GTPCP_WATCHDOG_COUNTERS(X)                                                                     \
  X(heartbeats, "watchdog.heartbeats", "heartbeats received from the group's processes")              \
  X(restarts, "watchdog.restarts", "processes replaced (dead, or silent past watchdog.timeout_ms)")     \
  X(restart_failures, "watchdog.restart_failures", "replacements that did not come up serving")       \
  X(given_up, "watchdog.given_up", "processes no longer restarted (watchdog.max_restarts within a minute)")

struct WatchdogCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_WATCHDOG_COUNTERS)
};
inline constexpr metrics::CounterInfo kWatchdogCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_WATCHDOG_COUNTERS)};

struct WatchdogShm {
  group::ProcessStatusShm status;
  alignas(64) WatchdogCounters counters;
};

}  // namespace gtpcp::watchdog
