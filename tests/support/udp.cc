#include "tests/support/udp.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tests/support/process.h"

namespace gtpcp::testing {

namespace {
sockaddr_in toSockaddr(const gtp::Ipv4& a, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  std::memcpy(&sa.sin_addr, a.octets.data(), 4);
  return sa;
}
}  // namespace

UdpSocket::UdpSocket(const gtp::Ipv4& addr, uint16_t port) : address_(addr) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int size = 8 << 20;
  // As root past net.core.rmem_max; else as much as the system allows.
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0)
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  sockaddr_in sa = toSockaddr(addr, port);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    const std::string why = std::strerror(errno);
    close(fd_);
    throw std::runtime_error("bind " + testing::toString(addr) + ":" + std::to_string(port) + ": " + why);
  }
  socklen_t len = sizeof sa;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) close(fd_);
}

bool UdpSocket::sendTo(const gtp::Ipv4& to, uint16_t port, std::span<const uint8_t> bytes) {
  sockaddr_in sa = toSockaddr(to, port);
  return sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa) ==
         static_cast<ssize_t>(bytes.size());
}

std::optional<Received> UdpSocket::receive(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
  Received r;
  r.bytes.resize(65536);
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  const ssize_t n = recvfrom(fd_, r.bytes.data(), r.bytes.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&sa), &len);
  if (n < 0) return std::nullopt;
  r.bytes.resize(static_cast<std::size_t>(n));
  std::memcpy(r.from.octets.data(), &sa.sin_addr, 4);
  r.port = ntohs(sa.sin_port);
  return r;
}

}  // namespace gtpcp::testing
