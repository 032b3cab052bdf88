// The answers emulated SGWs and SGSNs gave to requests their peers started
// (Create, Update and Delete Bearer Requests from a proxy or a PGW; Update
// and Delete PDP Context Requests from a GGSN), so that a retransmission of
// one (same source address and port, same node, same sequence number, within
// the duplicate window; TS 29.274 §7.6, TS 29.060 §7.6) gets the same answer
// again and is acted on and counted once.
//
// What an answer needs to be built again is kept, not its octets: the
// builders are deterministic. Entries live in a ring in arrival order with a
// HashIndex over it; capacity is fixed by init(). When the ring is full the
// oldest answer gives way, and the caller is told whether it was still
// within the window (a retransmission of it would then be taken for a new
// request). Nothing after init() allocates, throws or logs. One thread only.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tools/peer/hash_index.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

// A request: who sent it, to which of the emulated nodes, with which
// sequence number (each node tells its own duplicates apart).
struct RequestKey {
  Endpoint from{};
  uint32_t node = 0;
  uint32_t sequence = 0;
  friend bool operator==(const RequestKey&, const RequestKey&) = default;
};

inline uint32_t hashKey(const RequestKey& k) noexcept {
  uint64_t high = 0, low = 0;
  std::memcpy(&high, k.from.addr.octets.data(), 8);
  std::memcpy(&low, k.from.addr.octets.data() + 8, 8);
  const uint64_t folded = high ^ low;
  const uint64_t addr = (folded ^ (folded >> 32)) & 0xffffffffu;
  const uint64_t x =
      (addr << 32) ^ (uint64_t{k.from.port} << 24) ^ (uint64_t{k.node} << 48) ^ k.sequence;
  return static_cast<uint32_t>(x ^ (x >> 29));
}

// What an emulated node needs to answer a request again: the answer's
// facts, not its octets (the builders are deterministic). `A` is the
// version's own (BearerAnswer for the SGWs, V1Answer for the SGSNs).
template <class A>
class AnswerCacheOf {
 public:
  using Answer = A;

  // Room for `capacity` answers (rounded up to a power of two), each good
  // for `window_ns`. Startup only.
  void init(std::size_t capacity, int64_t window_ns) {
    const std::size_t cap = std::bit_ceil(std::max<std::size_t>(capacity, 16));
    ring_.assign(cap, Entry{});
    mask_ = cap - 1;
    next_ = 0;
    window_ns_ = window_ns;
    index_.init(cap);
  }

  // The answer given to `key` less than the window before `now`, or nullptr.
  const Answer* find(const RequestKey& key, int64_t now) const noexcept {
    uint32_t pos = 0;
    if (!index_.find(key, pos)) return nullptr;
    const Entry& e = ring_[pos];
    return now - e.time < window_ns_ ? &e.answer : nullptr;
  }

  // Remembers `answer` to `key` at `now`. Returns true when this evicted an
  // answer still within the window.
  bool insert(const RequestKey& key, int64_t now, const Answer& answer) noexcept {
    const auto pos = static_cast<uint32_t>(next_ & mask_);
    ++next_;
    Entry& e = ring_[pos];
    bool evicted = false;
    if (e.live) {
      index_.erase(e.key);
      evicted = now - e.time < window_ns_;
    }
    // A request seen again after its window: the new answer replaces the old.
    uint32_t old = 0;
    if (index_.find(key, old)) ring_[old].live = false;
    e = Entry{key, now, answer, true};
    index_.insert(key, pos);  // cannot fail: twice as many slots as entries
    return evicted;
  }

 private:
  struct Entry {
    RequestKey key{};
    int64_t time = 0;
    Answer answer{};
    bool live = false;  // false: free, or replaced by a later answer to the same key
  };

  std::vector<Entry> ring_;
  std::size_t next_ = 0;  // free-running; masked on access
  std::size_t mask_ = 0;
  int64_t window_ns_ = 0;
  HashIndex<RequestKey> index_;  // key -> ring position
};

// An SGW's answer to a Create, Update or Delete Bearer Request.
struct BearerAnswer {
  uint32_t header_teid = 0;
  uint8_t cause = 0;
  uint8_t ebi = 0;  // the EBI the answer names (0: none)
  // The response's type: a Delete Bearer Response naming the LBI unless
  // said otherwise; one naming a dedicated bearer carries a Bearer Context.
  gtp::v2::MessageType type = gtp::v2::MessageType::kDeleteBearerResponse;
  bool bearer_context = false;
  // What a Create Bearer Response's F-TEIDs are made of: the subscriber
  // (its IMSI) and the address of the PGW's F-TEID in the request.
  uint32_t index = 0;
  IpAddress pgw_u_addr{};
};

using AnswerCache = AnswerCacheOf<BearerAnswer>;

}  // namespace gtpcp::peer
