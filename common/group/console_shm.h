// The management process's own segment (gtpcp-console): its liveness
// record, for gtpcp start, gtpcp status and the thread watchdog like every
// process's, and its counters. Writer: the console.
#pragma once

#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"

namespace gtpcp::console {

// The layout version is its last character: bump it whenever ConsoleShm changes.
inline constexpr uint32_t kConsoleSegmentKind = 0x434f4e31;  // "CON1"

#define GTPCP_CONSOLE_COUNTERS(X)                                                                       \
  X(http_requests, "console.http_requests", "HTTP requests answered")                                  \
  X(http_errors, "console.http_errors", "HTTP requests answered with a status of 400 or more")         \
  X(scrapes, "console.scrapes", "metrics scrapes served (/metrics)")                                   \
  X(scrape_us, "console.last_scrape_us", "what the last scrape took to collect and serialise (gauge)") \
  X(scrape_bytes, "console.last_scrape_bytes", "size of the last scrape's text (gauge)")

struct ConsoleCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_CONSOLE_COUNTERS)
};
inline constexpr metrics::CounterInfo kConsoleCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_CONSOLE_COUNTERS)};

struct ConsoleShm {
  group::ProcessStatusShm status;
  alignas(64) ConsoleCounters counters;
};

}  // namespace gtpcp::console
