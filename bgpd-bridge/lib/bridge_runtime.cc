#include "bridge_runtime.h"

#include <thread>

#include <spdlog/spdlog.h>

#include "common/group/from_config.h"
#include "common/group/segments.h"
#include "common/group/status.h"
#include "common/time/clock.h"

namespace gtpcp::bridge {

namespace {
constexpr uint64_t kMs = 1'000'000;
// How often the decision is looked at: a withdraw reaches FRR within this
// plus one vtysh call.
constexpr uint64_t kTurnNs = 20 * kMs;
}  // namespace

BridgeSettings bridgeSettings(const config::InstanceConfig& c) {
  BridgeSettings s;
  s.lease_ns = uint64_t{c.bgp.lease_ms} * kMs;
  FrrSettings& f = s.frr;
  f.group = c.group;
  f.lease_interface = leaseInterfaceName(c.group);
  f.local_as = c.bgp.local_as;
  if (c.bgp.router_id) f.router_id = gtp::toString(*c.bgp.router_id);
  for (const auto& n : c.bgp.neighbors) f.neighbors.push_back({n.address, n.remote_as, n.password});
  f.service_addresses = group::serviceAddresses(c);
  f.standby_med = c.bgp.standby_med;
  f.standby_prepend = c.bgp.standby_prepend;
  f.bfd = c.bgp.bfd;
  f.bfd_interval_ms = c.bgp.bfd_interval_ms;
  f.bfd_multiplier = c.bgp.bfd_multiplier;
  return s;
}

VtyshSettings vtyshSettings(const config::InstanceConfig& c) {
  VtyshSettings v;
  v.vtysh = c.bgp.vtysh.resolved;
  v.vty_socket_dir = c.bgp.vty_socket_dir;
  return v;
}

BridgeRuntime::BridgeRuntime(const config::InstanceConfig& config, std::unique_ptr<FrrControl> frr, LeaseLink link)
    : paths_(group::pathsOf(config)), frr_(std::move(frr)), link_(std::move(link)) {}

tl::expected<std::unique_ptr<BridgeRuntime>, std::string> BridgeRuntime::open(const config::InstanceConfig& config,
                                                                              std::unique_ptr<FrrControl> frr) {
  const BridgeSettings settings = bridgeSettings(config);
  auto link = LeaseLink::open(settings.frr.lease_interface);
  if (!link) return tl::unexpected(link.error());
  std::unique_ptr<BridgeRuntime> r(new BridgeRuntime(config, std::move(frr), std::move(*link)));
  const std::string name = r->paths_.bridgeSegment();
  auto seg = group::createOwned<group::BridgeShm>(name, group::kBridgeSegmentKind);
  if (!seg) return tl::unexpected("shared memory " + name + ": " + seg.error().message);
  r->segment_.emplace(std::move(*seg));
  r->shm_ = static_cast<group::BridgeShm*>(r->segment_->payload());
  auto beat = control::HeartbeatSender::open(r->paths_.heartbeatEndpoint(), "bgpd-bridge");
  if (!beat) return tl::unexpected(beat.error());
  r->heartbeat_ = std::move(*beat);
  r->bridge_.emplace(*r->frr_, settings, r->shm_->counters);
  // A step may wait on vtysh for seconds: the heartbeat goes on meanwhile,
  // and a look gives way to a decision that changed.
  r->frr_->onWaiting([raw = r.get()] {
    raw->beat();
    uint64_t renewed = 0;
    const auto decision = raw->readDecision(renewed);
    return raw->bridge_->wouldChange(decision, renewed, monotonicNs());
  });
  r->bridge_->onApplied([raw = r.get()] { raw->publish(); });
  return r;
}

void BridgeRuntime::publish() {
  const BridgeState& s = bridge_->state();
  auto& a = shm_->applied;
  a.intent.store(static_cast<uint32_t>(s.applied.intent), std::memory_order_relaxed);
  a.preference.store(static_cast<uint32_t>(s.applied.preference), std::memory_order_relaxed);
  a.lease_expired.store(s.lease_expired ? 1 : 0, std::memory_order_relaxed);
  a.frr_reachable.store(s.frr_reachable ? 1 : 0, std::memory_order_relaxed);
  a.applied_ns.store(s.applied_realtime_ns, std::memory_order_relaxed);
  a.neighbors.store(s.neighbors, std::memory_order_relaxed);
  a.neighbors_up.store(s.neighbors_up, std::memory_order_relaxed);
  a.bfd_peers.store(s.bfd_peers, std::memory_order_relaxed);
  a.bfd_up.store(s.bfd_up, std::memory_order_relaxed);
  a.applied_generation.store(s.applied_generation, std::memory_order_release);  // BRG-R1
}

void BridgeRuntime::writeStatus() {
  const std::string text = bridge_->status().dump();
  if (text == last_status_) return;
  last_status_ = text;
  group::writeStatusFile(paths_.bridgeStatusFile(), bridge_->status());
}

void BridgeRuntime::beat() {
  const uint64_t now = monotonicNs();
  shm_->status.heartbeat_ns.store(now, std::memory_order_relaxed);
  heartbeat_->beat(now);
}

std::optional<group::BgpDecision> BridgeRuntime::readDecision(uint64_t& renewed_ns) {
  if (!decision_segment_) {
    if (auto seg = ring::SharedSegment::attach(paths_.bgpWatchdogSegment(), group::kBgpWatchdogSegmentKind))
      decision_segment_.emplace(std::move(*seg));
  }
  renewed_ns = 0;
  if (!decision_segment_) return std::nullopt;
  const auto* w = static_cast<const group::BgpWatchdogShm*>(decision_segment_->payload());
  renewed_ns = w->decision.renewed_ns.load(std::memory_order_relaxed);
  // A copy torn by a writer descheduled mid-write is no decision to
  // withdraw on: the last whole one stands until the next look.
  group::BgpDecision d;
  if (group::read(w->decision, d)) last_decision_ = std::move(d);
  return last_decision_;
}

void BridgeRuntime::run(const std::atomic<bool>& stop) {
  group::announceServing(shm_->status);
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonicNs();
    beat();
    uint64_t renewed = 0;
    const auto decision = readDecision(renewed);
    if (!link_.up()) {
      spdlog::warn("lease interface {} was set down: setting it up", link_.name());
      link_.raise();
    }
    bridge_->step(decision, renewed, monotonicNs(), realtimeNs());
    publish();
    writeStatus();
    const uint64_t after = monotonicNs();
    if (after < now + kTurnNs) std::this_thread::sleep_for(std::chrono::nanoseconds(now + kTurnNs - after));
  }
  bridge_->withdraw(realtimeNs());
  publish();
  writeStatus();
  group::announceStopped(shm_->status);
}

}  // namespace gtpcp::bridge
