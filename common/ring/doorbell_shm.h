// The doorbell word pair a consumer sleeps on, placed in shared memory by the
// application (next to the rings it announces). See doorbell.h for the
// protocol. Plain data only (STYLE.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace gtpcp::ring {

// Place it at a 64-octet aligned offset: it then has a cache line of its own,
// apart from the rings' head and tail.
struct DoorbellShm {
  // The futex word. Writers: any producer, fetch_add in Doorbell::ring() and
  // only while the consumer sleeps. Readers: the consumer, and the kernel's
  // FUTEX_WAIT comparison.
  std::atomic<uint32_t> sequence;
  // 1 while the consumer is inside Doorbell::wait() past its announcement.
  // Writer: the consumer only. Readers: the producers, once per rung batch.
  std::atomic<uint32_t> sleeping;
  uint8_t padding[56];
};

static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the futex word is shared between processes: it must not hide a lock");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "FUTEX_WAIT reads the atomic as a plain 32-bit word");
static_assert(std::is_standard_layout_v<DoorbellShm>);
static_assert(sizeof(DoorbellShm) == 64);

// Zeroes a doorbell (nobody sleeping). Call once, before any Doorbell uses it,
// e.g. in the SharedSegment::Initializer of the segment that holds it.
void initDoorbell(DoorbellShm* shm) noexcept;

}  // namespace gtpcp::ring
