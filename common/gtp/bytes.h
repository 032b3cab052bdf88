// Big-endian loads and stores over raw datagram bytes.
//
// GTP is big-endian on the wire and datagrams are not aligned, so every
// multi-octet field goes through memcpy (which compilers turn into a single
// unaligned load) plus a byte swap. Callers check bounds; these helpers do not.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gtpcp::gtp {

inline uint16_t load16(const uint8_t* p) noexcept {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap16(v);
  return v;
}

inline uint32_t load24(const uint8_t* p) noexcept {
  return (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | uint32_t{p[2]};
}

inline uint32_t load32(const uint8_t* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  return v;
}

// Octets 1..5 of Bearer QoS bit rates are 40-bit big-endian integers.
inline uint64_t load40(const uint8_t* p) noexcept {
  return (uint64_t{p[0]} << 32) | (uint64_t{load32(p + 1)});
}

inline void store16(uint8_t* p, uint16_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap16(v);
  std::memcpy(p, &v, sizeof v);
}

inline void store24(uint8_t* p, uint32_t v) noexcept {
  p[0] = static_cast<uint8_t>(v >> 16);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v);
}

inline void store32(uint8_t* p, uint32_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof v);
}

inline void store40(uint8_t* p, uint64_t v) noexcept {
  p[0] = static_cast<uint8_t>(v >> 32);
  store32(p + 1, static_cast<uint32_t>(v));
}

}  // namespace gtpcp::gtp
