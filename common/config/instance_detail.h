// Internal to common/config: what loadConfiguration() needs from the
// gtpcp.yaml loader beyond its public API.
#pragma once

#include <string>

#include "common/config/instance.h"

namespace gtpcp::config::detail {

// As loadInstanceConfig(); when it fails, `routing_path` is set to the
// resolved path of the routing document if the `routing` key was usable (so
// that the routing document's errors can be reported too), else cleared.
Result<InstanceConfig> loadInstanceConfig(const std::string& path, std::string& routing_path);

}  // namespace gtpcp::config::detail
