// The maximum bit rates of a GTPv1 QoS Profile (see qos.h for the layout and
// the encodings).
#include "common/gtp/v1/qos.h"

#include <algorithm>

namespace gtpcp::gtp::v1 {

namespace {

// Value indices of one direction's octets (24.008 octet - 2).
struct Octets {
  std::size_t base;
  std::size_t extended;
  std::size_t extended2;
};
constexpr Octets kUplink{6, 15, 19};
constexpr Octets kDownlink{7, 13, 17};

constexpr uint32_t kMaxBaseKbps = 8640;
constexpr uint32_t kMinExtendedKbps = 8700;
constexpr uint32_t kMaxExtendedKbps = 256'000;
constexpr uint32_t kMinExtended2Kbps = 260'000;
constexpr uint32_t kMaxExtended2Kbps = 10'000'000;

// Rates of the non-zero codes, in kbps.
uint32_t baseKbps(uint8_t v) noexcept {
  if (v == 0xff) return 0;
  if (v <= 0x3f) return v;
  if (v <= 0x7f) return 64 + (v - 0x40u) * 8;
  return 576 + (v - 0x80u) * 64;
}

uint32_t extendedKbps(uint8_t v) noexcept {
  if (v <= 0x4a) return 8600 + v * 100u;
  if (v <= 0xba) return 16'000 + (v - 0x4au) * 1000;
  if (v <= 0xfa) return 128'000 + (v - 0xbau) * 2000;
  return kMaxExtendedKbps;
}

uint32_t extended2Kbps(uint8_t v) noexcept {
  if (v <= 0x3d) return (256 + v * 4u) * 1000;
  if (v <= 0xa1) return (500 + (v - 0x3du) * 10) * 1000;
  if (v <= 0xf6) return (1500 + (v - 0xa1u) * 100) * 1000;
  return kMaxExtended2Kbps;
}

// The codes of the largest rate not above `kbps`, each within its octet's range.
uint8_t baseCode(uint32_t kbps) noexcept {
  if (kbps == 0) return 0xff;
  if (kbps <= 63) return static_cast<uint8_t>(kbps);
  if (kbps < 576) return static_cast<uint8_t>(0x40 + (kbps - 64) / 8);
  if (kbps < kMaxBaseKbps) return static_cast<uint8_t>(0x80 + (kbps - 576) / 64);
  return 0xfe;
}

uint8_t extendedCode(uint32_t kbps) noexcept {  // kbps >= kMinExtendedKbps
  if (kbps <= 16'000) return static_cast<uint8_t>((kbps - 8600) / 100);
  if (kbps < 128'000) return static_cast<uint8_t>(0x4a + (kbps - 16'000) / 1000);
  if (kbps < kMaxExtendedKbps) return static_cast<uint8_t>(0xba + (kbps - 128'000) / 2000);
  return 0xfa;
}

uint8_t extended2Code(uint32_t kbps) noexcept {  // kbps >= kMinExtended2Kbps
  const uint32_t mbps = kbps / 1000;
  if (mbps <= 500) return static_cast<uint8_t>((mbps - 256) / 4);
  if (mbps <= 1500) return static_cast<uint8_t>(0x3d + (mbps - 500) / 10);
  if (mbps < kMaxExtended2Kbps / 1000) return static_cast<uint8_t>(0xa1 + (mbps - 1500) / 100);
  return 0xf6;
}

std::optional<uint32_t> rateOf(std::span<const uint8_t> v, const Octets& o) noexcept {
  if (v.size() <= o.base) return std::nullopt;
  if (v.size() > o.extended2 && v[o.extended2] != 0) return extended2Kbps(v[o.extended2]);
  if (v.size() > o.extended && v[o.extended] != 0) return extendedKbps(v[o.extended]);
  if (v[o.base] == 0) return std::nullopt;  // subscribed / reserved
  return baseKbps(v[o.base]);
}

// Writes `code` at `index` when the value reaches it; true when it changed.
bool put(std::span<uint8_t> v, std::size_t index, uint8_t code) noexcept {
  if (v.size() <= index || v[index] == code) return false;
  v[index] = code;
  return true;
}

bool capDirection(std::span<uint8_t> v, const Octets& o, std::optional<uint32_t> cap) noexcept {
  if (!cap) return false;
  const std::optional<uint32_t> rate = rateOf(v, o);
  if (!rate || *rate <= *cap) return false;
  // The rate is above the cap, so the octets it needed exist; the cap needs
  // no more of them than that.
  const bool has_extended = v.size() > o.extended;
  const bool has_extended2 = v.size() > o.extended2;
  uint8_t base = 0xfe;
  uint8_t extended = 0;
  uint8_t extended2 = 0;
  if (*cap < kMinExtendedKbps || !has_extended) {
    base = baseCode(*cap);
  } else if (*cap < kMinExtended2Kbps || !has_extended2) {
    extended = extendedCode(std::min(*cap, kMaxExtendedKbps));
  } else {
    extended = 0xfa;
    extended2 = extended2Code(*cap);
  }
  bool changed = put(v, o.base, base);
  changed |= put(v, o.extended, extended);
  changed |= put(v, o.extended2, extended2);
  return changed;
}

}  // namespace

MaxBitrate readMaxBitrate(std::span<const uint8_t> qos_profile_value) noexcept {
  return MaxBitrate{rateOf(qos_profile_value, kUplink), rateOf(qos_profile_value, kDownlink)};
}

bool capMaxBitrate(std::span<uint8_t> qos_profile_value, std::optional<uint32_t> uplink_kbps,
                   std::optional<uint32_t> downlink_kbps) noexcept {
  const bool uplink = capDirection(qos_profile_value, kUplink, uplink_kbps);
  const bool downlink = capDirection(qos_profile_value, kDownlink, downlink_kbps);
  return uplink || downlink;
}

}  // namespace gtpcp::gtp::v1
