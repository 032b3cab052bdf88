// A unix socket's address from its path: the bell sockets and the
// forwarder's hand-over socket. nullopt when the path does not fit
// sun_path (1 to 107 octets).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <optional>
#include <string>

namespace gtpcp::net {

inline constexpr std::size_t kMaxUnixPath = sizeof(sockaddr_un{}.sun_path) - 1;

inline std::optional<sockaddr_un> unixAddress(const std::string& path) noexcept {
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  if (path.empty() || path.size() > kMaxUnixPath) return std::nullopt;
  std::memcpy(un.sun_path, path.c_str(), path.size() + 1);
  return un;
}

}  // namespace gtpcp::net
