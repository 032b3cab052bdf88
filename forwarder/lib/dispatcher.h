// The forwarder's decisions for each received datagram, apart from any socket:
// classify, then put it on the owning worker's ring, or answer it (Echo,
// Version Not Supported, overload rejection), or drop and count it. GTPv1-C
// and GTPv2-C alike; each is answered in its own version.
//
// Tests drive it with in-memory rings and a recording ReplySink.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/group/control_shm.h"
#include "common/net/address.h"
#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "classify.h"
#include "common/group/forwarder_shm.h"
#include "common/group/gateway_table_shm.h"

namespace gtpcp::forwarder {

class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // Queues a datagram the forwarder wrote itself (copied before returning).
  // `receive_ns`: DatagramMeta::receive_ns of the datagram it answers, for
  // ForwarderShm::proxy_latency; 0 for the forwarder's own requests.
  virtual bool reply(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
                     uint64_t receive_ns) noexcept = 0;
};

// Raises a high-water mark (ForwarderShm::*_high_water) to `depth`. Only its
// writer, the forwarder, calls it: a relaxed load and store, like Counter.
inline void raiseHighWater(metrics::Counter& mark, uint64_t depth) noexcept {
  if (depth > mark.load()) mark.set(depth);
}

// The forwarder's end of one worker's ingress rings.
struct WorkerPorts {
  ring::Producer priority;
  ring::Producer fresh;  // the new-session ring
  ring::Doorbell doorbell;
  bool dirty = false;    // pushed to since the last flush()
};

class GatewayHealth;
class PeerRateLimiter;

class Dispatcher {
 public:
  // `table`: the group's Recovery, for the answers the forwarder gives itself.
  Dispatcher(std::span<WorkerPorts> workers, ForwarderShm& shm, const GatewayTableShm& table,
             ReplySink& replies) noexcept;

  // One received datagram; `meta` carries its source and socket.
  void dispatch(const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept;
  // After a batch: makes what was pushed visible and wakes the workers that
  // got something. One release store and at most one wake-up per ring.
  void flush() noexcept;
  // A Create Session Request (Create PDP Context Request) that waited too
  // long before the forwarder got to it: refused with No resources
  // available, never queued.
  void refuseStaleCreation(const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept;
  // Where Echo Responses go (the forwarder's health checks); none: counted only.
  void setHealth(GatewayHealth* health) noexcept { health_ = health; }
  // Session creations per peer over this limit are rejected; none: no limit.
  void setPeerRateLimit(PeerRateLimiter* limiter) noexcept { peer_limit_ = limiter; }
  // The group's drain and stop flags; none: never draining.
  void setControl(const group::GroupControlShm* control) noexcept { control_ = control; }

 private:
  void reply(const ring::DatagramMeta& meta, std::size_t length) noexcept;
  void toPriority(WorkerPorts& w, const ring::DatagramMeta& meta, std::span<const uint8_t> bytes) noexcept;
  // A session creation refused with No resources available (v2 cause 73, v1
  // cause 199; the request just classified as `c`, in scratch_), counted in
  // `counter`.
  void refuseCreation(const ring::DatagramMeta& meta, const Classification& c, metrics::Counter& counter) noexcept;
  // Counts a classified datagram in its version's per-type table.
  void countReceived(const Classification& c) noexcept;

  std::span<WorkerPorts> workers_;
  ForwarderShm& shm_;
  const GatewayTableShm& table_;
  ForwarderCounters& counters_;
  ReplySink& replies_;
  GatewayHealth* health_ = nullptr;
  PeerRateLimiter* peer_limit_ = nullptr;
  const group::GroupControlShm* control_ = nullptr;
  ClassifyScratch scratch_;
  std::array<uint8_t, 128> reply_buffer_{};
};

}  // namespace gtpcp::forwarder
