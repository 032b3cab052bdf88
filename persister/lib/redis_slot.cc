#include "redis_slot.h"

#include <array>

namespace gtpcp::persister {

namespace {
constexpr std::array<uint16_t, 256> makeTable() {
  std::array<uint16_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    t[i] = crc;
  }
  return t;
}
constexpr std::array<uint16_t, 256> kTable = makeTable();
}  // namespace

uint16_t crc16(std::string_view bytes) noexcept {
  uint16_t crc = 0;
  for (const char c : bytes) crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ uint8_t(c)) & 0xff]);
  return crc;
}

std::string_view hashTag(std::string_view key) noexcept {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  // "{}" hashes the whole key, so that keys starting with "{}" still spread.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

uint16_t keySlot(std::string_view key) noexcept { return crc16(hashTag(key)) & (kSlotCount - 1); }

}  // namespace gtpcp::persister
