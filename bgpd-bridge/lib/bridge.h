// The bridge's logic, apart from its process: it turns the bgp-watchdog's
// decision into FRR configuration through an FrrControl, and reads FRR's
// BGP and BFD state back.
//
// Each turn (step()):
//   - the decision, or "withdraw" once its lease ran out;
//   - a changed decision goes to FRR at once, as the few network statements
//     it changes (the fast path: one vtysh call), and is published before
//     anything else is looked at (onApplied); a decision that changes while
//     the bridge looks at FRR (a reconcile, the state) cuts the look short
//     (FrrControl::kGaveWay): the turn ends and the next one applies it;
//   - a full reconcile (FRR's running configuration against every object
//     the group owns) at start, after every change, every
//     reconcile_interval, and whenever FRR restarted (a daemon's identity
//     changed): what FRR lost is given back without a reload. Each daemon
//     is compared with its own configuration (a route-map bgpd lost while
//     zebra kept it would otherwise look present, and bgpd would hold the
//     announcement in its configuration but never send it), and only once
//     the youngest daemon has run frr_settle: FRR restarts daemon by
//     daemon, and one given its part while another is still down fails
//     half-way;
//   - every state_interval, the BGP neighbours and BFD peers, and bgpd's own
//     table: an announcement bgpd holds in its configuration but not in its
//     table (FRR 8.4 misses the import check of a network statement
//     configured while bgpd and zebra are still connecting, after a
//     restart) is given again, once it has been missing for kick_after.
//
// Single-threaded; time is passed in, so tests drive it with a fake FRR.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/group/bgp_shm.h"
#include "frr_control.h"
#include "frr_plan.h"

namespace gtpcp::bridge {

struct BridgeSettings {
  FrrSettings frr;
  uint64_t lease_ns = 2'000'000'000;
  uint64_t reconcile_interval_ns = 5'000'000'000;
  uint64_t state_interval_ns = 1'000'000'000;
  uint64_t kick_after_ns = 2'000'000'000;
  uint64_t frr_settle_ns = 1'000'000'000;
  uint64_t daemons_interval_ns = 100'000'000;
};

struct BridgeState {
  FrrIntent applied;                  // what FRR holds, as far as the bridge knows
  bool known = false;                 // false until the first reconcile succeeded
  bool lease_expired = false;
  bool frr_reachable = false;
  bool settling = false;              // a daemon started less than frr_settle ago
  uint64_t applied_generation = 0;    // the decision's generation FRR has
  uint64_t applied_realtime_ns = 0;
  uint64_t last_apply_us = 0;
  uint32_t neighbors = 0, neighbors_up = 0, bfd_peers = 0, bfd_up = 0;
  bool in_bgp_table = false;          // bgpd's table holds every announced address
  nlohmann::json neighbor_state = nlohmann::json::array();  // [{address, state, uptime_ms, ...}]
  nlohmann::json bfd_state = nlohmann::json::array();
  std::vector<std::string> problems;  // why FRR does not hold what it should
  std::string last_error;
};

class Bridge {
 public:
  Bridge(FrrControl& frr, BridgeSettings settings, group::BridgeCounters& counters)
      : frr_(frr), settings_(std::move(settings)), counters_(counters) {}

  // One turn. `decision`: the latest consistent copy (nullopt: none yet);
  // `renewed_ns`: its lease (CLOCK_MONOTONIC).
  void step(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns, uint64_t mono_ns,
            uint64_t real_ns);
  // The bridge stops: the route goes now (the lease interface goes with the
  // process anyway).
  void withdraw(uint64_t real_ns);
  // Whether `decision` wants of FRR something else than the turn in
  // progress works toward: asked from FrrControl's waiting hook.
  bool wouldChange(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns, uint64_t mono_ns) const;
  // Called as soon as the fast path applied a decision, so that whoever
  // waits for it (gtpcp switchover) hears before the turn's looks.
  void onApplied(std::function<void()> f) { on_applied_ = std::move(f); }

  const BridgeState& state() const noexcept { return state_; }
  nlohmann::json status() const;

 private:
  // What a decision asks of FRR: withdraw unless its lease still runs.
  FrrIntent wanted(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns, uint64_t mono_ns) const;
  // A look's failure: false when it gave way (the turn ends), else counted.
  bool lookFailed(const std::string& error);
  bool apply(const std::vector<std::string>& commands, uint64_t real_ns);
  bool reconcile(const FrrIntent& want, uint64_t real_ns);
  void readState(uint64_t mono_ns, uint64_t real_ns);
  // Whether bgpd's own table holds every service address (announce only).
  bool announcedInTable();

  FrrControl& frr_;
  BridgeSettings settings_;
  group::BridgeCounters& counters_;
  BridgeState state_;
  FrrDaemons daemons_;  // as last looked at
  uint64_t next_daemons_ns_ = 0;
  uint64_t next_reconcile_ns_ = 0;
  uint64_t next_state_ns_ = 0;
  bool reconcile_due_ = true;
  uint64_t missing_since_ns_ = 0;  // announced, and not in bgpd's table since
  FrrIntent working_for_;          // the want of the turn in progress
  bool gave_way_ = false;          // a look of this turn gave way
  std::function<void()> on_applied_;
};

}  // namespace gtpcp::bridge
