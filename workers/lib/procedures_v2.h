// GTPv2-C on S5/S8 and S2b (TS 29.274): the SGW (or ePDG) on the access
// leg, the PGW on the gateway leg. What only this version has or does
// differently: the control-plane F-TEIDs of the message's top level
// translated, messages piggybacked on a response, commands and the requests
// they trigger, bearers and FQ-CSIDs tracked, a PGW Downlink Triggering
// Notification and messages without a reply relayed, a Delete PDN Connection
// Set Request, the rule's overrides on a Create Session Request. The steps
// both versions share are Procedures<V2Traits> (procedures.h).
//
// handle() takes one datagram, patches it in place and sends the result; it
// never blocks, throws or allocates. Single-threaded: the worker's main loop
// is the only caller.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/config/routing.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/rewrite.h"
#include "connection_set_deletions.h"
#include "procedures.h"

namespace gtpcp::worker {

class V2Procedures final : public Procedures<V2Traits> {
 public:
  V2Procedures(Engine& engine, GatewayWatch& gateways, Failover& failover, OwnRequests& own,
               ConnectionSetDeletions& set_deletions) noexcept
      : Procedures(engine, gateways, failover, own), set_deletions_(set_deletions) {}

  // One GTPv2 datagram from the forwarder; `bytes` is writable scratch (the
  // ring slot) patched in place.
  void handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;

 private:
  friend class Procedures<V2Traits>;

  // -- the parts of the shared steps (procedures.h)
  // A Delete PDN Connection Set Request.
  bool nodeRequest(Context& c) noexcept;
  // A PGW Downlink Triggering Notification: to the SGW of the IMSI's session.
  void relayToSubscriber(Context& c) noexcept;
  void relayRequest(Context& c, SessionShm& session, Leg from) noexcept;
  void otherMessage(Context& c) noexcept;
  bool admit(Context& c) noexcept;
  std::optional<config::Selection> place(Context& c, const std::optional<gtp::Digits>& imsi,
                                         uint16_t partition) noexcept;
  void recordCreation(const Context& c, SessionShm& s) noexcept;
  // Rewrites the top-level control-plane F-TEIDs a peer on `from` put in the
  // message (its own GTP-C endpoint) to the proxy's endpoint on the other
  // leg, and records the peer's in the session. No Resources when one could
  // not be rewritten, else 0.
  uint8_t translate(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept;
  // A rule's overrides on a Create Session Request; a cause when it must be
  // refused (a PDN type the rule does not allow), else 0.
  uint8_t applyOverrides(Context& c, const config::Overrides& overrides) noexcept;
  void replaceApn(Context& c, std::span<const uint8_t> apn) noexcept;
  // The datagram to send: as patched in place, or rewritten when an edit
  // changed a length; with the piggybacked message or without; Recovery IEs
  // set to the group's value.
  std::span<const uint8_t> outgoing(Context& c, bool with_piggybacked) noexcept;
  // Translates the request piggybacked on the response being relayed, as a
  // request of its own from the same peer. False when it cannot be relayed
  // (then the response goes alone, without it: the peer will retransmit it).
  bool translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept;
  void established(const Context& c, const TransactionShm& t, SessionShm& s) noexcept;
  void answered(const Context& c, const TransactionShm& t, SessionShm& s, Leg from) noexcept;

  // -- GTPv2 only
  // A message of a session that has no reply (Trace Session Activation...).
  void relayOneWay(Context& c) noexcept;
  // A Delete PDN Connection Set Request; every worker gets a copy, one answers.
  void deletePdnConnectionSet(Context& c) noexcept;
  // The pending command of `session` the proxy sent with `sequence`, or nullptr.
  TransactionShm* triggeringCommand(uint32_t sequence, const SessionShm& session) noexcept;
  // Keeps SessionShm::ebis in step with an accepted answer to a request
  // that creates or deletes bearers.
  void trackBearers(uint8_t request_type, SessionShm& session, const gtp::v2::Message& response) noexcept;
  uint8_t restrictPdnType(Context& c, const config::Overrides& overrides) noexcept;
  // Every top-level Recovery IE of `m` (at `bytes`) set to the group's value.
  void announceRecovery(const gtp::v2::Message& m, std::span<uint8_t> bytes) noexcept;
  // The Rewriter of the datagram's first message, made on first use.
  gtp::v2::Rewriter& rewriter() noexcept;

  ConnectionSetDeletions& set_deletions_;
  gtp::v2::Datagram datagram_;
  std::optional<gtp::v2::Rewriter> rewriter_;  // of the datagram being handled, when it needs one
};

}  // namespace gtpcp::worker
