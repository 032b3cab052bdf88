// gtpcp-thread-watchdog, apart from its main: the heartbeat socket, the
// Supervisor's verdicts carried out through the group's process control
// (common/group/process_control.h, which knows how to start each process),
// and what it did written for gtpcp status.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <tl/expected.hpp>
#include <zmq.hpp>

#include "common/ring/segment.h"
#include "proto/control.pb.h"
#include "common/group/process_control.h"
#include "control_server.h"
#include "supervisor.h"
#include "common/group/watchdog_shm.h"

namespace gtpcp::watchdog {

class WatchdogRuntime {
 public:
  static tl::expected<std::unique_ptr<WatchdogRuntime>, std::string> open(group::ProcessControl& group,
                                                                          const SupervisorSettings& settings,
                                                                          const ControlSettings& control);
  enum class Exit : uint8_t { kStopped, kRestart };
  // Supervises and serves the control channel. `stop` (SIGTERM) drains and
  // stops the group, as `gtpcp stop` does. kRestart: the operator asked for a
  // new watchdog (its main executes itself again).
  Exit run(const std::atomic<bool>& stop);

 private:
  WatchdogRuntime(group::ProcessControl& group, const SupervisorSettings& settings)
      : group_(group), supervisor_(settings) {}
  void receive(uint64_t now_ns);
  void check(uint64_t now_ns);
  void writeStatus(uint64_t now_ns);

  group::ProcessControl& group_;
  Supervisor supervisor_;
  std::optional<ring::SharedSegment> segment_;
  WatchdogShm* shm_ = nullptr;
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::unique_ptr<ControlServer> control_;
  proto::Heartbeat beat_;
  uint64_t given_up_ = 0;
};

}  // namespace gtpcp::watchdog
