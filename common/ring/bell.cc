#include "common/ring/bell.h"

#include "common/ring/dekker_fence.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/net/unix_address.h"

namespace gtpcp::ring {

namespace {

Result<sockaddr_un> socketAddress(const std::string& path) {
  if (auto un = net::unixAddress(path)) return *un;
  return fail(Errc::kInvalidArgument, "bell socket " + path + ": a path of 1 to " +
                                          std::to_string(net::kMaxUnixPath) + " octets is needed");
}

}  // namespace

Result<BellListener> BellListener::bind(const std::string& path) {
  auto un = socketAddress(path);
  if (!un) return tl::unexpected(un.error());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Errc::kSystem, std::string("bell socket: socket(AF_UNIX): ") + std::strerror(errno));
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*un), sizeof *un) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(Errc::kSystem, "bell socket " + path + ": bind: " + std::strerror(e));
  }
  return BellListener(fd, path);
}

BellListener::BellListener(BellListener&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

BellListener& BellListener::operator=(BellListener&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) {
      ::close(fd_);
      if (!path_.empty()) ::unlink(path_.c_str());
    }
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

BellListener::~BellListener() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!path_.empty()) ::unlink(path_.c_str());
  fd_ = -1;
}

void BellListener::announceSleep(BellShm& bell) noexcept {
  // BELL-S1, BELL-F1: pair with BELL-F2 in BellRinger::ring().
  bell.sleeping.store(1, std::memory_order_seq_cst);
  dekkerFence();
}

void BellListener::endSleep(BellShm& bell) noexcept {
  bell.sleeping.store(0, std::memory_order_relaxed);
  drain();
}

void BellListener::drain() noexcept {
  uint8_t buf[64];
  while (::recv(fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
}

Result<BellRinger> BellRinger::open(const std::string& path) {
  auto un = socketAddress(path);
  if (!un) return tl::unexpected(un.error());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Errc::kSystem, std::string("bell socket: socket(AF_UNIX): ") + std::strerror(errno));
  return BellRinger(fd, *un);
}

BellRinger::BellRinger(BellRinger&& o) noexcept : fd_(std::exchange(o.fd_, -1)), to_(o.to_) {}

BellRinger& BellRinger::operator=(BellRinger&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    to_ = o.to_;
  }
  return *this;
}

BellRinger::~BellRinger() {
  if (fd_ >= 0) ::close(fd_);
}

void BellRinger::ring(const BellShm* bell) noexcept {
  // BELL-F2: pairs with BELL-F1 in BellListener::announceSleep(): our
  // publish, then its flag. Relaxed load: the fences order it.
  dekkerFence();
  if (bell != nullptr && bell->sleeping.load(std::memory_order_relaxed) == 0) return;
  ringNow();
}

void BellRinger::ringNow() noexcept {
  const uint8_t byte = 1;
  // A sleeper that is not there (restarting) looks at its rings when it is.
  (void)::sendto(fd_, &byte, 1, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
}

}  // namespace gtpcp::ring
