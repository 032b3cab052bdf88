// The sessions of one worker's partitions, in the worker's segment.
//
// A session is found from either of its TEIDs without hashing: the TEID names
// the partition and the slot (teid.h), and the slot's generation must match.
// Free slots are chained per partition; the chains and counts are derived
// from the slots' states and rebuilt by rebuild() whenever a worker attaches,
// so a worker killed at any instruction leaves nothing that a successor cannot
// repair. Slots reserved for stored sessions (kStored) are neither free nor
// live: no allocation takes them, no walk visits them. Slots are handed out from the low end of each partition (the
// high-water mark grows only when no freed slot is left), so memory pages of
// the segment are touched only as sessions actually exist.
//
// Shares. The instances of a group allocate from disjoint shares of every
// partition's slots (slot % share_count == share), so two instances never
// give out the same TEID nor claim the same slot, whatever either one knows of
// the other's sessions: a standby that takes over allocates beside the
// sessions the active made after the standby last read the stored TEIDs, and
// each of those still finds its slot free when its first message brings it
// in. Only this instance's share is chained free; the other slots are
// reserved or installed as stored sessions arrive.
//
// Single-threaded: only the worker's main loop calls it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/metrics/counter.h"
#include "common/session/teid.h"
#include "worker_layout.h"
#include "worker_metrics.h"

namespace gtpcp::worker {

class SessionTable {
 public:
  // `share` of `share_count` (group_size, instance_index): the slots this
  // instance allocates.
  SessionTable(const WorkerLayout& layout, PartitionShm* partitions, SessionShm* sessions, uint32_t share = 0,
               uint32_t share_count = 1) noexcept;

  // Recomputes free chains, high-water marks' consistency and the count.
  void rebuild() noexcept;

  // A new session in `partition`, which this worker must own: state kCreating,
  // a fresh generation, GTP version `gtp_version` and gateway `gateway` (an
  // index of the routing document), everything else zero. nullptr when the
  // partition is full.
  SessionShm* allocate(uint16_t partition, uint8_t gtp_version = 0, uint16_t gateway = kNoSelection) noexcept;
  // The live session that `teid` names, or nullptr.
  SessionShm* find(uint32_t teid) noexcept;
  void release(SessionShm& session) noexcept;
  // The live session goes back to the storage's keeping: its slot stays
  // reserved (kStored) with its generation, and its next message reads the
  // record again (another instance may have changed it meanwhile).
  void demote(SessionShm& session) noexcept;
  // The live session `session` has gateway `gateway` now (kNoSelection:
  // none). Every change of a live session's gateway goes through here,
  // except a reload's renumbering, after which recount() is called.
  void setGateway(SessionShm& session, uint16_t gateway) noexcept;

  // -- gauges. Where the table publishes, at every session that comes or
  // goes, worker.sessions_active (`active`) and, in `metrics`, the sessions
  // by GTP version and each gateway's (common/group/worker_metrics.h);
  // counted from the slots now. Null (a table tested alone): not published.
  void publishTo(metrics::Counter* active, WorkerMetricsShm* metrics) noexcept;
  // Counts the gauges from the slots again (after the sessions' gateways
  // were renumbered by a routing reload). A walk over the table.
  void recount() noexcept;

  // Whether this instance allocates slot `slot`.
  bool ownSlot(uint32_t slot) const noexcept { return slot % share_count_ == share_; }

  // -- sessions held in the storage (restore.h)
  // Whether `teid`, naming no live session, may name a stored one: its slot
  // is this worker's and free, or reserved for a stored session of the same
  // generation.
  bool mayBeStored(uint32_t teid) const noexcept;
  // Reserves the slot of a stored session's TEID (kStored) unless a session
  // lives there. False when the slot is live with another generation (a
  // conflict: this worker gave it away).
  bool reserve(uint32_t teid) noexcept;
  // The stored session `record` (a slot as the storage has it) brought in
  // under `teid`: the live session, or nullptr when its slot is live with
  // another generation (a conflict) or out of this worker's geometry. An
  // already live session of the same generation is returned as it is.
  SessionShm* install(uint32_t teid, const SessionShm& record) noexcept;
  // The storage holds no session `teid`: a slot reserved for it is freed.
  void forget(uint32_t teid) noexcept;
  uint64_t stored() const noexcept { return stored_; }
  // Of local partition `lp`.
  uint32_t storedIn(uint32_t lp) const noexcept { return lp < stored_in_.size() ? stored_in_[lp] : 0; }
  // The access TEIDs of the slots of local partition `lp` reserved for
  // stored sessions, each given to visit(teid, slot).
  template <class F>
  void forEachStored(uint32_t lp, F&& visit) const {
    const uint32_t high = partitions_[lp].high_water;
    for (uint32_t slot = 0; slot < high; ++slot) {
      const SessionShm& s = sessions_[uint64_t{lp} * layout_.per_partition + slot];
      if (s.state != static_cast<uint8_t>(SessionState::kStored)) continue;
      visit(makeTeid(layout_.globalPartition(lp), static_cast<uint16_t>(slot), Leg::kAccess, s.generation), slot);
    }
  }

  uint32_t teid(const SessionShm& session, Leg leg) const noexcept;
  uint16_t partitionOf(const SessionShm& session) const noexcept;
  uint64_t active() const noexcept { return active_; }

  // A place in a walk over every session slot (scan()).
  struct Cursor {
    uint32_t partition = 0;  // local
    uint32_t slot = 0;
    bool done(const SessionTable& t) const noexcept { return partition >= t.layout_.local_partitions; }
  };
  // Visits the live sessions from `cursor` on, looking at `budget` slots at
  // most or until visit(session) returns false (the session it was called
  // with is visited again next time); returns the slots looked at. The walk
  // is over when cursor.done().
  template <class F>
  uint32_t scan(Cursor& cursor, uint32_t budget, F&& visit) {
    uint32_t looked = 0;
    while (looked < budget && !cursor.done(*this)) {
      if (cursor.slot >= partitions_[cursor.partition].high_water) {
        ++cursor.partition;
        cursor.slot = 0;
        continue;
      }
      SessionShm& session = sessions_[uint64_t{cursor.partition} * layout_.per_partition + cursor.slot];
      ++looked;
      if (isLive(session.state) && !visit(session)) break;
      ++cursor.slot;
    }
    return looked;
  }

  // The first live session of `partition` (this worker's) for which
  // match(session) holds, or nullptr: a walk over the partition, for the
  // rare messages that name a subscriber, not a TEID.
  template <class F>
  SessionShm* findInPartition(uint16_t partition, F&& match) {
    if (partition % layout_.workers != layout_.index) return nullptr;
    const uint32_t lp = layout_.localPartition(partition);
    for (uint32_t s = 0; s < partitions_[lp].high_water; ++s) {
      SessionShm& session = sessions_[uint64_t{lp} * layout_.per_partition + s];
      if (isLive(session.state) && match(session)) return &session;
    }
    return nullptr;
  }

  // Visits every live session (status, tests).
  template <class F>
  void forEach(F&& f) {
    for (uint32_t lp = 0; lp < layout_.local_partitions; ++lp) {
      for (uint32_t s = 0; s < partitions_[lp].high_water; ++s) {
        SessionShm& session = sessions_[uint64_t{lp} * layout_.per_partition + s];
        if (isLive(session.state)) f(session);
      }
    }
  }

 private:
  uint64_t indexOf(const SessionShm& s) const noexcept { return static_cast<uint64_t>(&s - sessions_); }
  // The slot `teid` names when it is in this worker's geometry, else nullptr.
  SessionShm* slotOf(uint32_t teid, uint32_t& local_partition) const noexcept;
  // Takes the free slot `slot` of local partition `lp` out of the free chain
  // (or raises the high-water mark to it): it is about to be used.
  void claim(uint32_t lp, uint32_t slot) noexcept;

  // The next slot from `slot` on that this instance allocates.
  uint32_t nextOwn(uint32_t slot) const noexcept {
    return slot + (share_ + share_count_ - slot % share_count_) % share_count_;
  }
  // Puts free slot `slot` of `lp` on its free chain if it is this instance's.
  void chainFree(PartitionShm& p, SessionShm& s, uint32_t slot) noexcept;
  // Live session `s` came (+1) or goes (-1): counted, and the gauges published.
  void counted(const SessionShm& s, int delta) noexcept;
  void publish() noexcept;

  WorkerLayout layout_;
  uint32_t share_;
  uint32_t share_count_;
  PartitionShm* partitions_;
  SessionShm* sessions_;
  uint64_t active_ = 0;
  std::array<uint64_t, kMetricVersions> by_version_{};  // live sessions by metricVersion()
  metrics::Counter* active_gauge_ = nullptr;
  WorkerMetricsShm* metrics_ = nullptr;
  uint64_t stored_ = 0;
  std::vector<uint32_t> stored_in_;  // per local partition, derived by rebuild() like the rest
};

}  // namespace gtpcp::worker
