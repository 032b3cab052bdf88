// Opening the rings of a group by name: the owner (the worker) makes them,
// the other end attaches (segments.h).
#pragma once

#include <cstdint>
#include <chrono>
#include <string>
#include <string_view>

#include "common/group/segments.h"
#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/ring/ring_shm.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

inline constexpr uint32_t kRingSegmentKind = 0x52494e47;      // "RING"
inline constexpr uint32_t kDoorbellSegmentKind = 0x42454c4c;  // "BELL"

// The owner's end (the worker whose index the ring's name carries,
// segments.h): creates the ring segment `name` of `slots` slots (a power of
// two) with an empty ring, or adopts the one a predecessor left, with what
// it holds. A ring of another size is refused (the configuration changed
// while the group ran).
// `prefault`: kYes commits every page at creation, so the data path never
// faults; kNo leaves each page to its first write (see kPersistRingPrefault).
inline ring::Result<ring::SharedSegment> createRingSegment(const std::string& name, uint32_t slots,
                                                           ring::Prefault prefault = ring::Prefault::kYes) {
  return ring::SharedSegment::createOrAttach(
      name, ring::ringBytes(slots), kRingSegmentKind,
      [slots](void* payload, std::size_t size) { return ring::initRing(payload, size, slots); }, prefault);
}

// The other end (the forwarder, the persister): waits up to `wait` for the
// owner to make the ring, which must have `slots` slots.
inline ring::Result<ring::SharedSegment> attachRingSegment(const std::string& name, uint32_t slots,
                                                           std::string_view owner, std::chrono::milliseconds wait) {
  auto segment = attachOwned(name, kRingSegmentKind, ring::ringBytes(slots), owner, wait);
  if (segment && segment->payloadSize() != ring::ringBytes(slots))
    return ring::fail(ring::Errc::kMismatch, "shared memory " + name + ": a ring of " +
                                                 std::to_string(segment->payloadSize()) + " octets, " +
                                                 "the configuration makes it " +
                                                 std::to_string(ring::ringBytes(slots)) +
                                                 "; stop the group (gtpcp stop) before changing ring sizes");
  return segment;
}

// A worker's persist ring is the queue that rides out a Redis outage
// (rings.persist_slots, 16 MiB by default): committing it at creation was
// 4,096 page faults, most of a worker's cold start. Its pages are committed
// by the worker's first pass over the ring instead: one fault per 64 change
// records, once.
inline constexpr ring::Prefault kPersistRingPrefault = ring::Prefault::kNo;

// The doorbell a worker sleeps on, in a segment of its own, made by the
// worker (its owner): the forwarder and the persister ring it.
inline ring::Result<ring::SharedSegment> createDoorbellSegment(const std::string& name) {
  return ring::SharedSegment::createOrAttach(
      name, sizeof(ring::DoorbellShm), kDoorbellSegmentKind, [](void* payload, std::size_t) -> ring::Result<void> {
        ring::initDoorbell(static_cast<ring::DoorbellShm*>(payload));
        return {};
      });
}
inline ring::Result<ring::SharedSegment> attachDoorbellSegment(const std::string& name, std::string_view owner,
                                                               std::chrono::milliseconds wait) {
  return attachOwned(name, kDoorbellSegmentKind, sizeof(ring::DoorbellShm), owner, wait);
}

// Whether every record published on the ring in `segment` was popped and
// released: an observer's view (neither producer nor consumer), for a stop
// that waits until the workers took everything the forwarder queued.
inline bool ringDrained(const ring::SharedSegment& segment) noexcept {
  const auto* h = static_cast<const ring::RingHeaderShm*>(segment.payload());
  // RING-A2 and RING-A1 (an observer's): pair with RING-R2 in the
  // consumer's release() and RING-R1 in the producer's publish() (ring.h).
  return h->tail.load(std::memory_order_acquire) == h->head.load(std::memory_order_acquire);
}

}  // namespace gtpcp::group
