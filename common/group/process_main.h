// What the main of every gtpcp process does before its own work: the
// command line's common options, --check-config, the configuration, and the
// stop flag that SIGTERM and SIGINT set.
#pragma once

#include <signal.h>

#include <atomic>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/config/check.h"
#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "common/log/log.h"

namespace gtpcp::group {

struct ProcessArgs {
  std::string config_path = "config/gtpcp.yaml";
  bool check = false;
};

inline void addProcessOptions(CLI::App& app, ProcessArgs& args) {
  app.add_option("-c,--config", args.config_path, "gtpcp.yaml");
  app.add_flag("--check-config", args.check, "validate the configuration and the routing document, then exit");
}

// The configuration, or nullopt after printing every error with its file and line.
inline std::optional<config::InstanceConfig> loadProcessConfig(const std::string& path) {
  auto config = config::loadInstanceConfig(path);
  if (!config) {
    std::cerr << config.error().toString() << "\n";
    return std::nullopt;
  }
  return std::move(*config);
}

// Opens the log of process `log_name` as the log section of `config` says:
// its file in the log directory, or stderr.
inline void initLog(const config::InstanceConfig& config, const std::string& log_name) {
  using Log = config::InstanceConfig::Log;
  log::Options options;
  options.level = std::string(config::logLevelName(config.log.level));
  options.format = config.log.format == Log::Format::kJson ? log::Format::kJson : log::Format::kText;
  switch (config.log.output) {
    case Log::Output::kDirectory:
      options.output = log::Output::kFile;
      options.file = pathsOf(config).logFile(log_name);
      break;
    case Log::Output::kStderr: options.output = log::Output::kStderr; break;
    case Log::Output::kJournald: options.output = log::Output::kJournald; break;
  }
  options.max_bytes = config.log.max_bytes;
  options.keep = config.log.keep;
  log::init(log_name, options);
}

// What every process's main does first, after adding its options to `app`
// (addProcessOptions() and its own): the command line parsed, --check-config
// answered, the configuration loaded (errors printed) and the log opened
// as `log_name` in the group's log directory. nullopt: main returns
// `exit_code`.
inline std::optional<config::InstanceConfig> startProcess(CLI::App& app, const ProcessArgs& args, int argc,
                                                         char** argv, const std::string& log_name, int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return std::nullopt;
  }
  if (args.check) {
    exit_code = config::checkConfigMain(args.config_path, std::cout);
    return std::nullopt;
  }
  auto config = loadProcessConfig(args.config_path);
  if (!config) {
    exit_code = 1;
    return std::nullopt;
  }
  initLog(*config, log_name);
  return config;
}

// Logs why the process cannot go on and gives its exit status.
inline int cannotStart(const std::string& why) {
  spdlog::critical("cannot start: {}", why);
  log::shutdown();
  return 1;
}

namespace detail {
inline std::atomic<bool> g_stop{false};
inline void onStopSignal(int) { g_stop.store(true, std::memory_order_relaxed); }
}  // namespace detail

// Set once SIGTERM or SIGINT arrived; the process's loop watches it.
inline const std::atomic<bool>& stopOnSignals() {
  signal(SIGTERM, detail::onStopSignal);
  signal(SIGINT, detail::onStopSignal);
  // Every process writes to sockets whose peer may vanish (Redis, the
  // watchdog's ZeroMQ endpoint); that is an error value, never a death.
  signal(SIGPIPE, SIG_IGN);
  return detail::g_stop;
}

}  // namespace gtpcp::group
