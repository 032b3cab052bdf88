// The GTPv2-C S5/S8 procedures of a worker: session creation and deletion,
// and relaying every other message of a known session with TEIDs, sequence
// numbers and control-plane F-TEIDs translated (DESIGN.md, "Translation
// rules").
//
// handle() takes one datagram from the forwarder, patches it in place and
// hands the result to the Egress; it never blocks, throws or allocates.
// Single-threaded: the worker's main loop is the only caller.
#pragma once

#include <cstdint>
#include <span>

#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/gtp/v2/message.h"
#include "common/net/address.h"
#include "workers/lib/egress.h"
#include "workers/lib/session_table.h"
#include "workers/lib/transaction_table.h"
#include "workers/lib/worker_shm.h"

namespace gtpcp::worker {

struct ProxySettings {
  uint32_t workers = 1;
  uint32_t index = 0;
  group::SocketPlan sockets;
  uint64_t transaction_timeout_ns = 9'000'000'000;  // T3 x (N3 + 1)
};

// What arrived: the datagram's source and the socket it came in on.
struct Arrival {
  net::Address peer;
  uint8_t socket = 0;
  uint64_t now_ns = 0;   // CLOCK_MONOTONIC, for timers
  uint64_t wall_ns = 0;  // CLOCK_REALTIME, for session records
};

class Proxy {
 public:
  Proxy(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
        TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress);

  // One datagram from the forwarder. `bytes` is writable scratch the proxy may
  // patch (it is the ring slot, owned by the worker until released).
  void handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;

  // Expires transactions older than the timeout. Call it every loop turn: the
  // work it does is proportional to the time since the last call.
  void tick(uint64_t now_ns) noexcept;

  // Replaces the routing document (between datagrams).
  void setRouting(const config::RoutingTable& routing);

  struct Context;  // the datagram being handled

 private:
  void handleRequest(Context& c) noexcept;
  void handleResponse(Context& c) noexcept;
  void createSession(Context& c) noexcept;
  void relayRequest(Context& c, SessionShm& session, Leg from) noexcept;
  void finishCreateSession(Context& c, TransactionShm& t, SessionShm& session) noexcept;
  void relayResponse(Context& c, TransactionShm& t, SessionShm* session) noexcept;

  // Rewrites the top-level control-plane F-TEIDs a peer on `from` put in the
  // message (its own GTP-C endpoint) to the proxy's endpoint on the other
  // leg, and records the peer's in the session.
  bool translateControlFTeids(Context& c, SessionShm& session, Leg from) noexcept;
  // Translates the request piggybacked on the response being relayed, as a
  // request of its own from the same peer. False when it cannot be relayed
  // (then the response goes alone, without it: the peer will retransmit it).
  bool translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept;
  // Answers a request with `cause` (and the offending IE when given).
  void reject(Context& c, uint8_t cause, uint8_t offending_type = 0, uint8_t offending_instance = 0) noexcept;
  // Sends a response of `response_type` carrying only a Cause.
  void answer(uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid,
              uint32_t sequence, uint8_t cause, uint8_t offending_type = 0,
              uint8_t offending_instance = 0) noexcept;
  uint32_t allocateSequence(bool command) noexcept;
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept;
  net::Address proxyAddress(Leg leg, uint8_t family) const noexcept;

  ProxySettings settings_;
  WorkerShmHeader& header_;
  WorkerCounters& counters_;
  SessionTable& sessions_;
  TransactionTable& transactions_;
  const config::RoutingTable* routing_;
  config::GatewayPicker picker_;
  Egress& egress_;
  gtp::v2::Datagram datagram_;
  uint64_t last_tick_ns_ = 0;
  uint64_t sweep_credit_ = 0;  // table slots the sweep owes
};

}  // namespace gtpcp::worker
