// A worker's segment header: its liveness record, the geometry it was laid
// out with, the counters and sequence-number state that outlive a worker
// process. The launcher (`gtpcp status`), the thread watchdog's control
// server and the metrics exporter read it; what follows it in the segment
// (sessions, transactions) is the worker's alone (workers/lib/worker_layout.h).
//
// Owner: gtpcp-worker --index I, the only process that creates the segment
// and the only writer of every field.
#pragma once

#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/group/worker_counters.h"
#include "common/group/worker_metrics.h"

namespace gtpcp::worker {

// The layout version is its last character: bump it whenever the segment's layout changes.
inline constexpr uint32_t kWorkerSegmentKind = 0x574b5245;  // "WKRE"

// The fixed part at the start of the segment. Geometry fields are written once
// by the creator; a worker refuses to attach to a segment whose geometry
// differs from its configuration.
struct WorkerShmHeader {
  group::ProcessStatusShm status;
  uint32_t workers;
  uint32_t index;
  uint32_t per_partition;      // session slots per partition
  uint32_t transactions;       // transaction table capacity
  uint32_t local_partitions;
  // Writer: the worker. Transaction records [high water, capacity) were never
  // used: a restarted worker need not look at them.
  uint32_t transactions_high_water;
  uint64_t answer_bytes;       // answer cache size
  uint64_t partitions_offset;  // from the start of the payload
  uint64_t sessions_offset;
  uint64_t transactions_offset;
  uint64_t answers_offset;
  // Writer: the worker. Bytes ever written to the answer cache. WKH-H1: the
  // worker stores it relaxed through std::atomic_ref, the metrics exporter
  // loads it so; a statistic, it orders nothing.
  alignas(8) uint64_t answer_head;
  // Writer: the worker. The next proxy sequence number counter; kept here so
  // a restarted worker does not reuse numbers of its predecessor's pending
  // transactions.
  uint64_t sequence_counter;
  // Writer: the worker. 1 once the stored TEIDs of every partition of the
  // worker are reserved (kStored slots): from then on it may allocate. A
  // worker that dies while reading them reads them again.
  uint32_t stored_teids_loaded;
  // Writer: the worker. GTPv1 sequence numbers are 16 bits: one counter per
  // leg (by Leg), started at a random value when the segment is made, so a
  // peer that remembers (peer, sequence number) pairs across a restart of
  // the group (osmo-ggsn keeps them 60 s) does not take new requests for
  // copies of old ones.
  uint16_t v1_sequence_counter[2];
  // Writer: the worker. The persister's foreign-writes epoch (PER-W1) as of
  // the last walk that gave back every idle session (stale_sessions.h): a
  // restarted worker still knows whether the other instance wrote since.
  uint64_t foreign_epoch_seen;
  alignas(64) WorkerCounters counters;
  alignas(64) WorkerMetricsShm metrics;
};

}  // namespace gtpcp::worker
