#include "tools/peer/sgw.h"

#include <algorithm>
#include <utility>

#include "common/gtp/v2/validate.h"

namespace gtpcp::peer {

using gtp::v2::MessageType;

namespace {

uint32_t inverseMod32(uint32_t a) noexcept {
  uint32_t x = a;  // Newton's iteration: each step doubles the correct low bits
  for (int i = 0; i < 5; ++i) x *= 2u - a * x;
  return x;
}

}  // namespace

SgwEngine::SgwEngine(SgwConfig config, Outbox& outbox, SgwStats& stats,
                     MismatchCounters& mismatches, MalformedCounters& malformed)
    : config_(std::move(config)),
      outbox_(outbox),
      stats_(stats),
      mismatches_(mismatches),
      malformed_(malformed) {
  for (const auto& text : config_.apns) {
    gtp::v2::Apn apn;
    for (char c : text) apn.text.push(c);
    apns_.push_back(apn);
  }
  if (apns_.empty()) apns_.push_back(gtp::v2::Apn{});
  const uint32_t count = config_.ids.count;
  subs_.resize(count);
  // The SGW TEID of subscriber i is (i + 1) * multiplier mod 2^32: unique,
  // never 0, and reversible without a table. Pick a multiplier that never
  // gives 0xffffffff in the range.
  for (;;) {
    teid_inverse_ = inverseMod32(teid_multiplier_);
    const uint32_t reserved = 0xffffffffu * teid_inverse_;  // i + 1 that maps to 0xffffffff
    if (reserved == 0 || reserved > count) break;
    teid_multiplier_ += 2;
  }
  nodes_.resize(config_.nodes.size());
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    Node& n = nodes_[k];
    n.addr = config_.nodes[k].addr;
    n.proxy = config_.nodes[k].proxy;
    n.socket = config_.nodes[k].socket;
    n.table.init(count / nodes_.size() + 1);
    n.recent.assign(kRecent, Recent{});
    // Per-node counters start at different values unless --same-sequence.
    const uint32_t offset = config_.same_sequence ? 0 : static_cast<uint32_t>(k) * 0x2a3b1u;
    n.seq_next = (config_.sequence_seed + offset) & 0x7fffff;
  }
  for (uint32_t i = 0; i < count; ++i) push(nodes_[nodeOf(i)], i);
  // One network deletion per attached subscriber, and room for requests
  // naming none; bounded, as the window is a minute and deletions are paced.
  answers_.init(std::clamp<std::size_t>(count, 1024, std::size_t{1} << 18),
                config_.duplicate_window_ns);
}

uint32_t SgwEngine::sgwTeid(uint32_t index) const noexcept {
  return (index + 1) * teid_multiplier_;
}

bool SgwEngine::indexOfTeid(uint32_t teid, uint32_t& index) const noexcept {
  const uint32_t v = teid * teid_inverse_;
  if (v == 0 || v > config_.ids.count) return false;
  index = v - 1;
  return true;
}

void SgwEngine::setPhase(SgwPhase phase, bool measured) noexcept {
  phase_ = phase;
  measured_ = measured;
  if (phase == SgwPhase::kAttach)
    for (Node& n : nodes_) n.attach_left = n.q_size;
}

bool SgwEngine::phaseExhausted() const noexcept {
  switch (phase_) {
    case SgwPhase::kIdle: return true;
    case SgwPhase::kModify: return false;
    case SgwPhase::kLifecycle: return config_.cycles != 0 && finished_ == subs_.size();
    case SgwPhase::kAttach:
      for (const Node& n : nodes_)
        if (n.attach_left != 0 && n.q_size != 0) return false;
      return true;
    case SgwPhase::kDetach:
      for (const Node& n : nodes_)
        if (n.q_size != 0) return false;
      return true;
  }
  return true;
}

void SgwEngine::push(Node& n, uint32_t index) noexcept {
  subs_[index].qnext = kNil;
  if (n.q_tail == kNil)
    n.q_head = index;
  else
    subs_[n.q_tail].qnext = index;
  n.q_tail = index;
  ++n.q_size;
}

uint32_t SgwEngine::pop(Node& n) noexcept {
  const uint32_t index = n.q_head;
  if (index == kNil) return kNil;
  n.q_head = subs_[index].qnext;
  if (n.q_head == kNil) n.q_tail = kNil;
  --n.q_size;
  return index;
}

uint64_t SgwEngine::issue(uint64_t tokens, int64_t now) noexcept {
  if (nodes_.empty() || phase_ == SgwPhase::kIdle) return 0;
  uint64_t used = 0;
  for (uint64_t t = 0; t < tokens; ++t) {
    // Round robin over the nodes; with --same-sequence strictly so (each
    // node's n-th request carries the same number), else a node with no
    // subscriber free passes its turn to the next.
    const std::size_t tries = config_.same_sequence ? 1 : nodes_.size();
    bool started = false;
    for (std::size_t k = 0; k < tries && !started; ++k) {
      Node& n = nodes_[rr_];
      rr_ = (rr_ + 1) % nodes_.size();
      started = startNext(n, now);
    }
    if (started) {
      ++used;
    } else {
      // Leftover tokens once the phase has nothing more to start are not
      // starvation: the runner is about to move on.
      if (phaseExhausted()) break;
      ++stats_.starved;
    }
  }
  return used;
}

bool SgwEngine::startNext(Node& n, int64_t now) noexcept {
  for (;;) {
    if (phase_ == SgwPhase::kAttach && n.attach_left == 0) return false;
    const uint32_t index = pop(n);
    if (index == kNil) return false;
    Sub& s = subs_[index];
    switch (phase_) {
      case SgwPhase::kIdle: return false;
      case SgwPhase::kAttach:
        --n.attach_left;
        if (s.state != State::kIdle) {
          push(n, index);  // already attached: keep it for the next phase
          continue;
        }
        start(index, Txn::kCreate, now);
        return true;
      case SgwPhase::kModify:
        if (s.state != State::kEstablished) continue;  // rejected at attach: parked
        start(index, Txn::kModify, now);
        return true;
      case SgwPhase::kDetach:
        if (s.state != State::kEstablished) continue;
        start(index, Txn::kDelete, now);
        return true;
      case SgwPhase::kLifecycle:
        if (s.state == State::kIdle) {
          start(index, Txn::kCreate, now);
        } else if (s.state == State::kEstablished) {
          start(index, s.modifies_done < config_.modifies ? Txn::kModify : Txn::kDelete, now);
        } else {
          continue;
        }
        return true;
    }
  }
}

void SgwEngine::start(uint32_t index, Txn txn, int64_t now) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  s.txn = txn;
  s.seq = n.seq_next;
  n.seq_next = (n.seq_next + 1) & 0x7fffff;  // the top bit is for command-triggered requests
  s.retries = 0;
  s.first_sent = now;
  s.measured = measured_;
  s.state = txn == Txn::kCreate   ? State::kCreating
            : txn == Txn::kModify ? State::kModifying
                                  : State::kDeleting;
  ++stats_.attempted[static_cast<std::size_t>(txn)];
  if (measured_) ++stats_.measured_attempted;
  n.table.insert(s.seq, index);  // cannot fail: twice as many slots as subscribers
  ++outstanding_;
  if (!send(index)) {
    abandon(index);
    return;
  }
  link(index, now + config_.t3_ns);
}

bool SgwEngine::send(uint32_t index) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  Endpoint to = n.proxy;
  // Later requests go where the Create Session Response's control F-TEID
  // points (the proxy), except through a bare relay.
  if (s.txn != Txn::kCreate && !config_.relay) to.addr = s.pgw_addr;
  auto buf = outbox_.reserve(n.socket);
  gtp::Result<std::size_t> r;
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
      r = buildCreateSessionRequest(a, buf);
      break;
    }
    case Txn::kModify: {
      ModifyBearerRequestArgs a;
      a.sequence = s.seq;
      a.header_teid = s.pgw_teid;
      a.index = index;
      a.ids = &config_.ids;
      a.sgw_addr = n.addr;
      a.modify_count = s.modifies_total;
      r = buildModifyBearerRequest(a, buf);
      break;
    }
    case Txn::kDelete:
    case Txn::kCount:
      r = buildDeleteSessionRequest(s.seq, s.pgw_teid, kDefaultEbi, buf);
      break;
  }
  if (!r) {
    ++stats_.internal_errors;
    return false;
  }
  outbox_.commit(n.socket, to, *r);
  return true;
}

void SgwEngine::link(uint32_t index, int64_t deadline) noexcept {
  // T3 is the same for every request, so appending keeps the list in
  // deadline order.
  Sub& s = subs_[index];
  s.deadline = deadline;
  s.next = kNil;
  s.prev = out_tail_;
  if (out_tail_ == kNil)
    out_head_ = index;
  else
    subs_[out_tail_].next = index;
  out_tail_ = index;
}

void SgwEngine::unlink(uint32_t index) noexcept {
  Sub& s = subs_[index];
  if (s.prev == kNil)
    out_head_ = s.next;
  else
    subs_[s.prev].next = s.next;
  if (s.next == kNil)
    out_tail_ = s.prev;
  else
    subs_[s.next].prev = s.prev;
  s.prev = s.next = kNil;
}

void SgwEngine::remember(Node& n, uint32_t seq, uint32_t index, bool timed_out) noexcept {
  n.recent[n.recent_pos] = Recent{seq, index, timed_out};
  n.recent_pos = (n.recent_pos + 1) % kRecent;
}

void SgwEngine::forget(uint32_t index) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  n.table.erase(s.seq);
  remember(n, s.seq, index, true);
  --outstanding_;
}

void SgwEngine::abandon(uint32_t index) noexcept {
  Sub& s = subs_[index];
  forget(index);
  if (s.txn != Txn::kCreate && sessions_up_ > 0) --sessions_up_;
  s.state = State::kAbandoned;
  ++finished_;
}

int64_t SgwEngine::nextTimer() const noexcept {
  return out_head_ == kNil ? std::numeric_limits<int64_t>::max() : subs_[out_head_].deadline;
}

void SgwEngine::onTimers(int64_t now) noexcept {
  while (out_head_ != kNil) {
    const uint32_t index = out_head_;
    Sub& s = subs_[index];
    if (s.deadline > now) break;
    unlink(index);
    const auto t = static_cast<std::size_t>(s.txn);
    if (s.retries < config_.n3) {
      ++s.retries;
      ++stats_.retransmissions[t];
      if (!send(index)) {
        abandon(index);
        continue;
      }
      link(index, now + config_.t3_ns);
    } else {
      ++stats_.timeouts[t];
      abandon(index);
    }
  }
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
  return true;
}

void SgwEngine::answerEcho(Node& n, const Endpoint& from, uint32_t seq) noexcept {
  auto buf = outbox_.reserve(n.socket);
  auto r = buildEchoResponse(seq, config_.recovery, buf);
  if (!r) {
    ++stats_.internal_errors;
    return;
  }
  outbox_.commit(n.socket, from, *r);
  ++stats_.echo_requests_answered;
}

void SgwEngine::sendDeleteBearerResponse(Node& n, const Endpoint& to, uint32_t seq,
                                         const AnswerCache::Answer& a) noexcept {
  auto buf = outbox_.reserve(n.socket);
  auto r = buildDeleteBearerResponse(seq, a.header_teid, a.cause, a.ebi, buf);
  if (!r) {
    ++stats_.internal_errors;
    return;
  }
  outbox_.commit(n.socket, to, *r);
}

bool SgwEngine::attachedOn(uint32_t node, uint32_t teid, uint32_t& index) const noexcept {
  if (!indexOfTeid(teid, index) || nodeOf(index) != node) return false;
  // A creation still in flight has no peer TEID to answer to yet.
  const State st = subs_[index].state;
  return st == State::kEstablished || st == State::kModifying || st == State::kDeleting;
}

void SgwEngine::onDeleteBearerRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept {
  Node& n = nodes_[node];
  const auto& h = message_.header();
  const RequestKey key{from, node, h.sequence_number};
  if (const AnswerCache::Answer* cached = answers_.find(key, now)) {
    ++stats_.delete_bearer_duplicates;
    sendDeleteBearerResponse(n, from, h.sequence_number, *cached);
    return;
  }
  ++stats_.delete_bearer_requests;
  // TS 29.274 §5.5.2: a TEID that names no context is answered with
  // Context Not Found and TEID 0.
  AnswerCache::Answer a{0, kCauseContextNotFound, 0};
  auto view = viewDeleteBearerRequest(message_);
  if (!view) {
    malformed_.count(view.error().code);
    const uint8_t cause = gtp::v2Cause(view.error().code);
    if (cause != 0) a.cause = cause;
  } else {
    ++stats_.delete_bearer_causes[view->cause.value_or(0)];
    uint32_t index = 0;
    if (!h.teidPresent() || !attachedOn(node, h.teid, index)) {
      ++stats_.delete_bearer_unknown;
    } else if (!view->lbi || *view->lbi != kDefaultEbi) {
      // The one PDN connection this subscriber has is not the one named.
      mismatches_.count(Mismatch::kSgwDeleteBearerRequest);
      a.header_teid = subs_[index].pgw_teid;
    } else {
      a = AnswerCache::Answer{subs_[index].pgw_teid, kCauseAccepted, *view->lbi};
      deleteByNetwork(index);
    }
  }
  if (answers_.insert(key, now, a)) ++stats_.answers_evicted;
  sendDeleteBearerResponse(n, from, h.sequence_number, a);
}

void SgwEngine::deleteByNetwork(uint32_t index) noexcept {
  Sub& s = subs_[index];
  // An established subscriber waits in its node's queue; one with a
  // transaction in flight does not.
  const bool queued = s.state == State::kEstablished;
  if (!queued) {
    unlink(index);
    forget(index);
    ++stats_.transactions_cancelled;
  }
  ++stats_.sessions_deleted_by_network;
  if (sessions_up_ > 0) --sessions_up_;
  // Detached: lifecycle attaches it again (a cycle has ended), modify-only
  // and hold leave it alone.
  s.state = State::kIdle;
  ++s.cycles_done;
  if (!queued) {
    afterCompletion(index);
  } else if (config_.cycles != 0 && s.cycles_done >= config_.cycles) {
    s.state = State::kDone;  // startNext() drops it from the queue
    ++finished_;
  }
}

void SgwEngine::finish(uint32_t index, int64_t now) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  unlink(index);
  n.table.erase(s.seq);
  remember(n, s.seq, index, false);
  --outstanding_;
  const auto t = static_cast<std::size_t>(s.txn);
  ++stats_.completed[t];
  if (s.measured) {
    stats_.latency[t].record(static_cast<uint64_t>(now - s.first_sent));
    if (now <= window_end_) ++stats_.completed_in_window;
  }
}

void SgwEngine::afterCompletion(uint32_t index) noexcept {
  Sub& s = subs_[index];
  Node& n = nodes_[nodeOf(index)];
  if (s.state == State::kEstablished) {
    push(n, index);
  } else if (s.state == State::kIdle) {
    if (config_.cycles != 0 && s.cycles_done >= config_.cycles) {
      s.state = State::kDone;
      ++finished_;
    } else if (phase_ == SgwPhase::kLifecycle || phase_ == SgwPhase::kIdle) {
      push(n, index);
    }
    // Modify-only: a subscriber rejected at attach or detached stays out.
  }
}

void SgwEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                           int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  Node& n = nodes_[node];
  auto decoded = message_.decode(bytes);
  if (!decoded) {
    malformed_.count(decoded.error().code);
    return;
  }
  const auto type = message_.messageType();
  const auto& h = message_.header();
  Txn txn;
  switch (type) {
    case MessageType::kEchoRequest:
      answerEcho(n, from, h.sequence_number);
      return;
    case MessageType::kDeleteBearerRequest:
      onDeleteBearerRequest(node, from, now);
      return;
    case MessageType::kCreateSessionResponse: txn = Txn::kCreate; break;
    case MessageType::kModifyBearerResponse: txn = Txn::kModify; break;
    case MessageType::kDeleteSessionResponse: txn = Txn::kDelete; break;
    default:
      mismatches_.count(Mismatch::kSgwUnexpectedMessage);
      return;
  }

  uint32_t index = 0;
  if (!n.table.find(h.sequence_number, index)) {
    for (const Recent& r : n.recent) {
      if (r.seq == h.sequence_number) {
        if (r.timed_out)
          ++stats_.late_responses;
        else
          ++stats_.duplicate_responses;
        return;
      }
    }
    uint32_t owner = 0;
    if (h.teidPresent() && indexOfTeid(h.teid, owner) && nodeOf(owner) == node &&
        (subs_[owner].state == State::kCreating || subs_[owner].state == State::kModifying ||
         subs_[owner].state == State::kDeleting)) {
      mismatches_.count(Mismatch::kSgwSequenceNumber);
    } else {
      mismatches_.count(Mismatch::kSgwUnmatchedResponse);
    }
    return;
  }
  Sub& s = subs_[index];
  if (s.txn != txn) {
    mismatches_.count(Mismatch::kSgwMessageType);
    return;  // keep waiting for the right answer
  }
  auto mandatory = gtp::v2::checkMandatory(message_);
  auto view = viewResponse(message_);
  if (!mandatory || !view) {
    malformed_.count(!mandatory ? mandatory.error().code : view.error().code);
    finish(index, now);
    if (txn != Txn::kCreate && sessions_up_ > 0) --sessions_up_;
    s.state = State::kAbandoned;
    ++finished_;
    return;
  }

  const uint64_t imsi = config_.ids.imsi(index);
  SgwCheckContext ctx;
  ctx.relay = config_.relay;
  ctx.proxy_access = n.proxy.addr;
  ctx.imsi = imsi;
  ctx.expected_rejections = &config_.expected_rejections;
  ctx.local_pgws = config_.local_pgws;
  ctx.local_pgw_causes = config_.local_pgw_causes;
  MismatchSet ms = txn == Txn::kCreate ? checkCreateSessionResponse(*view, ctx)
                                       : checkSimpleResponse(*view, ctx);
  const bool accepted = view->cause && causeAccepted(*view->cause);
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
          s.state = State::kAbandoned;
          ++finished_;
          return;
        }
        ++stats_.sessions_created;
        if (IpAddress pgw; view->pgw_u && fteidSoleAddress(*view->pgw_u, pgw))
          stats_.split.add(pgw);
        if (!learnPgwAddress(n, *view->pgw_c, s.pgw_addr)) {
          s.state = State::kAbandoned;
          ++finished_;
          return;
        }
        s.pgw_teid = view->pgw_c->teid;
        s.state = State::kEstablished;
        s.modifies_done = 0;
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
    case Txn::kDelete:
    case Txn::kCount:
      if (accepted) ++stats_.sessions_deleted;
      if (sessions_up_ > 0) --sessions_up_;
      s.state = State::kIdle;
      ++s.cycles_done;
      break;
  }
  afterCompletion(index);
}

}  // namespace gtpcp::peer
