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
// The batch's commands are built once, into buffers the channel keeps from
// batch to batch (Commands), and a resend submits the same arguments again:
// once warmed up, a turn allocates nothing of its own.
#pragma once

#include <cstdint>

#include "common/ring/ring.h"
#include "common/group/persister_shm.h"
#include "batch.h"
#include "redis_client.h"

namespace gtpcp::persister {

class Channel {
 public:
  // At most `max_records` records per batch.
  Channel(ring::Consumer& ring, RedisClient& redis, const KeyNames& keys, PersisterCounters& counters,
          uint32_t max_records, uint64_t retry_pause_ns = 100'000'000) noexcept;
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
};

}  // namespace gtpcp::persister
