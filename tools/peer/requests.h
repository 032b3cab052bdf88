// The bookkeeping both sides of the emulator keep for the requests they send
// and retransmit (TS 29.274 §7.6: the same bytes after T3, N3 times): the
// outstanding ones in deadline order, and the sequence numbers of those
// recently answered or timed out, that tell a duplicate or late answer from a
// wrong one.
//
// Both are sized at startup; nothing after that allocates, throws or logs.
// One thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gtpcp::peer {

// A doubly linked list threaded through records the caller owns (fields
// `prev`, `next` and `deadline` of each). Every deadline is "now + T3", so
// appending keeps the list in deadline order.
template <class Record>
class DeadlineList {
 public:
  static constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();

  // `records` must outlive the list.
  explicit DeadlineList(std::vector<Record>& records) noexcept : records_(records) {}

  void append(uint32_t i, int64_t deadline) noexcept {
    Record& r = records_[i];
    r.deadline = deadline;
    r.next = kNil;
    r.prev = tail_;
    if (tail_ == kNil)
      head_ = i;
    else
      records_[tail_].next = i;
    tail_ = i;
  }

  void remove(uint32_t i) noexcept {
    Record& r = records_[i];
    if (r.prev == kNil)
      head_ = r.next;
    else
      records_[r.prev].next = r.next;
    if (r.next == kNil)
      tail_ = r.prev;
    else
      records_[r.next].prev = r.prev;
    r.prev = r.next = kNil;
  }

  // Sends again, or gives up on, the records due at `now` (fields
  // `retries` besides the list's): each is sent again with `resend(i)` (false:
  // it could not be) and due again T3 later, up to `n3` times; then, or when
  // sending failed, `expire(i, timed_out)` ends it, off the list.
  template <class Resend, class Expire>
  void retransmitDue(int64_t now, int64_t t3_ns, uint32_t n3, Resend&& resend,
                     Expire&& expire) noexcept {
    while (head_ != kNil) {
      const uint32_t i = head_;
      Record& r = records_[i];
      if (r.deadline > now) break;
      remove(i);
      if (r.retries >= n3) {
        expire(i, true);
      } else if (++r.retries, resend(i)) {
        append(i, now + t3_ns);
      } else {
        expire(i, false);
      }
    }
  }

  // The record due first (kNil when none) and its deadline (max when none).
  uint32_t head() const noexcept { return head_; }
  int64_t nextDeadline() const noexcept {
    return head_ == kNil ? std::numeric_limits<int64_t>::max() : records_[head_].deadline;
  }

 private:
  std::vector<Record>& records_;
  uint32_t head_ = kNil, tail_ = kNil;
};

// The sequence numbers of the last `capacity` requests closed, and how each
// ended.
class RecentRequests {
 public:
  // Startup only: allocates.
  void init(std::size_t capacity) { ring_.assign(capacity, Entry{}); }

  void remember(uint32_t sequence, bool timed_out) noexcept {
    if (ring_.empty()) return;
    ring_[pos_] = Entry{sequence, timed_out};
    pos_ = (pos_ + 1) % ring_.size();
  }
  // True when `sequence` is among them; `timed_out` then says how it ended.
  bool find(uint32_t sequence, bool& timed_out) const noexcept {
    for (const Entry& e : ring_) {
      if (e.sequence == sequence) {
        timed_out = e.timed_out;
        return true;
      }
    }
    return false;
  }

 private:
  struct Entry {
    uint32_t sequence = 0xffffffffu;  // no GTPv2 number (24 bits)
    bool timed_out = false;
  };
  std::vector<Entry> ring_;
  std::size_t pos_ = 0;
};

}  // namespace gtpcp::peer
