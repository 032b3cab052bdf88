// Wakes a sleeping consumer when a producer has published into one of its
// rings: a futex on a shared 32-bit word (FUTEX_WAIT / FUTEX_WAKE without
// FUTEX_PRIVATE_FLAG, because producer and consumer are different processes).
//
// The doorbell is apart from the ring because a worker consumes two rings
// (priority and new) with one doorbell and also wakes on timeouts for its
// timers. An idle gtpcp process must sleep: the machine's cores are shared.
//
// THE PROTOCOL (Dekker's, between "data published" and "consumer asleep")
//
// Producer, after Ring publish() of a batch (the release store of head), in
// ring(): DOOR-F1 seq_cst fence, then load `sleeping` (DOOR-A1); only when it is 1,
// increment `sequence` and FUTEX_WAKE. A busy consumer (not sleeping) costs
// the producer one fence and one load per batch, and no system call.
//
// Consumer, in wait(): ready() first (no announcement when work is there).
// Otherwise: load `sequence` into s, store sleeping = 1 (DOOR-R1), DOOR-F2 seq_cst
// fence, ready() again, then FUTEX_WAIT(sequence, s, timeout), then
// sleeping = 0.
//
// No lost wake-up. DOOR-F1 and DOOR-F2 are ordered one way or the other:
// - DOOR-F1 before DOOR-F2: the consumer's ready() after DOOR-F2 sees the head stored before
//   DOOR-F1, so it does not sleep;
// - DOOR-F2 before DOOR-F1: the producer's load after DOOR-F1 sees sleeping = 1, so it
//   increments `sequence`. The consumer read s before storing sleeping = 1,
//   and the producer's acquire load (DOOR-A1) of that store orders the increment
//   after the read: s is stale, and FUTEX_WAIT, which compares atomically in
//   the kernel, returns at once or is woken by the FUTEX_WAKE.
// A stale wake (a producer that saw the 1 of an earlier sleep) only costs a
// spurious return, which wait() tells apart from a real ring.
//
// Several producers may ring one doorbell (the increment is atomic). There is
// exactly one consumer per doorbell.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/ring/doorbell_shm.h"

namespace gtpcp::ring {

class Doorbell {
 public:
  // `shm` must outlive the Doorbell and have been through initDoorbell() once.
  explicit Doorbell(DoorbellShm* shm) noexcept : shm_(shm) {}

  // Producer side, after publish() of a batch: wakes the consumer only if it
  // is asleep. Any number of producers, threads or processes.
  void ring() noexcept;

  // Consumer side (one consumer): sleeps until ring() or `timeout`, unless
  // ready() is true (checked first, and again after the consumer has
  // announced that it sleeps, so no wake-up is lost). Returns true when woken
  // or ready, false on timeout. ready() is called a few times; it must be
  // cheap and must not throw (e.g. !consumer.empty() for each ring). Spurious
  // futex returns and signals (EINTR) are absorbed until the timeout, a bounded
  // number of times.
  template <class Ready>
  bool wait(Ready ready, std::chrono::nanoseconds timeout) noexcept;

 private:
  enum class Slept { kRung, kTimedOut, kSpurious };
  // At most this many futex returns per wait() that are neither a ring nor the
  // timeout (signals, stale wakes) before wait() gives up and returns false.
  static constexpr int kMaxSleepRounds = 1000;
  // A timeout longer than this is taken as this (keeps the deadline in range).
  static constexpr std::chrono::hours kMaxTimeout{24 * 365};

  uint32_t announceSleep() noexcept;
  Slept sleepUnlessRung(uint32_t seen, std::chrono::nanoseconds timeout) noexcept;
  void endSleep() noexcept;

  DoorbellShm* shm_;
};

template <class Ready>
bool Doorbell::wait(Ready ready, std::chrono::nanoseconds timeout) noexcept {
  if (ready()) return true;
  if (timeout <= std::chrono::nanoseconds::zero()) return false;
  if (timeout > kMaxTimeout) timeout = kMaxTimeout;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const uint32_t seen = announceSleep();
  bool woken = false;
  for (int round = 0; round < kMaxSleepRounds; ++round) {
    // After DOOR-F2: a batch published before the producer's DOOR-F1 is seen here.
    if (ready()) {
      woken = true;
      break;
    }
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) break;
    if (sleepUnlessRung(seen, left) == Slept::kRung) {
      woken = true;
      break;
    }
  }
  endSleep();
  return woken;
}

}  // namespace gtpcp::ring
