#include "gateway_watch.h"

#include <algorithm>
#include <atomic>
#include <variant>

#include <spdlog/spdlog.h>

#include "common/log/log.h"
#include "common/time/clock.h"

namespace gtpcp::worker {

namespace {

// How often the forwarder's restart counts are looked at.
constexpr uint64_t kWatchPeriodNs = 10'000'000;

}  // namespace

GatewayWatch::GatewayWatch(Engine& engine) : engine_(engine) {
  restarts_.reserve(kMaxRestarts);
  map();
}

void GatewayWatch::setTable(const forwarder::GatewayTableShm* table) {
  table_ = table;
  map();
}

bool GatewayWatch::up(uint16_t gateway) const noexcept {
  if (gateway >= watched_.size() || watched_[gateway].status == nullptr) return true;
  return watched_[gateway].status->up.load(std::memory_order_relaxed) != 0;
}

net::Address GatewayWatch::address(uint16_t gateway) const noexcept {
  const config::Gateway& g = engine_.routing().gateway(gateway);
  return g.isIpv6() ? net::Address::v6(std::get<gtp::Ipv6>(g.address), g.port)
                    : net::Address::v4(std::get<gtp::Ipv4>(g.address), g.port);
}

void GatewayWatch::map(const config::RoutingTable* before) {
  const std::size_t n = engine_.routing().gateways().size();
  std::vector<Watched> watched(n);
  // GWT-A3, GWT-A1: pair with GWT-R3 and GWT-R1 in the forwarder's
  // GatewayHealth constructor: the entries' addresses are complete below the
  // published count.
  version_ = table_ != nullptr ? table_->version.load(std::memory_order_acquire) : 0;
  published_ = table_ != nullptr ? table_->published.load(std::memory_order_acquire) : 0;
  for (std::size_t i = 0; i < n && i < published_; ++i) {
    const forwarder::GatewayStatusShm& e = table_->gateways[i];
    if (!(e.address == address(static_cast<uint16_t>(i)))) continue;  // another document
    watched[i].status = &e;
    // GWT-A2 (as in watch()): pairs with GWT-R2 in GatewayHealth::answered().
    watched[i].restarts = e.restarts.load(std::memory_order_acquire);
    watched[i].recovery = e.recovery.load(std::memory_order_relaxed);
  }
  // What this worker learnt from the gateways' own messages stays, with the
  // gateway of that name.
  for (std::size_t i = 0; i < n; ++i) {
    if (watched[i].recovery != forwarder::kRecoveryUnknown) continue;
    std::size_t was = i;
    if (before != nullptr) {
      const auto j = before->findGateway(engine_.routing().gateway(static_cast<uint16_t>(i)).name);
      if (!j) continue;
      was = *j;
    }
    if (was < watched_.size()) watched[i].recovery = watched_[was].recovery;
  }
  watched_ = std::move(watched);
}

void GatewayWatch::watch(uint64_t now_ns) noexcept {
  if (table_ == nullptr || now_ns < next_watch_ns_) return;
  next_watch_ns_ = now_ns + kWatchPeriodNs;
  // GWT-A3: pairs with GWT-R3 in the forwarder's GatewayHealth constructor.
  if (table_->version.load(std::memory_order_acquire) != version_) {
    map();  // the forwarder started again or reloaded, maybe with another document: rare
    return;
  }
  const uint64_t wall_ns = realtimeNs();
  for (std::size_t g = 0; g < watched_.size(); ++g) {
    Watched& w = watched_[g];
    if (w.status == nullptr) continue;
    // GWT-A2: pairs with GWT-R2 in GatewayHealth::onEchoResponse(): the new
    // Recovery value is visible once the count changed.
    const uint32_t restarts = w.status->restarts.load(std::memory_order_acquire);
    const uint32_t recovery = w.status->recovery.load(std::memory_order_relaxed);
    if (restarts != w.restarts) {
      w.restarts = restarts;
      // Seen already in a message of the gateway: not a second restart.
      if (w.recovery != forwarder::kRecoveryUnknown && w.recovery != recovery)
        restarted(static_cast<uint16_t>(g), wall_ns);
      w.recovery = recovery;
    } else if (w.recovery == forwarder::kRecoveryUnknown) {
      w.recovery = recovery;
    }
  }
}

void GatewayWatch::noteRecovery(uint16_t gateway, std::optional<uint8_t> recovery, uint64_t before_wall_ns) noexcept {
  if (gateway >= watched_.size() || !recovery) return;
  Watched& w = watched_[gateway];
  if (w.recovery != forwarder::kRecoveryUnknown && w.recovery != *recovery) restarted(gateway, before_wall_ns);
  w.recovery = *recovery;
}

void GatewayWatch::walkEnded() noexcept {
  if (!restarts_.empty()) {
    std::string names;
    for (const Restart& r : restarts_) {
      const std::string& name = engine_.routing().gateway(r.gateway).name;
      if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
    }
    log::event(spdlog::level::info,
               fmt::format("gateway restart of {}: {} sessions created before it removed here, each SGW or SGSN told",
                           names, removed_in_walk_),
               {{"gateway_event", "restart_cleaned"}, {"gateways", names},
                log::field("sessions_removed", removed_in_walk_)});
  }
  restarts_.clear();
  completion_asked_ = false;
  removed_in_walk_ = 0;
}

void GatewayWatch::restarted(uint16_t gateway, uint64_t before_wall_ns) noexcept {
  engine_.counters().gateway_restarts.add();
  if (restarts_.size() == kMaxRestarts) {
    // Dozens of restarts within one walk: the oldest entry covers the most
    // sessions; widen it to this gateway's by walking again for the newest.
    restarts_.back() = Restart{gateway, before_wall_ns};
  } else {
    restarts_.push_back(Restart{gateway, before_wall_ns});
  }
  // Walk the sessions again from the start, for this restart and the others.
  cursor_ = SessionTable::Cursor{};
}

bool GatewayWatch::mayNotify(uint64_t now_ns) noexcept {
  if (restarts_.empty()) {
    last_notify_ns_ = now_ns;
    return false;
  }
  const double rate = engine_.routing().healthCheck().restart_notify_rate;
  notify_credit_ = std::min(rate, notify_credit_ + rate * static_cast<double>(now_ns - last_notify_ns_) / 1e9);
  last_notify_ns_ = now_ns;
  return notify_credit_ >= 1;
}

bool GatewayWatch::gone(const SessionShm& s) const noexcept {
  bool taken = false;
  for (const Restart& r : restarts_)
    taken |= s.gateway == r.gateway && s.state == static_cast<uint8_t>(SessionState::kActive) &&
            s.created_ns < r.before_wall_ns;
  return taken;
}

}  // namespace gtpcp::worker
