#include "tests/peer/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <arpa/inet.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace gtpcp::peer::testing {

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& out_path,
                       const std::string& err_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // The test may have blocked signals; the child starts clean.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) ::dup2(out, 1);
    if (err >= 0) ::dup2(err, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

std::optional<int> Subprocess::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<int> Subprocess::terminate(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  ::kill(pid_, SIGTERM);
  if (auto s = wait(timeout)) return s;
  ::kill(pid_, SIGKILL);
  return wait(std::chrono::seconds(5));
}

bool waitUdpBound(uint32_t addr, uint16_t port, std::chrono::milliseconds timeout) {
  // /proc/net/udp prints the address as the 32-bit word in memory (network
  // order read natively) and the port in host order, both in hex.
  const uint32_t net = htonl(addr);
  char want[32];
  std::snprintf(want, sizeof want, "%08X:%04X", net, port);
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::ifstream f("/proc/net/udp");
    std::string line;
    while (std::getline(f, line))
      if (line.find(want) != std::string::npos && line.find(want) < 20) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace gtpcp::peer::testing
