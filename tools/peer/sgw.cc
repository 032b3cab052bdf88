#include "tools/peer/sgw.h"

#include <algorithm>
#include <utility>

#include "common/gtp/v2/validate.h"
#include "tools/peer/failover.h"
#include "tools/peer/random.h"

namespace gtpcp::peer {

using gtp::v2::MessageType;

namespace {

// The procedure a repeated request of `type` numbered `sequence` belongs to.
Procedure procedureOf(MessageType type, uint32_t sequence) noexcept {
  switch (type) {
    case MessageType::kCreateBearerRequest: return Procedure::kCreateBearer;
    case MessageType::kUpdateBearerRequest:
      return (sequence & kCommandBit) ? Procedure::kTriggeredUpdateBearer : Procedure::kUpdateBearer;
    default: return Procedure::kDeleteBearer;
  }
}

}  // namespace

SgwEngine::SgwEngine(SgwConfig config, Outbox& outbox, SgwStats& stats,
                     MismatchCounters& mismatches, MalformedCounters& malformed)
    // The top bit of a sequence number is for command-triggered requests.
    : AccessCore(config, config.nodes, kCommandBit - 1, outbox, stats, mismatches, malformed),
      config_(std::move(config)),
      apns_(apnsOf<gtp::v2::Apn>(config_.apns)) {
  const uint32_t count = config_.ids.count;
  for (std::size_t k = 0; k < nodes_.size(); ++k) nodes_[k].failover = config_.nodes[k].failover;
  // One network deletion per attached subscriber (and the requests of the
  // procedures asked for), and room for requests naming none; bounded, as
  // the window is a minute and deletions are paced.
  const std::size_t per_subscriber =
      1 + (config_.dedicated_bearer ? 3 : 0) + (config_.commands ? 1 : 0);
  answers_.init(std::clamp<std::size_t>(std::size_t{count} * per_subscriber, 1024,
                                        std::size_t{1} << 20),
                config_.duplicate_window_ns);
  probes_left_ = config_.unknown_teid;
  probe_rng_ = randomState(config_.probe_seed);
}

std::optional<Txn> SgwEngine::lifecycleStep(uint32_t index) noexcept {
  const Sub& s = subs_[index];
  if (s.state == State::kIdle) {
    if (probes_left_ == 0) return Txn::kCreate;
    --probes_left_;
    return Txn::kUnknownTeid;
  }
  if (s.modifies_done < config_.modifies) return Txn::kModify;
  if (config_.commands && s.commands_done < 2) return Txn::kModifyBearerCommand;
  // Detaching now would cross the network's requests for the dedicated
  // bearer: the Delete Bearer Request puts it back.
  if (config_.dedicated_bearer && s.dedicated != Dedicated::kGone) return std::nullopt;
  return Txn::kDelete;
}

uint32_t SgwEngine::nextProbeTeid() noexcept {
  for (;;) {
    const auto teid = static_cast<uint32_t>(nextRandom(probe_rng_) >> 32);
    if (teid != 0 && teid != 0xffffffffu) return teid;  // never allocated (TS 29.274 §5.5.1)
  }
}

void SgwEngine::startTxn(uint32_t index, Txn txn, int64_t now) noexcept {
  switch (txn) {
    case Txn::kCreate: start(index, txn, State::kCreating, now); break;
    case Txn::kModifyBearerCommand: start(index, txn, State::kBusy, now, kCommandBit); break;
    case Txn::kUnknownTeid:
      subs_[index].pgw_teid = nextProbeTeid();
      start(index, txn, State::kProbing, now);
      break;
    default: start(index, txn, State::kBusy, now); break;
  }
}

bool SgwEngine::send(uint32_t index) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  // A probe has no session: it goes to --proxy.
  return sendBuilt(n, destination(index), [&](std::span<uint8_t> buf) -> gtp::Result<std::size_t> {
    switch (s.txn) {
      case Txn::kCreate: {
        CreateSessionRequestArgs a;
        a.sequence = s.seq;
        a.index = index;
        a.ids = &config_.ids;
        a.apn = &apns_[index % apns_.size()];
        a.sgw_addr = n.addr;
        a.sgw_teid = sgwTeid(index);
        a.recovery = config_.recovery;
        return buildCreateSessionRequest(a, buf);
      }
      case Txn::kModify:
      case Txn::kUnknownTeid: {
        ModifyBearerRequestArgs a;
        a.sequence = s.seq;
        a.header_teid = s.pgw_teid;
        a.index = index;
        a.ids = &config_.ids;
        a.sgw_addr = n.addr;
        a.modify_count = s.modifies_total;
        return buildModifyBearerRequest(a, buf);
      }
      case Txn::kModifyBearerCommand: {
        BearerModificationArgs a;
        a.sequence = s.seq;
        a.header_teid = s.pgw_teid;
        a.apn_ambr = commandedAmbr(index);
        a.qos = commandedQos();
        return buildBearerModification(MessageType::kModifyBearerCommand, a, buf);
      }
      case Txn::kDelete:
      case Txn::kCount: break;
    }
    return buildDeleteSessionRequest(s.seq, s.pgw_teid, kDefaultEbi, buf);
  });
}

bool SgwEngine::learnPgwAddress(const Node& n, const gtp::v2::FTeid& f, IpAddress& out) noexcept {
  if (config_.relay) {
    out = n.proxy.addr;  // unused: every request goes to the relay
    return true;
  }
  // None in the node's family: the check counted it (the F-TEID cannot name
  // the proxy), and the node has no way there.
  if (!fteidAddress(f, n.addr.family(), out)) return false;
  // Checked once here rather than on every request sent there.
  if (!config_.allow_non_loopback && !isLoopback(out)) {
    mismatches_.count(Mismatch::kSgwUnsafeDestination);
    return false;
  }
  // Requests go there: a failover moves them as those to --proxy.
  outbox_.noteProxyAddress(out);
  return true;
}

void SgwEngine::sendAnswer(Node& n, const Endpoint& to, uint32_t seq,
                           const AnswerCache::Answer& a) noexcept {
  sendBuilt(n, to, [&](std::span<uint8_t> buf) -> gtp::Result<std::size_t> {
    if (a.type == MessageType::kCreateBearerResponse) {
      CreateBearerResponseArgs args;
      args.sequence = seq;
      args.header_teid = a.header_teid;
      args.cause = a.cause;
      args.ebi = a.ebi;
      args.imsi = config_.ids.imsi(a.index);
      args.sgw_addr = n.addr;
      args.pgw_u_addr = a.pgw_u_addr;
      return buildCreateBearerResponse(args, buf);
    }
    if (a.type == MessageType::kDeleteBearerResponse && !a.bearer_context)
      return buildDeleteBearerResponse(seq, a.header_teid, a.cause, a.ebi, buf);
    return buildBearerResponse(a.type, seq, a.header_teid, a.cause, a.ebi, buf);
  });
}

bool SgwEngine::attachedOn(uint32_t node, uint32_t teid, uint32_t& index) const noexcept {
  if (!indexOfTeid(teid, index) || nodeOf(index) != node) return false;
  // A creation still in flight has no peer TEID to answer to yet.
  switch (subs_[index].state) {
    case State::kEstablished:
    case State::kBusy:
    case State::kWaiting: return true;
    default: return false;
  }
}

void SgwEngine::count(MismatchSet ms, Procedure p) noexcept {
  if (ms.empty()) return;
  ++stats_.procedures[at(p)].mismatches;
  ms.countInto(mismatches_);
}

SgwCheckContext SgwEngine::checkContext(const Node& n, uint32_t index) const noexcept {
  SgwCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.proxy_access = n.proxy.addr;
  ctx.failover_access = n.failover;
  ctx.imsi = config_.ids.imsi(index);
  ctx.expected_rejections = &config_.expected_rejections;
  ctx.local_pgws = config_.local_pgws;
  ctx.local_pgw_causes = config_.local_pgw_causes;
  return ctx;
}

void SgwEngine::onNetworkRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  Node& n = nodes_[node];
  const auto& h = message_.header();
  const auto type = message_.messageType();
  // A repeat from the instance the proxy failed over to is still a repeat.
  const RequestKey key{proxyPeer(from, n.proxy.addr, n.failover), node, h.sequence_number};
  if (const AnswerCache::Answer* cached = answers_.find(key, now)) {
    if (cached->bearer_context)
      ++stats_.procedures[at(procedureOf(type, h.sequence_number))].retransmissions;
    else
      ++stats_.delete_bearer_duplicates;
    sendAnswer(n, from, h.sequence_number, *cached);
    return;
  }
  // TS 29.274 §5.5.2: a TEID that names no context is answered with
  // Context Not Found and TEID 0. Each request type's response follows it.
  AnswerCache::Answer a;
  a.type = static_cast<MessageType>(static_cast<uint8_t>(type) + 1);
  a.cause = kCauseContextNotFound;
  a.bearer_context = type != MessageType::kDeleteBearerRequest;
  auto view = viewBearerRequest(message_);
  auto mandatory = view ? gtp::v2::checkMandatory(message_) : gtp::Result<void>{};
  if (!view || !mandatory) {
    const gtp::Errc code = !view ? view.error().code : mandatory.error().code;
    malformed_.count(code);
    if (const uint8_t cause = gtp::v2Cause(code); cause != 0) a.cause = cause;
    if (type == MessageType::kDeleteBearerRequest) ++stats_.delete_bearer_requests;
  } else if (type == MessageType::kDeleteBearerRequest && view->ebi && !view->lbi) {
    a.bearer_context = true;
    deleteDedicatedBearer(node, *view, a);
  } else if (type == MessageType::kDeleteBearerRequest) {
    deletePdnConnection(node, *view, a);
  } else if (h.sequence_number & kCommandBit) {
    triggeredUpdateBearer(node, *view, a, now);
  } else {
    createOrUpdateDedicatedBearer(node, *view, a);
  }
  if (answers_.insert(key, now, a)) ++stats_.answers_evicted;
  sendAnswer(n, from, h.sequence_number, a);
}

void SgwEngine::deletePdnConnection(uint32_t node, const BearerRequestView& v,
                                    AnswerCache::Answer& a) noexcept {
  const auto& h = message_.header();
  ++stats_.delete_bearer_requests;
  ++stats_.delete_bearer_causes[v.cause.value_or(0)];
  uint32_t index = 0;
  if (!h.teidPresent() || !attachedOn(node, h.teid, index)) {
    ++stats_.delete_bearer_unknown;
  } else if (!v.lbi || *v.lbi != kDefaultEbi) {
    // The one PDN connection this subscriber has is not the one named.
    mismatches_.count(Mismatch::kSgwDeleteBearerRequest);
    a.header_teid = subs_[index].pgw_teid;
  } else {
    a = AnswerCache::Answer{subs_[index].pgw_teid, kCauseAccepted, *v.lbi};
    deleteByNetwork(index);
  }
}

bool SgwEngine::sessionOfRequest(uint32_t node, Procedure p, uint32_t& index) noexcept {
  const auto& h = message_.header();
  ++stats_.procedures[at(p)].started;
  if (h.teidPresent() && attachedOn(node, h.teid, index)) return true;
  MismatchSet ms;
  ms.add(Mismatch::kSgwRequestTeid);
  count(ms, p);
  return false;
}

void SgwEngine::createOrUpdateDedicatedBearer(uint32_t node, const BearerRequestView& v,
                                              AnswerCache::Answer& a) noexcept {
  const bool create = message_.messageType() == MessageType::kCreateBearerRequest;
  const Procedure p = create ? Procedure::kCreateBearer : Procedure::kUpdateBearer;
  uint32_t index = 0;
  if (!sessionOfRequest(node, p, index)) return;
  Sub& s = subs_[index];
  a.header_teid = s.pgw_teid;
  // One dedicated bearer per session: created once, then updated.
  const bool expected = create ? s.dedicated == Dedicated::kNone
                               : s.dedicated == Dedicated::kUp || s.dedicated == Dedicated::kUpdated;
  MismatchSet ms = create ? checkCreateBearerRequest(v, checkContext(nodes_[node], index))
                          : checkUpdateBearerRequest(v, kDedicatedEbi);
  if (!expected) ms.add(Mismatch::kSgwBearerRequest);
  count(ms, p);
  if (!expected) return;
  a.cause = kCauseAccepted;
  a.ebi = kDedicatedEbi;
  if (create) {
    a.index = index;
    if (v.bearer.fteid[1]) fteidSoleAddress(*v.bearer.fteid[1], a.pgw_u_addr);
  }
  s.dedicated = create ? Dedicated::kUp : Dedicated::kUpdated;
  ++stats_.procedures[at(p)].completed;
}

void SgwEngine::deleteDedicatedBearer(uint32_t node, const BearerRequestView& v,
                                      AnswerCache::Answer& a) noexcept {
  uint32_t index = 0;
  if (!sessionOfRequest(node, Procedure::kDeleteBearer, index)) return;
  Sub& s = subs_[index];
  a.header_teid = s.pgw_teid;
  if (v.ebi != kDedicatedEbi ||
      (s.dedicated != Dedicated::kUp && s.dedicated != Dedicated::kUpdated)) {
    MismatchSet ms;
    ms.add(Mismatch::kSgwBearerRequest);
    count(ms, Procedure::kDeleteBearer);
    return;
  }
  a.cause = kCauseAccepted;
  a.ebi = kDedicatedEbi;
  s.dedicated = Dedicated::kGone;
  ++stats_.procedures[at(Procedure::kDeleteBearer)].completed;
  if (s.state == State::kWaiting) endWait(index);  // it waited for this to detach
}

void SgwEngine::triggeredUpdateBearer(uint32_t node, const BearerRequestView& v,
                                      AnswerCache::Answer& a, int64_t now) noexcept {
  const auto& h = message_.header();
  ProcedureCounters& p = stats_.procedures[at(Procedure::kTriggeredUpdateBearer)];
  ++p.started;
  MismatchSet ms;
  // TS 29.274 §7.6: the request a command triggers carries the command's
  // number, the SGW's own: it names the outstanding command.
  uint32_t index = 0;
  if (!nodes_[node].table.find(h.sequence_number, index) ||
      subs_[index].txn != Txn::kModifyBearerCommand) {
    ms.add(Mismatch::kSgwCommandSequence);
    count(ms, Procedure::kTriggeredUpdateBearer);
    if (h.teidPresent() && attachedOn(node, h.teid, index)) a.header_teid = subs_[index].pgw_teid;
    return;
  }
  Sub& s = subs_[index];
  a.header_teid = s.pgw_teid;
  if (!h.teidPresent() || h.teid != sgwTeid(index)) ms.add(Mismatch::kSgwRequestTeid);
  // The first command of a session is answered this way, with what it asked.
  const gtp::v2::Ambr asked = commandedAmbr(index);
  if (s.commands_done != 0 || v.bearer.ebi != kDefaultEbi || !v.bearer.qos ||
      v.bearer.qos->qci != commandedQos().qci || !v.apn_ambr ||
      v.apn_ambr->uplink != asked.uplink || v.apn_ambr->downlink != asked.downlink)
    ms.add(Mismatch::kSgwCommandOutcome);
  count(ms, Procedure::kTriggeredUpdateBearer);
  a.cause = kCauseAccepted;
  a.ebi = kDefaultEbi;
  ++p.completed;
  finish(index, now);
  commandDone(index);
}

void SgwEngine::onFailureIndication(uint32_t index, const ResponseView& v, int64_t now) noexcept {
  const auto& h = message_.header();
  Sub& s = subs_[index];
  ProcedureCounters& p = stats_.procedures[at(Procedure::kFailureIndication)];
  ++p.started;
  MismatchSet ms;
  if (!h.teidPresent() || h.teid != sgwTeid(index)) ms.add(Mismatch::kSgwHeaderTeid);
  // The second command of a session is refused, for a System failure.
  if (s.commands_done != 1 || v.cause != kCauseSystemFailure)
    ms.add(Mismatch::kSgwCommandOutcome);
  else
    ++p.completed;
  count(ms, Procedure::kFailureIndication);
  if (v.cause) ++stats_.causes[*v.cause];
  finish(index, now);
  commandDone(index);
}

void SgwEngine::commandDone(uint32_t index) noexcept {
  Sub& s = subs_[index];
  ++s.commands_done;
  s.state = State::kEstablished;
  afterCompletion(index);
}

void SgwEngine::onProbeAnswer(uint32_t index, const ResponseView& v, int64_t now) noexcept {
  const auto& h = message_.header();
  MismatchSet ms;
  // TS 29.274 §5.5.2: Context Not Found, with TEID 0 (the request had no
  // sender F-TEID to answer to).
  if (message_.messageType() != MessageType::kModifyBearerResponse ||
      v.cause != kCauseContextNotFound)
    ms.add(Mismatch::kSgwUnknownTeidAnswer);
  if (!h.teidPresent() || h.teid != 0) ms.add(Mismatch::kSgwHeaderTeid);
  count(ms, Procedure::kUnknownTeid);
  if (v.cause) ++stats_.causes[*v.cause];
  finish(index, now);
  subs_[index].state = State::kIdle;
  afterCompletion(index);
}

void SgwEngine::deleteByNetwork(uint32_t index) noexcept {
  ++stats_.sessions_deleted_by_network;
  detachByNetwork(index);
}

void SgwEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                           int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  auto decoded = message_.decode(bytes);
  if (!decoded) {
    malformed_.count(decoded.error().code);
    return;
  }
  const bool piggyback = message_.header().piggyback();
  const std::size_t first = message_.header().messageSize();
  onMessage(node, from, now);
  // TS 29.274 §5.5.1: a request may ride on a response (a Create Bearer
  // Request on a Create Session Response); it is handled after it.
  if (!piggyback) return;
  decoded = message_.decode(bytes.subspan(std::min(first, bytes.size())));
  if (!decoded) {
    malformed_.count(decoded.error().code);
    return;
  }
  ++stats_.piggybacked;
  onMessage(node, from, now);
}

void SgwEngine::onMessage(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  Node& n = nodes_[node];
  const auto type = message_.messageType();
  const auto& h = message_.header();
  Txn txn;
  switch (type) {
    case MessageType::kEchoRequest:
      answerEcho(n, from, [&](std::span<uint8_t> buf) {
        return buildEchoResponse(h.sequence_number, config_.recovery, buf);
      });
      return;
    case MessageType::kDeleteBearerRequest:
      onNetworkRequest(node, from, now);
      return;
    case MessageType::kCreateBearerRequest:
    case MessageType::kUpdateBearerRequest:
      // Requests of procedures this run did not ask for stay unexpected.
      if (!config_.dedicated_bearer &&
          !(config_.commands && type == MessageType::kUpdateBearerRequest)) {
        mismatches_.count(Mismatch::kSgwUnexpectedMessage);
        return;
      }
      onNetworkRequest(node, from, now);
      return;
    case MessageType::kCreateSessionResponse: txn = Txn::kCreate; break;
    case MessageType::kModifyBearerResponse: txn = Txn::kModify; break;
    case MessageType::kDeleteSessionResponse: txn = Txn::kDelete; break;
    case MessageType::kModifyBearerFailureIndication: txn = Txn::kModifyBearerCommand; break;
    default:
      mismatches_.count(Mismatch::kSgwUnexpectedMessage);
      return;
  }

  uint32_t index = 0;
  if (!matchResponse(node, h.sequence_number, h.teidPresent(), h.teid,
                     Mismatch::kSgwUnmatchedResponse, Mismatch::kSgwSequenceNumber, index))
    return;
  Sub& s = subs_[index];
  // A probe is a Modify Bearer Request too.
  if (s.txn != txn && !(txn == Txn::kModify && s.txn == Txn::kUnknownTeid)) {
    mismatches_.count(Mismatch::kSgwMessageType);
    return;  // keep waiting for the right answer
  }
  txn = s.txn;
  auto mandatory = gtp::v2::checkMandatory(message_);
  auto view = viewResponse(message_);
  if (!mandatory || !view) {
    malformedAnswer(index, !mandatory ? mandatory.error().code : view.error().code, now);
    return;
  }
  if (txn == Txn::kUnknownTeid) {
    onProbeAnswer(index, *view, now);
    return;
  }
  if (txn == Txn::kModifyBearerCommand) {
    onFailureIndication(index, *view, now);
    return;
  }

  const SgwCheckContext ctx = checkContext(n, index);
  MismatchSet ms = txn == Txn::kCreate ? checkCreateSessionResponse(*view, ctx)
                                       : checkSimpleResponse(*view, ctx);
  const bool accepted = view->cause && gtp::v2::causeAccepted(*view->cause);
  // The header TEID is the SGW's own; 0 only on a rejected creation.
  const bool teid_ok = h.teidPresent() &&
                       (h.teid == sgwTeid(index) || (txn == Txn::kCreate && !accepted && h.teid == 0));
  if (!teid_ok) ms.add(Mismatch::kSgwHeaderTeid);
  ms.countInto(mismatches_);
  if (view->cause) ++stats_.causes[*view->cause];
  finish(index, now);

  switch (txn) {
    case Txn::kCreate:
      if (accepted) {
        if (ms.has(Mismatch::kSgwPgwFteidInvalid)) {
          // No usable F-TEID: the session cannot be continued.
          drop(index);
          return;
        }
        ++stats_.sessions_created;
        if (IpAddress pgw; view->pgw_u && fteidSoleAddress(*view->pgw_u, pgw))
          stats_.split.add(pgw);
        if (!learnPgwAddress(n, *view->pgw_c, s.peer_addr)) {
          drop(index);
          return;
        }
        s.pgw_teid = view->pgw_c->teid;
        s.state = State::kEstablished;
        s.modifies_done = 0;
        s.commands_done = 0;
        s.dedicated = Dedicated::kNone;
        ++sessions_up_;
      } else {
        ++stats_.sessions_rejected;
        s.state = State::kIdle;
        ++s.cycles_done;
      }
      break;
    case Txn::kModify:
      ++s.modifies_done;
      ++s.modifies_total;
      s.state = State::kEstablished;
      break;
    default:
      if (accepted) ++stats_.sessions_deleted;
      if (sessions_up_ > 0) --sessions_up_;
      s.state = State::kIdle;
      ++s.cycles_done;
      break;
  }
  afterCompletion(index);
}

}  // namespace gtpcp::peer
