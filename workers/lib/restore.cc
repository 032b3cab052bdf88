#include "restore.h"

#include <algorithm>
#include <cstring>

#include "common/session/teid.h"

namespace gtpcp::worker {

namespace {
// The access-leg TEID names the record (the two TEIDs differ in the leg bit).
constexpr uint32_t accessTeid(uint32_t teid) noexcept { return teid & ~(uint32_t{1} << 7); }
// How often held look-ups are checked for their deadline.
constexpr uint64_t kSweepPeriodNs = 50'000'000;
}  // namespace

Restorer::Restorer(const RestoreSettings& settings, const WorkerLayout& layout, SessionTable& sessions,
                   WorkerCounters& counters, LookupSink& sink, uint32_t& loaded)
    : settings_(settings),
      layout_(layout),
      sessions_(sessions),
      counters_(counters),
      sink_(sink),
      loaded_(loaded),
      arena_(new uint8_t[std::size_t{settings.max_held} * settings.max_message]),
      held_(settings.max_held),
      lookups_(settings.max_lookups),
      asked_ns_(layout.local_partitions, 0),
      partition_done_(layout.local_partitions, 0),
      subscriber_waits_(kSubscriberWaits) {
  for (uint32_t i = settings.max_held; i-- > 0;) {
    held_[i].next = free_held_;
    free_held_ = i;
  }
  if (!settings.load_stored_teids) loaded_ = 1;
  // Loaded already (a worker adopting its predecessor's segment, or told
  // not to): every partition's list is what a refresh or a completion asks.
  if (loaded_ != 0) {
    partition_done_.assign(layout.local_partitions, 1);
    partitions_done_ = layout.local_partitions;
  }
  counters_.sessions_stored.set(sessions_.stored());
}

uint32_t Restorer::findLookup(uint32_t access_teid) const noexcept {
  if (lookup_count_ == 0) return kNone;
  for (uint32_t i = 0; i < lookups_.size(); ++i) {
    if (lookups_[i].access_teid == access_teid) return i;
  }
  return kNone;
}

bool Restorer::hold(const Arrival& arrival, std::span<const uint8_t> datagram, uint32_t teid,
                    uint32_t sequence) noexcept {
  if (refusing_ != 0 && accessTeid(teid) == refusing_) return false;
  if (!sessions_.mayBeStored(teid)) return false;
  const uint32_t access = accessTeid(teid);
  uint32_t l = findLookup(access);
  if (l != kNone) {
    // A retransmission of a held message: the first copy will be answered.
    for (uint32_t h = lookups_[l].first; h != kNone; h = held_[h].next) {
      if (held_[h].sequence == sequence && held_[h].arrival.peer == arrival.peer) {
        counters_.restore_duplicates.add();
        return true;
      }
    }
  }
  if (datagram.size() > settings_.max_message || free_held_ == kNone) {
    counters_.restore_overflow.add();
    return true;
  }
  if (l == kNone) {
    if (lookup_count_ == lookups_.size()) {
      counters_.restore_overflow.add();
      return true;
    }
    const SessionLookup q{access, partitionOf(teid), 0};
    if (!sink_.lookup(LookupKind::kSession, q.partition,
                      {reinterpret_cast<const uint8_t*>(&q), sizeof q})) {
      counters_.restore_overflow.add();
      return true;
    }
    l = 0;
    while (lookups_[l].access_teid != 0) ++l;
    lookups_[l] = Lookup{access, kNone, kNone, arrival.now_ns + settings_.timeout_ns};
    ++lookup_count_;
  }
  const uint32_t h = keep(arrival, datagram, sequence);
  Lookup& lookup = lookups_[l];
  if (lookup.last == kNone) {
    lookup.first = h;
  } else {
    held_[lookup.last].next = h;
  }
  lookup.last = h;
  counters_.restore_parked.add();
  return true;
}

uint32_t Restorer::keep(const Arrival& arrival, std::span<const uint8_t> datagram, uint32_t sequence) noexcept {
  if (datagram.size() > settings_.max_message || free_held_ == kNone) {
    counters_.restore_overflow.add();
    return kNone;
  }
  const uint32_t h = free_held_;
  free_held_ = held_[h].next;
  Held& m = held_[h];
  m.next = kNone;
  m.length = static_cast<uint32_t>(datagram.size());
  m.sequence = sequence;
  m.arrival = arrival;
  std::memcpy(arena_.get() + std::size_t{h} * settings_.max_message, datagram.data(), datagram.size());
  ++held_count_;
  return h;
}

bool Restorer::holdForSubscriber(const Arrival& arrival, std::span<const uint8_t> datagram, uint16_t partition,
                                 std::string_view imsi, uint32_t sequence) noexcept {
  if (replaying_subscriber_ || imsi.empty() || imsi.size() > sizeof(SubscriberWait::imsi)) return false;
  if (partition % layout_.workers != layout_.index) return false;
  SubscriberWait* wait = nullptr;
  SubscriberWait* unused = nullptr;
  for (SubscriberWait& w : subscriber_waits_) {
    if (w.imsi_length == 0) {
      if (unused == nullptr) unused = &w;
    } else if (w.partition == partition && std::string_view(w.imsi, w.imsi_length) == imsi) {
      wait = &w;
      break;
    }
  }
  if (wait != nullptr) {
    for (uint32_t h = wait->first; h != kNone; h = held_[h].next) {
      if (held_[h].sequence == sequence && held_[h].arrival.peer == arrival.peer) {
        counters_.restore_duplicates.add();
        return true;
      }
    }
  } else {
    if (unused == nullptr) {
      counters_.restore_overflow.add();
      return true;
    }
    session::SubscriberLookup q{partition, static_cast<uint8_t>(imsi.size()), {}};
    std::memcpy(q.imsi, imsi.data(), imsi.size());
    if (free_held_ == kNone || datagram.size() > settings_.max_message ||
        !sink_.lookup(LookupKind::kSubscriber, partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q})) {
      counters_.restore_overflow.add();
      return true;
    }
    wait = unused;
    *wait = SubscriberWait{};
    wait->partition = partition;
    wait->imsi_length = static_cast<uint8_t>(imsi.size());
    std::memcpy(wait->imsi, imsi.data(), imsi.size());
    wait->deadline_ns = arrival.now_ns + settings_.timeout_ns;
    ++subscriber_wait_count_;
  }
  const uint32_t h = keep(arrival, datagram, sequence);
  if (h == kNone) return true;
  if (wait->last == kNone) wait->first = h;
  else held_[wait->last].next = h;
  wait->last = h;
  counters_.restore_parked.add();
  return true;
}

void Restorer::subscriberListed(std::span<const uint8_t> payload, uint64_t now_ns, uint64_t wall_ns,
                                Replay replay) noexcept {
  if (payload.size() < sizeof(session::SubscriberSessions)) return;
  session::SubscriberSessions a;
  std::memcpy(&a, payload.data(), sizeof a);
  SubscriberWait* wait = nullptr;
  for (SubscriberWait& w : subscriber_waits_) {
    if (w.imsi_length != 0 && w.imsi_length == a.imsi_length && w.partition == a.partition &&
        std::memcmp(w.imsi, a.imsi, w.imsi_length) == 0)
      wait = &w;
  }
  if (wait == nullptr) return;  // timed out meanwhile
  const uint32_t first = wait->first;
  *wait = SubscriberWait{};
  --subscriber_wait_count_;
  const std::size_t n = std::min<std::size_t>(a.count, (payload.size() - sizeof a) / sizeof(uint32_t));
  if (a.outcome != static_cast<uint8_t>(RestoreOutcome::kFound)) {
    counters_.restore_failed.add();
    release(first, true, now_ns, wall_ns, replay);  // the gateway retransmits
    return;
  }
  // Each session not held is read in; the messages wait for the last look-up
  // asked (one slot, one connection: its answer comes after the others').
  uint32_t wait_on = kNone;
  for (std::size_t i = 0; i < n; ++i) {
    uint32_t teid;
    std::memcpy(&teid, payload.data() + sizeof a + i * sizeof teid, sizeof teid);
    if (partitionOf(teid) != a.partition || sessions_.find(teid) != nullptr) continue;
    if (const uint32_t l = findLookup(teid); l != kNone) {
      wait_on = l;
      continue;
    }
    if (lookup_count_ == lookups_.size()) break;
    const SessionLookup q{teid, a.partition, 0};
    if (!sink_.lookup(LookupKind::kSession, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q})) break;
    uint32_t l = 0;
    while (lookups_[l].access_teid != 0) ++l;
    lookups_[l] = Lookup{teid, kNone, kNone, now_ns + settings_.timeout_ns};
    ++lookup_count_;
    wait_on = l;
  }
  if (wait_on == kNone) {
    // Every session of it is here already (or none is stored): the proxy
    // answers the message itself now.
    release(first, false, now_ns, wall_ns, replay);
    return;
  }
  Lookup& l = lookups_[wait_on];
  uint32_t last = first;
  while (last != kNone && held_[last].next != kNone) last = held_[last].next;
  if (first == kNone) return;
  if (l.last == kNone) l.first = first;
  else held_[l.last].next = first;
  l.last = last;
}

void Restorer::lookupEnded(uint32_t l) noexcept {
  if (lookups_[l].completion && completion_in_flight_ > 0) --completion_in_flight_;
}

void Restorer::finish(uint32_t l, bool drop, uint64_t now_ns, uint64_t wall_ns, Replay replay) noexcept {
  const uint32_t first = lookups_[l].first;
  lookupEnded(l);
  lookups_[l] = Lookup{};
  --lookup_count_;
  release(first, drop, now_ns, wall_ns, replay);
}

void Restorer::release(uint32_t first, bool drop, uint64_t now_ns, uint64_t wall_ns, Replay replay) noexcept {
  const bool was = replaying_subscriber_;
  replaying_subscriber_ = true;  // a message handed back here is never held for its subscriber again
  uint32_t h = first;
  while (h != kNone) {
    Held& m = held_[h];
    const uint32_t next = m.next;
    if (!drop) {
      Arrival a = m.arrival;
      a.now_ns = now_ns;
      a.wall_ns = wall_ns;
      a.replayed = true;
      replay.fn(replay.user, a, {arena_.get() + std::size_t{h} * settings_.max_message, m.length});
    }
    m.next = free_held_;
    free_held_ = h;
    --held_count_;
    h = next;
  }
  replaying_subscriber_ = was;
}

void Restorer::apply(LookupKind kind, std::span<const uint8_t> payload, uint64_t now_ns, uint64_t wall_ns,
                     Replay replay) noexcept {
  if (kind == LookupKind::kStoredTeids) {
    storedTeids(payload);
    return;
  }
  if (kind == LookupKind::kSubscriber) {
    subscriberListed(payload, now_ns, wall_ns, replay);
    return;
  }
  if (kind != LookupKind::kSession || payload.size() < sizeof(SessionRestore)) return;
  SessionRestore r;
  std::memcpy(&r, payload.data(), sizeof r);
  const uint32_t l = findLookup(r.access_teid);
  enum class Then { kReplay, kRefuse, kDrop } then = Then::kDrop;
  switch (static_cast<RestoreOutcome>(r.outcome)) {
    case RestoreOutcome::kFound: {
      // Installed even when its look-up timed out: the next message finds it.
      SessionShm* s = sessions_.install(r.access_teid, r.record);
      if (s == nullptr) {
        counters_.restore_conflicts.add();
        then = Then::kRefuse;
        break;
      }
      if (installed_.fn != nullptr) installed_.fn(installed_.user, *s, r.names);
      // A creation stored before its gateway's answer is not this worker's
      // to finish: the procedures remove it at its first message.
      if (s->state == static_cast<uint8_t>(SessionState::kCreating))
        s->state = static_cast<uint8_t>(SessionState::kIncomplete);
      counters_.restore_found.add();
      counters_.sessions_active.set(sessions_.active());
      then = Then::kReplay;
      break;
    }
    case RestoreOutcome::kAbsent:
      sessions_.forget(r.access_teid);
      counters_.restore_absent.add();
      then = Then::kRefuse;
      break;
    default:
      counters_.restore_failed.add();
      break;
  }
  if (l != kNone) {
    // Refused: replayed with hold() saying no, so the proxy answers them
    // Context Not Found.
    if (then == Then::kRefuse) refusing_ = r.access_teid;
    finish(l, then == Then::kDrop, now_ns, wall_ns, replay);
    refusing_ = 0;
  }
  counters_.sessions_stored.set(sessions_.stored());
}

void Restorer::storedTeids(std::span<const uint8_t> payload) noexcept {
  if (payload.size() < sizeof(StoredTeidsChunk)) return;
  StoredTeidsChunk c;
  std::memcpy(&c, payload.data(), sizeof c);
  if (c.partition % layout_.workers != layout_.index) return;
  const uint32_t lp = layout_.localPartition(c.partition);
  if (lp >= layout_.local_partitions) return;
  if (partition_done_[lp] != 0) {
    if (lp == refresh_lp_) refreshed(c, payload);
    else if (lp == completion_lp_) completionListed(c, payload);
    return;
  }
  if (c.outcome != static_cast<uint8_t>(RestoreOutcome::kFound) ||
      payload.size() < sizeof c + std::size_t{c.count} * sizeof(uint32_t)) {
    return;  // asked again once the retry pause since the question is over

  }
  for (uint32_t i = 0; i < c.count; ++i) {
    uint32_t teid;
    std::memcpy(&teid, payload.data() + sizeof c + std::size_t{i} * sizeof teid, sizeof teid);
    if (partitionOf(teid) != c.partition) continue;
    if (!sessions_.reserve(teid)) counters_.restore_conflicts.add();
  }
  counters_.sessions_stored.set(sessions_.stored());
  if (c.last == 0) return;
  partition_done_[lp] = 1;
  if (++partitions_done_ == layout_.local_partitions) {
    // The free chains are made again around the reserved slots before the
    // first allocation.
    sessions_.rebuild();
    loaded_ = 1;
  }
}

void Restorer::askStoredTeids(uint64_t now_ns) noexcept {
  // A few partitions at a time: a message held for a stored session asks
  // behind at most these, not behind every partition of a cold start.
  uint32_t asking = 0;
  for (uint32_t lp = 0; lp < layout_.local_partitions; ++lp) {
    if (partition_done_[lp] == 0 && asked_ns_[lp] != 0 && now_ns - asked_ns_[lp] < settings_.stored_retry_ns)
      ++asking;
  }
  for (uint32_t lp = 0; lp < layout_.local_partitions && asking < kStoredTeidsAsking; ++lp) {
    if (partition_done_[lp] != 0) continue;
    if (asked_ns_[lp] != 0 && now_ns - asked_ns_[lp] < settings_.stored_retry_ns) continue;
    const StoredTeidsLookup q{layout_.globalPartition(lp), 0};
    if (!sink_.lookup(LookupKind::kStoredTeids, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q})) {
      return;  // the ring is full: the rest next turn
    }
    // A partial list from an earlier question that failed half way is
    // harmless: reserving is idempotent.
    asked_ns_[lp] = now_ns;
    ++asking;
  }
}

void Restorer::refreshStored(uint64_t now_ns) noexcept {
  if (refresh_lp_ != kNone) {
    if (now_ns - refresh_asked_ns_ < settings_.timeout_ns) return;
    refresh_lp_ = kNone;  // unanswered: another partition, later
  }
  if (next_refresh_ns_ == 0) next_refresh_ns_ = now_ns + settings_.stored_refresh_ns;  // not right after the load
  if (now_ns < next_refresh_ns_ || sessions_.stored() == 0) return;
  next_refresh_ns_ = now_ns + settings_.stored_refresh_ns;
  // The next partition that holds reservations.
  for (uint32_t n = 0; n < layout_.local_partitions; ++n) {
    const uint32_t lp = (refresh_cursor_ + n) % layout_.local_partitions;
    if (sessions_.storedIn(lp) == 0) continue;
    const StoredTeidsLookup q{layout_.globalPartition(lp), 0};
    if (!sink_.lookup(LookupKind::kStoredTeids, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q})) return;
    refresh_lp_ = lp;
    refresh_cursor_ = lp + 1;
    refresh_asked_ns_ = now_ns;
    listed_.assign(layout_.per_partition, 0);
    return;
  }
}

void Restorer::refreshed(const StoredTeidsChunk& c, std::span<const uint8_t> payload) noexcept {
  if (c.outcome != static_cast<uint8_t>(RestoreOutcome::kFound) ||
      payload.size() < sizeof c + std::size_t{c.count} * sizeof(uint32_t)) {
    refresh_lp_ = kNone;  // the storage could not say: nothing is freed on a guess
    return;
  }
  for (uint32_t i = 0; i < c.count; ++i) {
    uint32_t teid;
    std::memcpy(&teid, payload.data() + sizeof c + std::size_t{i} * sizeof teid, sizeof teid);
    if (partitionOf(teid) != c.partition) continue;
    const TeidParts t = splitTeid(teid);
    if (t.slot < listed_.size()) listed_[t.slot] = 1;
  }
  if (c.last == 0) return;
  // Whole: a reservation the storage no longer names is a session another
  // instance deleted meanwhile.
  std::vector<uint32_t> gone;
  sessions_.forEachStored(refresh_lp_, [&](uint32_t teid, uint32_t slot) {
    if (listed_[slot] == 0) gone.push_back(teid);
  });
  for (uint32_t teid : gone) sessions_.forget(teid);
  counters_.stored_released.add(gone.size());
  counters_.sessions_stored.set(sessions_.stored());
  refresh_lp_ = kNone;
}

bool Restorer::complete() noexcept {
  if (completing_) return true;
  // PER-W2: relaxed, see GroupWritesShm.
  if (loaded_ == 0 || (acts_ != nullptr && acts_->load(std::memory_order_relaxed) == 0)) return false;
  completing_ = true;
  completion_next_lp_ = 0;
  completion_lp_ = kNone;
  to_fetch_.clear();
  fetched_ = 0;
  return true;
}

void Restorer::completionListed(const StoredTeidsChunk& c, std::span<const uint8_t> payload) noexcept {
  if (c.outcome != static_cast<uint8_t>(RestoreOutcome::kFound) ||
      payload.size() < sizeof c + std::size_t{c.count} * sizeof(uint32_t)) {
    return;  // asked again once the look-up timeout is over; what was listed is looked up once
  }
  for (uint32_t i = 0; i < c.count; ++i) {
    uint32_t teid;
    std::memcpy(&teid, payload.data() + sizeof c + std::size_t{i} * sizeof teid, sizeof teid);
    if (partitionOf(teid) != c.partition) continue;
    if (sessions_.find(teid) == nullptr) to_fetch_.push_back(teid);
  }
  if (c.last == 0) return;
  completion_lp_ = kNone;
  ++completion_next_lp_;
}

void Restorer::stepCompletion(uint64_t now_ns) noexcept {
  // Another instance took the traffic meanwhile: what is left is its to act on.
  // PER-W2: relaxed, see GroupWritesShm.
  if (acts_ != nullptr && acts_->load(std::memory_order_relaxed) == 0) {
    completing_ = false;
    to_fetch_.clear();
    fetched_ = 0;
    completion_lp_ = kNone;
    return;
  }
  // The TEIDs listed so far, a bounded number in flight.
  while (fetched_ < to_fetch_.size() && completion_in_flight_ < completionSlots() && lookup_count_ < lookups_.size()) {
    const uint32_t teid = to_fetch_[fetched_];
    if (sessions_.find(teid) != nullptr || findLookup(teid) != kNone) {
      ++fetched_;  // read in meanwhile, or being read for a message
      continue;
    }
    const SessionLookup q{teid, partitionOf(teid), 0};
    if (!sink_.lookup(LookupKind::kSession, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q}))
      return;  // the ring is full: the rest next turn
    uint32_t l = 0;
    while (lookups_[l].access_teid != 0) ++l;
    lookups_[l] = Lookup{teid, kNone, kNone, now_ns + settings_.timeout_ns, true};
    ++lookup_count_;
    ++completion_in_flight_;
    ++fetched_;
    counters_.completion_reads.add();
  }
  if (fetched_ == to_fetch_.size()) {
    to_fetch_.clear();
    fetched_ = 0;
  }
  // The next partition's list, once the last one's TEIDs are all asked for
  // (and no refresh has a list coming: their answers share the ring).
  if (completion_lp_ != kNone) {
    if (now_ns - completion_asked_ns_ < settings_.timeout_ns) return;
    completion_lp_ = kNone;  // unanswered: asked again
  }
  if (!to_fetch_.empty() || refresh_lp_ != kNone) return;
  if (completion_next_lp_ < layout_.local_partitions) {
    const StoredTeidsLookup q{layout_.globalPartition(completion_next_lp_), 0};
    if (!sink_.lookup(LookupKind::kStoredTeids, q.partition, {reinterpret_cast<const uint8_t*>(&q), sizeof q})) return;
    completion_lp_ = completion_next_lp_;
    completion_asked_ns_ = now_ns;
    return;
  }
  if (completion_in_flight_ != 0) return;
  completing_ = false;
  ++completions_;
  counters_.completions.add();
}

void Restorer::tick(uint64_t now_ns) noexcept {
  if (loaded_ == 0) askStoredTeids(now_ns);
  else if (completing_) stepCompletion(now_ns);
  else if (settings_.stored_refresh_ns != 0) refreshStored(now_ns);
  if ((lookup_count_ == 0 && subscriber_wait_count_ == 0) || now_ns < next_sweep_ns_) return;
  next_sweep_ns_ = now_ns + kSweepPeriodNs;
  for (SubscriberWait& w : subscriber_waits_) {
    if (w.imsi_length != 0 && now_ns >= w.deadline_ns) {
      counters_.restore_timeouts.add();
      const uint32_t first = w.first;
      w = SubscriberWait{};
      --subscriber_wait_count_;
      release(first, true, now_ns, 0, Replay{nullptr, nullptr});
    }
  }
  for (uint32_t l = 0; l < lookups_.size(); ++l) {
    if (lookups_[l].access_teid != 0 && now_ns >= lookups_[l].deadline_ns) {
      counters_.restore_timeouts.add();
      finish(l, true, now_ns, 0, Replay{nullptr, nullptr});
    }
  }
}

}  // namespace gtpcp::worker
