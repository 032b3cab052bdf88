#include "persister_runtime.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/group/rings.h"
#include "common/time/clock.h"
#include "redis_slot.h"
#include "common/control/heartbeat.h"
#include "common/group/segments.h"

namespace gtpcp::persister {

namespace {
// Longest sleep with nothing to do: heartbeats and gauges stay fresh.
constexpr uint64_t kIdleWaitMs = 100;
// How long a stopping persister keeps writing what it holds.
constexpr uint64_t kFlushOnStopNs = 2'000'000'000;
// The instance's entry in the group's instance table: renewed every second,
// valid for ten. A Redis failover holds the renewals up for seconds (a
// Cluster's slot moving, then the client's topology refresh), and an
// instance starting meanwhile must still see this one running, or it would
// raise the group's Recovery under it.
constexpr uint64_t kAnnouncePeriodNs = 1'000'000'000;
constexpr uint64_t kAnnounceValidMs = 10'000;
}  // namespace

tl::expected<std::unique_ptr<PersisterRuntime>, std::string> PersisterRuntime::open(const PersisterOptions& options) {
  if (options.workers > kMaxChannels) return tl::unexpected("at most " + std::to_string(kMaxChannels) + " workers");
  std::unique_ptr<PersisterRuntime> p(new PersisterRuntime());
  p->options_ = options;
  auto seg = ring::SharedSegment::createOrAttach(options.paths.persisterSegment(), sizeof(PersisterShm),
                                                 kPersisterSegmentKind, [](void* payload, std::size_t) -> ring::Result<void> {
                                                   new (payload) PersisterShm();
                                                   return {};
                                                 });
  if (!seg) return tl::unexpected("shared memory " + options.paths.persisterSegment() + ": " + seg.error().message);
  p->segment_.emplace(std::move(*seg));
  p->shm_ = static_cast<PersisterShm*>(p->segment_->payload());
  p->shm_->status.state.store(static_cast<uint32_t>(group::ProcessState::kStarting), std::memory_order_relaxed);

  for (uint32_t w = 0; w < options.workers; ++w) {
    const std::string name = options.paths.ring(w, group::RingKind::kPersist);
    auto r = group::attachRingSegment(name, options.persist_slots, group::workerOwner(w), group::kOwnerWait);
    if (!r) return tl::unexpected("shared memory " + name + ": " + r.error().message);
    p->ring_segments_.push_back(std::move(*r));
  }
  for (ring::SharedSegment& s : p->ring_segments_) {
    auto c = ring::Consumer::attach(s.payload(), s.payloadSize());
    if (!c) return tl::unexpected("persist ring: " + c.error().message);
    p->rings_.push_back(std::make_unique<ring::Consumer>(std::move(*c)));
  }

  p->loop_ = std::make_unique<EventLoop>();
  p->keys_ = std::make_unique<KeyNames>(options.group);
  for (uint32_t w = 0; w < options.workers; ++w) {
    auto client = RedisClientImpl::create(*p->loop_, options.redis, &p->shm_->redis[w]);
    if (!client) return tl::unexpected(client.error());
    p->clients_.push_back(std::move(*client));
    p->channels_.push_back(std::make_unique<Channel>(*p->rings_[w], *p->clients_[w], *p->keys_, p->shm_->counters,
                                                     options.batch_records));
    p->channels_.back()->waitForReplicas(options.wait_replicas, options.wait_ms);
    p->channels_.back()->measureLag(&p->shm_->lag);
  }

  if (!p->clients_.empty()) {
    p->writes_ = std::make_unique<WritesWatch>(*p->clients_[0], options.group, options.instance, p->shm_->writes,
                                               p->shm_->counters, realtimeNs() / 1'000'000);
  }

  for (uint32_t w = 0; w < options.workers; ++w) {
    auto lookups = group::attachRingSegment(options.paths.ring(w, group::RingKind::kLookup), session::kLookupRingSlots,
                                            group::workerOwner(w), group::kOwnerWait);
    auto answers = group::attachRingSegment(options.paths.ring(w, group::RingKind::kRestore), session::kLookupRingSlots,
                                            group::workerOwner(w), group::kOwnerWait);
    auto bell = group::attachDoorbellSegment(options.paths.workerDoorbell(w), group::workerOwner(w), group::kOwnerWait);
    if (!lookups) return tl::unexpected("lookup ring: " + lookups.error().message);
    if (!answers) return tl::unexpected("restore ring: " + answers.error().message);
    if (!bell) return tl::unexpected("worker doorbell: " + bell.error().message);
    auto c = ring::Consumer::attach(lookups->payload(), lookups->payloadSize());
    auto pr = ring::Producer::attach(answers->payload(), answers->payloadSize());
    if (!c) return tl::unexpected("lookup ring: " + c.error().message);
    if (!pr) return tl::unexpected("restore ring: " + pr.error().message);
    p->lookup_rings_.push_back(std::make_unique<ring::Consumer>(std::move(*c)));
    p->answer_rings_.push_back(std::make_unique<ring::Producer>(std::move(*pr)));
    auto* bell_shm = static_cast<ring::DoorbellShm*>(bell->payload());
    p->worker_bells_.emplace_back(bell_shm);
    p->restore_segments_.push_back(std::move(*lookups));
    p->restore_segments_.push_back(std::move(*answers));
    p->restore_segments_.push_back(std::move(*bell));
    p->restore_.push_back(std::make_unique<RestoreServer>(*p->lookup_rings_[w], *p->answer_rings_[w],
                                                          ring::Doorbell(bell_shm), *p->clients_[w], *p->keys_,
                                                          p->shm_->counters));
  }

  // The workers' bell: a byte on this socket when they published while the
  // persister slept (common/ring/bell.h).
  auto bell = ring::BellListener::bind(options.paths.persisterBellSocket());
  if (!bell) return tl::unexpected(bell.error().message);
  p->bell_.emplace(std::move(*bell));
  p->bell_handler_ = IoHandler{&PersisterRuntime::onBell, p.get()};
  p->loop_->add(p->bell_->fd(), &p->bell_handler_, EPOLLIN);
  return p;
}

PersisterRuntime::~PersisterRuntime() {
  channels_.clear();
  // Its completions run from the clients' destructors.
  clients_.clear();
  writes_.reset();
  if (bell_) loop_->remove(bell_->fd());
}

void PersisterRuntime::onBell(void* self, uint32_t) noexcept { static_cast<PersisterRuntime*>(self)->bell_->drain(); }

bool PersisterRuntime::turn() noexcept {
  bool work = false;
  const uint64_t now = monotonicNs();
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i]->turn(now)) continue;
    work = true;
    // Costs a fence and a load unless the worker sleeps.
    worker_bells_[i].ring();
  }
  for (auto& r : restore_) work |= r->turn();
  return work;
}

void PersisterRuntime::announceInstance(uint64_t now_ns) noexcept {
  if (now_ns < next_announce_ns_ || clients_.empty()) return;
  next_announce_ns_ = now_ns + kAnnouncePeriodNs;
  if (instances_key_.empty()) instances_key_ = group::instancesKey(options_.group);
  announce_value_ = std::to_string(realtimeNs() / 1'000'000 + kAnnounceValidMs);
  // Which primaries the channels write to, for the metrics (PER-P1).
  std::vector<std::string> primaries;
  for (const auto& c : clients_) c->primaries(primaries);
  std::string text;
  for (const std::string& p : primaries) text += (text.empty() ? "" : ",") + p;
  if (text != primaries_text_) {
    primaries_text_ = text;
    publishPrimaries(shm_->primaries, text);
  }
  const std::string_view argv[] = {"HSET", instances_key_, options_.instance, announce_value_};
  // Unanswered or failed: the next period's write replaces it.
  (void)clients_[0]->submit(keySlot(instances_key_), argv, RedisCompletion{[](void*, const RedisResult&) noexcept {}, nullptr});
  if (shares_key_.empty()) {
    shares_key_ = group::sharesKey(options_.group);
    share_value_ = std::to_string(options_.share) + "/" + std::to_string(options_.share_count);
  }
  const std::string_view share[] = {"HSET", shares_key_, options_.instance, share_value_};
  (void)clients_[0]->submit(keySlot(shares_key_), share, RedisCompletion{[](void*, const RedisResult&) noexcept {}, nullptr});
}

void PersisterRuntime::updateGauges() noexcept {
  const uint64_t wall = realtimeNs();
  uint64_t oldest = 0;
  uint64_t pending = 0;
  bool up = true;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    const uint64_t o = channels_[i]->oldestPendingWallNs();
    if (o != 0 && (oldest == 0 || o < oldest)) oldest = o;
    pending += channels_[i]->pendingRecords();
    up = up && shm_->redis[i].connected.load() == 1;
  }
  shm_->counters.lag_ms.set(oldest != 0 && wall > oldest ? (wall - oldest) / 1'000'000 : 0);
  shm_->counters.pending_changes.set(pending);
  shm_->counters.storage_up.set(up ? 1 : 0);
}

void PersisterRuntime::run(const std::atomic<bool>& stop) noexcept {
  group::ProcessStatusShm& status = shm_->status;
  group::announceServing(status);

  while (!stop.load(std::memory_order_relaxed)) {
    const bool work = turn();
    updateGauges();
    announceInstance(monotonicNs());
    if (writes_) writes_->turn(monotonicNs(), shm_->counters.sessions_written.load());
    const uint64_t beat_ns = monotonicNs();
    status.heartbeat_ns.store(beat_ns, std::memory_order_relaxed);
    if (heartbeat_ != nullptr) heartbeat_->beat(beat_ns);
    if (work) {
      loop_->runOnce(0);
      continue;
    }
    bool in_flight = false;
    for (auto& c : channels_) in_flight |= c->inFlight();
    // Look-ups wait on Redis too: with every slot taken, the next one on the
    // ring is not work until a reply frees one, and only the loop reads it.
    for (auto& r : restore_) in_flight |= r->outstanding() != 0;
    if (in_flight) {
      // Answers, or a failed batch's pause, are what we wait for.
      loop_->runOnce(10);
      continue;
    }
    // BELL-S1, BELL-F1 (common/ring/bell.h): announce the sleep, then look
    // at the rings once more; a worker that published after that sees the
    // flag and rings.
    ring::BellListener::announceSleep(shm_->bell);
    bool idle = true;
    for (auto& c : channels_) idle = idle && c->idle();
    for (auto& r : restore_) idle = idle && r->idle();
    if (idle) loop_->runOnce(kIdleWaitMs);
    bell_->endSleep(shm_->bell);
  }
  // Stopping: what was read, and what the workers published, goes to Redis
  // first, for as long as Redis answers within the bound.
  status.state.store(static_cast<uint32_t>(group::ProcessState::kStopping), std::memory_order_relaxed);
  const uint64_t deadline = monotonicNs() + kFlushOnStopNs;
  for (;;) {
    bool idle = true;
    for (auto& c : channels_) idle = idle && c->idle();
    if (idle || monotonicNs() > deadline) break;
    if (!turn()) loop_->runOnce(10);
    else loop_->runOnce(0);
  }
  updateGauges();
  group::announceStopped(status);
}

}  // namespace gtpcp::persister
