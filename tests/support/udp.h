// Test support: a plain UDP socket on a loopback address, for tests that play
// a peer (SGW, PGW, a stranger sending garbage) with hand-built datagrams.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/gtp/values.h"

namespace gtpcp::testing {

struct Received {
  std::vector<uint8_t> bytes;
  gtp::Ipv4 from;
  uint16_t port = 0;
};

class UdpSocket {
 public:
  // Binds addr:port (port 0: an ephemeral port) with 8 MiB buffers, so that
  // a burst of answers waits for the test in the kernel. Throws on failure.
  UdpSocket(const gtp::Ipv4& addr, uint16_t port);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const noexcept { return fd_; }
  const gtp::Ipv4& address() const noexcept { return address_; }
  uint16_t port() const noexcept { return port_; }

  // False when the kernel refused the datagram.
  bool sendTo(const gtp::Ipv4& to, uint16_t port, std::span<const uint8_t> bytes);
  // The next datagram, waiting at most `timeout`.
  std::optional<Received> receive(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  gtp::Ipv4 address_;
  uint16_t port_ = 0;
};

}  // namespace gtpcp::testing
