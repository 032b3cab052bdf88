// Address checks shared by the configuration loaders (see address.h).
#include "common/config/address.h"

#include <algorithm>

namespace gtpcp::config::detail {

std::string unicastProblem(const gtp::Ipv4& a) {
  const auto& o = a.octets;
  if (o == std::array<uint8_t, 4>{0, 0, 0, 0}) return "is the unspecified address";
  if (o == std::array<uint8_t, 4>{255, 255, 255, 255}) return "is the broadcast address";
  if ((o[0] & 0xf0) == 0xe0) return "is a multicast address";
  return "";
}

std::string unicastProblem(const gtp::Ipv6& a) {
  const auto& o = a.octets;
  if (std::all_of(o.begin(), o.end(), [](uint8_t b) { return b == 0; }))
    return "is the unspecified address";
  if (o[0] == 0xff) return "is a multicast address";
  const bool mapped = std::all_of(o.begin(), o.begin() + 10, [](uint8_t b) { return b == 0; }) &&
                      o[10] == 0xff && o[11] == 0xff;
  if (mapped) return "is an IPv4-mapped address (give the IPv4 address itself)";
  return "";
}

std::string otherFamilyHint(std::string_view text, bool expected_ipv4) {
  if (expected_ipv4) {
    gtp::Ipv6 v6;
    if (gtp::parseIpv6(text, v6)) return " (it is an IPv6 address)";
  } else {
    gtp::Ipv4 v4;
    if (gtp::parseIpv4(text, v4)) return " (it is an IPv4 address)";
  }
  return "";
}

}  // namespace gtpcp::config::detail
