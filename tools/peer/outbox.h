// Where the emulator's engines put the datagrams they send. The runner's
// implementation batches them per socket for sendmmsg (behind a
// FailoverOutbox when a failover is configured); tests capture them.
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
  // The address given is the proxy's: a control F-TEID it sent names it. An
  // Outbox that redirects the datagrams for the proxy (FailoverOutbox)
  // redirects those for it too; the others ignore it.
  virtual void noteProxyAddress(const IpAddress&) noexcept {}
};

}  // namespace gtpcp::peer
