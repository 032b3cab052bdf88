// The forwarder's own shared-memory segment: its liveness record, the flag the
// workers read before waking it, and its counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "common/net/address.h"
#include "forwarder/lib/forwarder_counters.h"

namespace gtpcp::forwarder {

// The layout version is its last character: bump it whenever ForwarderShm changes.
inline constexpr uint32_t kForwarderSegmentKind = 0x46574434;  // "FWD4"
inline constexpr unsigned kMaxWorkers = 64;
inline constexpr unsigned kMaxHealthChecked = 1024;  // gateways with Echo health checks
inline constexpr uint32_t kRecoveryUnknown = 0x100;  // no Echo Response seen yet

// What the forwarder's health checks know of one gateway of the routing
// document (forwarder/lib/health.h). Entry i is the document's gateway i.
struct GatewayStatusShm {
  // Writer: the forwarder, before it publishes ForwarderShm::gateways_published
  // (release); readers compare it with their own gateway's address after
  // reading that count (acquire).
  net::Address address;
  // Writer: the forwarder. 1 up, 0 down. Relaxed: a worker acting on a state
  // a few microseconds old picks a gateway a few microseconds late.
  std::atomic<uint32_t> up{1};
  // Writer: the forwarder. The Recovery value of the last Echo Response
  // (kRecoveryUnknown before the first), then `restarts` (release) when it
  // changed; a worker reads `restarts` (acquire), then `recovery`.
  std::atomic<uint32_t> recovery{kRecoveryUnknown};
  std::atomic<uint32_t> restarts{0};
  // Writer: the forwarder, with `address`. The GTP version its Echo Requests
  // use (its pool's): a gateway that changes version starts over, since a
  // node's GTPv1 and GTPv2 Recovery values need not agree.
  uint32_t gtp_version = 2;
  metrics::Counter echo_sent;
  metrics::Counter echo_answered;
  metrics::Counter misses;  // intervals that ended without an answer
};

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
  // Writer: the forwarder; release after writing the entries' addresses.
  alignas(64) std::atomic<uint32_t> gateways_published{0};
  // Writer: the forwarder; incremented (release) after every publication,
  // also one with the same count (a reloaded routing document). A worker
  // that sees it change maps its gateways to the entries again.
  std::atomic<uint32_t> gateways_version{0};
  alignas(64) GatewayStatusShm gateways[kMaxHealthChecked];
};

}  // namespace gtpcp::forwarder
