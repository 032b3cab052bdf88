// A peer's transport address (IPv4 or IPv6 and UDP port) as a plain value:
// trivially copyable, so it can live in shared memory and in ring records.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "common/gtp/values.h"

namespace gtpcp::net {

struct Address {
  uint8_t family = 0;          // AF_INET, AF_INET6, or 0 when unset
  uint8_t reserved = 0;
  uint16_t port = 0;           // host order
  uint8_t bytes[16] = {};      // IPv4 in the first 4 octets

  bool valid() const noexcept { return family == AF_INET || family == AF_INET6; }
  bool isV4() const noexcept { return family == AF_INET; }

  static Address v4(const gtp::Ipv4& a, uint16_t port) noexcept {
    Address r;
    r.family = AF_INET;
    r.port = port;
    std::memcpy(r.bytes, a.octets.data(), 4);
    return r;
  }
  static Address v6(const gtp::Ipv6& a, uint16_t port) noexcept {
    Address r;
    r.family = AF_INET6;
    r.port = port;
    std::memcpy(r.bytes, a.octets.data(), 16);
    return r;
  }
  gtp::Ipv4 ipv4() const noexcept {
    gtp::Ipv4 a;
    std::memcpy(a.octets.data(), bytes, 4);
    return a;
  }
  gtp::Ipv6 ipv6() const noexcept {
    gtp::Ipv6 a;
    std::memcpy(a.octets.data(), bytes, 16);
    return a;
  }
  Address withPort(uint16_t p) const noexcept {
    Address r = *this;
    r.port = p;
    return r;
  }
  // Same host, any port.
  bool sameHost(const Address& o) const noexcept {
    return family == o.family && std::memcmp(bytes, o.bytes, family == AF_INET ? 4 : 16) == 0;
  }
  friend bool operator==(const Address& a, const Address& b) noexcept {
    return a.sameHost(b) && a.port == b.port;
  }

  // sockaddr conversions; `len` receives the sockaddr's size.
  void toSockaddr(sockaddr_storage& out, socklen_t& len) const noexcept;
  static Address fromSockaddr(const sockaddr* sa) noexcept;

  // "127.0.0.1:2123", "[::1]:2123" (allocates; logs and tools only).
  std::string toString() const;
  // Parses "127.0.0.1" / "::1" (with `default_port`), "127.0.0.1:2123" or
  // "[::1]:2123". False on error.
  static bool parse(std::string_view text, uint16_t default_port, Address& out) noexcept;
};
static_assert(sizeof(Address) == 20);

}  // namespace gtpcp::net
