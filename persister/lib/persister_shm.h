// The persister's own shared-memory segment: its liveness record, the flag
// the workers read before waking it, its counters and each channel's Redis
// counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "persister/lib/redis_client.h"

namespace gtpcp::persister {

inline constexpr uint32_t kPersisterSegmentKind = 0x50455231;  // "PER1"
inline constexpr unsigned kMaxChannels = 64;                   // one per worker

#define GTPCP_PERSISTER_COUNTERS(X)                                                                       \
  X(changes_read, "persister.changes_read", "session changes taken from the workers' persist rings")     \
  X(changes_refused, "persister.changes_refused", "change records that did not parse (skipped)")         \
  X(sessions_written, "persister.sessions_written", "per-session writes Redis acknowledged (one per session per batch)") \
  X(batches_written, "persister.batches_written", "batches written whole")                               \
  X(write_failures, "persister.write_failures", "per-session writes that failed (their batch is written again)") \
  X(batch_retries, "persister.batch_retries", "batches written again after a failure")                   \
  X(pending_changes, "persister.pending_changes", "changes read and not yet acknowledged (gauge)")       \
  X(lag_ms, "persister.lag_ms", "age of the oldest change not yet in Redis (gauge)")                      \
  X(storage_up, "persister.storage_up", "1 when every channel reaches a primary for every slot (gauge)") \
  X(lookups_received, "persister.lookups_received", "questions from the workers: a session by TEID, a partition's stored TEIDs") \
  X(lookups_found, "persister.lookups_found", "questions answered with a session or a list") \
  X(lookups_absent, "persister.lookups_absent", "sessions asked for that Redis does not hold") \
  X(lookups_failed, "persister.lookups_failed", "questions Redis did not answer (unreachable, error, unreadable record)") \
  X(restore_ring_full, "persister.restore_ring_full", "answers dropped because a worker's restore ring was full")

struct PersisterCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_PERSISTER_COUNTERS)
};
inline constexpr metrics::CounterInfo kPersisterCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_PERSISTER_COUNTERS)};

struct PersisterShm {
  group::ProcessStatusShm status;
  // Writer: the persister. Readers: the workers, after publishing changes.
  // Set (seq_cst) before the persister's last look at the rings and its wait
  // in epoll; a worker that published and then (after a seq_cst fence) reads
  // 1 sends a byte to the persister's doorbell socket. One of the two sees
  // the other's write.
  alignas(64) std::atomic<uint32_t> sleeping{0};
  alignas(64) PersisterCounters counters;
  // Writer: the persister; channel i is worker i's.
  alignas(64) RedisCounters redis[kMaxChannels];
};

}  // namespace gtpcp::persister
