#include "tools/peer/config.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "common/gtp/values.h"

namespace gtpcp::peer {

namespace {

// "ADDR=VALUE" -> address and value text.
bool splitAssignment(const std::string& text, IpAddress& addr, std::string& value) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return false;
  if (!parseAddress(std::string_view(text).substr(0, eq), addr)) return false;
  value = text.substr(eq + 1);
  return !value.empty();
}

bool parseUnsigned(const std::string& text, uint64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && p == text.data() + text.size() && !text.empty();
}

bool parseDouble(const std::string& text, double& out) {
  try {
    std::size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size() && std::isfinite(out);
  } catch (...) {
    return false;
  }
}

int indexOf(const std::vector<IpAddress>& v, const IpAddress& a) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] == a) return static_cast<int>(i);
  return -1;
}

const char* familyName(const IpAddress& a) { return a.isV4() ? "IPv4" : "IPv6"; }

// At most one value per address family, as --proxy and --proxy-gateway take
// them.
template <class T>
struct PerFamily {
  std::optional<T> v4, v6;
  std::optional<T>& of(const IpAddress& a) { return a.isV4() ? v4 : v6; }
};

}  // namespace

const char* modeName(RunMode m) noexcept {
  switch (m) {
    case RunMode::kLifecycle: return "lifecycle";
    case RunMode::kModifyOnly: return "modify-only";
    case RunMode::kHold: return "hold";
  }
  return "unknown";
}

std::vector<std::string> makeRunConfig(const PeerOptions& o, RunConfig& out) {
  std::vector<std::string> errors;
  auto error = [&](const std::string& option, const std::string& message) {
    errors.push_back(option + ": " + message);
  };
  out = RunConfig{};
  out.options = o;

  // Nodes.
  auto nodes = [&](const std::string& option, const std::vector<std::string>& texts) {
    std::vector<IpAddress> parsed;
    for (const auto& text : texts) {
      IpAddress a;
      if (!parseAddress(text, a))
        error(option, "'" + text + "' is not an IPv4 or IPv6 address");
      else if (!isLoopback(a) && !o.allow_non_loopback)
        error(option, text + " is not a loopback address (use --allow-non-loopback)");
      else if (indexOf(parsed, a) >= 0)
        error(option, text + " given twice");
      else
        parsed.push_back(a);
    }
    return parsed;
  };
  const std::vector<IpAddress> sgws = nodes("--sgw", o.sgw);
  const std::vector<IpAddress> pgws = nodes("--pgw", o.pgw);
  const std::vector<IpAddress> sgsns = nodes("--sgsn", o.sgsn);
  const std::vector<IpAddress> ggsns = nodes("--ggsn", o.ggsn);
  const bool v1 = !o.sgsn.empty() || !o.ggsn.empty();
  out.version = v1 ? 1 : 2;
  if (v1 && (!o.sgw.empty() || !o.pgw.empty()))
    error("--sgsn/--ggsn", "a run has GTPv2 nodes (--sgw, --pgw) or GTPv1 nodes (--sgsn, --ggsn), "
                           "not both");
  if (o.sgw.empty() && o.pgw.empty() && !v1)
    error("--sgw/--pgw", "give at least one SGW or PGW address (or SGSN or GGSN)");
  // The version's access side (SGWs or SGSNs) and gateway side (PGWs or GGSNs).
  const std::vector<IpAddress>& access = v1 ? sgsns : sgws;
  const std::vector<IpAddress>& gateways = v1 ? ggsns : pgws;
  const std::string access_option = v1 ? "--sgsn" : "--sgw";
  const std::string gateway_option = v1 ? "--ggsn" : "--pgw";
  const std::string access_name = v1 ? "SGSN" : "SGW";
  const std::string gateway_name = v1 ? "GGSN" : "PGW";
  if (access.size() > 250) error(access_option, "at most 250 " + access_name + "s");
  if (gateways.size() > 250) error(gateway_option, "at most 250 " + gateway_name + "s");
  out.sgw_role = !o.sgw.empty() && !v1;
  out.pgw_role = !o.pgw.empty() && !v1;
  out.sgsn_role = !o.sgsn.empty();
  out.ggsn_role = !o.ggsn.empty();
  const bool access_role = out.accessRole(), gateway_role = out.gatewayRole();
  if (o.sgw_port_base < 0 || o.sgw_port_base + static_cast<int>(access.size()) > 65536)
    error("--sgw-port-base", "out of range");
  for (std::size_t i = 0; i < access.size(); ++i) {
    const uint16_t port = o.sgw_port_base > 0 ? static_cast<uint16_t>(o.sgw_port_base + i) : kGtpcPort;
    out.access_binds.push_back(Endpoint{access[i], port});
    if (port == kGtpcPort && indexOf(gateways, access[i]) >= 0)
      error(access_option, addressToString(access[i]) + " is also a " + gateway_name +
                               " on the same port");
  }
  for (const IpAddress& a : gateways) out.gateway_binds.push_back(Endpoint{a, kGtpcPort});

  // The proxy: an address per family it serves.
  PerFamily<Endpoint> proxy;
  const bool need_proxy = access_role || (gateway_role && !o.relay);
  if (o.proxy.empty() && need_proxy)
    error("--proxy", access_role ? "required with " + access_option
                                 : "required with " + gateway_option +
                                       " unless --relay (the checks name it)");
  for (const auto& text : o.proxy) {
    Endpoint e;
    if (!parseEndpoint(text, kGtpcPort, e))
      error("--proxy", "'" + text + "' is not ADDR, ADDR:PORT or [IPV6]:PORT");
    else if (!isLoopback(e.addr) && !o.allow_non_loopback)
      error("--proxy", text + " is not a loopback address (use --allow-non-loopback)");
    else if (proxy.of(e.addr))
      error("--proxy", std::string("one ") + familyName(e.addr) + " address at most, not " +
                           toString(*proxy.of(e.addr)) + " and " + text);
    else
      proxy.of(e.addr) = e;
  }
  PerFamily<IpAddress> proxy_gateway;
  if (o.proxy_gateway.empty()) {
    if (proxy.v4) proxy_gateway.v4 = proxy.v4->addr;
    if (proxy.v6) proxy_gateway.v6 = proxy.v6->addr;
  }
  for (const auto& text : o.proxy_gateway) {
    IpAddress a;
    if (!parseAddress(text, a))
      error("--proxy-gateway", "'" + text + "' is not an IPv4 or IPv6 address");
    else if (proxy_gateway.of(a))
      error("--proxy-gateway", std::string("one ") + familyName(a) + " address at most, not " +
                                   addressToString(*proxy_gateway.of(a)) + " and " + text);
    else
      proxy_gateway.of(a) = a;
  }
  // A failover of the proxy group: the new instance's address per family,
  // where datagrams for the proxy's addresses of that family go after the
  // switch (at the same port).
  PerFamily<IpAddress> failover;
  for (const auto& text : o.failover_to) {
    IpAddress a;
    if (!parseAddress(text, a))
      error("--failover-to", "'" + text + "' is not an IPv4 or IPv6 address (no port: it stays)");
    else if (!isLoopback(a) && !o.allow_non_loopback)
      error("--failover-to", text + " is not a loopback address (use --allow-non-loopback)");
    else if (failover.of(a))
      error("--failover-to", std::string("one ") + familyName(a) + " address at most, not " +
                                 addressToString(*failover.of(a)) + " and " + text);
    else if (!proxy.of(a) && !proxy_gateway.of(a))
      error("--failover-to", text + " is " + familyName(a) + " and the proxy (--proxy, " +
                                 "--proxy-gateway) has no " + familyName(a) + " address to move");
    else if ((proxy.of(a) && proxy.of(a)->addr == a) || proxy_gateway.of(a) == a)
      error("--failover-to", text + " is the proxy's own address");
    else if (indexOf(access, a) >= 0 || indexOf(gateways, a) >= 0)
      error("--failover-to", text + " is an emulated node's address");
    else if (v1)
      error("--failover-to", "GTPv2 runs only (--sgw, --pgw)");
    else
      failover.of(a) = a;
  }
  // Not given: < 0 (main.cc refuses negative values).
  if (o.failover_after >= 0 && o.failover_to.empty())
    error("--failover-after", "needs --failover-to (where to move)");
  if (!(o.failover_after < 0) && !(o.failover_after <= 7 * 86400))
    error("--failover-after", "at most a week");
  out.failover.to_v4 = failover.v4;
  out.failover.to_v6 = failover.v6;
  for (const auto& e : {proxy.v4, proxy.v6})
    if (e) out.failover.proxy.push_back(e->addr);
  for (const auto& a : {proxy_gateway.v4, proxy_gateway.v6})
    if (a) out.failover.proxy.push_back(*a);
  out.failover.after_s = o.failover_after;

  // A node speaks its own family only: the proxy must have an address there.
  if (!o.proxy.empty()) {
    for (const IpAddress& a : access)
      if (!proxy.of(a))
        error(access_option, addressToString(a) + " is " + familyName(a) +
                                 " and --proxy has no " + familyName(a) + " address");
    const std::string gateway_side = o.proxy_gateway.empty() ? "--proxy" : "--proxy-gateway";
    for (const IpAddress& a : gateways)
      if (!o.relay && !proxy_gateway.of(a))
        error(gateway_option, addressToString(a) + " is " + familyName(a) +
                                  " and the proxy's gateway side (" + gateway_side + ") has no " +
                                  familyName(a) + " address");
  }

  // Subscribers.
  Identities ids;
  ids.count = o.subscribers;
  if (o.subscribers == 0 || o.subscribers > 50'000'000)
    error("--subscribers", "must be between 1 and 50000000");
  if (o.imsi_start.size() < 6 || o.imsi_start.size() > 15 ||
      !digitsValue(o.imsi_start, ids.imsi_start)) {
    error("--imsi-start", "must be 6 to 15 digits");
  } else {
    ids.imsi_digits = static_cast<uint8_t>(o.imsi_start.size());
    if (toDigits(ids.imsi_start + std::max<uint32_t>(o.subscribers, 1) - 1, ids.imsi_digits).size == 0)
      error("--imsi-start", "the range of --subscribers IMSIs overflows " +
                                std::to_string(ids.imsi_digits) + " digits");
  }
  if (o.msisdn_start.size() < 5 || o.msisdn_start.size() > 15 ||
      !digitsValue(o.msisdn_start, ids.msisdn_start)) {
    error("--msisdn-start", "must be 5 to 15 digits");
  } else {
    ids.msisdn_digits = static_cast<uint8_t>(o.msisdn_start.size());
    if (toDigits(ids.msisdn_start + std::max<uint32_t>(o.subscribers, 1) - 1, ids.msisdn_digits).size == 0)
      error("--msisdn-start", "the range of --subscribers MSISDNs overflows its digits");
  }
  if (o.plmn.size() != 5 && o.plmn.size() != 6) {
    error("--plmn", "must be MCC+MNC, 5 or 6 digits");
  } else {
    auto p = gtp::makePlmn(std::string_view(o.plmn).substr(0, 3), std::string_view(o.plmn).substr(3));
    if (!p)
      error("--plmn", "'" + o.plmn + "' is not MCC+MNC digits");
    else
      ids.plmn = *p;
  }
  if (o.apn.empty()) error("--apn", "give at least one APN");
  for (const auto& apn : o.apn) {
    std::array<uint8_t, gtp::kMaxApnOctets + 1> buf{};
    if (apn.empty() || !gtp::encodeApn(apn, buf)) error("--apn", "'" + apn + "' is not a valid APN");
  }

  // Load.
  if (o.mode == modeName(RunMode::kLifecycle))
    out.mode = RunMode::kLifecycle;
  else if (o.mode == modeName(RunMode::kModifyOnly))
    out.mode = RunMode::kModifyOnly;
  else if (o.mode == modeName(RunMode::kHold))
    out.mode = RunMode::kHold;
  else
    error("--mode", "must be lifecycle, modify-only or hold");
  if (!(o.rate > 0) || o.rate > 10'000'000) error("--rate", "must be > 0 and <= 10000000");
  if (o.setup_rate < 0 || o.setup_rate > 10'000'000) error("--setup-rate", "must be >= 0 and <= 10000000");
  out.rate = o.rate;
  out.setup_rate = o.setup_rate > 0 ? o.setup_rate : o.rate;
  if (o.duration < 0) {
    out.duration_s = access_role ? 10 : 0;
  } else {
    out.duration_s = o.duration;
    // Modify-only with no window: attach and detach alone (the benchmark's
    // calibration of what they cost).
    if (access_role && o.duration == 0 && out.mode != RunMode::kModifyOnly)
      error("--duration", "must be > 0 with " + access_option + " (0 only with --mode modify-only)");
    if (o.duration > 7 * 86400) error("--duration", "at most a week");
  }
  if (o.t3_ms == 0 || o.t3_ms > 600'000) error("--t3-ms", "must be between 1 and 600000");
  if (o.n3 > 20) error("--n3", "at most 20");
  if (o.modify > 60000) error("--modify", "at most 60000");
  if (o.recovery > 255) error("--recovery", "must be 0..255");
  out.t3_ns = int64_t{o.t3_ms} * 1'000'000;
  out.n3 = o.n3;

  // Per-gateway behaviour: --pgw-* (v2) or --ggsn-* (v1). Rejections are
  // causes 64.. in GTPv2 (TS 29.274 Table 8.4-1), 192.. in GTPv1 (TS 29.060
  // Table 38).
  const unsigned first_rejection = v1 ? 192 : 64;
  const std::string rejections = v1 ? "192..255" : "64..255";
  const auto& cause_texts = v1 ? o.ggsn_cause : o.pgw_cause;
  const auto& delay_texts = v1 ? o.ggsn_delay_ms : o.pgw_delay_ms;
  const auto& drop_texts = v1 ? o.ggsn_drop : o.pgw_drop;
  const std::string cause_option = gateway_option + "-cause";
  const std::string delay_option = gateway_option + "-delay-ms";
  const std::string drop_option = gateway_option + "-drop";
  std::vector<uint8_t> causes(gateways.size(), 0);
  std::vector<int64_t> delays(gateways.size(), 0);
  std::vector<double> drops(gateways.size(), 0);
  std::bitset<256> expected;
  // "ADDR=VALUE" naming one of the gateways: its index, and the value text.
  auto gatewayAssignment = [&](const std::string& option, const std::string& text,
                               const std::string& what, std::string& value) {
    IpAddress a;
    int node = -1;
    if (!splitAssignment(text, a, value))
      error(option, "'" + text + "' is not ADDR=" + what);
    else if ((node = indexOf(gateways, a)) < 0)
      error(option, addressToString(a) + " is not a " + gateway_option + " address");
    return node;
  };
  for (const auto& text : cause_texts) {
    std::string v;
    uint64_t c = 0;
    const int node = gatewayAssignment(cause_option, text, "CAUSE", v);
    if (node < 0) continue;
    if (!parseUnsigned(v, c)) {
      error(cause_option, "'" + text + "' is not ADDR=CAUSE");
    } else if (c < first_rejection || c > 255) {
      error(cause_option, "cause " + v + " is not a rejection (" + rejections + ")");
    } else {
      causes[static_cast<std::size_t>(node)] = static_cast<uint8_t>(c);
      expected.set(c);
    }
  }
  for (const auto& text : delay_texts) {
    std::string v;
    double ms = 0;
    const int node = gatewayAssignment(delay_option, text, "MS", v);
    if (node < 0) continue;
    if (!parseDouble(v, ms))
      error(delay_option, "'" + text + "' is not ADDR=MS");
    else if (ms < 0 || ms > 60000)
      error(delay_option, "must be 0..60000 ms");
    else
      delays[static_cast<std::size_t>(node)] = static_cast<int64_t>(ms * 1e6);
  }
  for (const auto& text : drop_texts) {
    std::string v;
    double f = 0;
    const int node = gatewayAssignment(drop_option, text, "FRACTION", v);
    if (node < 0) continue;
    if (!parseDouble(v, f))
      error(drop_option, "'" + text + "' is not ADDR=FRACTION");
    else if (f < 0 || f >= 1)
      error(drop_option, "the fraction must be in [0, 1)");
    else
      drops[static_cast<std::size_t>(node)] = f;
  }
  for (unsigned c : o.expect_cause) {
    if (c < first_rejection || c > 255)
      error("--expect-cause", std::to_string(c) + " is not a rejection cause (" + rejections + ")");
    else
      expected.set(c);
  }
  // The proxy itself may reject when it cannot take more (DESIGN.md: cause 73
  // from a full ring); that is only expected when asked for.

  // More procedures. gtpcp-relay carries the SGWs' requests and their
  // answers only: a PGW's own requests, and answers to a TEID nobody gave,
  // need a proxy.
  if (o.piggyback && !o.dedicated_bearer)
    error("--piggyback", "needs --dedicated-bearer (its Create Bearer Request is what rides along)");
  if (o.piggyback && !out.pgw_role) error("--piggyback", "the PGWs piggyback: give it with --pgw");
  if (o.relay && (o.dedicated_bearer || o.commands || o.unknown_teid != 0))
    error("--relay", "--dedicated-bearer, --commands and --unknown-teid need a proxy");
  if (o.unknown_teid != 0 && !out.sgw_role) error("--unknown-teid", "the SGWs probe: give it with --sgw");
  if (o.unknown_teid > 1'000'000) error("--unknown-teid", "at most 1000000");
  if (out.sgw_role && out.mode != RunMode::kLifecycle) {
    if (o.commands) error("--commands", "--mode lifecycle only");
    if (o.unknown_teid != 0) error("--unknown-teid", "--mode lifecycle only");
  }

  // Options of one version only.
  if (v1) {
    const std::pair<bool, const char*> v2_only[] = {
        {o.dedicated_bearer, "--dedicated-bearer"}, {o.piggyback, "--piggyback"},
        {o.commands, "--commands"},                 {o.unknown_teid != 0, "--unknown-teid"},
        {o.sgw_port_base != 0, "--sgw-port-base"},  {!o.pgw_cause.empty(), "--pgw-cause"},
        {!o.pgw_delay_ms.empty(), "--pgw-delay-ms"}, {!o.pgw_drop.empty(), "--pgw-drop"},
        {o.pgw_sessions != 0, "--pgw-sessions"}};
    for (const auto& [given, option] : v2_only)
      if (given) error(option, "GTPv2 runs only (--sgw, --pgw)");
  } else {
    const std::pair<bool, const char*> v1_only[] = {
        {o.secondary != 0, "--secondary"},
        {o.network_initiated != 0, "--network-initiated"},
        {o.user_plane_proxied, "--user-plane-proxied"},
        {!o.ggsn_cause.empty(), "--ggsn-cause"},
        {!o.ggsn_delay_ms.empty(), "--ggsn-delay-ms"},
        {!o.ggsn_drop.empty(), "--ggsn-drop"},
        {o.ggsn_sessions != 0, "--ggsn-sessions"}};
    for (const auto& [given, option] : v1_only)
      if (given) error(option, "GTPv1 runs only (--sgsn, --ggsn)");
  }
  if (out.sgsn_role && out.mode != RunMode::kLifecycle && o.secondary != 0)
    error("--secondary", "--mode lifecycle only");
  if (o.secondary > kMaxSecondaries)
    error("--secondary", "at most " + std::to_string(kMaxSecondaries) + " (NSAPIs 6 to 15)");
  if (!(o.network_initiated >= 0 && o.network_initiated <= 1))
    error("--network-initiated", "a fraction of the sessions, 0 to 1");

  out.seed = o.seed != 0 ? o.seed
                         : static_cast<uint64_t>(::time(nullptr)) * 0x9e3779b97f4a7c15ull ^
                               static_cast<uint64_t>(::getpid());
  out.progress = o.progress;
  out.json_path = o.json;
  if (o.rcvbuf < 4096 || o.sndbuf < 4096) error("--rcvbuf/--sndbuf", "at least 4096");
  out.rcvbuf = o.rcvbuf;
  out.sndbuf = o.sndbuf;

  // Engine configurations. Socket indices: the access nodes first, then the
  // gateways. The session tables hold every subscriber twice (a replaced
  // session stays for its repeats) unless told otherwise.
  const uint32_t table = v1 ? o.ggsn_sessions : o.pgw_sessions;
  const uint64_t capacity = table != 0 ? table : uint64_t{o.subscribers} * 2 + 1024;
  if (capacity > PgwEngine::kMaxCapacity)
    error(gateway_option + "-sessions", "at most " + std::to_string(PgwEngine::kMaxCapacity));
  const auto capped = static_cast<uint32_t>(std::min<uint64_t>(capacity, PgwEngine::kMaxCapacity));
  // Drops are reproducible from run to run unless --seed says otherwise.
  const uint64_t drop_seed = o.seed != 0 ? o.seed : 0x5eedull;
  const auto access_sequence = static_cast<uint32_t>(out.seed >> 20) & (kCommandBit - 1);
  const auto gateway_sequence = static_cast<uint32_t>(out.seed >> 40) & (kCommandBit - 1);
  auto accessCommon = [&](AccessConfig& a) {
    a.relay = o.relay;
    a.ids = ids;
    a.apns = o.apn;
    a.modifies = o.modify;
    a.cycles = o.cycles;
    a.t3_ns = out.t3_ns;
    a.n3 = o.n3;
    a.same_sequence = o.same_sequence;
    a.expected_rejections = expected;
    a.recovery = static_cast<uint8_t>(o.recovery);
    a.allow_non_loopback = o.allow_non_loopback;
  };
  auto gatewayCommon = [&](GatewayConfig& g) {
    for (std::size_t i = 0; i < gateways.size(); ++i) {
      GatewayNodeConfig n;
      n.addr = gateways[i];
      n.proxy_gateway = proxy_gateway.of(gateways[i]).value_or(IpAddress{});
      n.failover_gateway = failover.of(gateways[i]);
      n.socket = static_cast<uint32_t>(access.size() + i);
      n.reject_cause = causes[i];
      n.delay_ns = delays[i];
      n.drop = drops[i];
      g.nodes.push_back(n);
    }
    g.relay = o.relay;
    g.ids = ids;
    g.capacity = capped;
    g.recovery = static_cast<uint8_t>(o.recovery);
    g.seed = drop_seed;
    g.t3_ns = out.t3_ns;
    g.n3 = o.n3;
  };
  if (v1) {
    SgsnConfig& s = out.sgsn;
    accessCommon(s);
    for (std::size_t i = 0; i < sgsns.size(); ++i)
      s.nodes.push_back(SgsnNodeConfig{sgsns[i], static_cast<uint32_t>(i),
                                       proxy.of(sgsns[i]).value_or(Endpoint{})});
    s.user_plane_proxied = o.user_plane_proxied;
    s.secondaries = o.secondary;
    s.network_initiated = o.network_initiated;
    s.sequence_seed = access_sequence & 0xffff;
    s.local_ggsns = ggsns;

    GgsnConfig& g = out.ggsn;
    gatewayCommon(g);
    g.user_plane_proxied = o.user_plane_proxied;
    g.sequence_seed = gateway_sequence & 0xffff;
    g.modifies = o.modify;
    g.secondaries = o.secondary;
    g.network_initiated = o.network_initiated;
    g.network_deletes = out.mode == RunMode::kLifecycle;
    return errors;
  }

  SgwConfig& s = out.sgw;
  accessCommon(s);
  for (std::size_t i = 0; i < sgws.size(); ++i)
    s.nodes.push_back(SgwNodeConfig{sgws[i], static_cast<uint32_t>(i),
                                    proxy.of(sgws[i]).value_or(Endpoint{}),
                                    failover.of(sgws[i])});
  s.sequence_seed = access_sequence;
  s.local_pgws = pgws;
  s.local_pgw_causes = causes;
  s.dedicated_bearer = o.dedicated_bearer;
  s.commands = o.commands;
  s.unknown_teid = o.unknown_teid;
  // The probed TEIDs are the same from run to run unless --seed says otherwise.
  s.probe_seed = o.seed != 0 ? o.seed : 0x7e1dull;

  PgwConfig& p = out.pgw;
  gatewayCommon(p);
  p.dedicated_bearer = o.dedicated_bearer;
  p.piggyback = o.piggyback;
  p.commands = o.commands;
  p.sequence_seed = gateway_sequence;
  return errors;
}

}  // namespace gtpcp::peer
