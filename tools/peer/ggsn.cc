#include "tools/peer/ggsn.h"

#include <bit>
#include <utility>

#include "common/gtp/v1/validate.h"

namespace gtpcp::peer {

using gtp::v1::MessageType;

namespace {

constexpr uint16_t bit(uint8_t nsapi) noexcept { return static_cast<uint16_t>(1u << nsapi); }
constexpr uint16_t kSecondaryBits = 0xffc0;  // NSAPIs 6..15

// FNV-1a: tells a retransmission (the same octets) from a new request that
// happens to reuse a sequence number (16 bits wrap within seconds under load).
uint32_t digestOf(std::span<const uint8_t> bytes) noexcept {
  uint32_t h = 2166136261u;
  for (uint8_t b : bytes) h = (h ^ b) * 16777619u;
  return h | 1;  // never 0: 0 means "not kept"
}

V1Txn txnOfRequest(MessageType type, const PdpView& v, uint32_t header_teid) noexcept {
  switch (type) {
    case MessageType::kCreatePdpContextRequest:
      return header_teid == 0 ? V1Txn::kCreatePdp : V1Txn::kCreateSecondary;
    case MessageType::kUpdatePdpContextRequest: return V1Txn::kUpdatePdp;
    default:
      return v.nsapi.value_or(kPrimaryNsapi) == kPrimaryNsapi ? V1Txn::kDeletePdp
                                                              : V1Txn::kDeleteSecondary;
  }
}

}  // namespace

GgsnEngine::GgsnEngine(GgsnConfig config, Outbox& outbox, std::vector<GgsnNodeStats>& stats,
                       MismatchCounters& mismatches, MalformedCounters& malformed)
    // TS 29.060 §6: 16-bit sequence numbers. One update, then one deletion,
    // in flight at a time.
    : GatewayCore(config, 0xffff, config.network_initiated > 0 ? 1u : 0u, outbox, stats,
                  mismatches, malformed),
      config_(std::move(config)),
      sgsn_teids_(config_.ids.count) {}

void GgsnEngine::reject(uint32_t node, const Endpoint& to, uint32_t header_teid, uint8_t cause,
                        int64_t now) noexcept {
  const auto type = static_cast<MessageType>(message_.header().message_type + 1);
  respondBuilt(node, to,
               buildV1CauseOnly(type, message_.header().sequence_number, header_teid, cause,
                                scratch_),
               now);
}

void GgsnEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                            int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  GgsnNodeStats& st = stats_[node];
  if (auto decoded = message_.decode(bytes); !decoded) {
    malformed_.count(decoded.error().code);
    return;
  }
  const auto type = message_.messageType();
  switch (type) {
    case MessageType::kEchoRequest:
      answerEcho(node, from, now, [&](std::span<uint8_t> out) {
        return buildV1EchoResponse(message_.header().sequence_number, config_.recovery, out);
      });
      return;
    case MessageType::kCreatePdpContextRequest:
    case MessageType::kUpdatePdpContextRequest:
    case MessageType::kDeletePdpContextRequest:
      if (dropped(node)) return;
      break;
    case MessageType::kUpdatePdpContextResponse:
    case MessageType::kDeletePdpContextResponse:
      ownResponse(node, now, Mismatch::kGgsnUnexpectedMessage);
      return;
    case MessageType::kVersionNotSupported: ++st.version_not_supported; return;
    case MessageType::kErrorIndication: ++st.error_indications; return;
    default: mismatches_.count(Mismatch::kGgsnUnexpectedMessage); return;
  }
  const auto& h = message_.header();
  auto mandatory = gtp::v1::checkMandatory(message_, gtp::v1::Sender::kSgsn);
  auto view = mandatory ? viewPdp(message_) : gtp::Result<PdpView>{};
  if (!mandatory || !view) {
    const gtp::Errc code = !mandatory ? mandatory.error().code : view.error().code;
    malformed_.count(code);
    if (const uint8_t cause = gtp::v1Cause(code); cause != 0) reject(node, from, 0, cause, now);
    return;
  }
  ++st.requests[static_cast<std::size_t>(txnOfRequest(type, *view, h.teid))];
  digest_ = digestOf(message_.body());
  if (type == MessageType::kCreatePdpContextRequest && h.teid == 0)
    onCreate(node, from, *view, now);
  else
    onSessionRequest(node, from, *view, now);
}

GgsnCheckContext GgsnEngine::checkContext(uint32_t node, uint64_t imsi) const noexcept {
  const GatewayNodeConfig& n = nodes_[node].config;
  GgsnCheckContext c;
  c.relay = config_.relay;
  c.user_plane_proxied = config_.user_plane_proxied;
  c.ggsn_addr = n.addr;
  c.proxy_gateway = n.proxy_gateway;
  c.failover_gateway = n.failover_gateway;
  c.sgsn_teids = &sgsn_teids_;
  c.imsi = imsi;
  uint32_t index = 0;
  if (config_.ids.indexOfImsi(imsi, index)) c.index = index;
  return c;
}

bool GgsnEngine::repeated(uint32_t slot, const Endpoint& from, int64_t now) noexcept {
  const Session& s = sessions_[slot];
  if (!duplicate(s, from, message_.header().sequence_number, message_.header().message_type,
                 digest_, now))
    return false;
  ++stats_[s.node].duplicates;
  respondAgain(s, from, now);
  return true;
}

void GgsnEngine::answer(uint32_t slot, const Endpoint& from, std::size_t length,
                        int64_t now) noexcept {
  Session& s = sessions_[slot];
  keepAnswer(s, message_.header().message_type, message_.header().sequence_number, digest_, from,
             length, now);
  respondAgain(s, from, now);
}

void GgsnEngine::onCreate(uint32_t node, const Endpoint& from, const PdpView& v,
                          int64_t now) noexcept {
  Node& n = nodes_[node];
  GgsnNodeStats& st = stats_[node];
  const auto& h = message_.header();
  uint32_t index = 0;
  const bool in_range = v.imsi && config_.ids.indexOfImsi(*v.imsi, index);
  uint32_t existing = kNone;
  if (in_range && n.by_imsi[index] != 0) {
    existing = n.by_imsi[index] - 1;
    if (repeated(existing, from, now)) return;
  }
  MismatchSet ms = checkSgsnRequest(v, checkContext(node, v.imsi.value_or(0)), kPrimaryNsapi, true);
  if (!in_range) ms.add(Mismatch::kGgsnImsiOutOfRange);
  if (v.nsapi != kPrimaryNsapi || v.linked_nsapi || !v.end_user_address || !v.apn || v.qos.empty())
    ms.add(Mismatch::kGgsnContext);
  ms.countInto(mismatches_);

  PdpResponseArgs a;
  a.sequence = h.sequence_number;
  a.header_teid = v.teid_c.value_or(0);
  a.recovery = config_.recovery;
  // An IMSI outside the range has no place in the table: refused.
  const uint8_t reject = n.config.reject_cause != 0 ? n.config.reject_cause
                         : in_range                 ? uint8_t{0}
                                                    : uint8_t{kV1CauseImsiNotKnown};
  const uint32_t slot =
      admit(node, existing, reject, kV1CauseNoResources, from, now, [&](uint8_t c) {
        a.cause = c;
        return buildPdpContextResponse(a, scratch_);
      });
  if (slot == kNone) return;
  Session& s = sessions_[slot];
  s.imsi = *v.imsi;
  s.peer_teid = a.header_teid;
  s.node = static_cast<uint8_t>(node);
  s.state = State::kActive;
  s.contexts = bit(kPrimaryNsapi);
  // Without an SGSN Address for signalling (counted), the request's source.
  s.sgsn_signalling = v.gsn[0].value_or(from.addr);
  s.sgsn_user = v.gsn[1].value_or(IpAddress{});
  s.plan = networkPlan(s.imsi, config_.network_initiated);
  n.by_imsi[index] = slot + 1;

  const uint32_t teid = teidOf(slot, s.gen);
  a.cause = kV1CauseAccepted;
  a.teid_u = v1UserPlaneTeid(PlaneSide::kGgsn, s.imsi, kPrimaryNsapi, n.config.addr);
  a.teid_c = teid;
  a.charging_id = teid;
  a.ue_ipv4 = 0x0a000000u + slot + 1;  // 10.0.0.0/8 pool
  a.ggsn_addr = n.config.addr;
  a.qos = v.qos;
  auto r = buildPdpContextResponse(a, s.response);
  if (!r) {
    ++st.internal_errors;
    s.response_length = 0;
    return;
  }
  ++st.sessions_created;
  ++st.sessions_up;
  ++st.contexts_up;
  answer(slot, from, *r, now);
  if (s.plan != NetworkPlan::kNone) startNetworkUpdate(slot, now);
}

PdpResponseArgs GgsnEngine::acceptance(uint32_t slot, uint8_t nsapi,
                                       const PdpView& v) const noexcept {
  const Session& s = sessions_[slot];
  const IpAddress& addr = nodes_[s.node].config.addr;
  const uint32_t teid = teidOf(slot, s.gen);
  PdpResponseArgs a;
  a.sequence = message_.header().sequence_number;
  a.header_teid = s.peer_teid;
  a.teid_u = v1UserPlaneTeid(PlaneSide::kGgsn, s.imsi, nsapi, addr);
  // One charging ID per context: the primary's is the TEID-C.
  a.charging_id = nsapi == kPrimaryNsapi ? teid : teid ^ (uint32_t{nsapi} << 28);
  a.ggsn_addr = addr;
  a.qos = v.qos;
  return a;
}

uint32_t GgsnEngine::sessionOfRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  const uint32_t slot = sessionOfTeid(message_.header().teid);
  if (slot != kNone && sessions_[slot].node == node) {
    if (repeated(slot, from, now)) return kNone;
    // A deleted session answers repeats only.
    if (sessions_[slot].state == State::kActive) return slot;
  }
  mismatches_.count(Mismatch::kGgsnUnknownTeid);
  ++stats_[node].context_not_found;
  reject(node, from, 0, kV1CauseNonExistent, now);
  return kNone;
}

void GgsnEngine::onSessionRequest(uint32_t node, const Endpoint& from, const PdpView& v,
                                  int64_t now) noexcept {
  const uint32_t slot = sessionOfRequest(node, from, now);
  if (slot == kNone) return;
  Session& s = sessions_[slot];
  GgsnNodeStats& st = stats_[node];
  const MessageType type = message_.messageType();
  const uint8_t nsapi = v.nsapi.value_or(0);
  const bool up = nsapi <= 15 && (s.contexts & bit(nsapi));
  MismatchSet ms;
  bool usable = up;
  uint8_t refusal = kV1CauseNonExistent;
  if (type == MessageType::kCreatePdpContextRequest) {
    // A secondary activation: a new NSAPI linked to the primary, a TFT, no
    // TEID-C.
    ms = checkSgsnRequest(v, checkContext(node, s.imsi), nsapi, false);
    usable = nsapi > kPrimaryNsapi && nsapi <= 15 && !up;
    refusal = static_cast<uint8_t>(gtp::v1::Cause::kMandatoryIeIncorrect);
    if (v.linked_nsapi != kPrimaryNsapi || !v.tft || v.qos.empty()) ms.add(Mismatch::kGgsnContext);
  } else if (type == MessageType::kUpdatePdpContextRequest) {
    ms = checkSgsnRequest(v, checkContext(node, s.imsi), nsapi, v.teid_c.has_value());
    if (v.qos.empty()) ms.add(Mismatch::kGgsnContext);
  } else {
    // Teardown Ind 1 names the primary (and takes the secondaries along), 0 a
    // secondary alone.
    if (v.teardown.value_or(false) != (nsapi == kPrimaryNsapi)) ms.add(Mismatch::kGgsnContext);
    if (!v.ordered) ms.add(Mismatch::kGgsnIeOrder);
  }
  if (!usable) ms.add(Mismatch::kGgsnContext);
  ms.countInto(mismatches_);
  if (!usable) {
    reject(node, from, s.peer_teid, refusal, now);
    return;
  }
  gtp::Result<std::size_t> r;
  if (type == MessageType::kDeletePdpContextRequest) {
    r = buildV1CauseOnly(MessageType::kDeletePdpContextResponse, message_.header().sequence_number,
                         s.peer_teid, kV1CauseAccepted, s.response);
  } else {
    PdpResponseArgs a = acceptance(slot, nsapi, v);
    if (type == MessageType::kCreatePdpContextRequest) {
      a.recovery = config_.recovery;
    } else {
      a.type = MessageType::kUpdatePdpContextResponse;
      a.teid_c = teidOf(slot, s.gen);
    }
    r = buildPdpContextResponse(a, s.response);
  }
  if (!r) {
    ++st.internal_errors;
    return;
  }
  answer(slot, from, *r, now);
  switch (type) {
    case MessageType::kCreatePdpContextRequest:
      s.contexts |= bit(nsapi);
      ++s.secondaries;
      ++st.secondaries_created;
      ++st.contexts_up;
      maybeNetworkDelete(slot, now);
      break;
    case MessageType::kUpdatePdpContextRequest:
      ++s.updates;
      maybeNetworkDelete(slot, now);
      break;
    default:
      if (nsapi == kPrimaryNsapi) {
        ++st.sessions_deleted;
        endSession(slot, now);
      } else {
        s.contexts &= static_cast<uint16_t>(~bit(nsapi));
        if (st.contexts_up > 0) --st.contexts_up;
      }
      break;
  }
}

void GgsnEngine::endSession(uint32_t slot, int64_t now) noexcept {
  Session& s = sessions_[slot];
  GgsnNodeStats& st = stats_[s.node];
  const auto contexts = static_cast<uint64_t>(std::popcount(s.contexts));
  st.contexts_up -= std::min(st.contexts_up, contexts);
  s.contexts = 0;
  release(slot, now);
}

void GgsnEngine::startNetworkUpdate(uint32_t slot, int64_t now) noexcept {
  Session& s = sessions_[slot];
  const uint32_t seq = nextSequence(nodes_[s.node]);
  const uint32_t r = prepare(slot, Endpoint{s.sgsn_signalling, kGtpcPort},
                             Procedure::kNetworkUpdate, seq, kPrimaryNsapi,
                             [&](std::span<uint8_t> out) {
                               return buildNetworkUpdateRequest(seq, s.peer_teid, kPrimaryNsapi,
                                                                V1Qos::kNetwork, out);
                             });
  if (r != kNone) send(r, now);
}

void GgsnEngine::maybeNetworkDelete(uint32_t slot, int64_t now) noexcept {
  Session& s = sessions_[slot];
  if (!config_.network_deletes || s.state != State::kActive ||
      s.plan != NetworkPlan::kUpdateAndDelete || !s.network_updated ||
      s.updates < config_.modifies || s.secondaries < config_.secondaries)
    return;
  const uint32_t seq = nextSequence(nodes_[s.node]);
  const uint32_t r = prepare(slot, Endpoint{s.sgsn_signalling, kGtpcPort},
                             Procedure::kNetworkDelete, seq, kPrimaryNsapi,
                             [&](std::span<uint8_t> out) {
                               return buildDeletePdpContextRequest(seq, s.peer_teid, kPrimaryNsapi,
                                                                   true, out);
                             });
  if (r == kNone) return;
  send(r, now);
  // Gone as soon as asked: a request of the SGSN's that crosses the deletion
  // gets 192.
  ++stats_[s.node].sessions_deleted;
  endSession(slot, now);
}

void GgsnEngine::onResponse(uint32_t node, int64_t now) noexcept {
  const auto& h = message_.header();
  const uint32_t r = takeAnswered(node, h.sequence_number, Mismatch::kGgsnUnmatchedResponse);
  if (r == kNone) return;
  const Outgoing o = outgoing_[r];  // a copy: the record goes back to the pool below
  const bool update = o.procedure == Procedure::kNetworkUpdate;
  const MessageType expected =
      update ? MessageType::kUpdatePdpContextResponse : MessageType::kDeletePdpContextResponse;
  if (message_.messageType() != expected) {
    MismatchSet ms;
    ms.add(Mismatch::kGgsnMessageType);
    count(ms, node, o.procedure);
    return;  // keep waiting for the right answer
  }
  outgoing_list_.remove(r);
  close(r, false);
  auto mandatory = gtp::v1::checkMandatory(message_, gtp::v1::Sender::kSgsn);
  auto view = viewPdp(message_);
  if (!mandatory || !view) {
    malformed_.count(!mandatory ? mandatory.error().code : view.error().code);
    return;
  }
  const PdpView& v = *view;
  Session& s = sessions_[o.slot];
  const bool live = s.state == State::kActive && s.gen == o.gen;
  MismatchSet ms;
  // The GGSN's own TEID-C of the session the request named.
  if (h.teid != teidOf(o.slot, o.gen)) ms.add(Mismatch::kGgsnHeaderTeid);
  const bool accepted = v.cause && gtp::v1::causeAccepted(*v.cause);
  if (!accepted) ms.add(Mismatch::kGgsnNetworkResponse);
  if (accepted && update &&
      (!qosIs(v, V1Qos::kNetwork) ||
       (!config_.user_plane_proxied && live &&
        v.teid_u != v1UserPlaneTeid(PlaneSide::kSgsn, o.imsi, o.bearer, s.sgsn_user))))
    ms.add(Mismatch::kGgsnNetworkResponse);
  if (!v.ordered) ms.add(Mismatch::kGgsnIeOrder);
  count(ms, node, o.procedure);
  if (!accepted) return;
  ++stats_[node].procedures[static_cast<std::size_t>(o.procedure)].completed;
  if (update && live) {
    s.network_updated = true;
    maybeNetworkDelete(o.slot, now);
  }
}

}  // namespace gtpcp::peer
