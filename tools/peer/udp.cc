#include "tools/peer/udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace gtpcp::peer {

namespace {

bool parseIpv4(std::string_view text, uint32_t& out) noexcept {
  uint32_t addr = 0;
  int parts = 0;
  std::size_t pos = 0;
  while (parts < 4) {
    unsigned v = 0;
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc{} || p == begin || v > 255 || p - begin > 3) return false;
    addr = (addr << 8) | v;
    ++parts;
    pos = static_cast<std::size_t>(p - text.data());
    if (parts < 4) {
      if (pos >= text.size() || text[pos] != '.') return false;
      ++pos;
    }
  }
  if (pos != text.size()) return false;
  out = addr;
  return true;
}

bool parsePort(std::string_view digits, uint16_t& out) noexcept {
  unsigned port = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || p != digits.data() + digits.size() || digits.empty() || port > 65535)
    return false;
  out = static_cast<uint16_t>(port);
  return true;
}

}  // namespace

bool parseAddress(std::string_view text, IpAddress& out) noexcept {
  if (text.find(':') == std::string_view::npos) {
    uint32_t v4 = 0;
    if (!parseIpv4(text, v4)) return false;
    out = IpAddress(v4);
    return true;
  }
  // inet_pton wants a C string; it also rejects scope IDs ("%eth0").
  char buf[INET6_ADDRSTRLEN];
  if (text.size() >= sizeof buf) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  std::array<uint8_t, 16> octets{};
  if (::inet_pton(AF_INET6, buf, octets.data()) != 1) return false;
  out = IpAddress::ipv6(octets);
  return true;
}

bool parseEndpoint(std::string_view text, uint16_t default_port, Endpoint& out) noexcept {
  Endpoint e;
  e.port = default_port;
  std::string_view host = text;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      has_port = true;
    }
    // Brackets are for IPv6 only.
    if (host.find(':') == std::string_view::npos) return false;
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    // One colon: IPv4 and a port. More: a bare IPv6 address.
    const auto colon = text.find(':');
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    has_port = true;
  }
  if (!parseAddress(host, e.addr)) return false;
  if (has_port && !parsePort(port, e.port)) return false;
  out = e;
  return true;
}

std::string addressToString(const IpAddress& addr) {
  char buf[INET6_ADDRSTRLEN];
  if (addr.isV4()) {
    const uint32_t a = addr.v4();
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff,
                  a & 0xff);
  } else if (::inet_ntop(AF_INET6, addr.octets.data(), buf, sizeof buf) == nullptr) {
    return "?";
  }
  return buf;
}

std::string toString(const Endpoint& e) {
  const std::string host = addressToString(e.addr);
  return (e.addr.isV4() ? host : "[" + host + "]") + ":" + std::to_string(e.port);
}

bool isLoopback(const IpAddress& addr) noexcept {
  static constexpr std::array<uint8_t, 16> kIpv6Loopback{0, 0, 0, 0, 0, 0, 0, 0,
                                                         0, 0, 0, 0, 0, 0, 0, 1};
  return addr.isV4() ? (addr.v4() >> 24) == 127 : addr.octets == kIpv6Loopback;
}

socklen_t toSockaddr(const Endpoint& e, SocketAddress& out) noexcept {
  if (e.addr.isV4()) {
    out.v4 = sockaddr_in{};
    out.v4.sin_family = AF_INET;
    out.v4.sin_port = htons(e.port);
    std::memcpy(&out.v4.sin_addr, e.addr.octets.data() + 12, 4);
    return sizeof(sockaddr_in);
  }
  out.v6 = sockaddr_in6{};
  out.v6.sin6_family = AF_INET6;
  out.v6.sin6_port = htons(e.port);
  std::memcpy(&out.v6.sin6_addr, e.addr.octets.data(), 16);
  return sizeof(sockaddr_in6);
}

Endpoint fromSockaddr(const SocketAddress& sa) noexcept {
  Endpoint e;
  if (sa.any.sa_family == AF_INET6) {
    std::memcpy(e.addr.octets.data(), &sa.v6.sin6_addr, 16);
    e.port = ntohs(sa.v6.sin6_port);
  } else {
    std::memcpy(e.addr.octets.data() + 12, &sa.v4.sin_addr, 4);
    e.port = ntohs(sa.v4.sin_port);
  }
  return e;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UdpSocket::UdpSocket(UdpSocket&& o) noexcept
    : fd_(o.fd_), local_(o.local_), rcvbuf_(o.rcvbuf_), sndbuf_(o.sndbuf_), drops_(o.drops_) {
  o.fd_ = -1;
}

UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    local_ = o.local_;
    rcvbuf_ = o.rcvbuf_;
    sndbuf_ = o.sndbuf_;
    drops_ = o.drops_;
    o.fd_ = -1;
  }
  return *this;
}

namespace {

void setBuffer(int fd, int force_option, int option, int bytes) {
  // SO_*BUFFORCE passes net.core.*mem_max when the process has CAP_NET_ADMIN;
  // otherwise the plain option gives what the limit allows.
  if (::setsockopt(fd, SOL_SOCKET, force_option, &bytes, sizeof bytes) != 0)
    ::setsockopt(fd, SOL_SOCKET, option, &bytes, sizeof bytes);
}

int getBuffer(int fd, int option) {
  int v = 0;
  socklen_t len = sizeof v;
  ::getsockopt(fd, SOL_SOCKET, option, &v, &len);
  return v / 2;  // the kernel doubles the requested size for bookkeeping
}

}  // namespace

std::string UdpSocket::open(const Endpoint& local, int rcvbuf, int sndbuf) {
  const int family = local.addr.family();
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  setBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf);
  setBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
  // An IPv6 node never hears IPv4 traffic through IPv4-mapped addresses.
  if (family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  SocketAddress sa{};
  const socklen_t sa_length = toSockaddr(local, sa);
  if (::bind(fd, &sa.any, sa_length) != 0) {
    const int e = errno;
    ::close(fd);
    return "bind " + toString(local) + ": " + std::strerror(e);
  }
  SocketAddress bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, &bound.any, &len);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  local_ = fromSockaddr(bound);
  rcvbuf_ = getBuffer(fd, SO_RCVBUF);
  sndbuf_ = getBuffer(fd, SO_SNDBUF);
  drops_ = 0;
  return {};
}

RecvBatch::RecvBatch() : slots_(new uint8_t[kBatch * kSlotSize]) {
  for (std::size_t i = 0; i < kBatch; ++i) {
    iovs_[i].iov_base = slots_.get() + i * kSlotSize;
    iovs_[i].iov_len = kSlotSize;
  }
}

int RecvBatch::receive(UdpSocket& socket) noexcept {
  for (std::size_t i = 0; i < kBatch; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    h.msg_name = &addrs_[i];
    h.msg_namelen = sizeof(SocketAddress);
    h.msg_iov = &iovs_[i];
    h.msg_iovlen = 1;
    h.msg_control = control_[i].data();
    h.msg_controllen = kControlSize;
    h.msg_flags = 0;
    msgs_[i].msg_len = 0;
  }
  const int n = ::recvmmsg(socket.fd(), msgs_.data(), kBatch, MSG_DONTWAIT, nullptr);
  if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
  for (int i = 0; i < n; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    lengths_[i] = msgs_[i].msg_len;
    truncated_[i] = (h.msg_flags & MSG_TRUNC) != 0;
    sources_[i] = fromSockaddr(addrs_[i]);
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        uint32_t drops = 0;
        std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
        socket.noteDrops(drops);
      }
    }
  }
  return n;
}

SendBatch::SendBatch() : slots_(new uint8_t[kBatch * kSlotSize]) {}

std::span<uint8_t> SendBatch::reserve(int fd) noexcept {
  if (count_ == kBatch) flush(fd);
  return {slots_.get() + count_ * kSlotSize, kSlotSize};
}

void SendBatch::commit(const Endpoint& to, std::size_t length) noexcept {
  if (count_ == kBatch || length > kSlotSize) {
    ++send_errors_;
    return;
  }
  iovs_[count_].iov_base = slots_.get() + count_ * kSlotSize;
  iovs_[count_].iov_len = length;
  addr_lengths_[count_] = toSockaddr(to, addrs_[count_]);
  ++count_;
}

void SendBatch::push(int fd, const Endpoint& to, std::span<const uint8_t> bytes) noexcept {
  if (bytes.size() > kSlotSize) {
    ++send_errors_;
    return;
  }
  auto slot = reserve(fd);
  std::memcpy(slot.data(), bytes.data(), bytes.size());
  commit(to, bytes.size());
}

void SendBatch::pushRef(int fd, const Endpoint& to, std::span<const uint8_t> bytes) noexcept {
  if (count_ == kBatch) flush(fd);
  iovs_[count_].iov_base = const_cast<uint8_t*>(bytes.data());
  iovs_[count_].iov_len = bytes.size();
  addr_lengths_[count_] = toSockaddr(to, addrs_[count_]);
  ++count_;
}

void SendBatch::flush(int fd) noexcept {
  std::size_t off = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    h = msghdr{};
    h.msg_name = &addrs_[i];
    h.msg_namelen = addr_lengths_[i];
    h.msg_iov = &iovs_[i];
    h.msg_iovlen = 1;
  }
  while (off < count_) {
    const int r = ::sendmmsg(fd, msgs_.data() + off, static_cast<unsigned>(count_ - off),
                             MSG_DONTWAIT);
    if (r > 0) {
      off += static_cast<std::size_t>(r);
      sent_ += static_cast<uint64_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    // The datagram at `off` was refused: drop it, go on with the rest.
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
      ++send_full_;
    else
      ++send_errors_;
    ++off;
  }
  count_ = 0;
}

int64_t systemUdpRcvbufErrors() noexcept {
  FILE* f = std::fopen("/proc/net/snmp", "re");
  if (f == nullptr) return -1;
  char header[1024];
  char values[1024];
  int64_t result = -1;
  while (std::fgets(header, sizeof header, f) != nullptr) {
    if (std::strncmp(header, "Udp: ", 5) != 0) continue;
    if (std::fgets(values, sizeof values, f) == nullptr) break;
    // Find the column named RcvbufErrors in the header line and the value in
    // the same column of the next line.
    int column = -1;
    int c = 0;
    for (char* save = nullptr, *tok = strtok_r(header, " \n", &save); tok != nullptr;
         tok = strtok_r(nullptr, " \n", &save), ++c) {
      if (std::strcmp(tok, "RcvbufErrors") == 0) column = c;
    }
    c = 0;
    for (char* save = nullptr, *tok = strtok_r(values, " \n", &save); tok != nullptr;
         tok = strtok_r(nullptr, " \n", &save), ++c) {
      if (c == column) result = std::strtoll(tok, nullptr, 10);
    }
    break;
  }
  std::fclose(f);
  return result;
}

int64_t monotonicNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace gtpcp::peer
