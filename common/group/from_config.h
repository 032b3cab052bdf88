// Facts every process derives from gtpcp.yaml the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config/instance.h"
#include "common/group/paths.h"
#include "common/group/socket_plan.h"
#include "common/ring/ring.h"

namespace gtpcp::group {

inline Paths pathsOf(const config::InstanceConfig& c) {
  return Paths(c.group, c.run_dir.resolved, c.instance, c.log.directory.resolved);
}

inline SocketPlan socketPlanOf(const config::InstanceConfig& c) {
  return SocketPlan::make(c.gtpc.access.ipv4, c.gtpc.access.ipv6, c.gtpc.gateway.ipv4, c.gtpc.gateway.ipv6,
                          c.gtpc.port);
}

struct RingSizes {
  uint32_t priority;
  uint32_t fresh;
  uint32_t egress;
  uint32_t persist;
};

// The egress ring carries what the priority and new rings bring in, and a
// little more (rejections): as large as the larger of the two.
inline RingSizes ringSizesOf(const config::InstanceConfig& c) {
  const uint32_t priority = std::max(c.rings.priority_slots.effective, ring::kMinCapacitySlots);
  const uint32_t fresh = std::max(c.rings.new_slots.effective, ring::kMinCapacitySlots);
  const uint32_t persist = std::max(c.rings.persist_slots.effective, ring::kMinCapacitySlots);
  return RingSizes{priority, fresh, std::max(priority, fresh), persist};
}

// Whether workers write session changes for a persister.
inline bool persists(const config::InstanceConfig& c) {
  return c.storage.mode != config::InstanceConfig::Storage::Mode::kOff;
}

// The addresses the group announces over BGP: bgp.service_addresses, or
// every GTP-C address of the instance (access and gateway, each once).
inline std::vector<std::string> serviceAddresses(const config::InstanceConfig& c) {
  if (!c.bgp.service_addresses.empty()) return c.bgp.service_addresses;
  std::vector<std::string> out;
  const auto add = [&out](std::string a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(std::move(a));
  };
  for (const auto* pair : {&c.gtpc.access, &c.gtpc.gateway}) {
    if (pair->ipv4) add(gtp::toString(*pair->ipv4));
    if (pair->ipv6) add(gtp::toString(*pair->ipv6));
  }
  return out;
}

}  // namespace gtpcp::group
