// The requests a worker forwarded, from the first time they arrive until
// their lifetime, T3 x (N3 + 1), is over (DESIGN.md, "Translation rules";
// TS 29.274 §7.6, TS 29.060 §7.2).
//
// A transaction is found two ways:
//   * by its response key: the sequence number the proxy sent the request
//     with (and, for a request numbered with the peer's own command sequence
//     number, the proxy TEID the response carries), to match the response;
//   * by its requester: the peer that sent the request and the sequence
//     number it used, to recognise a retransmission of the request.
// It stays after its response was relayed, in state answered, holding the
// answer as sent in the answer cache: a retransmitted request is answered
// from there, and a second copy of the response is recognised as a duplicate.
//
// Everything lives in the worker's segment. The records are the truth; the
// two indexes (open addressing, linear probing, backward-shift deletion) and
// the free list are rebuilt from them when a worker attaches to a segment its
// predecessor used, so a worker killed between two stores leaves nothing its
// successor cannot repair. The answer cache is a byte ring: an answer is
// valid while the ring has not wrapped over it, which the cache's size must
// make longer than a transaction's lifetime (sessions.answer_cache_bytes).
//
// Single-threaded: only the worker's main loop calls it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/net/address.h"
#include "worker_layout.h"

namespace gtpcp::worker {

// The response key of a request the proxy numbered from its own counter.
inline constexpr uint64_t proxyNumbered(uint32_t proxy_sequence) noexcept { return proxy_sequence; }
// The response key of a request the proxy sent with the sequence number of the
// command that triggered it (TS 29.274 §7.6): unique only together with the
// proxy TEID the response is addressed to.
inline constexpr uint64_t commandNumbered(uint32_t proxy_teid, uint32_t sequence) noexcept {
  return (uint64_t{proxy_teid} << 32) | sequence;
}

// The response key of a GTPv1 request the proxy numbered toward `toward`:
// v1 numbers are 16 bits, counted per leg (TS 29.060 §7.2), so the leg is
// part of the key; the tag keeps them apart from GTPv2 keys (below 2^32 with
// bit 23 clear for a proxy number, bit 23 set in the low word for a command).
inline constexpr uint64_t v1Numbered(uint8_t toward, uint16_t sequence) noexcept {
  return (uint64_t{0x7631} << 48) | (uint64_t{toward} << 16) | sequence;
}
// What a GTPv1 requester's sequence number is kept as: GTPv2 numbers are 24
// bits, so a node speaking both from one address never has a v1 request
// taken for a retransmission of a v2 one.
inline constexpr uint32_t v1RequesterSequence(uint16_t sequence) noexcept { return 0x1000000u | sequence; }

class TransactionTable {
 public:
  explicit TransactionTable(const TransactionMemory& memory) noexcept;

  // After attaching: `fresh` when the segment was just created (all zero),
  // else the indexes and free list are rebuilt from the records.
  void rebuild(bool fresh) noexcept;

  // A pending transaction for a request from `requester` numbered
  // `requester_sequence`, sent on with `response_key`. nullptr when the table
  // is full or the response key is taken (a caller bug or a wrapped counter).
  TransactionShm* open(uint64_t response_key, const net::Address& requester, uint32_t requester_sequence,
                       uint64_t now_ns) noexcept;
  TransactionShm* findByResponse(uint64_t response_key) noexcept;
  TransactionShm* findByRequester(const net::Address& requester, uint32_t requester_sequence) noexcept;

  // The transaction was answered with `answer` (the datagram as sent to the
  // requester; empty when the answer is not worth caching). False when the
  // answer is larger than a quarter of the cache and was not kept.
  bool answered(TransactionShm& t, std::span<const uint8_t> answer) noexcept;
  // The cached answer, or empty when there is none or the cache wrapped over it.
  std::span<const uint8_t> answerOf(const TransactionShm& t) const noexcept;

  void close(TransactionShm& t) noexcept;
  // Gives a pending transaction another response key (its request goes to
  // another gateway with another number). False when the key is taken.
  bool rekey(TransactionShm& t, uint64_t response_key) noexcept;

  // Keeps the request as sent, for sending it elsewhere later; false when it
  // is too large for the cache.
  bool keepRequest(TransactionShm& t, std::span<const uint8_t> request) noexcept;
  // The kept request, or empty when there is none or the cache wrapped over it.
  std::span<const uint8_t> requestOf(const TransactionShm& t) const noexcept;

  // Examines up to `budget` records from a rotating cursor and closes those
  // received before `deadline_ns`, calling expired(t) first.
  template <class F>
  void sweep(uint64_t deadline_ns, uint32_t budget, F&& expired) {
    for (uint32_t n = 0; n < budget && live_ != 0; ++n) {
      if (cursor_ >= *m_.high_water) cursor_ = 0;
      TransactionShm& t = m_.records[cursor_++];
      if (t.state != static_cast<uint8_t>(TransactionState::kFree) && t.received_ns < deadline_ns) {
        expired(t);
        close(t);
      }
    }
  }

  // Every pending transaction, given to visit(const TransactionShm&).
  template <class F>
  void forEachPending(F&& visit) const {
    for (uint32_t i = 0; i < *m_.high_water; ++i) {
      if (m_.records[i].state == static_cast<uint8_t>(TransactionState::kPending)) visit(m_.records[i]);
    }
  }
  // Record `index` (below capacity()) and the index of a record, for holding
  // a transaction by number outside the table (timers).
  TransactionShm& record(uint32_t index) noexcept { return m_.records[index]; }
  uint32_t indexOf(const TransactionShm& t) const noexcept { return recordOf(t); }

  uint64_t live() const noexcept { return live_; }
  uint64_t pending() const noexcept { return pending_; }
  uint32_t capacity() const noexcept { return m_.capacity; }

 private:
  static constexpr uint32_t kProbeLimit = 64;
  static uint64_t requesterKey(const net::Address& a, uint32_t sequence) noexcept;
  uint32_t home(uint64_t key) const noexcept;
  bool indexInsert(TransactionIndexShm* index, uint64_t key, uint32_t record) noexcept;
  void indexErase(TransactionIndexShm* index, uint64_t key, uint32_t record) noexcept;
  // Copies `bytes` into the answer cache; the position, or nullopt when too large.
  std::optional<uint64_t> store(std::span<const uint8_t> bytes) noexcept;
  std::span<const uint8_t> load(uint64_t position, uint32_t length) const noexcept;
  uint32_t recordOf(const TransactionShm& t) const noexcept {
    return static_cast<uint32_t>(&t - m_.records);
  }

  TransactionMemory m_;
  uint32_t index_mask_;
  uint32_t free_head_ = kNoSlot;
  uint32_t cursor_ = 0;
  uint64_t live_ = 0;
  uint64_t pending_ = 0;
};

}  // namespace gtpcp::worker
