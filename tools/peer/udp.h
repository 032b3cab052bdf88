// UDP sockets and batched I/O (recvmmsg/sendmmsg) for the peer emulator and
// the bare relay.
//
// Both programs run one thread over non-blocking sockets in an epoll loop. A
// RecvBatch and a SendBatch own fixed buffers, allocated once: receiving and
// sending a datagram never allocates, never throws and never logs. Failures
// are counted in the batch (send errors) or reported by the return value.
// Only IPv4 is supported (the emulated nodes live on 127.0.0.0/8).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace gtpcp::peer {

inline constexpr uint16_t kGtpcPort = 2123;

// An IPv4 address and UDP port, both in host byte order.
struct Endpoint {
  uint32_t addr = 0;
  uint16_t port = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Parses "A.B.C.D" or "A.B.C.D:PORT" (port `default_port` when absent).
bool parseEndpoint(std::string_view text, uint16_t default_port, Endpoint& out) noexcept;
// Parses "A.B.C.D" into a host-order address.
bool parseAddress(std::string_view text, uint32_t& out) noexcept;
std::string addressToString(uint32_t addr);
std::string toString(const Endpoint& e);
inline bool isLoopback(uint32_t addr) noexcept { return (addr >> 24) == 127; }

sockaddr_in toSockaddr(const Endpoint& e) noexcept;
Endpoint fromSockaddr(const sockaddr_in& sa) noexcept;

// A bound, non-blocking UDP socket with SO_RXQ_OVFL enabled.
class UdpSocket {
 public:
  UdpSocket() = default;
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  UdpSocket(UdpSocket&& o) noexcept;
  UdpSocket& operator=(UdpSocket&& o) noexcept;

  // Binds to `local` (port 0: ephemeral) and sizes the kernel buffers, forcing
  // them past net.core.[rw]mem_max when the process may (CAP_NET_ADMIN).
  // Returns an empty string on success, else what failed. Startup only.
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
  std::array<sockaddr_in, kBatch> addrs_{};
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
  // full. Call commit() to queue it (or nothing, to abandon it).
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
  std::array<sockaddr_in, kBatch> addrs_{};
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
