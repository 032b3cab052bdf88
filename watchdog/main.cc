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
  CLI11_PARSE(app, argc, argv);
  if (args.check) return gtpcp::config::checkConfigMain(args.config_path, std::cout);
  auto config = gtpcp::group::loadProcessConfig(args.config_path);
  if (!config) return 1;
  gtpcp::log::init("watchdog", gtpcp::config::logLevelName(config->log.level),
                   gtpcp::group::pathsOf(*config).logFile("watchdog"));

  gtpcp::group::ProcessControl group(*config, args.config_path, gtpcp::group::selfDirectory());
  gtpcp::watchdog::SupervisorSettings settings;
  settings.timeout_ns = uint64_t{config->watchdog.timeout_ms} * 1'000'000;
  settings.max_restarts = config->watchdog.max_restarts;
  gtpcp::watchdog::ControlSettings control;
  control.stop_drain_ms = config->watchdog.stop_drain_ms;
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
