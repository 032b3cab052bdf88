// gtpcp-console: the management process. Serves the group's metrics, probes
// and status on management.listen; wires configuration to console/lib and
// runs until SIGTERM.
#include <CLI/CLI.hpp>

#include "common/group/process_main.h"
#include "common/log/log.h"
#include "lib/console_runtime.h"

#ifndef GTPCP_VERSION
#define GTPCP_VERSION "unknown"
#endif
#ifndef GTPCP_COMMIT
#define GTPCP_COMMIT "unknown"
#endif

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-console: the group's metrics, health and status over HTTP"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "console", exit_code);
  if (!config) return exit_code;
  auto runtime = gtpcp::console::ConsoleRuntime::open(*config, args.config_path, {GTPCP_VERSION, GTPCP_COMMIT});
  if (!runtime) return gtpcp::group::cannotStart(runtime.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  std::string listening;
  for (const std::string& l : (*runtime)->listening()) listening += (listening.empty() ? "" : ", ") + l;
  spdlog::info("serving /metrics, /healthz, /readyz and /api/status on {}", listening);
  (*runtime)->run(stop);
  spdlog::info("stopped after {} scrapes", (*runtime)->shm().counters.scrapes.load());
  gtpcp::log::shutdown();
  return 0;
}
