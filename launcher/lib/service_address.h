// A BGP-announced service address must be local on every instance of the
// group, the standby too, for the forwarder to receive on it. gtpcp start
// makes it local with a local route (`local S dev lo table local`), never
// with an address on an interface: zebra would see an interface address as
// a connected route, and bgpd's import check would then keep the
// announcement alive without the bridge (bgpd-bridge/lib/frr_plan.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gtpcp::launcher {

// The route's protocol number, so that gtpcp's own local routes are told
// from others (`ip route show table local proto 189`).
inline constexpr int kLocalRouteProtocol = 189;

// Adds a local route for each address of `addresses` that is not local
// yet; one line per route added to `out`. False (with a message naming the
// address) when one cannot be added.
bool makeServiceAddressesLocal(const std::vector<std::string>& addresses, std::ostream& out);

}  // namespace gtpcp::launcher
