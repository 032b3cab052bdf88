// Echo health checks of the routing document's gateways (TS 29.274 §7.1 for
// PGWs, TS 29.060 §7.2.1 for GGSNs; TS 23.007 for what a changed Recovery
// value means).
//
// Each gateway is checked in its pool's GTP version: a GTPv2 Echo Request
// (no TEID, 23-bit sequence number, the group's Recovery) to a PGW, a GTPv1
// Echo Request (TEID 0, S set, 16-bit sequence number, no IE: TS 29.060
// Table 2 gives it none but Private Extension) to a GGSN. An answer counts
// when it is an Echo Response of the same version with the sequence number
// of the gateway's last request, from its address; its Recovery IE (GTPv2
// type 3, GTPv1 TV type 14, one octet each) is what a restart is judged by.
//
// The forwarder owns them because it owns the sockets and answers Echo for
// the group: Echo Responses never queue behind session traffic on a
// worker's ring (DESIGN.md). Every `interval` each gateway gets an Echo
// Request; an interval that ends without its answer is a miss, `misses` in
// a row mark the gateway down, any answer marks it up. The results go to
// GatewayTableShm::gateways, where workers read them when they pick a gateway
// and where they learn of restarts.
//
// Round trip (echo_rtt_ns, echo_rtt): from the tick that queued a gateway's
// Echo Request (the forwarder sends it in the same turn) to the reception of
// the answer that matches it (DatagramMeta::receive_ns: the recvmmsg of its
// batch). It includes up to one loop turn of the forwarder's own on each
// side, microseconds next to a gateway's answer.
//
// Single-threaded: the forwarder's main loop calls it. No allocation after
// construction.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/net/address.h"
#include "dispatcher.h"
#include "common/group/forwarder_shm.h"
#include "common/group/gateway_table_shm.h"

namespace gtpcp::forwarder {

class GatewayHealth {
 public:
  // Publishes the gateways of `routing` to table.gateways (the first
  // kMaxHealthChecked; the others are never checked and count as up).
  // Counts into shm.counters.
  GatewayHealth(const config::RoutingTable& routing, const group::SocketPlan& sockets, ForwarderShm& shm,
                GatewayTableShm& table, uint64_t now_ns);

  // Sends the Echo Requests that are due; returns when the next one is.
  uint64_t tick(uint64_t now_ns, ReplySink& out) noexcept;
  // An Echo Response (GTPv1 or GTPv2) from `from`, received at `now_ns`
  // (CLOCK_MONOTONIC, the clock of tick()'s; 0: unknown, no round trip
  // measured). False when it answers no Echo Request of ours (a stranger's,
  // one of the other version, or one that came after the next was sent).
  bool onEchoResponse(const net::Address& from, std::span<const uint8_t> bytes, uint64_t now_ns) noexcept;

  uint64_t nextDue() const noexcept { return next_due_; }

 private:
  struct Target {
    net::Address address;
    uint8_t socket = group::kNoSocket;
    uint8_t version = 2;       // GTP version of its pool
    bool awaiting = false;     // the Echo Request of this interval is unanswered
    uint32_t sequence = 0;     // of that Echo Request (16 bits for GTPv1)
    uint64_t sent_ns = 0;      // the tick that sent it
    uint32_t missed = 0;       // intervals in a row without an answer
    uint64_t due_ns = 0;
    std::string name;          // the routing document's, for the log
    uint64_t down_ns = 0;      // when it went down (0: up)
  };

  // The Echo Request of `t` into `buffer`; empty when it does not fit.
  std::span<const uint8_t> echoRequest(const Target& t, uint8_t recovery, std::span<uint8_t> buffer) noexcept;
  // The target answered at `now_ns` (0: unknown); `recovery` from the
  // answer's Recovery IE.
  void answered(std::size_t index, std::optional<uint8_t> recovery, uint64_t now_ns) noexcept;

  ForwarderShm& shm_;
  GatewayTableShm& table_;
  config::HealthCheck settings_;
  std::vector<Target> targets_;
  uint32_t next_sequence_;
  uint64_t next_due_ = UINT64_MAX;
};

}  // namespace gtpcp::forwarder
