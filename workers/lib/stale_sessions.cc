#include "stale_sessions.h"

#include <algorithm>

namespace gtpcp::worker {

StaleSessions::StaleSessions(SessionTable& sessions, TransactionTable& transactions,
                             WorkerShmHeader& header) noexcept
    : sessions_(sessions), transactions_(transactions), header_(header) {}

void StaleSessions::start() noexcept {
  cursor_ = SessionTable::Cursor{};
  kept_ = 0;
  walking_ = true;
}

void StaleSessions::noteBusy() noexcept {
  busy_.clear();
  transactions_.forEachPending([this](const TransactionShm& t) {
    if (t.session_teid != 0) busy_.push_back(t.session_teid);
  });
  std::sort(busy_.begin(), busy_.end());
}

bool StaleSessions::turn(uint64_t now_ns, uint64_t epoch) noexcept {
  if (!walking_) {
    if (epoch == header_.foreign_epoch_seen || now_ns < retry_at_ns_) return false;
    if (sessions_.active() == 0) {
      header_.foreign_epoch_seen = epoch;
      return false;
    }
    walk_epoch_ = epoch;
    start();
  }
  // Read again at every step: the loop served messages since the last one,
  // and a session whose request went out meanwhile is busy now.
  noteBusy();
  uint64_t demoted = 0;
  sessions_.scan(cursor_, kBudget, [&](SessionShm& s) {
    if (std::binary_search(busy_.begin(), busy_.end(), sessions_.teid(s, Leg::kAccess))) {
      ++kept_;
    } else {
      sessions_.demote(s);
      ++demoted;
    }
    return true;
  });
  header_.counters.sessions_demoted.add(demoted);
  if (demoted != 0) {
    header_.counters.sessions_active.set(sessions_.active());
    header_.counters.sessions_stored.set(sessions_.stored());
  }
  if (!cursor_.done(sessions_)) return true;
  walking_ = false;
  if (kept_ == 0) {
    header_.foreign_epoch_seen = walk_epoch_;
  } else {
    retry_at_ns_ = now_ns + kRetryNs;
  }
  return false;
}

}  // namespace gtpcp::worker
