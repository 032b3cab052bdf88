// The gateways of the routing document as this worker sees them: up or down
// (the forwarder's health checks), their Recovery values, and their
// restarts. A restart is seen in the forwarder's restart count or in a
// changed Recovery IE of a gateway's own message (either version); the
// sessions the gateway held before it are then removed, their SGWs or SGSNs
// told, at most health_check.restart_notify_rate per second, over a walk of
// the session table spread across loop turns. Sessions held only in Redis
// (after a failover, a restart, a demotion) are read in for the walk first
// when this instance acts for the group's stored sessions
// (Restorer::complete()), and the walk goes over the table again once they
// are in.
//
// Single-threaded: the worker's main loop is the only caller. Allocates in
// map() (a routing document or forwarder table replaced), never per datagram.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/group/gateway_table_shm.h"
#include "common/net/address.h"
#include "engine.h"
#include "restore.h"

namespace gtpcp::worker {

class GatewayWatch {
 public:
  explicit GatewayWatch(Engine& engine);

  // Where the forwarder publishes the group's Recovery and its health
  // checks' gateway states and restarts; without it every gateway counts as
  // up and the settings' Recovery is the group's.
  void setTable(const forwarder::GatewayTableShm* table);
  // Matches the routing document's gateways with the forwarder's entries;
  // again whenever either changes. `before`: the document the worker ran
  // until now, when it changed (what was learnt of a gateway follows its
  // name); null: the same document.
  void map(const config::RoutingTable* before = nullptr);

  bool up(uint16_t gateway) const noexcept;
  // Gateway `gateway` of the routing document as an address.
  net::Address address(uint16_t gateway) const noexcept;
  // The group's Recovery: the forwarder's (what it answers Echo with), else the settings'.
  uint8_t groupRecovery() const noexcept {
    return table_ != nullptr ? static_cast<uint8_t>(table_->recovery.load(std::memory_order_relaxed))
                             : engine_.settings().recovery;
  }

  // A Recovery IE in a message from `gateway`: a changed value is a restart,
  // which took the sessions created before `before_wall_ns`.
  void noteRecovery(uint16_t gateway, std::optional<uint8_t> recovery, uint64_t before_wall_ns) noexcept;
  // Looks at the forwarder's restart counts (every few milliseconds).
  void watch(uint64_t now_ns) noexcept;
  // Removes sessions of restarted gateways, calling notify(session) for each
  // first (the SGW or SGSN is told, in the session's version).
  template <class Notify>
  void cleanUpRestarts(uint64_t now_ns, Notify&& notify) noexcept;

 private:
  // Gateway restarts followed at once; more wait for the current walk to end.
  static constexpr std::size_t kMaxRestarts = 64;
  // Session slots looked at per loop turn.
  static constexpr uint32_t kSlotsPerTurn = 4096;

  void restarted(uint16_t gateway, uint64_t before_wall_ns) noexcept;
  // How many sessions may be removed now, at the configured rate.
  bool mayNotify(uint64_t now_ns) noexcept;
  bool gone(const SessionShm& s) const noexcept;
  // The walk for the restarts noted is over: logged, and forgotten.
  void walkEnded() noexcept;

  Engine& engine_;
  struct Watched {
    const forwarder::GatewayStatusShm* status = nullptr;  // none: unchecked, counts as up
    uint32_t restarts = 0;                                // the forwarder's count last seen
    uint32_t recovery = forwarder::kRecoveryUnknown;      // the gateway's Recovery as this worker knows it
  };
  const forwarder::GatewayTableShm* table_ = nullptr;
  uint32_t published_ = 0;
  uint32_t version_ = 0;  // GatewayTableShm::version when mapped
  std::vector<Watched> watched_;  // by gateway index of the routing document
  uint64_t next_watch_ns_ = 0;

  struct Restart {
    uint16_t gateway;
    uint64_t before_wall_ns;  // sessions created before this are gone
  };
  std::vector<Restart> restarts_;  // capacity reserved: a restart never allocates
  SessionTable::Cursor cursor_;
  // The completion this walk asked for: whether asked, and the completions
  // that had ended then (one more: walk again for what it read in).
  bool completion_asked_ = false;
  uint64_t removed_in_walk_ = 0;
  uint64_t completions_seen_ = 0;
  double notify_credit_ = 0;
  uint64_t last_notify_ns_ = 0;
};

template <class Notify>
void GatewayWatch::cleanUpRestarts(uint64_t now_ns, Notify&& notify) noexcept {
  if (!mayNotify(now_ns)) return;
  Restorer* restorer = engine_.restorer();
  if (restorer != nullptr && !completion_asked_) {
    completion_asked_ = true;
    completions_seen_ = restorer->completions();
    restorer->complete();
  }
  SessionTable& sessions = engine_.sessions();
  // Each turn looks at a bounded number of slots, so a large table is walked
  // over several turns and session traffic keeps flowing in between.
  sessions.scan(cursor_, kSlotsPerTurn, [&](SessionShm& s) {
    if (!gone(s)) return true;
    if (notify_credit_ < 1) return false;  // this one waits for the next turn
    notify_credit_ -= 1;
    notify(s);
    engine_.endSession(s);
    engine_.counters().restart_sessions_removed.add();
    ++removed_in_walk_;
    return true;
  });
  engine_.countSessions();
  if (!cursor_.done(sessions)) return;
  if (restorer != nullptr) {
    if (restorer->completing()) return;  // the rest is read in: the walk goes on after
    if (restorer->completions() != completions_seen_) {
      completions_seen_ = restorer->completions();
      cursor_ = SessionTable::Cursor{};  // over what it read in
      return;
    }
  }
  walkEnded();
}

}  // namespace gtpcp::worker
