// gtpcp: the operator's command for a group on this host.
//   gtpcp [-c gtpcp.yaml] start | stop [--keep-state] | status [--json] | restart PROCESS | check-config
//                         | session IMSI
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "tools/launcher/launcher.h"
#include "tools/launcher/sessions.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp: start, stop and inspect a gtpcp group"};
  std::string config_path = std::getenv("GTPCP_CONFIG") ? std::getenv("GTPCP_CONFIG") : "config/gtpcp.yaml";
  app.add_option("-c,--config", config_path, "gtpcp.yaml (default: $GTPCP_CONFIG or config/gtpcp.yaml)");
  app.require_subcommand(1);
  auto* start = app.add_subcommand("start", "start the forwarder and the workers, wait until they serve");
  auto* stop = app.add_subcommand("stop", "stop every process of the group");
  bool keep_state = false;
  stop->add_flag("--keep-state", keep_state, "keep the group's shared memory (sessions) for the next start");
  auto* status = app.add_subcommand("status", "processes, sessions per worker, counters");
  bool json = false;
  status->add_flag("--json", json, "machine-readable");
  auto* restart = app.add_subcommand("restart", "restart one process; a worker resumes its sessions");
  std::string process;
  restart->add_option("process", process, "forwarder, worker-0, ...")->required();
  auto* check = app.add_subcommand("check-config", "validate gtpcp.yaml and the routing document");
  auto* session = app.add_subcommand("session", "a subscriber's sessions as kept in Redis (JSON)");
  std::string imsi;
  session->add_option("imsi", imsi, "the subscriber's IMSI")->required();
  CLI11_PARSE(app, argc, argv);

  if (check->parsed()) return gtpcp::config::checkConfigMain(config_path, std::cout);
  auto config = gtpcp::config::loadInstanceConfig(config_path);
  if (!config) {
    std::cerr << config.error().toString() << "\n";
    return 1;
  }
  if (session->parsed()) {
    auto found = gtpcp::launcher::sessionsOfImsi(*config, imsi);
    if (!found) {
      std::cerr << found.error() << "\n";
      return 1;
    }
    std::cout << found->dump(2) << "\n";
    return found->empty() ? 3 : 0;
  }
  gtpcp::launcher::Group group(std::move(*config), config_path, gtpcp::launcher::selfDirectory());
  if (start->parsed()) {
    // Refuse a routing document that would not load in the workers.
    std::ostringstream check_output;
    if (gtpcp::config::checkConfigMain(config_path, check_output) != 0) {
      std::cerr << check_output.str();
      return 1;
    }
    return group.start(std::cout) ? 0 : 1;
  }
  if (stop->parsed()) return group.stop(std::cout, keep_state) ? 0 : 1;
  if (restart->parsed()) return group.restart(process, std::cout) ? 0 : 1;
  if (status->parsed()) {
    const auto s = group.status();
    if (json) {
      std::cout << s.dump(2) << "\n";
    } else {
      gtpcp::launcher::Group::printStatus(s, std::cout);
    }
    return 0;
  }
  return 2;
}
