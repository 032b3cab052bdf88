// What the Redis integration tests share: running the event loop until
// something holds, recording completions, and a steady write load whose
// every acknowledged write can be checked afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/time/clock.h"
#include "persister/lib/event_loop.h"
#include "persister/lib/redis_client_impl.h"
#include "persister/lib/redis_slot.h"
#include "tests/support/redis.h"

namespace gtpcp::persister::test {

// Runs `loop` until `done` holds (true) or `timeout` passes (false).
inline bool runUntil(EventLoop& loop, const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const uint64_t deadline = monotonicNs() + uint64_t(timeout.count()) * 1'000'000u;
  while (!done()) {
    if (monotonicNs() >= deadline) return false;
    loop.runOnce(10);
  }
  return true;
}

struct Outcome {
  bool done = false;
  RedisErrc error = RedisErrc::kOk;
  uint64_t at_ns = 0;
  std::string text;     // a string, status or error reply
  std::size_t elements = 0;  // an array reply's size
};

inline void record(void* user, const RedisResult& r) noexcept {
  auto* o = static_cast<Outcome*>(user);
  o->done = true;
  o->error = r.error;
  o->at_ns = monotonicNs();
  if (r.reply != nullptr) {
    if (r.reply->type == REDIS_REPLY_ARRAY) o->elements = r.reply->elements;
    if (r.reply->str != nullptr) o->text.assign(r.reply->str, r.reply->len);
  }
}

inline RedisCompletion recordInto(Outcome& o) { return RedisCompletion{&record, &o}; }

inline RedisClientConfig configFor(RedisMode mode, const std::vector<uint16_t>& ports) {
  RedisClientConfig c;
  c.mode = mode;
  for (const uint16_t p : ports) c.endpoints.push_back({"127.0.0.1", p});
  c.request_timeout_ms = 20000;
  return c;
}

inline std::unique_ptr<RedisClientImpl> makeClient(EventLoop& loop, const RedisClientConfig& config) {
  auto client = RedisClientImpl::create(loop, config);
  if (!client) ADD_FAILURE() << client.error();
  return client ? std::move(*client) : nullptr;
}

inline RedisErrc submitSet(RedisClient& client, const std::string& key, const std::string& value, Outcome& o,
                           uint8_t flags = kRedisNoFlags) {
  const std::string_view argv[] = {"SET", key, value};
  return client.submit(keySlot(key), argv, recordInto(o), flags);
}

// Unique keys "<prefix>:<n>" set to "<n>", idempotent, at most `window`
// unanswered at a time: the shape of the persister's traffic.
class WriteLoad {
 public:
  struct Write {
    std::string key, value;
    uint16_t slot = 0;
    uint64_t submitted_ns = 0;
    Outcome outcome;
    WriteLoad* load = nullptr;
  };

  WriteLoad(RedisClient& client, std::string prefix, std::size_t window)
      : client_(client), prefix_(std::move(prefix)), window_(window) {}

  void topUp() {
    while (submitted_ - completed_ < window_) {
      Write& w = writes_.emplace_back();
      w.value = std::to_string(writes_.size() - 1);
      w.key = prefix_ + ":" + w.value;
      w.slot = keySlot(w.key);
      w.submitted_ns = monotonicNs();
      w.load = this;
      const std::string_view argv[] = {"SET", w.key, w.value};
      if (client_.submit(w.slot, argv, RedisCompletion{&done, &w}, kRedisIdempotent) != RedisErrc::kOk) {
        writes_.pop_back();
        return;
      }
      ++submitted_;
    }
  }
  // Keeps the load going for `duration`, or until `stop` holds (asked every
  // 20 ms: it may look at every write).
  void runFor(EventLoop& loop, std::chrono::milliseconds duration, const std::function<bool()>& stop = {}) {
    const uint64_t end = monotonicNs() + uint64_t(duration.count()) * 1'000'000u;
    uint64_t next_look = 0;
    while (monotonicNs() < end) {
      if (stop && monotonicNs() >= next_look) {
        if (stop()) return;
        next_look = monotonicNs() + 20'000'000;
      }
      topUp();
      loop.runOnce(2);
    }
  }
  std::size_t outstanding() const { return submitted_ - completed_; }
  std::size_t failed() const { return failed_; }
  std::deque<Write>& writes() { return writes_; }

  // The first write submitted after `after_ns` and matching `which` that was
  // acknowledged: its acknowledgement time, 0 when none yet.
  uint64_t firstAckAfter(uint64_t after_ns, const std::function<bool(const Write&)>& which) const {
    uint64_t first = 0;
    for (const auto& w : writes_)
      if (w.submitted_ns > after_ns && w.outcome.done && w.outcome.error == RedisErrc::kOk && which(w) &&
          (first == 0 || w.outcome.at_ns < first))
        first = w.outcome.at_ns;
    return first;
  }

 private:
  static void done(void* user, const RedisResult& r) noexcept {
    auto* w = static_cast<Write*>(user);
    record(&w->outcome, r);
    ++w->load->completed_;
    if (r.error != RedisErrc::kOk) ++w->load->failed_;
  }

  RedisClient& client_;
  std::string prefix_;
  std::size_t window_;
  std::deque<Write> writes_;
  std::size_t submitted_ = 0, completed_ = 0, failed_ = 0;
};

// Every acknowledged write of `writes` that `which` selects, read back from
// the node `port_of(write)` names: the number missing or different.
inline std::size_t countUnreadable(std::deque<WriteLoad::Write>& writes,
                                   const std::function<bool(const WriteLoad::Write&)>& which,
                                   const std::function<uint16_t(const WriteLoad::Write&)>& port_of) {
  std::map<uint16_t, std::vector<const WriteLoad::Write*>> by_port;
  for (const auto& w : writes)
    if (w.outcome.done && w.outcome.error == RedisErrc::kOk && which(w)) by_port[port_of(w)].push_back(&w);
  std::size_t bad = 0;
  for (const auto& [port, list] : by_port) {
    std::vector<std::string> keys;
    for (const auto* w : list) keys.push_back(w->key);
    const auto values = testing::redisGetMany(port, keys);
    for (std::size_t i = 0; i < list.size(); ++i) bad += values[i] == list[i]->value ? 0 : 1;
  }
  return bad;
}

inline double msSince(uint64_t from_ns, uint64_t to_ns) { return double(to_ns - from_ns) / 1e6; }

}  // namespace gtpcp::persister::test
