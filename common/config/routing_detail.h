// Internal to common/config: the small character and number helpers that both
// halves of the routing code need, the document parser (routing_document.cc)
// and the selection (routing_select.cc), so that the two read digits, letter
// case and addresses exactly alike. All noexcept and allocation-free: the
// selection calls them on the data path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/gtp/values.h"

namespace gtpcp::config::detail {

inline constexpr std::size_t kMaxImsiDigits = 15;

inline char lowerAscii(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `a` equals `lower` (already lower case) ignoring the ASCII case of `a`.
inline bool equalsLower(std::string_view a, std::string_view lower) noexcept {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lowerAscii(a[i]) != lower[i]) return false;
  return true;
}

inline bool allDigits(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

inline uint64_t digitsValue(std::string_view s) noexcept {
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

inline uint32_t toHost(const gtp::Ipv4& a) noexcept {
  return (uint32_t{a.octets[0]} << 24) | (uint32_t{a.octets[1]} << 16) |
         (uint32_t{a.octets[2]} << 8) | uint32_t{a.octets[3]};
}

}  // namespace gtpcp::config::detail
