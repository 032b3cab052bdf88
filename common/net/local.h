// What the kernel says about this host's addresses and sockets, for the
// checks of the BGP announcement (startup and once-a-second paths only).
#pragma once

#include <cstdint>
#include <string>

namespace gtpcp::net {

// Whether `address` (a literal) is local to this network namespace: a
// socket can bind it without IP_FREEBIND, or (IPv6) a local route covers it
// (`ip -6 route add local A/128 dev lo table local`: delivered here, bound
// with IPV6_FREEBIND, since only an interface address is bindable).
bool isLocalAddress(const std::string& address);
// Whether process `pid` holds a UDP socket bound to `address`:`port`
// (/proc/<pid>/fd against the process's /proc/<pid>/net/udp and udp6).
bool holdsUdpSocket(int pid, const std::string& address, uint16_t port);

}  // namespace gtpcp::net
