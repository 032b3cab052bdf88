#include "tools/peer/pgw.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/gtp/v2/validate.h"
#include "tools/peer/failover.h"
#include "tools/peer/random.h"

namespace gtpcp::peer {

using gtp::v2::MessageType;

PgwEngine::PgwEngine(PgwConfig config, Outbox& outbox, std::vector<PgwNodeStats>& stats,
                     MismatchCounters& mismatches, MalformedCounters& malformed)
    : config_(std::move(config)),
      outbox_(outbox),
      stats_(stats),
      mismatches_(mismatches),
      malformed_(malformed) {
  config_.capacity = std::clamp<uint32_t>(config_.capacity, 1, kMaxCapacity);
  stats_.resize(config_.nodes.size());
  nodes_.resize(config_.nodes.size());
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    Node& n = nodes_[k];
    n.config = config_.nodes[k];
    n.by_imsi.assign(config_.ids.count, 0);
    if (n.config.delay_ns > 0) n.delayed.resize(std::max<uint32_t>(config_.delay_queue, 1));
    // xorshift64* needs a non-zero state; each PGW draws its own sequence.
    n.rng = randomState(config_.seed ^ (0x9e3779b97f4a7c15ull * (k + 1)));
  }
  sessions_.resize(config_.capacity);
  free_.resize(config_.capacity);
  for (uint32_t i = 0; i < config_.capacity; ++i) free_[i] = i;
  free_count_ = config_.capacity;
  // A session has at most one dedicated bearer request and one triggered
  // request outstanding at a time, and a subscriber one session up.
  const std::size_t per_session =
      (config_.dedicated_bearer ? 1 : 0) + (config_.commands ? 1 : 0);
  outgoing_.resize(per_session *
                   std::min<std::size_t>(config_.capacity, std::size_t{config_.ids.count} + 16));
  outgoing_free_.reserve(outgoing_.size());
  for (std::size_t i = outgoing_.size(); i > 0; --i)
    outgoing_free_.push_back(static_cast<uint32_t>(i - 1));
  if (!outgoing_.empty()) {
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      nodes_[k].outgoing.init(outgoing_.size());
      nodes_[k].recent.init(kRecent);
      nodes_[k].seq_next = (config_.sequence_seed + static_cast<uint32_t>(k) * 0x2a3b1u) &
                           (kCommandBit - 1);
    }
  }
}

bool PgwEngine::dropNow(Node& n) noexcept {
  if (n.config.drop <= 0) return false;
  const uint64_t r = nextRandom(n.rng);
  return static_cast<double>(r >> 11) * 0x1.0p-53 < n.config.drop;
}

void PgwEngine::respond(uint32_t node, const Endpoint& to, std::span<const uint8_t> bytes,
                        int64_t now) noexcept {
  Node& n = nodes_[node];
  if (n.config.delay_ns > 0 && bytes.size() <= kCachedResponse) {
    if (n.delayed_count < n.delayed.size()) {
      Delayed& d = n.delayed[(n.delayed_head + n.delayed_count) % n.delayed.size()];
      d.due = now + n.config.delay_ns;
      d.to = to;
      d.length = static_cast<uint16_t>(bytes.size());
      std::memcpy(d.bytes.data(), bytes.data(), bytes.size());
      ++n.delayed_count;
      ++stats_[node].delayed;
      return;
    }
    ++stats_[node].delay_queue_full;
  }
  auto buf = outbox_.reserve(n.config.socket);
  if (buf.size() < bytes.size()) {
    ++stats_[node].internal_errors;
    return;
  }
  std::memcpy(buf.data(), bytes.data(), bytes.size());
  outbox_.commit(n.config.socket, to, bytes.size());
}

void PgwEngine::respondCauseOnly(uint32_t node, const Endpoint& to, MessageType type, uint32_t seq,
                                 uint32_t teid, uint8_t cause, int64_t now) noexcept {
  auto r = buildCauseOnlyResponse(type, seq, teid, cause, scratch_);
  if (!r) {
    ++stats_[node].internal_errors;
    return;
  }
  respond(node, to, std::span<const uint8_t>(scratch_.data(), *r), now);
}

void PgwEngine::onTimers(int64_t now) noexcept {
  for (Node& n : nodes_) {
    while (n.delayed_count > 0) {
      Delayed& d = n.delayed[n.delayed_head];
      if (d.due > now) break;
      auto buf = outbox_.reserve(n.config.socket);
      std::memcpy(buf.data(), d.bytes.data(), d.length);
      outbox_.commit(n.config.socket, d.to, d.length);
      n.delayed_head = (n.delayed_head + 1) % n.delayed.size();
      --n.delayed_count;
    }
  }
  while (outgoing_list_.head() != kNone) {
    const uint32_t r = outgoing_list_.head();
    Outgoing& o = outgoing_[r];
    if (o.deadline > now) break;
    outgoing_list_.remove(r);
    ProcedureCounters& c = stats_[o.node].procedures[static_cast<std::size_t>(o.procedure)];
    if (o.retries < config_.n3) {
      ++o.retries;
      ++c.retransmissions;
      auto buf = outbox_.reserve(nodes_[o.node].config.socket);
      std::memcpy(buf.data(), o.bytes.data(), o.length);
      outbox_.commit(nodes_[o.node].config.socket, o.to, o.length);
      outgoing_list_.append(r, now + config_.t3_ns);
    } else {
      ++c.timeouts;
      close(r, true);
    }
  }
}

int64_t PgwEngine::nextTimer() const noexcept {
  int64_t next = outgoing_list_.nextDeadline();
  for (const Node& n : nodes_)
    if (n.delayed_count > 0) next = std::min(next, n.delayed[n.delayed_head].due);
  return next;
}

uint32_t PgwEngine::nextSequence(Node& n) noexcept {
  const uint32_t seq = n.seq_next;
  n.seq_next = (n.seq_next + 1) & (kCommandBit - 1);  // the top bit is for command-triggered requests
  return seq;
}

template <class Build>
uint32_t PgwEngine::prepare(uint32_t slot, Procedure p, uint32_t seq, uint8_t ebi,
                            Build&& build) noexcept {
  const Session& s = sessions_[slot];
  PgwNodeStats& st = stats_[s.node];
  if (outgoing_free_.empty()) {
    ++st.requests_refused;
    return kNone;
  }
  const uint32_t r = outgoing_free_.back();
  Outgoing& o = outgoing_[r];
  auto built = build(std::span<uint8_t>(o.bytes));
  if (!built) {
    ++st.internal_errors;
    return kNone;
  }
  outgoing_free_.pop_back();
  o.length = static_cast<uint16_t>(*built);
  o.imsi = s.imsi;
  // Where the session's requests come from (the proxy), at the GTP-C port.
  o.to = Endpoint{s.last_src.addr, kGtpcPort};
  o.slot = slot;
  o.seq = seq;
  o.gen = s.gen;
  o.node = s.node;
  o.ebi = ebi;
  o.retries = 0;
  o.procedure = p;
  nodes_[s.node].outgoing.insert(seq, r);  // cannot fail: twice as many slots as records
  ++outstanding_;
  ++st.procedures[static_cast<std::size_t>(p)].started;
  return r;
}

void PgwEngine::send(uint32_t r, int64_t now) noexcept {
  Outgoing& o = outgoing_[r];
  respond(o.node, o.to, std::span<const uint8_t>(o.bytes.data(), o.length), now);
  outgoing_list_.append(r, now + nodes_[o.node].config.delay_ns + config_.t3_ns);
}

void PgwEngine::close(uint32_t r, bool timed_out) noexcept {
  Outgoing& o = outgoing_[r];
  Node& n = nodes_[o.node];
  n.outgoing.erase(o.seq);
  n.recent.remember(o.seq, timed_out);
  outgoing_free_.push_back(r);  // within the capacity reserved
  --outstanding_;
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

void PgwEngine::count(MismatchSet ms, uint32_t node, Procedure p) noexcept {
  if (ms.empty()) return;
  ++stats_[node].procedures[static_cast<std::size_t>(p)].mismatches;
  ms.countInto(mismatches_);
}

bool PgwEngine::duplicate(const Session& s, const Endpoint& from, uint32_t seq, uint8_t type,
                          int64_t now) const noexcept {
  const PgwNodeConfig& n = nodes_[s.node].config;
  return s.state != State::kFree && s.last_type == type && s.last_seq == seq &&
         proxyPeer(s.last_src, n.proxy_gateway, n.failover_gateway) ==
             proxyPeer(from, n.proxy_gateway, n.failover_gateway) &&
         now - s.last_time < config_.duplicate_window_ns && s.response_length > 0;
}

void PgwEngine::keepAnswer(Session& s, uint8_t type, const Endpoint& from, std::size_t length,
                           int64_t now) noexcept {
  s.response_length = static_cast<uint8_t>(length);
  s.last_type = type;
  s.last_seq = message_.header().sequence_number;
  s.last_src = from;
  s.last_time = now;
}

uint32_t PgwEngine::sessionOfTeid(uint32_t teid) const noexcept {
  const uint32_t low = teid & 0x00ffffff;
  if (low == 0 || low > sessions_.size()) return kNone;
  const uint32_t slot = low - 1;
  const Session& s = sessions_[slot];
  if (s.state == State::kFree || s.gen != static_cast<uint8_t>(teid >> 24)) return kNone;
  return slot;
}

uint32_t PgwEngine::allocate(int64_t now) noexcept {
  if (free_count_ == 0) return kNone;
  const uint32_t slot = free_[free_head_];
  free_head_ = (free_head_ + 1) % free_.size();
  --free_count_;
  Session& s = sessions_[slot];
  if (s.state == State::kDeleted && now - s.freed_at < config_.duplicate_window_ns)
    ++stats_[s.node].dup_window_evictions;
  const uint8_t gen = static_cast<uint8_t>(s.gen + 1);
  s = Session{};
  s.gen = gen;
  return slot;
}

void PgwEngine::release(uint32_t slot, int64_t now) noexcept {
  Session& s = sessions_[slot];
  Node& n = nodes_[s.node];
  uint32_t index = 0;
  if (config_.ids.indexOfImsi(s.imsi, index) && n.by_imsi[index] == slot + 1) n.by_imsi[index] = 0;
  s.state = State::kDeleted;  // keeps answering duplicates until reused
  s.freed_at = now;
  free_[(free_head_ + free_count_) % free_.size()] = slot;
  ++free_count_;
  if (stats_[s.node].sessions_up > 0) --stats_[s.node].sessions_up;
}

void PgwEngine::onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                           int64_t now) noexcept {
  if (node >= nodes_.size()) return;
  Node& n = nodes_[node];
  PgwNodeStats& st = stats_[node];
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
    case MessageType::kEchoRequest: {
      if (dropNow(n)) {
        ++st.dropped;
        return;
      }
      ++st.echo_requests;
      auto r = buildEchoResponse(message_.header().sequence_number, config_.recovery, scratch_);
      if (r) respond(node, from, std::span<const uint8_t>(scratch_.data(), *r), now);
      return;
    }
    case MessageType::kModifyBearerCommand:
      if (!config_.commands) {
        mismatches_.count(Mismatch::kPgwUnexpectedMessage);
        return;
      }
      [[fallthrough]];
    case MessageType::kCreateSessionRequest:
    case MessageType::kModifyBearerRequest:
    case MessageType::kDeleteSessionRequest:
      if (dropNow(n)) {
        ++st.dropped;
        return;
      }
      break;
    case MessageType::kCreateBearerResponse:
    case MessageType::kUpdateBearerResponse:
    case MessageType::kDeleteBearerResponse:
      if (outgoing_.empty()) {
        mismatches_.count(Mismatch::kPgwUnexpectedMessage);
        return;
      }
      onResponse(node, now);
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
      respond(node, from, std::span<const uint8_t>(s.response.data(), s.response_length), now);
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
  if (n.config.reject_cause != 0) {
    ++st.sessions_rejected;
    a.cause = n.config.reject_cause;
    auto r = buildCreateSessionResponse(a, scratch_);
    if (r) respond(node, from, std::span<const uint8_t>(scratch_.data(), *r), now);
    return;
  }
  if (existing != kNone && sessions_[existing].state == State::kActive) {
    // TS 23.401: a new PDN connection request for a subscriber that has one
    // replaces it here (one APN, one default bearer per subscriber).
    ++st.sessions_replaced;
    release(existing, now);
  }
  const uint32_t slot = allocate(now);
  if (slot == kNone) {
    ++st.no_resources;
    ++st.sessions_rejected;
    a.cause = kCauseNoResources;
    auto r = buildCreateSessionResponse(a, scratch_);
    if (r) respond(node, from, std::span<const uint8_t>(scratch_.data(), *r), now);
    return;
  }
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
    respond(node, from, std::span<const uint8_t>(s.response.data(), s.response_length), now);
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
  uint32_t r = kNone;
  if (!n.outgoing.find(h.sequence_number, r)) {
    if (bool timed_out = false; n.recent.find(h.sequence_number, timed_out))
      ++(timed_out ? stats_[node].late_responses : stats_[node].duplicate_responses);
    else
      mismatches_.count(Mismatch::kPgwUnmatchedResponse);
    return;
  }
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
                       ? checkCreateBearerResponse(*view, ctx, o.imsi, o.ebi)
                       : checkBearerResponse(*view, o.ebi);
  // The PGW's own TEID of the session the request named.
  if (!h.teidPresent() || h.teid != teidOf(o.slot, o.gen)) ms.add(Mismatch::kPgwHeaderTeid);
  count(ms, node, o.procedure);
  if (!view->cause || !causeAccepted(*view->cause)) return;
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
    respond(node, from, std::span<const uint8_t>(s.response.data(), s.response_length), now);
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
