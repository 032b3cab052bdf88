#include "procedures_v1.h"

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

namespace gtpcp::worker {

namespace v1 = gtp::v1;
using v1::IeType;
using v1::MessageType;

namespace {

constexpr uint8_t kActive = static_cast<uint8_t>(SessionState::kActive);

constexpr uint8_t type(MessageType t) { return static_cast<uint8_t>(t); }

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

// A request whose mandatory IEs are missing or wrong: its cause, counted
// when a GSN Address is at fault.
uint8_t refusal(const gtp::Error& error, WorkerCounters& counters) {
  if (error.ie_type == static_cast<uint8_t>(IeType::kGsnAddress)) counters.v1_gsn_address_invalid.add();
  return gtp::v1Cause(error.code);
}

}  // namespace

// -- what the shared steps ask of GTPv1 (versions.h)

gtp::Result<std::span<uint8_t>> V1Traits::causeOnly(std::span<uint8_t> buffer, uint8_t response_type, uint32_t teid,
                                                    uint32_t sequence, uint8_t cause, Offending) noexcept {
  v1::Builder b(buffer);
  b.begin(static_cast<MessageType>(response_type), teid, static_cast<uint16_t>(sequence));
  b.add(v1::CauseIe{cause});
  return b.finish();
}

std::span<uint8_t> V1Traits::controlAddressIn(Engine& engine, std::span<uint8_t> request, uint8_t family) noexcept {
  v1::Message m;
  if (!m.decode(request)) return request;
  const v1::Ie* ie = m.find(IeType::kGsnAddress, 0);
  const net::Address own = engine.proxyAddress(Leg::kGateway, family);
  if (ie == nullptr || !own.valid()) return request;
  // Written into the rewrite buffer: header and IEs up to the address, the
  // address in `family`, the rest.
  const std::size_t before = ie->offset;
  const std::size_t old_size = ie->header_size + ie->length;
  const std::size_t value_size = family == AF_INET ? 4 : 16;
  const std::size_t size = request.size() - old_size + 3 + value_size;
  const std::span<uint8_t> buffer = engine.rewriteBuffer();
  if (size > buffer.size()) return request;
  uint8_t* out = buffer.data();
  std::memcpy(out, request.data(), before);
  out[before] = static_cast<uint8_t>(IeType::kGsnAddress);
  gtp::store16(out + before + 1, static_cast<uint16_t>(value_size));
  std::memcpy(out + before + 3, family == AF_INET ? own.ipv4().octets.data() : own.ipv6().octets.data(), value_size);
  std::memcpy(out + before + 3 + value_size, request.data() + before + old_size, request.size() - before - old_size);
  gtp::store16(out + 2, static_cast<uint16_t>(size - v1::kHeaderSizeMandatory));
  engine.counters().messages_rewritten.add();
  return buffer.first(size);
}

gtp::Result<std::span<uint8_t>> V1Traits::restartNotification(std::span<uint8_t> buffer, const SessionShm& s,
                                                              uint32_t sequence) noexcept {
  // TS 29.060 §7.3.5: Teardown Ind 1 with the primary's NSAPI deletes every
  // context of the PDP address; the SGSN has the MS activate them again,
  // through a GGSN that is up.
  v1::Builder b(buffer);
  b.begin(MessageType::kDeletePdpContextRequest, s.sgw.teid, static_cast<uint16_t>(sequence));
  b.add(v1::CauseIe{kV1CauseReactivationRequested});
  b.add(v1::TeardownInd{true});
  b.add(v1::Nsapi{s.default_ebi});
  return b.finish();
}

gtp::Result<std::span<uint8_t>> V1Traits::orphanDeletion(std::span<uint8_t> buffer, const Message& /*answer*/,
                                                         const SessionShm* s, uint32_t gateway_teid,
                                                         uint32_t sequence) noexcept {
  v1::Builder b(buffer);
  b.begin(MessageType::kDeletePdpContextRequest, gateway_teid, static_cast<uint16_t>(sequence));
  b.add(v1::TeardownInd{true});
  b.add(v1::Nsapi{s != nullptr ? s->default_ebi : kV1FirstNsapi});
  return b.finish();
}

// -- the datagram

void V1Procedures::handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  edit_count_ = 0;
  counters_.v1_datagrams_received.add();
  if (auto decoded = message_.decode(bytes); !decoded) {
    decodeFailed(arrival, bytes, decoded.error());
    return;
  }
  const std::span<uint8_t> message_bytes = bytes.first(message_.bytes().size());
  Context c{arrival, message_bytes, message_, message_bytes};
  received(c);
  if (!V1Traits::numbered(message_.header())) {
    counters_.messages_dropped.add();
    return;
  }
  dispatch(c);
}

void V1Procedures::otherMessage(Context& c) noexcept {
  // Error Indication and the other messages without a reply belong to the
  // user plane (TS 29.281), whose TEIDs the proxy does not map.
  if (c.message.messageType() == MessageType::kErrorIndication) counters_.v1_error_indications.add();
  counters_.messages_dropped.add();
}

// -- creation

bool V1Procedures::admit(Context& c) noexcept {
  const v1::Message& m = c.message;
  if (auto ok = v1::checkMandatory(m, v1::Sender::kSgsn); !ok) {
    reject(c, refusal(ok.error(), counters_));
    return false;
  }
  // §7.3.1: mandatory in a primary context's request (only a secondary's,
  // sent with the GGSN's TEID-C in the header, may leave it out).
  auto teid_c = v1::readNth<v1::TeidControlPlane>(m);
  if (!teid_c || teid_c->value == 0) {
    reject(c, teid_c ? kV1CauseMandatoryIeIncorrect : gtp::v1Cause(gtp::Errc::kMandatoryIeMissing));
    return false;
  }
  return true;
}

std::optional<config::Selection> V1Procedures::place(Context& c, const std::optional<gtp::Digits>& imsi,
                                                     uint16_t partition) noexcept {
  const v1::Message& m = c.message;
  if (imsi && notifications_open_ != 0) {
    // The MS answering a PDU Notification activates its own context: the
    // notification's session has done its work.
    const std::string_view digits = imsi->view();
    if (SessionShm* n = engine_.sessions().findInPartition(partition, [&](const SessionShm& s) {
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
  if (imsi) key.imsi = imsi->view();
  if (rai) key.serving_network = rai->plmn;
  if (rat) key.rat_type = rat->value;
  if (sgsn) {
    key.sgw_ipv4 = sgsn->ipv4;
    key.sgw_ipv6 = sgsn->ipv6;
  }
  return engine_.routing().select(key);
}

void V1Procedures::recordCreation(const Context& c, SessionShm& s) noexcept { s.default_ebi = nsapiOf(c.message); }

void V1Procedures::established(const Context& c, const TransactionShm& t, SessionShm& s) noexcept {
  s.ebis = static_cast<uint16_t>(s.ebis | nsapiBit(t.nsapi));
  engine_.persist(s, c.message, Leg::kGateway, t.nsapi);
}

// -- requests of a session

void V1Procedures::relayRequest(Context& c, SessionShm& session, Leg from) noexcept {
  // Not a template with GTPv2's: the mandatory IEs of an SGSN's update, the
  // NSAPI and Teardown a request names, and no commands make a different
  // sequence of steps, around the same few engine calls.
  if (session.gtp_version != v1::kVersion) {
    counters_.messages_dropped.add();  // a GTPv1 message for an S5/S8 session's TEID
    return;
  }
  const Leg to = other(from);
  if (to == Leg::kGateway && session.state != kActive) {
    counters_.messages_dropped.add();  // the GGSN has not told its TEID-C yet
    return;
  }
  const v1::Message& m = c.message;
  const uint8_t message_type = m.header().message_type;
  const Endpoint& peer = Engine::peer(session, to);
  const uint8_t socket = Engine::socketToward(session, to);
  if (message_type == type(MessageType::kCreatePdpContextRequest) ||
      (message_type == type(MessageType::kUpdatePdpContextRequest) && from == Leg::kAccess)) {
    // A secondary context, or an SGSN-initiated update: what a new SGSN
    // (inter-SGSN routing area update) sends must be whole.
    if (auto ok = v1::checkMandatory(m, from == Leg::kAccess ? v1::Sender::kSgsn : v1::Sender::kGgsn); !ok) {
      reject(c, refusal(ok.error(), counters_));
      return;
    }
  }
  if (const uint8_t cause = translate(c, session, from, engine_.socketFamily(socket)); cause != 0) {
    reject(c, cause);
    return;
  }
  if (from == Leg::kGateway) restoreApn(c, session);
  const Numbered n = V1Traits::next(engine_, to);
  const net::Address destination = peer.address.withPort(kGtpcPort);
  TransactionShm* t = open(c, m.header(), n.key, session, to, socket, destination);
  if (t == nullptr) {
    reject(c, V1Traits::kNoResources);
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
  engine_.persist(session, m, from, t->nsapi);
  v1::patchTeid(c.bytes, peer.teid);
  v1::patchSequenceNumber(c.bytes, static_cast<uint16_t>(n.sequence));
  engine_.send(to, socket, destination, outgoing(c, true));
}

void V1Procedures::relayToSubscriber(Context& c) noexcept {
  // TS 29.060 §7.3.8, network-requested PDP context activation: the GGSN
  // names the subscriber by IMSI with header TEID 0. The proxy knows the
  // subscriber's SGSN only from a context the subscriber already has; the
  // notification then gets a session of its own (state creating: the MS
  // answers with a Create PDP Context Request of its own, which the routing
  // document places), so that the SGSN's PDU Notification Reject Request
  // reaches the GGSN with its TEID-C.
  const v1::Message& m = c.message;
  if (auto ok = v1::checkMandatory(m, v1::Sender::kGgsn); !ok) {
    reject(c, gtp::v1Cause(ok.error().code));
    return;
  }
  auto imsi = v1::readNth<v1::Imsi>(m);
  const std::string_view digits = imsi->digits.view();
  const uint16_t partition = group::partitionOfCreatePdpContext(m);
  SessionTable& sessions = engine_.sessions();
  const SessionShm* known = sessions.findInPartition(partition, [&](const SessionShm& s) {
    return s.gtp_version == v1::kVersion && s.state == kActive && !isNotification(s) &&
           std::string_view(s.imsi, s.imsi_length) == digits;
  });
  if (known == nullptr) {
    counters_.context_not_found.add();
    reject(c, kV1CauseImsiImeiNotKnown);
    return;
  }
  SessionShm* s = allocate(c, partition, known->gateway);
  if (s == nullptr) return;
  s->pool = known->pool;
  s->rule = known->rule;
  s->gateway_address = c.arrival.peer;
  s->access_socket = known->access_socket;
  s->gateway_socket = c.arrival.socket;
  s->sgw.address = known->sgw.address;
  s->default_ebi = kNotificationNsapi;
  s->imsi_length = known->imsi_length;
  std::memcpy(s->imsi, known->imsi, sizeof s->imsi);
  s->created_ns = s->updated_ns = c.arrival.wall_ns;
  if (const uint8_t cause = translate(c, *s, Leg::kGateway, engine_.socketFamily(s->access_socket));
      cause != 0 || s->pgw.teid == 0) {
    sessions.release(*s);
    reject(c, cause != 0 ? cause : V1Traits::kNoResources);
    return;
  }
  // Reachable both ways from now on: the SGSN's answer and its PDU
  // Notification Reject Request name the proxy's TEID-C, the GGSN's is known.
  // It holds no NSAPI: it ends with the SGSN's refusal, or when the MS
  // activates a context of its own (place()).
  s->state = kActive;
  ++notifications_open_;
  const Numbered n = V1Traits::next(engine_, Leg::kAccess);
  const net::Address destination = s->sgw.address.withPort(kGtpcPort);
  TransactionShm* t = open(c, m.header(), n.key, *s, Leg::kAccess, s->access_socket, destination);
  if (t == nullptr) {
    sessions.release(*s);
    reject(c, V1Traits::kNoResources);
    return;
  }
  counters_.v1_pdu_notifications.add();
  engine_.persist(*s, m, Leg::kGateway, 0);
  v1::patchSequenceNumber(c.bytes, static_cast<uint16_t>(n.sequence));  // TEID 0 stays: the SGSN has no context for it
  engine_.send(Leg::kAccess, s->access_socket, destination, outgoing(c, true));
}

void V1Procedures::endNotification(SessionShm& session) noexcept {
  if (notifications_open_ != 0) --notifications_open_;
  engine_.endSession(session);
  engine_.countSessions();
}

// -- answers

void V1Procedures::answered(const Context& c, const TransactionShm& t, SessionShm& session, Leg from) noexcept {
  const v1::Message& m = c.message;
  auto cause = v1::readNth<v1::CauseIe>(m);
  const bool ok = cause && V1Traits::accepted(cause->value);
  const uint16_t bit = nsapiBit(t.nsapi);
  if (t.message_type == type(MessageType::kDeletePdpContextRequest) &&
      (ok || (cause && cause->value == kV1CauseNonExistent))) {
    // Non-existent: the peer no longer has it either.
    session.ebis = static_cast<uint16_t>(session.ebis & ~bit);
    if ((t.flags & kDeletesPdnConnection) || session.ebis == 0 || session.state != kActive) {
      deleted(session);
      return;
    }
    session.updated_ns = c.arrival.wall_ns;
    engine_.persist(session);
    engine_.removeBearers(session, bit);
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
  engine_.persist(session, m, from, t.nsapi);
}

// -- translation

uint8_t V1Procedures::translate(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept {
  const v1::Message& m = c.message;
  const Leg to = other(from);
  Endpoint& peer = Engine::peer(session, from);
  const uint8_t message_type = m.header().message_type;
  std::size_t position = 0;
  // Malformed GSN Addresses are refused before anything is changed: some
  // GGSNs crash on one of length 0 (osmo-ggsn 1.9.0), so none goes on.
  for (const v1::Ie& ie : m.ies()) {
    if (ie.ieType() != IeType::kGsnAddress) continue;
    if (ie.length != 4 && ie.length != 16) {
      counters_.v1_gsn_address_invalid.add();
      return position < 2 ? kV1CauseMandatoryIeIncorrect : kV1CauseOptionalIeIncorrect;
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
      v1::patchTeidIe(c.bytes, ie, engine_.sessions().teid(session, to));
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
    const net::Address own = engine_.proxyAddress(to, address->family);
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
    Edit edit;
    edit.ie = static_cast<uint16_t>(i);
    if (p == 0) {
      const net::Address mine = engine_.proxyAddress(to, out_family);
      if (!mine.valid()) return V1Traits::kNoResources;
      edit.kind = Edit::Kind::kReplace;
      if (out_family == AF_INET) {
        edit.length = 4;
        std::memcpy(edit.value.data(), mine.ipv4().octets.data(), 4);
      } else {
        edit.length = 16;
        std::memcpy(edit.value.data(), mine.ipv6().octets.data(), 16);
      }
    } else {
      edit.kind = Edit::Kind::kRemove;
    }
    if (!addEdit(edit)) return V1Traits::kNoResources;
  }
  return 0;
}

bool V1Procedures::addEdit(const Edit& edit) noexcept {
  if (edit_count_ == kMaxEdits) return false;
  edits_[edit_count_++] = edit;
  return true;
}

uint8_t V1Procedures::applyOverrides(Context& c, const config::Overrides& o) noexcept {
  const v1::Message& m = c.message;
  counters_.overrides_applied.add();
  auto indexOf = [&m](const v1::Ie* ie) { return static_cast<uint16_t>(ie - m.ies().data()); };
  if (!o.apn.empty()) {
    v1::Apn apn;
    for (char ch : o.apn) apn.text.push(ch);
    Edit edit;
    edit.length = static_cast<uint16_t>(std::min(apn.encodedSize(), edit.value.size()));
    if (apn.encodedSize() <= edit.value.size()) {
      apn.encode(edit.value.data());
      if (const v1::Ie* ie = m.find(IeType::kApn)) {
        edit.kind = Edit::Kind::kReplace;
        edit.ie = indexOf(ie);
      } else {
        edit.kind = Edit::Kind::kInsert;
        edit.type = static_cast<uint8_t>(IeType::kApn);
      }
      addEdit(edit);
    }
  }
  if (o.charging_characteristics) {
    const v1::ChargingCharacteristics cc{*o.charging_characteristics};
    if (const v1::Ie* ie = m.find(IeType::kChargingCharacteristics)) {
      cc.encode(c.bytes.data() + ie->valueOffset());  // TV, fixed length: in place
    } else {
      Edit edit;
      edit.kind = Edit::Kind::kInsert;
      edit.type = static_cast<uint8_t>(IeType::kChargingCharacteristics);
      edit.length = 2;
      cc.encode(edit.value.data());
      addEdit(edit);
    }
  }
  if (o.selection_mode) {
    if (const v1::Ie* ie = m.find(IeType::kSelectionMode)) {
      uint8_t& octet = c.bytes[ie->valueOffset()];
      octet = static_cast<uint8_t>((octet & 0xfc) | (*o.selection_mode & 0x03));  // spare bits kept
    } else {
      Edit edit;
      edit.kind = Edit::Kind::kInsert;
      edit.type = static_cast<uint8_t>(IeType::kSelectionMode);
      edit.length = 1;
      v1::SelectionMode{*o.selection_mode}.encode(edit.value.data());
      addEdit(edit);
    }
  }
  if (o.qos_max_uplink_kbps || o.qos_max_downlink_kbps) {
    if (const v1::Ie* ie = m.find(IeType::kQosProfile)) {
      if (v1::capMaxBitrate(c.bytes.subspan(ie->valueOffset(), ie->length), o.qos_max_uplink_kbps,
                            o.qos_max_downlink_kbps))
        counters_.v1_qos_capped.add();
    }
  }
  return 0;
}

void V1Procedures::replaceApn(Context& c, std::span<const uint8_t> apn) noexcept {
  const v1::Ie* ie = c.message.find(IeType::kApn);
  if (ie == nullptr) return;
  Edit edit;
  edit.kind = Edit::Kind::kReplace;
  edit.ie = static_cast<uint16_t>(ie - c.message.ies().data());
  edit.length = static_cast<uint16_t>(apn.size());
  std::memcpy(edit.value.data(), apn.data(), std::min(apn.size(), edit.value.size()));
  addEdit(edit);
}

std::span<const uint8_t> V1Procedures::outgoing(Context& c, bool /*with_piggybacked*/) noexcept {
  // The peers see one node, the proxy: its Recovery, never another peer's.
  const uint8_t recovery = gateways_.groupRecovery();
  for (const v1::Ie& ie : c.message.ies()) {
    if (ie.ieType() != IeType::kRecovery || ie.length < 1) continue;
    uint8_t& octet = c.bytes[ie.valueOffset()];
    if (octet != recovery) {
      octet = recovery;
      counters_.recovery_rewritten.add();
    }
  }
  if (edit_count_ == 0) return c.bytes;
  // Written anew: the header as patched, then every IE in order with the
  // edits applied; the header's length follows.
  const v1::Message& m = c.message;
  const std::size_t header_size = m.header().size;
  std::size_t pos = header_size;
  const std::span<uint8_t> buffer = engine_.rewriteBuffer();
  uint8_t* out = buffer.data();
  const std::size_t capacity = buffer.size();
  std::memcpy(out, c.bytes.data(), header_size);
  auto writeTlv = [&](uint8_t ie_type, const uint8_t* value, uint16_t length) {
    const bool tv = ie_type < kV1FirstTlvIe;
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
  std::array<bool, kMaxEdits> inserted{};
  bool fits = true;
  auto insertBefore = [&](uint8_t next_type) {
    for (std::size_t e = 0; e < edit_count_; ++e) {
      const Edit& edit = edits_[e];
      if (edit.kind != Edit::Kind::kInsert || inserted[e] || edit.type >= next_type) continue;
      inserted[e] = true;
      fits &= writeTlv(edit.type, edit.value.data(), edit.length);
    }
  };
  for (std::size_t i = 0; i < m.ieCount() && fits; ++i) {
    const v1::Ie& ie = m.ie(i);
    insertBefore(ie.type);
    const Edit* edit = nullptr;
    for (std::size_t e = 0; e < edit_count_; ++e) {
      if (edits_[e].kind != Edit::Kind::kInsert && edits_[e].ie == i) edit = &edits_[e];
    }
    if (edit != nullptr && edit->kind == Edit::Kind::kRemove) continue;
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
  return buffer.first(pos);
}

}  // namespace gtpcp::worker
