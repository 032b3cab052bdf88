// The identity that places a new session in a partition, read the same way by
// the forwarder (to pick the worker) and the worker (to allocate the session
// in that partition).
#pragma once

#include <cstdint>

#include "common/gtp/v2/message.h"

namespace gtpcp::group {

// Partition of the session a GTPv2 Create Session Request (TEID 0) opens:
// hash of the IMSI digits; without a valid IMSI (an emergency attach of a
// UE without UICC), of the MEI; without either, of the sender F-TEID's
// octets, which at least keeps the SGW's retransmissions together.
uint16_t partitionOfCreateSession(const gtp::v2::Message& request) noexcept;

}  // namespace gtpcp::group
