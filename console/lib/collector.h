// The group's metrics for Prometheus: a prometheus-cpp Collectable that
// reads, at each scrape, what the other processes publish in shared memory
// (their counter tables, the workers' metrics tables, the forwarder's
// health checks, ring depths and latency histograms, the persister's Redis
// channels) and turns it into metric families. Nothing of it is kept
// between scrapes but the attached segments and the routing document whose
// names label the per-gateway, per-pool and per-rule series, so the data
// path's counters stay plain one-writer relaxed stores and a scrape costs
// it nothing (console/README.md lists every metric).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "common/config/instance.h"
#include "common/config/routing.h"
#include "common/group/paths.h"
#include "common/ring/segment.h"

namespace gtpcp::console {

struct BuildInfo {
  std::string version;
  std::string commit;
};

class GroupCollector : public prometheus::Collectable {
 public:
  // `processes`: the group's processes by name (ProcessControl::processes()),
  // for the supervision series.
  GroupCollector(config::InstanceConfig config, group::Paths paths, std::vector<std::string> processes,
                 BuildInfo build);
  ~GroupCollector() override;

  // Safe to call from several HTTP threads: scrapes are taken one at a time.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Segments;
  // The routing document in force (the control segment's), loaded again
  // when its generation or path changes; nullopt when it does not load.
  const config::RoutingTable* routing() const;

  config::InstanceConfig config_;
  group::Paths paths_;
  std::vector<std::string> process_names_;
  BuildInfo build_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Segments> segments_;
  mutable uint64_t routing_generation_ = ~uint64_t{0};
  mutable std::string routing_path_;
  mutable std::optional<config::RoutingTable> routing_;
};

// "CreateSessionRequest" -> "create_session_request"; "Request accepted" ->
// "request_accepted". Label values of message types and causes.
std::string snakeCase(std::string_view name);

}  // namespace gtpcp::console
