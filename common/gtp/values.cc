#include "common/gtp/values.h"

#include <arpa/inet.h>

namespace gtpcp::gtp {

namespace {
constexpr char kDigitChars[] = "0123456789";
}

Result<Digits> decodeTbcd(std::span<const uint8_t> value, TbcdMode mode) noexcept {
  Digits out;
  if (value.size() * 2 > out.chars.size()) return fail(Errc::kIeInvalidValue);
  if (mode == TbcdMode::kLenient) {
    // Wireshark's rendering: a high nibble 0xF ends the digits, anything else
    // that is not a digit shows as '?'.
    for (uint8_t octet : value) {
      const uint8_t lo = octet & 0x0f, hi = octet >> 4;
      out.push(lo <= 9 ? kDigitChars[lo] : '?');
      if (hi == 0xf) break;
      out.push(hi <= 9 ? kDigitChars[hi] : '?');
    }
    return out;
  }
  // Digits, then filler 0xF nibbles up to the end: one for an odd count in
  // GTPv2, several where the field has a fixed size (the 8-octet GTPv1 IMSI).
  bool filler = false;
  for (uint8_t octet : value) {
    for (const uint8_t nibble : {static_cast<uint8_t>(octet & 0x0f), static_cast<uint8_t>(octet >> 4)}) {
      if (nibble == 0xf) {
        filler = true;
      } else if (filler || nibble > 9) {
        return fail(Errc::kIeInvalidValue);
      } else {
        out.push(kDigitChars[nibble]);
      }
    }
  }
  return out;
}

Result<std::size_t> encodeTbcd(std::string_view digits, std::span<uint8_t> out) noexcept {
  const std::size_t octets = (digits.size() + 1) / 2;
  if (octets > out.size()) return fail(Errc::kBufferTooSmall);
  for (char c : digits) {
    if (c < '0' || c > '9') return fail(Errc::kInvalidArgument);
  }
  for (std::size_t i = 0; i < octets; ++i) {
    const uint8_t lo = static_cast<uint8_t>(digits[2 * i] - '0');
    const uint8_t hi =
        2 * i + 1 < digits.size() ? static_cast<uint8_t>(digits[2 * i + 1] - '0') : 0x0f;
    out[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return octets;
}

Result<ApnText> decodeApn(std::span<const uint8_t> value) noexcept {
  ApnText out;
  if (value.size() > kMaxApnOctets) return fail(Errc::kIeInvalidValue);
  std::size_t pos = 0;
  while (pos < value.size()) {
    const std::size_t label = value[pos++];
    // An empty label or one past the end is not label encoding (some peers send
    // the APN as plain text: that is not accepted, it would be misrouted).
    if (label == 0 || label > value.size() - pos) return fail(Errc::kIeInvalidValue);
    if (out.size != 0) out.push('.');
    for (std::size_t i = 0; i < label; ++i) {
      const char c = static_cast<char>(value[pos + i]);
      if (c == '.' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
        return fail(Errc::kIeInvalidValue);
      out.push(c);
    }
    pos += label;
  }
  return out;
}

Result<std::size_t> encodeApn(std::string_view dotted, std::span<uint8_t> out) noexcept {
  if (dotted.empty()) return std::size_t{0};
  const std::size_t need = dotted.size() + 1;
  if (need > kMaxApnOctets) return fail(Errc::kInvalidArgument);
  if (need > out.size()) return fail(Errc::kBufferTooSmall);
  std::size_t w = 0;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    std::size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) dot = dotted.size();
    const std::size_t len = dot - start;
    if (len == 0 || len > 63) return fail(Errc::kInvalidArgument);
    out[w++] = static_cast<uint8_t>(len);
    for (std::size_t i = start; i < dot; ++i) out[w++] = static_cast<uint8_t>(dotted[i]);
    start = dot + 1;
  }
  return w;
}

Result<Plmn> decodePlmn(const uint8_t* p) noexcept {
  Plmn out;
  const uint8_t mcc1 = p[0] & 0x0f, mcc2 = p[0] >> 4;
  const uint8_t mcc3 = p[1] & 0x0f, mnc3 = p[1] >> 4;
  const uint8_t mnc1 = p[2] & 0x0f, mnc2 = p[2] >> 4;
  if (mcc1 > 9 || mcc2 > 9 || mcc3 > 9 || mnc1 > 9 || mnc2 > 9 || (mnc3 > 9 && mnc3 != 0xf))
    return fail(Errc::kIeInvalidValue);
  out.mcc = {kDigitChars[mcc1], kDigitChars[mcc2], kDigitChars[mcc3]};
  out.mnc = {kDigitChars[mnc1], kDigitChars[mnc2], mnc3 == 0xf ? '\0' : kDigitChars[mnc3]};
  out.mnc_digits = mnc3 == 0xf ? 2 : 3;
  return out;
}

Result<Plmn> makePlmn(std::string_view mcc, std::string_view mnc) noexcept {
  auto digits = [](std::string_view s) {
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (mcc.size() != 3 || (mnc.size() != 2 && mnc.size() != 3) || !digits(mcc) || !digits(mnc))
    return fail(Errc::kInvalidArgument);
  Plmn out;
  out.mcc = {mcc[0], mcc[1], mcc[2]};
  out.mnc = {mnc[0], mnc[1], mnc.size() == 3 ? mnc[2] : '\0'};
  out.mnc_digits = static_cast<uint8_t>(mnc.size());
  return out;
}

void encodePlmn(const Plmn& plmn, uint8_t* out) noexcept {
  auto d = [](char c) { return static_cast<uint8_t>(c - '0'); };
  const uint8_t mnc3 = plmn.mnc_digits == 3 ? d(plmn.mnc[2]) : 0x0f;
  out[0] = static_cast<uint8_t>((d(plmn.mcc[1]) << 4) | d(plmn.mcc[0]));
  out[1] = static_cast<uint8_t>((mnc3 << 4) | d(plmn.mcc[2]));
  out[2] = static_cast<uint8_t>((d(plmn.mnc[1]) << 4) | d(plmn.mnc[0]));
}

std::string toString(const Ipv4& a) {
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, a.octets.data(), buf, sizeof buf);
  return buf;
}

std::string toString(const Ipv6& a) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, a.octets.data(), buf, sizeof buf);
  return buf;
}

bool parseIpv4(std::string_view text, Ipv4& out) noexcept {
  char buf[INET_ADDRSTRLEN];
  if (text.size() >= sizeof buf) return false;
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  return inet_pton(AF_INET, buf, out.octets.data()) == 1;
}

bool parseIpv6(std::string_view text, Ipv6& out) noexcept {
  char buf[INET6_ADDRSTRLEN];
  if (text.size() >= sizeof buf) return false;
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  return inet_pton(AF_INET6, buf, out.octets.data()) == 1;
}

}  // namespace gtpcp::gtp
