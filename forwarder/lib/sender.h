// The forwarder's send side: per socket, a batch of datagrams that point at
// the workers' egress ring memory or at copies of the forwarder's own
// messages, flushed with sendmmsg; and the drain of one worker's egress ring
// into it.
//
// It also measures what the proxy adds to a datagram (ForwarderShm::
// proxy_latency): a datagram queued with the CLOCK_MONOTONIC time its cause
// was received on a GTP-C socket (DatagramMeta::receive_ns, which the
// forwarder sets at recvmmsg and a worker copies into the egress record of
// what it made of it; or, for the forwarder's own answers, the request's)
// is observed once sent, as (send time - receive_ns), in the histogram of the
// version of the datagram sent. The send time is one clock read per
// sendmmsg batch, after the batch went out, and only for a batch that holds
// such a datagram. A receive_ns of 0 (the proxy's own requests: Echo, a
// worker's timers) is not observed, nor is a datagram the kernel refused.
//
// Single-threaded: the forwarder's loop. No allocation after construction.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/group/forwarder_shm.h"
#include "common/net/address.h"
#include "common/ring/ring.h"
#include "common/time/clock.h"
#include "dispatcher.h"

namespace gtpcp::forwarder {

class Sender final : public ReplySink {
 public:
  // CLOCK_MONOTONIC now, in ns; tests pass their own.
  using Clock = uint64_t (*)() noexcept;

  // `fds`: the sockets by index (DatagramMeta::local_socket), non-blocking;
  // the vector outlives the Sender. At most `batch` datagrams per socket per
  // sendmmsg. Counts into `shm`.
  Sender(const std::vector<int>& fds, std::size_t batch, ForwarderShm& shm, Clock clock = &monotonicNs);

  // Queues bytes that stay valid until the next flush of `socket` (ring
  // memory). `receive_ns`: when the datagram it answers or relays was
  // received (0: none; see the file comment).
  void queue(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes, uint64_t receive_ns) noexcept;

  // A message the forwarder wrote in a buffer it reuses: copied.
  bool reply(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
             uint64_t receive_ns) noexcept override;

  // Sends everything queued, socket by socket.
  void flushAll() noexcept;

 private:
  struct Copy {
    uint8_t bytes[256];
  };
  struct Batch {
    std::vector<mmsghdr> msgs;
    std::vector<iovec> iov;
    std::vector<sockaddr_storage> names;
    std::vector<Copy> copies;
    // Per datagram: its cause's receive_ns (0: not measured) and its
    // proxy_latency index (0 GTPv1-C, 1 GTPv2-C).
    std::vector<uint64_t> receive_ns;
    std::vector<uint8_t> latency_index;
    std::size_t count = 0;
    std::size_t timed = 0;  // datagrams with a receive_ns
  };

  void flush(std::size_t socket) noexcept;

  const std::vector<int>& fds_;
  std::size_t batch_;
  ForwarderShm& shm_;
  Clock clock_;
  std::vector<Batch> per_socket_;
};

// Takes up to `max` records off worker `worker`'s egress ring into `sender`,
// sends them (before the ring's release: the batch points into its slots),
// releases them, and sets the worker's egress_depth gauge and
// egress_high_water mark (the ring's depth when the drain began, or after
// it, whichever is larger). Returns the records taken.
std::size_t drainEgressRing(ring::Consumer& ring, std::size_t worker, std::size_t max, Sender& sender,
                            ForwarderShm& shm) noexcept;

}  // namespace gtpcp::forwarder
