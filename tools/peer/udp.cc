#include "tools/peer/udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>

namespace gtpcp::peer {

bool parseAddress(std::string_view text, uint32_t& out) noexcept {
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

bool parseEndpoint(std::string_view text, uint16_t default_port, Endpoint& out) noexcept {
  const auto colon = text.find(':');
  Endpoint e;
  if (!parseAddress(text.substr(0, colon), e.addr)) return false;
  e.port = default_port;
  if (colon != std::string_view::npos) {
    const auto digits = text.substr(colon + 1);
    unsigned port = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc{} || p != digits.data() + digits.size() || digits.empty() || port > 65535)
      return false;
    e.port = static_cast<uint16_t>(port);
  }
  out = e;
  return true;
}

std::string addressToString(uint32_t addr) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff,
                (addr >> 8) & 0xff, addr & 0xff);
  return buf;
}

std::string toString(const Endpoint& e) {
  return addressToString(e.addr) + ":" + std::to_string(e.port);
}

sockaddr_in toSockaddr(const Endpoint& e) noexcept {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(e.port);
  sa.sin_addr.s_addr = htonl(e.addr);
  return sa;
}

Endpoint fromSockaddr(const sockaddr_in& sa) noexcept {
  return Endpoint{ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
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
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  setBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf);
  setBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
  const sockaddr_in sa = toSockaddr(local);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    const int e = errno;
    ::close(fd);
    return "bind " + toString(local) + ": " + std::strerror(e);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
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
    h.msg_namelen = sizeof(sockaddr_in);
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
  addrs_[count_] = toSockaddr(to);
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
  addrs_[count_] = toSockaddr(to);
  ++count_;
}

void SendBatch::flush(int fd) noexcept {
  std::size_t off = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    h = msghdr{};
    h.msg_name = &addrs_[i];
    h.msg_namelen = sizeof(sockaddr_in);
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
