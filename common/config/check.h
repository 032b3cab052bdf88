// --check-config: loading gtpcp.yaml together with the routing document it
// names, and the checks that need both.
#pragma once

#include <ostream>
#include <string>

#include "common/config/errors.h"
#include "common/config/instance.h"
#include "common/config/routing.h"

namespace gtpcp::config {

// Everything a process reads at startup.
struct Configuration {
  InstanceConfig instance;
  RoutingTable routing;
};

// Loads gtpcp.yaml at `path`, then the routing document it names, then
// checks them against each other (a gateway of an address family for which
// gtpc.gateway has no address). Every error of both files is reported: the
// routing document is read even when gtpcp.yaml has errors elsewhere, as long
// as its `routing` key is usable.
Result<Configuration> loadConfiguration(const std::string& path);

// The errors of `routing` against `instance` (see loadConfiguration).
ConfigErrors crossCheck(const InstanceConfig& instance, const RoutingTable& routing);

// What every binary's --check-config runs: prints "OK: <summary>" or one line
// per error ("file:line: key: message") to `out`; returns the exit status,
// 0 or 1.
int checkConfigMain(const std::string& path, std::ostream& out);

}  // namespace gtpcp::config
