#include "common/group/process_control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <map>
#include <sstream>
#include <thread>

#include "common/group/from_config.h"
#include "common/group/segment_view.h"
#include "common/time/clock.h"

namespace gtpcp::group {

namespace fs = std::filesystem;

namespace {

// How long a forked process may take to become its program.
constexpr double kStartingS = 5.0;

std::optional<int> readPid(const std::string& file) {
  std::ifstream in(file);
  int pid = 0;
  if (in >> pid && pid > 0) return pid;
  return std::nullopt;
}

// The process `pid` runs `binary` (and so is ours, not a recycled pid).
bool runs(int pid, const std::string& binary) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string argv0;
  if (!std::getline(in, argv0, '\0')) return false;
  // redis-server rewrites its title to "redis-server 127.0.0.1:6379".
  argv0 = argv0.substr(0, argv0.find(' '));
  return fs::path(argv0).filename() == fs::path(binary).filename();
}

}  // namespace

namespace {
// Wait statuses of reaped children, a few dozen at most (a group has a
// handful of processes); any thread of the watchdog may reap.
std::mutex reaped_mutex;
std::map<int, int> reaped;
constexpr std::size_t kReapedKept = 64;
}  // namespace

void noteReaped(int pid, int wait_status) {
  const std::lock_guard<std::mutex> lock(reaped_mutex);
  reaped[pid] = wait_status;
  if (reaped.size() > kReapedKept) reaped.erase(reaped.begin());
}

std::optional<std::string> reapedStatus(int pid) {
  int status = 0;
  {
    const std::lock_guard<std::mutex> lock(reaped_mutex);
    const auto it = reaped.find(pid);
    if (it == reaped.end()) return std::nullopt;
    status = it->second;
    reaped.erase(it);  // a pid used again later is another process
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "exited";
}

bool processAlive(int pid) {
  // A child of ours that exited is a zombie until reaped: reap it first.
  int status;
  if (waitpid(pid, &status, WNOHANG) == pid) noteReaped(pid, status);
  if (kill(pid, 0) != 0) return false;
  // A process started by an earlier `gtpcp start` is init's child: once it
  // exits it stays a zombie (kill() still succeeds) until init reaps it,
  // which can take seconds. It is dead already.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string logTail(const std::string& file, std::size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "    " + all[i] + "\n";
  return out;
}

std::string selfDirectory() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

ProcessControl::ProcessControl(config::InstanceConfig config, std::string config_path, std::string bin_dir)
    : config_(std::move(config)),
      config_path_(fs::absolute(config_path).string()),
      bin_dir_(std::move(bin_dir)),
      paths_(pathsOf(config_)) {}

std::string ProcessControl::findBinary(const std::string& name) const {
  // Installed side by side, as the build tree has them too (build/<tree>/bin).
  const fs::path p = fs::path(bin_dir_) / name;
  if (access(p.c_str(), X_OK) == 0) return p.string();
  return name;  // from PATH
}

std::vector<ProcessSpec> ProcessControl::processes() const {
  std::vector<ProcessSpec> out;
  out.push_back({"forwarder", findBinary("gtpcp-forwarder"), {"--config", config_path_}});
  // Before the workers, so that it is there for their first changes; stopped
  // after them (in reverse), so that it writes their last ones.
  if (group::persists(config_)) out.push_back({"persister", findBinary("gtpcp-persister"), {"--config", config_path_}});
  for (uint32_t i = 0; i < config_.workers; ++i) {
    out.push_back({group::Paths::workerName(i), findBinary("gtpcp-worker"),
                   {"--config", config_path_, "--index", std::to_string(i)}});
  }
  // After the data path, which they judge and whose address they announce.
  if (config_.bgp.mode == config::InstanceConfig::Bgp::Mode::kFrr) {
    out.push_back({"bgp-watchdog", findBinary("gtpcp-bgp-watchdog"), {"--config", config_path_}});
    out.push_back({"bgpd-bridge", findBinary("gtpcp-bgpd-bridge"), {"--config", config_path_}});
  }
  // The management process reads what the others publish; it is not on the
  // data path and starts without waiting for it.
  if (!config_.management.listen.empty())
    out.push_back({"console", findBinary("gtpcp-console"), {"--config", config_path_}});
  // Last: it watches the others once they serve; stopped first.
  out.push_back({"watchdog", findBinary("gtpcp-thread-watchdog"), {"--config", config_path_}});
  return out;
}

std::optional<int> ProcessControl::runningPid(const std::string& name) const {
  auto pid = readPid(paths_.pidFile(name));
  if (!pid || !processAlive(*pid)) return std::nullopt;
  const std::string binary = name == "forwarder"   ? "gtpcp-forwarder"
                             : name == "persister" ? "gtpcp-persister"
                             : name == "redis"     ? "redis-server"
                             : name == "watchdog"  ? "gtpcp-thread-watchdog"
                             : name == "bgp-watchdog" ? "gtpcp-bgp-watchdog"
                             : name == "bgpd-bridge"  ? "gtpcp-bgpd-bridge"
                             : name == "console"      ? "gtpcp-console"
                                                   : "gtpcp-worker";
  if (!runs(*pid, binary)) return std::nullopt;
  return pid;
}

std::optional<int> ProcessControl::recordedPid(const std::string& name) const {
  return readPid(paths_.pidFile(name));
}

bool ProcessControl::starting(const std::string& name) const {
  auto pid = readPid(paths_.pidFile(name));
  if (!pid || !processAlive(*pid)) return false;
  // Its start time (/proc/PID/stat field 22, clock ticks since boot) against
  // the uptime: a pid reused by a process that runs for long is not ours.
  std::ifstream stat("/proc/" + std::to_string(*pid) + "/stat");
  const std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = s.rfind(')');
  std::ifstream up("/proc/uptime");
  double uptime_s = 0;
  if (close == std::string::npos || !(up >> uptime_s)) return false;
  std::istringstream fields(s.substr(close + 2));
  std::string f;
  for (int i = 0; i < 20 && fields >> f; ++i) {
  }
  const double age_s = uptime_s - static_cast<double>(std::strtoull(f.c_str(), nullptr, 10)) /
                                      static_cast<double>(sysconf(_SC_CLK_TCK));
  return age_s < kStartingS;
}

std::optional<int> ProcessControl::spawn(const ProcessSpec& spec, std::ostream& out) {
  // log.directory stderr or journald: the child keeps this process's stderr
  // (under systemd, the journal's stream) and opens no file.
  const bool to_file = config_.log.output == config::InstanceConfig::Log::Output::kDirectory;
  const std::string log = paths_.logFile(spec.name);
  // Everything the child needs is built before fork(): the watchdog forks
  // from a process with other threads (ZeroMQ's, the log's), and the child
  // may not allocate.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(spec.binary.c_str()));
  for (const auto& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    out << spec.name << ": fork: " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  if (pid == 0) {
    // Detached from the launcher's terminal and process group: the group
    // outlives `gtpcp start`.
    setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    const int fd = to_file ? ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (null >= 0) dup2(null, 0);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(argv[0], argv.data());
    static const char msg[] = "exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  std::ofstream(paths_.pidFile(spec.name)) << pid << "\n";
  return pid;
}

uint64_t ProcessControl::starts(const std::string& name) const {
  std::optional<ring::SharedSegment> holder;
  const auto* s = processStatusOf(name, paths_, holder);
  return s ? s->starts.load(std::memory_order_relaxed) : 0;
}

bool ProcessControl::waitServing(const std::string& name, int pid, int timeout_ms, std::ostream& out, uint64_t starts_before) {
  const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
  while (monotonicNs() < deadline) {
    if (!processAlive(pid)) {
      out << name << ": " << reapedStatus(pid).value_or("exited") << " while starting; last lines of "
          << paths_.logFile(name) << ":\n"
          << logTail(paths_.logFile(name), 8);
      return false;
    }
    std::optional<ring::SharedSegment> holder;
    if (const auto* s = processStatusOf(name, paths_, holder)) {
      // PROC-A1: pairs with PROC-R1 in the process: pid is visible once state is.
      const auto state = static_cast<group::ProcessState>(s->state.load(std::memory_order_acquire));
      if (state == group::ProcessState::kServing && s->pid.load(std::memory_order_relaxed) == uint32_t(pid) &&
          s->starts.load(std::memory_order_relaxed) > starts_before)
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  out << name << ": not serving after " << timeout_ms << " ms; last lines of " << paths_.logFile(name) << ":\n"
      << logTail(paths_.logFile(name), 8);
  return false;
}

bool ProcessControl::terminate(const std::string& name, int timeout_ms, std::ostream& out) {
  auto pid = runningPid(name);
  if (!pid) {
    std::remove(paths_.pidFile(name).c_str());
    return true;
  }
  return terminateChild(name, *pid, timeout_ms, out);
}

bool ProcessControl::terminateChild(const std::string& name, int pid, int timeout_ms, std::ostream& out) {
  bool clean = true;
  if (processAlive(pid)) {
    kill(pid, SIGTERM);
    const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
    while (processAlive(pid) && monotonicNs() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (processAlive(pid)) {
      out << name << ": pid " << pid << " ignored SIGTERM for " << timeout_ms << " ms, killed\n";
      kill(pid, SIGKILL);
      while (processAlive(pid)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      clean = false;
    }
  }
  std::remove(paths_.pidFile(name).c_str());
  return clean;
}

namespace {
// flock() on a process's lock file: the operator's restart and the
// watchdog's replacement never start two copies of one process.
class ProcessLock {
 public:
  ProcessLock(const std::string& path, bool wait) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    held_ = fd_ >= 0 && ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0;
  }
  ~ProcessLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool held() const noexcept { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};
}  // namespace

bool ProcessControl::replace(const std::string& name, std::ostream& out, int timeout_ms, bool& busy,
                             std::optional<int> judged) {
  busy = false;
  ProcessLock lock(paths_.lockFile(name), false);
  if (!lock.held() || runningPid(name) != judged) {
    busy = true;
    return false;
  }
  for (const ProcessSpec& spec : processes()) {
    if (spec.name != name) continue;
    if (auto pid = runningPid(name)) {
      kill(*pid, SIGKILL);
      while (processAlive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto pid = spawn(spec, out);
    return pid && waitServing(name, *pid, timeout_ms, out);
  }
  return false;
}

bool ProcessControl::restart(const std::string& name, std::ostream& out, int timeout_ms) {
  ProcessLock lock(paths_.lockFile(name), true);
  for (const ProcessSpec& spec : processes()) {
    if (spec.name != name) continue;
    if (name == "forwarder") {
      if (auto running = runningPid(name)) return handOverForwarder(spec, *running, out, timeout_ms);
    }
    if (name == "watchdog") {
      // SIGTERM would have it stop the group; here it is not answering on
      // the control channel (gtpcp asks it to restart itself there first).
      if (auto pid = runningPid(name)) {
        kill(*pid, SIGKILL);
        while (processAlive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    } else {
      terminate(name, timeout_ms, out);
    }
    auto pid = spawn(spec, out);
    if (!pid || !waitServing(name, *pid, timeout_ms, out)) return false;
    out << std::left << std::setw(12) << name << " pid " << std::setw(8) << *pid << " serving\n";
    return true;
  }
  out << "no process named " << name << " in group " << config_.group << "\n";
  return false;
}

bool ProcessControl::handOverForwarder(const ProcessSpec& spec, int running, std::ostream& out, int timeout_ms) {
  // The successor starts beside the forwarder that serves and takes its
  // sockets over (forwarder/lib/handover.h): the kernel queues datagrams on
  // them meanwhile, so no peer sees a gap. The predecessor exits once the
  // successor confirmed.
  ProcessSpec successor = spec;
  successor.args.push_back("--take-over");
  const uint64_t before = starts(spec.name);
  auto pid = spawn(successor, out);
  if (pid && waitServing(spec.name, *pid, timeout_ms, out, before)) {
    const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
    while (processAlive(running) && monotonicNs() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (processAlive(running)) {
      // It handed over and must not touch the rings again: not SIGTERM,
      // whose stop would drain them.
      out << spec.name << ": pid " << running << " did not exit after handing its sockets over; killed\n";
      kill(running, SIGKILL);
      while (processAlive(running)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out << std::left << std::setw(12) << spec.name << " pid " << std::setw(8) << *pid
        << " serving (took the sockets over from pid " << running << ")\n";
    return true;
  }
  // The successor did not take over: the forwarder before serves on.
  if (pid && processAlive(*pid)) {
    kill(*pid, SIGKILL);
    while (processAlive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ofstream(paths_.pidFile(spec.name)) << running << "\n";
  if (processAlive(running)) {
    out << spec.name << ": the forwarder serving (pid " << running << ") keeps its sockets and goes on\n";
    return false;
  }
  // It died meanwhile: a plain start.
  auto plain = spawn(spec, out);
  return plain && waitServing(spec.name, *plain, timeout_ms, out, before);
}

bool ProcessControl::stopDataPath(std::ostream& out, int timeout_ms) {
  std::vector<std::string> order;
  // First: what it would serve meanwhile is a group going away.
  if (!config_.management.listen.empty()) order.push_back("console");
  for (uint32_t w = 0; w < config_.workers; ++w) order.push_back(Paths::workerName(w));
  order.push_back("forwarder");
  if (persists(config_)) order.push_back("persister");
  // Last: the route was withdrawn before the stop began (the control
  // server's first step), and the bridge withdraws again as it exits.
  if (config_.bgp.mode == config::InstanceConfig::Bgp::Mode::kFrr) {
    order.push_back("bgp-watchdog");
    order.push_back("bgpd-bridge");
  }
  bool clean = true;
  for (const std::string& name : order) {
    const bool was_running = runningPid(name).has_value();
    clean &= terminate(name, timeout_ms, out);
    if (was_running) out << std::left << std::setw(12) << name << " stopped\n";
  }
  return clean;
}

}  // namespace gtpcp::group
