// Requests the proxy forwarded and awaits a response for, by the sequence
// number the proxy gave them.
//
// Open addressing with linear probing and backward-shift deletion (no
// tombstones, so a lookup stops at the first free slot). The table lives in
// the worker's segment: a restarted worker still matches the responses to its
// predecessor's requests. Capacity is a power of two sized well above the
// in-flight count (sessions.transactions); an insert that finds no room within
// the probe limit fails and the caller answers the requester "No resources".
//
// Single-threaded: only the worker's main loop calls it.
#pragma once

#include <cstdint>

#include "workers/lib/worker_shm.h"

namespace gtpcp::worker {

class TransactionTable {
 public:
  TransactionTable(TransactionShm* slots, uint32_t capacity) noexcept;

  // Counts pending entries (after attach).
  void rebuild() noexcept;

  // A pending entry for `proxy_sequence`, zeroed apart from key and state;
  // nullptr when the table has no room near the key's home slot.
  TransactionShm* insert(uint32_t proxy_sequence) noexcept;
  TransactionShm* find(uint32_t proxy_sequence) noexcept;
  void erase(TransactionShm& entry) noexcept;

  // Examines up to `budget` slots from a rotating cursor and erases the
  // pending entries sent before `deadline_ns`, calling expired(entry) first.
  template <class F>
  void sweep(uint64_t deadline_ns, uint32_t budget, F&& expired) {
    for (uint32_t n = 0; n < budget && pending_ != 0; ++n) {
      TransactionShm& e = slots_[cursor_];
      if (e.state == static_cast<uint8_t>(TransactionState::kPending) && e.sent_ns < deadline_ns) {
        expired(e);
        erase(e);  // may shift a later entry into this slot: look at it again
        continue;
      }
      cursor_ = (cursor_ + 1) & mask_;
    }
  }

  uint64_t pending() const noexcept { return pending_; }
  uint32_t capacity() const noexcept { return mask_ + 1; }

 private:
  static constexpr uint32_t kProbeLimit = 64;
  uint32_t home(uint32_t key) const noexcept { return (key * 0x9e3779b1u) >> shift_; }

  TransactionShm* slots_;
  uint32_t mask_;
  unsigned shift_;
  uint32_t cursor_ = 0;
  uint64_t pending_ = 0;
};

}  // namespace gtpcp::worker
