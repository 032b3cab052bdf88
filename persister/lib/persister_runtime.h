// The gtpcp-persister process, apart from its main: its segment, the
// workers' persist rings, one Redis channel per worker, and the loop.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "common/group/paths.h"
#include "common/ring/bell.h"
#include "common/ring/ring.h"
#include "common/ring/segment.h"
#include "event_loop.h"
#include "persister.h"
#include "common/group/persister_shm.h"
#include "redis_client_impl.h"
#include "restore_server.h"
#include "writes_watch.h"

namespace gtpcp::control {
class HeartbeatSender;
}

namespace gtpcp::persister {

struct PersisterOptions {
  group::Paths paths{"", ""};
  std::string group;
  std::string instance = "a";
  uint32_t share = 0;        // instance_index
  uint32_t share_count = 1;  // group_size
  uint32_t workers = 1;
  uint32_t persist_slots = 65536;
  uint32_t batch_records = 4096;  // change records per batch and channel
  // storage.persist: sync with storage.sync_replicas: replicas each batch
  // waits for (0: none), and how long one WAIT blocks.
  uint32_t wait_replicas = 0;
  uint32_t wait_ms = 1000;
  RedisClientConfig redis;
};

class PersisterRuntime {
 public:
  static tl::expected<std::unique_ptr<PersisterRuntime>, std::string> open(const PersisterOptions& options);
  ~PersisterRuntime();

  void run(const std::atomic<bool>& stop) noexcept;
  PersisterShm& shm() noexcept { return *shm_; }
  // Beats toward the thread watchdog from the loop (none: no beats).
  void setHeartbeat(control::HeartbeatSender* heartbeat) noexcept { heartbeat_ = heartbeat; }

 private:
  PersisterRuntime() = default;
  // One look at every channel; true when any did something.
  bool turn() noexcept;
  void updateGauges() noexcept;
  // Renews this instance's entry in the group's instance table every
  // second: an instance of the group starting on empty storage keeps the
  // group's Recovery while another one runs (launcher/lib/recovery.h).
  void announceInstance(uint64_t now_ns) noexcept;
  static void onBell(void* self, uint32_t events) noexcept;

  PersisterOptions options_;
  std::optional<ring::SharedSegment> segment_;
  PersisterShm* shm_ = nullptr;
  std::vector<ring::SharedSegment> ring_segments_;
  std::vector<std::unique_ptr<ring::Consumer>> rings_;
  std::unique_ptr<EventLoop> loop_;
  std::vector<std::unique_ptr<RedisClientImpl>> clients_;
  std::unique_ptr<KeyNames> keys_;
  std::vector<std::unique_ptr<Channel>> channels_;
  // Whether another instance of the group wrote sessions (on channel 0).
  std::unique_ptr<WritesWatch> writes_;
  // Restoration: per worker, its look-ups, its answers, its doorbell.
  std::vector<ring::SharedSegment> restore_segments_;
  std::vector<std::unique_ptr<ring::Consumer>> lookup_rings_;
  std::vector<std::unique_ptr<ring::Producer>> answer_rings_;
  std::vector<std::unique_ptr<RestoreServer>> restore_;
  // Rung after a channel's turn: a worker holding answers until Redis
  // acknowledged (storage.persist: sync) waits for the ring's release.
  std::vector<ring::Doorbell> worker_bells_;
  std::optional<ring::BellListener> bell_;
  uint64_t next_announce_ns_ = 0;
  control::HeartbeatSender* heartbeat_ = nullptr;
  std::string instances_key_;
  std::string announce_value_;
  std::string shares_key_;
  std::string share_value_;
  std::string primaries_text_;
  IoHandler bell_handler_;
};

}  // namespace gtpcp::persister
