// Whether the group serves, for /readyz (load balancers, Kubernetes
// readiness probes, systemd units waiting for the group): every process
// beating, the forwarder serving on its sockets, the storage writable when
// the group persists, and no drain or stop in progress.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/group/process_control.h"

namespace gtpcp::console {

struct Readiness {
  bool ready = false;
  std::vector<std::string> reasons;  // why not, one line each; empty when ready
};

// `self`: this process's name, left out (it answers, so it lives).
// `heartbeat_deadline_ns`: a beat older than this is a process not beating.
Readiness readiness(const group::ProcessControl& processes, const std::string& self, uint64_t heartbeat_deadline_ns);

}  // namespace gtpcp::console
