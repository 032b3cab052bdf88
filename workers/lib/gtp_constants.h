// The GTP values the worker's procedures name, by the names they use: the
// facts of the generated tables (common/gtp/tables) and the constants of
// common/gtp, and the few field encodings no table holds. Private to
// workers/lib.
#pragma once

#include <cstdint>

#include "common/gtp/constants.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::worker {

// GTP-C's UDP port (TS 29.274 §4.2, TS 29.060 §4.2): where the proxy sends
// its requests, whatever port a peer sent from.
inline constexpr uint16_t kGtpcPort = gtp::kGtpcPort;

// -- GTPv2-C (TS 29.274)

// Sequence numbers with the top bit set belong to command-triggered
// procedures (§7.6); the proxy's numbers keep that bit. The numbers below it
// are the space the proxy numbers its other requests from.
inline constexpr uint32_t kCommandBit = gtp::v2::kCommandBit;

// The UE is asked to connect again (to a gateway that has its session).
inline constexpr uint8_t kV2CauseReactivationRequested = static_cast<uint8_t>(gtp::v2::Cause::kReactivationRequested);

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

// Causes (§7.7.1) the proxy answers with itself.
inline constexpr uint8_t kV1CauseNonExistent = static_cast<uint8_t>(gtp::v1::Cause::kNonExistent);
inline constexpr uint8_t kV1CauseImsiImeiNotKnown = static_cast<uint8_t>(gtp::v1::Cause::kImsiImeiNotKnown);
inline constexpr uint8_t kV1CauseNoResourcesAvailable = static_cast<uint8_t>(gtp::v1::Cause::kNoResourcesAvailable);
inline constexpr uint8_t kV1CauseMandatoryIeIncorrect = static_cast<uint8_t>(gtp::v1::Cause::kMandatoryIeIncorrect);
inline constexpr uint8_t kV1CauseOptionalIeIncorrect = static_cast<uint8_t>(gtp::v1::Cause::kOptionalIeIncorrect);
inline constexpr uint8_t kV1CauseSystemFailure = static_cast<uint8_t>(gtp::v1::Cause::kSystemFailure);
// Request cause: the MS is asked to activate its context again.
inline constexpr uint8_t kV1CauseReactivationRequested = static_cast<uint8_t>(gtp::v1::Cause::kReactivationRequested);

// The NSAPI a Delete PDP Context Request names when the proxy knows none
// (the lowest that names a context, TS 24.008 §10.5.6.2).
inline constexpr uint8_t kV1FirstNsapi = 5;

}  // namespace gtpcp::worker
