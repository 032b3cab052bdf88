#include "tests/support/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <thread>

namespace gtpcp::testing {

namespace {

using namespace std::chrono_literals;

constexpr auto kIpTimeout = 10s;
const std::string kNetnsDir = "/run/netns";  // where `ip netns add` mounts a namespace
constexpr std::size_t kMaxName = 15;         // IFNAMSIZ - 1

const std::string& ipProgram() {
  static const std::string program = [] {
    std::string p = findOnPath("ip");
    for (const char* candidate : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
      if (p.empty() && access(candidate, X_OK) == 0) p = candidate;
    return p.empty() ? std::string("ip") : p;
  }();
  return program;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Runs argv; throws, naming the command and what it printed, unless it
// exits 0 within kIpTimeout.
std::string mustRun(const std::vector<std::string>& argv) {
  const auto out = run(argv, kIpTimeout);
  if (!out) throw std::runtime_error(joined(argv) + ": killed after " + std::to_string(kIpTimeout.count()) + " s");
  if (out->status != 0)
    throw std::runtime_error(joined(argv) + ": exit " + std::to_string(out->status) + ": " + out->text);
  return out->text;
}

struct NsId {
  uint64_t dev = 0, ino = 0;
  bool operator==(const NsId&) const = default;
};

// The network namespace `path` names (/run/netns/NAME, /proc/PID/ns/net).
std::optional<NsId> nsIdOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return NsId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

// Processes in namespace `id`, the caller excluded (a test may have moved
// a thread there). A zombie has no namespace any more and is not listed.
std::vector<int> pidsIn(const NsId& id) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string n = entry.path().filename().string();
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(n);
    if (pid == ::getpid()) continue;
    if (nsIdOf("/proc/" + n + "/ns/net") == id) pids.push_back(pid);
  }
  return pids;
}

// Sends `signal` to `pid` if it is in namespace `id`. The pidfd is taken
// before the check, so a PID recycled between the listing and now gets
// nothing: the signal goes to the process the pidfd names, or nowhere.
void signalIfIn(int pid, const NsId& id, int signal) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return;  // gone already
  if (nsIdOf("/proc/" + std::to_string(pid) + "/ns/net") == id)
    ::syscall(SYS_pidfd_send_signal, fd, signal, nullptr, 0);
  ::close(fd);
}

bool killAllIn(const NsId& id, std::chrono::milliseconds grace) {
  const auto empty = [&] { return pidsIn(id).empty(); };
  if (empty()) return true;
  for (int pid : pidsIn(id)) {
    signalIfIn(pid, id, SIGTERM);
    signalIfIn(pid, id, SIGCONT);  // a stopped process acts on SIGTERM only once resumed
  }
  if (waitUntil(empty, grace, 5ms)) return true;
  for (int pid : pidsIn(id)) signalIfIn(pid, id, SIGKILL);
  return waitUntil(empty, 5s, 5ms);
}

// Namespaces named by this support ("gt<pid>n<counter>") whose process is
// gone: a test that crashed or was killed by ctest's timeout. What still
// runs inside them (FRR daemons) is killed and the namespaces deleted. Once
// per test process, before its first namespace.
void sweepStaleNamespaces() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const std::regex ours("gt([0-9]{1,7})n[0-9]+");
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, ec)) {
      const std::string n = entry.path().filename().string();
      std::smatch m;
      if (!std::regex_match(n, m, ours)) continue;
      const int owner = std::stoi(m[1].str());
      if (owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
      if (const auto id = nsIdOf(entry.path().string())) killAllIn(*id, 1s);
      const auto out = run({ipProgram(), "netns", "delete", n}, kIpTimeout);
      std::fprintf(stderr, "netns: removed %s, left by process %d that is gone%s\n", n.c_str(), owner,
                   out && out->status == 0 ? "" : " (ip netns delete failed)");
    }
  });
}

}  // namespace

Netns::Netns() {
  sweepStaleNamespaces();
  static std::atomic<unsigned> counter{0};
  // "n" keeps the fields apart: gt12n3 and gt1n23 are different namespaces.
  for (int attempt = 0;; ++attempt) {
    name_ = "gt" + std::to_string(::getpid()) + "n" + std::to_string(counter++);
    if (name_.size() > kMaxName) throw std::runtime_error("netns: name " + name_ + " longer than 15 characters");
    const auto out = run({ipProgram(), "netns", "add", name_}, kIpTimeout);
    if (out && out->status == 0) break;
    // Only an existing namespace of the same name (another PID namespace's
    // test) is worth a second name.
    const bool exists = out && out->text.find("File exists") != std::string::npos;
    if (!exists || attempt >= 20)
      throw std::runtime_error("ip netns add " + name_ + ": " + (out ? out->text : "timed out"));
  }
  const auto id = nsIdOf(kNetnsDir + "/" + name_);
  if (!id) {
    run({ipProgram(), "netns", "delete", name_}, kIpTimeout);
    throw std::runtime_error("netns: " + kNetnsDir + "/" + name_ + " missing after ip netns add");
  }
  dev_ = id->dev;
  ino_ = id->ino;
  try {
    linkUp("lo");
  } catch (...) {
    run({ipProgram(), "netns", "delete", name_}, kIpTimeout);
    throw;
  }
}

Netns::~Netns() {
  if (!killAll())
    std::fprintf(stderr, "netns %s: processes still inside after SIGKILL\n", name_.c_str());
  const auto out = run({ipProgram(), "netns", "delete", name_}, kIpTimeout);
  if (!out || out->status != 0)
    std::fprintf(stderr, "ip netns delete %s: %s\n", name_.c_str(), out ? out->text.c_str() : "timed out");
}

std::string Netns::ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{ipProgram(), "-n", name_};
  argv.insert(argv.end(), args.begin(), args.end());
  return mustRun(argv);
}

void Netns::addAddress(const std::string& ifname, const std::string& cidr) const {
  ip({"addr", "add", cidr, "dev", ifname});
}

void Netns::addRoute(const std::string& prefix, const std::string& via, const std::string& dev) const {
  std::vector<std::string> args{"route", "add", prefix, "via", via};
  if (!dev.empty()) args.insert(args.end(), {"dev", dev});
  ip(args);
}

void Netns::addLocalRoute(const std::string& prefix) const {
  ip({"route", "add", "local", prefix, "dev", "lo", "table", "local"});
}

void Netns::removeLocalRoute(const std::string& prefix) const {
  ip({"route", "del", "local", prefix, "dev", "lo", "table", "local"});
}

void Netns::linkUp(const std::string& ifname) const { ip({"link", "set", ifname, "up"}); }
void Netns::linkDown(const std::string& ifname) const { ip({"link", "set", ifname, "down"}); }

std::string Netns::fibRoute(const std::string& prefix) const {
  // ip takes an IPv6 prefix after "route show" only with -6.
  const auto out = run({ipProgram(), "-n", name_, prefix.find(':') != std::string::npos ? "-6" : "-4", "route",
                        "show", prefix},
                       kIpTimeout);
  if (!out || out->status != 0) return "";
  std::string line = out->text;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<Output> Netns::exec(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) const {
  std::vector<std::string> full{ipProgram(), "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return run(full, timeout);
}

std::optional<Output> Netns::execSeparately(const std::vector<std::string>& argv,
                                            std::chrono::milliseconds timeout) const {
  std::vector<std::string> full{ipProgram(), "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return runSeparately(full, timeout);
}

Child Netns::spawn(const std::vector<std::string>& argv, const std::string& log) const {
  return spawn(argv, log, log);
}

Child Netns::spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) const {
  std::vector<std::string> full{ipProgram(), "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return Child::spawn(full, out, err);
}

std::vector<int> Netns::pids() const { return pidsIn(NsId{dev_, ino_}); }

bool Netns::killAll(std::chrono::milliseconds grace) const { return killAllIn(NsId{dev_, ino_}, grace); }

void Netns::enter(const std::function<void()>& f) const {
  const int home = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) throw std::runtime_error(std::string("netns: /proc/thread-self/ns/net: ") + std::strerror(errno));
  const std::string path = kNetnsDir + "/" + name_;
  const int there = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (there < 0 || ::setns(there, CLONE_NEWNET) != 0) {
    const std::string why = std::strerror(errno);
    if (there >= 0) ::close(there);
    ::close(home);
    throw std::runtime_error("netns: setns " + path + ": " + why);
  }
  ::close(there);
  struct Back {
    int fd;
    ~Back() {
      // Nothing sensible is left if the thread cannot go home: the rest of
      // the test would run in the wrong namespace.
      if (::setns(fd, CLONE_NEWNET) != 0) std::abort();
      ::close(fd);
    }
  } back{home};
  f();
}

void veth(const Netns& a, const std::string& if_a, const Netns& b, const std::string& if_b) {
  if (if_a.size() > kMaxName || if_b.size() > kMaxName)
    throw std::runtime_error("veth: interface names " + if_a + ", " + if_b + " longer than 15 characters");
  // Made inside `a` with its peer placed in `b` at once: the names never
  // exist in the host's namespace, where parallel tests would collide.
  a.ip({"link", "add", if_a, "type", "veth", "peer", "name", if_b, "netns", b.name()});
  a.linkUp(if_a);
  b.linkUp(if_b);
}

std::optional<std::chrono::milliseconds> waitFor(const std::function<bool()>& condition,
                                                 std::chrono::milliseconds timeout, std::chrono::milliseconds poll) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  for (;;) {
    const bool held = condition();
    const auto now = std::chrono::steady_clock::now();
    if (held) return std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(poll);
  }
}

std::optional<std::chrono::milliseconds> waitForRoute(const Netns& ns, const std::string& prefix,
                                                      const std::string& what, std::chrono::milliseconds timeout) {
  return waitFor(
      [&] {
        const std::string line = ns.fibRoute(prefix);
        return !line.empty() && line.find(what) != std::string::npos;
      },
      timeout);
}

std::optional<std::chrono::milliseconds> waitForNoRoute(const Netns& ns, const std::string& prefix,
                                                        std::chrono::milliseconds timeout) {
  // ip() throws when ip fails: a failing command must not pass for a route gone.
  return waitFor(
      [&] {
        return ns.ip({prefix.find(':') != std::string::npos ? "-6" : "-4", "route", "show", prefix})
                   .find_first_not_of(" \n") == std::string::npos;
      },
      timeout);
}

}  // namespace gtpcp::testing
