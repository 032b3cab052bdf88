#include "launcher.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <system_error>
#include <vector>

#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "service_address.h"
#include "common/group/segments.h"
#include "common/ring/segment.h"
#include "common/time/clock.h"
#include "embedded_redis.h"
#include "recovery.h"

namespace gtpcp::launcher {

namespace fs = std::filesystem;

bool Group::start(std::ostream& out, int timeout_ms) {
  const config::InstanceConfig& config_ = processes_.config();
  const group::Paths& paths_ = processes_.paths();
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
  // The control segment is the launcher's (common/group/segments.h): made
  // before any process that attaches to it.
  if (auto control = group::createControl(paths_.controlSegment()); control) {
    group::GroupControlShm& c = group::controlOf(*control);
    c.draining.store(0, std::memory_order_relaxed);
    c.closing.store(0, std::memory_order_relaxed);
    c.bgp_withdraw.store(0, std::memory_order_relaxed);
  } else {
    out << "shared memory " << paths_.controlSegment() << ": " << control.error().message << "\n";
    return false;
  }
  if (config_.bgp.mode == config::InstanceConfig::Bgp::Mode::kFrr &&
      !makeServiceAddressesLocal(group::serviceAddresses(config_), out))
    return false;
  std::vector<std::pair<group::ProcessSpec, int>> started;
  bool ok = true;
  // At once, so that on two cores the processes' own start-up (linking,
  // configuration, shared memory) overlaps; one that fails (a port already
  // taken) fails the start, and what was started is stopped again. The
  // workers first, while Redis starts: they need neither Redis nor the
  // Recovery. The forwarder answers with the Recovery, so it comes once that
  // is settled; the watchdog last, so that it finds the others started.
  auto spawnAll = [&](bool workers) {
    for (const group::ProcessSpec& spec : processes_.processes()) {
      if (!ok) return;
      if ((spec.name.rfind("worker-", 0) == 0) != workers) continue;
      if (auto pid = processes_.runningPid(spec.name)) {
        out << std::left << std::setw(12) << spec.name << " pid " << std::setw(8) << *pid << " already running\n";
        continue;
      }
      auto pid = processes_.spawn(spec, out);
      if (!pid) {
        ok = false;
        return;
      }
      started.emplace_back(spec, *pid);
    }
  };
  spawnAll(true);
  ok = ok && startEmbeddedRedis(processes_, out, timeout_ms) && settleRecovery(config_, paths_, out);
  spawnAll(false);
  for (const auto& [spec, pid] : started) {
    if (!ok) break;
    if (!processes_.waitServing(spec.name, pid, timeout_ms, out)) ok = false;
  }
  const double ms = double(monotonicNs() - t0) / 1e6;
  if (!ok) {
    // By the pids spawn() gave: a worker forked a moment ago (the Recovery
    // could not be settled right after) may not run its program yet, and
    // would escape a stop by name.
    for (const auto& [spec, pid] : started) processes_.terminateChild(spec.name, pid, 2000, out);
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

bool Group::stop(std::ostream& out, bool keep_state, int timeout_ms) {
  const config::InstanceConfig& config_ = processes_.config();
  const group::Paths& paths_ = processes_.paths();
  bool clean = true;
  // SIGTERM to the watchdog drains the group and stops it (what `gtpcp stop`
  // asks over the control channel); it may take the whole drain.
  if (processes_.runningPid("watchdog")) {
    clean &= processes_.terminate("watchdog", int(config_.watchdog.stop_drain_ms) + 4 * timeout_ms, out);
    out << std::left << std::setw(12) << "watchdog" << " stopped\n";
  }
  // What is left (no watchdog, or one that did not finish).
  clean &= processes_.stopDataPath(out, timeout_ms);
  if (processes_.runningPid("redis")) {
    clean &= processes_.terminate("redis", timeout_ms, out);
    out << std::left << std::setw(12) << "redis" << " stopped\n";
  }
  if (!keep_state) {
    for (const std::string& name : group::groupSegments(paths_, config_.workers)) ring::SharedSegment::remove(name);
  }
  out << "group " << config_.group << " stopped" << (keep_state ? " (shared memory kept)" : "") << "\n";
  return clean;
}

}  // namespace gtpcp::launcher
