// The answers emulated SGWs gave to requests their peers started (Create,
// Update and Delete Bearer Requests from a proxy or a PGW), so that a retransmission of one (same
// source address and port, same node, same sequence number, within the
// duplicate window; TS 29.274 §7.6) gets the same answer again and is acted on
// and counted once.
//
// What an answer needs to be built again is kept, not its octets: the
// builders are deterministic. Entries live in a ring in arrival order with a
// HashIndex over it; capacity is fixed by init(). When the ring is full the
// oldest answer gives way, and the caller is told whether it was still
// within the window (a retransmission of it would then be taken for a new
// request). Nothing after init() allocates, throws or logs. One thread only.
#pragma once

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

class AnswerCache {
 public:
  struct Answer {
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

  // Room for `capacity` answers (rounded up to a power of two), each good
  // for `window_ns`. Startup only.
  void init(std::size_t capacity, int64_t window_ns);

  // The answer given to `key` less than the window before `now`, or nullptr.
  const Answer* find(const RequestKey& key, int64_t now) const noexcept;

  // Remembers `answer` to `key` at `now`. Returns true when this evicted an
  // answer still within the window.
  bool insert(const RequestKey& key, int64_t now, const Answer& answer) noexcept;

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

}  // namespace gtpcp::peer
