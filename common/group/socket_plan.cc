#include "common/group/socket_plan.h"

#include <sys/socket.h>

namespace gtpcp::group {

namespace {
uint8_t indexOf(std::vector<net::Address>& sockets, const net::Address& a) {
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] == a) return static_cast<uint8_t>(i);
  }
  sockets.push_back(a);
  return static_cast<uint8_t>(sockets.size() - 1);
}
}  // namespace

SocketPlan SocketPlan::make(std::optional<gtp::Ipv4> access_v4, std::optional<gtp::Ipv6> access_v6,
                            std::optional<gtp::Ipv4> gateway_v4,
                            std::optional<gtp::Ipv6> gateway_v6, uint16_t port) {
  SocketPlan p;
  if (access_v4) p.access_v4 = indexOf(p.sockets, net::Address::v4(*access_v4, port));
  if (access_v6) p.access_v6 = indexOf(p.sockets, net::Address::v6(*access_v6, port));
  if (gateway_v4) p.gateway_v4 = indexOf(p.sockets, net::Address::v4(*gateway_v4, port));
  if (gateway_v6) p.gateway_v6 = indexOf(p.sockets, net::Address::v6(*gateway_v6, port));
  return p;
}

uint8_t SocketPlan::access(uint8_t family) const noexcept {
  return family == AF_INET6 ? access_v6 : access_v4;
}

uint8_t SocketPlan::gateway(uint8_t family) const noexcept {
  return family == AF_INET6 ? gateway_v6 : gateway_v4;
}

}  // namespace gtpcp::group
