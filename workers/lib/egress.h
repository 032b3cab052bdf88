// Where the worker's outgoing datagrams go: the egress ring to the forwarder
// in production, a recording fake in tests.
#pragma once

#include <cstdint>
#include <span>

#include "common/net/address.h"

namespace gtpcp::worker {

class Egress {
 public:
  virtual ~Egress() = default;
  // Queues `bytes` (copied before returning) to leave forwarder socket
  // `socket` for `to`. False when there is no room: the datagram is lost and
  // the caller counts it.
  virtual bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept = 0;
  // The same, for a datagram made of (or answering) one the forwarder
  // received at `receive_ns` (CLOCK_MONOTONIC, DatagramMeta::receive_ns); 0
  // for the proxy's own requests and what its timers send. The egress ring
  // carries it back to the forwarder, which measures what the proxy added.
  // An egress that measures nothing need not override it.
  virtual bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
                    uint64_t /*receive_ns*/) noexcept {
    return send(socket, to, bytes);
  }
};

}  // namespace gtpcp::worker
