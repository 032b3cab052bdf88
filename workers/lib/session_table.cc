#include "session_table.h"

#include <algorithm>

#include <cstring>

namespace gtpcp::worker {

SessionTable::SessionTable(const WorkerLayout& layout, PartitionShm* partitions, SessionShm* sessions,
                           uint32_t share, uint32_t share_count) noexcept
    : layout_(layout),
      share_(share_count == 0 ? 0 : share % share_count),
      share_count_(share_count == 0 ? 1 : share_count),
      partitions_(partitions),
      sessions_(sessions),
      stored_in_(layout.local_partitions, 0) {}

void SessionTable::chainFree(PartitionShm& p, SessionShm& s, uint32_t slot) noexcept {
  s.state = static_cast<uint8_t>(SessionState::kFree);
  if (!ownSlot(slot)) {
    s.free_next = kNoSlot;
    return;
  }
  s.free_next = p.free_head;
  p.free_head = slot;
}

void SessionTable::rebuild() noexcept {
  active_ = 0;
  by_version_ = {};
  stored_ = 0;
  std::fill(stored_in_.begin(), stored_in_.end(), 0u);
  for (uint32_t lp = 0; lp < layout_.local_partitions; ++lp) {
    PartitionShm& p = partitions_[lp];
    if (p.high_water > layout_.per_partition) p.high_water = layout_.per_partition;
    p.free_head = kNoSlot;
    p.used = 0;
    // Pushing from the top down leaves the lowest free slot at the head.
    for (uint32_t s = p.high_water; s-- > 0;) {
      SessionShm& session = sessions_[uint64_t{lp} * layout_.per_partition + s];
      if (session.state == static_cast<uint8_t>(SessionState::kFree)) {
        chainFree(p, session, s);
      } else if (session.state == static_cast<uint8_t>(SessionState::kStored)) {
        ++stored_;
        ++stored_in_[lp];
      } else {
        ++p.used;
        ++by_version_[metricVersion(session.gtp_version)];
      }
    }
    active_ += p.used;
  }
  if (metrics_ != nullptr || active_gauge_ != nullptr) recount();
}

void SessionTable::publishTo(metrics::Counter* active, WorkerMetricsShm* metrics) noexcept {
  active_gauge_ = active;
  metrics_ = metrics;
  recount();
}

void SessionTable::recount() noexcept {
  by_version_ = {};
  if (metrics_ != nullptr) {
    for (GatewayMetricsShm& g : metrics_->gateways) g.sessions_active.set(0);
  }
  forEach([this](const SessionShm& s) {
    ++by_version_[metricVersion(s.gtp_version)];
    if (GatewayMetricsShm* g = gatewayEntry(metrics_, s.gateway)) g->sessions_active.add();
  });
  publish();
}

void SessionTable::publish() noexcept {
  if (active_gauge_ != nullptr) active_gauge_->set(active_);
  if (metrics_ != nullptr) {
    for (unsigned v = 0; v < kMetricVersions; ++v) metrics_->sessions_by_version[v].set(by_version_[v]);
  }
}

void SessionTable::counted(const SessionShm& s, int delta) noexcept {
  uint64_t& n = by_version_[metricVersion(s.gtp_version)];
  n += static_cast<uint64_t>(static_cast<int64_t>(delta));
  if (GatewayMetricsShm* g = gatewayEntry(metrics_, s.gateway)) {
    // Never below 0, whatever a caller did to a session's gateway behind
    // setGateway()'s back: a gauge that wrapped would read as 2^64.
    const uint64_t v = g->sessions_active.load();
    g->sessions_active.set(delta > 0 ? v + 1 : (v == 0 ? 0 : v - 1));
  }
  publish();
}

void SessionTable::setGateway(SessionShm& s, uint16_t gateway) noexcept {
  if (s.gateway == gateway) return;
  if (isLive(s.state)) counted(s, -1);
  s.gateway = gateway;
  if (isLive(s.state)) counted(s, +1);
}

SessionShm* SessionTable::allocate(uint16_t partition, uint8_t gtp_version, uint16_t gateway) noexcept {
  if (partition % layout_.workers != layout_.index) return nullptr;
  PartitionShm& p = partitions_[layout_.localPartition(partition)];
  uint32_t slot;
  if (p.free_head != kNoSlot) {
    slot = p.free_head;
  } else if (nextOwn(p.high_water) < layout_.per_partition) {
    // Raise the mark before using the slot: a crash in between leaves a free
    // slot under the mark, which rebuild() chains again. The other shares'
    // slots skipped over are free (zero) and stay unchained.
    slot = nextOwn(p.high_water);
    p.high_water = slot + 1;
  } else {
    return nullptr;
  }
  SessionShm& s = sessions_[uint64_t{layout_.localPartition(partition)} * layout_.per_partition + slot];
  if (slot == p.free_head) p.free_head = s.free_next;
  const uint8_t generation = nextGeneration(s.generation);
  s = SessionShm{};
  s.generation = generation;
  s.free_next = kNoSlot;
  s.state = static_cast<uint8_t>(SessionState::kCreating);
  s.gtp_version = gtp_version;
  s.gateway = gateway;
  ++p.used;
  ++active_;
  counted(s, +1);
  return &s;
}

SessionShm* SessionTable::slotOf(uint32_t teid, uint32_t& lp) const noexcept {
  const TeidParts t = splitTeid(teid);
  if (t.partition % layout_.workers != layout_.index || t.slot >= layout_.per_partition) return nullptr;
  lp = layout_.localPartition(t.partition);
  if (lp >= layout_.local_partitions) return nullptr;
  return &sessions_[uint64_t{lp} * layout_.per_partition + t.slot];
}

SessionShm* SessionTable::find(uint32_t teid) noexcept {
  uint32_t lp;
  SessionShm* s = slotOf(teid, lp);
  if (s == nullptr || splitTeid(teid).slot >= partitions_[lp].high_water) return nullptr;
  if (!isLive(s->state) || s->generation != splitTeid(teid).generation) return nullptr;
  return s;
}

bool SessionTable::mayBeStored(uint32_t teid) const noexcept {
  uint32_t lp;
  const SessionShm* s = slotOf(teid, lp);
  if (s == nullptr) return false;
  const TeidParts t = splitTeid(teid);
  if (t.generation < kFirstGeneration || t.generation > kLastGeneration) return false;
  if (t.slot >= partitions_[lp].high_water || s->state == static_cast<uint8_t>(SessionState::kFree)) return true;
  return s->state == static_cast<uint8_t>(SessionState::kStored) && s->generation == t.generation;
}

void SessionTable::claim(uint32_t lp, uint32_t slot) noexcept {
  PartitionShm& p = partitions_[lp];
  SessionShm* base = sessions_ + uint64_t{lp} * layout_.per_partition;
  if (slot >= p.high_water) {
    // The slots skipped over are free: chained like rebuild() would.
    for (uint32_t s = slot; s-- > p.high_water;) chainFree(p, base[s], s);
    p.high_water = slot + 1;
    return;
  }
  // Another share's slot is never chained.
  if (!ownSlot(slot)) return;
  // A free slot of this share somewhere in the chain: rare (a session this
  // instance made before a restart of its table's worker and which the stored
  // TEIDs did not list yet), so a walk is good enough.
  uint32_t* link = &p.free_head;
  while (*link != kNoSlot && *link != slot) link = &base[*link].free_next;
  if (*link == slot) *link = base[slot].free_next;
}

bool SessionTable::reserve(uint32_t teid) noexcept {
  uint32_t lp;
  SessionShm* s = slotOf(teid, lp);
  if (s == nullptr) return false;
  const TeidParts t = splitTeid(teid);
  const uint32_t slot = t.slot;
  const bool above = slot >= partitions_[lp].high_water;
  if (!above && isLive(s->state)) return s->generation == t.generation;
  if (!above && s->state == static_cast<uint8_t>(SessionState::kStored)) {
    s->generation = t.generation;
    return true;
  }
  claim(lp, slot);
  *s = SessionShm{};
  s->generation = t.generation;
  s->free_next = kNoSlot;
  s->state = static_cast<uint8_t>(SessionState::kStored);
  ++stored_;
  ++stored_in_[lp];
  return true;
}

SessionShm* SessionTable::install(uint32_t teid, const SessionShm& record) noexcept {
  uint32_t lp;
  SessionShm* s = slotOf(teid, lp);
  if (s == nullptr || !isLive(record.state)) return nullptr;
  const TeidParts t = splitTeid(teid);
  const bool above = t.slot >= partitions_[lp].high_water;
  if (!above && isLive(s->state)) return s->generation == t.generation ? s : nullptr;
  if (!above && s->state == static_cast<uint8_t>(SessionState::kStored)) {
    --stored_;
    --stored_in_[lp];
  } else {
    claim(lp, t.slot);
  }
  *s = record;
  s->generation = t.generation;
  s->free_next = kNoSlot;
  ++partitions_[lp].used;
  ++active_;
  counted(*s, +1);
  return s;
}

void SessionTable::forget(uint32_t teid) noexcept {
  uint32_t lp;
  SessionShm* s = slotOf(teid, lp);
  if (s == nullptr || splitTeid(teid).slot >= partitions_[lp].high_water) return;
  if (s->state != static_cast<uint8_t>(SessionState::kStored) || s->generation != splitTeid(teid).generation) return;
  chainFree(partitions_[lp], *s, splitTeid(teid).slot);
  --stored_;
  --stored_in_[lp];
}

void SessionTable::release(SessionShm& session) noexcept {
  if (!isLive(session.state)) return;
  const uint64_t i = indexOf(session);
  PartitionShm& p = partitions_[i / layout_.per_partition];
  // The state is the truth; the generation stays so the next allocation of
  // this slot moves past it.
  chainFree(p, session, static_cast<uint32_t>(i % layout_.per_partition));
  --p.used;
  --active_;
  counted(session, -1);
}

void SessionTable::demote(SessionShm& session) noexcept {
  if (!isLive(session.state)) return;
  const uint64_t i = indexOf(session);
  const auto lp = static_cast<uint32_t>(i / layout_.per_partition);
  // Only the state and the generation mean anything in a reserved slot.
  session.state = static_cast<uint8_t>(SessionState::kStored);
  session.free_next = kNoSlot;
  --partitions_[lp].used;
  --active_;
  counted(session, -1);
  ++stored_;
  ++stored_in_[lp];
}

uint32_t SessionTable::teid(const SessionShm& session, Leg leg) const noexcept {
  const uint64_t i = indexOf(session);
  const uint32_t lp = static_cast<uint32_t>(i / layout_.per_partition);
  return makeTeid(layout_.globalPartition(lp), static_cast<uint16_t>(i % layout_.per_partition), leg,
                  session.generation);
}

uint16_t SessionTable::partitionOf(const SessionShm& session) const noexcept {
  return layout_.globalPartition(static_cast<uint32_t>(indexOf(session) / layout_.per_partition));
}

}  // namespace gtpcp::worker
