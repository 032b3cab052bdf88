// In-place patches of a GTPv1-C message: the proxy's hot path (see
// v2/patch.h). `bytes` is the writable message; `ie` comes from the Message
// decoded from it.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "common/gtp/bytes.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/values.h"

namespace gtpcp::gtp::v1 {

inline void patchTeid(std::span<uint8_t> bytes, uint32_t teid) noexcept {
  store32(bytes.data() + 4, teid);
}

// False when the header has no sequence number field (S, E and PN all 0).
inline bool patchSequenceNumber(std::span<uint8_t> bytes, uint16_t sequence_number) noexcept {
  if (!(bytes[0] & kFlagsOptional)) return false;
  store16(bytes.data() + 8, sequence_number);
  return true;
}

// The 4-octet TEID of a TEID Data I or TEID Control Plane IE.
inline void patchTeidIe(std::span<uint8_t> bytes, const Ie& ie, uint32_t teid) noexcept {
  store32(bytes.data() + ie.valueOffset(), teid);
}

// The TEID of a TEID Data II IE (after its NSAPI octet).
inline void patchTeidDataII(std::span<uint8_t> bytes, const Ie& ie, uint32_t teid) noexcept {
  store32(bytes.data() + ie.valueOffset() + 1, teid);
}

// A GSN Address IE's address, same family only; false otherwise.
inline bool patchGsnAddress(std::span<uint8_t> bytes, const Ie& ie, const Ipv4& address) noexcept {
  if (ie.length != 4) return false;
  std::memcpy(bytes.data() + ie.valueOffset(), address.octets.data(), 4);
  return true;
}
inline bool patchGsnAddress(std::span<uint8_t> bytes, const Ie& ie, const Ipv6& address) noexcept {
  if (ie.length != 16) return false;
  std::memcpy(bytes.data() + ie.valueOffset(), address.octets.data(), 16);
  return true;
}

}  // namespace gtpcp::gtp::v1
