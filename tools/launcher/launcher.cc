#include "tools/launcher/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "common/config/routing.h"
#include "common/group/control_shm.h"
#include "common/group/process_status_shm.h"
#include "common/time/clock.h"
#include "common/group/rings.h"
#include "common/ring/segment.h"
#include "common/group/from_config.h"
#include "forwarder/lib/forwarder_shm.h"
#include "persister/lib/persister_shm.h"
#include "tools/launcher/redis_reader.h"
#include "watchdog/lib/watchdog_shm.h"
#include "workers/lib/worker_shm.h"

namespace gtpcp::launcher {

namespace fs = std::filesystem;

namespace {


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

bool alive(int pid) {
  // A child of ours that exited is a zombie until reaped: reap it first.
  int status;
  waitpid(pid, &status, WNOHANG);
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

// The embedded redis-server answers PING on 127.0.0.1:`port`.
bool redisAnswers(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{0, 200'000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
    char buf[16] = {};
    ok = recv(fd, buf, sizeof buf - 1, 0) >= 5 && std::strncmp(buf, "+PONG", 5) == 0;
  }
  close(fd);
  return ok;
}

std::string tail(const std::string& file, std::size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "    " + all[i] + "\n";
  return out;
}

template <class Shm>
struct Attached {
  std::optional<ring::SharedSegment> segment;
  const Shm* shm = nullptr;
};

template <class Shm>
Attached<Shm> attachAs(const std::string& name, uint32_t kind) {
  Attached<Shm> a;
  auto seg = ring::SharedSegment::attach(name, kind);
  if (!seg) return a;
  a.segment.emplace(std::move(*seg));
  a.shm = static_cast<const Shm*>(a.segment->payload());
  return a;
}

// A counter table (common/metrics/counter.h) as JSON: name -> value.
template <std::size_t N>
nlohmann::json countersJson(const metrics::CounterInfo (&info)[N], const void* counters) {
  nlohmann::json out = nlohmann::json::object();
  const auto* c = static_cast<const metrics::Counter*>(counters);
  for (std::size_t i = 0; i < N; ++i) out[std::string(info[i].name)] = c[i].load();
  return out;
}

const group::ProcessStatusShm* statusOf(const std::string& name, const group::Paths& paths,
                                        std::optional<ring::SharedSegment>& holder) {
  if (name == "forwarder") {
    auto a = attachAs<forwarder::ForwarderShm>(paths.forwarderSegment(), forwarder::kForwarderSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "persister") {
    auto a = attachAs<persister::PersisterShm>(paths.persisterSegment(), persister::kPersisterSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "watchdog") {
    auto a = attachAs<watchdog::WatchdogShm>(paths.watchdogSegment(), watchdog::kWatchdogSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  const unsigned index = static_cast<unsigned>(std::stoul(name.substr(std::string("worker-").size())));
  auto a = attachAs<worker::WorkerShmHeader>(paths.workerSegment(index), worker::kWorkerSegmentKind);
  holder = std::move(a.segment);
  return a.shm ? &a.shm->status : nullptr;
}

}  // namespace

std::string selfDirectory() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

Group::Group(config::InstanceConfig config, std::string config_path, std::string bin_dir)
    : config_(std::move(config)),
      config_path_(fs::absolute(config_path).string()),
      bin_dir_(std::move(bin_dir)),
      paths_(group::pathsOf(config_)) {}

std::string Group::findBinary(const std::string& name) const {
  // Installed side by side, as the build tree has them too (build/<tree>/bin).
  const fs::path p = fs::path(bin_dir_) / name;
  if (access(p.c_str(), X_OK) == 0) return p.string();
  return name;  // from PATH
}

std::optional<ProcessSpec> Group::embeddedRedis() const {
  if (config_.storage.mode != config::InstanceConfig::Storage::Mode::kEmbedded) return std::nullopt;
  // Its data (an append-only file) in the run directory, so that a restart of
  // the group finds the sessions again; loopback only.
  // Debian's redis-server, not whatever wrapper comes first on PATH (a
  // version manager's shim costs a start 20 ms).
  std::string binary = findBinary("redis-server");
  if (binary == "redis-server" && access("/usr/bin/redis-server", X_OK) == 0) binary = "/usr/bin/redis-server";
  return ProcessSpec{"redis", binary,
                     {"--port", std::to_string(config_.storage.embedded_port), "--bind", "127.0.0.1",
                      "--dir", paths_.embeddedRedisDir(), "--save", "", "--appendonly", "yes",
                      "--appendfsync", "everysec", "--daemonize", "no", "--protected-mode", "yes"}};
}

bool Group::startRedis(std::ostream& out, int timeout_ms) {
  auto spec = embeddedRedis();
  if (!spec) return true;
  if (runningPid(spec->name)) return true;
  std::error_code ec;
  fs::create_directories(paths_.embeddedRedisDir(), ec);
  if (redisAnswers(config_.storage.embedded_port)) {
    out << "redis: 127.0.0.1:" << config_.storage.embedded_port
        << " already answers and is not this group's; give storage.embedded_port another port\n";
    return false;
  }
  auto pid = spawn(*spec, out);
  if (!pid) return false;
  const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
  while (monotonicNs() < deadline) {
    if (!alive(*pid)) break;
    if (redisAnswers(config_.storage.embedded_port)) {
      out << std::left << std::setw(12) << "redis" << " pid " << std::setw(8) << *pid << " serving (127.0.0.1:"
          << config_.storage.embedded_port << ")\n";
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  out << "redis: not answering on 127.0.0.1:" << config_.storage.embedded_port << "; last lines of "
      << paths_.logFile("redis") << ":\n" << tail(paths_.logFile("redis"), 8);
  terminate("redis", 2000, out);
  return false;
}

bool Group::settleRecovery(std::ostream& out) {
  // TS 23.007: the Recovery value changes when, and only when, the peers'
  // sessions are gone. The group's value lives in Redis; it goes up when the
  // group starts on storage that holds none of its sessions. The last value
  // is also kept in the run directory, for storage that lost everything
  // (the key included), and for the forwarder to read.
  const std::string file = paths_.recoveryFile();
  std::optional<int> last;
  if (std::ifstream in(file); in) {
    int v = -1;
    if (in >> v && v >= 0 && v <= 255) last = v;
  }
  int value = config_.gtpc.recovery;
  if (group::persists(config_)) {
    value = last.value_or(value);
    RedisReader redis(config_);
    const std::string key = "gtpcp:" + config_.group + ":recovery";
    auto stored = redis.run({"GET", key});
    auto sessions = redis.anyKey("gtpcp:" + config_.group + ":*:s:*");
    auto instances = redis.run({"HGETALL", "gtpcp:" + config_.group + ":instances"});
    if (!stored || !sessions || !instances) {
      out << "recovery: cannot read the group's storage ("
          << (!stored ? stored.error() : !sessions ? sessions.error() : instances.error())
          << "); the group's Recovery would be unknown\n";
      return false;
    }
    // Another instance of the group that runs (its persister renews its
    // entry every second) has announced the value to peers: an empty
    // storage then only means it holds no session now.
    std::string running;
    const uint64_t now_ms = realtimeNs() / 1'000'000;
    if ((*instances)->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < (*instances)->elements; i += 2) {
        const std::string name((*instances)->element[i]->str, (*instances)->element[i]->len);
        const uint64_t until = std::strtoull((*instances)->element[i + 1]->str, nullptr, 10);
        if (name != config_.instance && until > now_ms) running = name;
      }
    }
    const bool known = (*stored)->type == REDIS_REPLY_STRING;
    if (known) value = std::atoi((*stored)->str);
    if (known && !running.empty()) {
      out << "recovery: " << value << " (kept: instance " << running << " of the group runs)\n";
    } else if (!known || !*sessions) {
      value = (value + 1) % 256;
      out << "recovery: " << value << " (the group's storage holds no session: peers must forget theirs)\n";
    } else {
      out << "recovery: " << value << " (kept: the group's storage holds its sessions)\n";
    }
    if (auto set = redis.run({"SET", key, std::to_string(value)}); !set) {
      out << "recovery: " << set.error() << "\n";
      return false;
    }
  }
  std::ofstream(file) << value << "\n";
  return true;
}

std::vector<ProcessSpec> Group::processes() const {
  std::vector<ProcessSpec> out;
  out.push_back({"forwarder", findBinary("gtpcp-forwarder"), {"--config", config_path_}});
  // Before the workers, so that it is there for their first changes; stopped
  // after them (in reverse), so that it writes their last ones.
  if (group::persists(config_)) out.push_back({"persister", findBinary("gtpcp-persister"), {"--config", config_path_}});
  for (uint32_t i = 0; i < config_.workers; ++i) {
    out.push_back({group::Paths::workerName(i), findBinary("gtpcp-worker"),
                   {"--config", config_path_, "--index", std::to_string(i)}});
  }
  // Last: it watches the others once they serve; stopped first.
  out.push_back({"watchdog", findBinary("gtpcp-thread-watchdog"), {"--config", config_path_}});
  return out;
}

std::optional<int> Group::runningPid(const std::string& name) const {
  auto pid = readPid(paths_.pidFile(name));
  if (!pid || !alive(*pid)) return std::nullopt;
  const std::string binary = name == "forwarder"   ? "gtpcp-forwarder"
                             : name == "persister" ? "gtpcp-persister"
                             : name == "redis"     ? "redis-server"
                             : name == "watchdog"  ? "gtpcp-thread-watchdog"
                                                   : "gtpcp-worker";
  if (!runs(*pid, binary)) return std::nullopt;
  return pid;
}

std::optional<int> Group::spawn(const ProcessSpec& spec, std::ostream& out) {
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
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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

uint64_t Group::starts(const std::string& name) const {
  std::optional<ring::SharedSegment> holder;
  const auto* s = statusOf(name, paths_, holder);
  return s ? s->starts.load(std::memory_order_relaxed) : 0;
}

bool Group::waitServing(const std::string& name, int pid, int timeout_ms, std::ostream& out, uint64_t starts_before) {
  const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
  while (monotonicNs() < deadline) {
    if (!alive(pid)) {
      out << name << ": exited while starting; last lines of " << paths_.logFile(name) << ":\n"
          << tail(paths_.logFile(name), 8);
      return false;
    }
    std::optional<ring::SharedSegment> holder;
    if (const auto* s = statusOf(name, paths_, holder)) {
      // A1: pairs with S1 in the process: pid is visible once state is.
      const auto state = static_cast<group::ProcessState>(s->state.load(std::memory_order_acquire));
      if (state == group::ProcessState::kServing && s->pid.load(std::memory_order_relaxed) == uint32_t(pid) &&
          s->starts.load(std::memory_order_relaxed) > starts_before)
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  out << name << ": not serving after " << timeout_ms << " ms; last lines of " << paths_.logFile(name) << ":\n"
      << tail(paths_.logFile(name), 8);
  return false;
}

bool Group::start(std::ostream& out, int timeout_ms) {
  std::error_code ec;
  fs::create_directories(paths_.runDir(), ec);
  if (ec) {
    out << "cannot create run directory " << paths_.runDir() << ": " << ec.message() << "\n";
    return false;
  }
  const fs::path log_dir = fs::path(paths_.logFile("gtpcp")).parent_path();
  fs::create_directories(log_dir, ec);
  if (ec) {
    out << "cannot create log directory " << log_dir.string() << " (log.directory): " << ec.message() << "\n";
    return false;
  }
  const uint64_t t0 = monotonicNs();
  // A group stopped with --keep-state left its drain and close flags up; the
  // routing document a reload put in force stays.
  if (auto control = group::openControl(paths_.controlSegment()); control) {
    group::GroupControlShm& c = group::controlOf(*control);
    c.draining.store(0, std::memory_order_relaxed);
    c.closing.store(0, std::memory_order_relaxed);
  } else {
    out << "shared memory " << paths_.controlSegment() << ": " << control.error().message << "\n";
    return false;
  }
  std::vector<std::pair<ProcessSpec, int>> started;
  bool ok = true;
  // At once, so that on two cores the processes' own start-up (linking,
  // configuration, shared memory) overlaps; one that fails (a port already
  // taken) fails the start, and what was started is stopped again. The
  // workers first, while Redis starts: they need neither Redis nor the
  // Recovery. The forwarder answers with the Recovery, so it comes once that
  // is settled; the watchdog last, so that it finds the others started.
  auto spawnAll = [&](bool workers) {
    for (const ProcessSpec& spec : processes()) {
      if (!ok) return;
      if ((spec.name.rfind("worker-", 0) == 0) != workers) continue;
      if (auto pid = runningPid(spec.name)) {
        out << std::left << std::setw(12) << spec.name << " pid " << std::setw(8) << *pid << " already running\n";
        continue;
      }
      auto pid = spawn(spec, out);
      if (!pid) {
        ok = false;
        return;
      }
      started.emplace_back(spec, *pid);
    }
  };
  spawnAll(true);
  ok = ok && startRedis(out, timeout_ms) && settleRecovery(out);
  spawnAll(false);
  for (const auto& [spec, pid] : started) {
    if (!ok) break;
    if (!waitServing(spec.name, pid, timeout_ms, out)) ok = false;
  }
  const double ms = double(monotonicNs() - t0) / 1e6;
  if (!ok) {
    for (const auto& [spec, pid] : started) terminate(spec.name, 2000, out);
    out << "group " << config_.group << " did not start\n";
    return false;
  }
  for (const auto& [spec, pid] : started) {
    out << std::left << std::setw(12) << spec.name << " pid " << std::setw(8) << pid << " serving\n";
  }
  out << "group " << config_.group << " serving in " << std::fixed << std::setprecision(3) << ms / 1000.0
      << " s (run directory " << paths_.runDir() << ")\n";
  // For gtpcp status: how long the last start took.
  std::ofstream(paths_.runDir() + "/start_ms") << ms << "\n";
  return true;
}

bool Group::terminate(const std::string& name, int timeout_ms, std::ostream& out) {
  auto pid = runningPid(name);
  if (!pid) {
    std::remove(paths_.pidFile(name).c_str());
    return true;
  }
  kill(*pid, SIGTERM);
  const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
  while (alive(*pid) && monotonicNs() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  bool clean = true;
  if (alive(*pid)) {
    out << name << ": pid " << *pid << " ignored SIGTERM for " << timeout_ms << " ms, killed\n";
    kill(*pid, SIGKILL);
    while (alive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    clean = false;
  }
  std::remove(paths_.pidFile(name).c_str());
  return clean;
}

bool Group::stop(std::ostream& out, bool keep_state, int timeout_ms) {
  bool clean = true;
  // SIGTERM to the watchdog drains the group and stops it (what `gtpcp stop`
  // asks over the control channel); it may take the whole drain.
  if (runningPid("watchdog")) {
    clean &= terminate("watchdog", int(config_.watchdog.stop_drain_ms) + 4 * timeout_ms, out);
    out << std::left << std::setw(12) << "watchdog" << " stopped\n";
  }
  // What is left (no watchdog, or one that did not finish): workers first,
  // so that the forwarder sends what they answered last; the persister last,
  // so that it writes their last changes.
  std::vector<std::string> order;
  for (uint32_t w = 0; w < config_.workers; ++w) order.push_back(group::Paths::workerName(w));
  order.push_back("forwarder");
  order.push_back("persister");
  for (const std::string& name : order) {
    const bool was_running = runningPid(name).has_value();
    clean &= terminate(name, timeout_ms, out);
    if (was_running) out << std::left << std::setw(12) << name << " stopped\n";
  }
  if (runningPid("redis")) {
    clean &= terminate("redis", timeout_ms, out);
    out << std::left << std::setw(12) << "redis" << " stopped\n";
  }
  if (!keep_state) {
    ring::SharedSegment::remove(paths_.forwarderSegment());
    ring::SharedSegment::remove(paths_.persisterSegment());
    ring::SharedSegment::remove(paths_.watchdogSegment());
    ring::SharedSegment::remove(paths_.controlSegment());
    for (uint32_t w = 0; w < config_.workers; ++w) {
      ring::SharedSegment::remove(paths_.workerSegment(w));
      ring::SharedSegment::remove(paths_.workerDoorbell(w));
      for (auto k : {group::RingKind::kPriority, group::RingKind::kNew, group::RingKind::kEgress,
                     group::RingKind::kPersist, group::RingKind::kLookup, group::RingKind::kRestore})
        ring::SharedSegment::remove(paths_.ring(w, k));
    }
  }
  out << "group " << config_.group << " stopped" << (keep_state ? " (shared memory kept)" : "") << "\n";
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

bool Group::replace(const std::string& name, std::ostream& out, int timeout_ms, bool& busy) {
  busy = false;
  ProcessLock lock(paths_.lockFile(name), false);
  if (!lock.held()) {
    busy = true;
    return false;
  }
  for (const ProcessSpec& spec : processes()) {
    if (spec.name != name) continue;
    if (auto pid = runningPid(name)) {
      kill(*pid, SIGKILL);
      while (alive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto pid = spawn(spec, out);
    return pid && waitServing(name, *pid, timeout_ms, out);
  }
  return false;
}

bool Group::restart(const std::string& name, std::ostream& out, int timeout_ms) {
  ProcessLock lock(paths_.lockFile(name), true);
  for (const ProcessSpec& spec : processes()) {
    if (spec.name != name) continue;
    if (name == "watchdog") {
      // SIGTERM would have it stop the group; here it is not answering on
      // the control channel (gtpcp asks it to restart itself there first).
      if (auto pid = runningPid(name)) {
        kill(*pid, SIGKILL);
        while (alive(*pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
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

nlohmann::json Group::status() const {
  nlohmann::json j;
  j["group"] = config_.group;
  j["run_dir"] = paths_.runDir();
  if (std::ifstream in(paths_.runDir() + "/start_ms"); in) {
    double ms = -1;
    if (in >> ms && ms >= 0) j["start_seconds"] = ms / 1000.0;
  }
  const uint64_t now = monotonicNs();
  auto process = [&](const std::string& name, const group::ProcessStatusShm* s) {
    nlohmann::json p;
    p["name"] = name;
    auto pid = runningPid(name);
    p["pid"] = pid ? nlohmann::json(*pid) : nlohmann::json(nullptr);
    if (s == nullptr) {
      p["state"] = "absent";
      return p;
    }
    auto state = static_cast<group::ProcessState>(s->state.load(std::memory_order_acquire));
    // A process that died does not say so itself.
    if (!pid && state == group::ProcessState::kServing) state = group::ProcessState::kAbsent;
    p["state"] = pid ? group::toString(state) : (state == group::ProcessState::kStopped ? "stopped" : "dead");
    const uint64_t beat = s->heartbeat_ns.load(std::memory_order_relaxed);
    if (beat != 0 && now >= beat) p["heartbeat_age_ms"] = (now - beat) / 1'000'000;
    p["starts"] = s->starts.load(std::memory_order_relaxed);
    return p;
  };
  auto fwd = attachAs<forwarder::ForwarderShm>(paths_.forwarderSegment(), forwarder::kForwarderSegmentKind);
  j["processes"].push_back(process("forwarder", fwd.shm ? &fwd.shm->status : nullptr));
  nlohmann::json counters = nlohmann::json::object();
  if (fwd.shm) counters = countersJson(forwarder::kForwarderCounterInfo, &fwd.shm->counters);
  uint64_t sessions = 0;
  for (uint32_t w = 0; w < config_.workers; ++w) {
    const std::string name = group::Paths::workerName(w);
    auto a = attachAs<worker::WorkerShmHeader>(paths_.workerSegment(w), worker::kWorkerSegmentKind);
    nlohmann::json p = process(name, a.shm ? &a.shm->status : nullptr);
    if (a.shm) {
      p["sessions"] = a.shm->counters.sessions_active.load();
      sessions += a.shm->counters.sessions_active.load();
      p["counters"] = countersJson(worker::kWorkerCounterInfo, &a.shm->counters);
    }
    if (fwd.shm) {
      p["ring_depth_slots"] = {{"priority", fwd.shm->priority_depth[w].load()},
                               {"new", fwd.shm->new_depth[w].load()},
                               {"egress", fwd.shm->egress_depth[w].load()}};
    }
    j["processes"].push_back(p);
  }
  if (group::persists(config_)) {
    auto per = attachAs<persister::PersisterShm>(paths_.persisterSegment(), persister::kPersisterSegmentKind);
    nlohmann::json p = process("persister", per.shm ? &per.shm->status : nullptr);
    if (per.shm) {
      nlohmann::json pc = countersJson(persister::kPersisterCounterInfo, &per.shm->counters);
      // The channels' Redis counters, summed (gauges too: "connected" counts channels).
      for (std::size_t i = 0; i < std::size(persister::kRedisCounterInfo); ++i) {
        uint64_t sum = 0;
        for (uint32_t w = 0; w < config_.workers && w < persister::kMaxChannels; ++w)
          sum += reinterpret_cast<const metrics::Counter*>(&per.shm->redis[w])[i].load();
        pc[std::string(persister::kRedisCounterInfo[i].name)] = sum;
      }
      p["counters"] = pc;
    }
    j["processes"].push_back(p);
  }
  {
    auto wd = attachAs<watchdog::WatchdogShm>(paths_.watchdogSegment(), watchdog::kWatchdogSegmentKind);
    nlohmann::json p = process("watchdog", wd.shm ? &wd.shm->status : nullptr);
    if (wd.shm) p["counters"] = countersJson(watchdog::kWatchdogCounterInfo, &wd.shm->counters);
    j["processes"].push_back(p);
    // What it did to each process (restarts, last failure, why it gave up).
    if (std::ifstream in(paths_.watchdogStatusFile()); in) {
      auto watched = nlohmann::json::parse(in, nullptr, false);
      if (!watched.is_discarded()) j["watchdog"] = watched;
    }
  }
  if (auto redis = embeddedRedis()) {
    nlohmann::json r;
    r["name"] = "redis";
    auto pid = runningPid("redis");
    r["pid"] = pid ? nlohmann::json(*pid) : nlohmann::json(nullptr);
    r["state"] = pid ? "serving" : "absent";
    j["processes"].push_back(r);
  }
  j["sessions"] = sessions;
  j["counters"] = counters;
  // The forwarder's health checks, entry i being the routing document's gateway i.
  nlohmann::json gateways = nlohmann::json::array();
  if (fwd.shm) {
    auto routing = config::loadRoutingDocument(config_.routing.resolved);
    const uint32_t published = fwd.shm->gateways_published.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < published && i < forwarder::kMaxHealthChecked; ++i) {
      const forwarder::GatewayStatusShm& g = fwd.shm->gateways[i];
      nlohmann::json e;
      if (routing && i < routing->gateways().size()) {
        e["name"] = routing->gateways()[i].name;
        e["pool"] = routing->pool(routing->gateways()[i].pool).name;
      }
      e["address"] = g.address.toString();
      e["health_checked"] = !routing || routing->healthCheck().interval_ms != 0;
      e["up"] = g.up.load(std::memory_order_relaxed) != 0;
      const uint32_t recovery = g.recovery.load(std::memory_order_relaxed);
      e["recovery"] = recovery == forwarder::kRecoveryUnknown ? nlohmann::json(nullptr) : nlohmann::json(recovery);
      e["restarts"] = g.restarts.load(std::memory_order_relaxed);
      e["echo_sent"] = g.echo_sent.load();
      e["echo_answered"] = g.echo_answered.load();
      e["misses"] = g.misses.load();
      gateways.push_back(e);
    }
  }
  j["gateways"] = gateways;
  // The control server's commands in force: drain, and the routing document.
  j["draining"] = false;
  {
    nlohmann::json routing;
    routing["path"] = config_.routing.resolved;
    routing["generation"] = 0;
    if (auto seg = ring::SharedSegment::attach(paths_.controlSegment(), group::kControlSegmentKind)) {
      const auto& c = *static_cast<const group::GroupControlShm*>(seg->payload());
      j["draining"] = c.draining.load(std::memory_order_relaxed) != 0;
      if (c.closing.load(std::memory_order_relaxed) != 0) j["stopping"] = true;
      if (auto in_force = group::routingInForce(c)) {
        routing["path"] = in_force->path;
        routing["generation"] = in_force->generation;
      }
      auto version = [](const group::ControlAckShm& ack) {
        nlohmann::json v;
        // Acquire: pairs with R2 in the process.
        v["generation"] = ack.routing_generation.load(std::memory_order_acquire);
        std::ostringstream hex;
        hex << std::hex << std::setw(16) << std::setfill('0') << ack.routing_hash.load(std::memory_order_relaxed);
        v["version"] = hex.str();
        if (ack.routing_failed.load(std::memory_order_relaxed) != 0) v["failed"] = true;
        return v;
      };
      routing["processes"]["forwarder"] = version(c.forwarder);
      for (uint32_t w = 0; w < config_.workers && w < group::kControlMaxWorkers; ++w)
        routing["processes"][group::Paths::workerName(w)] = version(c.workers[w]);
    }
    j["routing"] = routing;
  }
  return j;
}

void Group::printStatus(const nlohmann::json& s, std::ostream& out) {
  out << "group " << s["group"].get<std::string>() << " (" << s["run_dir"].get<std::string>() << ")\n";
  out << std::left << std::setw(12) << "process" << std::setw(9) << "pid" << std::setw(10) << "state"
      << std::setw(11) << "heartbeat" << std::setw(8) << "starts" << "sessions\n";
  for (const auto& p : s["processes"]) {
    out << std::left << std::setw(12) << p["name"].get<std::string>() << std::setw(9)
        << (p["pid"].is_null() ? std::string("-") : std::to_string(p["pid"].get<int>())) << std::setw(10)
        << p["state"].get<std::string>() << std::setw(11)
        << (p.contains("heartbeat_age_ms") ? std::to_string(p["heartbeat_age_ms"].get<uint64_t>()) + " ms" : "-")
        << std::setw(8) << (p.contains("starts") ? std::to_string(p["starts"].get<uint64_t>()) : "-")
        << (p.contains("sessions") ? std::to_string(p["sessions"].get<uint64_t>()) : "") << "\n";
  }
  out << "sessions: " << s["sessions"].get<uint64_t>() << "\n";
  if (s.value("stopping", false)) {
    out << "STOPPING: requests dropped, open transactions finishing\n";
  } else if (s.value("draining", false)) {
    out << "DRAINING: session creations refused with cause 73 (gtpcp drain --off ends it)\n";
  }
  if (s.contains("routing")) {
    const auto& r = s["routing"];
    out << "routing: " << r["path"].get<std::string>() << " (generation " << r["generation"].get<uint64_t>() << ")";
    if (r.contains("processes")) {
      std::string version;
      bool same = true;
      for (const auto& [name, v] : r["processes"].items()) {
        if (v["version"].get<std::string>() == "0000000000000000") continue;  // never started
        if (version.empty()) version = v["version"].get<std::string>();
        same = same && v["version"].get<std::string>() == version && !v.contains("failed");
      }
      out << (same ? " version " + version : " versions differ between processes");
    }
    out << "\n";
  }
  if (s.contains("start_seconds")) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", s["start_seconds"].get<double>());
    out << "last start: every process serving " << seconds << " s after gtpcp start\n";
  }
  if (s.contains("watchdog")) {
    for (const auto& [name, w] : s["watchdog"].items()) {
      if (w.value("restarts", 0) == 0 && !w.contains("why")) continue;
      out << "watchdog: " << name << " restarted " << w.value("restarts", 0) << " times";
      if (w.contains("last_failure")) out << ", last: " << w["last_failure"].get<std::string>();
      if (w.contains("why")) out << "; GIVEN UP: " << w["why"].get<std::string>();
      out << "\n";
      if (w.contains("last_error")) out << "  its last start failed with: " << w["last_error"].get<std::string>() << "\n";
    }
  }
  if (s.contains("gateways") && !s["gateways"].empty()) {
    out << std::left << std::setw(16) << "gateway" << std::setw(12) << "pool" << std::setw(26) << "address"
        << std::setw(6) << "up" << std::setw(10) << "recovery" << std::setw(10) << "restarts" << "echo sent/answered\n";
    for (const auto& g : s["gateways"]) {
      out << std::left << std::setw(16) << g.value("name", std::string("-")) << std::setw(12)
          << g.value("pool", std::string("-")) << std::setw(26) << g["address"].get<std::string>() << std::setw(6)
          << (!g["health_checked"].get<bool>() ? "-" : g["up"].get<bool>() ? "yes" : "NO") << std::setw(10)
          << (g["recovery"].is_null() ? std::string("-") : std::to_string(g["recovery"].get<uint32_t>()))
          << std::setw(10) << g["restarts"].get<uint32_t>() << g["echo_sent"].get<uint64_t>() << "/"
          << g["echo_answered"].get<uint64_t>() << "\n";
    }
  }
  auto print = [&](const nlohmann::json& counters) {
    for (const auto& [name, value] : counters.items()) {
      if (value.get<uint64_t>() != 0) out << "  " << std::left << std::setw(52) << name << " " << value.get<uint64_t>() << "\n";
    }
  };
  out << "counters (non-zero):\n";
  print(s["counters"]);
  for (const auto& p : s["processes"]) {
    if (!p.contains("counters")) continue;
    out << " " << p["name"].get<std::string>() << ":\n";
    print(p["counters"]);
  }
}

}  // namespace gtpcp::launcher
