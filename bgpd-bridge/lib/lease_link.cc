#include "lease_link.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gtpcp::bridge {

namespace {

bool flags(const std::string& name, short set, short* get) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  bool ok = ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  if (ok && get) *get = ifr.ifr_flags;
  if (ok && set) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | set);
    ok = ::ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  }
  ::close(s);
  return ok;
}

}  // namespace

tl::expected<LeaseLink, std::string> LeaseLink::open(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return tl::unexpected("lease interface name '" + name + "' is not 1 to 15 characters");
  const int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(std::string("/dev/net/tun: ") + std::strerror(errno));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
    const int e = errno;
    ::close(fd);
    return tl::unexpected("creating interface " + name + ": " + std::strerror(e) +
                          (e == EBUSY ? " (another process holds it: a second bridge for this group?)" : ""));
  }
  LeaseLink link(fd, name);
  if (!link.raise()) return tl::unexpected("setting interface " + name + " up: " + std::strerror(errno));
  return link;
}

LeaseLink::~LeaseLink() {
  if (fd_ >= 0) ::close(fd_);
}

bool LeaseLink::up() const {
  short f = 0;
  return flags(name_, 0, &f) && (f & IFF_UP);
}

bool LeaseLink::raise() const { return flags(name_, IFF_UP, nullptr); }

}  // namespace gtpcp::bridge
