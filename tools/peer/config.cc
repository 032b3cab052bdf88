#include "tools/peer/config.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

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
  if (o.sgw.empty() && o.pgw.empty()) error("--sgw/--pgw", "give at least one SGW or PGW address");
  if (sgws.size() > 250) error("--sgw", "at most 250 SGWs");
  if (pgws.size() > 250) error("--pgw", "at most 250 PGWs");
  out.sgw_role = !o.sgw.empty();
  out.pgw_role = !o.pgw.empty();
  if (o.sgw_port_base < 0 || o.sgw_port_base + static_cast<int>(sgws.size()) > 65536)
    error("--sgw-port-base", "out of range");
  for (std::size_t i = 0; i < sgws.size(); ++i) {
    const uint16_t port = o.sgw_port_base > 0 ? static_cast<uint16_t>(o.sgw_port_base + i) : kGtpcPort;
    out.sgw_binds.push_back(Endpoint{sgws[i], port});
    if (port == kGtpcPort && indexOf(pgws, sgws[i]) >= 0)
      error("--sgw", addressToString(sgws[i]) + " is also a PGW on the same port");
  }
  for (const IpAddress& a : pgws) out.pgw_binds.push_back(Endpoint{a, kGtpcPort});

  // The proxy: an address per family it serves.
  PerFamily<Endpoint> proxy;
  const bool need_proxy = out.sgw_role || (out.pgw_role && !o.relay);
  if (o.proxy.empty() && need_proxy)
    error("--proxy", out.sgw_role ? "required with --sgw"
                                  : "required with --pgw unless --relay (the F-TEID checks name it)");
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
    else if (indexOf(sgws, a) >= 0 || indexOf(pgws, a) >= 0)
      error("--failover-to", text + " is an emulated node's address");
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
    for (const IpAddress& a : sgws)
      if (!proxy.of(a))
        error("--sgw", addressToString(a) + " is " + familyName(a) + " and --proxy has no " +
                           familyName(a) + " address");
    const std::string gateway_side = o.proxy_gateway.empty() ? "--proxy" : "--proxy-gateway";
    for (const IpAddress& a : pgws)
      if (!o.relay && !proxy_gateway.of(a))
        error("--pgw", addressToString(a) + " is " + familyName(a) +
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
    out.duration_s = out.sgw_role ? 10 : 0;
  } else {
    out.duration_s = o.duration;
    // Modify-only with no window: attach and detach alone (the benchmark's
    // calibration of what they cost).
    if (out.sgw_role && o.duration == 0 && out.mode != RunMode::kModifyOnly)
      error("--duration", "must be > 0 with --sgw (0 only with --mode modify-only)");
    if (o.duration > 7 * 86400) error("--duration", "at most a week");
  }
  if (o.t3_ms == 0 || o.t3_ms > 600'000) error("--t3-ms", "must be between 1 and 600000");
  if (o.n3 > 20) error("--n3", "at most 20");
  if (o.modify > 60000) error("--modify", "at most 60000");
  if (o.recovery > 255) error("--recovery", "must be 0..255");
  out.t3_ns = int64_t{o.t3_ms} * 1'000'000;
  out.n3 = o.n3;

  // Per-PGW behaviour.
  std::vector<uint8_t> causes(pgws.size(), 0);
  std::vector<int64_t> delays(pgws.size(), 0);
  std::vector<double> drops(pgws.size(), 0);
  std::bitset<256> expected;
  for (const auto& text : o.pgw_cause) {
    IpAddress a;
    std::string v;
    uint64_t c = 0;
    int node = -1;  // of the --pgw named
    if (!splitAssignment(text, a, v) || !parseUnsigned(v, c)) {
      error("--pgw-cause", "'" + text + "' is not ADDR=CAUSE");
    } else if ((node = indexOf(pgws, a)) < 0) {
      error("--pgw-cause", addressToString(a) + " is not a --pgw address");
    } else if (c < 64 || c > 255) {
      error("--pgw-cause", "cause " + v + " is not a rejection (64..255)");
    } else {
      causes[static_cast<std::size_t>(node)] = static_cast<uint8_t>(c);
      expected.set(c);
    }
  }
  for (const auto& text : o.pgw_delay_ms) {
    IpAddress a;
    std::string v;
    double ms = 0;
    int node = -1;  // of the --pgw named
    if (!splitAssignment(text, a, v) || !parseDouble(v, ms)) {
      error("--pgw-delay-ms", "'" + text + "' is not ADDR=MS");
    } else if ((node = indexOf(pgws, a)) < 0) {
      error("--pgw-delay-ms", addressToString(a) + " is not a --pgw address");
    } else if (ms < 0 || ms > 60000) {
      error("--pgw-delay-ms", "must be 0..60000 ms");
    } else {
      delays[static_cast<std::size_t>(node)] = static_cast<int64_t>(ms * 1e6);
    }
  }
  for (const auto& text : o.pgw_drop) {
    IpAddress a;
    std::string v;
    double f = 0;
    int node = -1;  // of the --pgw named
    if (!splitAssignment(text, a, v) || !parseDouble(v, f)) {
      error("--pgw-drop", "'" + text + "' is not ADDR=FRACTION");
    } else if ((node = indexOf(pgws, a)) < 0) {
      error("--pgw-drop", addressToString(a) + " is not a --pgw address");
    } else if (f < 0 || f >= 1) {
      error("--pgw-drop", "the fraction must be in [0, 1)");
    } else {
      drops[static_cast<std::size_t>(node)] = f;
    }
  }
  for (unsigned c : o.expect_cause) {
    if (c < 64 || c > 255)
      error("--expect-cause", std::to_string(c) + " is not a rejection cause (64..255)");
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

  out.seed = o.seed != 0 ? o.seed
                         : static_cast<uint64_t>(::time(nullptr)) * 0x9e3779b97f4a7c15ull ^
                               static_cast<uint64_t>(::getpid());
  out.progress = o.progress;
  out.json_path = o.json;
  if (o.rcvbuf < 4096 || o.sndbuf < 4096) error("--rcvbuf/--sndbuf", "at least 4096");
  out.rcvbuf = o.rcvbuf;
  out.sndbuf = o.sndbuf;

  // Engine configurations. Socket indices: SGWs first, then PGWs.
  SgwConfig& s = out.sgw;
  for (std::size_t i = 0; i < sgws.size(); ++i)
    s.nodes.push_back(SgwNodeConfig{sgws[i], static_cast<uint32_t>(i),
                                    proxy.of(sgws[i]).value_or(Endpoint{}),
                                    failover.of(sgws[i])});
  s.relay = o.relay;
  s.ids = ids;
  s.apns = o.apn;
  s.modifies = o.modify;
  s.cycles = o.cycles;
  s.t3_ns = out.t3_ns;
  s.n3 = o.n3;
  s.same_sequence = o.same_sequence;
  s.sequence_seed = static_cast<uint32_t>(out.seed >> 20) & 0x7fffff;
  s.expected_rejections = expected;
  s.local_pgws = pgws;
  s.local_pgw_causes = causes;
  s.recovery = static_cast<uint8_t>(o.recovery);
  s.allow_non_loopback = o.allow_non_loopback;
  s.dedicated_bearer = o.dedicated_bearer;
  s.commands = o.commands;
  s.unknown_teid = o.unknown_teid;
  // The probed TEIDs are the same from run to run unless --seed says otherwise.
  s.probe_seed = o.seed != 0 ? o.seed : 0x7e1dull;

  PgwConfig& p = out.pgw;
  for (std::size_t i = 0; i < pgws.size(); ++i) {
    PgwNodeConfig n;
    n.addr = pgws[i];
    n.proxy_gateway = proxy_gateway.of(pgws[i]).value_or(IpAddress{});
    n.failover_gateway = failover.of(pgws[i]);
    n.socket = static_cast<uint32_t>(sgws.size() + i);
    n.reject_cause = causes[i];
    n.delay_ns = delays[i];
    n.drop = drops[i];
    p.nodes.push_back(n);
  }
  p.relay = o.relay;
  p.ids = ids;
  const uint64_t capacity =
      o.pgw_sessions != 0 ? o.pgw_sessions : uint64_t{o.subscribers} * 2 + 1024;
  if (capacity > PgwEngine::kMaxCapacity)
    error("--pgw-sessions", "at most " + std::to_string(PgwEngine::kMaxCapacity));
  p.capacity = static_cast<uint32_t>(std::min<uint64_t>(capacity, PgwEngine::kMaxCapacity));
  p.recovery = static_cast<uint8_t>(o.recovery);
  // Drops are reproducible from run to run unless --seed says otherwise.
  p.seed = o.seed != 0 ? o.seed : 0x5eedull;
  p.t3_ns = out.t3_ns;
  p.n3 = o.n3;
  p.dedicated_bearer = o.dedicated_bearer;
  p.piggyback = o.piggyback;
  p.commands = o.commands;
  p.sequence_seed = static_cast<uint32_t>(out.seed >> 40) & (kCommandBit - 1);
  return errors;
}

}  // namespace gtpcp::peer
