#include "watchdog_runtime.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/group/segments.h"
#include "common/group/status.h"
#include "common/time/clock.h"

namespace gtpcp::watchdog {

namespace {
// How often processes are looked at: a hung one is found within
// timeout + this.
constexpr long kCheckPeriodMs = 50;
// How long a replacement may take to serve before it counts as failed.
constexpr int kReplaceTimeoutMs = 5000;
// The line of a failed start's report that says why: the last one the
// process logged as critical or error, else the last one.
std::string lastError(const std::string& report) {
  std::istringstream in(report);
  std::string line, last, error;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    line = line.substr(start);
    last = line;
    if (line.find(" critical: ") != std::string::npos || line.find(" error: ") != std::string::npos) error = line;
  }
  return error.empty() ? last : error;
}
}  // namespace

tl::expected<std::unique_ptr<WatchdogRuntime>, std::string> WatchdogRuntime::open(
    group::ProcessControl& group, const SupervisorSettings& settings, const ControlSettings& control) {
  std::unique_ptr<WatchdogRuntime> w(new WatchdogRuntime(group, settings));
  const group::Paths& paths = group.paths();
  auto seg = group::createOwned<WatchdogShm>(paths.watchdogSegment(), kWatchdogSegmentKind);
  if (!seg) return tl::unexpected("shared memory " + paths.watchdogSegment() + ": " + seg.error().message);
  w->segment_.emplace(std::move(*seg));
  w->shm_ = static_cast<WatchdogShm*>(w->segment_->payload());
  const std::string endpoint = paths.heartbeatEndpoint();
  try {
    w->socket_ = zmq::socket_t(w->context_, zmq::socket_type::sub);
    w->socket_.set(zmq::sockopt::linger, 0);
    w->socket_.set(zmq::sockopt::subscribe, "");
    // A socket file left by a watchdog that was killed would refuse the bind.
    ::unlink(endpoint.substr(std::string("ipc://").size()).c_str());
    w->socket_.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return tl::unexpected("heartbeat socket " + endpoint + ": " + e.what());
  }
  auto server = ControlServer::open(w->context_, group, control);
  if (!server) return tl::unexpected(server.error());
  w->control_ = std::move(*server);
  const uint64_t now = monotonicNs();
  for (const group::ProcessSpec& spec : group.processes()) {
    if (spec.name != "watchdog") w->supervisor_.watch(spec.name, now);
  }
  return w;
}

void WatchdogRuntime::receive(uint64_t now_ns) {
  zmq::message_t m;
  while (socket_.recv(m, zmq::recv_flags::dontwait)) {
    if (!beat_.ParseFromArray(m.data(), static_cast<int>(m.size()))) continue;
    shm_->counters.heartbeats.add();
    supervisor_.heartbeat(beat_.process(), beat_.pid(), now_ns);
  }
}

void WatchdogRuntime::check(uint64_t now_ns) {
  // Processes this watchdog started are its children: reaped here, so that
  // one that exits is seen dead at once rather than as a zombie.
  int wait_status = 0;
  for (pid_t p; (p = ::waitpid(-1, &wait_status, WNOHANG)) > 0;) group::noteReaped(p, wait_status);
  // One forked and not yet exec'd is not gone: a second one beside it would
  // fight it for its resources (the bridge's lease interface, the sockets).
  const auto due = supervisor_.due(now_ns, [&](const std::string& name) {
    return group_.runningPid(name).has_value() || group_.starting(name);
  });
  bool changed = !due.empty();
  for (const Supervisor::Replacement& r : due) {
    std::string how = r.reason;
    if (r.reason == "exited") {
      if (const auto pid = group_.recordedPid(r.name))
        if (auto ended = group::reapedStatus(*pid)) how = *ended;
    }
    spdlog::warn("{}: {}; replacing it ({} ms after it was seen failing)", r.name, how,
                 (now_ns - r.detected_ns) / 1'000'000);
    std::ostringstream out;
    const uint64_t started = monotonicNs();
    bool busy = false;
    // What was judged, before the lock: a restart by the operator that ends
    // in between leaves another process there, which is not replaced.
    const std::optional<int> judged = group_.runningPid(r.name);
    // Seen gone, running again already: started by someone else.
    const bool started_meanwhile = r.reason == "exited" && judged.has_value();
    const bool ok = !started_meanwhile && group_.replace(r.name, out, kReplaceTimeoutMs, busy, judged);
    busy = busy || started_meanwhile;
    if (busy) {
      // The operator's gtpcp restart has it: a new grace period, not a failure.
      supervisor_.restartedElsewhere(r.name, monotonicNs());
      continue;
    }
    const uint64_t done = monotonicNs();
    supervisor_.replaced(r.name, ok, done, done - started);
    shm_->counters.restarts.add();
    if (ok) {
      spdlog::info("{}: serving again, {} ms after it was seen failing", r.name, (done - r.detected_ns) / 1'000'000);
    } else {
      shm_->counters.restart_failures.add();
      spdlog::error("{}: did not come up: {}", r.name, out.str());
      supervisor_.failedWith(r.name, lastError(out.str()));
    }
  }
  uint64_t given_up = 0;
  for (const group::ProcessSpec& spec : group_.processes()) given_up += supervisor_.givenUp(spec.name) ? 1 : 0;
  if (given_up != given_up_) {
    const nlohmann::json status = supervisor_.status(now_ns);
    for (auto it = status.begin(); it != status.end(); ++it) {
      if (it->contains("why")) spdlog::error("{}: {}", it.key(), (*it)["why"].get<std::string>());
    }
    shm_->counters.given_up.set(given_up);
    given_up_ = given_up;
    changed = true;
  }
  if (changed) writeStatus(monotonicNs());
}

void WatchdogRuntime::writeStatus(uint64_t now_ns) {
  group::writeStatusFile(group_.paths().watchdogStatusFile(), supervisor_.status(now_ns));
}

WatchdogRuntime::Exit WatchdogRuntime::run(const std::atomic<bool>& stop) {
  group::announceServing(shm_->status);
  writeStatus(monotonicNs());
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0}, {control_->socket().handle(), 0, ZMQ_POLLIN, 0}};
  uint64_t next_check = 0;
  while (!control_->finished()) {
    const long busy = control_->pollTimeoutMs();
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(busy >= 0 ? std::min(busy, kCheckPeriodMs) : kCheckPeriodMs));
    } catch (const zmq::error_t&) {
      // EINTR from a signal: the loop looks at `stop`.
    }
    const uint64_t now = monotonicNs();
    // SIGTERM: the group drains and stops, as with gtpcp stop.
    if (stop.load(std::memory_order_relaxed)) control_->beginStop(now);
    receive(now);
    control_->receive(now);
    control_->tick(now);
    shm_->status.heartbeat_ns.store(now, std::memory_order_relaxed);
    // A stopping group is not repaired.
    if (now >= next_check && !control_->stopping()) {
      check(now);
      next_check = now + uint64_t(kCheckPeriodMs) * 1'000'000;
    }
  }
  writeStatus(monotonicNs());
  group::announceStopped(shm_->status);
  return control_->reexec() ? Exit::kRestart : Exit::kStopped;
}

}  // namespace gtpcp::watchdog
