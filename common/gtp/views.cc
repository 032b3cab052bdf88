#include "common/gtp/views.h"

namespace gtpcp::gtp::detail {

Result<Digits> decodeDigits(std::span<const uint8_t> v, uint8_t type, std::size_t max_octets) noexcept {
  if (v.empty()) return fail(Errc::kIeTooShort, type);
  if (max_octets != 0 && v.size() > max_octets) return fail(Errc::kIeInvalidValue, type);
  auto d = decodeTbcd(v, TbcdMode::kStrict);
  if (!d) return fail(d.error().code, type);
  return d;
}

void encodePaddedDigits(const Digits& digits, uint8_t* out, std::size_t octets) noexcept {
  // The octets the digits leave free are filler; so is the whole field when
  // the digits cannot be encoded (more than it holds, or not digits).
  std::memset(out, 0xff, octets);
  (void)encodeTbcd(digits.view(), {out, octets});
}

Result<ApnText> decodeApnValue(std::span<const uint8_t> v, uint8_t type) noexcept {
  auto t = decodeApn(v);
  if (!t) return fail(t.error().code, type);
  return t;
}

Result<void> decodeAddress(std::span<const uint8_t> v, uint8_t type, std::optional<Ipv4>& ipv4,
                           std::optional<Ipv6>& ipv6) noexcept {
  if (v.size() == 4) {
    Ipv4 a;
    std::memcpy(a.octets.data(), v.data(), 4);
    ipv4 = a;
  } else if (v.size() == 16) {
    Ipv6 a;
    std::memcpy(a.octets.data(), v.data(), 16);
    ipv6 = a;
  } else {
    return fail(v.size() < 4 ? Errc::kIeTooShort : Errc::kIeInvalidValue, type);
  }
  return {};
}

void encodeAddress(const std::optional<Ipv4>& ipv4, const std::optional<Ipv6>& ipv6, uint8_t* out) noexcept {
  if (ipv4) {
    std::memcpy(out, ipv4->octets.data(), 4);
  } else if (ipv6) {
    std::memcpy(out, ipv6->octets.data(), 16);
  } else {
    std::memset(out, 0, 16);
  }
}

}  // namespace gtpcp::gtp::detail
