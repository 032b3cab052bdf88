#include "procedures.h"

#include <algorithm>
#include <cstring>

#include "common/partition.h"
#include "procedures_v1.h"
#include "procedures_v2.h"
#include "restore.h"

namespace gtpcp::worker {

namespace {

constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kAnswered = static_cast<uint8_t>(TransactionState::kAnswered);
constexpr uint8_t kActive = static_cast<uint8_t>(SessionState::kActive);
constexpr uint8_t kCreating = static_cast<uint8_t>(SessionState::kCreating);
constexpr uint8_t kIncomplete = static_cast<uint8_t>(SessionState::kIncomplete);

// When the request of `t` went to the gateway it waits on: its first send,
// or its last failover's.
uint64_t forwardedAt(const TransactionShm& t) { return t.received_ns + uint64_t{t.forwarded_us} * 1000; }

}  // namespace

template <class V>
void Procedures<V>::decodeFailed(const Arrival& arrival, std::span<const uint8_t> bytes,
                                 const gtp::Error& error) noexcept {
  counters_.decode_errors.add();
  auto header = V::decodeHeader(bytes);
  if (!header) return;
  const Leg leg = receivedLeg(*header, arrival);
  if (!arrival.replayed) engine_.metrics().received(V::kVersion, leg, header->message_type);
  const uint8_t cause = V::causeOf(error.code);
  if (V::numbered(*header) && cause != 0 && V::isRequest(header->message_type)) {
    answer<V>(engine_, leg, arrival.socket, arrival.peer, static_cast<uint8_t>(header->message_type + 1), 0,
              header->sequence_number, cause, Offending{error.ie_type, error.ie_instance});
  }
}

template <class V>
Leg Procedures<V>::receivedLeg(const typename V::Header& h, const Arrival& arrival) noexcept {
  if (const uint32_t teid = V::teid(h); teid != 0) return splitTeid(teid).leg;
  const uint8_t type = h.message_type;
  if (type == V::kCreateRequest) return Leg::kAccess;
  if (type == V::kNamesSubscriber) return Leg::kGateway;
  if (V::isResponse(type) && V::numbered(h)) {
    if (const TransactionShm* t = V::match(engine_.transactions(), h)) return static_cast<Leg>(t->toward);
  }
  return engine_.legOf(arrival.peer);
}

template <class V>
void Procedures<V>::handleRequest(Context& c) noexcept {
  const typename V::Header& h = c.message.header();
  // GTPv2 Echo (T=0) is the forwarder's; no other request without a TEID
  // field is relayed.
  if (!V::teidPresent(h)) {
    counters_.messages_dropped.add();
    return;
  }
  // A request is handled once (TS 29.274 §7.6, TS 29.060 §7.2): a
  // retransmission, same peer and same sequence number, goes where the first
  // copy went, or gets the answer the first copy got.
  const uint32_t requester_sequence = V::requesterSequence(h.sequence_number);
  if (TransactionShm* t = engine_.transactions().findByRequester(c.arrival.peer, requester_sequence)) {
    if (t->message_type == h.message_type && V::ofVersion(*t)) {
      retransmitted(c, *t);
      return;
    }
    // Another message with a live number: the peer reused it early. The new
    // request is the one it waits an answer for.
    counters_.sequence_reused.add();
    engine_.close(*t);
  }
  if (self().nodeRequest(c)) return;
  const uint32_t teid = V::teid(h);
  if (teid == 0) {
    if (h.message_type == V::kCreateRequest) {
      create(c);
    } else if (h.message_type == V::kNamesSubscriber) {
      self().relayToSubscriber(c);
    } else {
      // A session's request without the TEID that names the session.
      counters_.context_not_found.add();
      reject(c, V::kContextNotFound);
    }
    return;
  }
  SessionShm* session = engine_.sessions().find(teid);
  if (session == nullptr) {
    // Perhaps a session of the storage: held until Redis says.
    Restorer* restorer = engine_.restorer();
    if (restorer != nullptr && restorer->hold(c.arrival, c.bytes, teid, h.sequence_number)) return;
    counters_.context_not_found.add();
    reject(c, V::kContextNotFound);
    return;
  }
  if (session->state == kIncomplete) {
    // Neither peer can modify or delete what the gateway never confirmed to
    // the proxy: gone, and the peer told so, rather than dropped for ever.
    counters_.restore_incomplete.add();
    engine_.endSession(*session);
    engine_.countSessions();
    reject(c, V::kContextNotFound);
    return;
  }
  self().relayRequest(c, *session, splitTeid(teid).leg);
}

template <class V>
void Procedures<V>::logNoGateway(uint16_t pool) noexcept {
  uint64_t held = 0;
  if (!no_gateway_log_.allow(engine_.now(), held)) return;
  const std::string& name = engine_.routing().pool(pool).name;
  log::event(spdlog::level::info,
             fmt::format("a creation refused (No resources available): no gateway of pool {} is up{}", name,
                         held != 0 ? fmt::format(" ({} more since the last such line)", held) : std::string()),
             {{"gateway_event", "no_gateway"}, {"pool", name}, log::field("held_back", held)});
}

template <class V>
void Procedures<V>::create(Context& c) noexcept {
  const typename V::Message& m = c.message;
  if (!self().admit(c)) return;
  const uint16_t partition = V::partition(m);
  const ProxySettings& settings = engine_.settings();
  if (workerOf(partition, static_cast<uint16_t>(settings.workers)) != settings.index) {
    counters_.messages_dropped.add();  // the forwarder and this worker disagree: configuration skew
    return;
  }
  const std::optional<gtp::Digits> imsi = V::imsi(m);
  const auto selection = self().place(c, imsi, partition);
  if (!selection) {
    counters_.no_route.add();
    reject(c, V::kNoResources);
    return;
  }
  const auto gateway_index = engine_.picker().pick(selection->pool, [this](uint16_t g) { return gateways_.up(g); });
  if (!gateway_index) {
    counters_.no_gateway.add();
    logNoGateway(selection->pool);
    reject(c, V::kNoResources);
    return;
  }
  const net::Address gateway = gateways_.address(*gateway_index);
  const uint8_t gateway_socket = settings.sockets.gateway(gateway.family);
  if (gateway_socket == group::kNoSocket) {
    counters_.no_gateway.add();
    reject(c, V::kNoResources);
    return;
  }

  SessionShm* s = allocate(c, partition, *gateway_index);
  if (s == nullptr) return;
  s->pool = selection->pool;
  s->rule = selection->rule;
  if (const std::span<const uint8_t> apn = V::apn(m); !apn.empty()) {
    s->apn_length = static_cast<uint8_t>(std::min(apn.size(), sizeof s->apn));
    std::memcpy(s->apn, apn.data(), s->apn_length);
  }
  s->access_socket = c.arrival.socket;
  s->gateway_socket = gateway_socket;
  s->gateway_address = gateway;
  if (imsi) {
    s->imsi_length = static_cast<uint8_t>(imsi->size);
    std::memcpy(s->imsi, imsi->chars.data(), imsi->size);
  }
  self().recordCreation(c, *s);
  s->created_ns = s->updated_ns = c.arrival.wall_ns;

  if (const uint8_t cause = self().translate(c, *s, Leg::kAccess, gateway.family); cause != 0 || s->sgw.teid == 0) {
    engine_.sessions().release(*s);
    reject(c, cause != 0 ? cause : V::kNoResources);
    return;
  }
  if (const config::Overrides& o = engine_.routing().rule(selection->rule).overrides; o.any()) {
    if (const uint8_t cause = self().applyOverrides(c, o); cause != 0) {
      engine_.sessions().release(*s);
      reject(c, cause);
      return;
    }
  }
  const Numbered n = V::next(engine_, Leg::kGateway);
  TransactionShm* t = open(c, m.header(), n.key, *s, Leg::kGateway, gateway_socket, gateway);
  if (t == nullptr) {
    engine_.sessions().release(*s);
    reject(c, V::kNoResources);
    return;
  }
  t->attempts = 1;
  t->tried[0] = *gateway_index;
  // GTPv1: the primary context's NSAPI, the context its answer makes active.
  t->nsapi = s->default_ebi;
  // A creation in flight is state another instance needs too: the gateway's
  // answer may reach it.
  V::persist(engine_, *s, m, Leg::kAccess, t->nsapi);
  // The header TEID stays 0: the gateway has no TEID for this session yet.
  V::patchSequenceNumber(c.message_bytes, n.sequence);
  const auto out = self().outgoing(c, true);
  failover_.sent(*t, out, c.arrival.now_ns);
  if (GatewayMetricsShm* g = engine_.metrics().gateway(*gateway_index)) g->creations_sent.add();
  engine_.send(Leg::kGateway, gateway_socket, gateway, out);
}

template <class V>
SessionShm* Procedures<V>::allocate(Context& c, uint16_t partition, uint16_t gateway) noexcept {
  SessionShm* s = engine_.sessions().allocate(partition, V::kVersion, gateway);
  if (s == nullptr) {
    counters_.session_table_full.add();
    reject(c, V::kNoResources);
    return nullptr;
  }
  return s;
}

template <class V>
void Procedures<V>::retransmitted(Context& c, TransactionShm& t) noexcept {
  if (t.state == kAnswered) {
    if (engine_.replay(t, c.arrival, c.leg))
      engine_.metrics().retransmission(V::kVersion, c.message.header().message_type, true);
    return;
  }
  // Pending: the same translated request again, to the same gateway or SGW.
  SessionShm* session = engine_.sessions().find(t.session_teid);
  if (session == nullptr) {
    counters_.messages_dropped.add();
    return;
  }
  const Leg toward = static_cast<Leg>(t.toward);
  if (self().translate(c, *session, other(toward), engine_.socketFamily(t.destination_socket)) != 0) {
    counters_.messages_dropped.add();
    return;
  }
  const config::RoutingTable& routing = engine_.routing();
  if (V::isCreation(t) && session->state == kCreating) {
    // The creation: TEID 0 still (the gateway has none yet), and the rule's
    // overrides as on the first copy, so that the gateway gets the same
    // request whichever copy reaches it.
    if (session->rule < routing.rules().size()) {
      if (const config::Overrides& o = routing.rule(session->rule).overrides; o.any()) self().applyOverrides(c, o);
    }
  } else if (V::teid(c.message.header()) != 0) {
    // Everything else to the peer's TEID, as the first copy.
    V::patchTeid(c.message_bytes, Engine::peer(*session, toward).teid);
  }
  if (toward == Leg::kAccess) restoreApn(c, *session);
  V::patchSequenceNumber(c.message_bytes, static_cast<uint32_t>(t.response_key));
  counters_.requests_retransmitted.add();
  engine_.metrics().retransmission(V::kVersion, c.message.header().message_type, false);
  engine_.send(toward, t.destination_socket, t.destination, self().outgoing(c, true));
}

template <class V>
void Procedures<V>::handleResponse(Context& c) noexcept {
  const typename V::Header& h = c.message.header();
  TransactionShm* t = V::match(engine_.transactions(), h);
  if (t == nullptr) {
    counters_.responses_unmatched.add();
    if (h.message_type == V::kCreateResponse) own_.deleteOrphan(c);
    return;
  }
  if (t->state != kPending) {
    counters_.responses_duplicate.add();
    return;
  }
  if (t->requester_socket == kProxyOrigin) {
    own_.answered(*t);
    return;
  }
  SessionShm* session = t->session_teid != 0 ? engine_.sessions().find(t->session_teid) : nullptr;
  if (session == nullptr) {
    // The session ended while this transaction was open (a Delete crossed
    // it): nobody is left to relay the answer to, and a transaction left
    // pending would only hold its record and later count as expired.
    counters_.responses_session_gone.add();
    engine_.close(*t);
    return;
  }
  // Matched by the proxy's sequence number and the TEID in the header, never
  // by where the response came from (DESIGN.md): a TEID, when there is one,
  // must be this session's, or this is not the transaction's answer and it
  // stays pending.
  const SessionTable& sessions = engine_.sessions();
  if (const uint32_t teid = V::teid(h);
      teid != 0 && teid != sessions.teid(*session, Leg::kAccess) && teid != sessions.teid(*session, Leg::kGateway)) {
    counters_.responses_unmatched.add();
    return;
  }
  if (V::isCreation(*t) && session->state == kCreating && t->toward == static_cast<uint8_t>(Leg::kGateway)) {
    finishCreate(c, *t, *session);
  } else {
    relayResponse(c, *t, *session);
  }
}

template <class V>
void Procedures<V>::finishCreate(Context& c, TransactionShm& t, SessionShm& s) noexcept {
  const typename V::Message& m = c.message;
  // A gateway answering with another Recovery value than before restarted:
  // sessions older than this one are gone there.
  gateways_.noteRecovery(s.gateway, V::recovery(m), s.created_ns);
  const auto cause = V::cause(m);
  const bool ok = cause && V::accepted(*cause);
  WorkerMetrics& metrics = engine_.metrics();
  metrics.creationAnswered(V::kVersion, s.gateway, cause);
  metrics.answeredBy(s.gateway, forwardedAt(t), c.arrival.now_ns);
  if (!ok && cause && engine_.routing().failover().triesAnother(*cause)) {
    failover_.failOver<V>(t, s);  // to the next gateway, or the requester is told none is left
    return;
  }
  if (ok) {
    self().translate(c, s, Leg::kGateway, engine_.socketFamily(t.requester_socket));
    restoreApn(c, s);
    if (s.pgw.teid == 0 || !s.pgw.address.valid()) {
      // Accepted without naming its control endpoint: the session could
      // never be reached again. Refused toward the requester.
      counters_.sessions_rejected.add();
      answer<V>(engine_, t, V::kCreateResponse, s.sgw.teid, V::kNoResources);
      engine_.endSession(s);
      return;
    }
    s.state = kActive;
    s.updated_ns = c.arrival.wall_ns;
    self().established(c, t, s);
    counters_.sessions_created.add();
    metrics.ruleSession(s.rule);
  }
  V::patchTeid(c.message_bytes, s.sgw.teid);
  V::patchSequenceNumber(c.message_bytes, t.requester_sequence);
  // A dedicated bearer's Create Bearer Request may ride on a GTPv2 answer;
  // it is only meaningful for an accepted session (TS 29.274 §7.7.0).
  const bool with_piggybacked = ok && self().translatePiggybacked(c, s, Leg::kGateway);
  metrics.relayed(V::kVersion, m.header().message_type, cause);
  engine_.reply(t, self().outgoing(c, with_piggybacked));
  if (!ok) {
    // A rejected creation leaves no session behind.
    counters_.sessions_rejected.add();
    engine_.endSession(s);
  }
  engine_.countSessions();
}

template <class V>
void Procedures<V>::relayResponse(Context& c, TransactionShm& t, SessionShm& s) noexcept {
  const Leg from = static_cast<Leg>(t.toward);  // the response comes from where the request went
  if (from == Leg::kGateway) {
    gateways_.noteRecovery(s.gateway, V::recovery(c.message), c.arrival.wall_ns);
    restoreApn(c, s);
    engine_.metrics().answeredBy(s.gateway, forwardedAt(t), c.arrival.now_ns);
    engine_.metrics().relayed(V::kVersion, c.message.header().message_type, V::cause(c.message));
  }
  self().translate(c, s, from, engine_.socketFamily(t.requester_socket));
  V::patchTeid(c.message_bytes, Engine::peer(s, other(from)).teid);
  V::patchSequenceNumber(c.message_bytes, t.requester_sequence);
  const bool with_piggybacked = self().translatePiggybacked(c, s, from);
  engine_.reply(t, self().outgoing(c, with_piggybacked));
  self().answered(c, t, s, from);
}

template <class V>
void Procedures<V>::restoreApn(Context& c, const SessionShm& session) noexcept {
  // Only sessions whose rule rewrote the APN, and only messages that carry one.
  const config::RoutingTable& routing = engine_.routing();
  if (session.rule >= routing.rules().size() || routing.rule(session.rule).overrides.apn.empty()) return;
  if (session.apn_length != 0) self().replaceApn(c, std::span<const uint8_t>(session.apn, session.apn_length));
}

template <class V>
void Procedures<V>::reject(Context& c, uint8_t cause, Offending offending) noexcept {
  const typename V::Message& m = c.message;
  // The requester's TEID: the one it named itself with in the request, else
  // the session's record of it, else 0 (TS 29.274 §5.5.2, TS 29.060 §7.3.2).
  uint32_t teid = 0;
  if (c.sender_teid) {
    teid = *c.sender_teid;
  } else if (const auto sender = V::senderTeid(m)) {
    teid = *sender;
  } else if (const uint32_t own = V::teid(m.header()); own != 0) {
    if (const SessionShm* s = engine_.sessions().find(own)) teid = Engine::peer(*s, splitTeid(own).leg).teid;
  }
  answer<V>(engine_, c.leg, c.arrival.socket, c.arrival.peer, static_cast<uint8_t>(m.header().message_type + 1),
            teid, m.header().sequence_number, cause, offending);
}

template class Procedures<V2Traits>;
template class Procedures<V1Traits>;

}  // namespace gtpcp::worker
