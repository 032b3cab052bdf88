#include "peer_rate_limit.h"

#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace gtpcp::forwarder {

PeerRateLimiter::PeerRateLimiter(uint32_t rate, uint32_t burst, uint32_t peers)
    : rate_per_ns_(rate / 1e9),
      burst_(burst),
      buckets_(std::bit_ceil(std::max<uint32_t>(peers, kProbe))),
      mask_(static_cast<uint32_t>(buckets_.size() - 1)) {}

uint32_t PeerRateLimiter::home(const net::Address& a) const noexcept {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the octets that name the host
  const std::size_t n = a.family == AF_INET6 ? 16 : 4;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ a.bytes[i]) * 0x100000001b3ull;
  return static_cast<uint32_t>(h ^ (h >> 32)) & mask_;
}

bool PeerRateLimiter::allow(const net::Address& from, uint64_t now_ns) noexcept {
  const uint32_t start = home(from);
  Bucket* found = nullptr;
  Bucket* oldest = &buckets_[start];
  for (uint32_t i = 0; i < kProbe && found == nullptr; ++i) {
    Bucket& b = buckets_[(start + i) & mask_];
    if (b.peer.family != 0 && b.peer.sameHost(from)) {
      found = &b;
    } else if (b.peer.family == 0 || b.last_ns < oldest->last_ns) {
      oldest = &b;
      if (b.peer.family == 0) break;  // a free slot: no need to look further
    }
  }
  if (found == nullptr) {
    found = oldest;
    found->peer = from;
    found->peer.port = 0;
    found->tokens = burst_;
    found->last_ns = now_ns;
  }
  if (now_ns > found->last_ns) {
    found->tokens = std::min(burst_, found->tokens + static_cast<double>(now_ns - found->last_ns) * rate_per_ns_);
    found->last_ns = now_ns;
  }
  if (found->tokens < 1) return false;
  found->tokens -= 1;
  return true;
}

}  // namespace gtpcp::forwarder
