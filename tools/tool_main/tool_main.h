// The main() that gtpcp-peer and gtpcp-relay share. Each declares its own
// flags on a CLI::App; the rest is the same: parse, turn the options into a
// configuration, stop there for --check-config, build the program, open its
// sockets, run. Every failure before the run is one line "<program>: what"
// on stderr and exit status 2, so that scripts and tests tell a usage or
// setup error from a run that went wrong (the program's own 1).
#pragma once

#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace gtpcp::tools {

// Usage or setup error: bad flags, invalid options, a socket that would not open.
inline constexpr int kExitUsage = 2;

// What a program does once its flags are parsed; each step runs only after
// the one before succeeded.
struct ToolSteps {
  // Checks the parsed options and builds the configuration: every error, none when valid.
  std::function<std::vector<std::string>()> configure;
  // Builds the program from the configuration and opens what it needs: an error, or "".
  std::function<std::string()> open;
  // The run: the program's exit status.
  std::function<int()> run;
};

// Adds --check-config to `app` (after the program's flags: --help lists it
// last), parses argv and runs `steps`; errors are prefixed with app's name.
// Returns the exit status: 0 for --help and for --check-config with valid
// options; kExitUsage for a bad flag, invalid options, a failed open() or an
// exception from any step; else what run() returns.
int runTool(int argc, char** argv, CLI::App& app, const ToolSteps& steps);

// runTool() for a Program built from a Config, with `std::string open()` and
// `int run(std::ostream& out, std::ostream& err)` (run on stdout and stderr).
template <class Program, class Config>
int runProgram(int argc, char** argv, CLI::App& app,
               const std::function<std::vector<std::string>(Config&)>& configure) {
  Config config;
  std::optional<Program> program;
  return runTool(argc, argv, app,
                 {.configure = [&] { return configure(config); },
                  .open =
                      [&] {
                        program.emplace(std::move(config));
                        return program->open();
                      },
                  .run = [&] { return program->run(std::cout, std::cerr); }});
}

}  // namespace gtpcp::tools
