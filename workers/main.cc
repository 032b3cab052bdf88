// gtpcp-worker --index I: the sessions of the partitions p % W == I. Wires
// configuration to workers/lib and runs until SIGTERM.
#include <signal.h>

#include <atomic>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/config/routing.h"
#include "common/group/affinity.h"
#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "common/control/heartbeat.h"
#include "lib/worker_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-worker: GTP-C sessions and their translation"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  unsigned index = 0;
  app.add_option("-i,--index", index, "worker index, 0..workers-1");
  CLI11_PARSE(app, argc, argv);
  if (args.check) return gtpcp::config::checkConfigMain(args.config_path, std::cout);
  const std::string& config_path = args.config_path;
  auto config = gtpcp::group::loadProcessConfig(config_path);
  if (!config) return 1;
  if (index >= config->workers) {
    std::cerr << config_path << ": workers: " << config->workers << ", so --index " << index
              << " names no worker\n";
    return 1;
  }
  // After a `gtpcp reload`, the document in force, not the configuration's.
  const auto routing_source =
      gtpcp::group::routingToLoad(gtpcp::group::pathsOf(*config).controlSegment(), config->routing.resolved);
  auto routing = gtpcp::config::loadRoutingDocument(routing_source.path);
  if (!routing) {
    std::cerr << routing.error().toString() << "\n";
    return 1;
  }
  const std::string name = gtpcp::group::Paths::workerName(index);
  gtpcp::group::initLog(*config, name);

  gtpcp::worker::WorkerOptions options;
  options.paths = gtpcp::group::pathsOf(*config);
  options.workers = config->workers;
  options.index = index;
  const auto rings = gtpcp::group::ringSizesOf(*config);
  options.priority_slots = rings.priority;
  options.new_slots = rings.fresh;
  options.egress_slots = rings.egress;
  options.per_partition = config->sessions.per_partition.effective;
  options.share = config->instance_index;
  options.share_count = config->group_size;
  options.transactions = config->sessions.transactions.effective;
  options.answer_cache_bytes = config->sessions.answer_cache_bytes;
  options.batch = config->rings.batch;
  options.persist = gtpcp::group::persists(*config);
  options.persist_slots = rings.persist;
  options.sync = options.persist && config->storage.persist == gtpcp::config::InstanceConfig::Storage::Persist::kSync;
  options.proxy.workers = config->workers;
  options.proxy.index = index;
  options.proxy.sockets = gtpcp::group::socketPlanOf(*config);
  options.proxy.transaction_timeout_ns = uint64_t{config->timers.transaction_lifetime_ms} * 1'000'000;
  options.proxy.t3_ns = uint64_t{config->timers.t3_ms} * 1'000'000;
  options.proxy.n3 = config->timers.n3;
  options.routing_generation = routing_source.generation;

  if (auto e = gtpcp::group::pinToCpu(config->workerCpu(index)); !e.empty()) {
    spdlog::critical("cpu.workers[{}]: {}", index, e);
    gtpcp::log::shutdown();
    return 1;
  }
  auto worker = gtpcp::worker::WorkerRuntime::open(options, *routing);
  if (!worker) return gtpcp::group::cannotStart(worker.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  spdlog::info("{} worker {}/{}: {} sessions held", (*worker)->adopted() ? "resumed" : "started", index,
               config->workers, (*worker)->sessions().active());
  // Beats for the thread watchdog; without it the process still runs.
  auto heartbeat = gtpcp::control::HeartbeatSender::open(gtpcp::group::pathsOf(*config).heartbeatEndpoint(), gtpcp::group::Paths::workerName(index));
  if (heartbeat) {
    (*worker)->setHeartbeat(heartbeat->get());
  } else {
    spdlog::warn("{}", heartbeat.error());
  }
  (*worker)->run(stop);
  spdlog::info("stopped with {} sessions held", (*worker)->sessions().active());
  gtpcp::log::shutdown();
  return 0;
}
