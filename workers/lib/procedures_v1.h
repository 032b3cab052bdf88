// GTPv1-C on Gn/Gp (TS 29.060): the SGSN on the access leg, the GGSN on the
// gateway leg. A session is a primary PDP context with its secondaries: they
// share one TEID Control Plane on each side (§7.3.1: a secondary's Create PDP
// Context Request carries no TEID-C once the primary confirmed one), so one
// SessionShm holds them, its NSAPIs in `ebis` and the primary's in
// `default_ebi`.
//
// What the proxy changes: the header TEID and sequence number, the TEID
// Control Plane IE and the GSN Addresses for control plane (its own on the
// leg the message goes to). TEID Data I/II, the user-traffic GSN Addresses
// and every other IE pass byte for byte: GTP-U flows straight between SGSN
// and GGSN. What only this version has: the GSN Addresses' positions and
// checks, PDP contexts by NSAPI, PDU Notifications, edits that change a
// length (GTPv1 has no generic rewriter), the QoS Profile cap. The steps both
// versions share are Procedures<V1Traits> (procedures.h).
//
// handle() takes one datagram, patches it in place and sends the result; it
// never blocks, throws or allocates. Single-threaded: the worker's main loop
// is the only caller.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/config/routing.h"
#include "common/gtp/v1/message.h"
#include "procedures.h"

namespace gtpcp::worker {

class V1Procedures final : public Procedures<V1Traits> {
 public:
  V1Procedures(Engine& engine, GatewayWatch& gateways, Failover& failover, OwnRequests& own) noexcept
      : Procedures(engine, gateways, failover, own) {}

  // One GTPv1 datagram from the forwarder; `bytes` is writable scratch (the
  // ring slot) patched in place.
  void handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;

 private:
  friend class Procedures<V1Traits>;

  // -- the parts of the shared steps (procedures.h)
  bool nodeRequest(Context&) noexcept { return false; }  // none on Gn/Gp
  // A GGSN's PDU Notification Request (TEID 0, the subscriber by IMSI): to
  // the SGSN of the subscriber's contexts, under a session of its own.
  void relayToSubscriber(Context& c) noexcept;
  void relayRequest(Context& c, SessionShm& session, Leg from) noexcept;
  void otherMessage(Context& c) noexcept;
  bool admit(Context& c) noexcept;
  std::optional<config::Selection> place(Context& c, const std::optional<gtp::Digits>& imsi,
                                         uint16_t partition) noexcept;
  void recordCreation(const Context& c, SessionShm& s) noexcept;
  // The TEID Control Plane and the control-plane GSN Addresses a peer on
  // `from` put in the message, recorded as the session's and replaced by the
  // proxy's on the other leg (in `out_family` when the proxy has none in the
  // address's own). A cause when a GSN Address is malformed, else 0.
  uint8_t translate(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept;
  // A rule's overrides on a Create PDP Context Request (APN, Charging
  // Characteristics, Selection Mode, QoS cap); never a refusal: 0.
  uint8_t applyOverrides(Context& c, const config::Overrides& overrides) noexcept;
  void replaceApn(Context& c, std::span<const uint8_t> apn) noexcept;
  // The message to send: patched in place, or written anew when an edit
  // changed a length; Recovery IEs set to the group's value. GTPv1 has no
  // piggybacking: the flag changes nothing.
  std::span<const uint8_t> outgoing(Context& c, bool with_piggybacked) noexcept;
  bool translatePiggybacked(Context&, SessionShm&, Leg) noexcept { return false; }
  void established(const Context& c, const TransactionShm& t, SessionShm& s) noexcept;
  void answered(const Context& c, const TransactionShm& t, SessionShm& s, Leg from) noexcept;

  // -- GTPv1 only
  // A notification's session (no NSAPI) is over.
  void endNotification(SessionShm& session) noexcept;

  // An edit that changes a length (an IE replaced, removed or added),
  // applied by outgoing().
  struct Edit {
    enum class Kind : uint8_t { kReplace, kRemove, kInsert };
    Kind kind = Kind::kReplace;
    uint8_t type = 0;      // kInsert: the IE type added (before the first IE of a higher type)
    uint16_t ie = 0;       // kReplace, kRemove: the IE's index in the message
    uint16_t length = 0;
    std::array<uint8_t, 104> value{};
  };
  static constexpr std::size_t kMaxEdits = 8;
  bool addEdit(const Edit& edit) noexcept;

  gtp::v1::Message message_;  // the message being handled
  std::array<Edit, kMaxEdits> edits_{};
  std::size_t edit_count_ = 0;
  // PDU Notification sessions open (an estimate after a restart: 0), so
  // that creations look for one only when there may be one.
  uint32_t notifications_open_ = 0;
};

}  // namespace gtpcp::worker
