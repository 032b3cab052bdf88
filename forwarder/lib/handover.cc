#include "handover.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/net/unix_address.h"

namespace gtpcp::forwarder {

namespace {

constexpr uint32_t kMagic = 0x4754484f;  // "GTHO"
constexpr uint32_t kVersion = 1;
constexpr char kConfirm = 'Y';
constexpr char kRefuse = 'N';
// Room for every descriptor an offer can carry: two per address and the bell.
constexpr std::size_t kMaxFds = 64;

struct Request {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
};

struct Offer {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  uint32_t addresses = 0;
  uint32_t fresh_mask = 0;  // bit i: address i has a new-session socket (it follows in the descriptors)
  uint32_t bell = 0;        // 1: the bell socket is the last descriptor
};

// An offer with room for its descriptors, as sent and as received.
struct OfferMessage {
  Offer offer;
  iovec iov{&offer, sizeof offer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)]{};
  msghdr m{};
  OfferMessage() {
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
  }
  OfferMessage(const OfferMessage&) = delete;
  OfferMessage& operator=(const OfferMessage&) = delete;
};

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

tl::expected<sockaddr_un, std::string> unixAddress(const std::string& path) {
  if (auto un = net::unixAddress(path)) return *un;
  return tl::unexpected("hand-over socket " + path + ": a path of 1 to " + std::to_string(net::kMaxUnixPath) +
                        " octets is needed");
}

// Waits up to `ms` for `fd` to be readable (or closed by its peer).
bool readable(int fd, int ms) noexcept {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

uint64_t inodeOf(const std::string& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

}  // namespace

void HandedSockets::closeAll() noexcept {
  for (int& fd : sockets) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  for (int& fd : new_sockets) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  if (bell >= 0) ::close(bell);
  bell = -1;
}

// ---- the serving forwarder ---------------------------------------------------

tl::expected<HandoverListener, std::string> HandoverListener::listen(const std::string& path) {
  auto un = unixAddress(path);
  if (!un) return tl::unexpected(un.error());
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return tl::unexpected(errnoText("hand-over socket: socket(AF_UNIX)"));
  // A predecessor's path (it exits now) or a stale one: this forwarder's from now on.
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*un), sizeof *un) != 0 || ::listen(fd, 1) != 0) {
    std::string e = errnoText("hand-over socket " + path);
    ::close(fd);
    return tl::unexpected(e);
  }
  return HandoverListener(fd, path, inodeOf(path));
}

HandoverListener::HandoverListener(HandoverListener&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), inode_(o.inode_) {}

HandoverListener::~HandoverListener() {
  if (fd_ < 0) return;
  ::close(fd_);
  // A successor that took over bound the path again: it is its now.
  if (inode_ != 0 && inodeOf(path_) == inode_) ::unlink(path_.c_str());
}

bool HandoverListener::handOver(const HandedSockets& s, std::string& why) noexcept {
  const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) {
    why = "no successor was waiting";
    return false;
  }
  auto fail = [&](std::string text) {
    ::close(c);
    why = std::move(text);
    return false;
  };
  Request q;
  if (!readable(c, 1000) || ::recv(c, &q, sizeof q, 0) != static_cast<ssize_t>(sizeof q) || q.magic != kMagic ||
      q.version != kVersion)
    return fail("a connection to the hand-over socket that is not a forwarder's request");

  OfferMessage out;
  Offer& offer = out.offer;
  offer.addresses = static_cast<uint32_t>(s.sockets.size());
  int fds[kMaxFds];
  std::size_t n = 0;
  for (int fd : s.sockets) fds[n++] = fd;
  for (std::size_t i = 0; i < s.new_sockets.size() && i < 32; ++i) {
    if (s.new_sockets[i] < 0) continue;
    offer.fresh_mask |= uint32_t{1} << i;
    fds[n++] = s.new_sockets[i];
  }
  if (s.bell >= 0) {
    offer.bell = 1;
    fds[n++] = s.bell;
  }
  msghdr& m = out.m;
  m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
  cmsghdr* cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
  std::memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
  if (::sendmsg(c, &m, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof offer))
    return fail("the successor went away before the sockets were sent");

  // From here the successor may be reading the sockets: this process
  // resumes only on a refusal or once the successor is gone.
  char answer = 0;
  if (!readable(c, static_cast<int>(kConfirmWait.count()))) {
    // Cut off first, then look: a confirmation queued before the cut is
    // read here; one sent after it fails in the successor (EPIPE), which
    // then exits.
    ::shutdown(c, SHUT_RDWR);
    if (::recv(c, &answer, 1, MSG_DONTWAIT) == 1 && answer == kConfirm) {
      ::close(c);
      return true;
    }
    return fail("the successor did not confirm within " + std::to_string(kConfirmWait.count()) + " ms");
  }
  const ssize_t r = ::recv(c, &answer, 1, 0);
  if (r == 1 && answer == kConfirm) {
    ::close(c);
    return true;
  }
  return fail(r == 1 ? "the successor refused the sockets" : "the successor exited before it confirmed");
}

// ---- the successor -----------------------------------------------------------

Inherited::Inherited(Inherited&& o) noexcept
    : sockets(std::move(o.sockets)), connection_(std::exchange(o.connection_, -1)), confirmed_(o.confirmed_) {}

Inherited::~Inherited() {
  if (connection_ < 0) return;
  if (!confirmed_) (void)::send(connection_, &kRefuse, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(connection_);
}

bool Inherited::confirm() noexcept {
  if (connection_ < 0 || confirmed_) return confirmed_;
  const bool sent = ::send(connection_, &kConfirm, 1, MSG_NOSIGNAL) == 1;
  ::close(connection_);
  connection_ = -1;
  confirmed_ = sent;
  return sent;
}

tl::expected<std::optional<Inherited>, std::string> takeOver(const std::string& path,
                                                             const std::vector<net::Address>& plan,
                                                             std::chrono::milliseconds timeout) {
  auto un = unixAddress(path);
  if (!un) return tl::unexpected(un.error());
  const int c = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c < 0) return tl::unexpected(errnoText("hand-over socket: socket(AF_UNIX)"));
  if (::connect(c, reinterpret_cast<const sockaddr*>(&*un), sizeof *un) != 0) {
    const int e = errno;
    ::close(c);
    // Nobody serves there: a first start, or a forwarder that stopped.
    if (e == ENOENT || e == ECONNREFUSED) return std::optional<Inherited>{};
    errno = e;
    return tl::unexpected(errnoText("hand-over socket " + path + ": connect"));
  }
  const Request q;
  if (::send(c, &q, sizeof q, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof q)) {
    ::close(c);
    return std::optional<Inherited>{};  // it went away meanwhile: a plain start
  }
  if (!readable(c, static_cast<int>(timeout.count()))) {
    ::close(c);
    return tl::unexpected("the running forwarder did not hand its sockets over within " +
                          std::to_string(timeout.count()) + " ms");
  }
  OfferMessage in;
  const Offer& offer = in.offer;
  msghdr& m = in.m;
  const ssize_t r = ::recvmsg(c, &m, MSG_CMSG_CLOEXEC);
  std::vector<int> fds;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&m); cm != nullptr; cm = CMSG_NXTHDR(&m, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  HandedSockets s;
  std::size_t next = 0;
  auto take = [&]() { return next < fds.size() ? fds[next++] : -1; };
  const bool whole = r == static_cast<ssize_t>(sizeof offer) && (m.msg_flags & MSG_CTRUNC) == 0 &&
                     offer.magic == kMagic && offer.version == kVersion;
  if (whole) {
    for (uint32_t i = 0; i < offer.addresses; ++i) s.sockets.push_back(take());
    for (uint32_t i = 0; i < offer.addresses; ++i) s.new_sockets.push_back(offer.fresh_mask >> i & 1 ? take() : -1);
    if (offer.bell) s.bell = take();
  }
  for (; next < fds.size(); ++next) ::close(fds[next]);  // more than the offer names
  Inherited inherited(std::move(s), c);
  auto refuse = [&](std::string why) -> tl::expected<std::optional<Inherited>, std::string> {
    inherited.sockets.closeAll();
    return tl::unexpected(std::move(why));  // ~Inherited tells the predecessor, which resumes
  };
  if (!whole) return refuse("the running forwarder's hand-over message was not understood");
  const HandedSockets& got = inherited.sockets;
  if (got.sockets.size() != plan.size())
    return refuse("the running forwarder serves " + std::to_string(got.sockets.size()) +
                  " GTP-C addresses, the configuration names " + std::to_string(plan.size()) +
                  ": stop and start the group to change them");
  auto boundTo = [](int fd, const net::Address& a) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    return fd >= 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
           net::Address::fromSockaddr(reinterpret_cast<const sockaddr*>(&ss)) == a;
  };
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (!boundTo(got.sockets[i], plan[i]) || (got.new_sockets[i] >= 0 && !boundTo(got.new_sockets[i], plan[i])))
      return refuse("the running forwarder's socket " + std::to_string(i) + " is not bound to " + plan[i].toString() +
                    ": stop and start the group to change the GTP-C addresses");
  }
  return std::optional<Inherited>(std::move(inherited));
}

}  // namespace gtpcp::forwarder
