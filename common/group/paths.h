// Every name an instance of a group uses: shared-memory objects, sockets and
// files under the run directory. Two instances (an active and a standby of
// one group on one host, parallel tests) differ in instance name or group
// name, and in run directory, and so share nothing but their storage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gtpcp::group {

// kPersist: a worker's session changes toward the persister. kLookup: a
// worker's questions to the storage (a session by TEID, a partition's stored
// TEIDs); kRestore: the persister's answers (common/session/lookup.h).
enum class RingKind : uint8_t { kPriority, kNew, kEgress, kPersist, kLookup, kRestore };

class Paths {
 public:
  // `log_dir`: where the processes' log files go (empty: the run directory).
  Paths(std::string group, std::string run_dir, std::string instance = "a", std::string log_dir = "");

  const std::string& group() const noexcept { return group_; }
  const std::string& runDir() const noexcept { return run_dir_; }
  const std::string& instance() const noexcept { return instance_; }

  // Shared-memory object names ("/gtpcp.<group>.<instance>.<object>").
  std::string forwarderSegment() const;
  std::string gatewayTableSegment() const;  // the forwarder's health checks and Recovery, for the workers
  std::string workerSegment(unsigned worker) const;
  std::string ring(unsigned worker, RingKind kind) const;
  std::string workerDoorbell(unsigned worker) const;
  std::string persisterSegment() const;
  std::string watchdogSegment() const;
  std::string bgpWatchdogSegment() const;  // the BGP decision and its lease (common/group/bgp_shm.h)
  std::string bridgeSegment() const;       // what FRR was told and reports
  std::string controlSegment() const;  // the control server's commands to every process
  std::string consoleSegment() const;  // the management process's liveness and counters

  // Files and sockets in the run directory.
  // unix seqpacket socket a running forwarder hands its sockets over on (forwarder/lib/handover.h)
  std::string forwarderHandoverSocket() const;
  std::string forwarderBellSocket() const;  // unix datagram socket the forwarder sleeps on (common/ring/bell.h)
  std::string persisterBellSocket() const;  // and the persister
  std::string embeddedRedisDir() const;         // the embedded redis-server's data and socket
  std::string recoveryFile() const;             // the group's Recovery as the launcher settled it
  std::string heartbeatEndpoint() const;        // ZeroMQ: every process's heartbeats to the thread watchdog
  std::string watchdogStatusFile() const;       // what the thread watchdog did, for gtpcp status
  std::string bgpWatchdogStatusFile() const;    // the bgp-watchdog's decisions, for gtpcp status
  std::string bridgeStatusFile() const;         // FRR's BGP neighbours and BFD peers, for gtpcp status
  std::string controlEndpoint() const;          // ZeroMQ: gtpcp's commands to the control server
  std::string lockFile(std::string_view process) const;  // held while a process is being replaced
  std::string pidFile(std::string_view process) const;
  std::string logFile(std::string_view process) const;  // in the log directory

  // "forwarder", "worker-0", ...
  static std::string workerName(unsigned worker);

 private:
  std::string shm(std::string_view object) const;

  std::string group_;
  std::string run_dir_;
  std::string instance_;
  std::string log_dir_;
};

}  // namespace gtpcp::group
