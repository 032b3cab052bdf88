#include "workers/lib/session_table.h"

#include <cstring>

namespace gtpcp::worker {

SessionTable::SessionTable(const WorkerLayout& layout, PartitionShm* partitions,
                           SessionShm* sessions) noexcept
    : layout_(layout), partitions_(partitions), sessions_(sessions) {}

void SessionTable::rebuild() noexcept {
  active_ = 0;
  for (uint32_t lp = 0; lp < layout_.local_partitions; ++lp) {
    PartitionShm& p = partitions_[lp];
    if (p.high_water > layout_.per_partition) p.high_water = layout_.per_partition;
    p.free_head = kNoSlot;
    p.used = 0;
    // Pushing from the top down leaves the lowest free slot at the head.
    for (uint32_t s = p.high_water; s-- > 0;) {
      SessionShm& session = sessions_[uint64_t{lp} * layout_.per_partition + s];
      if (session.state == static_cast<uint8_t>(SessionState::kFree)) {
        session.free_next = p.free_head;
        p.free_head = s;
      } else {
        ++p.used;
      }
    }
    active_ += p.used;
  }
}

SessionShm* SessionTable::allocate(uint16_t partition) noexcept {
  if (partition % layout_.workers != layout_.index) return nullptr;
  PartitionShm& p = partitions_[layout_.localPartition(partition)];
  uint32_t slot;
  if (p.free_head != kNoSlot) {
    slot = p.free_head;
  } else if (p.high_water < layout_.per_partition) {
    // Raise the mark before using the slot: a crash in between leaves a free
    // slot under the mark, which rebuild() chains again.
    slot = p.high_water++;
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
  ++p.used;
  ++active_;
  return &s;
}

SessionShm* SessionTable::find(uint32_t teid) noexcept {
  const TeidParts t = splitTeid(teid);
  if (t.partition % layout_.workers != layout_.index || t.slot >= layout_.per_partition) return nullptr;
  const uint32_t lp = layout_.localPartition(t.partition);
  if (t.slot >= partitions_[lp].high_water) return nullptr;
  SessionShm& s = sessions_[uint64_t{lp} * layout_.per_partition + t.slot];
  if (s.state == static_cast<uint8_t>(SessionState::kFree) || s.generation != t.generation) return nullptr;
  return &s;
}

void SessionTable::release(SessionShm& session) noexcept {
  if (session.state == static_cast<uint8_t>(SessionState::kFree)) return;
  const uint64_t i = indexOf(session);
  PartitionShm& p = partitions_[i / layout_.per_partition];
  // The state is the truth; the generation stays so the next allocation of
  // this slot moves past it.
  session.state = static_cast<uint8_t>(SessionState::kFree);
  session.free_next = p.free_head;
  p.free_head = static_cast<uint32_t>(i % layout_.per_partition);
  --p.used;
  --active_;
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
