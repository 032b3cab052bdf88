// The steps of the worker's procedures that are the same in GTPv2-C and
// GTPv1-C, written once over the version's traits (versions.h): a request's
// way (a retransmission, a reused number, a session's TEID, held for the
// storage, Context Not Found), a session's creation (placed by the routing
// document, a gateway picked, sent with the proxy's numbers), a response's
// way (its transaction, a duplicate, an answer to the proxy's own request, a
// session gone meanwhile, a TEID that is not the session's, the end of a
// creation or a relayed answer), retransmissions and rejections.
//
// What differs stays in each version's procedures (procedures_v2.cc,
// procedures_v1.cc), the class V::Procedures derived from this one; the
// steps here call it for each part that differs:
//   bool nodeRequest(Context&)           a node's request, naming no session; true: handled
//   void relayToSubscriber(Context&)     the request that names its subscriber by IMSI (TEID 0)
//   void relayRequest(Context&, SessionShm&, Leg from)   each version's own: the steps differ
//   void otherMessage(Context&)          neither request nor response
//   bool admit(Context&)                 a creation's mandatory IEs; false: rejected
//   std::optional<config::Selection> place(Context&, const std::optional<gtp::Digits>& imsi, uint16_t partition)
//   void recordCreation(const Context&, SessionShm&)   what a creation tells of its session
//   uint8_t translate(Context&, SessionShm&, Leg from, uint8_t out_family)   control endpoints; a cause, else 0
//   uint8_t applyOverrides(Context&, const config::Overrides&)              a cause, else 0
//   void replaceApn(Context&, std::span<const uint8_t> apn)   the APN IE's value, when there is one
//   std::span<const uint8_t> outgoing(Context&, bool with_piggybacked)
//   bool translatePiggybacked(Context&, SessionShm&, Leg from)
//   void established(const Context&, const TransactionShm&, SessionShm&)    an accepted creation
//   void answered(const Context&, const TransactionShm&, SessionShm&, Leg from)   what a relayed answer means
// Calls are static (the derived class is known): no virtual call per datagram.
//
// Single-threaded: the worker's main loop is the only caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "common/config/routing.h"
#include "common/gtp/errors.h"
#include "common/log/log.h"
#include "engine.h"
#include "failover.h"
#include "gateway_watch.h"
#include "own_requests.h"
#include "versions.h"

namespace gtpcp::worker {

template <class V>
class Procedures {
 public:
  using Context = worker::Context<V>;

 protected:
  Procedures(Engine& engine, GatewayWatch& gateways, Failover& failover, OwnRequests& own) noexcept
      : engine_(engine), gateways_(gateways), failover_(failover), own_(own), counters_(engine.counters()) {}

  // A datagram that did not decode: a request whose header reads still gets
  // the cause it earned.
  void decodeFailed(const Arrival& arrival, std::span<const uint8_t> bytes, const gtp::Error& error) noexcept;
  // The leg a message came from. The proxy's TEID in its header names it;
  // without one, a creation comes from the access side, a request naming
  // its subscriber from a gateway, a response from where its request went,
  // anything else from the side its sender's host is on.
  Leg receivedLeg(const typename V::Header& h, const Arrival& arrival) noexcept;
  // A decoded datagram: its leg noted in `c`, and counted (once: not again
  // when the restorer hands it back).
  void received(Context& c) noexcept {
    c.leg = receivedLeg(c.message.header(), c.arrival);
    if (!c.arrival.replayed) engine_.metrics().received(V::kVersion, c.leg, c.message.header().message_type);
  }
  // A decoded message, by its role.
  void dispatch(Context& c) noexcept;
  // A new session of this version in `partition`, through gateway `gateway`,
  // or nullptr (the request refused).
  SessionShm* allocate(Context& c, uint16_t partition, uint16_t gateway) noexcept;
  // Answers a request with `cause` (and the offending IE when given), the
  // requester's TEID in the header.
  void reject(Context& c, uint8_t cause, Offending offending = {}) noexcept;
  // An accepted deletion (or a peer that no longer has it) ended `session`.
  void deleted(SessionShm& session) noexcept {
    engine_.endSession(session);
    counters_.sessions_deleted.add();
    engine_.countSessions();
  }
  // A message toward the access leg naming the APN a rule rewrote: the SGW
  // or SGSN gets its own back.
  void restoreApn(Context& c, const SessionShm& session) noexcept;
  // A transaction for `request` (the message of `c`, or one piggybacked on
  // it) from the datagram's sender, sent on toward `toward`.
  TransactionShm* open(const Context& c, const typename V::Header& request, uint64_t response_key,
                       const SessionShm& session, Leg toward, uint8_t socket,
                       const net::Address& destination) noexcept {
    return engine_.open(c.arrival, V::requesterSequence(request.sequence_number), request.message_type, V::kFlags,
                        response_key, session, toward, socket, destination);
  }

  Engine& engine_;
  GatewayWatch& gateways_;
  Failover& failover_;
  OwnRequests& own_;
  WorkerCounters& counters_;

 private:
  typename V::Procedures& self() noexcept { return static_cast<typename V::Procedures&>(*this); }
  void handleRequest(Context& c) noexcept;
  void handleResponse(Context& c) noexcept;
  // A session-creating request (TEID 0).
  void create(Context& c) noexcept;
  // A request seen before: sent on again while pending, answered from the
  // cache once answered.
  void retransmitted(Context& c, TransactionShm& t) noexcept;
  void finishCreate(Context& c, TransactionShm& t, SessionShm& s) noexcept;
  void relayResponse(Context& c, TransactionShm& t, SessionShm& s) noexcept;
  // A creation refused because no gateway of its pool is up (health
  // checks): one line a second at most, with the count held back.
  void logNoGateway(uint16_t pool) noexcept;

  log::RateLimit no_gateway_log_{std::chrono::seconds(1)};
};

// In the header: each version's handle() calls it for every datagram, and
// inlines it there.
template <class V>
inline void Procedures<V>::dispatch(Context& c) noexcept {
  const uint8_t type = c.message.header().message_type;
  if (V::isRequest(type)) {
    handleRequest(c);
  } else if (V::isResponse(type)) {
    handleResponse(c);
  } else {
    self().otherMessage(c);
  }
}

}  // namespace gtpcp::worker
