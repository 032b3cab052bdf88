#include "common/gtp/v1/ies.h"

#include <cstring>

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v1 {

Result<TeidDataII> TeidDataII::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 5) return fail(Errc::kIeTooShort);
  return TeidDataII{static_cast<uint8_t>(v[0] & 0x0f), load32(&v[1])};
}
void TeidDataII::encode(uint8_t* out) const noexcept {
  out[0] = nsapi & 0x0f;
  store32(out + 1, teid);
}

Result<Msisdn> Msisdn::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 2) return fail(Errc::kIeTooShort);
  auto d = decodeTbcd(v.subspan(1), TbcdMode::kStrict);
  if (!d) return tl::unexpected(d.error());
  return Msisdn{v[0], *d};
}
void Msisdn::encode(uint8_t* out) const noexcept {
  out[0] = address_type;
  (void)encodeTbcd(digits.view(), {out + 1, (digits.size + 1u) / 2});
}

Result<Rai> Rai::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 6) return fail(Errc::kIeTooShort);
  auto p = decodePlmn(v.data());
  if (!p) return tl::unexpected(p.error());
  return Rai{*p, load16(&v[3]), v[5]};
}
void Rai::encode(uint8_t* out) const noexcept {
  encodePlmn(plmn, out);
  store16(out + 3, lac);
  out[5] = rac;
}

// PDP type numbers of TS 29.060 §7.7.27 (IETF organisation).
namespace {
constexpr uint8_t kPdpTypeIpv4 = 0x21, kPdpTypeIpv6 = 0x57, kPdpTypeIpv4v6 = 0x8d;
}

Result<EndUserAddress> EndUserAddress::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 2) return fail(Errc::kIeTooShort);
  EndUserAddress e;
  e.pdp_type_organization = v[0] & 0x0f;
  e.pdp_type_number = v[1];
  const std::size_t n = v.size() - 2;
  // An empty address asks the GGSN for a dynamic one.
  if (e.pdp_type_organization == 1 && n > 0) {
    auto take4 = [&](std::size_t at) { Ipv4 a; std::memcpy(a.octets.data(), &v[at], 4); e.ipv4 = a; };
    auto take6 = [&](std::size_t at) { Ipv6 a; std::memcpy(a.octets.data(), &v[at], 16); e.ipv6 = a; };
    switch (e.pdp_type_number) {
      case kPdpTypeIpv4:
        if (n != 4) return fail(Errc::kIeInvalidValue);
        take4(2);
        break;
      case kPdpTypeIpv6:
        if (n != 16) return fail(Errc::kIeInvalidValue);
        take6(2);
        break;
      case kPdpTypeIpv4v6:
        // Both, or either one alone when the other is still dynamic.
        if (n == 20) {
          take4(2);
          take6(6);
        } else if (n == 4) {
          take4(2);
        } else if (n == 16) {
          take6(2);
        } else {
          return fail(Errc::kIeInvalidValue);
        }
        break;
      default:
        break;
    }
  }
  return e;
}

void EndUserAddress::encode(uint8_t* out) const noexcept {
  out[0] = static_cast<uint8_t>(0xf0 | (pdp_type_organization & 0x0f));
  out[1] = pdp_type_number;
  uint8_t* p = out + 2;
  if (ipv4) {
    std::memcpy(p, ipv4->octets.data(), 4);
    p += 4;
  }
  if (ipv6) std::memcpy(p, ipv6->octets.data(), 16);
}

Result<QosProfile> QosProfile::decode(std::span<const uint8_t> v) noexcept {
  // ARP plus at least the 3 octets of the R97/98 QoS profile.
  if (v.size() < 4) return fail(Errc::kIeTooShort);
  return QosProfile{v[0], v.subspan(1)};
}
void QosProfile::encode(uint8_t* out) const noexcept {
  out[0] = allocation_retention_priority;
  if (!qos.empty()) std::memcpy(out + 1, qos.data(), qos.size());
}

Result<Uli> Uli::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 8) return fail(Errc::kIeTooShort);
  auto p = decodePlmn(&v[1]);
  if (!p) return tl::unexpected(p.error());
  return Uli{v[0], *p, load16(&v[4]), load16(&v[6])};
}
void Uli::encode(uint8_t* out) const noexcept {
  out[0] = geographic_location_type;
  encodePlmn(plmn, out + 1);
  store16(out + 4, lac);
  store16(out + 6, ci_sac_rac);
}

}  // namespace gtpcp::gtp::v1
