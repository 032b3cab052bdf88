// What the forwarder does with a datagram, decided from its first octets.
//
// Pure functions, no state: the forwarder's loop and its tests call them.
// GTPv1-C (Gn/Gp, TS 29.060) and GTPv2-C (S5/S8, TS 29.274) are classified
// alike: a TEID of the proxy's names its partition, a session-creating
// request (TEID 0) is placed by its IMSI, a request naming a subscriber by
// IMSI goes to that subscriber's partition, anything else with TEID 0 goes to
// the worker its sequence number names.
#pragma once

#include <cstdint>
#include <span>

#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::forwarder {

enum class Route : uint8_t {
  kPriority,             // a worker's priority ring: responses, requests of established sessions
  kNew,                  // a worker's new ring: a session-creating request
  kEveryWorker,          // every worker's priority ring: a node-level request naming sessions of all partitions
  kEchoRequest,          // answered by the forwarder itself (in the request's version)
  kEchoResponse,         // to the proxy's own health checks
  kVersionNotSupported,  // answered with Version Not Supported (GTPv1's to version 0, GTPv2's to the others)
  kDrop,                 // not GTP-C, or a header that does not decode
};

struct Classification {
  Route route = Route::kDrop;
  uint16_t worker = 0;   // kPriority, kNew
  uint8_t version = 0;
  uint8_t message_type = 0;
  bool decoded = false;  // the scratch message of `version` holds this datagram, decoded (kNew only)
};

// Where classify() decodes the messages whose IMSI it needs. One per caller
// thread; about 3 KiB.
struct ClassifyScratch {
  gtp::v2::Message v2;
  gtp::v1::Message v1;
};

// `scratch` decodes a Create Session Request (Create PDP Context Request)
// when its IMSI is needed; its v2 (v1) member is valid after a kNew result of
// version 2 (1) with `decoded` set (the overload path reads it).
Classification classify(std::span<const uint8_t> datagram, uint16_t workers,
                        ClassifyScratch& scratch) noexcept;

}  // namespace gtpcp::forwarder
