// gtpcp-persister: the workers' session changes, batched into Redis. Wires
// configuration to persister/lib and runs until SIGTERM.
#include <signal.h>

#include <atomic>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "common/group/process_main.h"
#include "common/log/log.h"
#include "common/control/heartbeat.h"
#include "lib/persister_runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"gtpcp-persister: session changes into Redis"};
  gtpcp::group::ProcessArgs args;
  gtpcp::group::addProcessOptions(app, args);
  int exit_code = 0;
  auto config = gtpcp::group::startProcess(app, args, argc, argv, "persister", exit_code);
  if (!config) return exit_code;
  const std::string& config_path = args.config_path;
  using Mode = gtpcp::config::InstanceConfig::Storage::Mode;
  if (config->storage.mode == Mode::kOff) {
    std::cerr << config_path << ": storage.mode: off, so there is nothing for gtpcp-persister to do\n";
    return 1;
  }

  gtpcp::persister::PersisterOptions options;
  options.paths = gtpcp::group::pathsOf(*config);
  options.group = config->group;
  options.instance = config->instance;
  options.share = config->instance_index;
  options.share_count = config->group_size;
  options.workers = config->workers;
  options.persist_slots = gtpcp::group::ringSizesOf(*config).persist;
  // The embedded Redis has no replica: nothing to wait for.
  if (config->storage.persist == gtpcp::config::InstanceConfig::Storage::Persist::kSync &&
      config->storage.mode != Mode::kEmbedded) {
    options.wait_replicas = config->storage.sync_replicas;
    options.wait_ms = config->storage.sync_wait_ms;
  }
  auto& redis = options.redis;
  switch (config->storage.mode) {
    case Mode::kEmbedded:
      redis.mode = gtpcp::persister::RedisMode::kSingle;
      redis.endpoints.push_back({"127.0.0.1", config->storage.embedded_port});
      break;
    case Mode::kSingle: redis.mode = gtpcp::persister::RedisMode::kSingle; break;
    case Mode::kCluster: redis.mode = gtpcp::persister::RedisMode::kCluster; break;
    case Mode::kSentinel: redis.mode = gtpcp::persister::RedisMode::kSentinel; break;
    case Mode::kOff: break;
  }
  for (const auto& s : config->storage.servers) redis.endpoints.push_back({s.address, s.port});
  redis.master_name = config->storage.sentinel_master;
  if (std::string e = gtpcp::persister::validate(redis); !e.empty())
    return gtpcp::group::cannotStart(config_path + ": storage: " + e);

  auto persister = gtpcp::persister::PersisterRuntime::open(options);
  if (!persister) return gtpcp::group::cannotStart(persister.error());
  const std::atomic<bool>& stop = gtpcp::group::stopOnSignals();
  spdlog::info("started: {} channels toward Redis", config->workers);
  // Beats for the thread watchdog; without it the process still runs.
  auto heartbeat = gtpcp::control::HeartbeatSender::open(gtpcp::group::pathsOf(*config).heartbeatEndpoint(), "persister");
  if (heartbeat) {
    (*persister)->setHeartbeat(heartbeat->get());
  } else {
    spdlog::warn("{}", heartbeat.error());
  }
  (*persister)->run(stop);
  spdlog::info("stopped; {} changes written in {} batches",
               (*persister)->shm().counters.changes_read.load(), (*persister)->shm().counters.batches_written.load());
  gtpcp::log::shutdown();
  return 0;
}
