// gtpcp-worker's main loop: the worker's rings on one side, the procedures
// (Proxy) on the other.
//
// Each turn drains the priority ring (responses and established sessions)
// before at most one batch of the new-session ring, so a surge of attaches
// never delays subscribers already on the network; outgoing datagrams go to
// the egress ring, published once per turn, with a wake-up of the forwarder
// only when it sleeps. Idle, the worker sleeps on its doorbell until the
// forwarder rings it or its timers are due.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "common/config/routing.h"
#include "common/group/control_shm.h"
#include "common/group/paths.h"
#include "common/ring/bell.h"
#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/ring/segment.h"
#include "proxy.h"
#include "restore.h"
#include "stale_sessions.h"
#include "session_table.h"
#include "transaction_table.h"

namespace gtpcp::persister {
struct GroupWritesShm;
}

namespace gtpcp::forwarder {
struct GatewayTableShm;
}
namespace gtpcp::control {
class HeartbeatSender;
}

namespace gtpcp::worker {

struct WorkerOptions {
  group::Paths paths{"", ""};
  uint32_t workers = 1;
  uint32_t index = 0;
  uint32_t priority_slots = 16384;
  uint32_t new_slots = 8192;
  uint32_t egress_slots = 16384;
  uint32_t per_partition = 4096;
  // The instance's share of each partition's slots (instance_index of
  // group_size: session_table.h).
  uint32_t share = 0;
  uint32_t share_count = 1;
  uint32_t transactions = 65536;
  uint64_t answer_cache_bytes = 1 << 20;
  uint32_t batch = 64;
  // Session changes go to the persister's ring (storage.mode other than off).
  bool persist = false;
  uint32_t persist_slots = 65536;
  // storage.persist: sync: what the handling of a datagram sends leaves only
  // once the persister released every change record written so far (Redis
  // acknowledged them).
  bool sync = false;
  uint64_t sync_hold_bytes = 8u << 20;
  // Sessions this worker does not hold are asked of the storage (with persist).
  RestoreSettings restore;
  ProxySettings proxy;
  // The control segment's routing generation the document given to open()
  // belongs to (0: the configuration's, no reload yet).
  uint64_t routing_generation = 0;
  // Take routing reloads from the group's control segment.
  bool control = true;
};

class WorkerRuntime {
 public:
  // Makes (or adopts) the worker's own segment, rings and doorbell (it owns
  // them: common/group/segments.h). A segment left by a predecessor is
  // adopted with its sessions; one of another geometry is refused. The
  // forwarder's and the persister's segments are attached once they exist.
  static tl::expected<std::unique_ptr<WorkerRuntime>, std::string> open(
      const WorkerOptions& options, const config::RoutingTable& routing);
  ~WorkerRuntime();

  void run(const std::atomic<bool>& stop) noexcept;

  WorkerShmHeader& header() noexcept { return *header_; }
  // Beats toward the thread watchdog from the loop (none: no beats).
  void setHeartbeat(control::HeartbeatSender* heartbeat) noexcept { heartbeat_ = heartbeat; }
  SessionTable& sessions() noexcept { return *sessions_; }
  // True when the segment existed before this process attached.
  bool adopted() const noexcept { return adopted_; }

 private:
  WorkerRuntime() = default;
  class RingEgress;
  class RingPersist;
  class RingLookup;
  // One datagram to the proxy; with sync persistence, what it sends is held
  // until the persister released the records written so far.
  void handle(const Arrival& a, std::span<uint8_t> datagram) noexcept;
  // The persister's answers to look-ups, handed to the Restorer.
  std::size_t drainRestore(uint64_t now, uint64_t wall) noexcept;
  std::size_t drain(ring::Consumer& ring, std::size_t limit, uint64_t now, uint64_t wall) noexcept;
  // A new routing generation in the control segment: loaded, handed to the
  // proxy between two datagrams, acknowledged. Allocates; once per reload.
  void reloadRouting() noexcept;
  void wakeForwarder() noexcept;
  void wakePersister() noexcept;
  // One look for the forwarder's and the persister's segments still missing.
  void attachNeighbours(uint64_t now_ns) noexcept;

  WorkerOptions options_;
  std::optional<ring::SharedSegment> state_;
  std::vector<ring::SharedSegment> segments_;
  WorkerShmHeader* header_ = nullptr;
  std::unique_ptr<SessionTable> sessions_;
  std::unique_ptr<TransactionTable> transactions_;
  std::unique_ptr<RingEgress> egress_;
  std::unique_ptr<RingPersist> persist_;
  std::unique_ptr<RingLookup> lookups_;
  std::unique_ptr<ring::Consumer> restore_;
  std::unique_ptr<Restorer> restorer_;
  // With persistence: sessions given back when another instance wrote.
  std::unique_ptr<StaleSessions> stale_;
  // The forwarder's gateway table and the sleep flags of the forwarder and
  // the persister, in their owners' segments; null until attached.
  std::vector<ring::SharedSegment> neighbour_segments_;
  const forwarder::GatewayTableShm* gateway_table_ = nullptr;
  const ring::BellShm* forwarder_bell_shm_ = nullptr;
  const ring::BellShm* persister_bell_shm_ = nullptr;
  const persister::GroupWritesShm* group_writes_ = nullptr;
  bool neighbours_missing_ = true;
  uint64_t next_attach_ns_ = 0;
  std::optional<ring::BellRinger> forwarder_bell_;
  std::optional<ring::BellRinger> persister_bell_;
  std::unique_ptr<Proxy> proxy_;
  std::unique_ptr<ring::Consumer> priority_;
  std::unique_ptr<ring::Consumer> fresh_;
  std::unique_ptr<ring::Doorbell> doorbell_;
  bool adopted_ = false;
  bool sync_ = false;
  control::HeartbeatSender* heartbeat_ = nullptr;
  std::optional<ring::SharedSegment> control_segment_;
  group::GroupControlShm* control_ = nullptr;
  uint64_t routing_generation_ = 0;
  uint64_t corruptions_seen_ = 0;  // of this process's ring consumers, counted so far
  // Documents loaded at run time; the one before stays alive one more reload
  // (nothing should point into it, but nothing has to be proven).
  std::unique_ptr<config::RoutingTable> routing_;
  std::unique_ptr<config::RoutingTable> routing_before_;
};

}  // namespace gtpcp::worker
