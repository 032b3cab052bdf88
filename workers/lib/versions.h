// What tells GTPv2-C (TS 29.274, S5/S8) and GTPv1-C (TS 29.060, Gn/Gp) apart
// where the worker's steps are otherwise the same: the header and message
// types, how a request is numbered and its answer found, how a TEID or a
// sequence number is patched, which causes accept, refuse or say "no
// resources", which messages create a session. The steps written once for
// both versions (procedures.h, failover.h, own_requests.h) are templates over
// these traits, as classification is in the forwarder.
//
// Private to workers/lib. Everything here is called per datagram: noexcept,
// no allocation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "common/config/routing.h"
#include "common/group/session_identity.h"
#include "common/gtp/errors.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/patch.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/patch.h"
#include "engine.h"
#include "gtp_constants.h"

namespace gtpcp::worker {

class V1Procedures;
class V2Procedures;

// The IE a rejection names (a GTPv2 Cause's offending IE; GTPv1 has none).
struct Offending {
  uint8_t type = 0;
  uint8_t instance = 0;
};

// The datagram being handled, for the procedures of version V.
template <class V>
struct Context {
  const Arrival& arrival;
  std::span<uint8_t> bytes;  // the whole datagram (GTPv1: its one message)
  const typename V::Message& message;  // its first message
  std::span<uint8_t> message_bytes;     // that message's octets, writable
  // The requester's TEID as received, once translation overwrote it in
  // place: a rejection after that still names the requester's.
  std::optional<uint32_t> sender_teid = std::nullopt;
  // The leg it came from (Procedures::receivedLeg()).
  Leg leg = Leg::kAccess;
};

struct V2Traits {
  using Header = gtp::v2::Header;
  using Message = gtp::v2::Message;
  using Procedures = V2Procedures;
  using MessageType = gtp::v2::MessageType;

  static constexpr uint8_t kVersion = gtp::v2::kVersion;
  static constexpr uint8_t kFlags = 0;  // TransactionShm::flags of the version's transactions
  static constexpr auto kCreateRequest = static_cast<uint8_t>(MessageType::kCreateSessionRequest);
  static constexpr auto kCreateResponse = static_cast<uint8_t>(MessageType::kCreateSessionResponse);
  // TEID 0 by definition (§5.5.2), names its subscriber by IMSI.
  static constexpr auto kNamesSubscriber = static_cast<uint8_t>(MessageType::kPgwDownlinkTriggeringNotification);
  static constexpr auto kNoResources = static_cast<uint8_t>(gtp::v2::Cause::kNoResourcesAvailable);
  static constexpr auto kContextNotFound = static_cast<uint8_t>(gtp::v2::Cause::kContextNotFound);
  // What the proxy sends on its own: the SGW told of a PGW restart, the
  // deletion of a session a gateway made for a creation sent elsewhere.
  static constexpr auto kRestartNotification = static_cast<uint8_t>(MessageType::kDeleteBearerRequest);
  static constexpr auto kOrphanDeletion = static_cast<uint8_t>(MessageType::kDeleteSessionRequest);

  static bool accepted(uint8_t cause) noexcept { return gtp::v2::causeAccepted(cause); }
  static bool ofVersion(const TransactionShm& t) noexcept { return (t.flags & kGtpv1) == 0; }
  static bool isCreation(const TransactionShm& t) noexcept { return ofVersion(t) && t.message_type == kCreateRequest; }
  static bool isRequest(uint8_t type) noexcept {
    return gtp::v2::messageTypeInfo(type).role == gtp::v2::MessageRole::kRequest;
  }
  static bool isResponse(uint8_t type) noexcept {
    return gtp::v2::messageTypeInfo(type).role == gtp::v2::MessageRole::kResponse;
  }

  // The header TEID; 0 when the header has none (T=0).
  static uint32_t teid(const Header& h) noexcept { return h.teidPresent() ? h.teid : 0; }
  static bool teidPresent(const Header& h) noexcept { return h.teidPresent(); }
  static bool numbered(const Header&) noexcept { return true; }
  // How a requester's number is kept in its transaction.
  static uint32_t requesterSequence(uint32_t sequence) noexcept { return sequence; }
  // The proxy's next number; the leg plays no part (one space for both).
  static Numbered next(Engine& engine, Leg /*toward*/, bool command = false) noexcept {
    const uint32_t sequence = engine.nextV2Sequence(command);
    return {sequence, proxyNumbered(sequence)};
  }
  // The transaction a response answers: by the proxy's number, or, for an
  // SGW answering a command-triggered request with its own command's number
  // (unique only within the session), by that number and the header TEID.
  static TransactionShm* match(TransactionTable& transactions, const Header& h) noexcept {
    TransactionShm* t = nullptr;
    if ((h.sequence_number & kCommandBit) && teid(h) != 0)
      t = transactions.findByResponse(commandNumbered(h.teid, h.sequence_number));
    return t != nullptr ? t : transactions.findByResponse(proxyNumbered(h.sequence_number));
  }
  static void patchTeid(std::span<uint8_t> bytes, uint32_t teid) noexcept { gtp::v2::patchTeid(bytes, teid); }
  static void patchSequenceNumber(std::span<uint8_t> bytes, uint32_t sequence) noexcept {
    gtp::v2::patchSequenceNumber(bytes, sequence);
  }

  static std::optional<uint8_t> cause(const Message& m) noexcept {
    auto c = gtp::v2::readFirst<gtp::v2::CauseIe>(m);
    return c ? std::optional<uint8_t>(c->value) : std::nullopt;
  }
  static std::optional<uint8_t> recovery(const Message& m) noexcept {
    auto r = gtp::v2::readFirst<gtp::v2::Recovery>(m);
    return r ? std::optional<uint8_t>(r->value) : std::nullopt;
  }
  // The TEID a requester names itself with: its sender F-TEID's.
  static std::optional<uint32_t> senderTeid(const Message& m) noexcept {
    auto f = gtp::v2::readFirst<gtp::v2::FTeid>(m, 0);
    return f ? std::optional<uint32_t>(f->teid) : std::nullopt;
  }
  // The gateway's TEID in an answer to a creation: its S5/S8 F-TEID's.
  static uint32_t gatewayTeid(const Message& answer) noexcept {
    auto f = gtp::v2::readFirst<gtp::v2::FTeid>(answer, 1);
    return f ? f->teid : 0;
  }
  static std::optional<gtp::Digits> imsi(const Message& m) noexcept {
    auto i = gtp::v2::readFirst<gtp::v2::Imsi>(m);
    return i ? std::optional<gtp::Digits>(i->digits) : std::nullopt;
  }
  // The APN IE's value as received; empty when there is none.
  static std::span<const uint8_t> apn(const Message& m) noexcept {
    const gtp::v2::Ie* ie = m.find(gtp::v2::IeType::kApn);
    return ie != nullptr ? m.value(*ie) : std::span<const uint8_t>{};
  }
  static uint16_t partition(const Message& creation) noexcept { return group::partitionOfCreateSession(creation); }

  static auto decodeHeader(std::span<const uint8_t> bytes) noexcept { return gtp::v2::decodeHeader(bytes); }
  static uint8_t causeOf(gtp::Errc code) noexcept { return gtp::v2Cause(code); }
  static uint8_t exhaustedCause(const config::Failover& failover) noexcept { return failover.exhaustedCause(); }
  static void persist(Engine& engine, const SessionShm& s, const Message& m, Leg from, uint8_t /*nsapi*/) noexcept {
    engine.persist(s, m, from);
  }

  // Written in procedures_v2.cc:
  // A response of `type` carrying only a Cause (and the offending IE).
  static gtp::Result<std::span<uint8_t>> causeOnly(std::span<uint8_t> buffer, uint8_t type, uint32_t teid,
                                                   uint32_t sequence, uint8_t cause, Offending offending) noexcept;
  // `request` (a kept creation) with the proxy's control endpoint in
  // `family`: a view of the engine's rewrite buffer, or `request` itself
  // when it cannot be.
  static std::span<uint8_t> controlAddressIn(Engine& engine, std::span<uint8_t> request, uint8_t family) noexcept;
  // The SGW of `s` told its gateway restarted: a Delete Bearer Request.
  static gtp::Result<std::span<uint8_t>> restartNotification(std::span<uint8_t> buffer, const SessionShm& s,
                                                             uint32_t sequence) noexcept;
  // The gateway that sent `answer` asked to delete what it made for `s`
  // (when known) under `gateway_teid`: a Delete Session Request.
  static gtp::Result<std::span<uint8_t>> orphanDeletion(std::span<uint8_t> buffer, const Message& answer,
                                                        const SessionShm* s, uint32_t gateway_teid,
                                                        uint32_t sequence) noexcept;
};

struct V1Traits {
  using Header = gtp::v1::Header;
  using Message = gtp::v1::Message;
  using Procedures = V1Procedures;
  using MessageType = gtp::v1::MessageType;

  static constexpr uint8_t kVersion = gtp::v1::kVersion;
  static constexpr uint8_t kFlags = kGtpv1;
  static constexpr auto kCreateRequest = static_cast<uint8_t>(MessageType::kCreatePdpContextRequest);
  static constexpr auto kCreateResponse = static_cast<uint8_t>(MessageType::kCreatePdpContextResponse);
  // GGSN to SGSN with TEID 0 (§7.3.8, no PDP context yet), names its
  // subscriber by IMSI.
  static constexpr auto kNamesSubscriber = static_cast<uint8_t>(MessageType::kPduNotificationRequest);
  static constexpr uint8_t kNoResources = kV1CauseNoResourcesAvailable;
  static constexpr uint8_t kContextNotFound = kV1CauseNonExistent;
  static constexpr auto kRestartNotification = static_cast<uint8_t>(MessageType::kDeletePdpContextRequest);
  static constexpr auto kOrphanDeletion = static_cast<uint8_t>(MessageType::kDeletePdpContextRequest);

  static bool accepted(uint8_t cause) noexcept { return gtp::v1::causeAccepted(cause); }
  static bool ofVersion(const TransactionShm& t) noexcept { return (t.flags & kGtpv1) != 0; }
  static bool isCreation(const TransactionShm& t) noexcept { return ofVersion(t) && t.message_type == kCreateRequest; }
  static bool isRequest(uint8_t type) noexcept {
    return gtp::v1::messageTypeInfo(type).role == gtp::v1::MessageRole::kRequest;
  }
  static bool isResponse(uint8_t type) noexcept {
    return gtp::v1::messageTypeInfo(type).role == gtp::v1::MessageRole::kResponse;
  }

  static uint32_t teid(const Header& h) noexcept { return h.teid; }
  static bool teidPresent(const Header&) noexcept { return true; }  // GTP-C always has one
  // GTP-C always carries a sequence number (§9.1): nothing can be matched without it.
  static bool numbered(const Header& h) noexcept { return h.hasSequenceNumber(); }
  static uint32_t requesterSequence(uint32_t sequence) noexcept {
    return v1RequesterSequence(static_cast<uint16_t>(sequence));
  }
  static Numbered next(Engine& engine, Leg toward, bool /*command*/ = false) noexcept {
    const uint16_t sequence = engine.nextV1Sequence(toward);
    return {sequence, v1Numbered(static_cast<uint8_t>(toward), sequence)};
  }
  // Numbers are per leg: the TEID is the proxy's on the leg the response
  // came from, where its request went; TEID 0 (a peer that does not know
  // the context, "Non-existent") leaves both legs to try.
  static TransactionShm* match(TransactionTable& transactions, const Header& h) noexcept {
    auto on = [&](Leg leg) {
      return transactions.findByResponse(v1Numbered(static_cast<uint8_t>(leg), h.sequence_number));
    };
    if (h.teid != 0) return on(splitTeid(h.teid).leg);
    TransactionShm* t = on(Leg::kGateway);
    return t != nullptr ? t : on(Leg::kAccess);
  }
  static void patchTeid(std::span<uint8_t> bytes, uint32_t teid) noexcept { gtp::v1::patchTeid(bytes, teid); }
  static void patchSequenceNumber(std::span<uint8_t> bytes, uint32_t sequence) noexcept {
    gtp::v1::patchSequenceNumber(bytes, static_cast<uint16_t>(sequence));
  }

  static std::optional<uint8_t> cause(const Message& m) noexcept {
    auto c = gtp::v1::readNth<gtp::v1::CauseIe>(m);
    return c ? std::optional<uint8_t>(c->value) : std::nullopt;
  }
  static std::optional<uint8_t> recovery(const Message& m) noexcept {
    auto r = gtp::v1::readNth<gtp::v1::Recovery>(m);
    return r ? std::optional<uint8_t>(r->value) : std::nullopt;
  }
  static std::optional<uint32_t> senderTeid(const Message& m) noexcept {
    auto t = gtp::v1::readNth<gtp::v1::TeidControlPlane>(m);
    return t ? std::optional<uint32_t>(t->value) : std::nullopt;
  }
  static uint32_t gatewayTeid(const Message& answer) noexcept { return senderTeid(answer).value_or(0); }
  static std::optional<gtp::Digits> imsi(const Message& m) noexcept {
    auto i = gtp::v1::readNth<gtp::v1::Imsi>(m);
    return i ? std::optional<gtp::Digits>(i->digits) : std::nullopt;
  }
  static std::span<const uint8_t> apn(const Message& m) noexcept {
    const gtp::v1::Ie* ie = m.find(gtp::v1::IeType::kApn);
    return ie != nullptr ? m.value(*ie) : std::span<const uint8_t>{};
  }
  static uint16_t partition(const Message& creation) noexcept { return group::partitionOfCreatePdpContext(creation); }

  static auto decodeHeader(std::span<const uint8_t> bytes) noexcept { return gtp::v1::decodeHeader(bytes); }
  static uint8_t causeOf(gtp::Errc code) noexcept { return gtp::v1Cause(code); }
  // TS 29.060 has no "remote peer not responding": System failure says the
  // network, not the subscriber, failed.
  static uint8_t exhaustedCause(const config::Failover& failover) noexcept {
    return failover.when_exhausted == config::Failover::WhenExhausted::kNoResourcesAvailable
               ? kV1CauseNoResourcesAvailable
               : kV1CauseSystemFailure;
  }
  static void persist(Engine& engine, const SessionShm& s, const Message& m, Leg from, uint8_t nsapi) noexcept {
    engine.persist(s, m, from, nsapi);
  }

  // Written in procedures_v1.cc, as for GTPv2 (GTPv1 names no offending IE;
  // the restart notification is a Delete PDP Context Request with Teardown).
  static gtp::Result<std::span<uint8_t>> causeOnly(std::span<uint8_t> buffer, uint8_t type, uint32_t teid,
                                                   uint32_t sequence, uint8_t cause, Offending offending) noexcept;
  static std::span<uint8_t> controlAddressIn(Engine& engine, std::span<uint8_t> request, uint8_t family) noexcept;
  static gtp::Result<std::span<uint8_t>> restartNotification(std::span<uint8_t> buffer, const SessionShm& s,
                                                             uint32_t sequence) noexcept;
  static gtp::Result<std::span<uint8_t>> orphanDeletion(std::span<uint8_t> buffer, const Message& answer,
                                                        const SessionShm* s, uint32_t gateway_teid,
                                                        uint32_t sequence) noexcept;
};

// Sends a response of `response_type` carrying only `cause` to `to`, a peer
// on `leg`, from forwarder socket `socket`; as the answer of `transaction`
// when given (kept for its retransmissions). A cause that does not accept is
// a refusal of the proxy's own, counted.
template <class V>
void answer(Engine& engine, Leg leg, uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid,
            uint32_t sequence, uint8_t cause, Offending offending = {},
            TransactionShm* transaction = nullptr) noexcept {
  std::array<uint8_t, 64> buffer;
  auto out = V::causeOnly(buffer, response_type, teid, sequence, cause, offending);
  if (!out) return;
  if (!V::accepted(cause)) {
    engine.counters().rejections_sent.add();
    engine.metrics().refused(V::kVersion, cause);
  }
  if (transaction != nullptr) {
    engine.reply(*transaction, *out);
  } else {
    engine.send(leg, socket, to, *out);
  }
}

// The answer of transaction `t`, to its requester with its number.
template <class V>
void answer(Engine& engine, TransactionShm& t, uint8_t response_type, uint32_t teid, uint8_t cause) noexcept {
  answer<V>(engine, other(static_cast<Leg>(t.toward)), t.requester_socket, t.requester, response_type, teid,
            t.requester_sequence, cause, Offending{}, &t);
}

}  // namespace gtpcp::worker
