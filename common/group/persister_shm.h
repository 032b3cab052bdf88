// The persister's own shared-memory segment: its liveness record, the flag
// the workers read before waking it, its counters and each channel's Redis
// counters.
//
// Owner: gtpcp-persister, which creates the segment and writes every field.
// The workers read `bell`; `gtpcp status` and the metrics exporter the rest.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "common/metrics/histogram.h"
#include "common/group/redis_counters.h"
#include "common/ring/bell.h"

namespace gtpcp::persister {

// The layout version is its last character: bump it whenever PersisterShm changes.
inline constexpr uint32_t kPersisterSegmentKind = 0x50455237;  // "PER7"
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
  X(lookups_received, "persister.lookups_received", "questions from the workers: a session by TEID, a partition's stored TEIDs, a subscriber's sessions by IMSI") \
  X(lookups_found, "persister.lookups_found", "questions answered with a session or a list") \
  X(lookups_absent, "persister.lookups_absent", "sessions asked for that Redis does not hold") \
  X(lookups_failed, "persister.lookups_failed", "questions Redis did not answer (unreachable, error, unreadable record)") \
  X(restore_ring_full, "persister.restore_ring_full", "answers dropped because a worker's restore ring was full") \
  X(replica_waits, "persister.replica_waits", "WAITs sent after a batch (storage.sync_replicas): one per batch and primary") \
  X(replica_waits_repeated, "persister.replica_waits_repeated", "batches waited for again: a primary's replicas had not all copied them within storage.sync_wait_ms") \
  X(replicas_missing, "persister.replicas_missing", "1 when the last batch was released on a primary with fewer replicas connected than storage.sync_replicas (gauge)") \
  X(foreign_writes, "persister.foreign_writes", "looks at the group's writes table that found sessions written by another instance since the last look (the workers give back the sessions they hold)") \
  X(acts_for_stored, "persister.acts_for_stored", "1 while this instance acts for the group's sessions held only in Redis (it wrote last, or alone): walks read them in (gauge)")

struct PersisterCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_PERSISTER_COUNTERS)
};
inline constexpr metrics::CounterInfo kPersisterCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_PERSISTER_COUNTERS)};

// Another instance of the group's last entry in the group's writes table
// (group::writesKey()), as this instance last read it.
inline constexpr unsigned kMaxWritersSeen = 8;
struct WriterSeenShm {
  char instance[24];  // NUL-terminated; empty: unused
  char value[40];     // "<its persister's start, ms>:<sessions it wrote>"
};

// Whether the other instances of the group wrote sessions (writes_watch.h).
// Kept in the segment so that a restarted persister compares with what its
// predecessor saw, not with nothing.
struct GroupWritesShm {
  // PER-W1. Writer: the persister, once per look that found another
  // instance's entry changed. Readers: the workers, relaxed: the value
  // carries nothing but itself (a change means "what you hold may be stale").
  std::atomic<uint64_t> foreign_epoch{0};
  // PER-W2. Writer: the persister, after each look and each mark of its own
  // writes. Readers: the workers, relaxed (the flag carries nothing else).
  // 1: this instance acts for the group's stored sessions, those it holds
  // only in Redis too (a gateway's restart, a connection set deleted): it is
  // the group's latest writer (it wrote, and no other instance wrote since)
  // or the only one. The others leave those sessions to it, so that a
  // standby never tells an SGW what the active tells it already.
  std::atomic<uint32_t> acts_for_stored{0};
  // The persister's alone.
  WriterSeenShm seen[kMaxWritersSeen];
};

// The primaries the persister's channels write to, for the metrics
// exporter: "host:port" entries separated by commas (one for single and
// Sentinel, every primary of the slot map for Cluster), NUL-terminated;
// empty before the first is known.
//
// PER-P1. Writer: the persister (publishPrimaries), when the text changed:
// `version` made odd, a release fence, the text, then `version` even with a
// release store. Readers (readPrimaries) acquire `version`, copy the text,
// fence (acquire) and read `version` again; odd or changed: read again.
struct PrimariesShm {
  std::atomic<uint64_t> version{0};
  char text[440] = {};
};

inline void publishPrimaries(PrimariesShm& p, std::string_view text) noexcept {
  const uint64_t v = p.version.load(std::memory_order_relaxed);
  p.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const std::size_t n = std::min(text.size(), sizeof p.text - 1);
  for (std::size_t i = 0; i < n; ++i) std::atomic_ref<char>(p.text[i]).store(text[i], std::memory_order_relaxed);
  std::atomic_ref<char>(p.text[n]).store('\0', std::memory_order_relaxed);
  p.version.store(v + 2, std::memory_order_release);  // PER-P1
}

// nullopt when the writer kept changing it (100 tries).
inline std::optional<std::string> readPrimaries(const PrimariesShm& p) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t v = p.version.load(std::memory_order_acquire);  // PER-P1
    if (v & 1) continue;
    char copy[sizeof p.text];
    for (std::size_t i = 0; i < sizeof copy; ++i)
      copy[i] = std::atomic_ref<char>(const_cast<char&>(p.text[i])).load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (p.version.load(std::memory_order_relaxed) != v) continue;
    copy[sizeof copy - 1] = '\0';
    return std::string(copy);
  }
  return std::nullopt;
}

struct PersisterShm {
  group::ProcessStatusShm status;
  // The persister sleeps in epoll on its bell socket; a worker that
  // published change records or look-ups rings it (common/ring/bell.h).
  ring::BellShm bell;
  alignas(64) PersisterCounters counters;
  // Writer: the persister; channel i is worker i's.
  alignas(64) RedisCounters redis[kMaxChannels];
  alignas(64) GroupWritesShm writes;
  // Writer: the persister. Per batch Redis acknowledged: the age of its
  // oldest change, from the worker's write to the persist ring to Redis's
  // acknowledgement. Measured on CLOCK_REALTIME, from the change record's
  // time stamp (ChangeHeader::wall_ns: the start of the worker's turn that
  // wrote it) to the persister's release of the batch's slots, after Redis
  // acknowledged every write (and, with storage.sync_replicas, WAIT said the
  // replicas hold them). Every channel's batches, one histogram.
  alignas(64) metrics::Histogram lag;
  alignas(64) PrimariesShm primaries;
};

}  // namespace gtpcp::persister
