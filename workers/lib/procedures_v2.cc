#include "procedures_v2.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/group/session_identity.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/patch.h"
#include "common/gtp/v2/validate.h"
#include "connection_set.h"
#include "persist.h"
#include "restore.h"

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

constexpr uint8_t kActive = static_cast<uint8_t>(SessionState::kActive);
constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kNoResources = V2Traits::kNoResources;

constexpr uint8_t type(MessageType t) { return static_cast<uint8_t>(t); }

// The SGW-initiated commands of TS 29.274 §7.2.15-7.2.17: the PGW answers
// one with a request of its own that carries the command's sequence number.
bool isCommand(uint8_t message_type) {
  return message_type == type(MessageType::kModifyBearerCommand) ||
         message_type == type(MessageType::kDeleteBearerCommand) ||
         message_type == type(MessageType::kBearerResourceCommand);
}

// The first message without what was piggybacked on it (and without the P
// flag that announced it).
std::span<uint8_t> alone(V2Procedures::Context& c) {
  c.message_bytes[0] &= static_cast<uint8_t>(~kFlagPiggyback);
  return c.message_bytes;
}

// The EBI of the first Bearer Context of `m`, or `otherwise`.
uint8_t firstBearer(const Message& m, uint8_t otherwise) {
  if (const Ie* bc = m.find(IeType::kBearerContext, 0)) {
    if (const Ie* ebi = m.findChild(*bc, IeType::kEbi, 0)) {
      if (auto e = read<Ebi>(m, *ebi)) return e->value;
    }
  }
  return otherwise;
}

}  // namespace

// -- what the shared steps ask of GTPv2 (versions.h)

gtp::Result<std::span<uint8_t>> V2Traits::causeOnly(std::span<uint8_t> buffer, uint8_t response_type, uint32_t teid,
                                                    uint32_t sequence, uint8_t cause, Offending offending) noexcept {
  Builder b(buffer);
  b.begin(static_cast<MessageType>(response_type), teid, sequence);
  CauseIe ie;
  ie.value = cause;
  if (offending.type != 0) ie.offending_ie = CauseIe::OffendingIe{offending.type, offending.instance};
  b.add(ie);
  return b.finish();
}

std::span<uint8_t> V2Traits::controlAddressIn(Engine& engine, std::span<uint8_t> request, uint8_t family) noexcept {
  Message m;
  if (!m.decode(request)) return request;
  const Ie* ie = m.find(IeType::kFTeid, 0);
  if (ie == nullptr) return request;
  auto f = read<FTeid>(m, *ie);
  const net::Address own = engine.proxyAddress(Leg::kGateway, family);
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
  const std::span<uint8_t> out = engine.rewriteBuffer();
  auto written = rewriter.write(out);
  if (!written) {
    engine.counters().rewrite_failures.add();
    return request;
  }
  engine.counters().messages_rewritten.add();
  return out.first(*written);
}

gtp::Result<std::span<uint8_t>> V2Traits::restartNotification(std::span<uint8_t> buffer, const SessionShm& s,
                                                              uint32_t sequence) noexcept {
  // TS 29.274 §7.2.9.2: the LBI deletes the whole PDN connection; the SGW
  // and the MME take the UE through a new attach to a gateway that is up.
  Builder b(buffer);
  b.begin(MessageType::kDeleteBearerRequest, s.sgw.teid, sequence);
  b.add(Ebi{s.default_ebi}, 0);  // Linked EPS Bearer ID
  CauseIe cause;
  cause.value = kV2CauseReactivationRequested;
  b.add(cause);
  return b.finish();
}

gtp::Result<std::span<uint8_t>> V2Traits::orphanDeletion(std::span<uint8_t> buffer, const Message& answer,
                                                         const SessionShm* s, uint32_t gateway_teid,
                                                         uint32_t sequence) noexcept {
  const uint8_t ebi = firstBearer(answer, s != nullptr ? s->default_ebi : 0);
  Builder b(buffer);
  b.begin(MessageType::kDeleteSessionRequest, gateway_teid, sequence);
  if (ebi != 0) b.add(Ebi{ebi}, 0);  // Linked EPS Bearer ID
  return b.finish();
}

// -- the datagram

void V2Procedures::handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  rewriter_.reset();
  if (auto decoded = datagram_.decode(bytes); !decoded) {
    decodeFailed(arrival, bytes, decoded.error());
    return;
  }
  const Message& m = datagram_.message;
  Context c{arrival, bytes, m, bytes.first(m.bytes().size())};
  received(c);
  dispatch(c);
}

void V2Procedures::otherMessage(Context& c) noexcept {
  if (messageTypeInfo(c.message.header().message_type).role == MessageRole::kOther) {
    relayOneWay(c);
  } else {
    counters_.messages_dropped.add();
  }
}

bool V2Procedures::nodeRequest(Context& c) noexcept {
  // Names sessions by FQ-CSID, whatever its header says.
  if (c.message.messageType() != MessageType::kDeletePdnConnectionSetRequest) return false;
  deletePdnConnectionSet(c);
  return true;
}

// -- creation

bool V2Procedures::admit(Context& c) noexcept {
  if (auto ok = checkMandatory(c.message); !ok) {
    reject(c, gtp::v2Cause(ok.error().code), Offending{ok.error().ie_type, ok.error().ie_instance});
    return false;
  }
  return true;
}

std::optional<config::Selection> V2Procedures::place(Context& c, const std::optional<gtp::Digits>& imsi,
                                                     uint16_t /*partition*/) noexcept {
  const Message& m = c.message;
  auto sender = readFirst<FTeid>(m, 0);  // checkMandatory() proved it readable
  auto apn = readFirst<Apn>(m);
  auto rat = readFirst<RatType>(m);
  auto serving = readFirst<ServingNetwork>(m);
  config::SessionKey key;
  key.apn = apn ? apn->text.view() : std::string_view{};
  if (imsi) key.imsi = imsi->view();
  if (serving) key.serving_network = serving->plmn;
  if (rat) key.rat_type = rat->value;
  key.sgw_ipv4 = sender->ipv4;
  key.sgw_ipv6 = sender->ipv6;
  return engine_.routing().select(key);
}

void V2Procedures::recordCreation(const Context& c, SessionShm& s) noexcept {
  s.default_ebi = firstBearer(c.message, 0);
  noteCsids(s, c.message);
}

void V2Procedures::established(const Context& c, const TransactionShm& t, SessionShm& s) noexcept {
  trackBearers(t.message_type, s, c.message);
  noteCsids(s, c.message);
  engine_.persist(s, c.message, Leg::kGateway);
}

// -- requests of a session

void V2Procedures::relayRequest(Context& c, SessionShm& session, Leg from) noexcept {
  // Not a template with GTPv1's: commands, the Delete Bearer that ends the
  // PDN connection, CSIDs and a TEID-0 request make a different sequence of
  // steps, around the same few engine calls.
  const Leg to = other(from);
  if (to == Leg::kGateway && session.state != kActive) {
    // The PGW has not told its TEID yet (its Create Session Response is still
    // on the way): nothing can be addressed to it.
    counters_.messages_dropped.add();
    return;
  }
  const Endpoint& peer = Engine::peer(session, to);
  const uint8_t socket = Engine::socketToward(session, to);
  if (translate(c, session, from, engine_.socketFamily(socket)) != 0) {
    reject(c, kNoResources);
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
  Numbered n;
  if (command != nullptr) {
    n.sequence = command->requester_sequence;
    n.key = commandNumbered(engine_.sessions().teid(session, Leg::kAccess), n.sequence);
  } else {
    n = V2Traits::next(engine_, to, h.sequence_number & kCommandBit);
  }
  const net::Address destination = peer.address.withPort(kGtpcPort);
  TransactionShm* t = open(c, h, n.key, session, to, socket, destination);
  if (t == nullptr) {
    reject(c, kNoResources);
    return;
  }
  if (c.message.messageType() == MessageType::kDeleteBearerRequest) {
    // The Linked EPS Bearer ID names the default bearer: the whole PDN
    // connection goes (TS 29.274 §7.2.9.2).
    if (auto lbi = readFirst<Ebi>(c.message, 0); lbi && lbi->value == session.default_ebi)
      t->flags |= kDeletesPdnConnection;
  }
  session.updated_ns = c.arrival.wall_ns;
  engine_.persist(session, c.message, from);
  // A request sent with TEID 0 (a PGW Downlink Triggering Notification)
  // goes on with TEID 0 (TS 29.274 §5.5.2).
  if (h.teid != 0) patchTeid(c.message_bytes, peer.teid);
  patchSequenceNumber(c.message_bytes, n.sequence);
  const auto out = outgoing(c, true);
  engine_.send(to, socket, destination, out);
  // The command is answered by this request: a retransmitted command gets
  // it again, as it would from the PGW.
  if (command != nullptr) {
    engine_.transactions().answered(*command, out);
    counters_.transactions_completed.add();
  }
}

void V2Procedures::relayToSubscriber(Context& c) noexcept {
  // TS 29.274 §7.9.7: the PGW names the subscriber by IMSI (header TEID 0);
  // the notification goes to the SGW of that subscriber's session on this
  // PGW, with the proxy's F-TEID in place of the PGW's.
  const Message& m = c.message;
  if (!admit(c)) return;
  auto imsi = readFirst<Imsi>(m);
  if (!imsi) {
    reject(c, static_cast<uint8_t>(Cause::kMandatoryIeMissing), Offending{static_cast<uint8_t>(IeType::kImsi)});
    return;
  }
  const std::string_view digits = imsi->digits.view();
  const uint16_t partition = group::partitionOfCreateSession(m);
  SessionShm* session = engine_.sessions().findInPartition(partition, [&](const SessionShm& s) {
    return s.state == kActive && std::string_view(s.imsi, s.imsi_length) == digits &&
           (s.pgw.address.sameHost(c.arrival.peer) || s.gateway_address.sameHost(c.arrival.peer));
  });
  if (session == nullptr) {
    // Perhaps one held only in Redis: the subscriber's index says.
    Restorer* restorer = engine_.restorer();
    if (restorer != nullptr &&
        restorer->holdForSubscriber(c.arrival, c.bytes, partition, digits, m.header().sequence_number))
      return;
    counters_.context_not_found.add();
    reject(c, V2Traits::kContextNotFound);
    return;
  }
  relayRequest(c, *session, Leg::kGateway);
}

void V2Procedures::relayOneWay(Context& c) noexcept {
  // Trace Session Activation and Deactivation (TS 29.274 §7.12): initial
  // messages with no reply, so no transaction; the peer's TEID and a proxy
  // sequence number, as for a request.
  const Header& h = c.message.header();
  const uint32_t teid = V2Traits::teid(h);
  SessionShm* session = teid != 0 ? engine_.sessions().find(teid) : nullptr;
  Restorer* restorer = engine_.restorer();
  if (session == nullptr && teid != 0 && restorer != nullptr &&
      restorer->hold(c.arrival, c.bytes, teid, h.sequence_number)) {
    return;
  }
  if (session == nullptr || session->state != kActive) {
    counters_.messages_dropped.add();
    return;
  }
  const Leg to = other(splitTeid(teid).leg);
  const uint8_t socket = Engine::socketToward(*session, to);
  const Endpoint& peer = Engine::peer(*session, to);
  if (translate(c, *session, other(to), engine_.socketFamily(socket)) != 0) {
    counters_.messages_dropped.add();
    return;
  }
  patchTeid(c.message_bytes, peer.teid);
  patchSequenceNumber(c.message_bytes, V2Traits::next(engine_, to).sequence);
  counters_.one_way_relayed.add();
  engine_.send(to, socket, peer.address.withPort(kGtpcPort), outgoing(c, true));
}

TransactionShm* V2Procedures::triggeringCommand(uint32_t sequence, const SessionShm& session) noexcept {
  TransactionShm* t = engine_.transactions().findByResponse(proxyNumbered(sequence));
  if (t != nullptr && t->state == kPending && isCommand(t->message_type) &&
      t->toward == static_cast<uint8_t>(Leg::kGateway) &&
      t->session_teid == engine_.sessions().teid(session, Leg::kAccess)) {
    return t;
  }
  // A PGW-initiated request that happens to have the top bit set, or one for
  // a command already expired: it goes on with a proxy number of its own.
  counters_.triggered_unmatched.add();
  return nullptr;
}

// -- answers

void V2Procedures::answered(const Context& c, const TransactionShm& t, SessionShm& session, Leg from) noexcept {
  auto cause = readFirst<CauseIe>(c.message);
  const bool accepted = cause && V2Traits::accepted(cause->value);
  // Context Not Found: the peer no longer has it either.
  const bool ended = cause && (accepted || cause->value == V2Traits::kContextNotFound);
  const bool deletes_session = t.message_type == type(MessageType::kDeleteSessionRequest) ||
                               (t.message_type == type(MessageType::kDeleteBearerRequest) &&
                                (t.flags & kDeletesPdnConnection));
  if (deletes_session && ended) {
    deleted(session);
    return;
  }
  session.updated_ns = c.arrival.wall_ns;
  if (!accepted) return;
  const uint16_t before = session.ebis;
  trackBearers(t.message_type, session, c.message);
  if (from == Leg::kGateway) noteCsids(session, c.message);
  // An answer that changes nothing the record keeps (a Modify Bearer
  // Response with a Cause alone) is not a change: the request was written.
  if (session.ebis != before || ChangeWriter::carriesAttributes(c.message, from))
    engine_.persist(session, c.message, from);
  if (const uint16_t removed = before & ~session.ebis; removed != 0) engine_.removeBearers(session, removed);
}

void V2Procedures::trackBearers(uint8_t request_type, SessionShm& s, const Message& response) noexcept {
  const auto request = static_cast<MessageType>(request_type);
  const bool adds = request == MessageType::kCreateSessionRequest || request == MessageType::kCreateBearerRequest;
  const bool removes = request == MessageType::kDeleteBearerRequest;
  if (!adds && !removes) return;
  // Each Bearer Context of the answer says, with its own Cause, whether its
  // bearer was created (or deleted); none means accepted (TS 29.274 8.28).
  for (const Ie& bc : response.topLevel()) {
    if (bc.ieType() != IeType::kBearerContext) continue;
    const Ie* ebi_ie = response.findChild(bc, IeType::kEbi, 0);
    if (ebi_ie == nullptr) continue;
    auto ebi = read<Ebi>(response, *ebi_ie);
    if (!ebi || ebi->value < kFirstEbi || ebi->value > kLastEbi) continue;
    if (const Ie* cause_ie = response.findChild(bc, IeType::kCause, 0)) {
      auto cause = read<CauseIe>(response, *cause_ie);
      if (!cause || !V2Traits::accepted(cause->value)) continue;
    }
    const auto bit = static_cast<uint16_t>(1u << ebi->value);
    s.ebis = adds ? static_cast<uint16_t>(s.ebis | bit) : static_cast<uint16_t>(s.ebis & ~bit);
  }
}

bool V2Procedures::translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept {
  if (!datagram_.has_piggybacked) return true;
  const Message& p = datagram_.piggybacked;
  // TS 29.274 §5.5.1: only an initial message rides on a triggered one (a
  // Create Bearer Request on a Create Session Response, ...).
  if (messageTypeInfo(p.header().message_type).role != MessageRole::kRequest) return false;
  Context pc{c.arrival, c.bytes, p, c.bytes.subspan(c.message.bytes().size(), p.bytes().size())};
  pc.leg = from;
  const Leg to = other(from);
  const uint8_t socket = Engine::socketToward(session, to);
  if (translate(pc, session, from, engine_.socketFamily(socket)) != 0) return false;
  const Numbered n = V2Traits::next(engine_, to, p.header().sequence_number & kCommandBit);
  const Endpoint& peer = Engine::peer(session, to);
  TransactionShm* t = open(c, p.header(), n.key, session, to, socket, peer.address.withPort(kGtpcPort));
  if (t == nullptr) return false;
  patchTeid(pc.message_bytes, peer.teid);
  patchSequenceNumber(pc.message_bytes, n.sequence);
  return true;
}

// -- translation

uint8_t V2Procedures::translate(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept {
  const Message& m = c.message;
  const Leg to = other(from);
  const uint32_t own_teid = engine_.sessions().teid(session, to);
  const net::Address own_v4 = engine_.proxyAddress(to, AF_INET);
  const net::Address own_v6 = engine_.proxyAddress(to, AF_INET6);
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kFTeid) continue;
    auto f = read<FTeid>(m, ie);
    if (!f) continue;
    const bool control = from == Leg::kAccess ? gtp::v2::isAccessControlInterface(f->interface_type)
                                              : gtp::v2::isGatewayControlInterface(f->interface_type);
    if (!control) continue;
    Endpoint& peer = Engine::peer(session, from);
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
    if (!own.valid() || &m != &datagram_.message) return kNoResources;
    FTeid mine;
    mine.interface_type = f->interface_type;
    mine.teid = own_teid;
    if (out_family == AF_INET) {
      mine.ipv4 = own.ipv4();
    } else {
      mine.ipv6 = own.ipv6();
    }
    if (!rewriter().replace(ie, mine)) return kNoResources;
  }
  return 0;
}

Rewriter& V2Procedures::rewriter() noexcept {
  if (!rewriter_) rewriter_.emplace(datagram_.message);
  return *rewriter_;
}

void V2Procedures::announceRecovery(const Message& m, std::span<uint8_t> bytes) noexcept {
  const uint8_t value = gateways_.groupRecovery();
  for (const Ie& ie : m.topLevel()) {
    if (ie.ieType() != IeType::kRecovery || ie.length < 1) continue;
    uint8_t& octet = bytes[ie.valueOffset()];
    if (octet != value) {
      octet = value;
      counters_.recovery_rewritten.add();
    }
  }
}

std::span<const uint8_t> V2Procedures::outgoing(Context& c, bool with_piggybacked) noexcept {
  // The peers see one node, the proxy: a Recovery IE carries the group's
  // value, never another peer's (TS 23.007: a changed value from one peer
  // address means that node restarted).
  announceRecovery(c.message, c.message_bytes);
  if (with_piggybacked && datagram_.has_piggybacked && &c.message == &datagram_.message) {
    const Message& p = datagram_.piggybacked;
    announceRecovery(p, c.bytes.subspan(c.message.bytes().size(), p.bytes().size()));
  }
  if (!rewriter_ || rewriter_->editCount() == 0) return with_piggybacked ? c.bytes : alone(c);
  const std::span<uint8_t> out = engine_.rewriteBuffer();
  auto written = rewriter_->write(out);
  if (!written) {
    counters_.rewrite_failures.add();
    return with_piggybacked ? c.bytes : alone(c);
  }
  std::size_t size = *written;
  const auto rest = c.bytes.subspan(c.message.bytes().size());
  if (with_piggybacked && !rest.empty() && size + rest.size() <= out.size()) {
    std::memcpy(out.data() + size, rest.data(), rest.size());
    out[0] |= kFlagPiggyback;
    size += rest.size();
  }
  counters_.messages_rewritten.add();
  return out.first(size);
}

uint8_t V2Procedures::applyOverrides(Context& c, const config::Overrides& o) noexcept {
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

uint8_t V2Procedures::restrictPdnType(Context& c, const config::Overrides& o) noexcept {
  const Message& m = c.message;
  const Ie* type_ie = m.find(IeType::kPdnType);
  if (type_ie == nullptr || type_ie->length < 1) return 0;
  auto requested = read<PdnType>(m, *type_ie);
  if (!requested) return 0;
  if ((requested->value == kPdnTypeIpv4 && !o.allow_ipv4) || (requested->value == kPdnTypeIpv6 && !o.allow_ipv6))
    return static_cast<uint8_t>(Cause::kPreferredPdnTypeNotSupported);
  if (requested->value != kPdnTypeIpv4v6) return 0;  // allowed, or Non-IP / Ethernet: not ours to narrow
  const uint8_t narrowed = o.allow_ipv4 ? kPdnTypeIpv4 : kPdnTypeIpv6;
  uint8_t& octet = c.message_bytes[type_ie->valueOffset()];
  octet = static_cast<uint8_t>((octet & 0xf8) | narrowed);  // spare bits kept
  // The PAA asks for the same type; it keeps an address the UE asked for.
  if (const Ie* paa_ie = m.find(IeType::kPaa)) {
    if (auto paa = read<Paa>(m, *paa_ie)) {
      Paa only = *paa;
      only.pdn_type = narrowed;
      if (narrowed == kPdnTypeIpv4) {
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

void V2Procedures::replaceApn(Context& c, std::span<const uint8_t> apn) noexcept {
  if (&c.message != &datagram_.message) return;  // only the first message of a datagram is rewritten
  if (const Ie* ie = c.message.find(IeType::kApn)) rewriter().replace(*ie, apn);
}

// -- PDN connection sets (TS 29.274 §7.9.1, TS 23.007 §16)

void V2Procedures::deletePdnConnectionSet(Context& c) noexcept {
  // The forwarder gives every worker a copy (the sets name sessions of every
  // partition); the worker that the requester's sequence number names
  // answers, the others only delete and relay. Every copy opens a
  // transaction for the requester's number, so a retransmission is answered
  // again from the cache and walked only once.
  const Header& h = c.message.header();
  const ProxySettings& settings = engine_.settings();
  const bool answers = (h.sequence_number & ~kCommandBit) % settings.workers == settings.index;
  CsidSet csids;
  if (!csids.read(c.message)) {
    // Table 7.9.1-1: every FQ-CSID is conditional, but a request with none
    // names nothing to delete.
    if (answers)
      reject(c, static_cast<uint8_t>(Cause::kConditionalIeMissing), Offending{static_cast<uint8_t>(IeType::kFqCsid)});
    return;
  }
  if (!set_deletions_.hasRoom(c.message_bytes.size())) {
    counters_.connection_set_overflow.add();
    if (answers) reject(c, kNoResources);
    return;
  }
  TransactionTable& transactions = engine_.transactions();
  TransactionShm* t = transactions.open(V2Traits::next(engine_, Leg::kAccess).key, c.arrival.peer, h.sequence_number,
                                        c.arrival.now_ns);
  if (t == nullptr) {
    counters_.transactions_full.add();
    if (answers) reject(c, kNoResources);
    return;
  }
  t->message_type = h.message_type;
  t->requester_socket = c.arrival.socket;
  t->toward = static_cast<uint8_t>(other(c.leg));  // its answer goes back to the requester's leg
  counters_.transactions_started.add();
  set_deletions_.start(csids, c.arrival.peer, c.message_bytes);
  counters_.connection_sets_deleted.add();
  if (answers) {
    // Accepted at once: what the proxy holds goes within a few loop turns,
    // and the other leg hears of it from the proxy's own requests.
    answer<V2Traits>(engine_, *t, type(MessageType::kDeletePdnConnectionSetResponse), 0,
                     static_cast<uint8_t>(Cause::kRequestAccepted));
  } else {
    t->flags |= kAnsweredElsewhere;
    transactions.answered(*t, {});
  }
  counters_.transactions_live.set(transactions.live());
}

}  // namespace gtpcp::worker
