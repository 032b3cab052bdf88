// Reading another process's segment without owning it: `gtpcp status`,
// the process control's waits for a process to serve, the metrics
// exporter. Attach-only (common/group/segments.h): a segment that does not
// exist yet reads as absent.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/group/paths.h"
#include "common/group/process_status_shm.h"
#include "common/metrics/counter.h"
#include "common/ring/segment.h"

namespace gtpcp::group {

template <class Shm>
struct Attached {
  std::optional<ring::SharedSegment> segment;
  const Shm* shm = nullptr;
};

template <class Shm>
Attached<Shm> attachAs(const std::string& name, uint32_t kind) {
  Attached<Shm> a;
  auto seg = ring::SharedSegment::attach(name, kind);
  if (!seg) return a;
  a.segment.emplace(std::move(*seg));
  a.shm = static_cast<const Shm*>(a.segment->payload());
  return a;
}

// A counter table (common/metrics/counter.h) as JSON: name -> value.
template <std::size_t N>
nlohmann::json countersJson(const metrics::CounterInfo (&info)[N], const void* counters) {
  nlohmann::json out = nlohmann::json::object();
  const auto* c = static_cast<const metrics::Counter*>(counters);
  for (std::size_t i = 0; i < N; ++i) out[std::string(info[i].name)] = c[i].load();
  return out;
}

// The liveness record of process `name` ("forwarder", "worker-3"...), in
// its own segment, kept attached by `holder`; null when it has none yet.
const ProcessStatusShm* processStatusOf(const std::string& name, const Paths& paths,
                                        std::optional<ring::SharedSegment>& holder);

}  // namespace gtpcp::group
