// The forwarder's own segment: its liveness record, the flag the workers read
// before waking it, its counters and ring-depth gauges. `gtpcp status` and
// the metrics exporter read it; the workers read `bell`.
//
// Owner: gtpcp-forwarder, which creates the segment and writes every field.
// What the workers need of the forwarder's health checks is in a segment of
// its own (gateway_table_shm.h).
#pragma once

#include <atomic>
#include <cstdint>

#include "common/group/forwarder_counters.h"
#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "common/metrics/histogram.h"
#include "common/ring/bell.h"

namespace gtpcp::forwarder {

// The layout version is its last character: bump it whenever ForwarderShm changes.
inline constexpr uint32_t kForwarderSegmentKind = 0x46574437;  // "FWD7"
inline constexpr unsigned kMaxWorkers = 64;

struct ForwarderShm {
  group::ProcessStatusShm status;
  // The forwarder sleeps in epoll on its bell socket; a worker that
  // published egress records rings it (common/ring/bell.h).
  ring::BellShm bell;
  alignas(64) ForwarderCounters counters;
  // Per message type (index = message type), GTPv2 and GTPv1. One writer:
  // the forwarder. Received: what it classified (not dropped); sent: what it
  // sent, its own answers and the workers' datagrams.
  alignas(64) metrics::Counter received_v2[256];
  alignas(64) metrics::Counter sent_v2[256];
  alignas(64) metrics::Counter received_v1[256];
  alignas(64) metrics::Counter sent_v1[256];
  // Gauges: used slots of each worker's rings, as the forwarder last saw them.
  alignas(64) metrics::Counter priority_depth[kMaxWorkers];
  alignas(64) metrics::Counter new_depth[kMaxWorkers];
  alignas(64) metrics::Counter egress_depth[kMaxWorkers];
  // High-water marks of the same, since the segment was made (a restarted
  // forwarder adopts it, and its predecessor's marks with it).
  alignas(64) metrics::Counter priority_high_water[kMaxWorkers];
  alignas(64) metrics::Counter new_high_water[kMaxWorkers];
  alignas(64) metrics::Counter egress_high_water[kMaxWorkers];
  // What the proxy adds to a datagram it relays or answers: from its
  // reception on a GTP-C socket to the send of the message the worker made
  // of it, index 0 GTPv1-C, 1 GTPv2-C (of the message sent). The proxy's own
  // requests (no datagram before them) are not in it.
  alignas(64) metrics::Histogram proxy_latency[2];
};

}  // namespace gtpcp::forwarder
