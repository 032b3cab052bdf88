// gtpcp-bgp-watchdog: the group's health verdict for BGP, with hold-downs.
// Wires configuration to watchdog/lib/bgp_runtime.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/group/from_config.h"
#include "common/group/process_control.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "lib/bgp_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-bgp-watchdog: decides whether this instance announces the group's service addresses"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "bgp-watchdog", exit_code);
  if (!config) return exit_code;
  gtpcp::group::ProcessControl group(*config, args.config_path, gtpcp::group::selfDirectory());
  auto runtime = gtpcp::watchdog::BgpWatchdogRuntime::open(group, gtpcp::watchdog::bgpWatchdogSettings(*config));
  if (!runtime) return gtpcp::group::cannotStart(runtime.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  spdlog::info("judging the group every {} ms (withdraw hold {} ms, return hold {} ms)", config->bgp.check_interval_ms,
               config->bgp.withdraw_hold_ms, config->bgp.return_hold_ms);
  (*runtime)->run(stop);
  spdlog::info("stopped");
  gtpcp::log::shutdown();
  return 0;
}
