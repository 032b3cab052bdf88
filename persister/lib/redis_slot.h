// Which Redis Cluster hash slot a key belongs to (Redis Cluster
// specification, "Key distribution model"): CRC16/XMODEM of the key, or of
// its hash tag, modulo 16384.
//
// The persister computes the slot once per partition key and hands it to
// RedisClient::submit(); single and Sentinel modes ignore it.
#pragma once

#include <cstdint>
#include <string_view>

namespace gtpcp::persister {

inline constexpr uint16_t kSlotCount = 16384;

// CRC16-CCITT as XMODEM: polynomial 0x1021, initial value 0, no reflection.
uint16_t crc16(std::string_view bytes) noexcept;

// The part of `key` that is hashed: what lies between the first '{' and the
// first '}' after it, when that is not empty; otherwise the whole key.
std::string_view hashTag(std::string_view key) noexcept;

uint16_t keySlot(std::string_view key) noexcept;

}  // namespace gtpcp::persister
