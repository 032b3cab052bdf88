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
#include "common/group/from_config.h"
#include "common/log/log.h"
#include "workers/lib/worker_runtime.h"

namespace {
std::atomic<bool> g_stop{false};
void onSignal(int) { g_stop.store(true, std::memory_order_relaxed); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-worker: GTP-C sessions and their translation"};
  std::string config_path = "config/gtpcp.yaml";
  unsigned index = 0;
  bool check = false;
  app.add_option("-c,--config", config_path, "gtpcp.yaml");
  app.add_option("-i,--index", index, "worker index, 0..workers-1");
  app.add_flag("--check-config", check, "validate the configuration and the routing document, then exit");
  CLI11_PARSE(app, argc, argv);
  if (check) return gtpcp::config::checkConfigMain(config_path, std::cout);

  auto config = gtpcp::config::loadInstanceConfig(config_path);
  if (!config) {
    std::cerr << config.error().toString() << "\n";
    return 1;
  }
  if (index >= config->workers) {
    std::cerr << config_path << ": workers: " << config->workers << ", so --index " << index
              << " names no worker\n";
    return 1;
  }
  auto routing = gtpcp::config::loadRoutingDocument(config->routing.resolved);
  if (!routing) {
    std::cerr << routing.error().toString() << "\n";
    return 1;
  }
  const std::string name = gtpcp::group::Paths::workerName(index);
  gtpcp::log::init(name, gtpcp::config::logLevelName(config->log.level));

  gtpcp::worker::WorkerOptions options;
  options.paths = gtpcp::group::pathsOf(*config);
  options.workers = config->workers;
  options.index = index;
  const auto rings = gtpcp::group::ringSizesOf(*config);
  options.priority_slots = rings.priority;
  options.new_slots = rings.fresh;
  options.egress_slots = rings.egress;
  options.per_partition = config->sessions.per_partition.effective;
  options.transactions = config->sessions.transactions.effective;
  options.answer_cache_bytes = config->sessions.answer_cache_bytes;
  options.batch = config->rings.batch;
  options.proxy.workers = config->workers;
  options.proxy.index = index;
  options.proxy.sockets = gtpcp::group::socketPlanOf(*config);
  options.proxy.transaction_timeout_ns = uint64_t{config->timers.transaction_lifetime_ms} * 1'000'000;
  options.proxy.t3_ns = uint64_t{config->timers.t3_ms} * 1'000'000;
  options.proxy.n3 = config->timers.n3;

  if (auto e = gtpcp::group::pinToCpu(config->workerCpu(index)); !e.empty()) {
    spdlog::critical("cpu.workers[{}]: {}", index, e);
    gtpcp::log::shutdown();
    return 1;
  }
  auto worker = gtpcp::worker::WorkerRuntime::open(options, *routing);
  if (!worker) {
    spdlog::critical("cannot start: {}", worker.error());
    gtpcp::log::shutdown();
    return 1;
  }
  signal(SIGTERM, onSignal);
  signal(SIGINT, onSignal);
  spdlog::info("{} worker {}/{}: {} sessions held", (*worker)->adopted() ? "resumed" : "started", index,
               config->workers, (*worker)->sessions().active());
  (*worker)->run(g_stop);
  spdlog::info("stopped with {} sessions held", (*worker)->sessions().active());
  gtpcp::log::shutdown();
  return 0;
}
