// --check-config and the checks that need gtpcp.yaml and the routing
// document together (see check.h).
#include "common/config/check.h"

#include <utility>

#include "common/config/instance_detail.h"

namespace gtpcp::config {

ConfigErrors crossCheck(const InstanceConfig& instance, const RoutingTable& routing) {
  ConfigErrors errors;
  const AddressPair& ours = instance.gtpc.gateway;
  const std::string_view section = instance.gtpc.gateway_from_access ? "gtpc.access" : "gtpc.gateway";
  for (const Pool& pool : routing.pools()) {
    for (uint16_t i = 0; i < pool.gateway_count; ++i) {
      const Gateway& gw = routing.gateway(static_cast<uint16_t>(pool.first_gateway + i));
      const bool v6 = gw.isIpv6();
      if (v6 ? ours.ipv6.has_value() : ours.ipv4.has_value()) continue;
      errors.add(routing.source(), gw.line,
                 "pools." + pool.name + ".gateways[" + std::to_string(i) + "].address",
                 "gateway " + gw.name + " is " + (v6 ? "IPv6" : "IPv4") + " but " + instance.file +
                     " gives no " + std::string(section) + "." + (v6 ? "ipv6" : "ipv4") +
                     " address to reach it from");
    }
  }
  return errors;
}

Result<Configuration> loadConfiguration(const std::string& path) {
  std::string routing_path;
  Result<InstanceConfig> instance = detail::loadInstanceConfig(path, routing_path);
  if (!instance) {
    ConfigErrors errors = std::move(instance.error());
    if (!routing_path.empty()) {
      Result<RoutingTable> routing = loadRoutingDocument(routing_path);
      if (!routing) errors.append(routing.error());
    }
    return tl::unexpected(std::move(errors));
  }
  Result<RoutingTable> routing = loadRoutingDocument(instance->routing.resolved);
  if (!routing) return tl::unexpected(std::move(routing.error()));
  ConfigErrors errors = crossCheck(*instance, *routing);
  if (!errors.empty()) return tl::unexpected(std::move(errors));
  return Configuration{std::move(*instance), std::move(*routing)};
}

int checkConfigMain(const std::string& path, std::ostream& out) {
  Result<Configuration> config = loadConfiguration(path);
  if (!config) {
    out << config.error().toString();
    return 1;
  }
  out << "OK: " << path << ": " << summary(config->instance) << "; routing "
      << config->routing.source() << ": " << summary(config->routing) << "\n";
  return 0;
}

}  // namespace gtpcp::config
