// The routing document: gateway pools and the rules that send each new
// session to a pool, compiled at load for the worker's selection.
//
// Document (YAML; config/routing.yaml is a commented example):
//   version: 1
//   pools:   { <pool>: { gtp_version = 2,
//                        gateways: [ {name, address, port = 2123, weight = 1}, ... ] } }
//   rules:   [ {name, match: {apn, imsi_prefix, imsi_range, serving_network,
//                             rat_type, sgw_address}, pool,
//              overrides: {apn, apn_ambr: {uplink_kbps, downlink_kbps},
//                          charging_characteristics, selection_mode, pdn_type,
//                          qos_cap: {uplink_kbps, downlink_kbps}}}, ... ]
//   health_check: {interval_ms = 5000, misses = 3, restart_notify_rate = 1000}
//   failover: {response_timeout_ms = 2000, attempts = 3, try_another = [],
//              when_exhausted = remote_peer_not_responding}
// Rules are tried in order and the first that matches wins. Within `match`
// every criterion given must match (AND); within a criterion's list any entry
// may (OR). A rule without `match` matches every session, so rules after it
// are unreachable (an error). A criterion on a field the request lacks (no
// IMSI, no Serving Network, ...) does not match.
//
// GTP versions. A pool serves one version: `gtp_version: 2` (the default,
// PGWs on S5/S8) or `gtp_version: 1` (GGSNs on Gn/Gp). A session is routed
// among the rules whose pool serves its version only (SessionKey::
// gtp_version): a GTPv2 session never lands in a GTPv1 pool, and a rule
// without `match` hides only the later rules of its own version. The
// criteria read a Create PDP Context Request the way they read a Create
// Session Request: apn = the Access Point Name, imsi_prefix and imsi_range =
// the IMSI, serving_network = the MCC-MNC of the Routeing Area Identity,
// rat_type = the RAT Type IE (TS 29.060 §7.7.50; its values 1..6 are those
// of TS 29.274 8.17), sgw_address = the SGSN Address for signalling (else the
// UDP source). Overrides: apn, charging_characteristics and selection_mode
// apply to both versions; apn_ambr and pdn_type to GTPv2 pools only, qos_cap
// (the maximum bit rates of the QoS Profile, TS 24.008 §10.5.6.5) to GTPv1
// pools only: either on a rule of the other version is an error.
//
// Loading is a cold path (allocates; exceptions stay inside;
// routing_document.cc). select() is called by a worker for every
// session-creating request: it never allocates or throws
// (routing_select.cc). A RoutingTable is immutable after loading and may be
// read by any number of threads. The weighted choice of a gateway inside the
// selected pool is GatewayPicker (gateway_picker.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/config/errors.h"
#include "common/gtp/constants.h"
#include "common/gtp/values.h"

namespace gtpcp::config {

inline constexpr uint32_t kRoutingSchemaVersion = 1;
// A gateway's port when the document names none.
inline constexpr uint16_t kDefaultGtpcPort = gtp::kGtpcPort;
inline constexpr uint8_t kDefaultGtpVersion = 2;
// qos_cap bounds, kbps: TS 24.008 extended-2 bit rates reach 10 Gbps.
inline constexpr uint32_t kMaxQosCapKbps = 10'000'000;

struct Gateway {
  std::string name;                           // unique in the document
  std::variant<gtp::Ipv4, gtp::Ipv6> address; // the PGW's S5/S8 (GGSN's Gn) GTP-C address
  uint16_t port = kDefaultGtpcPort;
  uint16_t weight = 1;                        // 1..1000
  uint16_t pool = 0;                          // index of its pool
  uint8_t gtp_version = kDefaultGtpVersion;   // its pool's: 1 GGSN (Gn/Gp), 2 PGW (S5/S8)
  int line = 0;                               // where the document defines it

  bool isIpv6() const noexcept { return std::holds_alternative<gtp::Ipv6>(address); }
  std::string addressText() const;
};

// A pool's gateways are gateways()[first_gateway, first_gateway + gateway_count).
struct Pool {
  std::string name;
  uint16_t first_gateway = 0;
  uint16_t gateway_count = 0;
  uint32_t total_weight = 0;
  uint8_t gtp_version = kDefaultGtpVersion;  // 1: GGSNs (Gn/Gp), 2: PGWs (S5/S8)
  int line = 0;
};

// "ims" (exact) or "*.mnc001.mcc001.gprs" (one or more labels, then the
// suffix). Both compare ignoring ASCII case.
struct ApnPattern {
  std::string text;       // lower case; for a wildcard, the suffix after "*."
  bool wildcard = false;
  bool matches(std::string_view apn) const noexcept;
};

// Inclusive range of IMSIs with exactly `digits` digits.
struct ImsiRange {
  uint64_t from = 0;
  uint64_t to = 0;
  uint8_t digits = 0;
};

struct Cidr4 {
  uint32_t network = 0;  // host byte order
  uint32_t mask = 0;
  uint8_t prefix_length = 0;
  bool contains(const gtp::Ipv4& a) const noexcept;
};

struct Cidr6 {
  std::array<uint8_t, 16> network{};
  std::array<uint8_t, 16> mask{};
  uint8_t prefix_length = 0;
  bool contains(const gtp::Ipv6& a) const noexcept;
};

// The criteria of a rule, compiled. An empty list is a criterion not given.
struct Match {
  std::vector<ApnPattern> apn;
  std::vector<std::string> imsi_prefix;  // digits
  std::vector<ImsiRange> imsi_range;
  std::vector<gtp::Plmn> serving_network;
  std::array<uint64_t, 4> rat_types{};  // bit v set: RAT type value v matches
  bool has_rat_type = false;
  std::vector<Cidr4> sgw_ipv4;  // sgw_address, IPv4 entries
  std::vector<Cidr6> sgw_ipv6;  // sgw_address, IPv6 entries

  bool matchesEverything() const noexcept;
};

// What a rule changes in the Create Session Requests (Create PDP Context
// Requests) it sends to its pool (and, for the APN, back in the messages of
// its sessions from the PGW or GGSN). Which fields a version takes: routing.h
// header; the parser refuses the others.
struct Overrides {
  std::string apn;                                // dotted; empty: unchanged
  std::optional<uint32_t> apn_ambr_uplink_kbps;   // GTPv2: caps the APN-AMBR
  std::optional<uint32_t> apn_ambr_downlink_kbps;
  // GTPv1: caps the maximum bit rates of the QoS Profile (1..kMaxQosCapKbps;
  // gtp/v1/qos.h capMaxBitrate()).
  std::optional<uint32_t> qos_max_uplink_kbps;
  std::optional<uint32_t> qos_max_downlink_kbps;
  std::optional<uint16_t> charging_characteristics;  // set, added when absent
  std::optional<uint8_t> selection_mode;             // 0..3, set, added when absent
  // GTPv2: PDN types allowed (TS 29.274 8.34): a request for IPv4v6 is
  // narrowed to the allowed one; a request for a type not allowed is refused.
  bool allow_ipv4 = true;
  bool allow_ipv6 = true;

  bool any() const noexcept {
    return !apn.empty() || apn_ambr_uplink_kbps || apn_ambr_downlink_kbps || qos_max_uplink_kbps ||
           qos_max_downlink_kbps || charging_characteristics || selection_mode || !allow_ipv4 || !allow_ipv6;
  }
};

struct Rule {
  std::string name;
  uint16_t pool = 0;
  Match match;
  Overrides overrides;
  int line = 0;
};

// Echo Requests to every gateway of the document (TS 29.274 §7.1): a gateway
// is down after `misses` intervals without an answer, up again on an answer.
// A changed Recovery value means the gateway restarted and lost its
// sessions; each worker then tells the SGWs of its sessions there, at most
// `restart_notify_rate` per second.
struct HealthCheck {
  uint32_t interval_ms = 5000;        // 0: no Echo Requests, every gateway counts as up
  uint32_t misses = 3;
  uint32_t restart_notify_rate = 1000;
};

// What happens to a Create Session Request (Create PDP Context Request) its
// gateway does not accept. try_another holds rejection causes of both
// versions in one list (64..255): GTPv2 rejects with 64..239 (TS 29.274
// Table 8.4-1), GTPv1 with 192..255 (TS 29.060 §7.7.1; 128..191 are its
// acceptances), so an entry of 64..191 only ever matches a GTPv2 answer and
// a worker asks triesAnother() with the rejection causes of its version only.
struct Failover {
  enum class WhenExhausted : uint8_t { kRemotePeerNotResponding, kNoResourcesAvailable };
  uint32_t response_timeout_ms = 2000;  // 0: no failover on silence (the SGW's T3/N3 decide)
  uint8_t attempts = 3;                 // gateways tried per request, the first included (1..4)
  std::array<uint64_t, 4> try_another{};  // bit c set: cause c sends the request to the next gateway
  WhenExhausted when_exhausted = WhenExhausted::kRemotePeerNotResponding;

  bool triesAnother(uint8_t cause) const noexcept { return (try_another[cause >> 6] >> (cause & 63)) & 1; }
  // The cause the SGW gets when no gateway is left (TS 29.274 Table 8.4-1).
  uint8_t exhaustedCause() const noexcept {
    return when_exhausted == WhenExhausted::kRemotePeerNotResponding ? 100 : 73;
  }
};

// What a worker extracted from a Create Session Request (GTPv2) or a Create
// PDP Context Request (GTPv1; which IE feeds which field: routing.h header).
// The views must stay valid during select().
struct SessionKey {
  std::string_view apn;   // dotted, as decoded
  std::string_view imsi;  // digits, may be empty
  std::optional<gtp::Plmn> serving_network;  // GTPv1: the RAI's MCC-MNC
  std::optional<uint8_t> rat_type;
  // The SGW's control-plane address: from the sender F-TEID, else the UDP
  // source. GTPv1: the SGSN Address for signalling, else the UDP source.
  std::optional<gtp::Ipv4> sgw_ipv4;
  std::optional<gtp::Ipv6> sgw_ipv6;
  uint8_t gtp_version = kDefaultGtpVersion;  // only rules whose pool serves this version are tried
};

struct Selection {
  uint16_t rule = 0;  // index in rules()
  uint16_t pool = 0;  // index in pools()
  friend bool operator==(const Selection&, const Selection&) = default;
};

namespace detail {
class RoutingParser;
}

class RoutingTable {
 public:
  // The first rule whose pool serves key.gtp_version and that matches `key`,
  // nullopt when none does. No allocation.
  std::optional<Selection> select(const SessionKey& key) const noexcept;

  // `index` must be below gateways().size() (resp. pools().size()).
  const Gateway& gateway(uint16_t index) const noexcept { return gateways_[index]; }
  const Pool& pool(uint16_t index) const noexcept { return pools_[index]; }
  std::span<const Gateway> gateways() const noexcept { return gateways_; }
  std::span<const Pool> pools() const noexcept { return pools_; }
  std::span<const Rule> rules() const noexcept { return rules_; }
  const Rule& rule(uint16_t index) const noexcept { return rules_[index]; }
  // The gateways of pool `index`.
  std::span<const Gateway> gatewaysOf(uint16_t index) const noexcept;
  std::optional<uint16_t> findPool(std::string_view name) const noexcept;
  std::optional<uint16_t> findGateway(std::string_view name) const noexcept;
  std::optional<uint16_t> findRule(std::string_view name) const noexcept;
  const HealthCheck& healthCheck() const noexcept { return health_check_; }
  const Failover& failover() const noexcept { return failover_; }

  uint32_t schemaVersion() const noexcept { return schema_version_; }
  // FNV-1a 64 of the normalised document: independent of comments, layout,
  // defaults written out or not, letter case of APNs and RAT names, and the
  // order of entries within one criterion; dependent on everything that
  // changes routing (pool, gateway and rule order included).
  uint64_t contentHash() const noexcept { return hash_; }
  // The normalised text the hash is computed from (for tools and tests).
  const std::string& normalised() const noexcept { return normalised_; }
  const std::string& source() const noexcept { return source_; }

 private:
  friend class detail::RoutingParser;

  std::string source_;
  uint32_t schema_version_ = 0;
  std::vector<Gateway> gateways_;
  std::vector<Pool> pools_;
  std::vector<Rule> rules_;
  HealthCheck health_check_;
  Failover failover_;
  std::string normalised_;
  uint64_t hash_ = 0;
};

// Parses a routing document given as text; `display_name` names it in errors.
// Every problem is reported: unknown keys, bad values, duplicate names,
// unknown or empty pools, no rule, rules after a catch-all.
Result<RoutingTable> parseRoutingDocument(std::string_view yaml_text,
                                          const std::string& display_name);
// Reads and parses the document at `path` (errors name it as `path`).
Result<RoutingTable> loadRoutingDocument(const std::string& path);

// "2 pools, 3 gateways, 3 rules, hash 0123456789abcdef".
std::string summary(const RoutingTable& table);

// RAT Type values of TS 29.274 8.17 by the names the document uses: utran 1,
// geran 2, wlan 3, gan 4, hspa-evolution 5, eutran 6, virtual 7, nbiot 8,
// ltem 9, nr 10. Names compare ignoring case.
std::optional<uint8_t> ratTypeFromName(std::string_view name) noexcept;
// The name of a RAT Type value, "" for a value without one.
std::string_view ratTypeName(uint8_t value) noexcept;

}  // namespace gtpcp::config
