#include "worker_runtime.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "common/control/heartbeat.h"
#include "common/group/forwarder_shm.h"
#include "common/group/gateway_table_shm.h"
#include "common/group/meta.h"
#include "common/group/persister_shm.h"
#include "common/group/rings.h"
#include "common/group/segments.h"
#include "common/time/clock.h"

namespace gtpcp::worker {

namespace {


// Longest sleep: the transaction sweep and the heartbeat need a turn now and then.
constexpr std::chrono::milliseconds kIdleWait{100};
// How often a worker looks for the forwarder's and the persister's segments
// while they do not exist yet (it starts first).
constexpr uint64_t kAttachPeriodNs = 10'000'000;

}  // namespace

// A ring the worker writes, published once per loop turn when written to.
class PublishedRing {
 public:
  explicit PublishedRing(ring::Producer producer) : producer_(std::move(producer)) {}
  // Publishes what was written; true when there was something.
  bool publish() noexcept {
    if (!pending_) return false;
    producer_.publish();
    pending_ = false;
    return true;
  }

 protected:
  ring::Producer producer_;
  bool pending_ = false;
};

// The egress ring; with sync persistence, also where answers wait for Redis.
//
// Sync. The answers one datagram's handling sends are staged; once handled,
// they go at once when the persister has released every change record
// written so far, else they are held, in order, tagged with the persist
// ring's position, and leave when the persister's released tail passes it.
// Holding behind every earlier record, not just the datagram's own, keeps
// the rule simple and makes an answer replayed from the cache wait like the
// first copy did.
class WorkerRuntime::RingEgress final : public Egress, public PublishedRing {
 public:
  RingEgress(ring::Producer producer, WorkerCounters& counters, uint64_t hold_bytes)
      : PublishedRing(std::move(producer)), counters_(counters) {
    if (hold_bytes != 0) {
      bytes_.resize(hold_bytes);
      entries_.resize(kMaxHeld);
    }
  }

  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept override {
    return send(socket, to, bytes, 0);
  }
  // `receive_ns` goes in the record's meta: the forwarder measures from it.
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
            uint64_t receive_ns) noexcept override {
    // Only answers wait: a request on its way to a peer changes nothing the
    // requester was told, and holding a creation toward the PGW would only
    // run down its failover timer.
    if (staging_ && isResponse(bytes)) return stage(socket, to, bytes, receive_ns);
    return push(socket, to, bytes, receive_ns);
  }

  void beginStaging() noexcept {
    staging_ = true;
    staged_first_ = count_;
  }
  // The handling is over: its datagrams leave now when nothing is unreleased
  // below `position`, else wait for it.
  void endStaging(uint64_t position, uint64_t released) noexcept {
    staging_ = false;
    for (uint32_t i = staged_first_; i < count_; ++i) entries_[(head_ + i) % kMaxHeld].position = position;
    if (count_ != staged_first_) counters_.sync_held.add(count_ - staged_first_);
    releaseHeld(released);
  }
  // Sends what waited for records now released.
  void releaseHeld(uint64_t released) noexcept {
    while (count_ != 0) {
      const Held& h = entries_[head_];
      if (h.position > released) break;
      if (!push(h.socket, h.to, {bytes_.data() + h.offset, h.length}, h.receive_ns))
        break;  // the egress ring is full: next turn
      head_ = (head_ + 1) % kMaxHeld;
      --count_;
    }
    if (count_ == 0) used_end_ = 0;
  }
  bool holding() const noexcept { return count_ != 0; }
  uint32_t held() const noexcept { return count_; }
  uint64_t oldestHeld() const noexcept { return count_ == 0 ? 0 : entries_[head_].position; }

 private:
  static constexpr uint32_t kMaxHeld = 65536;
  struct Held {
    uint8_t socket;
    net::Address to;
    uint64_t offset;
    uint32_t length;
    uint64_t position;  // leaves once the persister's released tail reaches it
    uint64_t receive_ns;  // of the datagram it answers: the time held counts as the proxy's
  };

  static bool isResponse(std::span<const uint8_t> bytes) noexcept {
    return bytes.size() >= 2 &&
           gtp::v2::messageTypeInfo(bytes[1]).role == gtp::v2::MessageRole::kResponse;
  }
  bool push(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes, uint64_t receive_ns) noexcept {
    ring::DatagramMeta meta{};
    meta.receive_ns = receive_ns;
    meta.local_socket = socket;
    group::setPeer(meta, to);
    if (!producer_.push(meta, bytes)) return false;
    pending_ = true;
    return true;
  }
  bool stage(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes, uint64_t receive_ns) noexcept {
    // The bytes are appended; space is reclaimed once everything held left.
    if (count_ == kMaxHeld || bytes_.size() - used_end_ < bytes.size()) {
      counters_.sync_overflow.add();
      return true;  // dropped: the peer retransmits
    }
    std::memcpy(bytes_.data() + used_end_, bytes.data(), bytes.size());
    entries_[(head_ + count_) % kMaxHeld] =
        Held{socket, to, used_end_, static_cast<uint32_t>(bytes.size()), 0, receive_ns};
    used_end_ += bytes.size();
    ++count_;
    return true;
  }

  WorkerCounters& counters_;
  bool staging_ = false;
  std::vector<uint8_t> bytes_;
  std::vector<Held> entries_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  uint32_t staged_first_ = 0;  // entries [staged_first_, count_) belong to the handling under way
  uint64_t used_end_ = 0;
};

class WorkerRuntime::RingPersist final : public PersistSink, public PublishedRing {
 public:
  using PublishedRing::PublishedRing;
  std::span<uint8_t> reserve(ChangeKind kind, uint16_t partition, std::size_t max) noexcept override {
    ring::DatagramMeta meta{};
    meta.flags = static_cast<uint16_t>(kind);
    meta.aux = partition;
    uint8_t* p = producer_.reserve(meta, max);
    return p == nullptr ? std::span<uint8_t>{} : std::span<uint8_t>(p, max);
  }
  void commit(std::size_t length) noexcept override {
    producer_.commit(length);
    pending_ = true;
  }
  uint64_t position() const noexcept { return producer_.position(); }
  uint64_t released() const noexcept { return producer_.released(); }
};

class WorkerRuntime::RingLookup final : public LookupSink, public PublishedRing {
 public:
  using PublishedRing::PublishedRing;
  bool lookup(LookupKind kind, uint16_t partition, std::span<const uint8_t> body) noexcept override {
    ring::DatagramMeta meta{};
    meta.flags = static_cast<uint16_t>(kind);
    meta.aux = partition;
    if (!producer_.push(meta, body)) return false;
    pending_ = true;
    return true;
  }
};

tl::expected<std::unique_ptr<WorkerRuntime>, std::string> WorkerRuntime::open(
    const WorkerOptions& options, const config::RoutingTable& routing) {
  std::unique_ptr<WorkerRuntime> w(new WorkerRuntime());
  w->options_ = options;
  const WorkerLayout layout =
      WorkerLayout::compute(options.workers, options.index, options.per_partition, options.transactions,
                            options.answer_cache_bytes);

  auto state = ring::SharedSegment::createOrAttach(
      options.paths.workerSegment(options.index), layout.total, kWorkerSegmentKind,
      [&layout](void* payload, std::size_t) -> ring::Result<void> {
        auto* h = new (payload) WorkerShmHeader();
        h->workers = layout.workers;
        h->index = layout.index;
        h->per_partition = layout.per_partition;
        h->transactions = layout.transactions;
        h->local_partitions = layout.local_partitions;
        h->partitions_offset = layout.partitions_offset;
        h->sessions_offset = layout.sessions_offset;
        h->transactions_offset = layout.transactions_offset;
        h->answer_bytes = layout.answer_bytes;
        h->answers_offset = layout.answers_offset;
        // A random first sequence number: a peer that still holds answers
        // to an earlier incarnation of this worker's requests must not match
        // them to new ones.
        uint64_t start = 0;
        if (getrandom(&start, sizeof start, 0) != sizeof start) start = static_cast<uint64_t>(monotonicNs());
        h->sequence_counter = start;
        // GTPv1's 16-bit numbers, one start per leg (common/group/worker_shm.h).
        h->v1_sequence_counter[0] = static_cast<uint16_t>(start >> 32);
        h->v1_sequence_counter[1] = static_cast<uint16_t>(start >> 48);
        return {};
      },
      ring::Prefault::kNo);
  if (!state) return tl::unexpected(state.error().message);
  w->state_.emplace(std::move(*state));
  w->adopted_ = !w->state_->created();
  auto* base = static_cast<uint8_t*>(w->state_->payload());
  w->header_ = reinterpret_cast<WorkerShmHeader*>(base);
  const WorkerShmHeader& h = *w->header_;
  if (h.workers != layout.workers || h.index != layout.index || h.per_partition != layout.per_partition ||
      h.transactions != layout.transactions || h.sessions_offset != layout.sessions_offset ||
      h.answer_bytes != layout.answer_bytes || h.answers_offset != layout.answers_offset) {
    return tl::unexpected("shared memory " + options.paths.workerSegment(options.index) +
                          ": holds sessions for workers=" + std::to_string(h.workers) + " index=" +
                          std::to_string(h.index) + " per_partition=" + std::to_string(h.per_partition) +
                          " transactions=" + std::to_string(h.transactions) + " answer_cache_bytes=" +
                          std::to_string(h.answer_bytes) +
                          ", but the configuration says workers=" + std::to_string(layout.workers) +
                          " index=" + std::to_string(layout.index) + " per_partition=" +
                          std::to_string(layout.per_partition) + " transactions=" +
                          std::to_string(layout.transactions) + " answer_cache_bytes=" +
                          std::to_string(layout.answer_bytes) +
                          "; stop the group (gtpcp stop) before changing them");
  }
  w->sessions_ = std::make_unique<SessionTable>(
      layout, reinterpret_cast<PartitionShm*>(base + layout.partitions_offset),
      reinterpret_cast<SessionShm*>(base + layout.sessions_offset), options.share, options.share_count);
  w->transactions_ = std::make_unique<TransactionTable>(layout.transactionMemory(base, *w->header_));
  w->sessions_->rebuild();
  w->transactions_->rebuild(!w->adopted_);
  w->header_->counters.sessions_active.set(w->sessions_->active());

  const std::pair<group::RingKind, uint32_t> rings[] = {{group::RingKind::kPriority, options.priority_slots},
                                                         {group::RingKind::kNew, options.new_slots},
                                                         {group::RingKind::kEgress, options.egress_slots}};
  for (const auto& [kind, slots] : rings) {
    auto seg = group::createRingSegment(options.paths.ring(options.index, kind), slots);
    if (!seg) return tl::unexpected(seg.error().message);
    w->segments_.push_back(std::move(*seg));
  }
  auto bell = group::createDoorbellSegment(options.paths.workerDoorbell(options.index));
  if (!bell) return tl::unexpected(bell.error().message);
  w->segments_.push_back(std::move(*bell));
  ring::SharedSegment& prio = w->segments_[0];
  ring::SharedSegment& fresh = w->segments_[1];
  ring::SharedSegment& egress = w->segments_[2];
  auto p = ring::Consumer::attach(prio.payload(), prio.payloadSize());
  auto n = ring::Consumer::attach(fresh.payload(), fresh.payloadSize());
  auto e = ring::Producer::attach(egress.payload(), egress.payloadSize());
  if (!p) return tl::unexpected(p.error().message);
  if (!n) return tl::unexpected(n.error().message);
  if (!e) return tl::unexpected(e.error().message);
  w->priority_ = std::make_unique<ring::Consumer>(std::move(*p));
  w->fresh_ = std::make_unique<ring::Consumer>(std::move(*n));
  w->egress_ = std::make_unique<RingEgress>(std::move(*e), w->header_->counters,
                                            options.sync && options.persist ? options.sync_hold_bytes : 0);
  w->doorbell_ = std::make_unique<ring::Doorbell>(static_cast<ring::DoorbellShm*>(w->segments_[3].payload()));

  w->proxy_ = std::make_unique<Proxy>(options.proxy, *w->header_, *w->sessions_, *w->transactions_, routing,
                                      *w->egress_);
  if (options.control) {
    auto control = group::attachControl(options.paths.controlSegment());
    if (!control) return tl::unexpected(control.error().message);
    w->control_segment_.emplace(std::move(*control));
    w->control_ = &group::controlOf(*w->control_segment_);
    w->routing_generation_ = options.routing_generation;
    if (options.index < group::kControlMaxWorkers) {
      group::ControlAckShm& ack = w->control_->workers[options.index];
      ack.routing_hash.store(routing.contentHash(), std::memory_order_relaxed);
      ack.routing_failed.store(0, std::memory_order_relaxed);
      // CTL-R2: pairs with CTL-A2 in the control server.
      ack.routing_generation.store(options.routing_generation, std::memory_order_release);
    }
  }
  if (options.persist) {
    auto seg = group::createRingSegment(options.paths.ring(options.index, group::RingKind::kPersist),
                                        options.persist_slots, group::kPersistRingPrefault);
    if (!seg) return tl::unexpected(seg.error().message);
    w->segments_.push_back(std::move(*seg));
    auto producer = ring::Producer::attach(w->segments_.back().payload(), w->segments_.back().payloadSize());
    if (!producer) return tl::unexpected(producer.error().message);
    w->persist_ = std::make_unique<RingPersist>(std::move(*producer));
    w->sync_ = options.sync;
    w->proxy_->setPersist(w->persist_.get());
    auto lookup_seg = group::createRingSegment(options.paths.ring(options.index, group::RingKind::kLookup),
                                               kLookupRingSlots);
    if (!lookup_seg) return tl::unexpected(lookup_seg.error().message);
    w->segments_.push_back(std::move(*lookup_seg));
    auto lookups = ring::Producer::attach(w->segments_.back().payload(), w->segments_.back().payloadSize());
    if (!lookups) return tl::unexpected(lookups.error().message);
    w->lookups_ = std::make_unique<RingLookup>(std::move(*lookups));
    auto restore_seg = group::createRingSegment(options.paths.ring(options.index, group::RingKind::kRestore),
                                                kLookupRingSlots);
    if (!restore_seg) return tl::unexpected(restore_seg.error().message);
    w->segments_.push_back(std::move(*restore_seg));
    auto restore = ring::Consumer::attach(w->segments_.back().payload(), w->segments_.back().payloadSize());
    if (!restore) return tl::unexpected(restore.error().message);
    w->restore_ = std::make_unique<ring::Consumer>(std::move(*restore));
    w->restorer_ = std::make_unique<Restorer>(options.restore, layout, *w->sessions_, w->header_->counters,
                                              *w->lookups_, w->header_->stored_teids_loaded);
    w->proxy_->setRestorer(w->restorer_.get());
    // Until the persister's segment says otherwise, this instance does not
    // act for the group's stored sessions.
    static const std::atomic<uint32_t> kNotKnownYet{0};
    w->restorer_->setActsFlag(&kNotKnownYet);
    w->stale_ = std::make_unique<StaleSessions>(*w->sessions_, *w->transactions_, *w->header_);
  }
  auto forwarder_bell = ring::BellRinger::open(options.paths.forwarderBellSocket());
  if (!forwarder_bell) return tl::unexpected(forwarder_bell.error().message);
  w->forwarder_bell_.emplace(std::move(*forwarder_bell));
  if (options.persist) {
    auto persister_bell = ring::BellRinger::open(options.paths.persisterBellSocket());
    if (!persister_bell) return tl::unexpected(persister_bell.error().message);
    w->persister_bell_.emplace(std::move(*persister_bell));
  }
  w->attachNeighbours(monotonicNs());
  return w;
}

WorkerRuntime::~WorkerRuntime() = default;

void WorkerRuntime::attachNeighbours(uint64_t now_ns) noexcept {
  next_attach_ns_ = now_ns + kAttachPeriodNs;
  // Segments the forwarder and the persister own (common/group/segments.h):
  // attached once they exist, never made here. One look each, no wait.
  if (gateway_table_ == nullptr) {
    if (auto seg = group::attachOwned(options_.paths.gatewayTableSegment(), forwarder::kGatewayTableSegmentKind,
                                      sizeof(forwarder::GatewayTableShm), group::kForwarderOwner,
                                      std::chrono::milliseconds(0))) {
      neighbour_segments_.push_back(std::move(*seg));
      gateway_table_ = static_cast<const forwarder::GatewayTableShm*>(neighbour_segments_.back().payload());
      proxy_->setGatewayStatus(gateway_table_);
    }
  }
  if (forwarder_bell_shm_ == nullptr) {
    if (auto seg = group::attachOwned(options_.paths.forwarderSegment(), forwarder::kForwarderSegmentKind,
                                      sizeof(forwarder::ForwarderShm), group::kForwarderOwner,
                                      std::chrono::milliseconds(0))) {
      neighbour_segments_.push_back(std::move(*seg));
      forwarder_bell_shm_ = &static_cast<const forwarder::ForwarderShm*>(neighbour_segments_.back().payload())->bell;
    }
  }
  if (persister_bell_ && persister_bell_shm_ == nullptr) {
    if (auto seg = group::attachOwned(options_.paths.persisterSegment(), persister::kPersisterSegmentKind,
                                      sizeof(persister::PersisterShm), group::kPersisterOwner,
                                      std::chrono::milliseconds(0))) {
      neighbour_segments_.push_back(std::move(*seg));
      const auto* persister = static_cast<const persister::PersisterShm*>(neighbour_segments_.back().payload());
      persister_bell_shm_ = &persister->bell;
      group_writes_ = &persister->writes;
      if (restorer_) restorer_->setActsFlag(&group_writes_->acts_for_stored);
    }
  }
  neighbours_missing_ = gateway_table_ == nullptr || forwarder_bell_shm_ == nullptr ||
                        (persister_bell_ && persister_bell_shm_ == nullptr);
}

std::size_t WorkerRuntime::drain(ring::Consumer& ring, std::size_t limit, uint64_t now, uint64_t wall) noexcept {
  std::size_t n = 0;
  while (n < limit) {
    auto r = ring.peek();
    if (!r) break;
    Arrival a;
    a.peer = group::peerOf(*r->meta);
    a.socket = r->meta->local_socket;
    a.now_ns = now;
    a.wall_ns = wall;
    a.receive_ns = r->meta->receive_ns;
    // The slot is this worker's until release(): the proxy patches in place.
    handle(a, std::span<uint8_t>(const_cast<uint8_t*>(r->payload.data()), r->payload.size()));
    ring.pop();
    ++n;
  }
  return n;
}

void WorkerRuntime::handle(const Arrival& a, std::span<uint8_t> datagram) noexcept {
  if (!sync_) {
    proxy_->handle(a, datagram);
    return;
  }
  egress_->beginStaging();
  proxy_->handle(a, datagram);
  egress_->endStaging(persist_->position(), persist_->released());
}

std::size_t WorkerRuntime::drainRestore(uint64_t now, uint64_t wall) noexcept {
  std::size_t n = 0;
  const Restorer::Replay replay{[](void* self, const Arrival& a, std::span<uint8_t> datagram) noexcept {
                                  static_cast<WorkerRuntime*>(self)->handle(a, datagram);
                                },
                                this};
  // Bounded like every other ring: a burst of answers (each may replay held
  // messages) never keeps the loop from beating and serving the others.
  constexpr std::size_t kRestoreBatch = session::kLookupRingSlots / 4;
  while (n < kRestoreBatch) {
    auto r = restore_->peek();
    if (!r) break;
    restorer_->apply(static_cast<LookupKind>(r->meta->flags), r->payload, now, wall, replay);
    restore_->pop();
    ++n;
  }
  if (n != 0) restore_->release();
  return n;
}

void WorkerRuntime::wakeForwarder() noexcept { forwarder_bell_->ring(forwarder_bell_shm_); }

void WorkerRuntime::wakePersister() noexcept {
  if (persister_bell_) persister_bell_->ring(persister_bell_shm_);
}

void WorkerRuntime::reloadRouting() noexcept {
  auto in_force = group::routingInForce(*control_);
  if (!in_force) return;
  routing_generation_ = in_force->generation;
  if (options_.index >= group::kControlMaxWorkers) return;
  group::ControlAckShm& ack = control_->workers[options_.index];
  auto routing = config::loadRoutingDocument(in_force->path);
  if (routing) {
    routing_before_ = std::move(routing_);
    routing_ = std::make_unique<config::RoutingTable>(std::move(*routing));
    proxy_->setRouting(*routing_);
    ack.routing_hash.store(routing_->contentHash(), std::memory_order_relaxed);
    ack.routing_failed.store(0, std::memory_order_relaxed);
    header_->counters.routing_reloads.add();
  } else {
    ack.routing_failed.store(1, std::memory_order_relaxed);
    header_->counters.routing_reload_failures.add();
  }
  // CTL-R2: pairs with CTL-A2 in the control server: hash and verdict first.
  ack.routing_generation.store(routing_generation_, std::memory_order_release);
}

void WorkerRuntime::run(const std::atomic<bool>& stop) noexcept {
  group::ProcessStatusShm& status = header_->status;
  group::announceServing(status);

  const std::size_t batch = options_.batch;
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonicNs();
    const uint64_t wall = realtimeNs();
    // Before a datagram is handled with the configuration's Recovery: a
    // datagram came through the forwarder, whose segments exist then.
    if (neighbours_missing_ && (now >= next_attach_ns_ || !priority_->empty() || !fresh_->empty()))
      attachNeighbours(now);
    // Established sessions first and without limit beyond a few batches;
    // then one batch of new sessions.
    // Sessions the storage sent back first: their held messages are the oldest.
    std::size_t n = restorer_ ? drainRestore(now, wall) : 0;
    const std::size_t taken = drain(*priority_, batch * 4, now, wall);
    n += taken;
    // New sessions wait until the stored sessions' TEIDs are reserved.
    const bool creating = !restorer_ || restorer_->ready();
    const std::size_t fresh = creating ? drain(*fresh_, batch, now, wall) : 0;
    n += fresh;
    if (taken != 0) priority_->release();
    if (fresh != 0) fresh_->release();
    // Timers send too: failovers, Delete Bearer Requests after a gateway restart.
    proxy_->tick(now);
    if (restorer_) restorer_->tick(now);
    // PER-W1: relaxed, the epoch carries nothing else.
    const bool demoting = stale_ && group_writes_ != nullptr && restorer_->ready() &&
                          stale_->turn(now, group_writes_->foreign_epoch.load(std::memory_order_relaxed));
    if (sync_) {
      if (egress_->holding()) egress_->releaseHeld(persist_->released());
      header_->counters.sync_holding.set(egress_->held());
    }
    if (egress_->publish()) wakeForwarder();
    bool persister_work = persist_ && persist_->publish();
    persister_work = (lookups_ && lookups_->publish()) || persister_work;
    if (persister_work) wakePersister();
    status.heartbeat_ns.store(now, std::memory_order_relaxed);
    if (heartbeat_ != nullptr) heartbeat_->beat(now);
    header_->counters.transactions_pending.set(transactions_->pending());
    if (const uint64_t c = priority_->corruptions() + fresh_->corruptions() + (restore_ ? restore_->corruptions() : 0);
        c != corruptions_seen_) {
      header_->counters.ring_corruptions.add(c - corruptions_seen_);
      corruptions_seen_ = c;
    }
    // Relaxed: a changed generation is read again, acquired, by
    // routingInForce() (CTL-A1, pairs with CTL-R1 in the control server).
    if (control_ != nullptr && control_->routing_generation.load(std::memory_order_relaxed) != routing_generation_)
      reloadRouting();
    if (n == 0 && !demoting) {
      // Waiting on the storage's TEIDs, or on Redis for held answers: look
      // again soon, not at the idle period (the persister also rings).
      const bool holding = sync_ && egress_->holding();
      const auto wait = !creating || holding ? std::chrono::milliseconds(holding ? 1 : 5) : kIdleWait;
      doorbell_->wait(
          [this, creating, holding] {
            return !priority_->empty() || (creating && !fresh_->empty()) || (restore_ && !restore_->empty()) ||
                   (holding && persist_->released() >= egress_->oldestHeld()) ||
                   (control_ != nullptr &&
                    control_->routing_generation.load(std::memory_order_relaxed) != routing_generation_);
          },
          wait);
    }
  }
  group::announceStopped(status);
}

}  // namespace gtpcp::worker
