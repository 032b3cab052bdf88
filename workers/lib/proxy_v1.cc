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
// and GGSN.
#include "proxy.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/group/session_identity.h"
#include "common/gtp/bytes.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/patch.h"
#include "common/gtp/v1/qos.h"
#include "common/gtp/v1/validate.h"
#include "common/partition.h"
#include "proxy_context.h"
#include "restore.h"

namespace gtpcp::worker {

namespace v1 = gtp::v1;
using v1::IeType;
using v1::MessageType;

struct Proxy::V1Context {
  const Arrival& arrival;
  std::span<uint8_t> bytes;  // the message: GTPv1 has no piggybacking
  const v1::Message& message;
  // The requester's TEID-C once translation overwrote it in place: a
  // rejection after that still names the requester's.
  std::optional<uint32_t> sender_teid = std::nullopt;
};

namespace {

constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kAnswered = static_cast<uint8_t>(TransactionState::kAnswered);
constexpr uint8_t kActive = static_cast<uint8_t>(SessionState::kActive);
constexpr uint8_t kCreating = static_cast<uint8_t>(SessionState::kCreating);

constexpr uint8_t type(MessageType t) { return static_cast<uint8_t>(t); }

// TS 29.060 §7.7.1: 128-191 accept a request, 192-255 reject it.
bool accepted(uint8_t cause) { return cause >= 128 && cause < 192; }

constexpr uint8_t kCauseNonExistent = 192;
constexpr uint8_t kCauseMandatoryIeIncorrect = 201;
constexpr uint8_t kCauseOptionalIeIncorrect = 203;
constexpr uint8_t kCauseNoResourcesAvailable = 199;
constexpr uint8_t kCauseSystemFailure = 204;
// Request cause (§7.7.1): the MS is asked to activate its context again.
constexpr uint8_t kCauseReactivationRequested = 6;

// The GSN Addresses of a message, by position (GTPv1 has no instances):
// for the control plane, 0 and 2 (the Alternative address, the other
// family); for user traffic, 1 and 3. An Update PDP Context Response from
// the SGSN (§7.3.4 Table 10) carries user-traffic addresses only.
bool isControlGsnAddress(uint8_t message_type, Leg from, std::size_t position) {
  if (message_type == type(MessageType::kUpdatePdpContextResponse) && from == Leg::kAccess) return false;
  return position % 2 == 0;
}

std::optional<net::Address> addressOf(std::span<const uint8_t> value) {
  if (value.size() == 4) {
    gtp::Ipv4 a;
    std::memcpy(a.octets.data(), value.data(), 4);
    return net::Address::v4(a, kGtpcPort);
  }
  if (value.size() == 16) {
    gtp::Ipv6 a;
    std::memcpy(a.octets.data(), value.data(), 16);
    return net::Address::v6(a, kGtpcPort);
  }
  return std::nullopt;
}

// The first NSAPI IE (a secondary's Create PDP Context Request has a second,
// the Linked NSAPI).
uint8_t nsapiOf(const v1::Message& m) {
  auto n = v1::readNth<v1::Nsapi>(m, 0);
  return n ? n->value : 0;
}

// NSAPIs are 4 bits (TS 24.008 §10.5.6.2): 5-15 name contexts, yet some
// SGSNs (sgsnemu) send 0; every value gets its bit of SessionShm::ebis.
uint16_t nsapiBit(uint8_t nsapi) { return static_cast<uint16_t>(1u << (nsapi & 0x0f)); }

// SessionShm::default_ebi of the session a PDU Notification opened: it has
// no PDP context of its own.
constexpr uint8_t kNotificationNsapi = 0xff;
bool isNotification(const SessionShm& s) { return s.default_ebi == kNotificationNsapi; }

bool isCreation(const TransactionShm& t) {
  return (t.flags & kGtpv1) && t.message_type == type(MessageType::kCreatePdpContextRequest);
}

}  // namespace

void Proxy::handleV1(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  v1_edit_count_ = 0;
  counters_.v1_datagrams_received.add();
  if (auto decoded = v1_message_.decode(bytes); !decoded) {
    counters_.decode_errors.add();
    // A request whose header reads still gets the cause it earned.
    auto header = v1::decodeHeader(bytes);
    const uint8_t cause = gtp::v1Cause(decoded.error().code);
    if (header && header->hasSequenceNumber() && cause != 0 &&
        v1::messageTypeInfo(header->message_type).role == v1::MessageRole::kRequest) {
      answerV1(arrival.socket, arrival.peer, static_cast<uint8_t>(header->message_type + 1), 0,
               header->sequence_number, cause);
    }
    return;
  }
  const v1::Message& m = v1_message_;
  V1Context c{arrival, bytes.first(m.bytes().size()), m};
  if (!m.header().hasSequenceNumber()) {
    // GTP-C always carries one (TS 29.060 §9.1): nothing can be matched without it.
    counters_.messages_dropped.add();
    return;
  }
  switch (v1::messageTypeInfo(m.header().message_type).role) {
    case v1::MessageRole::kRequest: handleV1Request(c); break;
    case v1::MessageRole::kResponse: handleV1Response(c); break;
    default:
      // Error Indication and the other messages without a reply belong to
      // the user plane (TS 29.281), whose TEIDs the proxy does not map.
      if (m.messageType() == MessageType::kErrorIndication) counters_.v1_error_indications.add();
      counters_.messages_dropped.add();
      break;
  }
}

void Proxy::handleV1Request(V1Context& c) noexcept {
  const v1::Header& h = c.message.header();
  const uint32_t requester_sequence = v1RequesterSequence(h.sequence_number);
  if (TransactionShm* t = transactions_.findByRequester(c.arrival.peer, requester_sequence)) {
    if (t->message_type == h.message_type && (t->flags & kGtpv1)) {
      retransmittedV1(c, *t);
      return;
    }
    counters_.sequence_reused.add();
    transactions_.close(*t);
  }
  if (h.teid == 0) {
    switch (c.message.messageType()) {
      case MessageType::kCreatePdpContextRequest: createPdpContext(c); return;
      case MessageType::kPduNotificationRequest: relayPduNotification(c); return;
      default:
        counters_.context_not_found.add();
        rejectV1(c, kCauseNonExistent);
        return;
    }
  }
  SessionShm* session = sessions_.find(h.teid);
  if (session == nullptr) {
    if (restorer_ != nullptr && restorer_->hold(c.arrival, c.bytes, h.teid, h.sequence_number)) return;
    counters_.context_not_found.add();
    rejectV1(c, kCauseNonExistent);
    return;
  }
  if (session->gtp_version != v1::kVersion) {
    counters_.messages_dropped.add();  // a GTPv1 message for an S5/S8 session's TEID
    return;
  }
  relayV1Request(c, *session, splitTeid(h.teid).leg);
}

void Proxy::createPdpContext(V1Context& c) noexcept {
  const v1::Message& m = c.message;
  if (auto ok = v1::checkMandatory(m, v1::Sender::kSgsn); !ok) {
    if (ok.error().ie_type == static_cast<uint8_t>(IeType::kGsnAddress)) counters_.v1_gsn_address_invalid.add();
    rejectV1(c, gtp::v1Cause(ok.error().code));
    return;
  }
  // §7.3.1: mandatory in a primary context's request (only a secondary's,
  // sent with the GGSN's TEID-C in the header, may leave it out).
  auto teid_c = v1::readNth<v1::TeidControlPlane>(m);
  if (!teid_c || teid_c->value == 0) {
    rejectV1(c, teid_c ? kCauseMandatoryIeIncorrect : gtp::v1Cause(gtp::Errc::kMandatoryIeMissing));
    return;
  }
  const uint16_t partition = group::partitionOfCreatePdpContext(m);
  if (workerOf(partition, static_cast<uint16_t>(settings_.workers)) != settings_.index) {
    counters_.messages_dropped.add();  // the forwarder and this worker disagree: configuration skew
    return;
  }
  auto imsi = v1::readNth<v1::Imsi>(m);
  if (imsi && notifications_open_ != 0) {
    // The MS answering a PDU Notification activates its own context: the
    // notification's session has done its work.
    const std::string_view digits = imsi->digits.view();
    if (SessionShm* n = sessions_.findInPartition(partition, [&](const SessionShm& s) {
          return s.gtp_version == v1::kVersion && s.state == kActive && isNotification(s) &&
                 std::string_view(s.imsi, s.imsi_length) == digits;
        })) {
      endNotification(*n);
    }
  }
  auto apn = v1::readNth<v1::Apn>(m);
  auto rai = v1::readNth<v1::Rai>(m);
  auto rat = v1::readNth<v1::RatType>(m);
  auto sgsn = v1::readNth<v1::GsnAddress>(m, 0);  // for signalling; checkMandatory() proved it readable

  config::SessionKey key;
  key.gtp_version = v1::kVersion;
  key.apn = apn ? apn->text.view() : std::string_view{};
  if (imsi) key.imsi = imsi->digits.view();
  if (rai) key.serving_network = rai->plmn;
  if (rat) key.rat_type = rat->value;
  if (sgsn) {
    key.sgw_ipv4 = sgsn->ipv4;
    key.sgw_ipv6 = sgsn->ipv6;
  }
  const auto selection = routing_->select(key);
  if (!selection) {
    counters_.no_route.add();
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  const auto gateway_index = picker_.pick(selection->pool, [this](uint16_t g) { return gatewayUp(g); });
  if (!gateway_index) {
    counters_.no_gateway.add();
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  const net::Address gateway = gatewayAddress(*gateway_index);
  const uint8_t gateway_socket = settings_.sockets.gateway(gateway.family);
  if (gateway_socket == group::kNoSocket) {
    counters_.no_gateway.add();
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  SessionShm* s = allocateV1Session(c, partition);
  if (s == nullptr) return;
  s->pool = selection->pool;
  s->rule = selection->rule;
  if (const v1::Ie* apn_ie = m.find(IeType::kApn)) {
    const auto value = m.value(*apn_ie);
    s->apn_length = static_cast<uint8_t>(std::min(value.size(), sizeof s->apn));
    std::memcpy(s->apn, value.data(), s->apn_length);
  }
  s->gateway = *gateway_index;
  s->access_socket = c.arrival.socket;
  s->gateway_socket = gateway_socket;
  s->gateway_address = gateway;
  if (imsi) {
    s->imsi_length = static_cast<uint8_t>(imsi->digits.size);
    std::memcpy(s->imsi, imsi->digits.chars.data(), imsi->digits.size);
  }
  s->default_ebi = nsapiOf(m);
  s->created_ns = s->updated_ns = c.arrival.wall_ns;

  if (const uint8_t cause = translateV1Control(c, *s, Leg::kAccess, gateway.family); cause != 0 || s->sgw.teid == 0) {
    sessions_.release(*s);
    rejectV1(c, cause != 0 ? cause : kCauseNoResourcesAvailable);
    return;
  }
  if (const config::Overrides& o = routing_->rule(selection->rule).overrides; o.any()) applyV1Overrides(c, o);
  const uint16_t sequence = allocateV1Sequence(Leg::kGateway);
  TransactionShm* t = openV1Transaction(c, v1Numbered(static_cast<uint8_t>(Leg::kGateway), sequence), *s,
                                        Leg::kGateway, gateway_socket, gateway);
  if (t == nullptr) {
    sessions_.release(*s);
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  t->attempts = 1;
  t->tried[0] = *gateway_index;
  t->nsapi = s->default_ebi;
  persistV1(*s, m, Leg::kAccess, s->default_ebi);
  // The header TEID stays 0: the GGSN has no TEID-C for this context yet.
  v1::patchSequenceNumber(c.bytes, sequence);
  const auto out = outgoingV1(c);
  const config::Failover& failover = routing_->failover();
  if (failover.attempts > 1) transactions_.keepRequest(*t, out);
  if (failover.response_timeout_ms != 0 && failover.attempts > 1) startCreationTimer(*t, c.arrival.now_ns);
  send(gateway_socket, gateway, out);
}

void Proxy::relayV1Request(V1Context& c, SessionShm& session, Leg from) noexcept {
  const Leg to = other(from);
  if (to == Leg::kGateway && session.state != kActive) {
    counters_.messages_dropped.add();  // the GGSN has not told its TEID-C yet
    return;
  }
  const v1::Message& m = c.message;
  const uint8_t message_type = m.header().message_type;
  const Endpoint& peer = to == Leg::kGateway ? session.pgw : session.sgw;
  const uint8_t socket = to == Leg::kGateway ? session.gateway_socket : session.access_socket;
  if (message_type == type(MessageType::kCreatePdpContextRequest) ||
      (message_type == type(MessageType::kUpdatePdpContextRequest) && from == Leg::kAccess)) {
    // A secondary context, or an SGSN-initiated update: what a new SGSN
    // (inter-SGSN routing area update) sends must be whole.
    if (auto ok = v1::checkMandatory(m, from == Leg::kAccess ? v1::Sender::kSgsn : v1::Sender::kGgsn); !ok) {
      if (ok.error().ie_type == static_cast<uint8_t>(IeType::kGsnAddress)) counters_.v1_gsn_address_invalid.add();
      rejectV1(c, gtp::v1Cause(ok.error().code));
      return;
    }
  }
  if (const uint8_t cause = translateV1Control(c, session, from, socketFamily(socket)); cause != 0) {
    rejectV1(c, cause);
    return;
  }
  if (from == Leg::kGateway) restoreV1Apn(c, session);
  const uint16_t sequence = allocateV1Sequence(to);
  const net::Address destination = peer.address.withPort(kGtpcPort);
  TransactionShm* t = openV1Transaction(c, v1Numbered(static_cast<uint8_t>(to), sequence), session, to, socket,
                                        destination);
  if (t == nullptr) {
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  t->nsapi = nsapiOf(m);  // Create (a secondary), Update, Delete: the context named
  if (message_type == type(MessageType::kDeletePdpContextRequest)) {
    // §7.3.5: Teardown Ind 1 deletes every context of the PDP address (the
    // whole session); so does deleting the primary's NSAPI, which the
    // secondaries cannot outlive.
    auto teardown = v1::readNth<v1::TeardownInd>(m);
    if ((teardown && teardown->value) || t->nsapi == session.default_ebi) t->flags |= kDeletesPdnConnection;
  }
  session.updated_ns = c.arrival.wall_ns;
  persistV1(session, m, from, t->nsapi);
  v1::patchTeid(c.bytes, peer.teid);
  v1::patchSequenceNumber(c.bytes, sequence);
  send(socket, destination, outgoingV1(c));
}

void Proxy::relayPduNotification(V1Context& c) noexcept {
  // TS 29.060 §7.3.8, network-requested PDP context activation: the GGSN
  // names the subscriber by IMSI with header TEID 0. The proxy knows the
  // subscriber's SGSN only from a context the subscriber already has; the
  // notification then gets a session of its own (state creating: the MS
  // answers with a Create PDP Context Request of its own, which the routing
  // document places), so that the SGSN's PDU Notification Reject Request
  // reaches the GGSN with its TEID-C.
  const v1::Message& m = c.message;
  if (auto ok = v1::checkMandatory(m, v1::Sender::kGgsn); !ok) {
    rejectV1(c, gtp::v1Cause(ok.error().code));
    return;
  }
  auto imsi = v1::readNth<v1::Imsi>(m);
  const std::string_view digits = imsi->digits.view();
  const uint16_t partition = group::partitionOfCreatePdpContext(m);
  const SessionShm* known = sessions_.findInPartition(partition, [&](const SessionShm& s) {
    return s.gtp_version == v1::kVersion && s.state == kActive && !isNotification(s) &&
           std::string_view(s.imsi, s.imsi_length) == digits;
  });
  if (known == nullptr) {
    counters_.context_not_found.add();
    rejectV1(c, 194);  // IMSI/IMEI not known
    return;
  }
  SessionShm* s = allocateV1Session(c, partition);
  if (s == nullptr) return;
  s->pool = known->pool;
  s->rule = known->rule;
  s->gateway = known->gateway;
  s->gateway_address = c.arrival.peer;
  s->access_socket = known->access_socket;
  s->gateway_socket = c.arrival.socket;
  s->sgw.address = known->sgw.address;
  s->default_ebi = kNotificationNsapi;
  s->imsi_length = known->imsi_length;
  std::memcpy(s->imsi, known->imsi, sizeof s->imsi);
  s->created_ns = s->updated_ns = c.arrival.wall_ns;
  if (const uint8_t cause = translateV1Control(c, *s, Leg::kGateway, socketFamily(s->access_socket));
      cause != 0 || s->pgw.teid == 0) {
    sessions_.release(*s);
    rejectV1(c, cause != 0 ? cause : kCauseNoResourcesAvailable);
    return;
  }
  // Reachable both ways from now on: the SGSN's answer and its PDU
  // Notification Reject Request name the proxy's TEID-C, the GGSN's is known.
  // It holds no NSAPI: it ends with the SGSN's refusal, or when the MS
  // activates a context of its own (createPdpContext()).
  s->state = kActive;
  ++notifications_open_;
  const uint16_t sequence = allocateV1Sequence(Leg::kAccess);
  const net::Address destination = s->sgw.address.withPort(kGtpcPort);
  TransactionShm* t = openV1Transaction(c, v1Numbered(static_cast<uint8_t>(Leg::kAccess), sequence), *s,
                                        Leg::kAccess, s->access_socket, destination);
  if (t == nullptr) {
    sessions_.release(*s);
    rejectV1(c, kCauseNoResourcesAvailable);
    return;
  }
  counters_.v1_pdu_notifications.add();
  persistV1(*s, m, Leg::kGateway, 0);
  v1::patchSequenceNumber(c.bytes, sequence);  // TEID 0 stays: the SGSN has no context for it
  send(s->access_socket, destination, outgoingV1(c));
}

SessionShm* Proxy::allocateV1Session(V1Context& c, uint16_t partition) noexcept {
  SessionShm* s = sessions_.allocate(partition);
  if (s == nullptr) {
    counters_.session_table_full.add();
    rejectV1(c, kCauseNoResourcesAvailable);
    return nullptr;
  }
  s->gtp_version = v1::kVersion;
  return s;
}

void Proxy::endNotification(SessionShm& session) noexcept {
  if (notifications_open_ != 0) --notifications_open_;
  endSession(session);
  counters_.sessions_active.set(sessions_.active());
}

TransactionShm* Proxy::openV1Transaction(const V1Context& c, uint64_t response_key, const SessionShm& session,
                                         Leg toward, uint8_t destination_socket,
                                         const net::Address& destination) noexcept {
  const v1::Header& h = c.message.header();
  TransactionShm* t =
      transactions_.open(response_key, c.arrival.peer, v1RequesterSequence(h.sequence_number), c.arrival.now_ns);
  if (t == nullptr) {
    counters_.transactions_full.add();
    return nullptr;
  }
  t->toward = static_cast<uint8_t>(toward);
  t->message_type = h.message_type;
  t->flags = kGtpv1;
  t->requester_socket = c.arrival.socket;
  t->destination_socket = destination_socket;
  t->destination = destination;
  t->session_teid = sessions_.teid(session, Leg::kAccess);
  counters_.transactions_started.add();
  counters_.transactions_live.set(transactions_.live());
  return t;
}

void Proxy::retransmittedV1(V1Context& c, TransactionShm& t) noexcept {
  if (t.state == kAnswered) {
    const auto answer = transactions_.answerOf(t);
    if (answer.empty()) {
      counters_.answers_lost.add();
      return;
    }
    counters_.answers_replayed.add();
    send(c.arrival.socket, c.arrival.peer, answer);
    return;
  }
  SessionShm* session = sessions_.find(t.session_teid);
  if (session == nullptr) {
    counters_.messages_dropped.add();
    return;
  }
  const Leg toward = static_cast<Leg>(t.toward);
  if (translateV1Control(c, *session, other(toward), socketFamily(t.destination_socket)) != 0) {
    counters_.messages_dropped.add();
    return;
  }
  if (isCreation(t) && session->state == kCreating) {
    // The primary's creation: TEID 0 still, to the gateway it was sent to;
    // the rule's overrides as on the first copy.
    if (session->rule < routing_->rules().size()) {
      if (const config::Overrides& o = routing_->rule(session->rule).overrides; o.any()) applyV1Overrides(c, o);
    }
  } else if (c.message.header().teid != 0) {
    v1::patchTeid(c.bytes, toward == Leg::kGateway ? session->pgw.teid : session->sgw.teid);
  }
  if (toward == Leg::kAccess) restoreV1Apn(c, *session);
  v1::patchSequenceNumber(c.bytes, static_cast<uint16_t>(t.response_key));
  counters_.requests_retransmitted.add();
  send(t.destination_socket, t.destination, outgoingV1(c));
}

void Proxy::handleV1Response(V1Context& c) noexcept {
  const v1::Header& h = c.message.header();
  TransactionShm* t = nullptr;
  if (h.teid != 0) {
    // The TEID is the proxy's on the leg the response came from, where its
    // request went.
    t = transactions_.findByResponse(v1Numbered(static_cast<uint8_t>(splitTeid(h.teid).leg), h.sequence_number));
  } else {
    // TEID 0: a peer that does not know the context (§7.3.x "Non-existent").
    t = transactions_.findByResponse(v1Numbered(static_cast<uint8_t>(Leg::kGateway), h.sequence_number));
    if (t == nullptr) t = transactions_.findByResponse(v1Numbered(static_cast<uint8_t>(Leg::kAccess), h.sequence_number));
  }
  if (t == nullptr) {
    counters_.responses_unmatched.add();
    if (c.message.messageType() == MessageType::kCreatePdpContextResponse) deleteV1Orphan(c);
    return;
  }
  if (t->state != kPending) {
    counters_.responses_duplicate.add();
    return;
  }
  if (t->requester_socket == kProxyOrigin) {
    counters_.own_requests_answered.add();
    counters_.transactions_completed.add();
    transactions_.answered(*t, {});
    return;
  }
  SessionShm* session = t->session_teid != 0 ? sessions_.find(t->session_teid) : nullptr;
  if (session == nullptr) {
    counters_.responses_session_gone.add();  // relayed to nobody, as for GTPv2
    transactions_.close(*t);
    counters_.transactions_live.set(transactions_.live());
    return;
  }
  if (h.teid != 0 && h.teid != sessions_.teid(*session, Leg::kAccess) &&
      h.teid != sessions_.teid(*session, Leg::kGateway)) {
    counters_.responses_unmatched.add();
    return;
  }
  if (isCreation(*t) && session->state == kCreating && t->toward == static_cast<uint8_t>(Leg::kGateway)) {
    finishCreatePdpContext(c, *t, *session);
  } else {
    relayV1Response(c, *t, *session);
  }
}

void Proxy::finishCreatePdpContext(V1Context& c, TransactionShm& t, SessionShm& s) noexcept {
  const v1::Message& m = c.message;
  noteV1Recovery(s.gateway, m, s.created_ns);
  auto cause = v1::readNth<v1::CauseIe>(m);
  const bool ok = cause && accepted(cause->value);
  if (!ok && cause && routing_->failover().triesAnother(cause->value)) {
    failOver(t, s);
    return;
  }
  if (ok) {
    translateV1Control(c, s, Leg::kGateway, socketFamily(t.requester_socket));
    restoreV1Apn(c, s);
    if (s.pgw.teid == 0 || !s.pgw.address.valid()) {
      // Accepted without a TEID-C or a control address: the context could
      // never be reached again. Refused toward the SGSN.
      counters_.sessions_rejected.add();
      answerV1(t.requester_socket, t.requester, type(MessageType::kCreatePdpContextResponse), s.sgw.teid,
               static_cast<uint16_t>(t.requester_sequence), kCauseNoResourcesAvailable, &t);
      endSession(s);
      return;
    }
    s.state = kActive;
    s.updated_ns = c.arrival.wall_ns;
    s.ebis = static_cast<uint16_t>(s.ebis | nsapiBit(t.nsapi));
    persistV1(s, m, Leg::kGateway, t.nsapi);
    counters_.sessions_created.add();
  }
  v1::patchTeid(c.bytes, s.sgw.teid);
  v1::patchSequenceNumber(c.bytes, static_cast<uint16_t>(t.requester_sequence));
  reply(t, outgoingV1(c));
  if (!ok) {
    counters_.sessions_rejected.add();
    endSession(s);
  }
  counters_.sessions_active.set(sessions_.active());
}

void Proxy::relayV1Response(V1Context& c, TransactionShm& t, SessionShm& session) noexcept {
  const v1::Message& m = c.message;
  const Leg from = static_cast<Leg>(t.toward);
  if (from == Leg::kGateway) {
    noteV1Recovery(session.gateway, m, c.arrival.wall_ns);
    restoreV1Apn(c, session);
  }
  translateV1Control(c, session, from, socketFamily(t.requester_socket));
  v1::patchTeid(c.bytes, from == Leg::kGateway ? session.sgw.teid : session.pgw.teid);
  v1::patchSequenceNumber(c.bytes, static_cast<uint16_t>(t.requester_sequence));
  reply(t, outgoingV1(c));
  auto cause = v1::readNth<v1::CauseIe>(m);
  const bool ok = cause && accepted(cause->value);
  const uint16_t bit = nsapiBit(t.nsapi);
  if (t.message_type == type(MessageType::kDeletePdpContextRequest) &&
      (ok || (cause && cause->value == kCauseNonExistent))) {
    // Non-existent: the peer no longer has it either.
    session.ebis = static_cast<uint16_t>(session.ebis & ~bit);
    if ((t.flags & kDeletesPdnConnection) || session.ebis == 0 || session.state != kActive) {
      endSession(session);
      counters_.sessions_deleted.add();
      counters_.sessions_active.set(sessions_.active());
      return;
    }
    session.updated_ns = c.arrival.wall_ns;
    persist(session, nullptr, from);
    if (changes_ &&
        !changes_->removeBearers(session, sessions_.teid(session, Leg::kAccess), sessions_.partitionOf(session),
                                 now_wall_ns_, bit))
      counters_.persist_ring_full.add();
    return;
  }
  if (isNotification(session) && (t.message_type == type(MessageType::kPduNotificationRejectRequest) ||
                            (t.message_type == type(MessageType::kPduNotificationRequest) && !ok))) {
    // A notification's session: refused by the SGSN, or its refusal
    // delivered to the GGSN; nothing is left to relay.
    endNotification(session);
    return;
  }
  if (!ok) return;
  session.updated_ns = c.arrival.wall_ns;
  if (t.message_type == type(MessageType::kCreatePdpContextRequest)) {
    session.ebis = static_cast<uint16_t>(session.ebis | bit);  // a secondary context
  }
  persistV1(session, m, from, t.nsapi);
}

void Proxy::persistV1(const SessionShm& s, const v1::Message& m, Leg from, uint8_t nsapi) noexcept {
  if (!changes_) return;
  if (changes_->upsertV1(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, m, from, nsapi)) {
    counters_.persist_changes.add();
  } else {
    counters_.persist_ring_full.add();
  }
}

uint8_t Proxy::translateV1Control(V1Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept {
  const v1::Message& m = c.message;
  const Leg to = other(from);
  Endpoint& peer = from == Leg::kAccess ? session.sgw : session.pgw;
  const uint8_t message_type = m.header().message_type;
  std::size_t position = 0;
  // Malformed GSN Addresses are refused before anything is changed: some
  // GGSNs crash on one of length 0 (osmo-ggsn 1.9.0), so none goes on.
  for (const v1::Ie& ie : m.ies()) {
    if (ie.ieType() != IeType::kGsnAddress) continue;
    if (ie.length != 4 && ie.length != 16) {
      counters_.v1_gsn_address_invalid.add();
      return position < 2 ? kCauseMandatoryIeIncorrect : kCauseOptionalIeIncorrect;
    }
    ++position;
  }
  position = 0;
  bool address_taken = false;
  for (std::size_t i = 0; i < m.ieCount(); ++i) {
    const v1::Ie& ie = m.ie(i);
    if (ie.ieType() == IeType::kTeidControlPlane && ie.length == 4) {
      const uint32_t teid = gtp::load32(c.bytes.data() + ie.valueOffset());
      if (!c.sender_teid) c.sender_teid = teid;
      peer.teid = teid;
      v1::patchTeidIe(c.bytes, ie, sessions_.teid(session, to));
      continue;
    }
    if (ie.ieType() != IeType::kGsnAddress) continue;
    const std::size_t p = position++;
    if (!isControlGsnAddress(message_type, from, p)) continue;
    const auto address = addressOf(m.value(ie));
    if (!address) continue;  // checked above: 4 or 16 octets
    // With both families, the one the peer reached the proxy with.
    if (!address_taken || address->family == c.arrival.peer.family) {
      peer.address = *address;
      address_taken = true;
    }
    const net::Address own = proxyAddress(to, address->family);
    if (own.valid()) {
      if (address->family == AF_INET) {
        v1::patchGsnAddress(c.bytes, ie, own.ipv4());
      } else {
        v1::patchGsnAddress(c.bytes, ie, own.ipv6());
      }
      continue;
    }
    // No address of the proxy in this family on that leg: the first
    // control address becomes the proxy's in the family it sends from; an
    // Alternative one goes.
    V1Edit edit;
    edit.ie = static_cast<uint16_t>(i);
    if (p == 0) {
      const net::Address mine = proxyAddress(to, out_family);
      if (!mine.valid()) return kCauseNoResourcesAvailable;
      edit.kind = V1Edit::Kind::kReplace;
      if (out_family == AF_INET) {
        edit.length = 4;
        std::memcpy(edit.value.data(), mine.ipv4().octets.data(), 4);
      } else {
        edit.length = 16;
        std::memcpy(edit.value.data(), mine.ipv6().octets.data(), 16);
      }
    } else {
      edit.kind = V1Edit::Kind::kRemove;
    }
    if (!addV1Edit(edit)) return kCauseNoResourcesAvailable;
  }
  return 0;
}

bool Proxy::addV1Edit(const V1Edit& edit) noexcept {
  if (v1_edit_count_ == kMaxV1Edits) return false;
  v1_edits_[v1_edit_count_++] = edit;
  return true;
}

void Proxy::applyV1Overrides(V1Context& c, const config::Overrides& o) noexcept {
  const v1::Message& m = c.message;
  counters_.overrides_applied.add();
  auto indexOf = [&m](const v1::Ie* ie) { return static_cast<uint16_t>(ie - m.ies().data()); };
  if (!o.apn.empty()) {
    v1::Apn apn;
    for (char ch : o.apn) apn.text.push(ch);
    V1Edit edit;
    edit.length = static_cast<uint16_t>(std::min(apn.encodedSize(), edit.value.size()));
    if (apn.encodedSize() <= edit.value.size()) {
      apn.encode(edit.value.data());
      if (const v1::Ie* ie = m.find(IeType::kApn)) {
        edit.kind = V1Edit::Kind::kReplace;
        edit.ie = indexOf(ie);
      } else {
        edit.kind = V1Edit::Kind::kInsert;
        edit.type = static_cast<uint8_t>(IeType::kApn);
      }
      addV1Edit(edit);
    }
  }
  if (o.charging_characteristics) {
    const v1::ChargingCharacteristics cc{*o.charging_characteristics};
    if (const v1::Ie* ie = m.find(IeType::kChargingCharacteristics)) {
      cc.encode(c.bytes.data() + ie->valueOffset());  // TV, fixed length: in place
    } else {
      V1Edit edit;
      edit.kind = V1Edit::Kind::kInsert;
      edit.type = static_cast<uint8_t>(IeType::kChargingCharacteristics);
      edit.length = 2;
      cc.encode(edit.value.data());
      addV1Edit(edit);
    }
  }
  if (o.selection_mode) {
    if (const v1::Ie* ie = m.find(IeType::kSelectionMode)) {
      uint8_t& octet = c.bytes[ie->valueOffset()];
      octet = static_cast<uint8_t>((octet & 0xfc) | (*o.selection_mode & 0x03));  // spare bits kept
    } else {
      V1Edit edit;
      edit.kind = V1Edit::Kind::kInsert;
      edit.type = static_cast<uint8_t>(IeType::kSelectionMode);
      edit.length = 1;
      v1::SelectionMode{*o.selection_mode}.encode(edit.value.data());
      addV1Edit(edit);
    }
  }
  if (o.qos_max_uplink_kbps || o.qos_max_downlink_kbps) {
    if (const v1::Ie* ie = m.find(IeType::kQosProfile)) {
      if (v1::capMaxBitrate(c.bytes.subspan(ie->valueOffset(), ie->length), o.qos_max_uplink_kbps,
                            o.qos_max_downlink_kbps))
        counters_.v1_qos_capped.add();
    }
  }
}

void Proxy::restoreV1Apn(V1Context& c, const SessionShm& session) noexcept {
  if (session.rule >= routing_->rules().size() || routing_->rule(session.rule).overrides.apn.empty()) return;
  if (session.apn_length == 0) return;
  const v1::Ie* ie = c.message.find(IeType::kApn);
  if (ie == nullptr) return;
  V1Edit edit;
  edit.kind = V1Edit::Kind::kReplace;
  edit.ie = static_cast<uint16_t>(ie - c.message.ies().data());
  edit.length = session.apn_length;
  std::memcpy(edit.value.data(), session.apn, std::min<std::size_t>(session.apn_length, edit.value.size()));
  addV1Edit(edit);
}

std::span<const uint8_t> Proxy::outgoingV1(V1Context& c) noexcept {
  // The peers see one node, the proxy: its Recovery, never another peer's.
  const uint8_t recovery = groupRecovery();
  for (const v1::Ie& ie : c.message.ies()) {
    if (ie.ieType() != IeType::kRecovery || ie.length < 1) continue;
    uint8_t& octet = c.bytes[ie.valueOffset()];
    if (octet != recovery) {
      octet = recovery;
      counters_.recovery_rewritten.add();
    }
  }
  if (v1_edit_count_ == 0) return c.bytes;
  // Written anew: the header as patched, then every IE in order with the
  // edits applied; the header's length follows.
  const v1::Message& m = c.message;
  const std::size_t header_size = m.header().size;
  std::size_t pos = header_size;
  uint8_t* out = rewritten_.data();
  const std::size_t capacity = rewritten_.size();
  std::memcpy(out, c.bytes.data(), header_size);
  auto writeTlv = [&](uint8_t ie_type, const uint8_t* value, uint16_t length) {
    const bool tv = ie_type < 128;
    const std::size_t need = (tv ? 1u : 3u) + length;
    if (pos + need > capacity) return false;
    out[pos++] = ie_type;
    if (!tv) {
      gtp::store16(out + pos, length);
      pos += 2;
    }
    std::memcpy(out + pos, value, length);
    pos += length;
    return true;
  };
  std::array<bool, kMaxV1Edits> inserted{};
  bool fits = true;
  auto insertBefore = [&](uint8_t next_type) {
    for (std::size_t e = 0; e < v1_edit_count_; ++e) {
      const V1Edit& edit = v1_edits_[e];
      if (edit.kind != V1Edit::Kind::kInsert || inserted[e] || edit.type >= next_type) continue;
      inserted[e] = true;
      fits &= writeTlv(edit.type, edit.value.data(), edit.length);
    }
  };
  for (std::size_t i = 0; i < m.ieCount() && fits; ++i) {
    const v1::Ie& ie = m.ie(i);
    insertBefore(ie.type);
    const V1Edit* edit = nullptr;
    for (std::size_t e = 0; e < v1_edit_count_; ++e) {
      if (v1_edits_[e].kind != V1Edit::Kind::kInsert && v1_edits_[e].ie == i) edit = &v1_edits_[e];
    }
    if (edit != nullptr && edit->kind == V1Edit::Kind::kRemove) continue;
    if (edit != nullptr) {
      fits &= writeTlv(ie.type, edit->value.data(), edit->length);
      continue;
    }
    const std::size_t size = ie.header_size + ie.length;
    if (pos + size > capacity) {
      fits = false;
      break;
    }
    std::memcpy(out + pos, c.bytes.data() + ie.offset, size);
    pos += size;
  }
  insertBefore(0xff);
  // The last IE's type may be 255 (Private Extension): inserts go before it.
  if (!fits) {
    counters_.rewrite_failures.add();
    return c.bytes;
  }
  gtp::store16(out + 2, static_cast<uint16_t>(pos - v1::kHeaderSizeMandatory));
  counters_.messages_rewritten.add();
  return {out, pos};
}

void Proxy::rejectV1(V1Context& c, uint8_t cause) noexcept {
  const v1::Message& m = c.message;
  // The requester's TEID-C when it gave one, else the session's record of
  // it, else 0 (TS 29.060 §7.3.2: a context the node does not have).
  uint32_t teid = 0;
  if (c.sender_teid) {
    teid = *c.sender_teid;
  } else if (auto t = v1::readNth<v1::TeidControlPlane>(m)) {
    teid = t->value;
  } else if (m.header().teid != 0 && cause != kCauseNonExistent) {
    if (const SessionShm* s = sessions_.find(m.header().teid))
      teid = splitTeid(m.header().teid).leg == Leg::kAccess ? s->sgw.teid : s->pgw.teid;
  }
  answerV1(c.arrival.socket, c.arrival.peer, static_cast<uint8_t>(m.header().message_type + 1), teid,
           m.header().sequence_number, cause);
}

void Proxy::answerV1(uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid,
                     uint16_t sequence, uint8_t cause, TransactionShm* transaction) noexcept {
  std::array<uint8_t, 32> buffer;
  v1::Builder b(buffer);
  b.begin(static_cast<MessageType>(response_type), teid, sequence);
  b.add(v1::CauseIe{cause});
  if (auto out = b.finish()) {
    if (!accepted(cause)) counters_.rejections_sent.add();
    if (transaction != nullptr) {
      reply(*transaction, *out);
    } else {
      send(socket, to, *out);
    }
  }
}

uint16_t Proxy::allocateV1Sequence(Leg toward) noexcept {
  // seq % W == index, so that a response without a TEID still reaches this
  // worker. The numbers of a leg run over the worker's share of the 16-bit
  // space; one still pending (a request unanswered for a whole lap) is
  // skipped.
  const uint32_t share = 0x10000u / settings_.workers;
  uint16_t& counter = header_.v1_sequence_counter[static_cast<uint8_t>(toward)];
  uint16_t sequence = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint32_t k = counter++ % share;
    sequence = static_cast<uint16_t>(settings_.index + settings_.workers * k);
    if (transactions_.findByResponse(v1Numbered(static_cast<uint8_t>(toward), sequence)) == nullptr) break;
  }
  return sequence;
}

void Proxy::noteV1Recovery(uint16_t gateway, const v1::Message& m, uint64_t before_wall_ns) noexcept {
  if (gateway >= watch_.size()) return;
  auto r = v1::readNth<v1::Recovery>(m);
  if (!r) return;
  GatewayWatch& w = watch_[gateway];
  if (w.recovery != forwarder::kRecoveryUnknown && w.recovery != r->value) gatewayRestarted(gateway, before_wall_ns);
  w.recovery = r->value;
}

void Proxy::sendDeletePdpContext(SessionShm& s) noexcept {
  // TS 29.060 §7.3.5: Teardown Ind 1 with the primary's NSAPI deletes every
  // context of the PDP address; the SGSN has the MS activate them again,
  // through a GGSN that is up.
  const uint16_t sequence = allocateV1Sequence(Leg::kAccess);
  const net::Address sgsn = s.sgw.address.withPort(kGtpcPort);
  std::array<uint8_t, 32> buffer;
  v1::Builder b(buffer);
  b.begin(MessageType::kDeletePdpContextRequest, s.sgw.teid, sequence);
  b.add(v1::CauseIe{kCauseReactivationRequested});
  b.add(v1::TeardownInd{true});
  b.add(v1::Nsapi{s.default_ebi});
  if (auto out = b.finish()) {
    counters_.restart_notifications_sent.add();
    sendOwnRequest(v1Numbered(static_cast<uint8_t>(Leg::kAccess), sequence), v1RequesterSequence(sequence),
                   type(MessageType::kDeletePdpContextRequest), kGtpv1, Leg::kAccess, s.access_socket, sgsn,
                   sessions_.teid(s, Leg::kAccess), *out);
  }
}

void Proxy::deleteV1Orphan(V1Context& c) noexcept {
  const v1::Message& m = c.message;
  auto cause = v1::readNth<v1::CauseIe>(m);
  auto teid_c = v1::readNth<v1::TeidControlPlane>(m);
  if (!cause || !accepted(cause->value) || !teid_c || teid_c->value == 0) return;
  const v1::Header& h = m.header();
  const SessionShm* s = h.teid != 0 ? sessions_.find(h.teid) : nullptr;
  if (s != nullptr && s->gateway_address.sameHost(c.arrival.peer)) return;  // late, not an orphan
  const uint16_t sequence = allocateV1Sequence(Leg::kGateway);
  std::array<uint8_t, 32> buffer;
  v1::Builder b(buffer);
  b.begin(MessageType::kDeletePdpContextRequest, teid_c->value, sequence);
  b.add(v1::TeardownInd{true});
  b.add(v1::Nsapi{s != nullptr ? s->default_ebi : uint8_t{5}});
  if (auto out = b.finish()) {
    counters_.orphans_deleted.add();
    sendOwnRequest(v1Numbered(static_cast<uint8_t>(Leg::kGateway), sequence), v1RequesterSequence(sequence),
                   type(MessageType::kDeletePdpContextRequest), kGtpv1, Leg::kGateway, c.arrival.socket, c.arrival.peer,
                   0, *out);
  }
}

std::span<uint8_t> Proxy::v1ControlAddressIn(std::span<uint8_t> request, uint8_t family) noexcept {
  v1::Message m;
  if (!m.decode(request)) return request;
  const v1::Ie* ie = m.find(IeType::kGsnAddress, 0);
  const net::Address own = proxyAddress(Leg::kGateway, family);
  if (ie == nullptr || !own.valid()) return request;
  // Written into rewritten_: header and IEs up to the address, the address
  // in `family`, the rest.
  const std::size_t before = ie->offset;
  const std::size_t old_size = ie->header_size + ie->length;
  const std::size_t value_size = family == AF_INET ? 4 : 16;
  const std::size_t size = request.size() - old_size + 3 + value_size;
  if (size > rewritten_.size()) return request;
  uint8_t* out = rewritten_.data();
  std::memcpy(out, request.data(), before);
  out[before] = static_cast<uint8_t>(IeType::kGsnAddress);
  gtp::store16(out + before + 1, static_cast<uint16_t>(value_size));
  std::memcpy(out + before + 3, family == AF_INET ? own.ipv4().octets.data() : own.ipv6().octets.data(), value_size);
  std::memcpy(out + before + 3 + value_size, request.data() + before + old_size, request.size() - before - old_size);
  gtp::store16(out + 2, static_cast<uint16_t>(size - v1::kHeaderSizeMandatory));
  counters_.messages_rewritten.add();
  return {out, size};
}

}  // namespace gtpcp::worker
