#include "common/group/paths.h"

#include "common/group/process_status_shm.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

const char* toString(ProcessState s) noexcept {
  switch (s) {
    case ProcessState::kAbsent: return "absent";
    case ProcessState::kStarting: return "starting";
    case ProcessState::kServing: return "serving";
    case ProcessState::kStopping: return "stopping";
    case ProcessState::kStopped: return "stopped";
  }
  return "unknown";
}

Paths::Paths(std::string group, std::string run_dir, std::string instance, std::string log_dir)
    : group_(std::move(group)),
      run_dir_(std::move(run_dir)),
      instance_(std::move(instance)),
      log_dir_(std::move(log_dir)) {}

std::string Paths::shm(std::string_view object) const {
  return ring::shmName(group_ + "." + instance_, object);
}

std::string Paths::forwarderSegment() const { return shm("fwd"); }
std::string Paths::gatewayTableSegment() const { return shm("gateways"); }

std::string Paths::workerSegment(unsigned worker) const {
  return shm("w" + std::to_string(worker));
}

std::string Paths::ring(unsigned worker, RingKind kind) const {
  const char* suffix = "";
  switch (kind) {
    case RingKind::kPriority: suffix = ".prio"; break;
    case RingKind::kNew: suffix = ".new"; break;
    case RingKind::kEgress: suffix = ".egress"; break;
    case RingKind::kPersist: suffix = ".persist"; break;
    case RingKind::kLookup: suffix = ".lookup"; break;
    case RingKind::kRestore: suffix = ".restore"; break;
  }
  return shm("w" + std::to_string(worker) + suffix);
}

std::string Paths::workerDoorbell(unsigned worker) const {
  return shm("w" + std::to_string(worker) + ".bell");
}

std::string Paths::persisterSegment() const { return shm("persister"); }
std::string Paths::watchdogSegment() const { return shm("watchdog"); }
std::string Paths::bgpWatchdogSegment() const { return shm("bgp-watchdog"); }
std::string Paths::bridgeSegment() const { return shm("bgpd-bridge"); }
std::string Paths::controlSegment() const { return shm("control"); }
std::string Paths::consoleSegment() const { return shm("console"); }

std::string Paths::forwarderBellSocket() const { return run_dir_ + "/forwarder.bell"; }
std::string Paths::forwarderHandoverSocket() const { return run_dir_ + "/forwarder.handover"; }
std::string Paths::persisterBellSocket() const { return run_dir_ + "/persister.bell"; }
std::string Paths::embeddedRedisDir() const { return run_dir_ + "/redis"; }
std::string Paths::recoveryFile() const { return run_dir_ + "/recovery"; }
std::string Paths::heartbeatEndpoint() const { return "ipc://" + run_dir_ + "/heartbeats.ipc"; }
std::string Paths::watchdogStatusFile() const { return run_dir_ + "/watchdog.json"; }
std::string Paths::bgpWatchdogStatusFile() const { return run_dir_ + "/bgp-watchdog.json"; }
std::string Paths::bridgeStatusFile() const { return run_dir_ + "/bgpd-bridge.json"; }
std::string Paths::controlEndpoint() const { return "ipc://" + run_dir_ + "/control.ipc"; }
std::string Paths::lockFile(std::string_view process) const { return run_dir_ + "/" + std::string(process) + ".lock"; }
std::string Paths::pidFile(std::string_view process) const {
  return run_dir_ + "/" + std::string(process) + ".pid";
}
std::string Paths::logFile(std::string_view process) const {
  return (log_dir_.empty() ? run_dir_ : log_dir_) + "/" + std::string(process) + ".log";
}
std::string Paths::workerName(unsigned worker) { return "worker-" + std::to_string(worker); }

}  // namespace gtpcp::group
