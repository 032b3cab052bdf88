// The persister's side of restoration (common/session/lookup.h): a worker's
// look-ups read from its lookup ring, asked of Redis on the worker's channel,
// and the answers written to its restore ring, with a ring of the worker's
// doorbell.
//
// A session look-up is one HGET of the record's "core" field (the proxy's
// own state, all a worker needs to carry the session on); the subscriber's
// other fields stay in Redis for the operator. A partition's stored TEIDs are
// one SMEMBERS, sent back sorted and chunked; a subscriber's sessions one
// SMEMBERS of the partition's IMSI index, sent back as access TEIDs. Look-ups share the channel's
// connection with the writes, so on one slot a look-up is answered after the
// writes submitted before it.
//
// Bounded: at most kMaxOutstanding look-ups in flight per worker; more wait
// in the lookup ring. An answer that finds the restore ring full is dropped
// and counted: the worker's look-up times out and its peer retransmits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/group/persister_shm.h"
#include "common/group/redis_keys.h"
#include "common/session/lookup.h"
#include "common/session/record.h"
#include "redis_client.h"
#include "proto/session.pb.h"

namespace gtpcp::persister {

using group::KeyNames;

class RestoreServer {
 public:
  static constexpr uint32_t kMaxOutstanding = 1024;

  RestoreServer(ring::Consumer& lookups, ring::Producer& answers, ring::Doorbell worker_bell, RedisClient& redis,
                const KeyNames& keys, PersisterCounters& counters);
  RestoreServer(const RestoreServer&) = delete;
  RestoreServer& operator=(const RestoreServer&) = delete;

  // Reads look-ups and submits them; true when it did something.
  bool turn() noexcept;
  // No look-up waiting in the ring (answers in flight come through the event loop).
  bool idle() const noexcept { return lookups_.empty(); }
  uint32_t outstanding() const noexcept { return outstanding_; }

 private:
  struct Pending {
    RestoreServer* server = nullptr;
    session::LookupKind kind{};
    uint16_t partition = 0;
    uint32_t access_teid = 0;
    uint32_t next_free = 0;
    uint8_t imsi_length = 0;  // kSubscriber
    char imsi[15]{};
  };
  static void completed(void* pending, const RedisResult& result) noexcept;
  void answerSession(const Pending& p, const RedisResult& result) noexcept;
  void answerStoredTeids(const Pending& p, const RedisResult& result) noexcept;
  void answerSubscriber(const Pending& p, const RedisResult& result) noexcept;
  void failSubscriber(const Pending& p) noexcept;
  bool push(session::LookupKind kind, uint16_t partition, std::span<const uint8_t> a,
            std::span<const uint8_t> b = {}) noexcept;
  void flush() noexcept;

  ring::Consumer& lookups_;
  ring::Producer& answers_;
  ring::Doorbell bell_;
  RedisClient& redis_;
  const KeyNames& keys_;
  PersisterCounters& counters_;
  std::array<Pending, kMaxOutstanding> pending_;
  uint32_t free_ = 0;
  uint32_t outstanding_ = 0;
  std::string key_;                // reused for key names
  proto::SessionRecord record_;    // reused for parsing
  std::vector<uint32_t> teids_;    // reused for a partition's list
};

}  // namespace gtpcp::persister
