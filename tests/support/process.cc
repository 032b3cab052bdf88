#include "tests/support/process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gtpcp::testing {

namespace {
std::optional<int> decodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return std::nullopt;
}
}  // namespace

Child Child::spawn(const std::vector<std::string>& argv, const std::string& log) {
  return spawn(argv, log, log);
}

Child Child::spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  Child c;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // A test that crashes leaves nothing running behind it, even when it
    // died between fork() and prctl().
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    // The signal mask survives exec: a test that blocked signals (to read
    // them from a signalfd, as the peer emulator's runner does in-process)
    // would otherwise start a child deaf to the SIGTERM that stops it.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!out.empty()) {
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 1);
    }
    if (!err.empty()) {
      const int fd = err == out ? 1 : ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  c.pid_ = pid;
  return c;
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && running()) stop(std::chrono::milliseconds(1000));
    pid_ = o.pid_;
    status_ = o.status_;
    o.pid_ = -1;
  }
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && running()) stop(std::chrono::milliseconds(1000));
}

bool Child::running() {
  if (pid_ <= 0 || status_) return false;
  int status;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = decodeStatus(status);
    return false;
  }
  return r == 0;
}

std::optional<int> Child::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status_;
}

void Child::kill(int signal) {
  if (running()) ::kill(pid_, signal);
}

int Child::stop(std::chrono::milliseconds grace) {
  if (running()) {
    ::kill(pid_, SIGTERM);
    if (!wait(grace)) {
      ::kill(pid_, SIGKILL);
      wait(std::chrono::seconds(10));
    }
  }
  return status_.value_or(-1);
}

std::optional<Output> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  TempDir dir;
  const std::string log = dir.file("output");
  Child c = Child::spawn(argv, log);
  auto status = c.wait(timeout);
  if (!status) {
    c.stop(std::chrono::milliseconds(500));
    return std::nullopt;
  }
  return Output{*status, readFile(log), ""};
}

std::optional<Output> runSeparately(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  TempDir dir;
  Child c = Child::spawn(argv, dir.file("stdout"), dir.file("stderr"));
  auto status = c.wait(timeout);
  if (!status) {
    c.stop(std::chrono::milliseconds(500));
    return std::nullopt;
  }
  return Output{*status, readFile(dir.file("stdout")), readFile(dir.file("stderr"))};
}

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "gtpcp-test-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

gtp::Ipv4 freeLoopback(uint16_t port) {
  std::random_device rd;
  std::mt19937 rng(rd() ^ static_cast<unsigned>(getpid()));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    // 127.0.0.0/16 is left to hand-run tools and peers' documented defaults.
    gtp::Ipv4 a{{127, static_cast<uint8_t>(2 + rng() % 250), static_cast<uint8_t>(rng() % 256),
                 static_cast<uint8_t>(2 + rng() % 250)}};
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    std::memcpy(&sa.sin_addr, a.octets.data(), 4);
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    close(fd);
    if (ok) return a;
  }
  throw std::runtime_error("no free loopback address");
}

std::string Subnet::list(std::initializer_list<uint8_t> hosts) const {
  std::string out;
  for (uint8_t h : hosts) out += (out.empty() ? "" : ",") + ip(h);
  return out;
}

Subnet freeSubnet(std::initializer_list<uint8_t> hosts, uint16_t port) {
  std::random_device rd;
  std::mt19937 rng(rd() ^ static_cast<unsigned>(getpid()));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    Subnet s;
    s.x = static_cast<uint8_t>(2 + rng() % 250);
    s.y = static_cast<uint8_t>(rng() % 256);
    bool ok = true;
    for (uint8_t h : hosts) {
      const int fd = socket(AF_INET, SOCK_DGRAM, 0);
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(port);
      const gtp::Ipv4 a = s.addr(h);
      std::memcpy(&sa.sin_addr, a.octets.data(), 4);
      ok = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
      close(fd);
      if (!ok) break;
    }
    if (ok) return s;
  }
  throw std::runtime_error("no free loopback /24");
}

bool udpBound(const gtp::Ipv4& address, uint16_t port) {
  // The local address is printed as the in-memory 32-bit word (network order
  // read as a little-endian integer) and the port in host order, both hex.
  const auto& o = address.octets;
  char want[16];
  std::snprintf(want, sizeof want, "%02X%02X%02X%02X:%04X", o[3], o[2], o[1], o[0], port);
  std::ifstream in("/proc/net/udp");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string slot, local;
    fields >> slot >> local;
    if (local == want) return true;
  }
  return false;
}

bool waitUdpBound(const gtp::Ipv4& address, uint16_t port, std::chrono::milliseconds timeout) {
  return waitUntil([&] { return udpBound(address, port); }, timeout, std::chrono::milliseconds(10));
}

bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

std::string findOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string toString(const gtp::Ipv4& a) {
  return std::to_string(a.octets[0]) + "." + std::to_string(a.octets[1]) + "." + std::to_string(a.octets[2]) +
         "." + std::to_string(a.octets[3]);
}

std::string binDir() { return std::string(GTPCP_BINARY_DIR) + "/bin"; }

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string tailFile(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += all[i] + "\n";
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gtpcp::testing
