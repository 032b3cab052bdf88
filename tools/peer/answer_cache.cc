#include "tools/peer/answer_cache.h"

#include <algorithm>
#include <bit>

namespace gtpcp::peer {

void AnswerCache::init(std::size_t capacity, int64_t window_ns) {
  const std::size_t cap = std::bit_ceil(std::max<std::size_t>(capacity, 16));
  ring_.assign(cap, Entry{});
  mask_ = cap - 1;
  next_ = 0;
  window_ns_ = window_ns;
  index_.init(cap);
}

const AnswerCache::Answer* AnswerCache::find(const RequestKey& key, int64_t now) const noexcept {
  uint32_t pos = 0;
  if (!index_.find(key, pos)) return nullptr;
  const Entry& e = ring_[pos];
  return now - e.time < window_ns_ ? &e.answer : nullptr;
}

bool AnswerCache::insert(const RequestKey& key, int64_t now, const Answer& answer) noexcept {
  const auto pos = static_cast<uint32_t>(next_ & mask_);
  ++next_;
  Entry& e = ring_[pos];
  bool evicted = false;
  if (e.live) {
    index_.erase(e.key);
    evicted = now - e.time < window_ns_;
  }
  // A request seen again after its window: the new answer replaces the old.
  uint32_t old = 0;
  if (index_.find(key, old)) ring_[old].live = false;
  e = Entry{key, now, answer, true};
  index_.insert(key, pos);  // cannot fail: twice as many slots as entries
  return evicted;
}

}  // namespace gtpcp::peer
