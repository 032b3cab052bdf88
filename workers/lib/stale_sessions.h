// Sessions this worker holds that another instance of the group may have
// changed (persister/lib/writes_watch.h says when): given back to the
// storage's keeping, so that their next message reads them again from Redis
// instead of being answered from stale memory.
//
// When the persister's foreign-writes epoch moves past the one this worker
// last acted on, a walk over the session table demotes every live session
// without a pending transaction (SessionTable::demote(): the slot stays
// reserved with its generation; the next message is held, the record read,
// the message served). A session with a pending transaction is this worker's
// own work in progress (its answer comes here) and is kept; the walk is made
// again after a pause until none is left, and only then is the epoch marked
// as seen (in the segment: a restarted worker walks again if it must).
//
// The walk is bounded per turn: the worker's loop keeps serving between
// steps. It normally runs while the instance carries no traffic (the other
// instance's writes are what moves the epoch), so it costs nothing a peer
// sees.
#pragma once

#include <cstdint>
#include <vector>

#include "common/group/worker_shm.h"
#include "session_table.h"
#include "transaction_table.h"

namespace gtpcp::worker {

class StaleSessions {
 public:
  // Slot looks per turn; and the pause before walking again for sessions
  // that had a pending transaction.
  static constexpr uint32_t kBudget = 16384;
  static constexpr uint64_t kRetryNs = 200'000'000;

  StaleSessions(SessionTable& sessions, TransactionTable& transactions, WorkerShmHeader& header) noexcept;

  // One step, with the epoch as read now. True while a walk is under way
  // (more steps are due without waiting).
  bool turn(uint64_t now_ns, uint64_t epoch) noexcept;

 private:
  void start() noexcept;
  // The sessions with a pending transaction, now.
  void noteBusy() noexcept;

  SessionTable& sessions_;
  TransactionTable& transactions_;
  WorkerShmHeader& header_;
  bool walking_ = false;
  uint64_t walk_epoch_ = 0;
  uint64_t retry_at_ns_ = 0;
  uint32_t kept_ = 0;
  SessionTable::Cursor cursor_;
  std::vector<uint32_t> busy_;  // access TEIDs of sessions with a pending transaction, sorted
};

}  // namespace gtpcp::worker
