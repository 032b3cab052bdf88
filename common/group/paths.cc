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

Paths::Paths(std::string group, std::string run_dir)
    : group_(std::move(group)), run_dir_(std::move(run_dir)) {}

std::string Paths::forwarderSegment() const { return ring::shmName(group_, "fwd"); }

std::string Paths::workerSegment(unsigned worker) const {
  return ring::shmName(group_, "w" + std::to_string(worker));
}

std::string Paths::ring(unsigned worker, RingKind kind) const {
  const char* suffix = kind == RingKind::kPriority ? ".prio"
                       : kind == RingKind::kNew    ? ".new"
                       : kind == RingKind::kEgress ? ".egress"
                                                   : ".persist";
  return ring::shmName(group_, "w" + std::to_string(worker) + suffix);
}

std::string Paths::workerDoorbell(unsigned worker) const {
  return ring::shmName(group_, "w" + std::to_string(worker) + ".bell");
}

std::string Paths::persisterSegment() const { return ring::shmName(group_, "persister"); }

std::string Paths::forwarderDoorbellSocket() const { return run_dir_ + "/forwarder.bell"; }
std::string Paths::persisterDoorbellSocket() const { return run_dir_ + "/persister.bell"; }
std::string Paths::embeddedRedisDir() const { return run_dir_ + "/redis"; }
std::string Paths::recoveryFile() const { return run_dir_ + "/recovery"; }
std::string Paths::pidFile(std::string_view process) const {
  return run_dir_ + "/" + std::string(process) + ".pid";
}
std::string Paths::logFile(std::string_view process) const {
  return run_dir_ + "/" + std::string(process) + ".log";
}
std::string Paths::workerName(unsigned worker) { return "worker-" + std::to_string(worker); }

}  // namespace gtpcp::group
