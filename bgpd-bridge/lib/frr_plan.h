// What the bridge wants FRR to hold for its group, read back from FRR's
// running configuration, and the vtysh commands between the two.
//
// The bridge owns only these objects (named for the group, never anything
// else of the host's FRR):
//
//   ip route S/32 LEASE tag T          the service address routed to the
//   ipv6 route S/128 LEASE tag T       bridge's lease interface: it exists
//                                      while the bridge lives (lease_link.h)
//   ip prefix-list gtpcp-G ...         the service addresses, and the out
//   route-map gtpcp-G-out              policy that lets only them out
//   route-map gtpcp-G-active           the role's preference: nothing set,
//   route-map gtpcp-G-standby          or MED and AS-path prepend
//   bfd / profile gtpcp-G              the BFD timers
//   router bgp AS: the configured neighbours' remote-as, password, BFD
//   profile and out policy, and `network S route-map gtpcp-G-ROLE` while
//   announced
//
// The announcement is a `network` statement, which bgpd's import check
// announces only while the service address is in zebra's table: through the
// static route over the lease interface, which vanishes with the bridge.
// Switching preference points the statement at the other route-map; the
// route-maps themselves never change after creation, so bgpd's route-map
// delay timer (5 s) never holds a change back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/group/bgp_shm.h"

namespace gtpcp::bridge {

struct FrrNeighbor {
  std::string address;
  uint32_t remote_as = 0;
  std::string password;
};

struct FrrSettings {
  std::string group;                 // the objects are named gtpcp-<group>...
  std::string lease_interface;       // leaseInterfaceName(group)
  uint32_t local_as = 0;
  std::string router_id;             // empty: FRR chooses
  std::vector<FrrNeighbor> neighbors;
  std::vector<std::string> service_addresses;  // literals
  uint32_t standby_med = 200;
  uint32_t standby_prepend = 3;
  bool bfd = true;
  uint32_t bfd_interval_ms = 300;
  uint32_t bfd_multiplier = 3;
};

// "gtpl" and eight hex digits of the group's name: short enough for an
// interface name (15 characters), distinct per group on one host.
std::string leaseInterfaceName(const std::string& group);
// The tag of the group's static routes.
uint32_t routeTag(const std::string& group);
std::string objectName(const FrrSettings& s);  // "gtpcp-<group>"
bool isV6(const std::string& address);
std::string prefixOf(const std::string& address);  // "10.99.0.1/32", "2001:db8::1/128"

// The route FRR should announce now.
struct FrrIntent {
  group::BgpIntent intent = group::BgpIntent::kWithdraw;
  group::BgpPreference preference = group::BgpPreference::kActive;
  friend bool operator==(const FrrIntent&, const FrrIntent&) = default;
};

// One line of FRR configuration within its context: `context` are the block
// lines that lead to it ("router bgp 65001", "address-family ipv4 unicast").
struct FrrLine {
  std::vector<std::string> context;
  std::string line;
  friend bool operator==(const FrrLine&, const FrrLine&) = default;
};

// The running configuration as lines in their context (comments, "!" and
// the exit lines dropped; a block header is a line of its own context).
std::vector<FrrLine> parseRunningConfig(const std::string& text);

// Everything the group's objects consist of for `intent`.
std::vector<FrrLine> desiredLines(const FrrSettings& s, const FrrIntent& intent);

// Whether a running line belongs to the group's objects (and so is removed
// when not desired). Lines of the configured neighbours that the bridge does
// not set (timers, descriptions) are the operator's.
bool ownedLine(const FrrSettings& s, const FrrLine& line);

// The commands (within `configure terminal`) that turn `running` into
// `desired` for the owned lines: additions first, objects before the BGP
// statements that refer to them; removals of statements before removals of
// objects. Empty when FRR already holds what is wanted.
std::vector<std::string> reconcileCommands(const FrrSettings& s, const std::vector<FrrLine>& running,
                                           const std::vector<FrrLine>& desired);

// The daemons whose configuration holds the group's objects, in the order
// they are given: staticd (the static routes), bfdd (the BFD profile), bgpd
// (prefix lists, route-maps, the BGP statements).
inline constexpr const char* kFrrDaemons[] = {"staticd", "bfdd", "bgpd"};
// The lines of `lines` that daemon `daemon` keeps.
std::vector<FrrLine> linesOf(const std::vector<FrrLine>& lines, const std::string& daemon);

// The fast path of a decision: only the network statements, from a known
// `from` state to `to`.
std::vector<std::string> intentCommands(const FrrSettings& s, const FrrIntent& from, const FrrIntent& to);

// Problems of the host's FRR that would break the announcement (another
// BGP instance's AS, the import check turned off), as operator messages.
std::vector<std::string> conflicts(const FrrSettings& s, const std::vector<FrrLine>& running);

}  // namespace gtpcp::bridge
