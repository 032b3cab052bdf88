// Where the emulator's engines put the datagrams they send. The runner's
// implementation batches them per socket for sendmmsg; tests capture them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tools/peer/udp.h"

namespace gtpcp::peer {

class Outbox {
 public:
  virtual ~Outbox() = default;
  // A buffer of at least kMaxBuiltMessage octets for the next datagram leaving
  // socket `socket`; valid until commit() or the next reserve() for it.
  virtual std::span<uint8_t> reserve(uint32_t socket) noexcept = 0;
  // Queues the first `length` octets of the buffer just reserved, to `to`.
  virtual void commit(uint32_t socket, const Endpoint& to, std::size_t length) noexcept = 0;
};

}  // namespace gtpcp::peer
