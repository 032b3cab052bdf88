#include "frr_plan.h"

#include <arpa/inet.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace gtpcp::bridge {

namespace {

constexpr uint32_t kFrrBfdDefaultIntervalMs = 300;  // FRR omits defaults from its running configuration
constexpr uint32_t kFrrBfdDefaultMultiplier = 3;

uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}


bool startsWith(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

std::string bgpHeader(const FrrSettings& s) { return "router bgp " + std::to_string(s.local_as); }
std::string prefixList(const FrrSettings& s, bool v6) { return objectName(s) + (v6 ? "-v6" : ""); }
std::string routeMap(const FrrSettings& s, group::BgpPreference p) {
  return objectName(s) + (p == group::BgpPreference::kStandby ? "-standby" : "-active");
}
std::string outMap(const FrrSettings& s) { return objectName(s) + "-out"; }
std::string bfdProfile(const FrrSettings& s) { return "profile " + objectName(s); }
std::string af(bool v6) { return v6 ? "address-family ipv6 unicast" : "address-family ipv4 unicast"; }

bool isHeader(const std::string& line) {
  return startsWith(line, "route-map ") || startsWith(line, "router bgp ") || startsWith(line, "address-family ") ||
         line == "bfd" || startsWith(line, "profile ");
}

// What identifies a line apart from its value: a desired line with the same
// key replaces a running one, so the old one needs no removal first.
std::string keyOf(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  const auto first = [&](std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < std::min(n, w.size()); ++i) out += (i ? " " : "") + w[i];
    return out;
  };
  if (w.empty()) return line;
  if (w[0] == "network") return first(2);
  if (w[0] == "ip" && w.size() > 1 && w[1] == "route") return first(4);
  if (w[0] == "ipv6" && w.size() > 1 && w[1] == "route") return first(4);
  if (w[0] == "bgp" && w.size() > 1 && w[1] == "router-id") return first(2);
  if (w[0] == "neighbor" && w.size() > 2) {
    if (w[2] == "remote-as" || w[2] == "password" || w[2] == "bfd") return first(3);
    if (w[2] == "route-map" && w.size() > 4) return first(3) + " " + w[4];
  }
  if (w[0] == "set" && w.size() > 1) return w[1] == "as-path" ? first(3) : first(2);
  if (w[0] == "transmit-interval" || w[0] == "receive-interval" || w[0] == "detect-multiplier") return w[0];
  return line;
}

// The command that removes a running line.
std::string removal(const std::string& line) {
  if (startsWith(line, "network ")) return "no " + keyOf(line);
  if (startsWith(line, "neighbor ") && line.find(" bfd") != std::string::npos) return "no " + keyOf(line);
  return "no " + line;
}

void emit(std::vector<std::string>& out, const std::vector<std::string>& context, const std::string& command,
          bool header) {
  for (const auto& c : context) out.push_back(c);
  out.push_back(command);
  for (std::size_t i = 0; i < context.size() + (header ? 1 : 0); ++i) out.push_back("exit");
}

// Additions go in this order: objects (prefix lists, route-maps, BFD
// profile, static routes) before the BGP statements that refer to them.
int additionRank(const FrrLine& l) {
  if (!l.context.empty() && startsWith(l.context[0], "router bgp ")) return 2;
  if (l.context.empty() && startsWith(l.line, "router bgp ")) return 2;
  return 1;
}

bool neighborLine(const FrrSettings& s, const std::string& line, std::string_view what) {
  for (const auto& n : s.neighbors) {
    if (startsWith(line, "neighbor " + n.address + " " + std::string(what))) return true;
  }
  return false;
}

}  // namespace

bool isV6(const std::string& address) { return address.find(':') != std::string::npos; }
std::string prefixOf(const std::string& address) { return address + (isV6(address) ? "/128" : "/32"); }

std::string leaseInterfaceName(const std::string& group) { return fmt::format("gtpl{:08x}", fnv1a(group)); }

uint32_t routeTag(const std::string& group) { return 0x40000000u | (fnv1a("tag." + group) & 0x3fffffffu); }

std::string objectName(const FrrSettings& s) { return "gtpcp-" + s.group; }

std::vector<FrrLine> parseRunningConfig(const std::string& text) {
  struct Raw {
    std::size_t indent;
    std::string text;
  };
  std::vector<Raw> raw;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string t = line.substr(start);
    while (!t.empty() && t.back() == ' ') t.pop_back();
    if (t.empty() || t[0] == '!' || t == "exit" || t == "end" || startsWith(t, "exit-") ||
        startsWith(t, "Building configuration") || startsWith(t, "Current configuration"))
      continue;
    raw.push_back({start, std::move(t)});
  }
  std::vector<FrrLine> out;
  std::vector<Raw> stack;
  for (const Raw& r : raw) {
    while (!stack.empty() && stack.back().indent >= r.indent) stack.pop_back();
    FrrLine l;
    for (const auto& s : stack) l.context.push_back(s.text);
    l.line = r.text;
    out.push_back(std::move(l));
    stack.push_back(r);
  }
  return out;
}

std::vector<FrrLine> desiredLines(const FrrSettings& s, const FrrIntent& intent) {
  std::vector<FrrLine> out;
  const auto add = [&out](std::vector<std::string> ctx, std::string line) { out.push_back({std::move(ctx), std::move(line)}); };
  bool any_v4 = false, any_v6 = false;
  int seq4 = 5, seq6 = 5;
  for (const auto& a : s.service_addresses) {
    const bool v6 = isV6(a);
    (v6 ? any_v6 : any_v4) = true;
    add({}, fmt::format("{} prefix-list {} seq {} permit {}", v6 ? "ipv6" : "ip", prefixList(s, v6), v6 ? seq6 : seq4,
                        prefixOf(a)));
    (v6 ? seq6 : seq4) += 5;
    add({}, fmt::format("{} route {} {} tag {}", v6 ? "ipv6" : "ip", prefixOf(a), s.lease_interface, routeTag(s.group)));
  }
  const std::string active = "route-map " + routeMap(s, group::BgpPreference::kActive) + " permit 10";
  const std::string standby = "route-map " + routeMap(s, group::BgpPreference::kStandby) + " permit 10";
  add({}, active);
  add({}, standby);
  if (s.standby_prepend > 0) {
    std::string prepend = "set as-path prepend";
    for (uint32_t i = 0; i < s.standby_prepend; ++i) prepend += " " + std::to_string(s.local_as);
    add({standby}, prepend);
  }
  add({standby}, "set metric " + std::to_string(s.standby_med));
  if (any_v4) {
    const std::string h = "route-map " + outMap(s) + " permit 10";
    add({}, h);
    add({h}, "match ip address prefix-list " + prefixList(s, false));
  }
  if (any_v6) {
    const std::string h = "route-map " + outMap(s) + " permit 20";
    add({}, h);
    add({h}, "match ipv6 address prefix-list " + prefixList(s, true));
  }
  if (s.bfd) {
    add({}, "bfd");
    add({"bfd"}, bfdProfile(s));
    if (s.bfd_interval_ms != kFrrBfdDefaultIntervalMs) {
      add({"bfd", bfdProfile(s)}, "transmit-interval " + std::to_string(s.bfd_interval_ms));
      add({"bfd", bfdProfile(s)}, "receive-interval " + std::to_string(s.bfd_interval_ms));
    }
    if (s.bfd_multiplier != kFrrBfdDefaultMultiplier)
      add({"bfd", bfdProfile(s)}, "detect-multiplier " + std::to_string(s.bfd_multiplier));
  }
  const std::string bgp = bgpHeader(s);
  add({}, bgp);
  if (!s.router_id.empty()) add({bgp}, "bgp router-id " + s.router_id);
  for (const auto& n : s.neighbors) {
    add({bgp}, fmt::format("neighbor {} remote-as {}", n.address, n.remote_as));
    if (!n.password.empty()) add({bgp}, fmt::format("neighbor {} password {}", n.address, n.password));
    if (s.bfd) add({bgp}, fmt::format("neighbor {} bfd profile {}", n.address, objectName(s)));
  }
  for (const bool v6 : {false, true}) {
    if (!(v6 ? any_v6 : any_v4)) continue;
    const std::vector<std::string> ctx{bgp, af(v6)};
    add({bgp}, af(v6));
    if (intent.intent == group::BgpIntent::kAnnounce) {
      for (const auto& a : s.service_addresses) {
        if (isV6(a) == v6) add(ctx, fmt::format("network {} route-map {}", prefixOf(a), routeMap(s, intent.preference)));
      }
    }
    for (const auto& n : s.neighbors) {
      if (v6 && isV6(n.address)) add(ctx, fmt::format("neighbor {} activate", n.address));
      add(ctx, fmt::format("neighbor {} route-map {} out", n.address, outMap(s)));
    }
  }
  return out;
}

bool ownedLine(const FrrSettings& s, const FrrLine& l) {
  const std::string name = objectName(s);
  if (l.context.empty()) {
    if ((startsWith(l.line, "ip route ") || startsWith(l.line, "ipv6 route ")) &&
        l.line.find(" " + s.lease_interface) != std::string::npos)
      return true;
    if (startsWith(l.line, "ip prefix-list " + name + " ") || startsWith(l.line, "ipv6 prefix-list " + name + "-v6 "))
      return true;
    return startsWith(l.line, "route-map " + name + "-");
  }
  if (startsWith(l.context[0], "route-map " + name + "-")) return true;
  if (l.context[0] == "bfd") return l.context.size() == 1 ? l.line == bfdProfile(s) : l.context[1] == bfdProfile(s);
  if (l.context[0] != bgpHeader(s)) return false;
  if (l.context.size() == 1) {
    if (startsWith(l.line, "bgp router-id ")) return !s.router_id.empty();
    return neighborLine(s, l.line, "remote-as") || neighborLine(s, l.line, "password") ||
           neighborLine(s, l.line, "bfd");
  }
  if (startsWith(l.line, "network ")) {
    // Ours by its route-map, whatever the address: one that left
    // bgp.service_addresses is withdrawn too.
    if (l.line.find(" route-map " + name + "-") != std::string::npos) return true;
    for (const auto& a : s.service_addresses) {
      if (startsWith(l.line, "network " + prefixOf(a) + " ") || l.line == "network " + prefixOf(a)) return true;
    }
    return false;
  }
  return neighborLine(s, l.line, "route-map " + outMap(s) + " out") || neighborLine(s, l.line, "activate");
}

std::vector<std::string> reconcileCommands(const FrrSettings& s, const std::vector<FrrLine>& running,
                                           const std::vector<FrrLine>& desired) {
  std::vector<std::string> out;
  std::set<std::pair<std::vector<std::string>, std::string>> have, want_keys;
  for (const auto& l : running) have.insert({l.context, l.line});
  for (const auto& l : desired) want_keys.insert({l.context, keyOf(l.line)});
  std::vector<const FrrLine*> additions;
  for (const auto& l : desired) {
    if (!have.count({l.context, l.line})) additions.push_back(&l);
  }
  std::stable_sort(additions.begin(), additions.end(),
                   [](const FrrLine* a, const FrrLine* b) { return additionRank(*a) < additionRank(*b); });
  for (const FrrLine* l : additions) emit(out, l->context, l->line, isHeader(l->line));

  std::set<std::pair<std::vector<std::string>, std::string>> want;
  for (const auto& l : desired) want.insert({l.context, l.line});
  std::vector<const FrrLine*> removals;
  for (const auto& l : running) {
    if (!ownedLine(s, l) || want.count({l.context, l.line})) continue;
    if (want_keys.count({l.context, keyOf(l.line)})) continue;  // replaced by an addition
    // A line inside a block that goes as a whole goes with it.
    bool inside_removed = false;
    for (const FrrLine* r : removals) {
      std::vector<std::string> path = r->context;
      path.push_back(r->line);
      if (l.context.size() >= path.size() && std::equal(path.begin(), path.end(), l.context.begin()))
        inside_removed = true;
    }
    if (!inside_removed) removals.push_back(&l);
  }
  // Statements first (they refer to objects), objects last.
  std::stable_sort(removals.begin(), removals.end(),
                   [](const FrrLine* a, const FrrLine* b) { return additionRank(*a) > additionRank(*b); });
  for (const FrrLine* l : removals) emit(out, l->context, removal(l->line), false);
  return out;
}

std::vector<FrrLine> linesOf(const std::vector<FrrLine>& lines, const std::string& daemon) {
  std::vector<FrrLine> out;
  for (const auto& l : lines) {
    const std::string& top = l.context.empty() ? l.line : l.context[0];
    const char* owner = (startsWith(top, "ip route ") || startsWith(top, "ipv6 route ")) ? "staticd"
                        : top == "bfd"                                                   ? "bfdd"
                        : (startsWith(top, "ip prefix-list ") || startsWith(top, "ipv6 prefix-list ") ||
                           startsWith(top, "route-map ") || startsWith(top, "router bgp "))
                            ? "bgpd"
                            : "";
    if (daemon == owner) out.push_back(l);
  }
  return out;
}

std::vector<std::string> intentCommands(const FrrSettings& s, const FrrIntent& from, const FrrIntent& to) {
  std::vector<std::string> out;
  if (from == to) return out;
  const std::string bgp = bgpHeader(s);
  for (const bool v6 : {false, true}) {
    std::vector<std::string> lines;
    for (const auto& a : s.service_addresses) {
      if (isV6(a) != v6) continue;
      if (to.intent == group::BgpIntent::kAnnounce)
        lines.push_back(fmt::format("network {} route-map {}", prefixOf(a), routeMap(s, to.preference)));
      else if (from.intent == group::BgpIntent::kAnnounce)
        lines.push_back("no network " + prefixOf(a));
    }
    if (lines.empty()) continue;
    out.push_back(bgp);
    out.push_back(af(v6));
    for (auto& l : lines) out.push_back(std::move(l));
    out.push_back("exit");
    out.push_back("exit");
  }
  return out;
}

std::vector<std::string> conflicts(const FrrSettings& s, const std::vector<FrrLine>& running) {
  std::vector<std::string> out;
  for (const auto& l : running) {
    if (l.context.empty() && startsWith(l.line, "router bgp ") && l.line != bgpHeader(s) &&
        l.line.find(" vrf ") == std::string::npos)
      out.push_back("FRR runs " + l.line + ", but bgp.local_as is " + std::to_string(s.local_as));
    if (!l.context.empty() && l.context[0] == bgpHeader(s) && l.line == "no bgp network import-check")
      out.push_back("FRR has 'no bgp network import-check': the announcement would outlive the bridge");
  }
  return out;
}

}  // namespace gtpcp::bridge
