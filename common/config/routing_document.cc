// The routing document, read: parsing the YAML, validating it (every error
// with its file, line and key path), compiling it into a RoutingTable and
// computing its normalised text and content hash; also the RAT Type names
// the document uses. Startup, --check-config and reload only: this is the
// cold half of routing.h, it allocates and keeps yaml-cpp's exceptions
// inside. The only routing file that reads YAML. The lookups a worker makes
// per session are in routing_select.cc.
#include "common/config/routing.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "common/config/address.h"
#include "common/config/routing_detail.h"
#include "common/config/yaml_util.h"

namespace gtpcp::config {

namespace {

using detail::Diagnostics;
using detail::equalsLower;
using detail::MapEntry;
using detail::quote;

constexpr std::string_view kNameExtraChars = "_-";
constexpr std::size_t kMaxNameLength = 32;
constexpr std::size_t kMaxEntries = 65535;  // pools, gateways and rules are uint16 indices
constexpr int64_t kMaxWeight = 1000;

constexpr std::string_view kTopKeys[] = {"version", "pools", "rules", "health_check", "failover"};
constexpr std::string_view kHealthCheckKeys[] = {"interval_ms", "misses", "restart_notify_rate"};
constexpr std::string_view kFailoverKeys[] = {"response_timeout_ms", "attempts", "try_another", "when_exhausted"};
constexpr std::string_view kPoolKeys[] = {"gtp_version", "gateways"};
constexpr std::string_view kGatewayKeys[] = {"name", "address", "port", "weight"};
constexpr std::string_view kRuleKeys[] = {"name", "match", "pool", "overrides"};
constexpr std::string_view kOverrideKeys[] = {"apn", "apn_ambr", "charging_characteristics", "selection_mode",
                                              "pdn_type", "qos_cap"};
// Overrides that mean something for one GTP version only.
struct VersionOnly {
  std::string_view key;
  uint8_t version;
};
constexpr VersionOnly kVersionOnlyOverrides[] = {{"apn_ambr", 2}, {"pdn_type", 2}, {"qos_cap", 1}};
constexpr std::string_view kAmbrKeys[] = {"uplink_kbps", "downlink_kbps"};
constexpr std::string_view kMatchKeys[] = {"apn",      "imsi_prefix", "imsi_range",
                                           "serving_network", "rat_type", "sgw_address"};
constexpr std::string_view kRangeKeys[] = {"from", "to"};

struct RatName {
  std::string_view name;
  uint8_t value;
};
// TS 29.274 8.17.
constexpr RatName kRatNames[] = {
    {"utran", 1}, {"geran", 2},   {"wlan", 3}, {"gan", 4},  {"hspa-evolution", 5},
    {"eutran", 6}, {"virtual", 7}, {"nbiot", 8}, {"ltem", 9}, {"nr", 10},
};

gtp::Ipv4 fromHost(uint32_t v) noexcept {
  return gtp::Ipv4{{static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                    static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}};
}

std::string joinNames(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

const MapEntry* findEntry(const std::vector<MapEntry>& entries, std::string_view key) noexcept {
  for (const MapEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string plmnText(const gtp::Plmn& p) {
  return std::string(p.mccView()) + "-" + std::string(p.mncView());
}

std::string cidrText(const Cidr4& c) {
  return gtp::toString(fromHost(c.network)) + "/" + std::to_string(c.prefix_length);
}

std::string cidrText(const Cidr6& c) {
  return gtp::toString(gtp::Ipv6{c.network}) + "/" + std::to_string(c.prefix_length);
}

uint64_t fnv1a64(std::string_view text) noexcept {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

namespace detail {

// Builds a RoutingTable from one document, reporting every problem.
class RoutingParser {
 public:
  explicit RoutingParser(const std::string& display_name) : diag_(display_name) {
    table_.source_ = display_name;
  }

  Result<RoutingTable> run(std::string_view text) {
    const std::optional<YAML::Node> doc = parseDocument(text, diag_);
    if (!doc) return tl::unexpected(diag_.take());
    if (!doc->IsMap()) {
      diag_.error(doc->IsNull() ? 0 : lineOf(*doc), "",
                  doc->IsNull() ? std::string("is empty: expected version, pools and rules")
                                : "expected a mapping of version, pools and rules, found " +
                                      std::string(kindOf(*doc)));
      return tl::unexpected(diag_.take());
    }
    const std::vector<MapEntry> top = knownEntries(*doc, "", kTopKeys);
    const MapEntry* version = findEntry(top, "version");
    const MapEntry* pools = findEntry(top, "pools");
    const MapEntry* rules = findEntry(top, "rules");
    for (auto [entry, name] : {std::pair{version, "version"}, {pools, "pools"}, {rules, "rules"}})
      if (entry == nullptr) diag_.error(0, name, "required key is missing");
    if (version != nullptr) parseVersion(*version);
    if (pools != nullptr) parsePools(*pools);
    if (rules != nullptr) parseRules(*rules);
    if (const MapEntry* e = findEntry(top, "health_check")) parseHealthCheck(*e);
    if (const MapEntry* e = findEntry(top, "failover")) parseFailover(*e);
    if (!diag_.empty()) return tl::unexpected(diag_.take());
    normalise();
    return std::move(table_);
  }

 private:
  // The entries of a mapping; keys not in `known` are reported.
  std::vector<MapEntry> knownEntries(const YAML::Node& map, std::string_view prefix,
                                     std::span<const std::string_view> known,
                                     std::string_view what = "key") {
    std::vector<MapEntry> out;
    for (MapEntry& e : mapEntries(map, prefix, diag_, what)) {
      if (std::find(known.begin(), known.end(), e.key) == known.end())
        reportUnknownKey(diag_, e, known);
      else
        out.push_back(std::move(e));
    }
    return out;
  }

  // A mapping expected at `path`: false (and reported) when it is something else.
  bool expectMap(const YAML::Node& node, int line, const std::string& path, std::string_view what) {
    if (node.IsMap()) return true;
    diag_.error(line, path,
                "expected " + std::string(what) + ", found " + std::string(kindOf(node)));
    return false;
  }

  std::optional<std::string> readName(const YAML::Node& node, int line, const std::string& path,
                                      std::string_view what) {
    const std::string* text = readScalar(node, line, path, what, diag_);
    if (text == nullptr) return std::nullopt;
    if (!isName(*text, 1, kMaxNameLength, kNameExtraChars)) {
      diag_.error(line, path,
                  quote(*text) + " is not a valid " + std::string(what) +
                      ": 1 to 32 characters A-Z a-z 0-9 _ -");
      return std::nullopt;
    }
    return *text;
  }

  void parseVersion(const MapEntry& e) {
    auto v = readInteger(e.value, e.line, e.path, 0, INT64_MAX, diag_);
    if (!v) return;
    if (*v != kRoutingSchemaVersion) {
      diag_.error(e.line, e.path,
                  std::to_string(*v) + " is not supported: this gtpcp reads version " +
                      std::to_string(kRoutingSchemaVersion));
      return;
    }
    table_.schema_version_ = static_cast<uint32_t>(*v);
  }

  void parsePools(const MapEntry& e) {
    if (e.value.IsNull() || (e.value.IsMap() && e.value.size() == 0)) {
      diag_.error(e.line, e.path, "needs at least one pool");
      return;
    }
    if (!expectMap(e.value, e.line, e.path, "a mapping of pool names to pools")) return;
    for (const MapEntry& pool : mapEntries(e.value, e.path, diag_, "pool name")) {
      pool_names_.push_back(pool.key);  // even when invalid: rules naming it are not reported too
      if (!isName(pool.key, 1, kMaxNameLength, kNameExtraChars)) {
        diag_.error(pool.line, pool.path,
                    quote(pool.key) + " is not a valid pool name: 1 to 32 characters A-Z a-z 0-9 _ -");
        continue;
      }
      parsePool(pool);
    }
    if (table_.pools_.size() > kMaxEntries)
      diag_.error(e.line, e.path, "has more than " + std::to_string(kMaxEntries) + " pools");
  }

  void parsePool(const MapEntry& e) {
    Pool pool;
    pool.name = e.key;
    pool.line = e.line;
    const auto pool_index = static_cast<uint16_t>(table_.pools_.size());
    pool.first_gateway = static_cast<uint16_t>(table_.gateways_.size());
    if (e.value.IsNull()) {
      diag_.error(e.line, e.path, "has no gateways");
    } else if (expectMap(e.value, e.line, e.path, "a pool (a mapping with gateways)")) {
      const std::vector<MapEntry> keys = knownEntries(e.value, e.path, kPoolKeys);
      if (const MapEntry* version = findEntry(keys, "gtp_version")) {
        if (auto v = readInteger(version->value, version->line, version->path, 1, 2, diag_))
          pool.gtp_version = static_cast<uint8_t>(*v);
      }
      const MapEntry* gateways = findEntry(keys, "gateways");
      if (gateways == nullptr) {
        diag_.error(e.line, e.path, "has no gateways");
      } else if (gateways->value.IsNull() ||
                 (gateways->value.IsSequence() && gateways->value.size() == 0)) {
        diag_.error(gateways->line, gateways->path, "is empty: a pool needs at least one gateway");
      } else if (!gateways->value.IsSequence()) {
        diag_.error(gateways->line, gateways->path,
                    "expected a list of gateways, found " + std::string(kindOf(gateways->value)));
      } else {
        for (std::size_t i = 0; i < gateways->value.size(); ++i)
          parseGateway(gateways->value[i], indexKey(gateways->path, i), pool_index,
                       pool.first_gateway, gateways->line);
      }
    }
    const std::size_t count = table_.gateways_.size() - pool.first_gateway;
    pool.gateway_count = static_cast<uint16_t>(std::min(count, kMaxEntries));
    for (std::size_t i = pool.first_gateway; i < table_.gateways_.size(); ++i) {
      pool.total_weight += table_.gateways_[i].weight;
      table_.gateways_[i].gtp_version = pool.gtp_version;
    }
    table_.pools_.push_back(std::move(pool));
  }

  // `first` is the index of the pool's first gateway.
  void parseGateway(const YAML::Node& node, const std::string& path, uint16_t pool,
                    std::size_t first, int list_line) {
    const int line = lineOf(node) ? lineOf(node) : list_line;
    if (!expectMap(node, line, path, "a gateway (name, address, port, weight)")) return;
    const std::vector<MapEntry> keys = knownEntries(node, path, kGatewayKeys);
    Gateway gw;
    gw.pool = pool;
    gw.line = line;
    bool ok = true;

    const MapEntry* name = findEntry(keys, "name");
    if (name == nullptr) {
      diag_.error(line, joinKey(path, "name"), "required key is missing");
      ok = false;
    } else if (auto text = readName(name->value, name->line, name->path, "gateway name")) {
      auto [it, inserted] = gateway_names_.emplace(*text, name->line);
      if (!inserted) {
        diag_.error(name->line, name->path,
                    "duplicate gateway name " + quote(*text) + " (first given at line " +
                        std::to_string(it->second) + ")");
        ok = false;
      }
      gw.name = *text;
    } else {
      ok = false;
    }

    const MapEntry* address = findEntry(keys, "address");
    if (address == nullptr) {
      diag_.error(line, joinKey(path, "address"), "required key is missing");
      ok = false;
    } else if (const std::string* text =
                   readScalar(address->value, address->line, address->path, "an address", diag_)) {
      gtp::Ipv4 v4;
      gtp::Ipv6 v6;
      std::string problem;
      if (gtp::parseIpv4(*text, v4)) {
        gw.address = v4;
        problem = unicastProblem(v4);
      } else if (gtp::parseIpv6(*text, v6)) {
        gw.address = v6;
        problem = unicastProblem(v6);
      } else {
        problem = "is not an IPv4 or IPv6 address";
      }
      if (!problem.empty()) {
        diag_.error(address->line, address->path, quote(*text) + " " + problem);
        ok = false;
      }
    } else {
      ok = false;
    }

    if (const MapEntry* port = findEntry(keys, "port")) {
      auto v = readInteger(port->value, port->line, port->path, 1, 65535, diag_);
      ok = ok && v.has_value();
      if (v) gw.port = static_cast<uint16_t>(*v);
    }
    if (const MapEntry* weight = findEntry(keys, "weight")) {
      auto v = readInteger(weight->value, weight->line, weight->path, 1, kMaxWeight, diag_);
      ok = ok && v.has_value();
      if (v) gw.weight = static_cast<uint16_t>(*v);
    }
    if (!ok) return;

    // The same gateway twice in one pool would silently double its weight.
    for (std::size_t i = first; i < table_.gateways_.size(); ++i) {
      const Gateway& other = table_.gateways_[i];
      if (other.address == gw.address && other.port == gw.port) {
        diag_.error(address->line, address->path,
                    gw.addressText() + " port " + std::to_string(gw.port) +
                        " is already gateway " + quote(other.name) + " (line " +
                        std::to_string(other.line) + ") of this pool");
        return;
      }
    }
    if (table_.gateways_.size() >= kMaxEntries) {
      diag_.error(line, path, "more than " + std::to_string(kMaxEntries) + " gateways");
      return;
    }
    table_.gateways_.push_back(std::move(gw));
  }

  void parseHealthCheck(const MapEntry& e) {
    if (e.value.IsNull()) return;  // every key commented out: the defaults
    if (!expectMap(e.value, e.line, e.path, "a mapping of interval_ms, misses, restart_notify_rate")) return;
    HealthCheck& h = table_.health_check_;
    for (const MapEntry& k : knownEntries(e.value, e.path, kHealthCheckKeys)) {
      if (k.key == "interval_ms") {
        // 0 turns Echo off; otherwise at least 100 ms (TS 29.274 §7.1 asks
        // for no more than one Echo Request a minute per peer; operators
        // choose faster detection knowingly).
        if (auto v = readInteger(k.value, k.line, k.path, 0, 3'600'000, diag_)) {
          if (*v != 0 && *v < 100)
            diag_.error(k.line, k.path, std::to_string(*v) + " is below 100 (0 turns health checks off)");
          h.interval_ms = static_cast<uint32_t>(*v);
        }
      } else if (k.key == "misses") {
        if (auto v = readInteger(k.value, k.line, k.path, 1, 100, diag_)) h.misses = static_cast<uint32_t>(*v);
      } else if (auto v = readInteger(k.value, k.line, k.path, 1, 1'000'000, diag_)) {
        h.restart_notify_rate = static_cast<uint32_t>(*v);
      }
    }
  }

  void parseFailover(const MapEntry& e) {
    if (e.value.IsNull()) return;
    if (!expectMap(e.value, e.line, e.path,
                   "a mapping of response_timeout_ms, attempts, try_another, when_exhausted"))
      return;
    Failover& f = table_.failover_;
    for (const MapEntry& k : knownEntries(e.value, e.path, kFailoverKeys)) {
      if (k.key == "response_timeout_ms") {
        if (auto v = readInteger(k.value, k.line, k.path, 0, 60'000, diag_)) {
          if (*v != 0 && *v < 50)
            diag_.error(k.line, k.path, std::to_string(*v) + " is below 50 (0 turns failover on silence off)");
          f.response_timeout_ms = static_cast<uint32_t>(*v);
        }
      } else if (k.key == "attempts") {
        if (auto v = readInteger(k.value, k.line, k.path, 1, 4, diag_)) f.attempts = static_cast<uint8_t>(*v);
      } else if (k.key == "try_another") {
        if (k.value.IsNull()) continue;
        if (!k.value.IsSequence()) {
          diag_.error(k.line, k.path, "expected a list of cause values, found " + std::string(kindOf(k.value)));
          continue;
        }
        for (std::size_t i = 0; i < k.value.size(); ++i) {
          // Rejections only: an accepted session cannot be moved elsewhere.
          // GTPv2 rejects with 64..239, GTPv1 with 192..255: one list holds
          // both (see Failover in routing.h).
          const std::string path = indexKey(k.path, i);
          const int line = lineOf(k.value[i]) ? lineOf(k.value[i]) : k.line;
          if (auto v = readInteger(k.value[i], line, path, 64, 255, diag_))
            f.try_another[static_cast<std::size_t>(*v >> 6)] |= uint64_t{1} << (*v & 63);
        }
      } else if (const std::string* text = readScalar(k.value, k.line, k.path, "a word", diag_)) {
        if (*text == "remote_peer_not_responding") {
          f.when_exhausted = Failover::WhenExhausted::kRemotePeerNotResponding;
        } else if (*text == "no_resources_available") {
          f.when_exhausted = Failover::WhenExhausted::kNoResourcesAvailable;
        } else {
          diag_.error(k.line, k.path,
                      quote(*text) + " is not remote_peer_not_responding (cause 100) or no_resources_available "
                                     "(cause 73)");
        }
      }
    }
  }

  // The cap of one direction, kbps: a mapping of uplink_kbps, downlink_kbps,
  // each in 1..max.
  void parseBitrates(const MapEntry& k, uint32_t max, std::optional<uint32_t>& uplink,
                     std::optional<uint32_t>& downlink) {
    if (!expectMap(k.value, k.line, k.path, "a mapping of uplink_kbps, downlink_kbps")) return;
    for (const MapEntry& a : knownEntries(k.value, k.path, kAmbrKeys)) {
      auto v = readInteger(a.value, a.line, a.path, 1, max, diag_);
      if (!v) continue;
      (a.key == "uplink_kbps" ? uplink : downlink) = static_cast<uint32_t>(*v);
    }
  }

  // `pool` is the rule's pool when it is known: an override of the other
  // GTP version than the pool's is an error.
  bool parseOverrides(const MapEntry& e, Overrides& o, const Pool* pool) {
    if (e.value.IsNull()) return true;
    if (!expectMap(e.value, e.line, e.path, "a mapping of " + joinNames(kOverrideKeys))) return false;
    const std::size_t errors = diag_.count();
    for (const MapEntry& k : knownEntries(e.value, e.path, kOverrideKeys)) {
      const auto only = std::find_if(std::begin(kVersionOnlyOverrides), std::end(kVersionOnlyOverrides),
                                     [&](const VersionOnly& v) { return v.key == k.key; });
      if (pool != nullptr && only != std::end(kVersionOnlyOverrides) && only->version != pool->gtp_version) {
        diag_.error(k.line, k.path,
                    "applies to GTPv" + std::to_string(only->version) + " pools only: pool " + quote(pool->name) +
                        " has gtp_version " + std::to_string(pool->gtp_version));
        continue;
      }
      if (k.key == "apn") {
        const std::string* text = readScalar(k.value, k.line, k.path, "an APN", diag_);
        if (text == nullptr) continue;
        bool valid = !text->empty() && text->size() <= 100 && text->front() != '.' && text->back() != '.' &&
                     text->find("..") == std::string::npos;
        for (char c : *text) {
          valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.');
        }
        if (!valid) {
          diag_.error(k.line, k.path,
                      quote(*text) + " is not an APN: labels of A-Z a-z 0-9 - separated by dots, at most 100 "
                                     "characters (TS 23.003 §9.1)");
          continue;
        }
        o.apn = *text;
      } else if (k.key == "apn_ambr") {
        parseBitrates(k, UINT32_MAX, o.apn_ambr_uplink_kbps, o.apn_ambr_downlink_kbps);
      } else if (k.key == "qos_cap") {
        parseBitrates(k, kMaxQosCapKbps, o.qos_max_uplink_kbps, o.qos_max_downlink_kbps);
      } else if (k.key == "charging_characteristics") {
        // Written as a number, often hexadecimal ("0x0800": normal charging).
        const std::string* text = readScalar(k.value, k.line, k.path, "a 16-bit value", diag_);
        if (text == nullptr) continue;
        char* end = nullptr;
        const unsigned long v = std::strtoul(text->c_str(), &end, 0);
        if (text->empty() || *end != '\0' || v > 0xffff) {
          diag_.error(k.line, k.path, quote(*text) + " is not a 16-bit value (0..65535, or 0x0000..0xffff)");
          continue;
        }
        o.charging_characteristics = static_cast<uint16_t>(v);
      } else if (k.key == "selection_mode") {
        if (auto v = readInteger(k.value, k.line, k.path, 0, 3, diag_)) o.selection_mode = static_cast<uint8_t>(*v);
      } else if (const std::string* text = readScalar(k.value, k.line, k.path, "ipv4, ipv6 or ipv4v6", diag_)) {
        if (*text == "ipv4") {
          o.allow_ipv6 = false;
        } else if (*text == "ipv6") {
          o.allow_ipv4 = false;
        } else if (*text != "ipv4v6") {
          diag_.error(k.line, k.path, quote(*text) + " is not ipv4, ipv6 or ipv4v6");
        }
      }
    }
    return diag_.count() == errors;
  }

  void parseRules(const MapEntry& e) {
    if (e.value.IsNull() || (e.value.IsSequence() && e.value.size() == 0)) {
      diag_.error(e.line, e.path, "needs at least one rule");
      return;
    }
    if (!e.value.IsSequence()) {
      diag_.error(e.line, e.path, "expected a list of rules, found " + std::string(kindOf(e.value)));
      return;
    }
    if (e.value.size() > kMaxEntries) {
      diag_.error(e.line, e.path, "has more than " + std::to_string(kMaxEntries) + " rules");
      return;
    }
    std::map<std::string, int> names;
    // Per GTP version (index 1, 2): the rule without match that takes every
    // session of that version, as "rule \"default\" (rules[3], line 40)". A
    // catch-all whose pool is unknown takes both.
    std::optional<std::string> catch_all[3];
    for (std::size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node node = e.value[i];
      const std::string path = indexKey(e.path, i);
      const int line = lineOf(node) ? lineOf(node) : e.line;
      // A rule whose pool is unknown is hidden by a catch-all of either version.
      const std::optional<uint8_t> version = poolVersionOf(node);
      const std::optional<std::string>& hidden_by =
          version ? catch_all[*version] : (catch_all[1] ? catch_all[1] : catch_all[2]);
      if (hidden_by) {
        diag_.error(line, path,
                    "is unreachable: " + *hidden_by +
                        " before it has no match and takes every session");
      }
      bool matches_everything = false;
      Rule rule;
      const bool ok = parseRule(node, path, line, names, rule, matches_everything);
      if (hidden_by) continue;
      if (matches_everything) {
        const std::string text = (rule.name.empty() ? std::string("(") : "rule " + quote(rule.name) + " (") +
                                 path + ", line " + std::to_string(line) + ")";
        if (version) {
          catch_all[*version] = text;
        } else {
          catch_all[1] = catch_all[2] = text;
        }
      }
      if (ok) table_.rules_.push_back(std::move(rule));
    }
  }

  // The GTP version of the pool a rule names, when the rule names a known pool.
  std::optional<uint8_t> poolVersionOf(const YAML::Node& rule) const {
    if (!rule.IsMap()) return std::nullopt;
    for (const auto& kv : rule) {
      if (!kv.first.IsScalar() || kv.first.Scalar() != "pool" || !kv.second.IsScalar()) continue;
      for (const Pool& p : table_.pools_)
        if (p.name == kv.second.Scalar()) return p.gtp_version;
    }
    return std::nullopt;
  }

  // Fills `rule` as far as it is valid; false when it has an error. Tells
  // whether the rule has no `match` (takes every session) even then.
  bool parseRule(const YAML::Node& node, const std::string& path, int line,
                 std::map<std::string, int>& names, Rule& rule, bool& matches_everything) {
    if (!expectMap(node, line, path, "a rule (name, match, pool)")) return false;
    const std::vector<MapEntry> keys = knownEntries(node, path, kRuleKeys);
    matches_everything = findEntry(keys, "match") == nullptr;
    rule.line = line;
    bool ok = true;

    const MapEntry* name = findEntry(keys, "name");
    if (name == nullptr) {
      diag_.error(line, joinKey(path, "name"), "required key is missing");
      ok = false;
    } else if (auto text = readName(name->value, name->line, name->path, "rule name")) {
      auto [it, inserted] = names.emplace(*text, name->line);
      if (!inserted) {
        diag_.error(name->line, name->path,
                    "duplicate rule name " + quote(*text) + " (first given at line " +
                        std::to_string(it->second) + ")");
        ok = false;
      }
      rule.name = *text;
    } else {
      ok = false;
    }

    const MapEntry* pool = findEntry(keys, "pool");
    const Pool* known_pool = nullptr;
    if (pool == nullptr) {
      diag_.error(line, joinKey(path, "pool"), "required key is missing");
      ok = false;
    } else if (const std::string* text =
                   readScalar(pool->value, pool->line, pool->path, "a pool name", diag_)) {
      auto it = std::find_if(table_.pools_.begin(), table_.pools_.end(),
                             [&](const Pool& p) { return p.name == *text; });
      if (it != table_.pools_.end()) {
        rule.pool = static_cast<uint16_t>(it - table_.pools_.begin());
        known_pool = &*it;
      } else {
        ok = false;
        // A pool that exists but was invalid has been reported already.
        if (std::find(pool_names_.begin(), pool_names_.end(), *text) == pool_names_.end()) {
          std::string known;
          for (const Pool& p : table_.pools_) known += (known.empty() ? "" : ", ") + p.name;
          diag_.error(pool->line, pool->path,
                      "unknown pool " + quote(*text) +
                          (known.empty() ? std::string() : " (pools: " + known + ")"));
        }
      }
    } else {
      ok = false;
    }

    if (const MapEntry* match = findEntry(keys, "match")) ok = parseMatch(*match, rule.match) && ok;
    if (const MapEntry* o = findEntry(keys, "overrides")) ok = parseOverrides(*o, rule.overrides, known_pool) && ok;
    return ok;
  }

  struct Item {
    YAML::Node node;
    std::string path;
    int line;
  };

  // The entries of a criterion: a list, or one scalar standing for a list of one.
  std::optional<std::vector<Item>> criterionItems(const MapEntry& e) {
    std::vector<Item> items;
    if (e.value.IsScalar()) {
      items.push_back(Item{e.value, e.path, e.line});
      return items;
    }
    if (e.value.IsNull() || (e.value.IsSequence() && e.value.size() == 0)) {
      diag_.error(e.line, e.path,
                  "is empty: give at least one entry, or leave the criterion out to match "
                  "every session");
      return std::nullopt;
    }
    if (!e.value.IsSequence()) {
      diag_.error(e.line, e.path, "expected a list, found " + std::string(kindOf(e.value)));
      return std::nullopt;
    }
    for (std::size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node item = e.value[i];
      items.push_back(Item{item, indexKey(e.path, i), lineOf(item) ? lineOf(item) : e.line});
    }
    return items;
  }

  bool parseMatch(const MapEntry& e, Match& m) {
    if (e.value.IsNull() || (e.value.IsMap() && e.value.size() == 0)) {
      diag_.error(e.line, e.path,
                  "is empty: leave `match` out for a rule that matches every session");
      return false;
    }
    if (!expectMap(e.value, e.line, e.path, "a mapping of criteria (" + joinNames(kMatchKeys) + ")"))
      return false;
    const std::size_t errors_before = diag_.count();
    for (const MapEntry& c : knownEntries(e.value, e.path, kMatchKeys)) {
      const std::optional<std::vector<Item>> items = criterionItems(c);
      if (!items) continue;
      for (const Item& item : *items) {
        if (c.key == "imsi_range") {
          parseImsiRange(item, m);
          continue;
        }
        if (c.key == "rat_type") {
          parseRatType(item, m);
          continue;
        }
        const std::string* text = readScalar(item.node, item.line, item.path, "a string", diag_);
        if (text == nullptr) continue;
        if (c.key == "apn") parseApn(*text, item, m);
        else if (c.key == "imsi_prefix") parseImsiPrefix(*text, item, m);
        else if (c.key == "serving_network") parseServingNetwork(*text, item, m);
        else if (c.key == "sgw_address") parseCidr(*text, item, m);
      }
    }
    return diag_.count() == errors_before;
  }

  void parseApn(const std::string& text, const Item& item, Match& m) {
    ApnPattern p;
    std::string_view rest = text;
    if (rest.substr(0, 2) == "*.") {
      p.wildcard = true;
      rest.remove_prefix(2);
    }
    std::string problem;
    if (rest.empty() || rest == "*") {
      problem = "matches every APN: leave apn out instead";
    } else if (rest.find('*') != std::string_view::npos) {
      problem = "has a '*' that is not the whole first label (\"*.example.com\")";
    } else if (rest.size() + (p.wildcard ? 2 : 0) + 1 > gtp::kMaxApnOctets) {
      problem = "is longer than an APN can be (" + std::to_string(gtp::kMaxApnOctets) + " octets)";
    } else {
      std::size_t label = 0;
      for (char c : rest) {
        if (c == '.') {
          if (label == 0) break;
          label = 0;
          continue;
        }
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '-' || c == '_';
        if (!ok) {
          problem = "holds " + quote(std::string(1, c)) +
                    ": an APN label has only A-Z a-z 0-9 - _";
          break;
        }
        if (++label > 63) {
          problem = "has a label longer than 63 characters";
          break;
        }
      }
      if (problem.empty() && (label == 0 || rest.front() == '.'))
        problem = "has an empty label";
    }
    if (!problem.empty()) {
      diag_.error(item.line, item.path, quote(text) + " " + problem);
      return;
    }
    p.text = toLower(rest);
    m.apn.push_back(std::move(p));
  }

  void parseImsiPrefix(const std::string& text, const Item& item, Match& m) {
    if (text.empty() || text.size() > kMaxImsiDigits || !allDigits(text)) {
      diag_.error(item.line, item.path,
                  quote(text) + " is not an IMSI prefix: 1 to 15 digits");
      return;
    }
    m.imsi_prefix.push_back(text);
  }

  // One end of a range: digits, and a plain scalar may be given unquoted.
  std::optional<std::string> readImsi(const YAML::Node& node, int line, const std::string& path) {
    const std::string* text = readScalar(node, line, path, "an IMSI", diag_);
    if (text == nullptr) return std::nullopt;
    if (text->empty() || text->size() > kMaxImsiDigits || !allDigits(*text)) {
      diag_.error(line, path, quote(*text) + " is not an IMSI: 1 to 15 digits");
      return std::nullopt;
    }
    return *text;
  }

  void parseImsiRange(const Item& item, Match& m) {
    if (!expectMap(item.node, item.line, item.path, "a range {from: IMSI, to: IMSI}")) return;
    const std::vector<MapEntry> keys = knownEntries(item.node, item.path, kRangeKeys);
    std::optional<std::string> bounds[2];
    bool ok = true;
    for (int i = 0; i < 2; ++i) {
      const MapEntry* e = findEntry(keys, kRangeKeys[i]);
      if (e == nullptr) {
        diag_.error(item.line, joinKey(item.path, kRangeKeys[i]), "required key is missing");
        ok = false;
        continue;
      }
      bounds[i] = readImsi(e->value, e->line, e->path);
      ok = ok && bounds[i].has_value();
    }
    if (!ok) return;
    const std::string& from = *bounds[0];
    const std::string& to = *bounds[1];
    if (from.size() != to.size()) {
      diag_.error(item.line, item.path,
                  "from " + quote(from) + " has " + std::to_string(from.size()) + " digits and to " +
                      quote(to) + " has " + std::to_string(to.size()) +
                      ": both ends need the same number of digits");
      return;
    }
    if (from > to) {
      diag_.error(item.line, item.path, "from " + quote(from) + " is above to " + quote(to));
      return;
    }
    m.imsi_range.push_back(
        ImsiRange{digitsValue(from), digitsValue(to), static_cast<uint8_t>(from.size())});
  }

  void parseServingNetwork(const std::string& text, const Item& item, Match& m) {
    const auto dash = text.find('-');
    if (dash != std::string::npos) {
      if (auto plmn = gtp::makePlmn(std::string_view(text).substr(0, dash),
                                    std::string_view(text).substr(dash + 1))) {
        m.serving_network.push_back(*plmn);
        return;
      }
    }
    diag_.error(item.line, item.path,
                quote(text) + " is not MCC-MNC: 3 digits, '-', 2 or 3 digits (\"001-01\")");
  }

  void parseRatType(const Item& item, Match& m) {
    const std::string* text = readScalar(item.node, item.line, item.path, "a RAT type", diag_);
    if (text == nullptr) return;
    std::optional<uint8_t> value;
    if (!text->empty() && allDigits(*text)) {
      if (text->size() <= 3 && digitsValue(*text) <= 255) value = static_cast<uint8_t>(digitsValue(*text));
    } else {
      value = ratTypeFromName(*text);
    }
    if (!value) {
      std::string names;
      for (const RatName& r : kRatNames) names += (names.empty() ? "" : " ") + std::string(r.name);
      diag_.error(item.line, item.path,
                  quote(*text) + " is not a RAT type: a number 0..255 (TS 29.274 8.17) or one of " +
                      names);
      return;
    }
    m.rat_types[*value >> 6] |= uint64_t{1} << (*value & 63);
    m.has_rat_type = true;
  }

  void parseCidr(const std::string& text, const Item& item, Match& m) {
    const auto slash = text.find('/');
    const std::string_view address = std::string_view(text).substr(0, slash);
    const std::string_view length =
        slash == std::string::npos ? std::string_view{} : std::string_view(text).substr(slash + 1);
    auto fail = [&](const std::string& why) { diag_.error(item.line, item.path, quote(text) + " " + why); };
    auto prefixLength = [&](unsigned max) -> std::optional<unsigned> {
      if (slash == std::string::npos) return max;
      if (length.empty() || length.size() > 3 || !allDigits(length) || digitsValue(length) > max) {
        fail("has a bad prefix length: 0.." + std::to_string(max));
        return std::nullopt;
      }
      return static_cast<unsigned>(digitsValue(length));
    };
    gtp::Ipv4 v4;
    gtp::Ipv6 v6;
    if (gtp::parseIpv4(address, v4)) {
      const auto len = prefixLength(32);
      if (!len) return;
      Cidr4 c;
      c.prefix_length = static_cast<uint8_t>(*len);
      c.mask = *len == 0 ? 0 : ~uint32_t{0} << (32 - *len);
      c.network = toHost(v4) & c.mask;
      if (c.network != toHost(v4)) {
        fail("has host bits set (did you mean " + quote(cidrText(c)) + "?)");
        return;
      }
      m.sgw_ipv4.push_back(c);
      return;
    }
    if (gtp::parseIpv6(address, v6)) {
      const auto len = prefixLength(128);
      if (!len) return;
      Cidr6 c;
      c.prefix_length = static_cast<uint8_t>(*len);
      for (unsigned i = 0; i < 16; ++i) {
        const unsigned bits = *len > i * 8 ? std::min(8u, *len - i * 8) : 0;
        c.mask[i] = static_cast<uint8_t>(bits == 0 ? 0 : 0xff << (8 - bits));
        c.network[i] = v6.octets[i] & c.mask[i];
      }
      if (c.network != v6.octets) {
        fail("has host bits set (did you mean " + quote(cidrText(c)) + "?)");
        return;
      }
      m.sgw_ipv6.push_back(c);
      return;
    }
    fail("is not an IPv4 or IPv6 address or prefix (\"10.0.0.0/8\", \"2001:db8::/32\")");
  }

  // The canonical text the content hash is computed from.
  void normalise() {
    std::string out = "version " + std::to_string(table_.schema_version_) + "\n";
    for (const Pool& p : table_.pools_) {
      // The default version is left out: documents older than gtp_version hash as before.
      out += "pool " + p.name;
      if (p.gtp_version != kDefaultGtpVersion) out += " gtp_version " + std::to_string(p.gtp_version);
      out += "\n";
      for (uint32_t i = p.first_gateway; i < uint32_t{p.first_gateway} + p.gateway_count; ++i) {
        const Gateway& g = table_.gateways_[i];
        out += " gateway " + g.name + " " + g.addressText() + " " + std::to_string(g.port) + " " +
               std::to_string(g.weight) + "\n";
      }
    }
    for (const Rule& r : table_.rules_) {
      out += "rule " + r.name + " -> " + table_.pools_[r.pool].name + "\n";
      const Match& m = r.match;
      auto line = [&](std::string_view criterion, std::vector<std::string> values) {
        if (values.empty()) return;
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
        out += " " + std::string(criterion);
        for (const std::string& v : values) out += " " + v;
        out += "\n";
      };
      std::vector<std::string> v;
      for (const ApnPattern& a : m.apn) v.push_back((a.wildcard ? "*." : "") + a.text);
      line("apn", std::exchange(v, {}));
      line("imsi_prefix", m.imsi_prefix);
      for (const ImsiRange& ir : m.imsi_range) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%0*llu-%0*llu", ir.digits,
                      static_cast<unsigned long long>(ir.from), ir.digits,
                      static_cast<unsigned long long>(ir.to));
        v.push_back(buf);
      }
      line("imsi_range", std::exchange(v, {}));
      for (const gtp::Plmn& p : m.serving_network) v.push_back(plmnText(p));
      line("serving_network", std::exchange(v, {}));
      for (unsigned t = 0; t < 256; ++t)
        if ((m.rat_types[t >> 6] >> (t & 63)) & 1) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "%03u", t);
          v.push_back(buf);
        }
      line("rat_type", std::exchange(v, {}));
      for (const Cidr4& c : m.sgw_ipv4) v.push_back(cidrText(c));
      for (const Cidr6& c : m.sgw_ipv6) v.push_back(cidrText(c));
      line("sgw_address", std::exchange(v, {}));
      const Overrides& o = r.overrides;
      if (!o.apn.empty()) out += " override apn " + o.apn + "\n";
      if (o.apn_ambr_uplink_kbps) out += " override apn_ambr_uplink " + std::to_string(*o.apn_ambr_uplink_kbps) + "\n";
      if (o.apn_ambr_downlink_kbps)
        out += " override apn_ambr_downlink " + std::to_string(*o.apn_ambr_downlink_kbps) + "\n";
      if (o.qos_max_uplink_kbps)
        out += " override qos_cap_uplink " + std::to_string(*o.qos_max_uplink_kbps) + "\n";
      if (o.qos_max_downlink_kbps)
        out += " override qos_cap_downlink " + std::to_string(*o.qos_max_downlink_kbps) + "\n";
      if (o.charging_characteristics)
        out += " override charging_characteristics " + std::to_string(*o.charging_characteristics) + "\n";
      if (o.selection_mode) out += " override selection_mode " + std::to_string(*o.selection_mode) + "\n";
      if (!o.allow_ipv4 || !o.allow_ipv6) out += std::string(" override pdn_type ") + (o.allow_ipv4 ? "ipv4" : "ipv6") + "\n";
    }
    const HealthCheck& h = table_.health_check_;
    out += "health_check " + std::to_string(h.interval_ms) + " " + std::to_string(h.misses) + " " +
           std::to_string(h.restart_notify_rate) + "\n";
    const Failover& f = table_.failover_;
    out += "failover " + std::to_string(f.response_timeout_ms) + " " + std::to_string(f.attempts) + " " +
           (f.when_exhausted == Failover::WhenExhausted::kRemotePeerNotResponding ? "100" : "73");
    for (unsigned c = 0; c < 256; ++c)
      if (f.triesAnother(static_cast<uint8_t>(c))) out += " " + std::to_string(c);
    out += "\n";
    table_.hash_ = fnv1a64(out);
    table_.normalised_ = std::move(out);
  }

  Diagnostics diag_;
  RoutingTable table_;
  std::vector<std::string> pool_names_;       // every pool name seen, valid or not
  std::map<std::string, int> gateway_names_;  // name -> line
};

}  // namespace detail

std::string Gateway::addressText() const {
  return std::visit([](const auto& a) { return gtp::toString(a); }, address);
}

Result<RoutingTable> parseRoutingDocument(std::string_view yaml_text,
                                          const std::string& display_name) {
  try {
    return detail::RoutingParser(display_name).run(yaml_text);
  } catch (const std::exception& e) {
    ConfigErrors errors;
    errors.add(display_name, 0, "", std::string("cannot be loaded: ") + e.what());
    return tl::unexpected(std::move(errors));
  }
}

Result<RoutingTable> loadRoutingDocument(const std::string& path) {
  std::string text;
  std::string problem;
  try {
    if (std::filesystem::is_directory(path))
      problem = "is a directory, not a file";
    else if (detail::readTextFile(path, text, problem))
      return parseRoutingDocument(text, path);
  } catch (const std::exception& e) {
    problem = std::string("cannot be loaded: ") + e.what();
  }
  ConfigErrors errors;
  errors.add(path, 0, "", problem);
  return tl::unexpected(std::move(errors));
}

std::string summary(const RoutingTable& table) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(table.contentHash()));
  return std::to_string(table.pools().size()) + " pools, " +
         std::to_string(table.gateways().size()) + " gateways, " +
         std::to_string(table.rules().size()) + " rules, hash " + hash;
}

std::optional<uint8_t> ratTypeFromName(std::string_view name) noexcept {
  for (const RatName& r : kRatNames)
    if (equalsLower(name, r.name)) return r.value;
  return std::nullopt;
}

std::string_view ratTypeName(uint8_t value) noexcept {
  for (const RatName& r : kRatNames)
    if (r.value == value) return r.name;
  return {};
}

}  // namespace gtpcp::config
