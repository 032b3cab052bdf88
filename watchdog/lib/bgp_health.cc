#include "bgp_health.h"



#include <fmt/format.h>

#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "common/group/persister_shm.h"
#include "common/group/segment_view.h"
#include "common/group/watchdog_shm.h"
#include "common/net/local.h"
#include "common/time/clock.h"

namespace gtpcp::watchdog {

using group::BgpHealth;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

BgpHealthReport classify(const GroupFacts& f) {
  std::vector<std::string> down;  // not alive, or alive and silent
  bool any_beating = false;
  for (const auto& p : f.processes) {
    if (p.beating) any_beating = true;
    else down.push_back(p.name + (p.alive ? " silent" : " not running"));
  }
  if (f.stopping) return {BgpHealth::kAdministrative, "gtpcp stop"};
  if (f.withdraw_asked) return {BgpHealth::kAdministrative, "gtpcp switchover"};
  if (f.given_up > 0)
    return {BgpHealth::kUnrecoverable, fmt::format("the thread watchdog gave up on {} process{}", f.given_up,
                                                   f.given_up == 1 ? "" : "es")};
  if (!f.processes.empty() && !any_beating) return {BgpHealth::kUnrecoverable, "no process of the group beats"};
  if (!f.addresses_not_local.empty())
    return {BgpHealth::kUnrecoverable, "service address not local: " + join(f.addresses_not_local)};
  if (!f.addresses_not_held.empty() && down.empty())
    return {BgpHealth::kUnrecoverable, "the forwarder holds no socket on " + join(f.addresses_not_held)};
  if (!down.empty() && !f.thread_watchdog_beating)
    return {BgpHealth::kUnrecoverable, join(down) + ", and no thread watchdog to replace it"};
  if (!down.empty()) return {BgpHealth::kRecoverable, join(down) + " (the thread watchdog replaces it)"};
  if (!f.thread_watchdog_beating) return {BgpHealth::kRecoverable, "the thread watchdog is silent"};
  if (f.replaced > 0)
    return {BgpHealth::kRecoverable, fmt::format("{} process{} replaced since the last check", f.replaced,
                                                 f.replaced == 1 ? "" : "es")};
  if (f.storage == GroupFacts::Storage::kDown) return {BgpHealth::kRecoverable, "storage unreachable"};
  if (f.storage == GroupFacts::Storage::kSlow)
    return {BgpHealth::kRecoverable, fmt::format("storage has not acknowledged writes for {} ms", f.storage_lag_ms)};
  return {};
}

GroupFacts GroupObserver::observe(uint64_t mono_ns) {
  GroupFacts f;
  const auto& paths = group_.paths();
  const auto fresh = [&](const group::ProcessStatusShm& s) {
    const auto state = static_cast<group::ProcessState>(s.state.load(std::memory_order_relaxed));
    const uint64_t beat = s.heartbeat_ns.load(std::memory_order_relaxed);
    return state == group::ProcessState::kServing && beat != 0 &&
           (beat >= mono_ns || mono_ns - beat <= settings_.heartbeat_timeout_ns);
  };
  std::optional<int> forwarder_pid;
  for (const group::ProcessSpec& spec : group_.processes()) {
    // The console serves the operator, not the peers: the route does not
    // depend on it.
    if (spec.name == "bgp-watchdog" || spec.name == "bgpd-bridge" || spec.name == "console") continue;
    const auto pid = group_.runningPid(spec.name);
    std::optional<ring::SharedSegment> holder;
    const auto* status = group::processStatusOf(spec.name, paths, holder);
    const bool beating = pid && status && fresh(*status);
    if (spec.name == "watchdog") {
      f.thread_watchdog_beating = beating;
      continue;
    }
    if (spec.name == "forwarder") forwarder_pid = pid;
    f.processes.push_back({spec.name, pid.has_value(), beating});
  }
  if (auto wd = group::attachAs<WatchdogShm>(paths.watchdogSegment(), kWatchdogSegmentKind); wd.shm) {
    f.given_up = static_cast<uint32_t>(wd.shm->counters.given_up.load());
    // A count that went down is a new segment: nothing known to have happened.
    const uint64_t restarts = wd.shm->counters.restarts.load();
    if (restarts_ && restarts > *restarts_) f.replaced = restarts - *restarts_;
    restarts_ = restarts;
  }

  for (const auto& a : settings_.service_addresses) {
    if (!net::isLocalAddress(a)) f.addresses_not_local.push_back(a);
    else if (forwarder_pid && !net::holdsUdpSocket(*forwarder_pid, a, settings_.gtpc_port)) f.addresses_not_held.push_back(a);
  }

  if (group::persists(group_.config())) {
    if (auto p = group::attachAs<persister::PersisterShm>(paths.persisterSegment(), persister::kPersisterSegmentKind);
        p.shm) {
      const uint64_t lag = p.shm->counters.lag_ms.load();
      const bool up = p.shm->counters.storage_up.load() != 0;
      f.storage_lag_ms = lag;
      if (lag > settings_.storage_ack_ms) f.storage = GroupFacts::Storage::kSlow;
      else if (!up && settings_.sync_storage) f.storage = GroupFacts::Storage::kDown;
      else f.storage = GroupFacts::Storage::kAcknowledging;
    }
  }

  if (const auto* c = control()) {
    f.withdraw_asked = c->bgp_withdraw.load(std::memory_order_relaxed) != 0;
    f.stopping = c->closing.load(std::memory_order_relaxed) != 0;
  }
  return f;
}

const group::GroupControlShm* GroupObserver::control() {
  if (!control_) {
    auto seg = ring::SharedSegment::attach(group_.paths().controlSegment(), group::kControlSegmentKind);
    if (!seg) return nullptr;
    control_.emplace(std::move(*seg));
  }
  return static_cast<const group::GroupControlShm*>(control_->payload());
}

bool GroupObserver::withdrawAsked() {
  const auto* c = control();
  return c != nullptr && (c->bgp_withdraw.load(std::memory_order_relaxed) != 0 ||
                          c->closing.load(std::memory_order_relaxed) != 0);
}

}  // namespace gtpcp::watchdog
