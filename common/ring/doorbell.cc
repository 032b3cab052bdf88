#include "common/ring/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

#include "common/ring/dekker_fence.h"

namespace gtpcp::ring {

namespace {

uint32_t* futexWord(std::atomic<uint32_t>* word) {
  return reinterpret_cast<uint32_t*>(word);
}


}  // namespace

void initDoorbell(DoorbellShm* shm) noexcept {
  // Relaxed: the doorbell is initialised before it is shared (the segment's
  // magic, or the thread start, publishes it).
  shm->sequence.store(0, std::memory_order_relaxed);
  shm->sleeping.store(0, std::memory_order_relaxed);
}

void Doorbell::ring() noexcept {
  // DOOR-F1 pairs with DOOR-F2 in announceSleep() (see the protocol in doorbell.h).
  dekkerFence();
  // DOOR-A1 pairs with DOOR-R1 in announceSleep(): when this sees the consumer's 1, the
  // consumer's load of `sequence` happened before the increment below.
  if (shm_->sleeping.load(std::memory_order_acquire) == 0) return;
  // Relaxed: the datagrams are published by the ring's release store (RING-R1);
  // this only moves the futex word so that FUTEX_WAIT does not block.
  shm_->sequence.fetch_add(1, std::memory_order_relaxed);
  // Not private: the sleeper is usually another process. Wake all: there is
  // one consumer, and waking "all" of one costs the same.
  ::syscall(SYS_futex, futexWord(&shm_->sequence), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

uint32_t Doorbell::announceSleep() noexcept {
  // Relaxed: ordered before the release store below, which is what producers
  // synchronise with (DOOR-A1).
  const uint32_t seen = shm_->sequence.load(std::memory_order_relaxed);
  // DOOR-R1 pairs with DOOR-A1 in ring().
  shm_->sleeping.store(1, std::memory_order_release);
  // DOOR-F2 pairs with DOOR-F1 in ring().
  dekkerFence();
  return seen;
}

Doorbell::Slept Doorbell::sleepUnlessRung(uint32_t seen, std::chrono::nanoseconds timeout) noexcept {
  const auto ns = timeout.count();
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  // FUTEX_WAIT sleeps only while the word still equals `seen` (compared in the
  // kernel, atomically with going to sleep); its timeout is relative.
  const long rc = ::syscall(SYS_futex, futexWord(&shm_->sequence), FUTEX_WAIT, seen, &ts, nullptr, 0);
  if (rc == 0) {
    // Woken: by a ring, or by a late FUTEX_WAKE meant for an earlier sleep.
    // Relaxed: only compares the word; the data comes through the ring (RING-A1).
    return shm_->sequence.load(std::memory_order_relaxed) != seen ? Slept::kRung : Slept::kSpurious;
  }
  switch (errno) {
    case EAGAIN: return Slept::kRung;  // rung between announceSleep() and here
    case ETIMEDOUT: return Slept::kTimedOut;
    default: return Slept::kSpurious;  // EINTR: a signal; the caller checks the deadline
  }
}

void Doorbell::endSleep() noexcept {
  // Relaxed: a producer that still reads the 1 only makes a needless
  // FUTEX_WAKE; the next sleep announces itself again with DOOR-R1.
  shm_->sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace gtpcp::ring
