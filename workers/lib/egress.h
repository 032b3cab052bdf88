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
};

}  // namespace gtpcp::worker
