// The few messages the forwarder writes itself: Echo Responses (it answers
// Echo for the whole group, with the group's Recovery), Version Not Supported,
// and the "No resources available" rejection of a session creation when the
// owning worker's new-session ring is full.
#pragma once

#include <cstdint>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::forwarder {

// Each writes into `out` and returns the bytes written (0 when the request
// cannot be answered: unreadable header, buffer too small).
std::size_t echoResponseV2(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept;
std::size_t echoResponseV1(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept;
std::size_t versionNotSupportedV2(std::span<uint8_t> out) noexcept;
// `request` is a decoded Create Session Request: the answer carries its
// sender F-TEID's TEID and its sequence number.
std::size_t createSessionOverload(const gtp::v2::Message& request, std::span<uint8_t> out) noexcept;

}  // namespace gtpcp::forwarder
