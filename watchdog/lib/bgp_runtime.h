// gtpcp-bgp-watchdog, apart from its main: once per bgp.check_interval_ms it
// observes the group (bgp_health.h), lets the BgpDecider judge, publishes
// the decision and renews its lease (common/group/bgp_shm.h), logs and
// counts every change with its reason, and writes the decisions for gtpcp
// status. It beats to the thread watchdog like every process.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <tl/expected.hpp>

#include "common/config/instance.h"
#include "common/control/heartbeat.h"
#include "common/group/bgp_shm.h"
#include "common/group/process_control.h"
#include "common/ring/segment.h"
#include "bgp_decider.h"
#include "bgp_health.h"

namespace gtpcp::watchdog {

struct BgpWatchdogSettings {
  BgpDeciderSettings decider;
  ObserverSettings observer;
  uint64_t check_interval_ns = 1'000'000'000;
};

BgpWatchdogSettings bgpWatchdogSettings(const config::InstanceConfig& config);

class BgpWatchdogRuntime {
 public:
  static tl::expected<std::unique_ptr<BgpWatchdogRuntime>, std::string> open(group::ProcessControl& group,
                                                                             const BgpWatchdogSettings& settings);
  // Until `stop`; the last decision stands (its lease runs out: the bridge
  // withdraws unless a new bgp-watchdog renews it).
  void run(const std::atomic<bool>& stop);

 private:
  BgpWatchdogRuntime(group::ProcessControl& group, const BgpWatchdogSettings& settings);
  void checkOnce();
  void writeStatus();

  group::ProcessControl& group_;
  BgpWatchdogSettings settings_;
  GroupObserver observer_;
  std::optional<BgpDecider> decider_;
  std::optional<ring::SharedSegment> segment_;
  group::BgpWatchdogShm* shm_ = nullptr;
  std::unique_ptr<control::HeartbeatSender> heartbeat_;
  BgpHealthReport last_report_;
  bool withdraw_asked_ = false;
};

}  // namespace gtpcp::watchdog
