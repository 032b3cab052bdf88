// gtpcp-bgpd-bridge: turns the bgp-watchdog's decisions into this host's FRR
// configuration. Wires configuration to bgpd-bridge/lib.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/group/from_config.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "lib/bridge_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-bgpd-bridge: announces or withdraws the group's service addresses through FRR"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "bgpd-bridge", exit_code);
  if (!config) return exit_code;
  auto frr = std::make_unique<gtpcp::bridge::VtyshFrr>(gtpcp::bridge::vtyshSettings(*config));
  auto runtime = gtpcp::bridge::BridgeRuntime::open(*config, std::move(frr));
  if (!runtime) return gtpcp::group::cannotStart(runtime.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  spdlog::info("driving FRR through {} for AS {}", config->bgp.vtysh.resolved, config->bgp.local_as);
  (*runtime)->run(stop);
  spdlog::info("stopped");
  gtpcp::log::shutdown();
  return 0;
}
