#include "tools/peer/sgsn.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "common/gtp/v1/validate.h"

namespace gtpcp::peer {

using gtp::v1::MessageType;

namespace {

constexpr uint16_t bit(uint8_t nsapi) noexcept { return static_cast<uint16_t>(1u << nsapi); }
constexpr uint16_t kSecondaryBits = 0xffc0;  // NSAPIs 6..15

}  // namespace

SgsnEngine::SgsnEngine(SgsnConfig config, Outbox& outbox, SgsnStats& stats,
                       MismatchCounters& mismatches, MalformedCounters& malformed)
    // TS 29.060 §6: 16-bit sequence numbers.
    : AccessCore(config, config.nodes, 0xffff, outbox, stats, mismatches, malformed),
      config_(std::move(config)),
      apns_(apnsOf<gtp::v1::Apn>(config_.apns)) {
  const uint32_t count = config_.ids.count;
  for (uint32_t i = 0; i < count; ++i)
    subs_[i].plan = networkPlan(config_.ids.imsi(i), config_.network_initiated);
  // The GGSN's requests: an update and a deletion per session at most, and
  // room for requests naming none.
  answers_.init(std::clamp<std::size_t>(std::size_t{count} * 2, 1024, std::size_t{1} << 20),
                config_.duplicate_window_ns);
}

std::optional<V1Txn> SgsnEngine::lifecycleStep(uint32_t index) const noexcept {
  const Sub& s = subs_[index];
  if (s.state == State::kIdle) return V1Txn::kCreatePdp;
  if (s.secondaries_created < config_.secondaries) return V1Txn::kCreateSecondary;
  if (s.modifies_done < config_.modifies) return V1Txn::kUpdatePdp;
  // Deleting now would cross the GGSN's own requests (lifecycle: the GGSN
  // deletes those it picked).
  if (s.plan == NetworkPlan::kUpdateAndDelete) return std::nullopt;
  if (s.plan == NetworkPlan::kUpdate && !s.network_updated) return std::nullopt;
  return (s.contexts & kSecondaryBits) != 0 ? V1Txn::kDeleteSecondary : V1Txn::kDeletePdp;
}

void SgsnEngine::startTxn(uint32_t index, V1Txn txn, int64_t now) noexcept {
  Sub& s = subs_[index];
  if (txn == V1Txn::kCreatePdp) {
    // TS 29.060 §7.7.11: Recovery on the first request to a peer.
    Node& n = nodes_[nodeOf(index)];
    s.recovery = !n.recovery_sent;
    n.recovery_sent = true;
    start(index, txn, State::kCreating, now);
    return;
  }
  start(index, txn, State::kBusy, now);
}

uint8_t SgsnEngine::nsapiOf(const Sub& s) const noexcept {
  switch (s.txn) {
    case V1Txn::kCreateSecondary:
      return static_cast<uint8_t>(kPrimaryNsapi + 1 + s.secondaries_created);
    case V1Txn::kDeleteSecondary:  // the highest one up
      return static_cast<uint8_t>(15 - std::countl_zero(static_cast<uint16_t>(s.contexts)));
    default: return kPrimaryNsapi;
  }
}

uint32_t SgsnEngine::userTeid(uint32_t index, uint8_t nsapi) const noexcept {
  return v1UserPlaneTeid(PlaneSide::kSgsn, config_.ids.imsi(index), nsapi,
                         nodes_[nodeOf(index)].addr);
}

bool SgsnEngine::send(uint32_t index) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  return sendBuilt(n, destination(index), [&](std::span<uint8_t> buf) -> gtp::Result<std::size_t> {
    PdpRequestArgs a;
    a.sequence = s.seq;
    a.header_teid = s.ggsn_teid_c;
    a.index = index;
    a.ids = &config_.ids;
    a.sgsn_addr = n.addr;
    a.teid_c = controlTeid(index);
    a.nsapi = nsapiOf(s);
    switch (s.txn) {
      case V1Txn::kCreatePdp:
        a.header_teid = 0;
        a.apn = &apns_[index % apns_.size()];
        if (s.recovery) a.recovery = config_.recovery;
        return buildCreatePdpContextRequest(a, buf);
      case V1Txn::kCreateSecondary:
        a.teid_c = 0;
        a.linked_nsapi = kPrimaryNsapi;
        a.qos = V1Qos::kSecondary;
        return buildCreatePdpContextRequest(a, buf);
      case V1Txn::kUpdatePdp:
        a.qos = updateQos(s.modifies_total);
        a.variant = s.modifies_total;
        return buildUpdatePdpContextRequest(a, buf);
      case V1Txn::kDeleteSecondary:
      case V1Txn::kDeletePdp:
      case V1Txn::kCount: break;
    }
    return buildDeletePdpContextRequest(s.seq, s.ggsn_teid_c, a.nsapi,
                                        s.txn != V1Txn::kDeleteSecondary, buf);
  });
}

void SgsnEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                            int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  if (auto decoded = message_.decode(bytes); !decoded) {
    malformed_.count(decoded.error().code);
    return;
  }
  const auto& h = message_.header();
  switch (message_.messageType()) {
    case MessageType::kEchoRequest:
      answerEcho(nodes_[node], from, [&](std::span<uint8_t> buf) {
        return buildV1EchoResponse(h.sequence_number, config_.recovery, buf);
      });
      return;
    case MessageType::kUpdatePdpContextRequest:
    case MessageType::kDeletePdpContextRequest:
    case MessageType::kInitiatePdpContextActivationRequest:
    case MessageType::kPduNotificationRequest: onNetworkRequest(node, from, now); return;
    case MessageType::kCreatePdpContextResponse:
      onResponse(node, V1Txn::kCreatePdp, now);
      return;
    case MessageType::kUpdatePdpContextResponse: onResponse(node, V1Txn::kUpdatePdp, now); return;
    case MessageType::kDeletePdpContextResponse: onResponse(node, V1Txn::kDeletePdp, now); return;
    case MessageType::kVersionNotSupported: ++stats_.version_not_supported; return;
    case MessageType::kErrorIndication: ++stats_.error_indications; return;
    default: mismatches_.count(Mismatch::kSgsnUnexpectedMessage); return;
  }
}

void SgsnEngine::onResponse(uint32_t node, V1Txn type_txn, int64_t now) noexcept {
  const auto& h = message_.header();
  uint32_t index = 0;
  if (!matchResponse(node, h.sequence_number, true, h.teid, Mismatch::kSgsnUnmatchedResponse,
                     Mismatch::kSgsnSequenceNumber, index))
    return;
  Sub& s = subs_[index];
  // A response type answers the primary's and the secondaries' requests alike.
  const V1Txn txn = s.txn;
  const bool same = txn == type_txn ||
                    (type_txn == V1Txn::kCreatePdp && txn == V1Txn::kCreateSecondary) ||
                    (type_txn == V1Txn::kDeletePdp && txn == V1Txn::kDeleteSecondary);
  if (!same) {
    mismatches_.count(Mismatch::kSgsnMessageType);
    return;  // keep waiting for the right answer
  }
  auto mandatory = gtp::v1::checkMandatory(message_, gtp::v1::Sender::kGgsn);
  auto view = viewPdp(message_);
  if (!mandatory || !view) {
    malformedAnswer(index, !mandatory ? mandatory.error().code : view.error().code, now);
    return;
  }
  const PdpView& v = *view;
  const Node& n = nodes_[node];
  const uint8_t nsapi = nsapiOf(s);
  const SgsnCheckContext ctx = checkContext(n, index, nsapi);
  MismatchSet ms;
  switch (txn) {
    case V1Txn::kCreatePdp: ms = checkPdpResponse(v, ctx, V1Qos::kCreate, true, true); break;
    case V1Txn::kCreateSecondary:
    case V1Txn::kUpdatePdp:
      ms = checkPdpResponse(v, ctx, txn == V1Txn::kUpdatePdp ? updateQos(s.modifies_total)
                                                              : V1Qos::kSecondary,
                            false, false);
      // A TEID-C given again must be the one the session has.
      if (v.teid_c && *v.teid_c != s.ggsn_teid_c) ms.add(Mismatch::kSgsnControlInvalid);
      break;
    default: ms = checkDeleteResponse(v, ctx); break;
  }
  const bool ok = v.cause && gtp::v1::causeAccepted(*v.cause);
  if (txn == V1Txn::kCreatePdp && ok && (!v.teid_c || *v.teid_c == 0))
    ms.add(Mismatch::kSgsnControlInvalid);
  // The header TEID is the SGSN's own; 0 only on a rejected creation.
  if (h.teid != controlTeid(index) && !(txn == V1Txn::kCreatePdp && !ok && h.teid == 0))
    ms.add(Mismatch::kSgsnHeaderTeid);
  ms.countInto(mismatches_);
  if (v.cause) ++stats_.causes[*v.cause];
  finish(index, now);
  if (txn == V1Txn::kCreatePdp && ok && ms.has(Mismatch::kSgsnControlInvalid)) {
    drop(index);  // no usable GGSN TEID-C or address: the session cannot go on
    return;
  }
  if (ok) {
    accepted(index, v);
  } else if (txn == V1Txn::kCreatePdp) {
    ++stats_.sessions_rejected;
    s.state = State::kIdle;
    ++s.cycles_done;
  } else {
    // A refused secondary, update or deletion: counted (a mismatch unless
    // expected), and the subscriber goes on as if it had been accepted, so
    // that every session ends.
    accepted(index, v);
  }
  afterCompletion(index);
}

void SgsnEngine::accepted(uint32_t index, const PdpView& v) noexcept {
  Sub& s = subs_[index];
  const uint8_t nsapi = nsapiOf(s);
  const bool ok = v.cause && gtp::v1::causeAccepted(*v.cause);
  switch (s.txn) {
    case V1Txn::kCreatePdp:
      if (!learnGgsnAddress(nodes_[nodeOf(index)], v, s.peer_addr)) {
        drop(index);
        return;
      }
      ++stats_.sessions_created;
      if (v.gsn[1]) stats_.split.add(*v.gsn[1]);
      s.ggsn_teid_c = *v.teid_c;
      s.state = State::kEstablished;
      s.contexts = bit(kPrimaryNsapi);
      s.modifies_done = 0;
      s.secondaries_created = 0;
      s.network_updated = false;
      ++sessions_up_;
      return;
    case V1Txn::kCreateSecondary:
      ++s.secondaries_created;
      if (ok) {
        s.contexts |= bit(nsapi);
        ++stats_.secondaries_created;
      }
      break;
    case V1Txn::kUpdatePdp:
      ++s.modifies_done;
      ++s.modifies_total;
      break;
    case V1Txn::kDeleteSecondary:
      s.contexts &= static_cast<uint16_t>(~bit(nsapi));
      ++stats_.secondaries_deleted;
      break;
    case V1Txn::kDeletePdp:
    case V1Txn::kCount:
      if (ok) ++stats_.sessions_deleted;
      stats_.secondaries_deleted += static_cast<uint64_t>(std::popcount(
          static_cast<uint16_t>(s.contexts & kSecondaryBits)));
      s.contexts = 0;
      if (sessions_up_ > 0) --sessions_up_;
      s.state = State::kIdle;
      ++s.cycles_done;
      return;
  }
  s.state = State::kEstablished;
}

bool SgsnEngine::learnGgsnAddress(const Node& n, const PdpView& v, IpAddress& out) noexcept {
  if (config_.relay) {
    out = n.proxy.addr;  // unused: every request goes to --proxy
    return true;
  }
  out = *v.gsn[0];  // present and of the node's family: checked
  // Checked once here rather than on every request sent there.
  if (!config_.allow_non_loopback && !isLoopback(out)) {
    mismatches_.count(Mismatch::kSgsnUnsafeDestination);
    return false;
  }
  return true;
}

SgsnCheckContext SgsnEngine::checkContext(const Node& n, uint32_t index,
                                          uint8_t nsapi) const noexcept {
  SgsnCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.user_plane_proxied = config_.user_plane_proxied;
  ctx.sgsn_addr = n.addr;
  ctx.proxy_access = n.proxy.addr;
  ctx.imsi = config_.ids.imsi(index);
  ctx.nsapi = nsapi;
  ctx.expected_rejections = &config_.expected_rejections;
  ctx.local_ggsns = config_.local_ggsns;
  return ctx;
}

bool SgsnEngine::attachedOn(uint32_t node, uint32_t teid, uint32_t& index) const noexcept {
  if (!indexOfTeid(teid, index) || nodeOf(index) != node) return false;
  // A creation still in flight has no GGSN TEID-C to answer to yet.
  const State st = subs_[index].state;
  return st == State::kEstablished || st == State::kBusy || st == State::kWaiting;
}

void SgsnEngine::count(MismatchSet ms, Procedure p) noexcept {
  if (ms.empty()) return;
  ++stats_.procedures[at(p)].mismatches;
  ms.countInto(mismatches_);
}

void SgsnEngine::onNetworkRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  Node& n = nodes_[node];
  const auto& h = message_.header();
  const auto type = message_.messageType();
  Procedure p = Procedure::kInitiateActivation;
  if (type == MessageType::kUpdatePdpContextRequest) p = Procedure::kNetworkUpdate;
  if (type == MessageType::kDeletePdpContextRequest) p = Procedure::kNetworkDelete;
  if (type == MessageType::kPduNotificationRequest) p = Procedure::kPduNotification;
  const RequestKey key{from, node, h.sequence_number};
  if (const Answer* cached = answers_.find(key, now)) {
    ++stats_.procedures[at(p)].retransmissions;
    sendAnswer(n, from, h.sequence_number, *cached);
    return;
  }
  // A request for a session whose Create PDP Context Response has not come
  // yet (it can overtake it: through gtpcp-relay the GGSN's own requests come
  // straight, its answers through the relay) is left unanswered: the GGSN
  // sends it again after T3, when the session is there.
  if (uint32_t index = 0; indexOfTeid(h.teid, index) && nodeOf(index) == node &&
                          subs_[index].state == State::kCreating) {
    ++stats_.network_early;
    return;
  }
  ++stats_.procedures[at(p)].started;
  Answer a;
  a.type = static_cast<MessageType>(static_cast<uint8_t>(type) + 1);
  auto mandatory = gtp::v1::checkMandatory(message_, gtp::v1::Sender::kGgsn);
  auto view = mandatory ? viewPdp(message_) : gtp::Result<PdpView>{};
  if (!mandatory || !view) {
    const gtp::Errc code = !mandatory ? mandatory.error().code : view.error().code;
    malformed_.count(code);
    if (const uint8_t cause = gtp::v1Cause(code); cause != 0) a.cause = cause;
  } else {
    if (!view->ordered) {
      MismatchSet ms;
      ms.add(Mismatch::kSgsnIeOrder);
      count(ms, p);
    }
    switch (p) {
      case Procedure::kNetworkUpdate: networkUpdate(node, *view, a); break;
      case Procedure::kNetworkDelete: networkDelete(node, *view, a); break;
      case Procedure::kPduNotification: pduNotification(*view, a); break;
      default: initiateActivation(node, a); break;
    }
  }
  if (answers_.insert(key, now, a)) ++stats_.answers_evicted;
  sendAnswer(n, from, h.sequence_number, a);
}

void SgsnEngine::networkUpdate(uint32_t node, const PdpView& v, Answer& a) noexcept {
  uint32_t index = 0;
  MismatchSet ms;
  if (!attachedOn(node, message_.header().teid, index)) {
    ++stats_.network_unknown;
    ms.add(Mismatch::kSgsnRequestTeid);
    count(ms, Procedure::kNetworkUpdate);
    return;
  }
  Sub& s = subs_[index];
  a.header_teid = s.ggsn_teid_c;
  if (!v.nsapi || !(s.contexts & bit(*v.nsapi))) {
    ms.add(Mismatch::kSgsnNetworkRequest);
    count(ms, Procedure::kNetworkUpdate);
    return;  // Non-existent: no such context
  }
  // The emulated GGSNs ask for one QoS: anything else is granted all the
  // same, as that one, and counted.
  if (!qosIs(v, V1Qos::kNetwork)) ms.add(Mismatch::kSgsnNetworkRequest);
  count(ms, Procedure::kNetworkUpdate);
  a.cause = kV1CauseAccepted;
  a.index = index;
  a.nsapi = *v.nsapi;
  a.qos = V1Qos::kNetwork;
  ++stats_.procedures[at(Procedure::kNetworkUpdate)].completed;
  s.network_updated = true;
  if (s.state == State::kWaiting && s.plan == NetworkPlan::kUpdate) endWait(index);
}

void SgsnEngine::networkDelete(uint32_t node, const PdpView& v, Answer& a) noexcept {
  uint32_t index = 0;
  if (!attachedOn(node, message_.header().teid, index)) {
    ++stats_.network_unknown;  // e.g. a proxy cleaning up after a restart: not a mismatch
    return;
  }
  Sub& s = subs_[index];
  a.header_teid = s.ggsn_teid_c;
  MismatchSet ms;
  const uint8_t nsapi = v.nsapi.value_or(0);
  if (nsapi > 15 || !(s.contexts & bit(nsapi))) {
    ms.add(Mismatch::kSgsnNetworkRequest);
    count(ms, Procedure::kNetworkDelete);
    return;
  }
  a.cause = kV1CauseAccepted;
  ++stats_.procedures[at(Procedure::kNetworkDelete)].completed;
  if (nsapi != kPrimaryNsapi) {
    // One secondary context (Teardown Ind 0).
    if (v.teardown.value_or(false)) ms.add(Mismatch::kSgsnNetworkRequest);
    count(ms, Procedure::kNetworkDelete);
    s.contexts &= static_cast<uint16_t>(~bit(nsapi));
    ++stats_.secondaries_deleted;
    return;
  }
  // The primary: the whole session goes (TS 29.060 §7.3.5 asks Teardown Ind 1
  // when secondaries remain).
  if (!v.teardown.value_or(false) && (s.contexts & kSecondaryBits))
    ms.add(Mismatch::kSgsnNetworkRequest);
  count(ms, Procedure::kNetworkDelete);
  stats_.secondaries_deleted +=
      static_cast<uint64_t>(std::popcount(static_cast<uint16_t>(s.contexts & kSecondaryBits)));
  s.contexts = 0;
  ++stats_.sessions_deleted_by_network;
  detachByNetwork(index);
}

void SgsnEngine::initiateActivation(uint32_t node, Answer& a) noexcept {
  // The emulated MSs refuse to activate what the network asks.
  if (uint32_t index = 0; attachedOn(node, message_.header().teid, index)) {
    a.header_teid = subs_[index].ggsn_teid_c;
    a.cause = kV1CauseMsRefuses;
  } else {
    ++stats_.network_unknown;
  }
}

void SgsnEngine::pduNotification(const PdpView& v, Answer& a) noexcept {
  // TS 29.060 §7.3.9: the answer goes to the TEID-C the request gives.
  a.header_teid = v.teid_c.value_or(0);
  uint32_t index = 0;
  if (!v.imsi || !config_.ids.indexOfImsi(*v.imsi, index)) {
    a.cause = kV1CauseImsiNotKnown;
    return;
  }
  a.cause = kV1CauseAccepted;
  ++stats_.procedures[at(Procedure::kPduNotification)].completed;
}

void SgsnEngine::sendAnswer(Node& n, const Endpoint& to, uint32_t seq, const Answer& a) noexcept {
  sendBuilt(n, to, [&](std::span<uint8_t> buf) {
    return a.type == MessageType::kUpdatePdpContextResponse
               ? buildSgsnUpdateResponse(seq, a.header_teid, a.cause,
                                         userTeid(a.index, a.nsapi), a.qos, buf)
               : buildV1CauseOnly(a.type, seq, a.header_teid, a.cause, buf);
  });
}

}  // namespace gtpcp::peer
