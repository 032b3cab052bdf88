#include "bgp_runtime.h"

#include <thread>

#include <spdlog/spdlog.h>

#include "common/group/from_config.h"
#include "common/group/segments.h"
#include "common/group/status.h"
#include "common/time/clock.h"

namespace gtpcp::watchdog {

using group::BgpIntent;
using Bgp = config::InstanceConfig::Bgp;

namespace {
constexpr uint64_t kMs = 1'000'000;
// The loop wakes this often to beat and to look at `stop`; checks are
// bgp.check_interval_ms apart.
constexpr uint64_t kTurnNs = 50 * kMs;
}  // namespace

BgpWatchdogSettings bgpWatchdogSettings(const config::InstanceConfig& c) {
  BgpWatchdogSettings s;
  s.check_interval_ns = uint64_t{c.bgp.check_interval_ms} * kMs;
  s.decider.preference = c.bgp.role == Bgp::Role::kStandby ? group::BgpPreference::kStandby
                                                           : group::BgpPreference::kActive;
  s.decider.withdraw_hold_ns = uint64_t{c.bgp.withdraw_hold_ms} * kMs;
  s.decider.return_hold_ns = uint64_t{c.bgp.return_hold_ms} * kMs;
  s.decider.damping_flaps = c.bgp.damping_flaps;
  s.decider.damping_window_ns = uint64_t{c.bgp.damping_window_s} * 1000 * kMs;
  s.decider.damping_hold_ns = uint64_t{c.bgp.damping_hold_ms} * kMs;
  s.observer.heartbeat_timeout_ns = uint64_t{c.watchdog.timeout_ms} * kMs;
  s.observer.storage_ack_ms = c.bgp.storage_ack_ms;
  s.observer.sync_storage = c.storage.persist == config::InstanceConfig::Storage::Persist::kSync;
  s.observer.gtpc_port = c.gtpc.port;
  s.observer.service_addresses = group::serviceAddresses(c);
  return s;
}

BgpWatchdogRuntime::BgpWatchdogRuntime(group::ProcessControl& group, const BgpWatchdogSettings& settings)
    : group_(group), settings_(settings), observer_(group, settings.observer) {}

tl::expected<std::unique_ptr<BgpWatchdogRuntime>, std::string> BgpWatchdogRuntime::open(
    group::ProcessControl& group, const BgpWatchdogSettings& settings) {
  std::unique_ptr<BgpWatchdogRuntime> r(new BgpWatchdogRuntime(group, settings));
  const std::string name = group.paths().bgpWatchdogSegment();
  auto seg = group::createOwned<group::BgpWatchdogShm>(name, group::kBgpWatchdogSegmentKind);
  if (!seg) return tl::unexpected("shared memory " + name + ": " + seg.error().message);
  r->segment_.emplace(std::move(*seg));
  r->shm_ = static_cast<group::BgpWatchdogShm*>(r->segment_->payload());
  auto beat = control::HeartbeatSender::open(group.paths().heartbeatEndpoint(), "bgp-watchdog");
  if (!beat) return tl::unexpected(beat.error());
  r->heartbeat_ = std::move(*beat);

  const uint64_t mono = monotonicNs();
  r->decider_.emplace(settings.decider, mono, realtimeNs());
  group::BgpDecision previous;
  const uint64_t renewed = r->shm_->decision.renewed_ns.load(std::memory_order_relaxed);
  const uint64_t lease_ns = uint64_t{group.config().bgp.lease_ms} * kMs;
  if (renewed != 0 && mono >= renewed && mono - renewed < lease_ns && group::read(r->shm_->decision, previous) &&
      previous.preference == settings.decider.preference) {
    r->decider_->adopt(previous, mono);
    spdlog::info("carrying on the previous bgp-watchdog's decision ({}, renewed {} ms ago)",
                 group::toString(previous.intent), (mono - renewed) / kMs);
  }
  return r;
}

void BgpWatchdogRuntime::checkOnce() {
  const uint64_t mono = monotonicNs();
  const uint64_t real = realtimeNs();
  const GroupFacts facts = observer_.observe(mono);
  const BgpHealthReport report = classify(facts);
  auto& counters = shm_->counters;
  counters.checks.add();
  if (report.health != group::BgpHealth::kHealthy) counters.unhealthy_checks.add();
  if (report.health != last_report_.health || report.reason != last_report_.reason) {
    if (report.health == group::BgpHealth::kHealthy) spdlog::info("healthy again");
    else spdlog::warn("{}: {}", group::toString(report.health), report.reason);
    last_report_ = report;
  }
  const bool was_damped = decider_->damped();
  const bool changed = decider_->check(report, mono, real);
  const auto& d = decider_->decision();
  if (!was_damped && decider_->damped()) {
    counters.flaps_damped.add();
    spdlog::warn("health keeps flapping: the route returns only after {} ms of health", settings_.decider.damping_hold_ns / kMs);
  }
  if (changed) {
    if (d.intent == BgpIntent::kAnnounce) {
      counters.announces.add();
      spdlog::info("announce ({}): {}", group::toString(d.preference), d.reason);
    } else {
      counters.withdraws.add();
      spdlog::warn("withdraw: {}", d.reason);
    }
  }
  counters.announced.set(d.intent == BgpIntent::kAnnounce ? 1 : 0);
  group::publish(shm_->decision, d);
  shm_->decision.renewed_ns.store(monotonicNs(), std::memory_order_relaxed);
  writeStatus();
}

void BgpWatchdogRuntime::writeStatus() {
  const auto& d = decider_->decision();
  nlohmann::json j = {{"intent", group::toString(d.intent)},
                      {"preference", group::toString(d.preference)},
                      {"health", group::toString(d.health)},
                      {"reason", d.reason},
                      {"since_ns", d.since_ns},
                      {"unhealthy_spells", decider_->unhealthySpells()},
                      {"damped", decider_->damped()},
                      {"history", decider_->history()}};
  if (d.announce_at_ns) j["announce_at_ns"] = d.announce_at_ns;
  if (d.withdraw_at_ns) j["withdraw_at_ns"] = d.withdraw_at_ns;
  group::writeStatusFile(group_.paths().bgpWatchdogStatusFile(), j);
}

void BgpWatchdogRuntime::run(const std::atomic<bool>& stop) {
  group::announceServing(shm_->status);
  uint64_t next_check = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonicNs();
    shm_->status.heartbeat_ns.store(now, std::memory_order_relaxed);
    heartbeat_->beat(now);
    // gtpcp switchover and gtpcp stop are acted on within a turn, not at
    // the next check.
    const bool asked = observer_.withdrawAsked();
    if (now >= next_check || asked != withdraw_asked_) {
      withdraw_asked_ = asked;
      checkOnce();
      next_check = now + settings_.check_interval_ns;
    }
    const uint64_t until = std::min(next_check, monotonicNs() + kTurnNs);
    const uint64_t after = monotonicNs();
    if (until > after) std::this_thread::sleep_for(std::chrono::nanoseconds(until - after));
  }
  group::announceStopped(shm_->status);
}

}  // namespace gtpcp::watchdog
