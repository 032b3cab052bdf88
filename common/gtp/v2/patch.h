// In-place patches of a GTPv2-C message: the proxy's hot path.
//
// A relayed message differs from the received one only in the header TEID,
// the sequence number and the control-plane F-TEIDs; these functions change
// exactly those octets and leave the rest of the datagram as it came. `bytes`
// is the message's own octets (for a piggybacked message, the datagram from
// its offset on), writable; `ie` comes from the Message decoded from them.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "common/gtp/bytes.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/values.h"

namespace gtpcp::gtp::v2 {

// Header TEID. Only a header with T=1 has one; returns false otherwise.
inline bool patchTeid(std::span<uint8_t> bytes, uint32_t teid) noexcept {
  if (!(bytes[0] & kFlagTeid)) return false;
  store32(bytes.data() + 4, teid);
  return true;
}

// Header sequence number (24 bits).
inline void patchSequenceNumber(std::span<uint8_t> bytes, uint32_t sequence_number) noexcept {
  store24(bytes.data() + ((bytes[0] & kFlagTeid) ? 8 : 4), sequence_number & 0xffffff);
}

// F-TEID TEID/GRE key field. `ie` must be an F-TEID (Message::value() of at
// least 5 octets; FTeid::decode() checked that).
inline void patchFTeidTeid(std::span<uint8_t> bytes, const Ie& ie, uint32_t teid) noexcept {
  store32(bytes.data() + ie.valueOffset() + 1, teid);
}

// F-TEID IPv4 address; false if the F-TEID carries no IPv4 address (changing
// the address family changes the IE's length: not an in-place patch).
inline bool patchFTeidIpv4(std::span<uint8_t> bytes, const Ie& ie, const Ipv4& address) noexcept {
  uint8_t* v = bytes.data() + ie.valueOffset();
  if (!(v[0] & 0x80) || ie.length < 9) return false;
  std::memcpy(v + 5, address.octets.data(), 4);
  return true;
}

// F-TEID IPv6 address; false if the F-TEID carries none.
inline bool patchFTeidIpv6(std::span<uint8_t> bytes, const Ie& ie, const Ipv6& address) noexcept {
  uint8_t* v = bytes.data() + ie.valueOffset();
  const std::size_t at = (v[0] & 0x80) ? 9 : 5;
  if (!(v[0] & 0x40) || ie.length < at + 16) return false;
  std::memcpy(v + at, address.octets.data(), 16);
  return true;
}

// Both at once, the common case of a proxy rewriting a control F-TEID: TEID and
// IPv4 address. False (and nothing written) when the F-TEID has no IPv4.
inline bool patchFTeid(std::span<uint8_t> bytes, const Ie& ie, uint32_t teid,
                       const Ipv4& address) noexcept {
  uint8_t* v = bytes.data() + ie.valueOffset();
  if (!(v[0] & 0x80) || ie.length < 9) return false;
  store32(v + 1, teid);
  std::memcpy(v + 5, address.octets.data(), 4);
  return true;
}

}  // namespace gtpcp::gtp::v2
