#include "common/net/local.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace gtpcp::net {

bool isLocalAddress(const std::string& address) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
    ss.ss_family = AF_INET;
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, address.c_str(), &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr) == 1) {
    ss.ss_family = AF_INET6;
    family = AF_INET6;
    len = sizeof(sockaddr_in6);
  } else {
    return false;
  }
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0;
  ::close(fd);
  if (ok || family != AF_INET6) return ok;
  // /proc/net/ipv6_route: destination (32 hex digits), prefix length (hex),
  // source and its length, next hop, metric, use and reference counts,
  // flags (RTF_LOCAL 0x80000000), device.
  char want[33];
  const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr.s6_addr;
  for (int i = 0; i < 16; ++i) std::snprintf(want + 2 * i, 3, "%02x", a6[i]);
  std::ifstream routes("/proc/net/ipv6_route");
  for (std::string line; std::getline(routes, line);) {
    std::istringstream in(line);
    std::string dest, plen, src, slen, next, metric, refs, use, flags;
    if (!(in >> dest >> plen >> src >> slen >> next >> metric >> refs >> use >> flags)) continue;
    if (dest == want && plen == "80" && (std::stoul(flags, nullptr, 16) & 0x80000000u) != 0) return true;
  }
  return false;
}

namespace {

// The hex form /proc/net/udp gives a local address: IPv4 as one 32-bit word
// in host order, IPv6 as four of them.
std::string procHex(const std::string& address, bool& v6) {
  in_addr a4{};
  in6_addr a6{};
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) {
    v6 = false;
    char out[16];
    std::snprintf(out, sizeof out, "%08X", a4.s_addr);
    return out;
  }
  if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) {
    v6 = true;
    uint32_t w[4];
    std::memcpy(w, &a6, sizeof w);
    char out[40];
    std::snprintf(out, sizeof out, "%08X%08X%08X%08X", w[0], w[1], w[2], w[3]);
    return out;
  }
  return {};
}

std::set<uint64_t> socketInodes(int pid) {
  std::set<uint64_t> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char target[64];
    const std::string link = dir + "/" + e->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    unsigned long long inode = 0;
    if (std::sscanf(target, "socket:[%llu]", &inode) == 1) out.insert(inode);
  }
  closedir(d);
  return out;
}

}  // namespace

bool holdsUdpSocket(int pid, const std::string& address, uint16_t port) {
  bool v6 = false;
  const std::string hex = procHex(address, v6);
  if (hex.empty()) return false;
  char port_hex[8];
  std::snprintf(port_hex, sizeof port_hex, "%04X", port);
  const std::string want = hex + ":" + port_hex;
  const auto inodes = socketInodes(pid);
  if (inodes.empty()) return false;
  // The process's own view of its network namespace.
  std::ifstream in("/proc/" + std::to_string(pid) + (v6 ? "/net/udp6" : "/net/udp"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retr, uid, timeout;
    uint64_t inode = 0;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
    if (local == want && inodes.count(inode)) return true;
  }
  return false;
}

}  // namespace gtpcp::net
