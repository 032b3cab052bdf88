// Echo health checks of the routing document's gateways (TS 29.274 §7.1;
// TS 23.007 for what a changed Recovery value means).
//
// The forwarder owns them because it owns the sockets and answers Echo for
// the group: Echo Responses never queue behind session traffic on a
// worker's ring (DESIGN.md). Every `interval` each gateway gets an Echo
// Request; an interval that ends without its answer is a miss, `misses` in
// a row mark the gateway down, any answer marks it up. The results go to
// ForwarderShm::gateways, where workers read them when they pick a gateway
// and where they learn of restarts.
//
// Single-threaded: the forwarder's main loop calls it. No allocation after
// construction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/net/address.h"
#include "forwarder/lib/dispatcher.h"
#include "forwarder/lib/forwarder_shm.h"

namespace gtpcp::forwarder {

class GatewayHealth {
 public:
  // Publishes the gateways of `routing` to shm.gateways (the first
  // kMaxHealthChecked; the others are never checked and count as up).
  GatewayHealth(const config::RoutingTable& routing, const group::SocketPlan& sockets, ForwarderShm& shm,
                uint64_t now_ns);

  // Sends the Echo Requests that are due; returns when the next one is.
  uint64_t tick(uint64_t now_ns, ReplySink& out) noexcept;
  // An Echo Response from `from`. False when it answers no Echo Request of
  // ours (a stranger's, or one that came after the next was sent).
  bool onEchoResponse(const net::Address& from, std::span<const uint8_t> bytes) noexcept;

  uint64_t nextDue() const noexcept { return next_due_; }

 private:
  struct Target {
    net::Address address;
    uint8_t socket = group::kNoSocket;
    bool awaiting = false;     // the Echo Request of this interval is unanswered
    uint32_t sequence = 0;     // of that Echo Request
    uint32_t missed = 0;       // intervals in a row without an answer
    uint64_t due_ns = 0;
  };

  ForwarderShm& shm_;
  config::HealthCheck settings_;
  std::vector<Target> targets_;
  uint32_t next_sequence_;
  uint64_t next_due_ = UINT64_MAX;
};

}  // namespace gtpcp::forwarder
