// gtpcp-forwarder: the group's GTP-C sockets. Wires configuration to
// forwarder/lib and runs until SIGTERM.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/group/affinity.h"
#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "common/control/heartbeat.h"
#include "lib/forwarder.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-forwarder: receives and sends the group's GTP-C datagrams"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  bool take_over = false;
  app.add_flag("--take-over", take_over,
               "a planned restart: take the sockets over from the forwarder serving now (gtpcp restart forwarder)");
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "forwarder", exit_code);
  if (!config) return exit_code;

  gtpcp::forwarder::ForwarderOptions options;
  options.paths = gtpcp::group::pathsOf(*config);
  options.workers = config->workers;
  const auto rings = gtpcp::group::ringSizesOf(*config);
  options.priority_slots = rings.priority;
  options.new_slots = rings.fresh;
  options.egress_slots = rings.egress;
  options.batch = config->rings.batch;
  options.socket_buffer_bytes = static_cast<int>(config->gtpc.socket_buffer_bytes);
  options.sockets = gtpcp::group::socketPlanOf(*config);
  options.freebind = config->bgp.mode == gtpcp::config::InstanceConfig::Bgp::Mode::kFrr;
  // The launcher settles the group's Recovery (kept in Redis) at each start;
  // without it (the forwarder started alone), the configured one.
  options.recovery = config->gtpc.recovery;
  if (std::ifstream in(options.paths.recoveryFile()); in) {
    int v = -1;
    if (in >> v && v >= 0 && v <= 255) options.recovery = static_cast<uint8_t>(v);
  }
  options.creations_per_peer = config->overload.creations_per_peer;
  options.creations_burst = config->overload.creations_burst;
  options.max_creation_wait_ms = config->overload.max_creation_wait_ms;
  // After a `gtpcp reload`, the document in force, not the configuration's.
  const auto routing_source =
      gtpcp::group::routingToLoad(gtpcp::group::pathsOf(*config).controlSegment(), config->routing.resolved);
  auto routing = gtpcp::config::loadRoutingDocument(routing_source.path);
  if (!routing) {
    spdlog::critical("{}", routing.error().toString());
    gtpcp::log::shutdown();
    return 1;
  }
  options.routing = &*routing;
  options.routing_generation = routing_source.generation;

  if (auto e = gtpcp::group::pinToCpu(config->cpu.forwarder); !e.empty()) {
    spdlog::critical("cpu.forwarder: {}", e);
    gtpcp::log::shutdown();
    return 1;
  }
  options.take_over = take_over;
  auto forwarder = gtpcp::forwarder::Forwarder::open(options);
  if (!forwarder) return gtpcp::group::cannotStart(forwarder.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  signal(SIGPIPE, SIG_IGN);
  for (const auto& a : options.sockets.sockets)
    spdlog::info("serving GTP-C on {}{}", a.toString(),
                 (*forwarder)->tookOver() ? " (sockets taken over from the forwarder before)" : "");
  if (!(*forwarder)->notice().empty()) spdlog::warn("{}", (*forwarder)->notice());
  if (!(*forwarder)->creationsSteered())
    spdlog::warn("the kernel refused SO_ATTACH_REUSEPORT_CBPF: session creations share the sockets of "
                 "established sessions, and a surge of them delays the others");
  spdlog::info("group {} with {} workers", config->group, config->workers);
  // Beats for the thread watchdog; without it the process still runs.
  auto heartbeat = gtpcp::control::HeartbeatSender::open(gtpcp::group::pathsOf(*config).heartbeatEndpoint(), "forwarder");
  if (heartbeat) {
    (*forwarder)->setHeartbeat(heartbeat->get());
  } else {
    spdlog::warn("{}", heartbeat.error());
  }
  (*forwarder)->run(stop);
  if (!(*forwarder)->handoverFailure().empty())
    spdlog::warn("the last hand-over to a successor did not complete: {}", (*forwarder)->handoverFailure());
  if ((*forwarder)->handedOver()) {
    spdlog::info("handed the sockets over to the successor: exiting");
    gtpcp::log::shutdown();
    return 0;
  }
  spdlog::info("stopped");
  gtpcp::log::shutdown();
  return 0;
}
