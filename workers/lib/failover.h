// Creations in flight (a Create Session or Create PDP Context Request sent
// to a gateway, not yet answered): the response timer of each, and sending
// one on to the next gateway of its pool when its gateway is silent past
// failover.response_timeout_ms or refuses it with a try_another cause. The
// request goes again as first sent, renumbered from the version's counter and
// with the proxy's control endpoint in the new gateway's address family.
// When no gateway is left, the requester gets failover.when_exhausted's cause
// and the session goes; so it does when the creation outlives its lifetime.
//
// Single-threaded: the worker's main loop is the only caller. The timer ring
// is made at construction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/log/log.h"
#include "engine.h"
#include "gateway_watch.h"

namespace gtpcp::worker {

class Failover {
 public:
  Failover(Engine& engine, GatewayWatch& gateways);

  // The creation `t` was just sent as `request`: kept for another gateway,
  // and timed, as far as the routing document's failover asks.
  void sent(TransactionShm& t, std::span<const uint8_t> request, uint64_t now_ns) noexcept;
  // Sends the creation of `t` (version V) to the next gateway of the pool of
  // session `s`. False when none is left: the requester was answered and the
  // session removed.
  template <class V>
  bool failOver(TransactionShm& t, SessionShm& s) noexcept;
  // Hands the creations whose gateway was silent too long to the next one.
  // Every loop turn.
  void expire(uint64_t now_ns) noexcept;
  // `t` outlived its lifetime unanswered: when it is a creation, the
  // requester has given up too (its N3 retransmissions fit in the same
  // time), so the session goes.
  void expired(const TransactionShm& t) noexcept;

 private:
  void startTimer(const TransactionShm& t, uint64_t now_ns) noexcept;

  Engine& engine_;
  GatewayWatch& gateways_;
  struct Timer {
    uint32_t record;
    uint64_t response_key;  // the record still waits for this answer
    uint64_t deadline_ns;
  };
  std::vector<Timer> timers_;  // a ring; deadlines come in order
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  // One line per second at most, with the count of those held back.
  log::RateLimit log_limit_{std::chrono::seconds(1)};
};

}  // namespace gtpcp::worker
