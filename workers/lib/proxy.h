// The procedures of a worker: GTPv2-C on S5/S8 (session creation and
// deletion, and relaying every other message of a known session with TEIDs,
// sequence numbers and control-plane F-TEIDs translated; DESIGN.md,
// "Translation rules") and GTPv1-C on Gn/Gp (PDP contexts).
//
// Proxy wires the parts and hands each datagram to its version's
// procedures: the session engine (engine.h) holds the tables, numbering,
// sending and persistence both versions share; the steps both versions take
// alike are written once (procedures.h) over each version's traits
// (versions.h), what differs is in procedures_v2.cc and procedures_v1.cc;
// the gateways' health and restarts (gateway_watch.h), creations' timers and
// failover (failover.h), the proxy's own requests (own_requests.h) and
// Delete PDN Connection Set walks (connection_set_deletions.h) each own
// their state.
//
// handle() takes one datagram from the forwarder, patches it in place and
// hands the result to the Egress; it never blocks, throws or allocates.
// Single-threaded: the worker's main loop is the only caller.
#pragma once

#include <cstdint>
#include <span>

#include "common/config/routing.h"
#include "common/group/gateway_table_shm.h"
#include "arrival.h"
#include "connection_set_deletions.h"
#include "egress.h"
#include "engine.h"
#include "failover.h"
#include "gateway_watch.h"
#include "own_requests.h"
#include "persist.h"
#include "procedures_v1.h"
#include "procedures_v2.h"
#include "session_table.h"
#include "transaction_table.h"
#include "worker_layout.h"

namespace gtpcp::worker {

class Restorer;

class Proxy {
 public:
  Proxy(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
        TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress);

  // One datagram from the forwarder. `bytes` is writable scratch the proxy may
  // patch (it is the ring slot, owned by the worker until released).
  void handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;

  // Timers of every part: creations' failover, the proxy's own requests,
  // gateway restarts, connection-set walks, expired transactions. Call it
  // every loop turn: the work it does is proportional to the time since the
  // last call.
  void tick(uint64_t now_ns) noexcept;

  // Replaces the routing document (between datagrams).
  void setRouting(const config::RoutingTable& routing);

  // Where the forwarder publishes the group's Recovery and its health
  // checks' gateway states and restarts; without it every gateway counts as
  // up and the settings' Recovery is the group's.
  void setGatewayStatus(const forwarder::GatewayTableShm* table);

  // Where changes of sessions go for Redis; none: not persisted.
  void setPersist(PersistSink* sink) noexcept { engine_.setPersist(sink); }
  // Who asks the storage for sessions this worker does not hold; none: a
  // message for an unknown TEID is answered Context Not Found at once.
  void setRestorer(Restorer* restorer) noexcept;

 private:
  Engine engine_;
  GatewayWatch gateways_;
  OwnRequests own_;
  Failover failover_;
  ConnectionSetDeletions set_deletions_;
  V2Procedures v2_;
  V1Procedures v1_;
};

}  // namespace gtpcp::worker
