// The identity that places a new session in a partition, read the same way by
// the forwarder (to pick the worker) and the worker (to allocate the session
// in that partition).
//
// GTPv1 and GTPv2 agree: the same IMSI digits give the same partition in a
// Create PDP Context Request and in a Create Session Request, so everything
// about one subscriber stays in one partition whichever core it comes from.
#pragma once

#include <cstdint>

#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::group {

// Partition of the session a GTPv2 Create Session Request (TEID 0) opens:
// hash of the IMSI digits; without a valid IMSI (an emergency attach of a
// UE without UICC), of the MEI; without either, of the sender F-TEID's
// octets, which at least keeps the SGW's retransmissions together.
uint16_t partitionOfCreateSession(const gtp::v2::Message& request) noexcept;

// Partition of the session a GTPv1 Create PDP Context Request (TEID 0) opens,
// and of the subscriber a PDU Notification Request names: hash of the IMSI
// digits, as partitionOfCreateSession() hashes them; without a valid IMSI, of
// the IMEI(SV) digits; without either, of the TEID Control Plane value
// followed by the first GSN Address (the SGSN's address for signalling),
// which keeps the SGSN's retransmissions together. `request` must be
// decoded. Any thread.
uint16_t partitionOfCreatePdpContext(const gtp::v1::Message& request) noexcept;

}  // namespace gtpcp::group
