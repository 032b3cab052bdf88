#include "writes_watch.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "common/group/redis_keys.h"
#include "redis_slot.h"

namespace gtpcp::persister {

WritesWatch::WritesWatch(RedisClient& redis, std::string group, std::string instance, GroupWritesShm& shm,
                         PersisterCounters& counters, uint64_t start_ms) noexcept
    : redis_(redis),
      key_(group::writesKey(group)),
      instance_(std::move(instance)),
      shm_(shm),
      counters_(counters),
      start_ms_(std::to_string(start_ms)) {}

void WritesWatch::turn(uint64_t now_ns, uint64_t written) noexcept {
  if (now_ns < next_ns_) return;
  next_ns_ = now_ns + kPeriodNs;
  const uint16_t slot = keySlot(key_);
  // Written since the last mark (or never marked: a persister that wrote
  // nothing leaves the table as its predecessor left it).
  if (!writing_ && written != marked_ && written != 0) {
    value_ = start_ms_ + ":" + std::to_string(written);
    const std::string_view argv[] = {"HSET", key_, instance_, value_};
    if (redis_.submit(slot, argv, RedisCompletion{&WritesWatch::onWritten, this}) == RedisErrc::kOk) {
      writing_ = true;
      marked_ = written;
    }
  }
  if (!reading_) {
    const std::string_view argv[] = {"HGETALL", key_};
    reading_ = redis_.submit(slot, argv, RedisCompletion{&WritesWatch::onRead, this}) == RedisErrc::kOk;
  }
}

void WritesWatch::onWritten(void* self, const RedisResult& result) noexcept {
  auto* w = static_cast<WritesWatch*>(self);
  w->writing_ = false;
  // Not written: marked again at the next period.
  if (result.error != RedisErrc::kOk) {
    w->marked_ = ~uint64_t{0};
    return;
  }
  w->wrote_ = true;
  w->foreign_since_ = false;
  w->publishActs();
}

void WritesWatch::publishActs() noexcept {
  const bool acts = (wrote_ && !foreign_since_) || !others_in_table_;
  // PER-W2: relaxed, see GroupWritesShm.
  shm_.acts_for_stored.store(acts ? 1 : 0, std::memory_order_relaxed);
  counters_.acts_for_stored.set(acts ? 1 : 0);
}

void WritesWatch::onRead(void* self, const RedisResult& result) noexcept {
  auto* w = static_cast<WritesWatch*>(self);
  w->reading_ = false;
  if (result.error == RedisErrc::kOk && result.reply != nullptr) w->look(*result.reply);
}

void WritesWatch::look(const redisReply& reply) noexcept {
  if (reply.type != REDIS_REPLY_ARRAY) return;
  bool changed = false;
  bool others = false;
  for (std::size_t i = 0; i + 1 < reply.elements; i += 2) {
    const redisReply* f = reply.element[i];
    const redisReply* v = reply.element[i + 1];
    if (f == nullptr || v == nullptr || f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) continue;
    const std::string_view name(f->str, f->len);
    const std::string_view value(v->str, v->len);
    if (name == instance_) continue;
    others = true;
    if (name.size() >= sizeof(WriterSeenShm::instance) || value.size() >= sizeof(WriterSeenShm::value)) continue;
    WriterSeenShm* entry = nullptr;
    WriterSeenShm* unused = nullptr;
    for (WriterSeenShm& e : shm_.seen) {
      if (e.instance[0] == '\0') {
        if (unused == nullptr) unused = &e;
      } else if (name == e.instance) {
        entry = &e;
        break;
      }
    }
    if (entry == nullptr) {
      // An instance first seen: what it wrote before is unknown, so it may
      // have changed anything. A table full of names (more than the group
      // can have) keeps raising the epoch: safe, only slower.
      changed = true;
      if (unused == nullptr) continue;
      entry = unused;
      std::memcpy(entry->instance, name.data(), name.size());
      entry->instance[name.size()] = '\0';
    } else if (value == entry->value) {
      continue;
    }
    changed = true;
    std::memcpy(entry->value, value.data(), value.size());
    entry->value[value.size()] = '\0';
  }
  others_in_table_ = others;
  if (changed) foreign_since_ = true;
  publishActs();
  if (!changed) return;
  counters_.foreign_writes.add();
  // PER-W1: relaxed, see GroupWritesShm.
  shm_.foreign_epoch.store(shm_.foreign_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace gtpcp::persister
