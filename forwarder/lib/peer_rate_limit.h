// Per-peer limit on session-creating requests (overload.creations_per_peer):
// a token bucket per source address, so one SGW's storm of attaches cannot
// take every worker's new-session capacity from the others. Requests over
// the limit are rejected by the forwarder with No resources available, as
// when a new ring is full.
//
// Fixed memory: a table of buckets found by hashing the address and probing
// a few slots; when all of them hold other peers, the least recently seen
// of them gives its slot up (a new bucket starts full). Single-threaded.
#pragma once

#include <cstdint>
#include <vector>

#include "common/net/address.h"

namespace gtpcp::forwarder {

class PeerRateLimiter {
 public:
  // `rate` requests per second per peer, bursts of up to `burst`.
  PeerRateLimiter(uint32_t rate, uint32_t burst, uint32_t peers = 4096);

  // True when the peer at `from` (its address; the port does not matter)
  // may create a session at `now_ns`; takes a token if so.
  bool allow(const net::Address& from, uint64_t now_ns) noexcept;

 private:
  static constexpr uint32_t kProbe = 8;
  struct Bucket {
    net::Address peer;  // family 0: free
    double tokens = 0;
    uint64_t last_ns = 0;
  };
  uint32_t home(const net::Address& a) const noexcept;

  double rate_per_ns_;
  double burst_;
  std::vector<Bucket> buckets_;
  uint32_t mask_;
};

}  // namespace gtpcp::forwarder
