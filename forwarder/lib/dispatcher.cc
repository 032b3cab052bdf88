#include "dispatcher.h"

#include "common/group/meta.h"
#include "classify.h"
#include "health.h"
#include "peer_rate_limit.h"
#include "replies.h"

namespace gtpcp::forwarder {

namespace {

// A request of its version's table (a reply is expected): what a stopping
// group no longer starts.
bool isRequest(const Classification& c) noexcept {
  if (c.version == gtp::v2::kVersion)
    return gtp::v2::messageTypeInfo(c.message_type).role == gtp::v2::MessageRole::kRequest;
  return c.version == gtp::v1::kVersion &&
         gtp::v1::messageTypeInfo(c.message_type).role == gtp::v1::MessageRole::kRequest;
}

}  // namespace

Dispatcher::Dispatcher(std::span<WorkerPorts> workers, ForwarderShm& shm, const GatewayTableShm& table,
                       ReplySink& replies) noexcept
    : workers_(workers), shm_(shm), table_(table), counters_(shm.counters), replies_(replies) {}

void Dispatcher::reply(const ring::DatagramMeta& meta, std::size_t length) noexcept {
  if (length == 0) return;
  if (!replies_.reply(meta.local_socket, group::peerOf(meta), std::span(reply_buffer_).first(length), meta.receive_ns))
    counters_.send_errors.add();
}

void Dispatcher::refuseCreation(const ring::DatagramMeta& meta, const Classification& c,
                                metrics::Counter& counter) noexcept {
  // Undecodable, it cannot be answered: its sender's TEID is unknown.
  if (!c.decoded) {
    counters_.dropped_overload.add();
    return;
  }
  if (c.version == gtp::v1::kVersion) {
    // Relaxed: the forwarder's own copy of a value it alone writes.
    const auto recovery = static_cast<uint8_t>(table_.recovery.load(std::memory_order_relaxed));
    reply(meta, createPdpContextOverload(scratch_.v1, recovery, reply_buffer_));
  } else {
    reply(meta, createSessionOverload(scratch_.v2, reply_buffer_));
  }
  counter.add();
}

void Dispatcher::countReceived(const Classification& c) noexcept {
  if (c.route == Route::kDrop) return;
  if (c.version == gtp::v2::kVersion) shm_.received_v2[c.message_type].add();
  if (c.version == gtp::v1::kVersion) shm_.received_v1[c.message_type].add();
}

void Dispatcher::refuseStaleCreation(const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept {
  const Classification c = classify(bytes, static_cast<uint16_t>(workers_.size()), scratch_);
  if (c.route != Route::kNew) {  // steered here, yet not a creation: handle it as usual
    dispatch(meta, bytes);
    return;
  }
  countReceived(c);
  refuseCreation(meta, c, counters_.rejected_stale);
}

void Dispatcher::toPriority(WorkerPorts& w, const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept {
  if (w.priority.push(meta, bytes)) {
    w.dirty = true;
    counters_.to_priority.add();
  } else {
    counters_.dropped_priority_full.add();
  }
}

void Dispatcher::dispatch(const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept {
  const Classification c = classify(bytes, static_cast<uint16_t>(workers_.size()), scratch_);
  countReceived(c);
  // Relaxed: the forwarder's own copy of a value it alone writes.
  const auto recovery = static_cast<uint8_t>(table_.recovery.load(std::memory_order_relaxed));
  // Relaxed: a flag the control server raises once per drain; a batch that
  // misses it only lets a few more requests in.
  const bool closing = control_ != nullptr && control_->closing.load(std::memory_order_relaxed) != 0;
  switch (c.route) {
    case Route::kPriority:
    case Route::kEveryWorker:
      // Stopping: what was forwarded completes, nothing new begins.
      if (closing && isRequest(c)) {
        counters_.dropped_closing.add();
        return;
      }
      if (c.route == Route::kPriority) {
        toPriority(workers_[c.worker], meta, bytes);
      } else {
        for (WorkerPorts& w : workers_) toPriority(w, meta, bytes);
      }
      return;
    case Route::kNew: {
      WorkerPorts& w = workers_[c.worker];
      if (control_ != nullptr && control_->draining.load(std::memory_order_relaxed) != 0) {
        refuseCreation(meta, c, counters_.rejected_draining);
        return;
      }
      if (peer_limit_ != nullptr && !peer_limit_->allow(group::peerOf(meta), meta.receive_ns)) {
        refuseCreation(meta, c, counters_.rejected_peer_rate);
        return;
      }
      if (w.fresh.push(meta, bytes)) {
        w.dirty = true;
        counters_.to_new.add();
        return;
      }
      // The worker is behind on new sessions: refuse this one at once rather
      // than let it wait; sessions already up keep their priority ring.
      refuseCreation(meta, c, counters_.rejected_overload);
      return;
    }
    case Route::kEchoRequest:
      reply(meta, c.version == gtp::v1::kVersion ? echoResponseV1(bytes, recovery, reply_buffer_)
                                                 : echoResponseV2(bytes, recovery, reply_buffer_));
      counters_.echo_answered.add();
      return;
    case Route::kEchoResponse:
      counters_.echo_responses.add();
      if (health_ == nullptr || !health_->onEchoResponse(group::peerOf(meta), bytes, meta.receive_ns))
        counters_.echo_responses_unmatched.add();
      return;
    case Route::kVersionNotSupported:
      // GTPv0 gets GTPv1's answer (TS 29.060 §7.2.3): the version an SGSN of
      // that age understands.
      reply(meta, c.version == 0 ? versionNotSupportedV1(bytes, reply_buffer_)
                                 : versionNotSupportedV2(reply_buffer_));
      counters_.version_not_supported.add();
      return;
    case Route::kDrop:
      counters_.dropped_not_gtp.add();
      return;
  }
}

void Dispatcher::flush() noexcept {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    WorkerPorts& w = workers_[i];
    if (!w.dirty) continue;
    w.priority.publish();
    w.fresh.publish();
    w.doorbell.ring();
    w.dirty = false;
    // Right after publishing: the deepest the rings are in this turn.
    const std::size_t priority = w.priority.capacitySlots() - w.priority.freeSlots();
    const std::size_t fresh = w.fresh.capacitySlots() - w.fresh.freeSlots();
    shm_.priority_depth[i].set(priority);
    shm_.new_depth[i].set(fresh);
    raiseHighWater(shm_.priority_high_water[i], priority);
    raiseHighWater(shm_.new_high_water[i], fresh);
  }
}

}  // namespace gtpcp::forwarder
