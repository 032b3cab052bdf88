// Value types shared by the GTPv2-C and GTPv1-C typed views: digit strings
// (TBCD), APNs, PLMN identities and IP addresses.
//
// All are fixed-size, trivially copyable and never allocate, so a worker can
// decode them on the hot path and keep them in shared memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/gtp/errors.h"

namespace gtpcp::gtp {

// A short string held inline. `N` includes no terminator.
template <std::size_t N>
struct FixedString {
  std::array<char, N> chars{};
  uint16_t size = 0;

  std::string_view view() const noexcept { return {chars.data(), size}; }
  bool push(char c) noexcept {
    if (size >= N) return false;
    chars[size++] = c;
    return true;
  }
  friend bool operator==(const FixedString& a, const FixedString& b) noexcept {
    return a.view() == b.view();
  }
};

// Up to 32 digits: an IMSI (15), MSISDN (15), IMEI(SV) (16), with room for
// malformed but still displayable values.
using Digits = FixedString<32>;

enum class TbcdMode : uint8_t {
  kStrict,   // digits 0-9, then only 0xF filler nibbles up to the end of the value
  kLenient,  // anything else shows as '?', as Wireshark prints it (tools only)
};

// Decodes TBCD (TS 29.002 / TS 24.008 §10.5.1.4): two digits per octet, low
// nibble first; a high nibble 0xF in the last octet is the odd-length filler.
Result<Digits> decodeTbcd(std::span<const uint8_t> value,
                          TbcdMode mode = TbcdMode::kStrict) noexcept;

// Encodes `digits` (0-9 only) as TBCD into `out`; returns the octets written.
Result<std::size_t> encodeTbcd(std::string_view digits, std::span<uint8_t> out) noexcept;

// An APN in dotted form ("internet.mnc001.mcc001.gprs"). TS 23.003 §9.1 caps
// the encoded APN at 100 octets.
inline constexpr std::size_t kMaxApnOctets = 100;
using ApnText = FixedString<kMaxApnOctets>;

// Decodes the label encoding of TS 23.003 §9.1 (length octet + label, repeated).
Result<ApnText> decodeApn(std::span<const uint8_t> value) noexcept;

// Encodes a dotted APN into labels; returns the octets written.
Result<std::size_t> encodeApn(std::string_view dotted, std::span<uint8_t> out) noexcept;

// MCC and MNC as digit characters. `mnc_digits` is 2 or 3.
struct Plmn {
  std::array<char, 3> mcc{};
  std::array<char, 3> mnc{};
  uint8_t mnc_digits = 0;

  std::string_view mccView() const noexcept { return {mcc.data(), 3}; }
  std::string_view mncView() const noexcept { return {mnc.data(), mnc_digits}; }
  friend bool operator==(const Plmn&, const Plmn&) = default;
};

// Decodes the 3-octet PLMN identity used by Serving Network, ULI, RAI and
// friends (TS 24.008 §10.5.1.3): MCC2|MCC1, MNC3|MCC3, MNC2|MNC1; MNC3 = 0xF
// marks a 2-digit MNC.
Result<Plmn> decodePlmn(const uint8_t* p) noexcept;
// Builds a Plmn from "001" and "01"/"001"; fails on anything else.
Result<Plmn> makePlmn(std::string_view mcc, std::string_view mnc) noexcept;
void encodePlmn(const Plmn& plmn, uint8_t* out) noexcept;

struct Ipv4 {
  std::array<uint8_t, 4> octets{};
  friend bool operator==(const Ipv4&, const Ipv4&) = default;
};
struct Ipv6 {
  std::array<uint8_t, 16> octets{};
  friend bool operator==(const Ipv6&, const Ipv6&) = default;
};

// Text forms for tools and logs (allocate).
std::string toString(const Ipv4& a);
std::string toString(const Ipv6& a);
// Parses dotted-quad / RFC 4291 text; false on error.
bool parseIpv4(std::string_view text, Ipv4& out) noexcept;
bool parseIpv6(std::string_view text, Ipv6& out) noexcept;

}  // namespace gtpcp::gtp
