// The forwarder's own shared-memory segment: its liveness record, the flag the
// workers read before waking it, and its counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "forwarder/lib/forwarder_counters.h"

namespace gtpcp::forwarder {

inline constexpr uint32_t kForwarderSegmentKind = 0x46574431;  // "FWD1"
inline constexpr unsigned kMaxWorkers = 64;

struct ForwarderShm {
  group::ProcessStatusShm status;
  // Writer: the forwarder. Readers: the workers, after publishing egress.
  // Set (seq_cst) before the forwarder's last look at the egress rings and
  // its sleep in epoll_wait; a worker that published and then (after a
  // seq_cst fence) reads 1 sends a byte to the forwarder's doorbell socket.
  // The store/fence pairs make sure one of the two sees the other's write.
  alignas(64) std::atomic<uint32_t> sleeping{0};
  // Writer: the forwarder. The group's Recovery value it answers Echo with.
  alignas(64) std::atomic<uint32_t> recovery{0};
  alignas(64) ForwarderCounters counters;
  // Per message type, GTPv2 (index = message type). One writer: the forwarder.
  alignas(64) metrics::Counter received_v2[256];
  alignas(64) metrics::Counter sent_v2[256];
  // Gauges: used slots of each worker's rings, as the forwarder last saw them.
  alignas(64) metrics::Counter priority_depth[kMaxWorkers];
  alignas(64) metrics::Counter new_depth[kMaxWorkers];
  alignas(64) metrics::Counter egress_depth[kMaxWorkers];
};

}  // namespace gtpcp::forwarder
