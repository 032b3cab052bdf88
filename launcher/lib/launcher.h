// `gtpcp start` and `gtpcp stop` of a group on this host: the control
// segment made, the embedded Redis started and the group's Recovery settled
// before the processes that need them, every process waited for until it
// serves; and on stop, the processes, the embedded Redis and the shared
// memory gone. Process control itself (spawn, pid and lock files, replace)
// is common/group/process_control.h, shared with the thread watchdog.
#pragma once

#include <ostream>
#include <string>

#include "common/config/instance.h"
#include "common/group/process_control.h"

namespace gtpcp::launcher {

class Group {
 public:
  // `config_path` as given; `bin_dir` holds (or leads to) the gtpcp binaries.
  Group(config::InstanceConfig config, std::string config_path, std::string bin_dir)
      : processes_(std::move(config), std::move(config_path), std::move(bin_dir)) {}

  const config::InstanceConfig& config() const noexcept { return processes_.config(); }
  const group::Paths& paths() const noexcept { return processes_.paths(); }
  group::ProcessControl& processes() noexcept { return processes_; }
  const group::ProcessControl& processes() const noexcept { return processes_; }

  // Starts every process not already running and waits until all serve.
  // Prints one line per process to `out`. False (after stopping what it
  // started) when one fails to come up within `timeout_ms`.
  bool start(std::ostream& out, int timeout_ms = 10000);
  // SIGTERM to every process, SIGKILL after `timeout_ms`; removes the shared
  // memory of the group unless `keep_state`.
  bool stop(std::ostream& out, bool keep_state = false, int timeout_ms = 5000);

 private:
  group::ProcessControl processes_;
};

}  // namespace gtpcp::launcher
