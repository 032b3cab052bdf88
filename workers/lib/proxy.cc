#include "workers/lib/proxy.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/group/session_identity.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/patch.h"
#include "common/gtp/v2/validate.h"
#include "common/partition.h"

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

constexpr uint16_t kGtpcPort = 2123;
// Sequence numbers with the top bit set belong to command-triggered
// procedures (TS 29.274 §7.6); the proxy's numbers keep that bit.
constexpr uint32_t kCommandBit = 0x800000;
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

}  // namespace

struct Proxy::Context {
  const Arrival& arrival;
  std::span<uint8_t> bytes;        // the whole datagram
  const Message& message;          // its first message
  std::span<uint8_t> message_bytes;
};

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
      egress_(egress) {}

void Proxy::setRouting(const config::RoutingTable& routing) {
  routing_ = &routing;
  picker_ = config::GatewayPicker(routing);
}

void Proxy::handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  counters_.datagrams_received.add();
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
  if (h.teid == 0) {
    if (c.message.messageType() == MessageType::kCreateSessionRequest) {
      createSession(c);
    } else {
      counters_.messages_dropped.add();
    }
    return;
  }
  SessionShm* session = sessions_.find(h.teid);
  if (session == nullptr) {
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
  const auto gateway_index = picker_.pick(selection->pool, [](uint16_t) { return true; });
  if (!gateway_index) {
    counters_.no_gateway.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  const config::Gateway& chosen = routing_->gateway(*gateway_index);
  const net::Address gateway = chosen.isIpv6() ? net::Address::v6(std::get<gtp::Ipv6>(chosen.address), chosen.port)
                                               : net::Address::v4(std::get<gtp::Ipv4>(chosen.address), chosen.port);
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
  s->created_ns = s->updated_ns = c.arrival.wall_ns;

  if (!translateControlFTeids(c, *s, Leg::kAccess) || s->sgw.teid == 0) {
    sessions_.release(*s);
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  const uint32_t sequence = allocateSequence(false);
  TransactionShm* t = transactions_.insert(sequence);
  if (t == nullptr) {
    counters_.transactions_evicted.add();
    sessions_.release(*s);
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  t->toward = static_cast<uint8_t>(Leg::kGateway);
  t->message_type = m.header().message_type;
  t->requester_socket = c.arrival.socket;
  t->requester = c.arrival.peer;
  t->requester_sequence = m.header().sequence_number;
  t->session_teid = sessions_.teid(*s, Leg::kAccess);
  t->sent_ns = c.arrival.now_ns;
  // The header TEID stays 0: the PGW has no TEID for this session yet.
  patchSequenceNumber(c.message_bytes, sequence);
  counters_.transactions_started.add();
  send(gateway_socket, gateway, c.bytes);
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
  if (!translateControlFTeids(c, session, from)) {
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  const Header& h = c.message.header();
  const uint32_t sequence = allocateSequence(h.sequence_number & kCommandBit);
  TransactionShm* t = transactions_.insert(sequence);
  if (t == nullptr) {
    counters_.transactions_evicted.add();
    reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  t->toward = static_cast<uint8_t>(to);
  t->message_type = h.message_type;
  t->requester_socket = c.arrival.socket;
  t->requester = c.arrival.peer;
  t->requester_sequence = h.sequence_number;
  t->session_teid = sessions_.teid(session, Leg::kAccess);
  t->sent_ns = c.arrival.now_ns;
  session.updated_ns = c.arrival.wall_ns;
  patchTeid(c.message_bytes, peer.teid);
  patchSequenceNumber(c.message_bytes, sequence);
  counters_.transactions_started.add();
  send(socket, peer.address.withPort(kGtpcPort), c.bytes);
}

void Proxy::handleResponse(Context& c) noexcept {
  const Header& h = c.message.header();
  TransactionShm* t = transactions_.find(h.sequence_number);
  if (t == nullptr) {
    counters_.responses_unmatched.add();
    return;
  }
  SessionShm* session = t->session_teid != 0 ? sessions_.find(t->session_teid) : nullptr;
  // Matched by the proxy's sequence number and the TEID in the header, never
  // by where the response came from (DESIGN.md): a TEID, when there is one,
  // must be this session's.
  if (h.teidPresent() && h.teid != 0 &&
      (session == nullptr || (h.teid != sessions_.teid(*session, Leg::kAccess) &&
                              h.teid != sessions_.teid(*session, Leg::kGateway)))) {
    counters_.responses_unmatched.add();
    return;
  }
  if (session != nullptr && t->message_type == static_cast<uint8_t>(MessageType::kCreateSessionRequest) &&
      session->state == static_cast<uint8_t>(SessionState::kCreating)) {
    finishCreateSession(c, *t, *session);
  } else {
    relayResponse(c, *t, session);
  }
}

void Proxy::finishCreateSession(Context& c, TransactionShm& t, SessionShm& s) noexcept {
  const Message& m = c.message;
  auto cause = readFirst<CauseIe>(m);
  const bool ok = cause && accepted(cause->value);
  if (ok) {
    translateControlFTeids(c, s, Leg::kGateway);
    if (s.pgw.teid == 0 || !s.pgw.address.valid()) {
      // Accepted without naming its GTP-C endpoint: the session could never
      // be reached again. Refuse it toward the SGW.
      counters_.sessions_rejected.add();
      answer(t.requester_socket, t.requester, static_cast<uint8_t>(MessageType::kCreateSessionResponse),
             s.sgw.teid, t.requester_sequence, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
      sessions_.release(s);
      transactions_.erase(t);
      return;
    }
    s.state = static_cast<uint8_t>(SessionState::kActive);
    s.updated_ns = c.arrival.wall_ns;
    counters_.sessions_created.add();
  }
  patchTeid(c.message_bytes, s.sgw.teid);
  patchSequenceNumber(c.message_bytes, t.requester_sequence);
  // A dedicated bearer's Create Bearer Request may ride on the response; it
  // is only meaningful for an accepted session (TS 29.274 §7.7.0).
  const bool with_piggybacked = ok && translatePiggybacked(c, s, Leg::kGateway);
  send(t.requester_socket, t.requester, with_piggybacked ? c.bytes : alone(c));
  counters_.transactions_completed.add();
  transactions_.erase(t);
  if (!ok) {
    // A rejected creation leaves no session behind.
    counters_.sessions_rejected.add();
    sessions_.release(s);
  }
  counters_.sessions_active.set(sessions_.active());
}

void Proxy::relayResponse(Context& c, TransactionShm& t, SessionShm* session) noexcept {
  if (session == nullptr) {
    // The session ended while this transaction was open (a Delete Session
    // crossed it): whom to restore the TEID for is gone.
    counters_.responses_unmatched.add();
    transactions_.erase(t);
    return;
  }
  const Leg from = static_cast<Leg>(t.toward);  // the response comes from where the request went
  translateControlFTeids(c, *session, from);
  const uint32_t requester_teid = from == Leg::kGateway ? session->sgw.teid : session->pgw.teid;
  patchTeid(c.message_bytes, requester_teid);
  patchSequenceNumber(c.message_bytes, t.requester_sequence);
  const bool with_piggybacked = translatePiggybacked(c, *session, from);
  send(t.requester_socket, t.requester, with_piggybacked ? c.bytes : alone(c));
  counters_.transactions_completed.add();
  const bool deleting = t.message_type == static_cast<uint8_t>(MessageType::kDeleteSessionRequest);
  transactions_.erase(t);
  if (deleting) {
    auto cause = readFirst<CauseIe>(c.message);
    // Context Not Found: the PGW no longer has it either.
    if (cause && (accepted(cause->value) || cause->value == static_cast<uint8_t>(Cause::kContextNotFound))) {
      sessions_.release(*session);
      counters_.sessions_deleted.add();
      counters_.sessions_active.set(sessions_.active());
    }
  } else {
    session->updated_ns = c.arrival.wall_ns;
  }
}

bool Proxy::translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept {
  if (!datagram_.has_piggybacked) return true;
  const Message& p = datagram_.piggybacked;
  // TS 29.274 §5.5.1: only an initial message rides on a triggered one (a
  // Create Bearer Request on a Create Session Response, ...).
  if (messageTypeInfo(p.header().message_type).role != MessageRole::kRequest) return false;
  Context pc{c.arrival, c.bytes, p, c.bytes.subspan(c.message.bytes().size(), p.bytes().size())};
  if (!translateControlFTeids(pc, session, from)) return false;
  const Leg to = other(from);
  const uint32_t sequence = allocateSequence(p.header().sequence_number & kCommandBit);
  TransactionShm* t = transactions_.insert(sequence);
  if (t == nullptr) {
    counters_.transactions_evicted.add();
    return false;
  }
  t->toward = static_cast<uint8_t>(to);
  t->message_type = p.header().message_type;
  t->requester_socket = c.arrival.socket;
  t->requester = c.arrival.peer;
  t->requester_sequence = p.header().sequence_number;
  t->session_teid = sessions_.teid(session, Leg::kAccess);
  t->sent_ns = c.arrival.now_ns;
  patchTeid(pc.message_bytes, to == Leg::kAccess ? session.sgw.teid : session.pgw.teid);
  patchSequenceNumber(pc.message_bytes, sequence);
  counters_.transactions_started.add();
  return true;
}

bool Proxy::translateControlFTeids(Context& c, SessionShm& session, Leg from) noexcept {
  const Message& m = c.message;
  const Leg to = other(from);
  const uint32_t own_teid = sessions_.teid(session, to);
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kFTeid) continue;
    auto f = read<FTeid>(m, ie);
    if (!f) continue;
    const bool control = from == Leg::kAccess ? isAccessControl(f->interface_type)
                                              : isGatewayControl(f->interface_type);
    if (!control) continue;
    Endpoint& peer = from == Leg::kAccess ? session.sgw : session.pgw;
    peer.teid = f->teid;
    // With both families, keep the one the peer reached us with.
    if (f->ipv4 && (!f->ipv6 || c.arrival.peer.family == AF_INET)) {
      peer.address = net::Address::v4(*f->ipv4, kGtpcPort);
    } else if (f->ipv6) {
      peer.address = net::Address::v6(*f->ipv6, kGtpcPort);
    }
    // The proxy's own endpoint on the leg the message is going to, in each
    // family the F-TEID carries. Changing the family would change the IE's
    // length: not an in-place patch.
    patchFTeidTeid(c.message_bytes, ie, own_teid);
    if (f->ipv4) {
      const net::Address own = proxyAddress(to, AF_INET);
      if (!own.valid()) return false;
      patchFTeidIpv4(c.message_bytes, ie, own.ipv4());
    }
    if (f->ipv6) {
      const net::Address own = proxyAddress(to, AF_INET6);
      if (!own.valid()) return false;
      patchFTeidIpv6(c.message_bytes, ie, own.ipv6());
    }
  }
  return true;
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
  if (auto f = readFirst<FTeid>(m, 0)) {
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
                   uint32_t sequence, uint8_t cause, uint8_t offending_type,
                   uint8_t offending_instance) noexcept {
  std::array<uint8_t, 64> buffer;
  Builder b(buffer);
  b.begin(static_cast<MessageType>(response_type), teid, sequence);
  CauseIe ie;
  ie.value = cause;
  if (offending_type != 0) ie.offending_ie = CauseIe::OffendingIe{offending_type, offending_instance};
  b.add(ie);
  if (auto out = b.finish()) {
    counters_.rejections_sent.add();
    send(socket, to, *out);
  }
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

void Proxy::tick(uint64_t now_ns) noexcept {
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
    counters_.transactions_expired.add();
    if (t.message_type != static_cast<uint8_t>(MessageType::kCreateSessionRequest)) return;
    // The PGW never answered the creation: the SGW has given up too (its
    // N3 retransmissions fit in the same time), so the session goes.
    SessionShm* s = sessions_.find(t.session_teid);
    if (s != nullptr && s->state == static_cast<uint8_t>(SessionState::kCreating)) {
      sessions_.release(*s);
      counters_.sessions_expired.add();
      counters_.sessions_active.set(sessions_.active());
    }
  });
}

}  // namespace gtpcp::worker
