#include "common/net/address.h"

#include <arpa/inet.h>

#include <charconv>

namespace gtpcp::net {

void Address::toSockaddr(sockaddr_storage& out, socklen_t& len) const noexcept {
  std::memset(&out, 0, sizeof out);
  if (family == AF_INET6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&out);
    s->sin6_family = AF_INET6;
    s->sin6_port = htons(port);
    std::memcpy(&s->sin6_addr, bytes, 16);
    len = sizeof(sockaddr_in6);
  } else {
    auto* s = reinterpret_cast<sockaddr_in*>(&out);
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    std::memcpy(&s->sin_addr, bytes, 4);
    len = sizeof(sockaddr_in);
  }
}

Address Address::fromSockaddr(const sockaddr* sa) noexcept {
  Address r;
  if (sa->sa_family == AF_INET) {
    const auto* s = reinterpret_cast<const sockaddr_in*>(sa);
    r.family = AF_INET;
    r.port = ntohs(s->sin_port);
    std::memcpy(r.bytes, &s->sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    const auto* s = reinterpret_cast<const sockaddr_in6*>(sa);
    // An IPv4-mapped IPv6 source is the IPv4 peer it stands for.
    if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) {
      r.family = AF_INET;
      std::memcpy(r.bytes, reinterpret_cast<const uint8_t*>(&s->sin6_addr) + 12, 4);
    } else {
      r.family = AF_INET6;
      std::memcpy(r.bytes, &s->sin6_addr, 16);
    }
    r.port = ntohs(s->sin6_port);
  }
  return r;
}

std::string Address::toString() const {
  char buf[INET6_ADDRSTRLEN];
  if (family == AF_INET6) {
    inet_ntop(AF_INET6, bytes, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(port);
  }
  if (family == AF_INET) {
    inet_ntop(AF_INET, bytes, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(port);
  }
  return "-";
}

bool Address::parse(std::string_view text, uint16_t default_port, Address& out) noexcept {
  std::string_view host = text;
  uint16_t port = default_port;
  auto parsePort = [&](std::string_view p) {
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || ptr != p.data() + p.size() || v == 0 || v > 65535) return false;
    port = static_cast<uint16_t>(v);
    return true;
  };
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    const auto rest = text.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !parsePort(rest.substr(1)))) return false;
  } else if (text.find(':') != std::string_view::npos &&
             text.find(':') == text.rfind(':')) {  // one colon: IPv4 with port
    host = text.substr(0, text.find(':'));
    if (!parsePort(text.substr(text.find(':') + 1))) return false;
  }
  gtp::Ipv4 v4;
  gtp::Ipv6 v6;
  if (gtp::parseIpv4(host, v4)) {
    out = Address::v4(v4, port);
    return true;
  }
  if (gtp::parseIpv6(host, v6)) {
    out = Address::v6(v6, port);
    return true;
  }
  return false;
}

}  // namespace gtpcp::net
