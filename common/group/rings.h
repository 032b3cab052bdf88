// Opening the rings of a group by name, from either end.
#pragma once

#include <cstdint>
#include <string>

#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/ring/ring_shm.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

inline constexpr uint32_t kRingSegmentKind = 0x52494e47;      // "RING"
inline constexpr uint32_t kDoorbellSegmentKind = 0x42454c4c;  // "BELL"

// Creates the ring segment `name` of `slots` slots (a power of two) if it
// does not exist, laying out an empty ring, or attaches to it: whichever of
// producer and consumer starts first creates it. A ring of another size is
// refused (the configuration changed while the group ran).
// `prefault`: kYes commits every page at creation, so the data path never
// faults; kNo leaves each page to its first write (see kPersistRingPrefault).
inline ring::Result<ring::SharedSegment> openRingSegment(const std::string& name, uint32_t slots,
                                                         ring::Prefault prefault = ring::Prefault::kYes) {
  return ring::SharedSegment::createOrAttach(
      name, ring::ringBytes(slots), kRingSegmentKind,
      [slots](void* payload, std::size_t size) { return ring::initRing(payload, size, slots); }, prefault);
}

// A worker's persist ring is the queue that rides out a Redis outage
// (rings.persist_slots, 16 MiB by default): committing it at creation was
// 4,096 page faults, most of a worker's cold start. Its pages are committed
// by the worker's first pass over the ring instead: one fault per 64 change
// records, once.
inline constexpr ring::Prefault kPersistRingPrefault = ring::Prefault::kNo;

// The doorbell a worker sleeps on, in a segment of its own so that the
// forwarder can ring it whether or not the worker has started yet.
inline ring::Result<ring::SharedSegment> openDoorbellSegment(const std::string& name) {
  return ring::SharedSegment::createOrAttach(
      name, sizeof(ring::DoorbellShm), kDoorbellSegmentKind, [](void* payload, std::size_t) -> ring::Result<void> {
        ring::initDoorbell(static_cast<ring::DoorbellShm*>(payload));
        return {};
      });
}

// Whether every record published on the ring in `segment` was popped and
// released: an observer's view (neither producer nor consumer), for a stop
// that waits until the workers took everything the forwarder queued.
inline bool ringDrained(const ring::SharedSegment& segment) noexcept {
  const auto* h = static_cast<const ring::RingHeaderShm*>(segment.payload());
  // Acquire on both: pairs with the producer's publish and the consumer's
  // release stores (ring.h).
  return h->tail.load(std::memory_order_acquire) == h->head.load(std::memory_order_acquire);
}

}  // namespace gtpcp::group
