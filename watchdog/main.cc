// gtpcp-thread-watchdog: replaces a process of the group that died or whose
// main loop stopped beating. Wires configuration to watchdog/lib.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "common/group/process_control.h"
#include "lib/watchdog_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-thread-watchdog: replaces dead or hung processes of the group"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "watchdog", exit_code);
  if (!config) return exit_code;

  gtpcp::group::ProcessControl group(*config, args.config_path, gtpcp::group::selfDirectory());
  gtpcp::watchdog::SupervisorSettings settings;
  settings.timeout_ns = uint64_t{config->watchdog.timeout_ms} * 1'000'000;
  settings.max_restarts = config->watchdog.max_restarts;
  gtpcp::watchdog::ControlSettings control;
  control.stop_drain_ms = config->watchdog.stop_drain_ms;
  control.bgp = config->bgp.mode == gtpcp::config::InstanceConfig::Bgp::Mode::kFrr;
  // The bgp-watchdog sees the request within one of its turns and the bridge
  // applies it within one of its own; past this, something is wrong.
  control.withdraw_wait_ms = config->bgp.lease_ms + 1000;
  control.withdraw_settle_ms = config->bgp.stop_settle_ms;
  auto runtime = gtpcp::watchdog::WatchdogRuntime::open(group, settings, control);
  if (!runtime) return gtpcp::group::cannotStart(runtime.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  spdlog::info("watching {} processes; a silent one is replaced after {} ms", group.processes().size() - 1,
               config->watchdog.timeout_ms);
  const auto exit = (*runtime)->run(stop);
  if (exit == gtpcp::watchdog::WatchdogRuntime::Exit::kRestart) {
    // `gtpcp restart watchdog`: a new image in the same process, so that the
    // launcher's pid file stays right; sockets and segments close first.
    runtime->reset();
    gtpcp::log::shutdown();
    execv("/proc/self/exe", argv);
    std::cerr << "gtpcp-thread-watchdog: cannot execute itself again: " << std::strerror(errno) << "\n";
    return 1;
  }
  spdlog::info("stopped");
  return 0;
}
