// The few messages the forwarder writes itself: Echo Responses (it answers
// Echo for the whole group, with the group's Recovery), Version Not Supported,
// and the "No resources available" rejection of a session creation when the
// owning worker's new-session ring is full, the peer is over its rate or the
// group drains.
#pragma once

#include <cstdint>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::forwarder {

// Each writes into `out` and returns the bytes written (0 when the request
// cannot be answered: unreadable header, buffer too small).
std::size_t echoResponseV2(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept;
std::size_t echoResponseV1(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept;
// GTPv2 Version Not Supported Indication (TS 29.274 §7.7.2), for any version
// but 0 and 1.
std::size_t versionNotSupportedV2(std::span<uint8_t> out) noexcept;
// GTPv1 Version Not Supported (TS 29.060 §7.2.3), for a GTPv0 (TS 09.60)
// request: header only, TEID 0, with the sequence number of the GTPv0
// header (its octets 5-6) so the sender can match it.
std::size_t versionNotSupportedV1(std::span<const uint8_t> request, std::span<uint8_t> out) noexcept;
// `request` is a decoded Create Session Request: the answer carries its
// sender F-TEID's TEID and its sequence number.
std::size_t createSessionOverload(const gtp::v2::Message& request, std::span<uint8_t> out) noexcept;
// `request` is a decoded Create PDP Context Request: a Create PDP Context
// Response with cause 199 No resources available (TS 29.060 §7.7.1), the
// header TEID from the request's TEID Control Plane IE (the SGSN's; 0 when
// absent) and the request's sequence number, then the group's Recovery IE:
// TS 29.060 §7.7.11 wants Recovery in the first message to a peer, and the
// forwarder cannot tell whether this is one; the value is the group's own,
// so carrying it every time tells the SGSN nothing new.
std::size_t createPdpContextOverload(const gtp::v1::Message& request, uint8_t recovery,
                                     std::span<uint8_t> out) noexcept;

}  // namespace gtpcp::forwarder
