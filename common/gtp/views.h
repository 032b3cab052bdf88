// Typed views of the IE values that GTPv2-C (TS 29.274 §8) and GTPv1-C
// (TS 29.060 §7.7) encode the same way, written once for both versions and
// named per version in v2/ies.h and v1/ies.h (`v2::Recovery` is
// `Octet<v2::IeType::kRecovery>`), and read(), which reads any view from
// either version's decoded Message.
//
// The contract of every view, shared and per-version alike: `kType` (the IE
// type, of the version's IeType enum), `static Result<T> decode(value)` on an
// IE's value octets (Message::value()), `encodedSize()`, and `encode(out)`
// where `out` holds encodedSize() octets. decode() never throws; its errors
// name the IE type; it accepts values longer than the fixed part (later
// releases append fields). A view that holds a std::span points into the
// datagram it was decoded from.
//
// What the versions encode differently stays in the version's file, with the
// reason beside it: TV IEs of fixed size (v1 IMSI, padded), the v1 MSISDN's
// address-type octet, ULI, the Cause IE, spare-bit conventions where they
// differ (v1 writes spare bits as 1s).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include "common/gtp/bytes.h"
#include "common/gtp/errors.h"
#include "common/gtp/values.h"

namespace gtpcp::gtp {

// An IE type of either version: an enumerator of v1::IeType or v2::IeType.
template <auto T>
concept IeTypeEnumerator =
    std::is_enum_v<decltype(T)> && std::same_as<std::underlying_type_t<decltype(T)>, uint8_t>;

namespace detail {
// The bodies behind the templates below, once for every IE type (views.cc).
// Each failure names `type`.
Result<Digits> decodeDigits(std::span<const uint8_t> v, uint8_t type, std::size_t max_octets) noexcept;
void encodePaddedDigits(const Digits& digits, uint8_t* out, std::size_t octets) noexcept;
Result<ApnText> decodeApnValue(std::span<const uint8_t> v, uint8_t type) noexcept;
Result<void> decodeAddress(std::span<const uint8_t> v, uint8_t type, std::optional<Ipv4>& ipv4,
                           std::optional<Ipv6>& ipv6) noexcept;
void encodeAddress(const std::optional<Ipv4>& ipv4, const std::optional<Ipv6>& ipv6, uint8_t* out) noexcept;
}  // namespace detail

// One octet, all of it the value: Recovery (v2 8.5, v1 7.7.11), RAT Type,
// APN Restriction...
template <auto T>
  requires IeTypeEnumerator<T>
struct Octet {
  static constexpr decltype(T) kType = T;
  uint8_t value = 0;
  static Result<Octet> decode(std::span<const uint8_t> v) noexcept {
    if (v.empty()) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    return Octet{v[0]};
  }
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = value; }
};

// One octet whose low bits (`kMask`) are the value: EBI (v2 8.8), PDN Type
// (8.34), Selection Mode (v2 8.58, v1 7.7.12), NSAPI (v1 7.7.17). The other
// bits are spare: ignored on decode, sent as `kSpare` (0s in GTPv2; GTPv1
// sends some spare bits as 1s).
template <auto T, uint8_t kMask, uint8_t kSpare = 0>
  requires IeTypeEnumerator<T> && ((kMask & kSpare) == 0)
struct LowBits {
  static constexpr decltype(T) kType = T;
  uint8_t value = 0;
  static Result<LowBits> decode(std::span<const uint8_t> v) noexcept {
    if (v.empty()) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    return LowBits{static_cast<uint8_t>(v[0] & kMask)};
  }
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = static_cast<uint8_t>(kSpare | (value & kMask)); }
};

// A big-endian 16- or 32-bit value (U): Uint16 and Uint32 below.
template <auto T, class U>
  requires IeTypeEnumerator<T> && (std::same_as<U, uint16_t> || std::same_as<U, uint32_t>)
struct BigEndian {
  static constexpr decltype(T) kType = T;
  U value = 0;
  static Result<BigEndian> decode(std::span<const uint8_t> v) noexcept {
    if (v.size() < sizeof(U)) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    if constexpr (sizeof(U) == 2) {
      return BigEndian{load16(v.data())};
    } else {
      return BigEndian{load32(v.data())};
    }
  }
  std::size_t encodedSize() const noexcept { return sizeof(U); }
  void encode(uint8_t* out) const noexcept {
    if constexpr (sizeof(U) == 2) {
      store16(out, value);
    } else {
      store32(out, value);
    }
  }
};
// Charging Characteristics (v2 8.30, v1 7.7.23), Port Number (v2 8.63),
// Trace Reference and Type (v1 7.7.24, 7.7.25).
template <auto T>
using Uint16 = BigEndian<T, uint16_t>;
// Charging ID (v2 8.29, v1 7.7.26), the TEIDs and TLLI/P-TMSI of v1.
template <auto T>
using Uint32 = BigEndian<T, uint32_t>;

// TBCD digits filling the value, as many octets as the digits need (an odd
// count ends in a 0xF filler), at most `kMaxOctets`: the TLV digit IEs of
// GTPv2 (IMSI 8.3, MSISDN 8.11, MEI 8.10).
template <auto T, std::size_t kMaxOctets>
  requires IeTypeEnumerator<T>
struct TbcdDigits {
  static constexpr decltype(T) kType = T;
  Digits digits;
  static Result<TbcdDigits> decode(std::span<const uint8_t> v) noexcept {
    auto d = detail::decodeDigits(v, static_cast<uint8_t>(T), kMaxOctets);
    if (!d) return tl::unexpected(d.error());
    return TbcdDigits{*d};
  }
  std::size_t encodedSize() const noexcept { return (digits.size + 1u) / 2; }
  // Digits come from decode() or from callers that validated them: for a
  // buffer of encodedSize() octets encodeTbcd() cannot fail.
  void encode(uint8_t* out) const noexcept { (void)encodeTbcd(digits.view(), {out, encodedSize()}); }
};

// TBCD digits in a field of exactly `kOctets`, padded with 0xF nibbles: the
// TV digit IEs of GTPv1 (IMSI 7.7.2, IMEI(SV) 7.7.53), whose length the type
// fixes, so the message decoder hands decode() exactly that many octets. A
// value of fewer than `kMinDigits` digits is invalid.
template <auto T, std::size_t kOctets, std::size_t kMinDigits = 0>
  requires IeTypeEnumerator<T>
struct PaddedTbcdDigits {
  static constexpr decltype(T) kType = T;
  Digits digits;
  static Result<PaddedTbcdDigits> decode(std::span<const uint8_t> v) noexcept {
    auto d = detail::decodeDigits(v, static_cast<uint8_t>(T), 0);
    if (!d) return tl::unexpected(d.error());
    if (d->size < kMinDigits) return fail(Errc::kIeInvalidValue, static_cast<uint8_t>(T));
    return PaddedTbcdDigits{*d};
  }
  std::size_t encodedSize() const noexcept { return kOctets; }
  void encode(uint8_t* out) const noexcept { detail::encodePaddedDigits(digits, out, kOctets); }
};

// An APN in the label encoding of TS 23.003 §9.1 (v2 8.6, v1 7.7.30),
// dotted here; an empty APN is an empty value.
template <auto T>
  requires IeTypeEnumerator<T>
struct ApnLabels {
  static constexpr decltype(T) kType = T;
  ApnText text;
  static Result<ApnLabels> decode(std::span<const uint8_t> v) noexcept {
    auto t = detail::decodeApnValue(v, static_cast<uint8_t>(T));
    if (!t) return tl::unexpected(t.error());
    return ApnLabels{*t};
  }
  std::size_t encodedSize() const noexcept { return text.size == 0 ? 0 : text.size + 1u; }
  void encode(uint8_t* out) const noexcept { (void)encodeApn(text.view(), {out, encodedSize()}); }
};

// An IPv4 or an IPv6 address, told apart by the value's length (4 or 16):
// IP Address (v2 8.9), GSN Address and Charging Gateway Address (v1 7.7.32,
// 7.7.44). Encoding a view with neither writes 16 zero octets.
template <auto T>
  requires IeTypeEnumerator<T>
struct Address {
  static constexpr decltype(T) kType = T;
  std::optional<Ipv4> ipv4;
  std::optional<Ipv6> ipv6;
  static Result<Address> decode(std::span<const uint8_t> v) noexcept {
    Address a;
    if (auto ok = detail::decodeAddress(v, static_cast<uint8_t>(T), a.ipv4, a.ipv6); !ok)
      return tl::unexpected(ok.error());
    return a;
  }
  std::size_t encodedSize() const noexcept { return ipv4 ? 4 : 16; }
  void encode(uint8_t* out) const noexcept { detail::encodeAddress(ipv4, ipv6, out); }
};

// The UE's time zone (TS 24.008 §10.5.3.8 coding) and daylight saving time
// adjustment (0..2 hours, low 2 bits): UE Time Zone (v2 8.44), MS Time Zone
// (v1 7.7.52).
template <auto T>
  requires IeTypeEnumerator<T>
struct TimeZone {
  static constexpr decltype(T) kType = T;
  uint8_t time_zone = 0;
  uint8_t daylight_saving_time = 0;
  static Result<TimeZone> decode(std::span<const uint8_t> v) noexcept {
    if (v.size() < 2) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    return TimeZone{v[0], static_cast<uint8_t>(v[1] & 0x03)};
  }
  std::size_t encodedSize() const noexcept { return 2; }
  void encode(uint8_t* out) const noexcept {
    out[0] = time_zone;
    out[1] = daylight_saving_time & 0x03;
  }
};

// Octets the proxy never interprets, only carries: PCO, APCO, ePCO (v2 8.13,
// 8.74, 8.128), PCO and TFT (v1 7.7.31, 7.7.36). The view points into the
// datagram.
template <auto T>
  requires IeTypeEnumerator<T>
struct Opaque {
  static constexpr decltype(T) kType = T;
  std::span<const uint8_t> octets;
  static Result<Opaque> decode(std::span<const uint8_t> v) noexcept { return Opaque{v}; }
  std::size_t encodedSize() const noexcept { return octets.size(); }
  void encode(uint8_t* out) const noexcept {
    if (!octets.empty()) std::memcpy(out, octets.data(), octets.size());
  }
};

// Private Extension (v2 8.67, v1 7.7.46): a 2-octet enterprise number
// (IANA), then a proprietary value. The versions name the number apart,
// Enterprise ID and Extension Identifier: `Id` is an aggregate that holds it
// as `kId` under its version's name.
template <auto T, class Id, uint16_t Id::*kId>
  requires IeTypeEnumerator<T>
struct PrivateExtensionOf : Id {
  static constexpr decltype(T) kType = T;
  std::span<const uint8_t> value;
  static Result<PrivateExtensionOf> decode(std::span<const uint8_t> v) noexcept {
    if (v.size() < 2) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    PrivateExtensionOf p;
    p.*kId = load16(v.data());
    p.value = v.subspan(2);
    return p;
  }
  std::size_t encodedSize() const noexcept { return 2 + value.size(); }
  void encode(uint8_t* out) const noexcept {
    store16(out, this->*kId);
    if (!value.empty()) std::memcpy(out + 2, value.data(), value.size());
  }
};

// True when V is a view of the IEs indexed as I (v1::Ie or v2::Ie): its
// kType is of the same version's IeType.
template <class V, class I>
concept ViewOf = std::same_as<std::remove_cv_t<decltype(V::kType)>, decltype(std::declval<const I&>().ieType())>;

// The instance an error of read() names: a GTPv2 IE's (TS 29.274 §8.2);
// GTPv1 IEs have none, 0.
template <class I>
constexpr uint8_t instanceOf(const I& ie) noexcept {
  if constexpr (requires { ie.instance(); }) {
    return ie.instance();
  } else {
    return 0;
  }
}

// Reads `ie` of `message` (a v1::Message or v2::Message, its own index entry)
// as T; fails if the IE is of another type. Errors name the IE, its instance
// and its offset.
template <class T, class M, class I>
  requires ViewOf<T, I>
Result<T> read(const M& message, const I& ie) noexcept {
  if (ie.type != static_cast<uint8_t>(T::kType))
    return fail(Errc::kIeInvalidValue, ie.type, instanceOf(ie), ie.offset);
  auto r = T::decode(message.value(ie));
  if (!r) return fail(r.error().code, ie.type, instanceOf(ie), ie.offset);
  return r;
}

// read() of what a lookup found (v2::readFirst(), v1::readNth()): when `ie`
// is null, kMandatoryIeMissing naming T's type and `instance`.
template <class T, class M, class I>
  requires ViewOf<T, I>
Result<T> readFound(const M& message, const I* ie, uint8_t instance) noexcept {
  if (ie == nullptr) return fail(Errc::kMandatoryIeMissing, static_cast<uint8_t>(T::kType), instance);
  return read<T>(message, *ie);
}

}  // namespace gtpcp::gtp
