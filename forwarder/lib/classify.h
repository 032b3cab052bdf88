// What the forwarder does with a datagram, decided from its first octets.
//
// Pure functions, no state: the forwarder's loop and its tests call them.
#pragma once

#include <cstdint>
#include <span>

#include "common/gtp/v2/message.h"

namespace gtpcp::forwarder {

enum class Route : uint8_t {
  kPriority,             // a worker's priority ring: responses, requests of established sessions
  kNew,                  // a worker's new ring: a session-creating request
  kEveryWorker,          // every worker's priority ring: a node-level request naming sessions of all partitions
  kEchoRequest,          // answered by the forwarder itself
  kEchoResponse,         // to the proxy's own health checks
  kVersionNotSupported,  // answered with Version Not Supported
  kGtpv1,                // Gn/Gp: not served by this build's workers
  kDrop,                 // not GTP-C
};

struct Classification {
  Route route = Route::kDrop;
  uint16_t worker = 0;   // kPriority, kNew
  uint8_t version = 0;
  uint8_t message_type = 0;
  bool decoded = false;  // `scratch` holds this datagram, decoded (kNew only)
};

// `scratch` decodes a Create Session Request when its IMSI is needed; its
// contents are valid after a kNew result (the overload path reads it).
Classification classify(std::span<const uint8_t> datagram, uint16_t workers,
                        gtp::v2::Message& scratch) noexcept;

}  // namespace gtpcp::forwarder
