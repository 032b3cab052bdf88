#include "proxy.h"
#include "proxy_context.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/group/session_identity.h"
#include "common/gtp/v1/patch.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/patch.h"
#include "common/gtp/v2/rewrite.h"
#include "common/gtp/v2/validate.h"
#include "common/partition.h"
#include "common/time/clock.h"
#include "restore.h"

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

constexpr uint32_t kSequenceSpace = 0x800000;

// F-TEID interface types (TS 29.274 §8.22) of the control-plane endpoints
// on each leg: what a peer on that leg puts in a message to name itself.
bool isAccessControl(uint8_t interface_type) {
  return interface_type == 6    // S5/S8 SGW GTP-C
         || interface_type == 30;  // S2b ePDG GTP-C
}
bool isGatewayControl(uint8_t interface_type) {
  return interface_type == 7    // S5/S8 PGW GTP-C
         || interface_type == 32;  // S2b PGW GTP-C
}

bool accepted(uint8_t cause) { return cause >= 16 && cause < 64; }

// The SGW-initiated commands of TS 29.274 §7.2.15-7.2.17: the PGW answers
// one with a request of its own that carries the command's sequence number.
bool isCommand(uint8_t message_type) {
  return message_type == static_cast<uint8_t>(MessageType::kModifyBearerCommand) ||
         message_type == static_cast<uint8_t>(MessageType::kDeleteBearerCommand) ||
         message_type == static_cast<uint8_t>(MessageType::kBearerResourceCommand);
}

constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kAnswered = static_cast<uint8_t>(TransactionState::kAnswered);
constexpr uint8_t kActive = static_cast<uint8_t>(SessionState::kActive);
constexpr uint8_t kCreating = static_cast<uint8_t>(SessionState::kCreating);

constexpr std::size_t kMaxDatagram = 65535;
// Delete PDN Connection Set Requests carried out at once: a handful of
// partial failures in the same seconds.
constexpr std::size_t kMaxSetDeletions = 16;
// Gateway restarts followed at once; more wait for the current walk to end.
constexpr std::size_t kMaxRestarts = 64;
// How often the forwarder's restart counts are looked at.
constexpr uint64_t kWatchPeriodNs = 10'000'000;
// TS 29.274 Table 8.4-1: the UE is asked to connect again (to a gateway
// that has its session).
constexpr uint8_t kCauseReactivationRequested = 8;

}  // namespace

namespace {

// The first message without what was piggybacked on it (and without the P
// flag that announced it).
std::span<uint8_t> alone(Proxy::Context& c) {
  c.message_bytes[0] &= static_cast<uint8_t>(~kFlagPiggyback);
  return c.message_bytes;
}

}  // namespace

Proxy::Proxy(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
             TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress)
    : settings_(settings),
      header_(header),
      counters_(header.counters),
      sessions_(sessions),
      transactions_(transactions),
      routing_(&routing),
      picker_(routing),
      egress_(egress),
      // Creations in flight at once, with room: a burst of a second's worth
      // at the highest rate a worker takes.
      timers_(std::max<uint32_t>(1024, transactions.capacity() / 8)),
      retries_(std::max<uint32_t>(1024, transactions.capacity() / 8)),
      set_deletions_(kMaxSetDeletions),
      resend_(kMaxDatagram),
      rewritten_(kMaxDatagram) {
  restarts_.reserve(kMaxRestarts);
  mapGatewayStatus();
}

void Proxy::setRouting(const config::RoutingTable& routing) {
  routing_ = &routing;
  picker_ = config::GatewayPicker(routing);
  mapGatewayStatus();
}

void Proxy::setGatewayStatus(const forwarder::GatewayTableShm* table) {
  status_shm_ = table;
  mapGatewayStatus();
}

void Proxy::handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  now_ns_ = std::max(now_ns_, arrival.now_ns);
  now_wall_ns_ = arrival.wall_ns;
  rewriter_.reset();
  counters_.datagrams_received.add();
  if (!bytes.empty() && (bytes[0] >> 5) == gtp::v1::kVersion) {
    handleV1(arrival, bytes);
    return;
  }
  if (bytes.empty() || (bytes[0] >> 5) != kVersion) {
    counters_.messages_dropped.add();
    return;
  }
  if (auto decoded = datagram_.decode(bytes); !decoded) {
    counters_.decode_errors.add();
    // A request whose header can be read still gets the cause it earned.
    auto header = decodeHeader(bytes);
    const uint8_t cause = gtp::v2Cause(decoded.error().code);
    if (header && cause != 0 && messageTypeInfo(header->message_type).role == MessageRole::kRequest) {
      answer(arrival.socket, arrival.peer, static_cast<uint8_t>(header->message_type + 1), 0,
             header->sequence_number, cause, decoded.error().ie_type, decoded.error().ie_instance);
    }
    return;
  }
  const Message& m = datagram_.message;
  Context c{arrival, bytes, m, bytes.first(m.bytes().size())};
  switch (messageTypeInfo(m.header().message_type).role) {
    case MessageRole::kRequest: handleRequest(c); break;
    case MessageRole::kResponse: handleResponse(c); break;
    case MessageRole::kOther: relayOneWay(c); break;
    default: counters_.messages_dropped.add(); break;
  }
}

void Proxy::handleRequest(Context& c) noexcept {
  const Header& h = c.message.header();
  // Echo (T=0) is the forwarder's; node-level requests with TEID 0 other than
  // a session creation are not relayed yet.
  if (!h.teidPresent()) {
    counters_.messages_dropped.add();
    return;
  }
  // A request is handled once (TS 29.274 §7.6): a retransmission, same peer
  // and same sequence number, goes where the first copy went, or gets the
  // answer the first copy got.
  if (TransactionShm* t = transactions_.findByRequester(c.arrival.peer, h.sequence_number)) {
    if (t->message_type == h.message_type) {
      retransmitted(c, *t);
      return;
    }
    // Another message with a live number: the peer reused it early. The new
    // request is the one it waits an answer for.
    counters_.sequence_reused.add();
    transactions_.close(*t);
  }
  if (c.message.messageType() == MessageType::kDeletePdnConnectionSetRequest) {
    deletePdnConnectionSet(c);
    return;
  }
  if (h.teid == 0) {
    switch (c.message.messageType()) {
      case MessageType::kCreateSessionRequest:
        createSession(c);
        return;
      case MessageType::kPgwDownlinkTriggeringNotification:
        relayDownlinkTriggering(c);
        return;
      default:
        // A session's request without the TEID that names the session.
        counters_.context_not_found.add();
        reject(c, static_cast<uint8_t>(Cause::kContextNotFound));
        return;
    }
  }
  SessionShm* session = sessions_.find(h.teid);
  if (session == nullptr) {
    // Perhaps a session of the storage: held until Redis says.
    if (restorer_ != nullptr && restorer_->hold(c.arrival, c.bytes, h.teid, h.sequence_number)) return;
    counters_.context_not_found.add();
    reject(c, static_cast<uint8_t>(Cause::kContextNotFound));
    return;
  }
  relayRequest(c, *session, splitTeid(h.teid).leg);
}

void Proxy::createSession(Context& c) noexcept {
  const Message& m = c.message;
  if (auto ok = checkMandatory(m); !ok) {
    reject(c, gtp::v2Cause(ok.error().code), ok.error().ie_type, ok.error().ie_instance);
    return;
  }
  auto sender = readFirst<FTeid>(m, 0);  // checkMandatory() proved it readable
  auto apn = readFirst<Apn>(m);
  auto rat = readFirst<RatType>(m);
  auto imsi = readFirst<Imsi>(m);
  auto serving = readFirst<ServingNetwork>(m);

  const uint16_t partition = group::partitionOfCreateSession(m);
  if (workerOf(partition, static_cast<uint16_t>(settings_.workers)) != settings_.index) {
    counters_.messages_dropped.add();  // the forwarder and this worker disagree: configuration skew
    return;
  }

  config::SessionKey key;
  key.apn = apn ? apn->text.view() : std::string_view{};
  if (imsi) key.imsi = imsi->digits.view();
  if (serving) key.serving_network = serving->plmn;
  if (rat) key.rat_type = rat->value;
  key.sgw_ipv4 = sender->ipv4;
  key.sgw_ipv6 = sender->ipv6;
  const auto selection = routing_->select(key);
  if (!selection) {
    counters_.no_route.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  const auto gateway_index =
      picker_.pick(selection->pool, [this](uint16_t g) { return gatewayUp(g); });
  if (!gateway_index) {
    counters_.no_gateway.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  const net::Address gateway = gatewayAddress(*gateway_index);
  const uint8_t gateway_socket = settings_.sockets.gateway(gateway.family);
  if (gateway_socket == group::kNoSocket) {
    counters_.no_gateway.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }

  SessionShm* s = sessions_.allocate(partition);
  if (s == nullptr) {
    counters_.session_table_full.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  s->gtp_version = kVersion;
  s->pool = selection->pool;
  s->rule = selection->rule;
  if (const Ie* apn_ie = m.find(IeType::kApn)) {
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
  if (const Ie* bc = m.find(IeType::kBearerContext, 0)) {
    if (const Ie* ebi = m.findChild(*bc, IeType::kEbi, 0)) {
      if (auto e = read<Ebi>(m, *ebi)) s->default_ebi = e->value;
    }
  }
  noteCsids(*s, m);
  s->created_ns = s->updated_ns = c.arrival.wall_ns;

  if (!translateControlFTeids(c, *s, Leg::kAccess, gateway.family) || s->sgw.teid == 0) {
    sessions_.release(*s);
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  if (const config::Overrides& o = routing_->rule(selection->rule).overrides; o.any()) {
    if (const uint8_t cause = applyOverrides(c, o); cause != 0) {
      sessions_.release(*s);
      reject(c, cause);
      return;
    }
  }
  const uint32_t sequence = allocateSequence(false);
  TransactionShm* t = openTransaction(c, c.message, proxyNumbered(sequence), *s, Leg::kGateway, gateway_socket,
                                      gateway);
  if (t == nullptr) {
    sessions_.release(*s);
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  t->attempts = 1;
  t->tried[0] = *gateway_index;
  // A creation in flight is state another instance needs too: the PGW's
  // answer may reach it.
  persist(*s, &m, Leg::kAccess);
  // The header TEID stays 0: the PGW has no TEID for this session yet.
  patchSequenceNumber(c.message_bytes, sequence);
  const auto out = outgoing(c, true);
  const config::Failover& failover = routing_->failover();
  if (failover.attempts > 1) transactions_.keepRequest(*t, out);
  if (failover.response_timeout_ms != 0 && failover.attempts > 1) startCreationTimer(*t, c.arrival.now_ns);
  send(gateway_socket, gateway, out);
}

void Proxy::relayRequest(Context& c, SessionShm& session, Leg from) noexcept {
  const Leg to = other(from);
  if (to == Leg::kGateway && session.state != static_cast<uint8_t>(SessionState::kActive)) {
    // The PGW has not told its TEID yet (its Create Session Response is still
    // on the way): nothing can be addressed to it.
    counters_.messages_dropped.add();
    return;
  }
  const Endpoint& peer = to == Leg::kGateway ? session.pgw : session.sgw;
  const uint8_t socket = to == Leg::kGateway ? session.gateway_socket : session.access_socket;
  if (!translateControlFTeids(c, session, from, socketFamily(socket))) {
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  if (from == Leg::kGateway) {
    restoreApn(c, session);
  } else {
    noteCsids(session, c.message);
  }
  const Header& h = c.message.header();
  // A request the PGW sends because of an SGW's command carries the
  // sequence number the proxy gave the command: the SGW gets it with the
  // number it gave the command (TS 29.274 §7.6), and its response is matched
  // by that number and the session's TEID.
  TransactionShm* command =
      from == Leg::kGateway && (h.sequence_number & kCommandBit) ? triggeringCommand(h.sequence_number, session)
                                                                   : nullptr;
  uint32_t sequence;
  uint64_t key;
  if (command != nullptr) {
    sequence = command->requester_sequence;
    key = commandNumbered(sessions_.teid(session, Leg::kAccess), sequence);
  } else {
    sequence = allocateSequence(h.sequence_number & kCommandBit);
    key = proxyNumbered(sequence);
  }
  const net::Address destination = peer.address.withPort(kGtpcPort);
  TransactionShm* t = openTransaction(c, c.message, key, session, to, socket, destination);
  if (t == nullptr) {
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  if (c.message.messageType() == MessageType::kDeleteBearerRequest) {
    // The Linked EPS Bearer ID names the default bearer: the whole PDN
    // connection goes (TS 29.274 §7.2.9.2).
    if (auto lbi = readFirst<Ebi>(c.message, 0); lbi && lbi->value == session.default_ebi)
      t->flags |= kDeletesPdnConnection;
  }
  session.updated_ns = c.arrival.wall_ns;
  persist(session, &c.message, from);
  // A request sent with TEID 0 (a PGW Downlink Triggering Notification)
  // goes on with TEID 0 (TS 29.274 §5.5.2).
  if (h.teid != 0) patchTeid(c.message_bytes, peer.teid);
  patchSequenceNumber(c.message_bytes, sequence);
  const auto out = outgoing(c, true);
  send(socket, destination, out);
  // The command is answered by this request: a retransmitted command gets
  // it again, as it would from the PGW.
  if (command != nullptr) {
    transactions_.answered(*command, out);
    counters_.transactions_completed.add();
  }
}

void Proxy::relayDownlinkTriggering(Context& c) noexcept {
  // TS 29.274 §7.9.7: the PGW names the subscriber by IMSI (header TEID 0);
  // the notification goes to the SGW of that subscriber's session on this
  // PGW, with the proxy's F-TEID in place of the PGW's.
  const Message& m = c.message;
  if (auto ok = checkMandatory(m); !ok) {
    reject(c, gtp::v2Cause(ok.error().code), ok.error().ie_type, ok.error().ie_instance);
    return;
  }
  auto imsi = readFirst<Imsi>(m);
  if (!imsi) {
    reject(c, static_cast<uint8_t>(Cause::kMandatoryIeMissing), static_cast<uint8_t>(IeType::kImsi));
    return;
  }
  const std::string_view digits = imsi->digits.view();
  SessionShm* session = sessions_.findInPartition(group::partitionOfCreateSession(m), [&](const SessionShm& s) {
    return s.state == kActive && std::string_view(s.imsi, s.imsi_length) == digits &&
           (s.pgw.address.sameHost(c.arrival.peer) || s.gateway_address.sameHost(c.arrival.peer));
  });
  if (session == nullptr) {
    counters_.context_not_found.add();
    reject(c, static_cast<uint8_t>(Cause::kContextNotFound));
    return;
  }
  relayRequest(c, *session, Leg::kGateway);
}

void Proxy::relayOneWay(Context& c) noexcept {
  // Trace Session Activation and Deactivation (TS 29.274 §7.12): initial
  // messages with no reply, so no transaction; the peer's TEID and a proxy
  // sequence number, as for a request.
  const Header& h = c.message.header();
  SessionShm* session = h.teidPresent() && h.teid != 0 ? sessions_.find(h.teid) : nullptr;
  if (session == nullptr && h.teidPresent() && h.teid != 0 && restorer_ != nullptr &&
      restorer_->hold(c.arrival, c.bytes, h.teid, h.sequence_number)) {
    return;
  }
  if (session == nullptr || session->state != kActive) {
    counters_.messages_dropped.add();
    return;
  }
  const Leg to = other(splitTeid(h.teid).leg);
  const uint8_t socket = to == Leg::kGateway ? session->gateway_socket : session->access_socket;
  const Endpoint& peer = to == Leg::kGateway ? session->pgw : session->sgw;
  if (!translateControlFTeids(c, *session, other(to), socketFamily(socket))) {
    counters_.messages_dropped.add();
    return;
  }
  patchTeid(c.message_bytes, peer.teid);
  patchSequenceNumber(c.message_bytes, allocateSequence(false));
  counters_.one_way_relayed.add();
  send(socket, peer.address.withPort(kGtpcPort), outgoing(c, true));
}

TransactionShm* Proxy::triggeringCommand(uint32_t sequence, const SessionShm& session) noexcept {
  TransactionShm* t = transactions_.findByResponse(proxyNumbered(sequence));
  if (t != nullptr && t->state == kPending && isCommand(t->message_type) &&
      t->toward == static_cast<uint8_t>(Leg::kGateway) &&
      t->session_teid == sessions_.teid(session, Leg::kAccess)) {
    return t;
  }
  // A PGW-initiated request that happens to have the top bit set, or one for
  // a command already expired: it goes on with a proxy number of its own.
  counters_.triggered_unmatched.add();
  return nullptr;
}

TransactionShm* Proxy::openTransaction(const Context& c, const Message& request, uint64_t response_key,
                                       const SessionShm& session, Leg toward, uint8_t destination_socket,
                                       const net::Address& destination) noexcept {
  TransactionShm* t = transactions_.open(response_key, c.arrival.peer, request.header().sequence_number,
                                         c.arrival.now_ns);
  if (t == nullptr) {
    counters_.transactions_full.add();
    return nullptr;
  }
  t->toward = static_cast<uint8_t>(toward);
  t->message_type = request.header().message_type;
  t->requester_socket = c.arrival.socket;
  t->destination_socket = destination_socket;
  t->destination = destination;
  t->session_teid = sessions_.teid(session, Leg::kAccess);
  counters_.transactions_started.add();
  counters_.transactions_live.set(transactions_.live());
  return t;
}

void Proxy::retransmitted(Context& c, TransactionShm& t) noexcept {
  if (t.state == kAnswered) {
    if (t.flags & kAnsweredElsewhere) return;
    const auto answer = transactions_.answerOf(t);
    if (answer.empty()) {
      counters_.answers_lost.add();
      return;
    }
    counters_.answers_replayed.add();
    send(c.arrival.socket, c.arrival.peer, answer);
    return;
  }
  // Pending: the same translated request again, to the same gateway or SGW.
  SessionShm* session = sessions_.find(t.session_teid);
  if (session == nullptr) {
    counters_.messages_dropped.add();
    return;
  }
  const Leg toward = static_cast<Leg>(t.toward);
  if (!translateControlFTeids(c, *session, other(toward), socketFamily(t.destination_socket))) {
    counters_.messages_dropped.add();
    return;
  }
  if (t.message_type == static_cast<uint8_t>(MessageType::kCreateSessionRequest) && session->state == kCreating) {
    // The creation: TEID 0 still (the PGW has none yet), and the rule's
    // overrides as on the first copy, so that the gateway gets the same
    // request whichever copy reaches it.
    if (session->rule < routing_->rules().size()) {
      if (const config::Overrides& o = routing_->rule(session->rule).overrides; o.any()) applyOverrides(c, o);
    }
  } else if (c.message.header().teid != 0) {
    // Everything else to the peer's TEID, as the first copy.
    patchTeid(c.message_bytes, toward == Leg::kGateway ? session->pgw.teid : session->sgw.teid);
  }
  patchSequenceNumber(c.message_bytes, static_cast<uint32_t>(t.response_key));
  if (toward == Leg::kAccess) restoreApn(c, *session);
  counters_.requests_retransmitted.add();
  send(t.destination_socket, t.destination, outgoing(c, true));
}

void Proxy::handleResponse(Context& c) noexcept {
  const Header& h = c.message.header();
  TransactionShm* t = nullptr;
  // An SGW answering a command-triggered request answers with its own
  // command's number, unique only within the session.
  if ((h.sequence_number & kCommandBit) && h.teidPresent() && h.teid != 0) {
    t = transactions_.findByResponse(commandNumbered(h.teid, h.sequence_number));
  }
  if (t == nullptr) t = transactions_.findByResponse(proxyNumbered(h.sequence_number));
  if (t == nullptr) {
    counters_.responses_unmatched.add();
    if (c.message.messageType() == MessageType::kCreateSessionResponse) deleteOrphan(c);
    return;
  }
  if (t->state != kPending) {
    counters_.responses_duplicate.add();
    return;
  }
  if (t->requester_socket == kProxyOrigin) {
    // A peer answering one of the proxy's own requests: nobody waits for it.
    counters_.own_requests_answered.add();
    counters_.transactions_completed.add();
    transactions_.answered(*t, {});
    return;
  }
  SessionShm* session = t->session_teid != 0 ? sessions_.find(t->session_teid) : nullptr;
  if (session == nullptr) {
    // The session ended while this transaction was open (a Delete crossed
    // it): nobody is left to relay the answer to, and a transaction left
    // pending would only hold its record and later count as expired.
    counters_.responses_session_gone.add();
    transactions_.close(*t);
    counters_.transactions_live.set(transactions_.live());
    return;
  }
  // Matched by the proxy's sequence number and the TEID in the header, never
  // by where the response came from (DESIGN.md): a TEID, when there is one,
  // must be this session's, or this is not the transaction's answer and it
  // stays pending.
  if (h.teidPresent() && h.teid != 0 && h.teid != sessions_.teid(*session, Leg::kAccess) &&
      h.teid != sessions_.teid(*session, Leg::kGateway)) {
    counters_.responses_unmatched.add();
    return;
  }
  if (t->message_type == static_cast<uint8_t>(MessageType::kCreateSessionRequest) &&
      session->state == static_cast<uint8_t>(SessionState::kCreating)) {
    finishCreateSession(c, *t, *session);
  } else {
    relayResponse(c, *t, *session);
  }
}

void Proxy::finishCreateSession(Context& c, TransactionShm& t, SessionShm& s) noexcept {
  const Message& m = c.message;
  // A gateway answering with another Recovery value than before restarted:
  // sessions older than this one are gone there.
  noteRecovery(s.gateway, m, s.created_ns);
  auto cause = readFirst<CauseIe>(m);
  const bool ok = cause && accepted(cause->value);
  if (!ok && cause && routing_->failover().triesAnother(cause->value)) {
    failOver(t, s);  // to the next gateway, or the SGW is told none is left
    return;
  }
  if (ok) {
    translateControlFTeids(c, s, Leg::kGateway, socketFamily(t.requester_socket));
    restoreApn(c, s);
    if (s.pgw.teid == 0 || !s.pgw.address.valid()) {
      // Accepted without naming its GTP-C endpoint: the session could never
      // be reached again. Refuse it toward the SGW.
      counters_.sessions_rejected.add();
      answer(t.requester_socket, t.requester, static_cast<uint8_t>(MessageType::kCreateSessionResponse),
             s.sgw.teid, t.requester_sequence, static_cast<uint8_t>(Cause::kNoResourcesAvailable), 0, 0, &t);
      endSession(s);
      return;
    }
    s.state = static_cast<uint8_t>(SessionState::kActive);
    s.updated_ns = c.arrival.wall_ns;
    trackBearers(t.message_type, s, m);
    noteCsids(s, m);
    persist(s, &m, Leg::kGateway);
    counters_.sessions_created.add();
  }
  patchTeid(c.message_bytes, s.sgw.teid);
  patchSequenceNumber(c.message_bytes, t.requester_sequence);
  // A dedicated bearer's Create Bearer Request may ride on the response; it
  // is only meaningful for an accepted session (TS 29.274 §7.7.0).
  const bool with_piggybacked = ok && translatePiggybacked(c, s, Leg::kGateway);
  reply(t, outgoing(c, with_piggybacked));
  if (!ok) {
    // A rejected creation leaves no session behind.
    counters_.sessions_rejected.add();
    endSession(s);
  }
  counters_.sessions_active.set(sessions_.active());
}

void Proxy::relayResponse(Context& c, TransactionShm& t, SessionShm& session) noexcept {
  const Leg from = static_cast<Leg>(t.toward);  // the response comes from where the request went
  if (from == Leg::kGateway) {
    noteRecovery(session.gateway, c.message, c.arrival.wall_ns);
    restoreApn(c, session);
  }
  translateControlFTeids(c, session, from, socketFamily(t.requester_socket));
  const uint32_t requester_teid = from == Leg::kGateway ? session.sgw.teid : session.pgw.teid;
  patchTeid(c.message_bytes, requester_teid);
  patchSequenceNumber(c.message_bytes, t.requester_sequence);
  const bool with_piggybacked = translatePiggybacked(c, session, from);
  reply(t, outgoing(c, with_piggybacked));
  auto cause = readFirst<CauseIe>(c.message);
  // Context Not Found: the peer no longer has it either.
  const bool ended = cause && (accepted(cause->value) || cause->value == static_cast<uint8_t>(Cause::kContextNotFound));
  const bool deletes_session =
      t.message_type == static_cast<uint8_t>(MessageType::kDeleteSessionRequest) ||
      (t.message_type == static_cast<uint8_t>(MessageType::kDeleteBearerRequest) && (t.flags & kDeletesPdnConnection));
  if (deletes_session && ended) {
    endSession(session);
    counters_.sessions_deleted.add();
    counters_.sessions_active.set(sessions_.active());
    return;
  }
  session.updated_ns = c.arrival.wall_ns;
  if (cause && accepted(cause->value)) {
    const uint16_t before = session.ebis;
    trackBearers(t.message_type, session, c.message);
    if (from == Leg::kGateway) noteCsids(session, c.message);
    // An answer that changes nothing the record keeps (a Modify Bearer
    // Response with a Cause alone) is not a change: the request was written.
    if (session.ebis != before || ChangeWriter::carriesAttributes(c.message, from))
      persist(session, &c.message, from);
    if (const uint16_t removed = before & ~session.ebis; removed != 0 && changes_) {
      if (!changes_->removeBearers(session, sessions_.teid(session, Leg::kAccess), sessions_.partitionOf(session),
                                   now_wall_ns_, removed))
        counters_.persist_ring_full.add();
    }
  }
}

void Proxy::trackBearers(uint8_t request_type, SessionShm& s, const Message& response) noexcept {
  const auto type = static_cast<MessageType>(request_type);
  const bool adds = type == MessageType::kCreateSessionRequest || type == MessageType::kCreateBearerRequest;
  const bool removes = type == MessageType::kDeleteBearerRequest;
  if (!adds && !removes) return;
  // Each Bearer Context of the answer says, with its own Cause, whether its
  // bearer was created (or deleted); none means accepted (TS 29.274 8.28).
  for (const Ie& bc : response.topLevel()) {
    if (bc.ieType() != IeType::kBearerContext) continue;
    const Ie* ebi_ie = response.findChild(bc, IeType::kEbi, 0);
    if (ebi_ie == nullptr) continue;
    auto ebi = read<Ebi>(response, *ebi_ie);
    if (!ebi || ebi->value < 5 || ebi->value > 15) continue;
    if (const Ie* cause_ie = response.findChild(bc, IeType::kCause, 0)) {
      auto cause = read<CauseIe>(response, *cause_ie);
      if (!cause || !accepted(cause->value)) continue;
    }
    const auto bit = static_cast<uint16_t>(1u << ebi->value);
    s.ebis = adds ? static_cast<uint16_t>(s.ebis | bit) : static_cast<uint16_t>(s.ebis & ~bit);
  }
}

bool Proxy::translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept {
  if (!datagram_.has_piggybacked) return true;
  const Message& p = datagram_.piggybacked;
  // TS 29.274 §5.5.1: only an initial message rides on a triggered one (a
  // Create Bearer Request on a Create Session Response, ...).
  if (messageTypeInfo(p.header().message_type).role != MessageRole::kRequest) return false;
  Context pc{c.arrival, c.bytes, p, c.bytes.subspan(c.message.bytes().size(), p.bytes().size())};
  const uint8_t to_socket = other(from) == Leg::kAccess ? session.access_socket : session.gateway_socket;
  if (!translateControlFTeids(pc, session, from, socketFamily(to_socket))) return false;
  const Leg to = other(from);
  const uint32_t sequence = allocateSequence(p.header().sequence_number & kCommandBit);
  const Endpoint& peer = to == Leg::kAccess ? session.sgw : session.pgw;
  const uint8_t socket = to == Leg::kAccess ? session.access_socket : session.gateway_socket;
  TransactionShm* t = openTransaction(c, p, proxyNumbered(sequence), session, to, socket,
                                      peer.address.withPort(kGtpcPort));
  if (t == nullptr) return false;
  patchTeid(pc.message_bytes, peer.teid);
  patchSequenceNumber(pc.message_bytes, sequence);
  return true;
}

bool Proxy::translateControlFTeids(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept {
  const Message& m = c.message;
  const Leg to = other(from);
  const uint32_t own_teid = sessions_.teid(session, to);
  const net::Address own_v4 = proxyAddress(to, AF_INET);
  const net::Address own_v6 = proxyAddress(to, AF_INET6);
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kFTeid) continue;
    auto f = read<FTeid>(m, ie);
    if (!f) continue;
    const bool control = from == Leg::kAccess ? isAccessControl(f->interface_type)
                                              : isGatewayControl(f->interface_type);
    if (!control) continue;
    Endpoint& peer = from == Leg::kAccess ? session.sgw : session.pgw;
    peer.teid = f->teid;
    if (ie.instance() == 0 && !c.sender_teid) c.sender_teid = f->teid;
    // With both families, keep the one the peer reached us with.
    if (f->ipv4 && (!f->ipv6 || c.arrival.peer.family == AF_INET)) {
      peer.address = net::Address::v4(*f->ipv4, kGtpcPort);
    } else if (f->ipv6) {
      peer.address = net::Address::v6(*f->ipv6, kGtpcPort);
    }
    // The proxy's own endpoint on the leg the message goes to. In place when
    // the proxy has an address there in every family the F-TEID carries,
    // the family it sends from among them; otherwise the F-TEID is written
    // anew with the family of the leg the proxy stands on (TS 29.274 8.22),
    // which changes its length: the message is rewritten.
    const bool in_place = (f->ipv4 || f->ipv6) && (!f->ipv4 || own_v4.valid()) && (!f->ipv6 || own_v6.valid()) &&
                          (out_family == AF_INET ? f->ipv4.has_value() : f->ipv6.has_value());
    if (in_place) {
      patchFTeidTeid(c.message_bytes, ie, own_teid);
      if (f->ipv4) patchFTeidIpv4(c.message_bytes, ie, own_v4.ipv4());
      if (f->ipv6) patchFTeidIpv6(c.message_bytes, ie, own_v6.ipv6());
      continue;
    }
    const net::Address& own = out_family == AF_INET ? own_v4 : own_v6;
    // Only the first message of a datagram is rewritten.
    if (!own.valid() || &m != &datagram_.message) return false;
    FTeid mine;
    mine.interface_type = f->interface_type;
    mine.teid = own_teid;
    if (out_family == AF_INET) {
      mine.ipv4 = own.ipv4();
    } else {
      mine.ipv6 = own.ipv6();
    }
    if (!rewriter().replace(ie, mine)) return false;
  }
  return true;
}

gtp::v2::Rewriter& Proxy::rewriter() noexcept {
  if (!rewriter_) rewriter_.emplace(datagram_.message);
  return *rewriter_;
}

void Proxy::announceRecovery(const Message& m, std::span<uint8_t> bytes) noexcept {
  const uint8_t value = groupRecovery();
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kRecovery || ie.length < 1) continue;
    uint8_t& octet = bytes[ie.valueOffset()];
    if (octet != value) {
      octet = value;
      counters_.recovery_rewritten.add();
    }
  }
}

uint8_t Proxy::groupRecovery() const noexcept {
  return status_shm_ != nullptr ? static_cast<uint8_t>(status_shm_->recovery.load(std::memory_order_relaxed))
                                : settings_.recovery;
}

std::span<const uint8_t> Proxy::outgoing(Context& c, bool with_piggybacked) noexcept {
  // The peers see one node, the proxy: a Recovery IE carries the group's
  // value, never another peer's (TS 23.007: a changed value from one peer
  // address means that node restarted).
  announceRecovery(c.message, c.message_bytes);
  if (with_piggybacked && datagram_.has_piggybacked && &c.message == &datagram_.message) {
    const Message& p = datagram_.piggybacked;
    announceRecovery(p, c.bytes.subspan(c.message.bytes().size(), p.bytes().size()));
  }
  if (!rewriter_ || rewriter_->editCount() == 0) return with_piggybacked ? c.bytes : alone(c);
  auto written = rewriter_->write(rewritten_);
  if (!written) {
    counters_.rewrite_failures.add();
    return with_piggybacked ? c.bytes : alone(c);
  }
  std::size_t size = *written;
  const auto rest = c.bytes.subspan(c.message.bytes().size());
  if (with_piggybacked && !rest.empty() && size + rest.size() <= rewritten_.size()) {
    std::memcpy(rewritten_.data() + size, rest.data(), rest.size());
    rewritten_[0] |= kFlagPiggyback;
    size += rest.size();
  }
  counters_.messages_rewritten.add();
  return {rewritten_.data(), size};
}

uint8_t Proxy::socketFamily(uint8_t socket) const noexcept {
  return socket < settings_.sockets.sockets.size() ? settings_.sockets.sockets[socket].family : 0;
}

uint8_t Proxy::applyOverrides(Context& c, const config::Overrides& o) noexcept {
  const Message& m = c.message;
  counters_.overrides_applied.add();
  if (!o.apn.empty()) {
    Apn apn;
    for (char ch : o.apn) apn.text.push(ch);
    const Ie* ie = m.find(IeType::kApn);
    if (!(ie != nullptr ? rewriter().replace(*ie, apn) : rewriter().append(apn))) return 0;
  }
  if (o.apn_ambr_uplink_kbps || o.apn_ambr_downlink_kbps) {
    if (const Ie* ie = m.find(IeType::kAmbr)) {
      if (auto ambr = read<Ambr>(m, *ie)) {
        Ambr capped = *ambr;
        if (o.apn_ambr_uplink_kbps) capped.uplink = std::min(capped.uplink, *o.apn_ambr_uplink_kbps);
        if (o.apn_ambr_downlink_kbps) capped.downlink = std::min(capped.downlink, *o.apn_ambr_downlink_kbps);
        capped.encode(c.message_bytes.data() + ie->valueOffset());  // same length: in place
      }
    }
  }
  if (o.charging_characteristics) {
    const ChargingCharacteristics cc{*o.charging_characteristics};
    const Ie* ie = m.find(IeType::kChargingCharacteristics);
    if (ie != nullptr && ie->length == cc.encodedSize()) {
      cc.encode(c.message_bytes.data() + ie->valueOffset());
    } else if (!(ie != nullptr ? rewriter().replace(*ie, cc) : rewriter().append(cc))) {
      return 0;
    }
  }
  if (o.selection_mode) {
    if (const Ie* ie = m.find(IeType::kSelectionMode); ie != nullptr && ie->length >= 1) {
      uint8_t& octet = c.message_bytes[ie->valueOffset()];
      octet = static_cast<uint8_t>((octet & 0xfc) | (*o.selection_mode & 0x03));  // spare bits kept
    } else if (!rewriter().append(SelectionMode{*o.selection_mode})) {
      return 0;
    }
  }
  if (!o.allow_ipv4 || !o.allow_ipv6) return restrictPdnType(c, o);
  return 0;
}

uint8_t Proxy::restrictPdnType(Context& c, const config::Overrides& o) noexcept {
  const Message& m = c.message;
  const Ie* type_ie = m.find(IeType::kPdnType);
  if (type_ie == nullptr || type_ie->length < 1) return 0;
  auto requested = read<PdnType>(m, *type_ie);
  if (!requested) return 0;
  constexpr uint8_t kIpv4 = 1, kIpv6 = 2, kIpv4v6 = 3;
  if ((requested->value == kIpv4 && !o.allow_ipv4) || (requested->value == kIpv6 && !o.allow_ipv6))
    return static_cast<uint8_t>(Cause::kPreferredPdnTypeNotSupported);
  if (requested->value != kIpv4v6) return 0;  // allowed, or Non-IP / Ethernet: not ours to narrow
  const uint8_t narrowed = o.allow_ipv4 ? kIpv4 : kIpv6;
  uint8_t& octet = c.message_bytes[type_ie->valueOffset()];
  octet = static_cast<uint8_t>((octet & 0xf8) | narrowed);  // spare bits kept
  // The PAA asks for the same type; it keeps an address the UE asked for.
  if (const Ie* paa_ie = m.find(IeType::kPaa)) {
    if (auto paa = read<Paa>(m, *paa_ie)) {
      Paa only = *paa;
      only.pdn_type = narrowed;
      if (narrowed == kIpv4) {
        only.ipv6.reset();
        only.ipv6_prefix_length = 0;
        if (!only.ipv4) only.ipv4 = gtp::Ipv4{};
      } else {
        only.ipv4.reset();
        if (!only.ipv6) only.ipv6 = gtp::Ipv6{};
        if (only.ipv6_prefix_length == 0) only.ipv6_prefix_length = 64;
      }
      rewriter().replace(*paa_ie, only);
    }
  }
  return 0;
}

void Proxy::restoreApn(Context& c, const SessionShm& session) noexcept {
  // Only sessions whose rule rewrote the APN, and only messages that carry one.
  if (session.rule >= routing_->rules().size() || routing_->rule(session.rule).overrides.apn.empty()) return;
  if (session.apn_length == 0 || &c.message != &datagram_.message) return;
  if (const Ie* ie = c.message.find(IeType::kApn))
    rewriter().replace(*ie, std::span<const uint8_t>(session.apn, session.apn_length));
}

net::Address Proxy::proxyAddress(Leg leg, uint8_t family) const noexcept {
  const uint8_t socket =
      leg == Leg::kAccess ? settings_.sockets.access(family) : settings_.sockets.gateway(family);
  return socket == group::kNoSocket ? net::Address{} : settings_.sockets.sockets[socket];
}

void Proxy::reject(Context& c, uint8_t cause, uint8_t offending_type, uint8_t offending_instance) noexcept {
  const Message& m = c.message;
  // The requester's TEID: from its sender F-TEID when the request has one,
  // else the session's record of it, else 0 (TS 29.274 §5.5.2).
  uint32_t teid = 0;
  if (c.sender_teid) {
    teid = *c.sender_teid;
  } else if (auto f = readFirst<FTeid>(m, 0)) {
    teid = f->teid;
  } else if (m.header().teidPresent() && m.header().teid != 0) {
    if (const SessionShm* s = sessions_.find(m.header().teid)) {
      teid = splitTeid(m.header().teid).leg == Leg::kAccess ? s->sgw.teid : s->pgw.teid;
    }
  }
  answer(c.arrival.socket, c.arrival.peer, static_cast<uint8_t>(m.header().message_type + 1), teid,
         m.header().sequence_number, cause, offending_type, offending_instance);
}

void Proxy::answer(uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid,
                   uint32_t sequence, uint8_t cause, uint8_t offending_type, uint8_t offending_instance,
                   TransactionShm* transaction) noexcept {
  std::array<uint8_t, 64> buffer;
  Builder b(buffer);
  b.begin(static_cast<MessageType>(response_type), teid, sequence);
  CauseIe ie;
  ie.value = cause;
  if (offending_type != 0) ie.offending_ie = CauseIe::OffendingIe{offending_type, offending_instance};
  b.add(ie);
  if (auto out = b.finish()) {
    if (!accepted(cause)) counters_.rejections_sent.add();
    if (transaction != nullptr) {
      reply(*transaction, *out);
    } else {
      send(socket, to, *out);
    }
  }
}

void Proxy::reply(TransactionShm& t, std::span<const uint8_t> bytes) noexcept {
  send(t.requester_socket, t.requester, bytes);
  counters_.transactions_completed.add();
  transactions_.answered(t, bytes);
}

void Proxy::setPersist(PersistSink* sink) noexcept {
  if (sink == nullptr) {
    changes_.reset();
  } else {
    changes_.emplace(*sink);
  }
}

void Proxy::persist(const SessionShm& s, const Message* m, Leg from) noexcept {
  if (!changes_) return;
  if (changes_->upsert(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, m, from)) {
    counters_.persist_changes.add();
  } else {
    counters_.persist_ring_full.add();
  }
}

void Proxy::endSession(SessionShm& s) noexcept {
  if (changes_) {
    if (changes_->erase(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_)) {
      counters_.persist_changes.add();
    } else {
      counters_.persist_ring_full.add();
    }
  }
  sessions_.release(s);
}

uint32_t Proxy::allocateSequence(bool command) noexcept {
  // seq % W == index, so that a response which carries no TEID still reaches
  // this worker (the forwarder routes it by sequence number).
  const uint64_t per_worker = kSequenceSpace / settings_.workers;
  const uint64_t n = header_.sequence_counter++;
  const auto sequence = static_cast<uint32_t>(settings_.index + settings_.workers * (n % per_worker));
  return command ? (sequence | kCommandBit) : sequence;
}

bool Proxy::send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept {
  if (!egress_.send(socket, to, bytes)) {
    counters_.egress_full.add();
    return false;
  }
  counters_.datagrams_sent.add();
  return true;
}

bool Proxy::gatewayUp(uint16_t gateway) const noexcept {
  if (gateway >= watch_.size() || watch_[gateway].status == nullptr) return true;
  return watch_[gateway].status->up.load(std::memory_order_relaxed) != 0;
}

net::Address Proxy::gatewayAddress(uint16_t gateway) const noexcept {
  const config::Gateway& g = routing_->gateway(gateway);
  return g.isIpv6() ? net::Address::v6(std::get<gtp::Ipv6>(g.address), g.port)
                    : net::Address::v4(std::get<gtp::Ipv4>(g.address), g.port);
}

void Proxy::mapGatewayStatus() {
  const std::size_t n = routing_->gateways().size();
  std::vector<GatewayWatch> watch(n);
  // GWT-A3, GWT-A1: pair with GWT-R3 and GWT-R1 in the forwarder's
  // GatewayHealth constructor: the entries' addresses are complete below the
  // published count.
  status_version_ = status_shm_ != nullptr ? status_shm_->version.load(std::memory_order_acquire) : 0;
  status_published_ = status_shm_ != nullptr ? status_shm_->published.load(std::memory_order_acquire) : 0;
  for (std::size_t i = 0; i < n && i < status_published_; ++i) {
    const forwarder::GatewayStatusShm& e = status_shm_->gateways[i];
    if (!(e.address == gatewayAddress(static_cast<uint16_t>(i)))) continue;  // another document
    watch[i].status = &e;
    watch[i].restarts = e.restarts.load(std::memory_order_acquire);
    watch[i].recovery = e.recovery.load(std::memory_order_relaxed);
  }
  // What this worker learnt from the gateways' own messages stays.
  for (std::size_t i = 0; i < n && i < watch_.size(); ++i)
    if (watch[i].recovery == forwarder::kRecoveryUnknown) watch[i].recovery = watch_[i].recovery;
  watch_ = std::move(watch);
}

void Proxy::watchGateways(uint64_t now_ns, uint64_t wall_ns) noexcept {
  if (status_shm_ == nullptr || now_ns < next_watch_ns_) return;
  next_watch_ns_ = now_ns + kWatchPeriodNs;
  // GWT-A3: pairs with GWT-R3 in the forwarder's GatewayHealth constructor.
  if (status_shm_->version.load(std::memory_order_acquire) != status_version_) {
    mapGatewayStatus();  // the forwarder started again or reloaded, maybe with another document: rare
    return;
  }
  for (std::size_t g = 0; g < watch_.size(); ++g) {
    GatewayWatch& w = watch_[g];
    if (w.status == nullptr) continue;
    // GWT-A2: pairs with GWT-R2 in GatewayHealth::onEchoResponse(): the new
    // Recovery value is visible once the count changed.
    const uint32_t restarts = w.status->restarts.load(std::memory_order_acquire);
    const uint32_t recovery = w.status->recovery.load(std::memory_order_relaxed);
    if (restarts != w.restarts) {
      w.restarts = restarts;
      // Seen already in a message of the gateway: not a second restart.
      if (w.recovery != forwarder::kRecoveryUnknown && w.recovery != recovery)
        gatewayRestarted(static_cast<uint16_t>(g), wall_ns);
      w.recovery = recovery;
    } else if (w.recovery == forwarder::kRecoveryUnknown) {
      w.recovery = recovery;
    }
  }
}

void Proxy::noteRecovery(uint16_t gateway, const Message& m, uint64_t before_wall_ns) noexcept {
  if (gateway >= watch_.size()) return;
  auto r = readFirst<Recovery>(m);
  if (!r) return;
  GatewayWatch& w = watch_[gateway];
  if (w.recovery != forwarder::kRecoveryUnknown && w.recovery != r->value)
    gatewayRestarted(gateway, before_wall_ns);
  w.recovery = r->value;
}

void Proxy::gatewayRestarted(uint16_t gateway, uint64_t before_wall_ns) noexcept {
  counters_.gateway_restarts.add();
  if (restarts_.size() == kMaxRestarts) {
    // Dozens of restarts within one walk: the oldest entry covers the most
    // sessions; widen it to this gateway's by walking again for the newest.
    restarts_.back() = Restart{gateway, before_wall_ns};
  } else {
    restarts_.push_back(Restart{gateway, before_wall_ns});
  }
  // Walk the sessions again from the start, for this restart and the others.
  restart_cursor_ = SessionTable::Cursor{};
}

void Proxy::cleanUpRestarts(uint64_t now_ns) noexcept {
  if (restarts_.empty()) {
    last_notify_ns_ = now_ns;
    return;
  }
  const double rate = routing_->healthCheck().restart_notify_rate;
  notify_credit_ = std::min(rate, notify_credit_ + rate * static_cast<double>(now_ns - last_notify_ns_) / 1e9);
  last_notify_ns_ = now_ns;
  if (notify_credit_ < 1) return;
  // Each turn looks at a bounded number of slots, so a large table is walked
  // over several turns and session traffic keeps flowing in between.
  sessions_.scan(restart_cursor_, 4096, [&](SessionShm& s) {
    bool gone = false;
    for (const Restart& r : restarts_)
      gone |= s.gateway == r.gateway && s.state == kActive && s.created_ns < r.before_wall_ns;
    if (!gone) return true;
    if (notify_credit_ < 1) return false;  // this one waits for the next turn
    notify_credit_ -= 1;
    if (s.gtp_version == gtp::v1::kVersion) {
      sendDeletePdpContext(s);
    } else {
      sendDeleteBearer(s);
    }
    endSession(s);
    counters_.restart_sessions_removed.add();
    return true;
  });
  counters_.sessions_active.set(sessions_.active());
  if (restart_cursor_.done(sessions_)) restarts_.clear();
}

void Proxy::sendDeleteBearer(SessionShm& s) noexcept {
  // TS 29.274 §7.2.9.2: the LBI deletes the whole PDN connection; the SGW
  // and the MME take the UE through a new attach to a gateway that is up.
  const uint32_t sequence = allocateSequence(false);
  const net::Address sgw = s.sgw.address.withPort(kGtpcPort);
  std::array<uint8_t, 64> buffer;
  Builder b(buffer);
  b.begin(MessageType::kDeleteBearerRequest, s.sgw.teid, sequence);
  b.add(Ebi{s.default_ebi}, 0);  // Linked EPS Bearer ID
  CauseIe cause;
  cause.value = kCauseReactivationRequested;
  b.add(cause);
  if (auto out = b.finish()) {
    counters_.restart_notifications_sent.add();
    sendOwnRequest(sequence, MessageType::kDeleteBearerRequest, Leg::kAccess, s.access_socket, sgw,
                   sessions_.teid(s, Leg::kAccess), *out);
  }
}

void Proxy::sendOwnRequest(uint64_t response_key, uint32_t sequence, uint8_t message_type, uint8_t flags, Leg toward,
                           uint8_t socket, const net::Address& to, uint32_t session_teid,
                           std::span<const uint8_t> bytes) noexcept {
  send(socket, to, bytes);
  // Held like any request, so that the answer is recognised (and a second
  // copy of it too); the answer goes nowhere.
  TransactionShm* t = transactions_.open(response_key, net::Address{}, sequence, now_ns_);
  if (t == nullptr) return;  // sent once, not followed
  t->toward = static_cast<uint8_t>(toward);
  t->message_type = message_type;
  t->flags = flags;
  t->requester_socket = kProxyOrigin;
  t->destination_socket = socket;
  t->destination = to;
  t->session_teid = session_teid;
  counters_.transactions_started.add();
  if (settings_.n3 == 0 || retry_count_ == retries_.size() || !transactions_.keepRequest(*t, bytes)) return;
  const auto tail = static_cast<uint32_t>((retry_head_ + retry_count_) % retries_.size());
  retries_[tail] = OwnRetry{transactions_.indexOf(*t), t->response_key, now_ns_ + settings_.t3_ns, 1};
  ++retry_count_;
}

void Proxy::retransmitOwnRequests(uint64_t now_ns) noexcept {
  while (retry_count_ != 0 && retries_[retry_head_].deadline_ns <= now_ns) {
    OwnRetry r = retries_[retry_head_];
    retry_head_ = static_cast<uint32_t>((retry_head_ + 1) % retries_.size());
    --retry_count_;
    TransactionShm& t = transactions_.record(r.record);
    if (t.state != kPending || t.response_key != r.response_key) continue;  // answered, or gone
    if (r.sent > settings_.n3) {
      counters_.own_requests_unanswered.add();
      continue;  // the transaction expires with its lifetime
    }
    const auto bytes = transactions_.requestOf(t);
    if (bytes.empty()) continue;
    counters_.own_requests_retransmitted.add();
    send(t.destination_socket, t.destination, bytes);
    ++r.sent;
    r.deadline_ns = now_ns + settings_.t3_ns;
    const auto tail = static_cast<uint32_t>((retry_head_ + retry_count_) % retries_.size());
    retries_[tail] = r;
    ++retry_count_;
  }
}

void Proxy::deleteOrphan(Context& c) noexcept {
  // A gateway accepting a creation the proxy has given up on it (sent to
  // the next gateway after a timeout, or abandoned): the session it made is
  // the proxy's to delete, or it would stay there until that PGW's own
  // clean-up.
  const Message& m = c.message;
  auto cause = readFirst<CauseIe>(m);
  auto pgw = readFirst<FTeid>(m, 1);
  if (!cause || !accepted(cause->value) || !pgw || pgw->teid == 0) return;
  const Header& h = m.header();
  const SessionShm* s = h.teidPresent() && h.teid != 0 ? sessions_.find(h.teid) : nullptr;
  // Still this session's gateway: the answer is just late, not an orphan.
  if (s != nullptr && s->gateway_address.sameHost(c.arrival.peer)) return;
  uint8_t ebi = s != nullptr ? s->default_ebi : 0;
  if (const Ie* bc = m.find(IeType::kBearerContext, 0)) {
    if (const Ie* e = m.findChild(*bc, IeType::kEbi, 0)) {
      if (auto v = read<Ebi>(m, *e)) ebi = v->value;
    }
  }
  const uint32_t sequence = allocateSequence(false);
  const net::Address to = c.arrival.peer;
  std::array<uint8_t, 64> buffer;
  Builder b(buffer);
  b.begin(MessageType::kDeleteSessionRequest, pgw->teid, sequence);
  if (ebi != 0) b.add(Ebi{ebi}, 0);  // Linked EPS Bearer ID
  if (auto out = b.finish()) {
    counters_.orphans_deleted.add();
    sendOwnRequest(sequence, MessageType::kDeleteSessionRequest, Leg::kGateway, c.arrival.socket, to, 0, *out);
  }
}

bool Proxy::failOver(TransactionShm& t, SessionShm& s) noexcept {
  const config::Failover& failover = routing_->failover();
  auto tried = [&t](uint16_t g) {
    for (uint8_t i = 0; i < t.attempts && i < 4; ++i)
      if (t.tried[i] == g) return true;
    return false;
  };
  std::optional<uint16_t> next;
  if (t.attempts < failover.attempts)
    next = picker_.pick(s.pool, [&](uint16_t g) { return gatewayUp(g) && !tried(g); });
  const auto request = transactions_.requestOf(t);
  net::Address address;
  uint8_t socket = group::kNoSocket;
  if (next) {
    address = gatewayAddress(*next);
    socket = settings_.sockets.gateway(address.family);
  }
  const bool v1 = (t.flags & kGtpv1) != 0;
  const uint32_t sequence = v1 ? allocateV1Sequence(Leg::kGateway) : allocateSequence(false);
  const uint64_t key = v1 ? v1Numbered(static_cast<uint8_t>(Leg::kGateway), static_cast<uint16_t>(sequence))
                          : proxyNumbered(sequence);
  if (!next || request.empty() || socket == group::kNoSocket || !transactions_.rekey(t, key)) {
    counters_.creations_exhausted.add();
    counters_.sessions_rejected.add();
    if (v1) {
      // TS 29.060 has no "remote peer not responding": System failure says
      // the network, not the subscriber, failed.
      const uint8_t cause =
          failover.when_exhausted == config::Failover::WhenExhausted::kNoResourcesAvailable ? 199 : 204;
      answerV1(t.requester_socket, t.requester, static_cast<uint8_t>(gtp::v1::MessageType::kCreatePdpContextResponse),
               s.sgw.teid, static_cast<uint16_t>(t.requester_sequence), cause, &t);
    } else {
      answer(t.requester_socket, t.requester, static_cast<uint8_t>(MessageType::kCreateSessionResponse), s.sgw.teid,
             t.requester_sequence, failover.exhaustedCause(), 0, 0, &t);
    }
    endSession(s);
    counters_.sessions_active.set(sessions_.active());
    return false;
  }
  const bool family_changes = address.family != s.gateway_address.family;
  s.gateway = *next;
  s.gateway_address = address;
  s.gateway_socket = socket;
  t.tried[t.attempts++] = *next;
  t.destination = address;
  t.destination_socket = socket;
  std::memcpy(resend_.data(), request.data(), request.size());
  std::span<uint8_t> bytes(resend_.data(), request.size());
  // A pool may mix IPv4 and IPv6 gateways: the proxy's sender F-TEID must
  // name it in the family of the gateway the request now goes to.
  if (family_changes) bytes = v1 ? v1ControlAddressIn(bytes, address.family) : senderFTeidIn(bytes, address.family);
  if (v1) {
    gtp::v1::patchSequenceNumber(bytes, static_cast<uint16_t>(sequence));
  } else {
    patchSequenceNumber(bytes, sequence);
  }
  // The copy kept is the one with the new number (a later failover starts from it).
  transactions_.keepRequest(t, bytes);
  counters_.creations_failed_over.add();
  persist(s, nullptr, Leg::kGateway);
  if (failover.response_timeout_ms != 0) startCreationTimer(t, now_ns_);
  send(socket, address, bytes);
  return true;
}

std::span<uint8_t> Proxy::senderFTeidIn(std::span<uint8_t> request, uint8_t family) noexcept {
  Message m;
  if (!m.decode(request)) return request;
  const Ie* ie = m.find(IeType::kFTeid, 0);
  if (ie == nullptr) return request;
  auto f = read<FTeid>(m, *ie);
  const net::Address own = proxyAddress(Leg::kGateway, family);
  if (!f || !own.valid()) return request;
  FTeid mine;
  mine.interface_type = f->interface_type;
  mine.teid = f->teid;
  if (family == AF_INET) {
    mine.ipv4 = own.ipv4();
  } else {
    mine.ipv6 = own.ipv6();
  }
  Rewriter rewriter(m);
  if (!rewriter.replace(*ie, mine)) return request;
  auto written = rewriter.write(rewritten_);
  if (!written) {
    counters_.rewrite_failures.add();
    return request;
  }
  counters_.messages_rewritten.add();
  return {rewritten_.data(), *written};
}

void Proxy::startCreationTimer(const TransactionShm& t, uint64_t now_ns) noexcept {
  if (timer_count_ == timers_.size()) {
    counters_.creation_timers_full.add();
    return;
  }
  const uint64_t timeout = uint64_t{routing_->failover().response_timeout_ms} * 1'000'000;
  const auto tail = static_cast<uint32_t>((timer_head_ + timer_count_) % timers_.size());
  timers_[tail] = CreationTimer{transactions_.indexOf(t), t.response_key, now_ns + timeout};
  ++timer_count_;
}

void Proxy::expireCreations(uint64_t now_ns) noexcept {
  while (timer_count_ != 0 && timers_[timer_head_].deadline_ns <= now_ns) {
    const CreationTimer timer = timers_[timer_head_];
    timer_head_ = static_cast<uint32_t>((timer_head_ + 1) % timers_.size());
    --timer_count_;
    TransactionShm& t = transactions_.record(timer.record);
    // Answered, expired, or sent elsewhere since: the timer is stale.
    if (t.state != kPending || t.response_key != timer.response_key) continue;
    SessionShm* s = sessions_.find(t.session_teid);
    if (s == nullptr || s->state != kCreating) continue;
    counters_.creations_timed_out.add();
    failOver(t, *s);
  }
}

void Proxy::tick(uint64_t now_ns) noexcept {
  now_ns_ = std::max(now_ns_, now_ns);
  if (changes_) now_wall_ns_ = realtimeNs();
  expireCreations(now_ns);
  retransmitOwnRequests(now_ns);
  if (status_shm_ != nullptr && now_ns >= next_watch_ns_) watchGateways(now_ns, realtimeNs());
  cleanUpRestarts(now_ns);
  deleteConnectionSets();
  if (now_ns < settings_.transaction_timeout_ns) return;
  // Look at the whole table once per quarter of a transaction's lifetime,
  // whether the worker turns every microsecond or sleeps between turns: an
  // unanswered request is noticed within 1.25 lifetimes.
  const uint64_t elapsed = last_tick_ns_ == 0 ? 0 : now_ns - last_tick_ns_;
  last_tick_ns_ = now_ns;
  const uint64_t quarter = settings_.transaction_timeout_ns / 4 + 1;
  const uint64_t due = uint64_t{transactions_.capacity()} * elapsed / quarter + 1;
  sweep_credit_ = std::min<uint64_t>(sweep_credit_ + due, transactions_.capacity());
  if (sweep_credit_ < 64 && elapsed < quarter / 16) return;  // batch the work of busy turns
  const auto budget = static_cast<uint32_t>(sweep_credit_);
  sweep_credit_ = 0;
  transactions_.sweep(now_ns - settings_.transaction_timeout_ns, budget, [&](TransactionShm& t) {
    if (t.state != kPending) return;  // answered: its time for retransmissions is over
    counters_.transactions_expired.add();
    const bool creation = (t.flags & kGtpv1)
                              ? t.message_type == static_cast<uint8_t>(gtp::v1::MessageType::kCreatePdpContextRequest)
                              : t.message_type == static_cast<uint8_t>(MessageType::kCreateSessionRequest);
    if (!creation) return;
    // The PGW never answered the creation: the SGW has given up too (its
    // N3 retransmissions fit in the same time), so the session goes.
    SessionShm* s = sessions_.find(t.session_teid);
    if (s != nullptr && s->state == static_cast<uint8_t>(SessionState::kCreating)) {
      endSession(*s);
      counters_.sessions_expired.add();
      counters_.sessions_active.set(sessions_.active());
    }
  });
  counters_.transactions_live.set(transactions_.live());
}

}  // namespace gtpcp::worker
