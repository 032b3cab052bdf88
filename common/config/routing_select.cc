// RoutingTable's lookups: select() (the first rule of the session's GTP
// version that matches it), the criteria it applies (APN patterns, IMSI
// prefixes and ranges, address prefixes) and the finds by index and name.
// This is the hot half of routing.h: a worker calls select() for every
// session-creating request on the data path, so everything here is noexcept
// and never allocates. The table is built by routing_document.cc.
#include "common/config/routing.h"

#include <algorithm>

#include "common/config/routing_detail.h"

namespace gtpcp::config {

namespace {

using detail::allDigits;
using detail::digitsValue;
using detail::equalsLower;
using detail::kMaxImsiDigits;
using detail::toHost;

// The IMSI of a SessionKey as a number, for the ranges; parsed once per select().
struct ImsiNumber {
  uint64_t value = 0;
  uint8_t digits = 0;  // 0: not a usable IMSI
};

ImsiNumber imsiNumber(std::string_view imsi) noexcept {
  if (imsi.empty() || imsi.size() > kMaxImsiDigits || !allDigits(imsi)) return {};
  return ImsiNumber{digitsValue(imsi), static_cast<uint8_t>(imsi.size())};
}

bool ruleMatches(const Match& m, const SessionKey& key, const ImsiNumber& imsi) noexcept {
  if (!m.apn.empty() &&
      std::none_of(m.apn.begin(), m.apn.end(), [&](const ApnPattern& p) { return p.matches(key.apn); }))
    return false;
  if (!m.imsi_prefix.empty() &&
      std::none_of(m.imsi_prefix.begin(), m.imsi_prefix.end(),
                   [&](const std::string& p) { return key.imsi.substr(0, p.size()) == p; }))
    return false;
  if (!m.imsi_range.empty() &&
      std::none_of(m.imsi_range.begin(), m.imsi_range.end(), [&](const ImsiRange& r) {
        return imsi.digits == r.digits && imsi.value >= r.from && imsi.value <= r.to;
      }))
    return false;
  if (!m.serving_network.empty() &&
      (!key.serving_network ||
       std::find(m.serving_network.begin(), m.serving_network.end(), *key.serving_network) ==
           m.serving_network.end()))
    return false;
  if (m.has_rat_type &&
      (!key.rat_type || ((m.rat_types[*key.rat_type >> 6] >> (*key.rat_type & 63)) & 1) == 0))
    return false;
  if (!m.sgw_ipv4.empty() || !m.sgw_ipv6.empty()) {
    const bool v4 = key.sgw_ipv4 && std::any_of(m.sgw_ipv4.begin(), m.sgw_ipv4.end(),
                                                [&](const Cidr4& c) { return c.contains(*key.sgw_ipv4); });
    const bool v6 = key.sgw_ipv6 && std::any_of(m.sgw_ipv6.begin(), m.sgw_ipv6.end(),
                                                [&](const Cidr6& c) { return c.contains(*key.sgw_ipv6); });
    if (!v4 && !v6) return false;
  }
  return true;
}

}  // namespace

bool ApnPattern::matches(std::string_view apn) const noexcept {
  if (!wildcard) return equalsLower(apn, text);
  // At least one label, then "." and the suffix.
  if (apn.size() < text.size() + 2) return false;
  const std::size_t dot = apn.size() - text.size() - 1;
  return apn[dot] == '.' && equalsLower(apn.substr(dot + 1), text);
}

bool Cidr4::contains(const gtp::Ipv4& a) const noexcept { return (toHost(a) & mask) == network; }

bool Cidr6::contains(const gtp::Ipv6& a) const noexcept {
  for (std::size_t i = 0; i < 16; ++i)
    if ((a.octets[i] & mask[i]) != network[i]) return false;
  return true;
}

bool Match::matchesEverything() const noexcept {
  return apn.empty() && imsi_prefix.empty() && imsi_range.empty() && serving_network.empty() &&
         !has_rat_type && sgw_ipv4.empty() && sgw_ipv6.empty();
}

std::optional<Selection> RoutingTable::select(const SessionKey& key) const noexcept {
  const ImsiNumber imsi = imsiNumber(key.imsi);
  for (std::size_t i = 0; i < rules_.size(); ++i)
    if (pools_[rules_[i].pool].gtp_version == key.gtp_version && ruleMatches(rules_[i].match, key, imsi))
      return Selection{static_cast<uint16_t>(i), rules_[i].pool};
  return std::nullopt;
}

std::span<const Gateway> RoutingTable::gatewaysOf(uint16_t index) const noexcept {
  const Pool& p = pools_[index];
  return std::span<const Gateway>(gateways_).subspan(p.first_gateway, p.gateway_count);
}

std::optional<uint16_t> RoutingTable::findPool(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < pools_.size(); ++i)
    if (pools_[i].name == name) return static_cast<uint16_t>(i);
  return std::nullopt;
}

std::optional<uint16_t> RoutingTable::findGateway(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < gateways_.size(); ++i)
    if (gateways_[i].name == name) return static_cast<uint16_t>(i);
  return std::nullopt;
}

std::optional<uint16_t> RoutingTable::findRule(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < rules_.size(); ++i)
    if (rules_[i].name == name) return static_cast<uint16_t>(i);
  return std::nullopt;
}

}  // namespace gtpcp::config
