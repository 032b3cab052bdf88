// A datagram's arrival as the worker's procedures see it: where it came
// from, on which of the forwarder's sockets, and when. Apart from the proxy
// so that the restorer, which holds datagrams until their session is read
// back, needs none of the procedures.
#pragma once

#include <cstdint>

#include "common/net/address.h"

namespace gtpcp::worker {

// What arrived: the datagram's source and the socket it came in on.
struct Arrival {
  net::Address peer;
  uint8_t socket = 0;
  uint64_t now_ns = 0;   // CLOCK_MONOTONIC, for timers
  uint64_t wall_ns = 0;  // CLOCK_REALTIME, for session records
  // CLOCK_MONOTONIC of the forwarder's reception (DatagramMeta::receive_ns;
  // 0: not known). What the proxy sends for this datagram carries it back
  // (Egress::send()); a held datagram keeps it until it is handled.
  uint64_t receive_ns = 0;
  // Handed back by the restorer after it held the datagram: counted as
  // received when it first arrived.
  bool replayed = false;
};

}  // namespace gtpcp::worker
