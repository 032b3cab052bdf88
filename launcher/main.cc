// gtpcp: the operator's command for a group on this host.
//   gtpcp [-c gtpcp.yaml] start | stop [--keep-state] [--drain-ms MS] | status [--json]
//                         | restart PROCESS | drain [--off] | reload [--routing FILE]
//                         | switchover [--off] | check-config | session IMSI
// status, restart, drain, reload, switchover and stop go through the control channel the
// thread watchdog serves; status, restart and stop fall back to acting
// directly when it does not answer.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/time/clock.h"
#include "common/control/control_client.h"
#include "common/group/status.h"
#include "lib/launcher.h"
#include "lib/sessions.h"

namespace {

using gtpcp::launcher::Group;
using gtpcp::proto::ControlReply;
using gtpcp::proto::ControlRequest;

constexpr int kQuickMs = 3000;     // status, drain
constexpr int kRestartMs = 25000;  // a process stopped and started again
constexpr int kReloadMs = 15000;   // every process applies the document

// The reply, or nullopt when no watchdog runs or it did not answer (`why`).
std::optional<ControlReply> ask(const Group& group, const ControlRequest& request, int timeout_ms, std::string& why) {
  if (!group.processes().runningPid("watchdog")) {
    why = "the thread watchdog (the control server) is not running";
    return std::nullopt;
  }
  auto reply = gtpcp::control::controlRequest(group.paths().controlEndpoint(), request, timeout_ms,
                                               [&group] { return group.processes().runningPid("watchdog").has_value(); });
  if (!reply) {
    why = reply.error();
    return std::nullopt;
  }
  return *reply;
}

int print(const ControlReply& reply) {
  std::cout << reply.text();
  if (!reply.ok()) {
    std::cerr << (reply.error().empty() ? "failed" : reply.error()) << "\n";
    return 1;
  }
  return 0;
}

// "worker 1" and "worker-1" name the same process.
std::string processName(const std::vector<std::string>& words) {
  if (words.size() == 2 && words[0] == "worker") return "worker-" + words[1];
  std::string name;
  for (const auto& w : words) name += (name.empty() ? "" : " ") + w;
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gtpcp: start, stop and inspect a gtpcp group"};
  std::string config_path = std::getenv("GTPCP_CONFIG") ? std::getenv("GTPCP_CONFIG") : "config/gtpcp.yaml";
  app.add_option("-c,--config", config_path, "gtpcp.yaml (default: $GTPCP_CONFIG or config/gtpcp.yaml)");
  app.require_subcommand(1);
  auto* start = app.add_subcommand("start", "start the group's processes, wait until they serve");
  auto* stop = app.add_subcommand(
      "stop", "drain (creations get cause 73, open transactions finish) and stop every process of the group");
  bool keep_state = false;
  stop->add_flag("--keep-state", keep_state, "keep the group's shared memory (sessions) for the next start");
  uint32_t drain_ms = 0;
  stop->add_option("--drain-ms", drain_ms, "wait at most this long for open transactions (default: watchdog.stop_drain_ms)");
  auto* status = app.add_subcommand("status", "processes, sessions per worker, counters");
  bool json = false;
  status->add_flag("--json", json, "machine-readable");
  auto* restart = app.add_subcommand("restart", "restart one process; a worker resumes its sessions");
  std::vector<std::string> process;
  restart->add_option("process", process, "forwarder, worker N (or worker-N), persister, watchdog")->required();
  auto* drain = app.add_subcommand("drain", "refuse new sessions (cause 73) until drain --off");
  bool drain_off = false;
  drain->add_flag("--off", drain_off, "take new sessions again");
  auto* switchover = app.add_subcommand(
      "switchover", "withdraw the service addresses from BGP here: peers move to the other instance, this one keeps answering");
  bool switchover_off = false;
  switchover->add_flag("--off", switchover_off, "announce them again (after bgp.return_hold_ms of health)");
  auto* reload = app.add_subcommand("reload", "validate the routing document and apply it to every process");
  std::string routing_path;
  reload->add_option("--routing", routing_path, "another routing document (default: the one gtpcp.yaml names, read again)");
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
  Group group(std::move(*config), config_path, gtpcp::group::selfDirectory());
  std::string why;
  if (start->parsed()) {
    // Refuse a routing document that would not load in the workers.
    std::ostringstream check_output;
    if (gtpcp::config::checkConfigMain(config_path, check_output) != 0) {
      std::cerr << check_output.str();
      return 1;
    }
    return group.start(std::cout) ? 0 : 1;
  }
  if (stop->parsed()) {
    ControlRequest request;
    request.mutable_stop()->set_drain_ms(drain_ms);
    const uint32_t bound = drain_ms != 0 ? drain_ms : group.config().watchdog.stop_drain_ms;
    const auto watchdog_pid = group.processes().runningPid("watchdog");
    int rc = 0;
    if (auto reply = ask(group, request, int(bound) + 30000, why)) {
      rc = print(*reply);
      // The watchdog exits once it replied.
      const uint64_t deadline = gtpcp::monotonicNs() + 5'000'000'000;
      while (watchdog_pid && group.processes().runningPid("watchdog") && gtpcp::monotonicNs() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } else if (watchdog_pid) {
      std::cerr << why << "; stopping the processes directly\n";
    }
    // The rest: a process the watchdog did not stop, the embedded Redis, the
    // shared memory.
    return group.stop(std::cout, keep_state) && rc == 0 ? 0 : 1;
  }
  if (restart->parsed()) {
    const std::string name = processName(process);
    ControlRequest request;
    request.mutable_restart()->set_process(name);
    if (name == "watchdog") {
      const auto pid = group.processes().runningPid("watchdog");
      const uint64_t starts = group.processes().starts("watchdog");
      if (auto reply = ask(group, request, kQuickMs, why)) {
        if (print(*reply) != 0) return 1;
        // It executes itself again in the same process.
        if (!group.processes().waitServing("watchdog", *pid, 10000, std::cerr, starts)) return 1;
        std::cout << "watchdog     pid " << *pid << " serving\n";
        return 0;
      }
      if (pid) std::cerr << why << "; replacing it directly\n";
      return group.processes().restart(name, std::cout) ? 0 : 1;
    }
    if (auto reply = ask(group, request, kRestartMs, why)) return print(*reply);
    return group.processes().restart(name, std::cout) ? 0 : 1;
  }
  if (drain->parsed()) {
    ControlRequest request;
    request.mutable_drain()->set_on(!drain_off);
    if (auto reply = ask(group, request, kQuickMs, why)) return print(*reply);
    std::cerr << why << "\n";
    return 1;
  }
  if (switchover->parsed()) {
    ControlRequest request;
    request.mutable_switchover()->set_on(!switchover_off);
    if (auto reply = ask(group, request, int(group.config().bgp.lease_ms) + kQuickMs, why)) return print(*reply);
    std::cerr << why << "\n";
    return 1;
  }
  if (reload->parsed()) {
    ControlRequest request;
    if (!routing_path.empty()) request.mutable_reload()->set_routing_path(std::filesystem::absolute(routing_path).string());
    else request.mutable_reload();
    if (auto reply = ask(group, request, kReloadMs, why)) return print(*reply);
    std::cerr << why << "\n";
    return 1;
  }
  if (status->parsed()) {
    nlohmann::json s;
    ControlRequest request;
    request.mutable_status();
    if (auto reply = ask(group, request, kQuickMs, why); reply && reply->ok()) {
      s = nlohmann::json::parse(reply->status_json(), nullptr, false);
      s["via"] = "control channel";
    }
    if (s.is_null() || s.is_discarded()) {
      s = gtpcp::group::groupStatus(group.processes());
      s["via"] = "shared memory (" + why + ")";
    }
    if (json) {
      std::cout << s.dump(2) << "\n";
    } else {
      gtpcp::group::printStatus(s, std::cout);
    }
    return 0;
  }
  return 2;
}
