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
};

}  // namespace gtpcp::worker
