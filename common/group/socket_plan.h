// The forwarder's GTP-C sockets and which of them faces which leg.
//
// The forwarder binds one UDP socket per distinct local address; the worker
// names a socket by its index in this plan when it hands a datagram back for
// sending. Both compute the plan from the same configuration with this one
// function, so they agree on the indexes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/gtp/values.h"
#include "common/net/address.h"

namespace gtpcp::group {

inline constexpr uint8_t kNoSocket = 0xff;

struct SocketPlan {
  std::vector<net::Address> sockets;  // index -> local address and port
  uint8_t access_v4 = kNoSocket;      // facing SGWs
  uint8_t access_v6 = kNoSocket;
  uint8_t gateway_v4 = kNoSocket;     // facing PGWs
  uint8_t gateway_v6 = kNoSocket;

  static SocketPlan make(std::optional<gtp::Ipv4> access_v4, std::optional<gtp::Ipv6> access_v6,
                         std::optional<gtp::Ipv4> gateway_v4, std::optional<gtp::Ipv6> gateway_v6,
                         uint16_t port);

  // The socket facing a leg for a peer of `family`, kNoSocket when the proxy
  // has no address of that family on that leg.
  uint8_t access(uint8_t family) const noexcept;
  uint8_t gateway(uint8_t family) const noexcept;
};

}  // namespace gtpcp::group
