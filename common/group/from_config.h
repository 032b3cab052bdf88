// Facts every process derives from gtpcp.yaml the same way.
#pragma once

#include <algorithm>
#include <cstdint>

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

}  // namespace gtpcp::group
