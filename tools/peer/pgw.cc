#include "tools/peer/pgw.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/gtp/v2/validate.h"
#include "tools/peer/failover.h"

namespace gtpcp::peer {

using gtp::v2::MessageType;

PgwEngine::PgwEngine(PgwConfig config, Outbox& outbox, std::vector<PgwNodeStats>& stats,
                     MismatchCounters& mismatches, MalformedCounters& malformed)
    // The top bit of a sequence number is for command-triggered requests. A
    // session has at most one dedicated bearer request and one triggered
    // request outstanding at a time.
    : GatewayCore(config, kCommandBit - 1,
                  (config.dedicated_bearer ? 1u : 0u) + (config.commands ? 1u : 0u), outbox, stats,
                  mismatches, malformed),
      config_(std::move(config)) {}

void PgwEngine::respondCauseOnly(uint32_t node, const Endpoint& to, MessageType type, uint32_t seq,
                                 uint32_t teid, uint8_t cause, int64_t now) noexcept {
  respondBuilt(node, to, buildCauseOnlyResponse(type, seq, teid, cause, scratch_), now);
}

void PgwEngine::startDedicated(uint32_t slot, Procedure p, int64_t now) noexcept {
  Session& s = sessions_[slot];
  const uint32_t seq = nextSequence(nodes_[s.node]);
  const uint32_t r = prepare(slot, p, seq, kDedicatedEbi, [&](std::span<uint8_t> out) {
    if (p == Procedure::kUpdateBearer) {
      BearerModificationArgs a;
      a.sequence = seq;
      a.header_teid = s.peer_teid;
      a.ebi = kDedicatedEbi;
      a.qos = dedicatedQos(true);
      a.apn_ambr = gtp::v2::Ambr{300000, 600000};
      return buildBearerModification(MessageType::kUpdateBearerRequest, a, out);
    }
    return buildDeleteBearerRequest(seq, s.peer_teid, kDedicatedEbi, out);
  });
  if (r != kNone) send(r, now);
}

void PgwEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                           int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  auto decoded = message_.decode(bytes);
  if (!decoded) {
    malformed_.count(decoded.error().code);
    // A request whose header is readable gets the cause TS 29.274 §7.7 asks for.
    auto h = gtp::v2::decodeHeader(bytes);
    const uint8_t cause = gtp::v2Cause(decoded.error().code);
    if (h && cause != 0) {
      const auto t = static_cast<MessageType>(h->message_type);
      if (t == MessageType::kCreateSessionRequest || t == MessageType::kModifyBearerRequest ||
          t == MessageType::kDeleteSessionRequest)
        respondCauseOnly(node, from, static_cast<MessageType>(h->message_type + 1),
                         h->sequence_number, 0, cause, now);
    }
    return;
  }
  const auto type = message_.messageType();
  switch (type) {
    case MessageType::kEchoRequest:
      answerEcho(node, from, now, [&](std::span<uint8_t> out) {
        return buildEchoResponse(message_.header().sequence_number, config_.recovery, out);
      });
      return;
    case MessageType::kModifyBearerCommand:
      if (!config_.commands) {
        mismatches_.count(Mismatch::kPgwUnexpectedMessage);
        return;
      }
      [[fallthrough]];
    case MessageType::kCreateSessionRequest:
    case MessageType::kModifyBearerRequest:
    case MessageType::kDeleteSessionRequest:
      if (dropped(node)) return;
      break;
    case MessageType::kCreateBearerResponse:
    case MessageType::kUpdateBearerResponse:
    case MessageType::kDeleteBearerResponse:
      ownResponse(node, now, Mismatch::kPgwUnexpectedMessage);
      return;
    default:
      mismatches_.count(Mismatch::kPgwUnexpectedMessage);
      return;
  }
  auto mandatory = gtp::v2::checkMandatory(message_);
  if (!mandatory) {
    malformed_.count(mandatory.error().code);
    respondCauseOnly(node, from, static_cast<MessageType>(static_cast<uint8_t>(type) + 1),
                     message_.header().sequence_number, 0, gtp::v2Cause(mandatory.error().code),
                     now);
    return;
  }
  if (type == MessageType::kCreateSessionRequest)
    onCreate(node, from, now);
  else if (type == MessageType::kModifyBearerCommand)
    onCommand(node, from, now);
  else
    onModifyOrDelete(node, from, now);
}

void PgwEngine::onCreate(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  Node& n = nodes_[node];
  PgwNodeStats& st = stats_[node];
  const auto& h = message_.header();
  const auto type = static_cast<uint8_t>(MessageType::kCreateSessionRequest);
  ++st.requests[static_cast<std::size_t>(Txn::kCreate)];
  auto view = viewCreateSessionRequest(message_);
  if (!view) {
    malformed_.count(view.error().code);
    respondCauseOnly(node, from, MessageType::kCreateSessionResponse, h.sequence_number, 0,
                     gtp::v2Cause(view.error().code), now);
    return;
  }
  uint32_t index = 0;
  const bool in_range = view->imsi && config_.ids.indexOfImsi(*view->imsi, index);
  uint32_t existing = kNone;
  if (in_range && n.by_imsi[index] != 0) {
    existing = n.by_imsi[index] - 1;
    const Session& s = sessions_[existing];
    if (duplicate(s, from, h.sequence_number, type, now)) {
      ++st.duplicates;
      respondAgain(s, from, now);
      return;
    }
  }

  PgwCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.proxy_gateway = nodes_[node].config.proxy_gateway;
  ctx.failover_gateway = nodes_[node].config.failover_gateway;
  ctx.ids = &config_.ids;
  checkCreateSessionRequest(*view, ctx).countInto(mismatches_);
  // The proxy's own address, as it gave it: a failover moves what goes there.
  IpAddress proxy;
  if (!config_.relay && view->sender && fteidAddress(*view->sender, n.config.addr.family(), proxy))
    outbox_.noteProxyAddress(proxy);

  const uint32_t peer_teid = view->sender ? view->sender->teid : 0;
  CreateSessionResponseArgs a;
  a.sequence = h.sequence_number;
  a.header_teid = peer_teid;
  a.recovery = config_.recovery;
  // TS 23.401: a new PDN connection request for a subscriber that has one
  // replaces it.
  const uint32_t slot =
      admit(node, existing, n.config.reject_cause, kCauseNoResources, from, now, [&](uint8_t c) {
        a.cause = c;
        return buildCreateSessionResponse(a, scratch_);
      });
  if (slot == kNone) return;
  Session& s = sessions_[slot];
  s.imsi = view->imsi.value_or(0);
  s.peer_teid = peer_teid;
  s.node = static_cast<uint8_t>(node);
  s.ebi = view->ebi.value_or(kDefaultEbi);
  s.state = State::kActive;
  if (in_range) n.by_imsi[index] = slot + 1;

  const uint32_t teid = teidOf(slot, s.gen);
  a.cause = kCauseAccepted;
  a.pgw_addr = n.config.addr;
  a.pgw_teid = teid;
  a.ue_ipv4 = 0x0a000000u + slot + 1;  // 10.0.0.0/8 pool
  a.ebi = s.ebi;
  a.pgw_u_teid = userPlaneTeid(PlaneSide::kPgw, s.imsi, n.config.addr);
  a.charging_id = teid;
  a.apn_ambr = view->apn_ambr.value_or(gtp::v2::Ambr{50000, 100000});
  auto r = buildCreateSessionResponse(a, s.response);
  if (!r) {
    ++st.internal_errors;
    s.response_length = 0;
    return;
  }
  keepAnswer(s, type, from, *r, now);
  ++st.sessions_created;
  ++st.sessions_up;
  const std::span<const uint8_t> response(s.response.data(), s.response_length);
  if (!config_.dedicated_bearer) {
    respond(node, from, response, now);
    return;
  }
  const uint32_t seq = nextSequence(n);
  const uint32_t cbr = prepare(slot, Procedure::kCreateBearer, seq, kDedicatedEbi,
                               [&](std::span<uint8_t> out) {
                                 CreateBearerRequestArgs b;
                                 b.sequence = seq;
                                 b.header_teid = s.peer_teid;
                                 b.lbi = s.ebi;
                                 b.imsi = s.imsi;
                                 b.pgw_addr = n.config.addr;
                                 b.charging_id = teid ^ 0x80000000u;
                                 return buildCreateBearerRequest(b, out);
                               });
  if (cbr == kNone || !config_.piggyback) {
    respond(node, from, response, now);
    if (cbr != kNone) send(cbr, now);
    return;
  }
  // TS 29.274 §5.5.1: the response with P set, the request after it. A
  // repeated Create Session Request gets the response alone (the request
  // has its own retransmissions).
  const Outgoing& o = outgoing_[cbr];
  std::memcpy(scratch_.data(), response.data(), response.size());
  scratch_[0] |= gtp::v2::kFlagPiggyback;
  std::memcpy(scratch_.data() + response.size(), o.bytes.data(), o.length);
  respond(node, from, std::span<const uint8_t>(scratch_.data(), response.size() + o.length), now);
  outgoing_list_.append(cbr, now + n.config.delay_ns + config_.t3_ns);
  ++st.piggybacked;
}

void PgwEngine::onCommand(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  PgwNodeStats& st = stats_[node];
  const auto& h = message_.header();
  const auto type = MessageType::kModifyBearerCommand;
  ProcedureCounters& c = st.procedures[static_cast<std::size_t>(Procedure::kModifyBearerCommand)];
  ++st.requests[static_cast<std::size_t>(Txn::kModifyBearerCommand)];
  const uint32_t slot = h.teidPresent() ? sessionOfTeid(h.teid) : kNone;
  if (slot == kNone || sessions_[slot].node != node || sessions_[slot].state != State::kActive) {
    mismatches_.count(Mismatch::kPgwUnknownTeid);
    ++st.context_not_found;
    respondCauseOnly(node, from, MessageType::kModifyBearerFailureIndication, h.sequence_number, 0,
                     kCauseContextNotFound, now);
    return;
  }
  Session& s = sessions_[slot];
  // A command repeated before it was answered: its triggered request is
  // outstanding (and has retransmissions of its own), or its failure
  // indication is cached.
  if (uint32_t r = 0; nodes_[node].outgoing.find(h.sequence_number, r)) {
    ++c.retransmissions;
    return;
  }
  if (duplicate(s, from, h.sequence_number, static_cast<uint8_t>(type), now)) {
    ++c.retransmissions;
    ++st.duplicates;
    respondAgain(s, from, now);
    return;
  }
  ++c.started;
  auto view = viewBearerRequest(message_);
  if (!view) {
    malformed_.count(view.error().code);
    respondCauseOnly(node, from, MessageType::kModifyBearerFailureIndication, h.sequence_number,
                     s.peer_teid, gtp::v2Cause(view.error().code), now);
    return;
  }
  MismatchSet ms;
  // Commands are numbered with the top bit (TS 29.274 §7.6), for the bearer
  // of the session.
  if (!(h.sequence_number & kCommandBit) || view->bearer.ebi != s.ebi || !view->bearer.qos)
    ms.add(Mismatch::kPgwCommand);
  count(ms, node, Procedure::kModifyBearerCommand);
  ++c.completed;
  if (s.commands++ % 2 == 0) {
    // Accepted: the Update Bearer Request it triggers carries its number.
    const uint32_t r = prepare(slot, Procedure::kTriggeredUpdateBearer, h.sequence_number, s.ebi,
                               [&](std::span<uint8_t> out) {
                                 BearerModificationArgs a;
                                 a.sequence = h.sequence_number;
                                 a.header_teid = s.peer_teid;
                                 a.ebi = s.ebi;
                                 a.qos = view->bearer.qos.value_or(commandedQos());
                                 a.apn_ambr = view->apn_ambr.value_or(gtp::v2::Ambr{});
                                 return buildBearerModification(MessageType::kUpdateBearerRequest, a, out);
                               });
    if (r != kNone) send(r, now);
    return;
  }
  // Refused, answered with the command's number too; kept for a repeat.
  auto r = buildCauseOnlyResponse(MessageType::kModifyBearerFailureIndication, h.sequence_number,
                                  s.peer_teid, kCauseSystemFailure, s.response);
  if (!r) {
    ++st.internal_errors;
    return;
  }
  keepAnswer(s, static_cast<uint8_t>(type), from, *r, now);
  ProcedureCounters& f = st.procedures[static_cast<std::size_t>(Procedure::kFailureIndication)];
  ++f.started;
  ++f.completed;
  respond(node, from, std::span<const uint8_t>(s.response.data(), s.response_length), now);
}

void PgwEngine::onResponse(uint32_t node, int64_t now) noexcept {
  Node& n = nodes_[node];
  const auto& h = message_.header();
  const uint32_t r = takeAnswered(node, h.sequence_number, Mismatch::kPgwUnmatchedResponse);
  if (r == kNone) return;
  const Outgoing o = outgoing_[r];  // a copy: the record goes back to the pool below
  const MessageType expected = o.procedure == Procedure::kCreateBearer
                                   ? MessageType::kCreateBearerResponse
                               : o.procedure == Procedure::kDeleteBearer
                                   ? MessageType::kDeleteBearerResponse
                                   : MessageType::kUpdateBearerResponse;
  if (message_.messageType() != expected) {
    MismatchSet ms;
    ms.add(Mismatch::kPgwMessageType);
    count(ms, node, o.procedure);
    return;  // keep waiting for the right answer
  }
  outgoing_list_.remove(r);
  close(r, false);
  auto mandatory = gtp::v2::checkMandatory(message_);
  auto view = viewBearerResponse(message_);
  if (!mandatory || !view) {
    malformed_.count(!mandatory ? mandatory.error().code : view.error().code);
    return;
  }
  PgwCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.proxy_gateway = n.config.proxy_gateway;
  ctx.failover_gateway = n.config.failover_gateway;
  MismatchSet ms = o.procedure == Procedure::kCreateBearer
                       ? checkCreateBearerResponse(*view, ctx, o.imsi, o.bearer)
                       : checkBearerResponse(*view, o.bearer);
  // The PGW's own TEID of the session the request named.
  if (!h.teidPresent() || h.teid != teidOf(o.slot, o.gen)) ms.add(Mismatch::kPgwHeaderTeid);
  count(ms, node, o.procedure);
  if (!view->cause || !gtp::v2::causeAccepted(*view->cause)) return;
  ++stats_[node].procedures[static_cast<std::size_t>(o.procedure)].completed;
  // The dedicated bearer's next step, while its session lives.
  const Session& s = sessions_[o.slot];
  if (s.state != State::kActive || s.gen != o.gen) return;
  if (o.procedure == Procedure::kCreateBearer) startDedicated(o.slot, Procedure::kUpdateBearer, now);
  if (o.procedure == Procedure::kUpdateBearer) startDedicated(o.slot, Procedure::kDeleteBearer, now);
}

void PgwEngine::onModifyOrDelete(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  PgwNodeStats& st = stats_[node];
  const auto& h = message_.header();
  const auto type = message_.messageType();
  const bool modify = type == MessageType::kModifyBearerRequest;
  const auto response_type =
      modify ? MessageType::kModifyBearerResponse : MessageType::kDeleteSessionResponse;
  ++st.requests[static_cast<std::size_t>(modify ? Txn::kModify : Txn::kDelete)];

  const uint32_t slot = h.teidPresent() ? sessionOfTeid(h.teid) : kNone;
  if (slot == kNone || sessions_[slot].node != node) {
    mismatches_.count(Mismatch::kPgwUnknownTeid);
    ++st.context_not_found;
    respondCauseOnly(node, from, response_type, h.sequence_number, 0, kCauseContextNotFound, now);
    return;
  }
  Session& s = sessions_[slot];
  if (duplicate(s, from, h.sequence_number, static_cast<uint8_t>(type), now)) {
    ++st.duplicates;
    respondAgain(s, from, now);
    return;
  }
  if (s.state != State::kActive) {  // deleted: a request for a session that is gone
    mismatches_.count(Mismatch::kPgwUnknownTeid);
    ++st.context_not_found;
    respondCauseOnly(node, from, response_type, h.sequence_number, 0, kCauseContextNotFound, now);
    return;
  }
  PgwCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.proxy_gateway = nodes_[node].config.proxy_gateway;
  ctx.failover_gateway = nodes_[node].config.failover_gateway;
  ctx.ids = &config_.ids;
  gtp::Result<std::size_t> r;
  if (modify) {
    auto view = viewModifyBearerRequest(message_);
    if (!view) {
      malformed_.count(view.error().code);
      respondCauseOnly(node, from, response_type, h.sequence_number, s.peer_teid,
                       gtp::v2Cause(view.error().code), now);
      return;
    }
    checkModifyBearerRequest(*view, ctx, s.imsi, s.ebi).countInto(mismatches_);
    r = buildModifyBearerResponse(h.sequence_number, s.peer_teid, kCauseAccepted, s.ebi,
                                  s.response);
  } else {
    auto lbi = viewDeleteSessionRequest(message_);
    if (!lbi) {
      malformed_.count(lbi.error().code);
      respondCauseOnly(node, from, response_type, h.sequence_number, s.peer_teid,
                       gtp::v2Cause(lbi.error().code), now);
      return;
    }
    if (!lbi->lbi || *lbi->lbi != s.ebi) mismatches_.count(Mismatch::kPgwBearerContext);
    r = buildDeleteSessionResponse(h.sequence_number, s.peer_teid, kCauseAccepted, s.response);
  }
  if (!r) {
    ++st.internal_errors;
    return;
  }
  keepAnswer(s, static_cast<uint8_t>(type), from, *r, now);
  if (!modify) {
    ++st.sessions_deleted;
    release(slot, now);
  }
  respond(node, from, std::span<const uint8_t>(s.response.data(), s.response_length), now);
}

}  // namespace gtpcp::peer
