// The GTP values the worker's procedures still name by number: each is
// defined here once, so that naming it from the generated tables
// (common/gtp/tables) is one edit. Private to workers/lib.
#pragma once

#include <cstdint>

namespace gtpcp::worker {

// GTP-C's UDP port (TS 29.274 §4.2, TS 29.060 §4.2): where the proxy sends
// its requests, whatever port a peer sent from.
inline constexpr uint16_t kGtpcPort = 2123;

// -- GTPv2-C (TS 29.274)

// Sequence numbers with the top bit set belong to command-triggered
// procedures (§7.6); the proxy's numbers keep that bit. The numbers below it
// are the space the proxy numbers its other requests from.
inline constexpr uint32_t kCommandBit = 0x800000;

// F-TEID interface types (§8.22) of the control-plane endpoints on each leg:
// what a peer on that leg puts in a message to name itself.
inline constexpr uint8_t kS5S8SgwGtpc = 6;
inline constexpr uint8_t kS5S8PgwGtpc = 7;
inline constexpr uint8_t kS2bEpdgGtpc = 30;
inline constexpr uint8_t kS2bPgwGtpc = 32;

// Causes (Table 8.4-1): 16-63 accept a request.
inline constexpr uint8_t kV2FirstAcceptance = 16;
inline constexpr uint8_t kV2FirstRejection = 64;
// The UE is asked to connect again (to a gateway that has its session).
inline constexpr uint8_t kV2CauseReactivationRequested = 8;

// EPS Bearer IDs that name bearers (§8.8; 0-4 are spare).
inline constexpr uint8_t kFirstEbi = 5;
inline constexpr uint8_t kLastEbi = 15;

// PDN Type values (§8.34).
inline constexpr uint8_t kPdnTypeIpv4 = 1;
inline constexpr uint8_t kPdnTypeIpv6 = 2;
inline constexpr uint8_t kPdnTypeIpv4v6 = 3;

// -- GTPv1-C (TS 29.060)

// IE types below this one are TV, of a length their type fixes (§7.7).
inline constexpr uint8_t kV1FirstTlvIe = 128;

// Causes (§7.7.1): 128-191 accept a request, 192-255 reject it.
inline constexpr uint8_t kV1FirstAcceptance = 128;
inline constexpr uint8_t kV1FirstRejection = 192;
inline constexpr uint8_t kV1CauseNonExistent = 192;
inline constexpr uint8_t kV1CauseImsiImeiNotKnown = 194;
inline constexpr uint8_t kV1CauseNoResourcesAvailable = 199;
inline constexpr uint8_t kV1CauseMandatoryIeIncorrect = 201;
inline constexpr uint8_t kV1CauseOptionalIeIncorrect = 203;
inline constexpr uint8_t kV1CauseSystemFailure = 204;
// Request cause: the MS is asked to activate its context again.
inline constexpr uint8_t kV1CauseReactivationRequested = 6;

// The NSAPI a Delete PDP Context Request names when the proxy knows none
// (the lowest that names a context, TS 24.008 §10.5.6.2).
inline constexpr uint8_t kV1FirstNsapi = 5;

}  // namespace gtpcp::worker
