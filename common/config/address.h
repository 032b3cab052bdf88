// Address checks shared by gtpcp.yaml and the routing document. Internal to
// common/config.
#pragma once

#include <string>
#include <string_view>

#include "common/gtp/values.h"

namespace gtpcp::config::detail {

// Why `a` cannot be a GTP-C endpoint address (unspecified, multicast,
// broadcast, IPv4-mapped), or "" when it can.
std::string unicastProblem(const gtp::Ipv4& a);
std::string unicastProblem(const gtp::Ipv6& a);

// For an error message about `text` given where an address of the other
// family was expected: " (it is an IPv6 address)" or "".
std::string otherFamilyHint(std::string_view text, bool expected_ipv4);

}  // namespace gtpcp::config::detail
