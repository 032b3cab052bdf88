// Between a ring record's metadata and a peer address.
#pragma once

#include <cstring>

#include "common/net/address.h"
#include "common/ring/ring_shm.h"

namespace gtpcp::group {

inline net::Address peerOf(const ring::DatagramMeta& meta) noexcept {
  net::Address a;
  a.family = meta.peer_family;
  a.port = meta.peer_port;
  std::memcpy(a.bytes, meta.peer_address, sizeof a.bytes);
  return a;
}

inline void setPeer(ring::DatagramMeta& meta, const net::Address& a) noexcept {
  meta.peer_family = a.family;
  meta.peer_port = a.port;
  std::memcpy(meta.peer_address, a.bytes, sizeof meta.peer_address);
}

}  // namespace gtpcp::group
