#include "persister.h"

#include <algorithm>

namespace gtpcp::persister {

Channel::Channel(ring::Consumer& ring, RedisClient& redis, const KeyNames& keys, PersisterCounters& counters,
                 uint32_t max_records, uint64_t retry_pause_ns) noexcept
    : ring_(ring),
      redis_(redis),
      counters_(counters),
      batch_(keys),
      max_records_(max_records),
      retry_pause_ns_(retry_pause_ns) {}

namespace {
enum : uint8_t { kAsked, kHeld, kShort, kMissing, kFailed };
}  // namespace

void Channel::waitForReplicas(uint32_t replicas, uint32_t timeout_ms) noexcept {
  wait_replicas_ = replicas;
  wait_argv_[0] = "WAIT";
  wait_argv_[1] = std::to_string(replicas);
  wait_argv_[2] = std::to_string(timeout_ms);
}

void Channel::sendWaits() noexcept {
  primaries_.clear();
  for (const Commands::Transaction& t : commands_.transactions()) {
    const uintptr_t token = redis_.primaryOf(t.slot);
    bool known = false;
    for (const Primary& p : primaries_) known = known || (token != 0 && p.token == token);
    if (!known) primaries_.push_back(Primary{this, t.slot, token, kAsked, false});
  }
  waiting_ = true;
  for (std::size_t i = 0; i < primaries_.size(); ++i) {
    if (knownReplicated(primaries_[i].token)) {
      sendWait(i);
    } else {
      sendRole(i);
    }
  }
}

bool Channel::knownReplicated(uintptr_t token) const noexcept {
  for (const auto& [t, replicated] : replicated_)
    if (t == token) return token != 0 && replicated;
  return false;
}

void Channel::noteReplicated(uintptr_t token, bool replicated) noexcept {
  for (auto& [t, r] : replicated_) {
    if (t == token) {
      r = replicated;
      return;
    }
  }
  replicated_.emplace_back(token, replicated);
}

void Channel::sendRole(std::size_t i) noexcept {
  primaries_[i].state = kShort;
  const std::string_view argv[] = {"ROLE"};
  ++outstanding_;
  if (redis_.submit(primaries_[i].slot, argv, RedisCompletion{&Channel::roleRead, &primaries_[i]}) !=
      RedisErrc::kOk) {
    --outstanding_;
    primaries_[i].state = kFailed;
  }
}

void Channel::sendWait(std::size_t i) noexcept {
  primaries_[i].state = kAsked;
  primaries_[i].waited = true;
  const std::string_view argv[] = {wait_argv_[0], wait_argv_[1], wait_argv_[2]};
  ++outstanding_;
  counters_.replica_waits.add();
  if (redis_.submit(primaries_[i].slot, argv, RedisCompletion{&Channel::waited, &primaries_[i]}) != RedisErrc::kOk) {
    --outstanding_;
    primaries_[i].state = kFailed;
  }
}

void Channel::waited(void* self, const RedisResult& result) noexcept {
  auto& p = *static_cast<Primary*>(self);
  Channel& c = *p.channel;
  --c.outstanding_;
  if (result.error != RedisErrc::kOk || result.reply == nullptr || result.reply->type != REDIS_REPLY_INTEGER) {
    // The connection went with the writes' fate unknown: written again.
    p.state = kFailed;
    return;
  }
  if (static_cast<uint64_t>(result.reply->integer) >= c.wait_replicas_) {
    p.state = kHeld;
    return;
  }
  // Short: does the primary have the replicas at all?
  c.sendRole(static_cast<std::size_t>(&p - c.primaries_.data()));
}

void Channel::roleRead(void* self, const RedisResult& result) noexcept {
  auto& p = *static_cast<Primary*>(self);
  Channel& c = *p.channel;
  --c.outstanding_;
  // ROLE of a primary: ["master", offset, [[host, port, offset], ...]].
  const redisReply* r = result.error == RedisErrc::kOk ? result.reply : nullptr;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements < 3 || r->element[2]->type != REDIS_REPLY_ARRAY) {
    p.state = kFailed;  // not a primary any more (a failover): written again
    return;
  }
  const bool replicated = r->element[2]->elements >= c.wait_replicas_;
  c.noteReplicated(p.token, replicated);
  // kShort: WAIT (again) next turn.
  p.state = replicated ? kShort : kMissing;
}

void Channel::release() noexcept {
  // RING-R2 (Consumer::release()) pairs with RING-A2 in the worker's
  // producer: the slots are its again.
  ring_.release();
  counters_.batches_written.add();
  if (lag_ != nullptr && oldest_wall_ns_ != 0) {
    const uint64_t now = wall_clock_();
    // A wall clock stepped back since the change was stamped: 0, so that
    // every batch released is in the histogram.
    lag_->observe(now > oldest_wall_ns_ ? now - oldest_wall_ns_ : 0);
  }
  counters_.pending_changes.set(0);
  in_flight_ = false;
  waiting_ = false;
  commands_.clear();
  records_ = 0;
  oldest_wall_ns_ = 0;
}

void Channel::completed(void* self, const RedisResult& result) noexcept {
  auto* c = static_cast<Channel*>(self);
  --c->outstanding_;
  // EXEC answers an array when the transaction ran, nil when it was aborted;
  // a lone HSET answers an integer.
  const bool ok = result.error == RedisErrc::kOk && result.reply != nullptr &&
                  (result.reply->type == REDIS_REPLY_ARRAY || result.reply->type == REDIS_REPLY_INTEGER);
  if (ok) {
    c->counters_.sessions_written.add();
  } else {
    c->counters_.write_failures.add();
    c->failed_ = true;
  }
}

void Channel::send() noexcept {
  for (const Commands::Transaction& t : commands_.transactions()) {
    ++outstanding_;
    if (redis_.submitGroup(t.slot, t.commands, RedisCompletion{&Channel::completed, this}, kRedisIdempotent) !=
        RedisErrc::kOk) {
      --outstanding_;
      counters_.write_failures.add();
      failed_ = true;
    }
  }
}

bool Channel::turn(uint64_t now_ns) noexcept {
  if (in_flight_) {
    if (outstanding_ != 0) return false;
    if (failed_) {
      if (retry_at_ns_ == 0) retry_at_ns_ = now_ns + retry_pause_ns_;
      if (now_ns < retry_at_ns_) return false;
      retry_at_ns_ = 0;
      failed_ = false;
      counters_.batch_retries.add();
      send();
      return true;
    }
    if (wait_replicas_ == 0) {
      release();
      return true;
    }
    if (!waiting_) {
      sendWaits();
      return true;
    }
    bool failed = false, again = false, missing = false;
    for (const Primary& p : primaries_) {
      failed = failed || p.state == kFailed;
      again = again || p.state == kShort;
      missing = missing || p.state == kMissing;
    }
    if (failed) {
      // Written again whole, then waited for again.
      waiting_ = false;
      failed_ = true;
      counters_.write_failures.add();
      return true;
    }
    if (again) {
      bool repeated = false;
      for (std::size_t i = 0; i < primaries_.size(); ++i) {
        if (primaries_[i].state != kShort) continue;
        repeated = repeated || primaries_[i].waited;
        sendWait(i);
      }
      if (repeated) counters_.replica_waits_repeated.add();
      return true;
    }
    counters_.replicas_missing.set(missing ? 1 : 0);
    release();
    return true;
  }
  while (records_ < max_records_) {
    auto r = ring_.peek();
    if (!r) break;
    session::ChangeView view;
    if (session::ChangeView::parse(r->payload, view)) {
      oldest_wall_ns_ = oldest_wall_ns_ == 0 ? view.header->wall_ns : std::min(oldest_wall_ns_, view.header->wall_ns);
    }
    if (!batch_.add(r->payload, static_cast<uint16_t>(r->meta->aux))) counters_.changes_refused.add();
    ring_.pop();
    ++records_;
  }
  if (records_ == 0) return false;
  counters_.changes_read.add(records_);
  counters_.pending_changes.set(records_);
  in_flight_ = true;
  batch_.build(commands_);
  // The commands hold all the batch says: its records are not needed again
  // (the ring keeps them until release, for a successor to read).
  batch_.clear();
  send();
  return true;
}

uint64_t Channel::oldestPendingWallNs() noexcept {
  if (in_flight_) return oldest_wall_ns_;
  auto r = ring_.peek();
  session::ChangeView view;
  if (r && session::ChangeView::parse(r->payload, view)) return view.header->wall_ns;
  return 0;
}

}  // namespace gtpcp::persister
