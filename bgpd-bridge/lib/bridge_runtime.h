// gtpcp-bgpd-bridge, apart from its main: its segment, its lease interface,
// its heartbeat, and the loop that feeds the bgp-watchdog's decision to the
// Bridge and publishes what FRR holds (common/group/bgp_shm.h, and a status
// file for gtpcp status).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <tl/expected.hpp>

#include "common/config/instance.h"
#include "common/control/heartbeat.h"
#include "common/group/bgp_shm.h"
#include "common/group/paths.h"
#include "common/ring/segment.h"
#include "bridge.h"
#include "lease_link.h"
#include "vtysh_frr.h"

namespace gtpcp::bridge {

BridgeSettings bridgeSettings(const config::InstanceConfig& config);
VtyshSettings vtyshSettings(const config::InstanceConfig& config);

class BridgeRuntime {
 public:
  static tl::expected<std::unique_ptr<BridgeRuntime>, std::string> open(const config::InstanceConfig& config,
                                                                        std::unique_ptr<FrrControl> frr);
  // Until `stop`; then withdraws.
  void run(const std::atomic<bool>& stop);

 private:
  BridgeRuntime(const config::InstanceConfig& config, std::unique_ptr<FrrControl> frr, LeaseLink link);
  void publish();
  // The heartbeat, to the thread watchdog and in the segment.
  void beat();
  void writeStatus();
  // The bgp-watchdog's latest whole decision and its lease.
  std::optional<group::BgpDecision> readDecision(uint64_t& renewed_ns);

  group::Paths paths_;
  std::unique_ptr<FrrControl> frr_;
  LeaseLink link_;
  std::optional<ring::SharedSegment> segment_;
  group::BridgeShm* shm_ = nullptr;
  std::optional<ring::SharedSegment> decision_segment_;
  std::optional<group::BgpDecision> last_decision_;
  std::optional<Bridge> bridge_;
  std::unique_ptr<control::HeartbeatSender> heartbeat_;
  std::string last_status_;
};

}  // namespace gtpcp::bridge
