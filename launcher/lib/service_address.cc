#include "service_address.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/net/local.h"

extern char** environ;

namespace gtpcp::launcher {

namespace {

std::string ipCommand() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return {};
}

}  // namespace

bool makeServiceAddressesLocal(const std::vector<std::string>& addresses, std::ostream& out) {
  for (const auto& a : addresses) {
    if (net::isLocalAddress(a)) continue;
    const std::string ip = ipCommand();
    if (ip.empty()) {
      out << "service address " << a << " is not local and iproute2's ip is not installed to make it so\n";
      return false;
    }
    // An IPv6 local route makes the address local for delivery but not for
    // bind() (only an interface address does): the forwarder binds it with
    // IPV6_FREEBIND, and whether the route is there is what ip's status
    // says. `replace`: a route left by an earlier start is no error.
    const bool v6 = a.find(':') != std::string::npos;
    std::vector<std::string> args{ip, v6 ? "-6" : "-4", "route", v6 ? "replace" : "add", "local",
                                  a + (v6 ? "/128" : "/32"), "dev", "lo", "table", "local", "proto",
                                  std::to_string(kLocalRouteProtocol)};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0) {
      out << "service address " << a << ": " << ip << ": " << std::strerror(rc) << "\n";
      return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool added = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (v6 ? !added : !net::isLocalAddress(a)) {
      out << "service address " << a << " is not local and `" << (v6 ? "ip -6 route replace" : "ip route add")
          << " local " << a << " dev lo table local` failed (exit status "
          << (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) << "; root is needed)\n";
      return false;
    }
    out << "service address " << a << " made local (ip route show table local proto " << kLocalRouteProtocol << ")\n";
  }
  return true;
}

}  // namespace gtpcp::launcher
