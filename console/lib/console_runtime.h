// gtpcp-console's process: its segment (liveness record and counters), the
// collector and the HTTP server on management.listen, and a loop that
// beats for the thread watchdog until SIGTERM.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <tl/expected.hpp>

#include "common/config/instance.h"
#include "common/control/heartbeat.h"
#include "common/group/console_shm.h"
#include "common/group/process_control.h"
#include "common/ring/segment.h"
#include "collector.h"
#include "console_server.h"

namespace gtpcp::console {

class ConsoleRuntime {
 public:
  static tl::expected<std::unique_ptr<ConsoleRuntime>, std::string> open(const config::InstanceConfig& config,
                                                                         const std::string& config_path,
                                                                         BuildInfo build);
  ~ConsoleRuntime();

  void run(const std::atomic<bool>& stop);
  const ConsoleShm& shm() const noexcept { return *shm_; }
  const std::vector<std::string>& listening() const noexcept { return listen_; }

 private:
  explicit ConsoleRuntime(group::ProcessControl processes);

  group::ProcessControl processes_;
  std::optional<ring::SharedSegment> segment_;
  ConsoleShm* shm_ = nullptr;
  std::unique_ptr<control::HeartbeatSender> heartbeat_;
  std::unique_ptr<ConsoleServer> server_;
  std::vector<std::string> listen_;
};

}  // namespace gtpcp::console
