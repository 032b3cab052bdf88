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
    // RING-R2 (Consumer::release()) pairs with RING-A2 in the worker's
    // producer: the slots are its again.
    ring_.release();
    counters_.batches_written.add();
    counters_.pending_changes.set(0);
    in_flight_ = false;
    commands_.clear();
    records_ = 0;
    oldest_wall_ns_ = 0;
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
