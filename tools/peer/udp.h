// UDP sockets and batched I/O (recvmmsg/sendmmsg) for the peer emulator and
// the bare relay.
//
// Both programs run one thread over non-blocking sockets in an epoll loop. A
// RecvBatch and a SendBatch own fixed buffers, allocated once: receiving and
// sending a datagram never allocates, never throws and never logs. Failures
// are counted in the batch (send errors) or reported by the return value.
//
// A socket has the family of the address it is bound to (IPv6 ones are
// IPV6_V6ONLY): a node speaks one family, and a datagram leaves a socket only
// toward an address of that family.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/gtp/constants.h"

namespace gtpcp::peer {

using gtp::kGtpcPort;

// An IPv4 or IPv6 address. IPv4 is held IPv4-mapped (::ffff:A.B.C.D, RFC
// 4291 §2.5.5.2): one form for both families, so that comparing and hashing
// never look at the family.
struct IpAddress {
  // Network order. The default is 0.0.0.0.
  std::array<uint8_t, 16> octets{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0};

  constexpr IpAddress() noexcept = default;
  // A host-order IPv4 address. Implicit: the emulator's IPv4 code, and the
  // tests and tools built on its messages, write addresses this way.
  constexpr IpAddress(uint32_t ipv4) noexcept {
    octets[12] = static_cast<uint8_t>(ipv4 >> 24);
    octets[13] = static_cast<uint8_t>(ipv4 >> 16);
    octets[14] = static_cast<uint8_t>(ipv4 >> 8);
    octets[15] = static_cast<uint8_t>(ipv4);
  }
  // An IPv6 address; an IPv4-mapped one is that IPv4 address.
  static IpAddress ipv6(const std::array<uint8_t, 16>& bytes) noexcept {
    IpAddress a;
    a.octets = bytes;
    return a;
  }

  bool isV4() const noexcept {
    uint64_t high = 0;
    uint32_t mid = 0;
    std::memcpy(&high, octets.data(), 8);
    std::memcpy(&mid, octets.data() + 8, 4);
    return high == 0 && mid == kMappedMid;
  }
  int family() const noexcept { return isV4() ? AF_INET : AF_INET6; }
  // The host-order IPv4 address; meaningful when isV4().
  uint32_t v4() const noexcept {
    return (uint32_t{octets[12]} << 24) | (uint32_t{octets[13]} << 16) |
           (uint32_t{octets[14]} << 8) | uint32_t{octets[15]};
  }
  // Two word compares: std::array's would call memcmp, on every duplicate
  // check and F-TEID check of the hot path.
  friend bool operator==(const IpAddress& a, const IpAddress& b) noexcept {
    uint64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    std::memcpy(&a0, a.octets.data(), 8);
    std::memcpy(&a1, a.octets.data() + 8, 8);
    std::memcpy(&b0, b.octets.data(), 8);
    std::memcpy(&b1, b.octets.data() + 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }

 private:
  // Octets 8..11 of an IPv4-mapped address (0, 0, 0xff, 0xff) as memcpy
  // reads them on this host.
  static constexpr uint32_t kMappedMid =
      std::endian::native == std::endian::little ? 0xffff0000u : 0x0000ffffu;
};

// An address and UDP port (host order).
struct Endpoint {
  IpAddress addr{};
  uint16_t port = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Parses "A.B.C.D", "A.B.C.D:PORT", an IPv6 address ("fd00::1") or an IPv6
// address in brackets with or without a port ("[fd00::1]:2123"); the port is
// `default_port` when absent. No scope IDs.
bool parseEndpoint(std::string_view text, uint16_t default_port, Endpoint& out) noexcept;
// Parses "A.B.C.D" or an IPv6 address (no brackets, no scope ID).
bool parseAddress(std::string_view text, IpAddress& out) noexcept;
// "A.B.C.D" or RFC 5952 text ("fd00::1").
std::string addressToString(const IpAddress& addr);
// "A.B.C.D:PORT" or "[IPV6]:PORT".
std::string toString(const Endpoint& e);
// 127.0.0.0/8 or ::1.
bool isLoopback(const IpAddress& addr) noexcept;

// A socket address of either family, as the socket calls take it.
union SocketAddress {
  sockaddr any;
  sockaddr_in v4;
  sockaddr_in6 v6;
};
// Writes `e` into `out` (sockaddr_in for IPv4, sockaddr_in6 for IPv6) and
// returns the length to pass with it.
socklen_t toSockaddr(const Endpoint& e, SocketAddress& out) noexcept;
Endpoint fromSockaddr(const SocketAddress& sa) noexcept;

// A bound, non-blocking UDP socket with SO_RXQ_OVFL enabled.
class UdpSocket {
 public:
  UdpSocket() = default;
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  UdpSocket(UdpSocket&& o) noexcept;
  UdpSocket& operator=(UdpSocket&& o) noexcept;

  // Binds to `local` (port 0: ephemeral) with a socket of its family and
  // sizes the kernel buffers, forcing them past net.core.[rw]mem_max when the
  // process may (CAP_NET_ADMIN). Returns an empty string on success, else
  // what failed. Startup only.
  std::string open(const Endpoint& local, int rcvbuf, int sndbuf);

  int fd() const noexcept { return fd_; }
  // The bound address (with the port the kernel chose for port 0).
  const Endpoint& local() const noexcept { return local_; }
  // Buffer sizes the kernel granted (getsockopt reports twice what it uses).
  int rcvbuf() const noexcept { return rcvbuf_; }
  int sndbuf() const noexcept { return sndbuf_; }
  // Datagrams the kernel dropped on this socket's full receive queue, as last
  // reported by SO_RXQ_OVFL (cumulative since the socket was created).
  uint32_t drops() const noexcept { return drops_; }
  void noteDrops(uint32_t d) noexcept {
    if (d > drops_) drops_ = d;
  }

 private:
  int fd_ = -1;
  Endpoint local_{};
  int rcvbuf_ = 0;
  int sndbuf_ = 0;
  uint32_t drops_ = 0;
};

// One recvmmsg batch: up to kBatch datagrams of up to kSlotSize octets.
class RecvBatch {
 public:
  static constexpr std::size_t kBatch = 64;
  static constexpr std::size_t kSlotSize = 4096;

  RecvBatch();

  // Receives what is queued on `socket` (MSG_DONTWAIT). Returns the number of
  // datagrams (0 when none), or -1 on an error other than EAGAIN. Updates the
  // socket's drop counter from SO_RXQ_OVFL.
  int receive(UdpSocket& socket) noexcept;

  std::span<uint8_t> data(std::size_t i) noexcept {
    return {slots_.get() + i * kSlotSize, lengths_[i]};
  }
  const Endpoint& source(std::size_t i) const noexcept { return sources_[i]; }
  // The datagram was longer than kSlotSize and was cut.
  bool truncated(std::size_t i) const noexcept { return truncated_[i]; }

 private:
  static constexpr std::size_t kControlSize = 64;
  std::unique_ptr<uint8_t[]> slots_;
  std::array<mmsghdr, kBatch> msgs_{};
  std::array<iovec, kBatch> iovs_{};
  std::array<SocketAddress, kBatch> addrs_{};
  std::array<std::array<uint8_t, kControlSize>, kBatch> control_{};
  std::array<uint32_t, kBatch> lengths_{};
  std::array<Endpoint, kBatch> sources_{};
  std::array<bool, kBatch> truncated_{};
};

// Datagrams waiting to leave one socket; sent with sendmmsg when full or on
// flush(). Each slot holds up to kSlotSize octets.
class SendBatch {
 public:
  static constexpr std::size_t kBatch = 64;
  static constexpr std::size_t kSlotSize = 2048;

  SendBatch();

  // A buffer for the next datagram; flushes to `fd` first when the batch is
  // full. Call commit() to queue it (or nothing, to abandon it). Every
  // destination must be of the family of the socket `fd` (the kernel refuses
  // the others: counted in send_errors).
  std::span<uint8_t> reserve(int fd) noexcept;
  void commit(const Endpoint& to, std::size_t length) noexcept;
  // Queues a copy of `bytes` (at most kSlotSize octets; longer ones are cut
  // and counted as errors).
  void push(int fd, const Endpoint& to, std::span<const uint8_t> bytes) noexcept;
  // Queues `bytes` without copying: they must stay valid until the next
  // flush (the relay sends from its receive buffers this way).
  void pushRef(int fd, const Endpoint& to, std::span<const uint8_t> bytes) noexcept;
  // Sends everything queued. A datagram the kernel refuses is dropped and
  // counted (EAGAIN/ENOBUFS in send_full, others in send_errors).
  void flush(int fd) noexcept;

  std::size_t pending() const noexcept { return count_; }
  uint64_t sent() const noexcept { return sent_; }
  uint64_t sendFull() const noexcept { return send_full_; }
  uint64_t sendErrors() const noexcept { return send_errors_; }

 private:
  std::unique_ptr<uint8_t[]> slots_;
  std::array<mmsghdr, kBatch> msgs_{};
  std::array<iovec, kBatch> iovs_{};
  std::array<SocketAddress, kBatch> addrs_{};
  std::array<socklen_t, kBatch> addr_lengths_{};
  std::size_t count_ = 0;
  uint64_t sent_ = 0;
  uint64_t send_full_ = 0;
  uint64_t send_errors_ = 0;
};

// System-wide UDP receive-buffer drops (/proc/net/snmp Udp: RcvbufErrors),
// or -1 when unreadable. Includes other processes' drops: informational.
int64_t systemUdpRcvbufErrors() noexcept;

// Monotonic clock in nanoseconds.
int64_t monotonicNs() noexcept;

}  // namespace gtpcp::peer
