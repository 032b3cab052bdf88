// gtpcp-persister's work: each worker's persist ring drained in batches into
// Redis, through one RedisClient (one channel) per worker (DESIGN.md, "State
// and storage").
//
// A channel has one batch in flight at a time: the records read from its
// ring, coalesced (persister/lib/batch.h), sent as one pipelined run of
// per-session MULTI/EXEC transactions. The ring's slots are given back to
// the worker only when Redis acknowledged every transaction of the batch; a
// batch with a failed transaction is sent again whole (every write in it is
// idempotent) after a pause. So a persister killed at any point loses no
// change: its successor reads the unacknowledged records again. While Redis
// is unreachable the ring is the queue; when it is full the worker drops
// changes and counts them.
//
// Replicas (storage.persist: sync, storage.sync_replicas N > 0). Redis
// acknowledges a write once its primary applied it; a primary that dies
// before its replica copied the write loses it, although the answer already
// left. So with N > 0 a batch whose writes were all acknowledged is released
// only once `WAIT N timeout` on every primary the batch wrote to answered N
// or more: one round trip per batch and primary, not per session. A WAIT that
// answers fewer is asked again, for as long as the primary has N replicas
// connected (ROLE); a primary with fewer is reported (persister.replicas_missing)
// and its batch released on the primary's word alone, never held forever.
// A primary not known to have its replicas (the first batch, or one reported
// before) is asked ROLE first, so that one without replicas costs a round
// trip per batch, not a WAIT's whole timeout.
//
// The batch's commands are built once, into buffers the channel keeps from
// batch to batch (Commands), and a resend submits the same arguments again:
// once warmed up, a turn allocates nothing of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/metrics/histogram.h"
#include "common/ring/ring.h"
#include "common/group/persister_shm.h"
#include "common/time/clock.h"
#include "batch.h"
#include "redis_client.h"

namespace gtpcp::persister {

class Channel {
 public:
  // At most `max_records` records per batch.
  Channel(ring::Consumer& ring, RedisClient& redis, const KeyNames& keys, PersisterCounters& counters,
          uint32_t max_records, uint64_t retry_pause_ns = 100'000'000) noexcept;
  // Replicas each primary must hold a batch on before it is released (0:
  // none), and how long one WAIT blocks.
  void waitForReplicas(uint32_t replicas, uint32_t timeout_ms) noexcept;
  // Observe into `lag` (none: nothing measured), once per batch released,
  // the age of the batch's oldest change: `wall_clock` (CLOCK_REALTIME; one
  // read per batch) at the release, once Redis acknowledged every write
  // (and, waiting for replicas, held it on them), minus the oldest
  // ChangeHeader::wall_ns of its records. A batch none of whose records
  // parsed has no age and is not observed. The histogram's one writer is
  // the persister's loop: every channel of a process may share one.
  void measureLag(metrics::Histogram* lag, uint64_t (*wall_clock)() noexcept = &realtimeNs) noexcept {
    lag_ = lag;
    wall_clock_ = wall_clock;
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // One step: a batch that completed is released (or, failed, sent again
  // once the pause is over); with none in flight, the next one is read and
  // sent. True when it did something.
  bool turn(uint64_t now_ns) noexcept;
  // Nothing in flight and nothing published in the ring.
  bool idle() const noexcept { return !in_flight_ && ring_.empty(); }
  bool inFlight() const noexcept { return in_flight_; }
  // CLOCK_REALTIME of the oldest change not yet acknowledged (read or not);
  // 0 when there is none.
  uint64_t oldestPendingWallNs() noexcept;
  uint32_t pendingRecords() const noexcept { return in_flight_ ? records_ : 0; }

 private:
  static void completed(void* self, const RedisResult& result) noexcept;
  void send() noexcept;
  // The batch's writes acknowledged: WAIT on each primary it wrote to.
  void sendWaits() noexcept;
  void sendWait(std::size_t i) noexcept;
  void sendRole(std::size_t i) noexcept;
  // Whether the primary `token` was last seen with its replicas connected.
  bool knownReplicated(uintptr_t token) const noexcept;
  void noteReplicated(uintptr_t token, bool replicated) noexcept;
  static void waited(void* self, const RedisResult& result) noexcept;
  static void roleRead(void* self, const RedisResult& result) noexcept;
  void release() noexcept;

  ring::Consumer& ring_;
  RedisClient& redis_;
  PersisterCounters& counters_;
  Batch batch_;  // the records being read; empty once their commands are built
  uint32_t max_records_;
  uint64_t retry_pause_ns_;
  // The batch in flight, kept for sending it again.
  Commands commands_;
  bool in_flight_ = false;
  bool failed_ = false;
  uint32_t outstanding_ = 0;
  uint32_t records_ = 0;
  uint64_t oldest_wall_ns_ = 0;
  uint64_t retry_at_ns_ = 0;
  metrics::Histogram* lag_ = nullptr;
  uint64_t (*wall_clock_)() noexcept = &realtimeNs;
  // Replicas.
  uint32_t wait_replicas_ = 0;
  std::string wait_argv_[3];  // "WAIT", N, timeout
  // One per primary the batch wrote to: a slot of it, and where its WAIT is.
  struct Primary {
    Channel* channel;
    uint16_t slot;
    uintptr_t token;
    uint8_t state;  // kAsked, kHeld, kShort (WAIT next), kMissing, kFailed
    bool waited;    // a WAIT of this batch went there already
  };
  std::vector<Primary> primaries_;
  std::vector<std::pair<uintptr_t, bool>> replicated_;  // what ROLE last said, by primary
  bool waiting_ = false;  // the writes are acknowledged; WAITs are out
};

}  // namespace gtpcp::persister
