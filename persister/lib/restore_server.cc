#include "restore_server.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "redis_slot.h"
#include "common/session/record.h"
#include "common/session/teid.h"

namespace gtpcp::persister {

namespace {
// The hash field of a record's routing names.
const int kRoutingField = session::fieldOf(session::Attribute::kRouting, 0);
}  // namespace

using session::LookupKind;
using session::RestoreOutcome;

RestoreServer::RestoreServer(ring::Consumer& lookups, ring::Producer& answers, ring::Doorbell worker_bell,
                             RedisClient& redis, const KeyNames& keys, PersisterCounters& counters)
    : lookups_(lookups), answers_(answers), bell_(worker_bell), redis_(redis), keys_(keys), counters_(counters) {
  for (uint32_t i = 0; i < kMaxOutstanding; ++i) {
    pending_[i].server = this;
    pending_[i].next_free = i + 1;
  }
  teids_.reserve(session::kStoredTeidsPerChunk);
}

bool RestoreServer::turn() noexcept {
  bool work = false;
  while (outstanding_ < kMaxOutstanding) {
    auto r = lookups_.peek();
    if (!r) break;
    work = true;
    const auto kind = static_cast<LookupKind>(r->meta->flags);
    Pending& p = pending_[free_];
    p.kind = kind;
    p.partition = static_cast<uint16_t>(r->meta->aux);
    p.access_teid = 0;
    p.imsi_length = 0;
    RedisErrc submitted = RedisErrc::kBadCommand;
    if (kind == LookupKind::kSession && r->payload.size() >= sizeof(session::SessionLookup)) {
      session::SessionLookup q;
      std::memcpy(&q, r->payload.data(), sizeof q);
      p.access_teid = q.access_teid;
      p.partition = q.partition;
      key_ = keys_.session(q.partition, q.access_teid);
      const std::string_view argv[] = {"HMGET", key_, session::kCoreField, session::fieldName(kRoutingField)};
      submitted = redis_.submit(keySlot(key_), argv, RedisCompletion{&RestoreServer::completed, &p});
    } else if (kind == LookupKind::kStoredTeids && r->payload.size() >= sizeof(session::StoredTeidsLookup)) {
      session::StoredTeidsLookup q;
      std::memcpy(&q, r->payload.data(), sizeof q);
      p.partition = q.partition;
      key_ = keys_.teids(q.partition);
      const std::string_view argv[] = {"SMEMBERS", key_};
      submitted = redis_.submit(keySlot(key_), argv, RedisCompletion{&RestoreServer::completed, &p});
    } else if (kind == LookupKind::kSubscriber && r->payload.size() >= sizeof(session::SubscriberLookup)) {
      session::SubscriberLookup q;
      std::memcpy(&q, r->payload.data(), sizeof q);
      p.partition = q.partition;
      p.imsi_length = std::min<uint8_t>(q.imsi_length, sizeof q.imsi);
      std::memcpy(p.imsi, q.imsi, sizeof q.imsi);
      key_ = keys_.imsi(q.partition, std::string_view(p.imsi, p.imsi_length));
      const std::string_view argv[] = {"SMEMBERS", key_};
      submitted = redis_.submit(keySlot(key_), argv, RedisCompletion{&RestoreServer::completed, &p});
    }
    lookups_.pop();
    counters_.lookups_received.add();
    if (submitted == RedisErrc::kOk) {
      free_ = p.next_free;
      ++outstanding_;
      continue;
    }
    // Not accepted (the client's queue is full, or a torn look-up): the
    // worker hears "failed" now rather than waiting for its timeout.
    counters_.lookups_failed.add();
    if (p.kind == LookupKind::kSession) {
      session::SessionRestore a{};
      a.access_teid = p.access_teid;
      a.outcome = static_cast<uint8_t>(RestoreOutcome::kFailed);
      push(LookupKind::kSession, p.partition, {reinterpret_cast<const uint8_t*>(&a), sizeof a});
    } else if (p.kind == LookupKind::kStoredTeids) {
      const session::StoredTeidsChunk c{p.partition, static_cast<uint8_t>(RestoreOutcome::kFailed), 1, 0};
      push(LookupKind::kStoredTeids, p.partition, {reinterpret_cast<const uint8_t*>(&c), sizeof c});
    } else if (p.kind == LookupKind::kSubscriber && p.imsi_length != 0) {
      failSubscriber(p);
    }
  }
  if (work) {
    lookups_.release();
    flush();
  }
  return work;
}

void RestoreServer::completed(void* user, const RedisResult& result) noexcept {
  auto& p = *static_cast<Pending*>(user);
  RestoreServer& s = *p.server;
  if (p.kind == LookupKind::kSession) {
    s.answerSession(p, result);
  } else if (p.kind == LookupKind::kSubscriber) {
    s.answerSubscriber(p, result);
  } else {
    s.answerStoredTeids(p, result);
  }
  p.next_free = s.free_;
  s.free_ = static_cast<uint32_t>(&p - s.pending_.data());
  --s.outstanding_;
  s.flush();
}

void RestoreServer::answerSession(const Pending& p, const RedisResult& result) noexcept {
  session::SessionRestore a{};
  a.access_teid = p.access_teid;
  a.outcome = static_cast<uint8_t>(RestoreOutcome::kFailed);
  if (result.error == RedisErrc::kOk && result.reply != nullptr) {
    // [core, rt]: core nil, the session is not stored; rt nil, a record
    // written before names (its indexes stand).
    const redisReply* core = result.reply->type == REDIS_REPLY_ARRAY && result.reply->elements == 2
                                 ? result.reply->element[0] : nullptr;
    const redisReply* routing = core != nullptr ? result.reply->element[1] : nullptr;
    if (core != nullptr && core->type == REDIS_REPLY_NIL) {
      a.outcome = static_cast<uint8_t>(RestoreOutcome::kAbsent);
      counters_.lookups_absent.add();
    } else if (core != nullptr && core->type == REDIS_REPLY_STRING &&
               record_.ParseFromArray(core->str, static_cast<int>(core->len)) &&
               record_.proxy().access_teid() == p.access_teid && slotFromRecord(record_, a.record)) {
      a.outcome = static_cast<uint8_t>(RestoreOutcome::kFound);
      counters_.lookups_found.add();
      if (routing != nullptr && routing->type == REDIS_REPLY_STRING &&
          record_.ParseFromArray(routing->str, static_cast<int>(routing->len))) {
        session::routingNamesOf(record_, a.names);
      }
    }
  }
  if (a.outcome == static_cast<uint8_t>(RestoreOutcome::kFailed)) counters_.lookups_failed.add();
  push(LookupKind::kSession, p.partition, {reinterpret_cast<const uint8_t*>(&a), sizeof a});
}

void RestoreServer::answerStoredTeids(const Pending& p, const RedisResult& result) noexcept {
  session::StoredTeidsChunk c{p.partition, static_cast<uint8_t>(RestoreOutcome::kFailed), 1, 0};
  if (result.error != RedisErrc::kOk || result.reply == nullptr || result.reply->type != REDIS_REPLY_ARRAY) {
    counters_.lookups_failed.add();
    push(LookupKind::kStoredTeids, p.partition, {reinterpret_cast<const uint8_t*>(&c), sizeof c});
    return;
  }
  const redisReply& r = *result.reply;
  teids_.clear();
  for (std::size_t i = 0; i < r.elements; ++i) {
    const redisReply* e = r.element[i];
    uint32_t teid = 0;
    if (e->type != REDIS_REPLY_STRING) continue;
    const auto [end, ec] = std::from_chars(e->str, e->str + e->len, teid, 16);
    if (ec == std::errc() && end == e->str + e->len && teid != 0) teids_.push_back(teid);
  }
  // In slot order: a worker reserving them raises its high-water marks once.
  std::sort(teids_.begin(), teids_.end());
  c.outcome = static_cast<uint8_t>(RestoreOutcome::kFound);
  std::size_t at = 0;
  do {
    const std::size_t n = std::min<std::size_t>(teids_.size() - at, session::kStoredTeidsPerChunk);
    c.count = static_cast<uint32_t>(n);
    c.last = at + n == teids_.size() ? 1 : 0;
    if (!push(LookupKind::kStoredTeids, p.partition, {reinterpret_cast<const uint8_t*>(&c), sizeof c},
              {reinterpret_cast<const uint8_t*>(teids_.data() + at), n * sizeof(uint32_t)})) {
      return;  // the worker asks again after its pause
    }
    at += n;
  } while (at < teids_.size());
  counters_.lookups_found.add();
}

void RestoreServer::failSubscriber(const Pending& p) noexcept {
  session::SubscriberSessions a{};
  a.partition = p.partition;
  a.outcome = static_cast<uint8_t>(RestoreOutcome::kFailed);
  a.imsi_length = p.imsi_length;
  std::memcpy(a.imsi, p.imsi, sizeof a.imsi);
  push(LookupKind::kSubscriber, p.partition, {reinterpret_cast<const uint8_t*>(&a), sizeof a});
}

void RestoreServer::answerSubscriber(const Pending& p, const RedisResult& result) noexcept {
  if (result.error != RedisErrc::kOk || result.reply == nullptr || result.reply->type != REDIS_REPLY_ARRAY) {
    counters_.lookups_failed.add();
    failSubscriber(p);
    return;
  }
  // Members are session keys: "...:s:<access TEID, 8 hex digits>".
  uint32_t teids[session::kMaxSubscriberSessions];
  uint32_t n = 0;
  const redisReply& r = *result.reply;
  for (std::size_t i = 0; i < r.elements && n < session::kMaxSubscriberSessions; ++i) {
    const redisReply* e = r.element[i];
    if (e->type != REDIS_REPLY_STRING || e->len < 8) continue;
    const char* hex = e->str + e->len - 8;
    uint32_t teid = 0;
    const auto [end, ec] = std::from_chars(hex, hex + 8, teid, 16);
    if (ec == std::errc() && end == hex + 8 && teid != 0) teids[n++] = teid;
  }
  session::SubscriberSessions a{};
  a.partition = p.partition;
  a.outcome = static_cast<uint8_t>(RestoreOutcome::kFound);
  a.imsi_length = p.imsi_length;
  std::memcpy(a.imsi, p.imsi, sizeof a.imsi);
  a.count = n;
  counters_.lookups_found.add();
  push(LookupKind::kSubscriber, p.partition, {reinterpret_cast<const uint8_t*>(&a), sizeof a},
       {reinterpret_cast<const uint8_t*>(teids), n * sizeof(uint32_t)});
}

bool RestoreServer::push(LookupKind kind, uint16_t partition, std::span<const uint8_t> a,
                         std::span<const uint8_t> b) noexcept {
  ring::DatagramMeta meta{};
  meta.flags = static_cast<uint16_t>(kind);
  meta.aux = partition;
  uint8_t* out = answers_.reserve(meta, a.size() + b.size());
  if (out == nullptr) {
    counters_.restore_ring_full.add();
    return false;
  }
  std::memcpy(out, a.data(), a.size());
  if (!b.empty()) std::memcpy(out + a.size(), b.data(), b.size());
  answers_.commit(a.size() + b.size());
  return true;
}

void RestoreServer::flush() noexcept {
  if (answers_.unpublishedSlots() == 0) return;
  answers_.publish();
  bell_.ring();
}

}  // namespace gtpcp::persister
