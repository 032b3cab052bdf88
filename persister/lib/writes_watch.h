// Whether another instance of the group wrote sessions since this one last
// looked (DESIGN.md, "State and storage"; the stale-state rule of groups).
//
// An instance that carried traffic and then did not (withdrawn, frozen,
// standing by) still holds its sessions in shared memory; meanwhile the other
// instance changes them in Redis (a new SGW address, a bearer added, the
// session deleted). Serving them from memory when traffic returns would
// answer from stale state. So every persister marks its writes in the group's
// writes table (group::writesKey(): instance -> "<start ms>:<sessions
// written>", set at most once per period after it wrote), and reads the table
// once per period: an entry of another instance that changed since the last
// look raises GroupWritesShm::foreign_epoch, and each worker then gives back
// the sessions it holds idle (SessionTable::demote()): their next message
// reads them again from Redis. Reading one small hash every 100 ms costs
// Redis nothing; the standby learns within two periods of the active's
// writes, long before a route can come back (the return hold-down, or a BGP
// session re-established after a freeze).
//
// The same table says who acts for the sessions no instance holds in memory
// (GroupWritesShm::acts_for_stored): the instance that wrote last, that is
// the one carrying the traffic, or the only one that ever wrote.
#pragma once

#include <cstdint>
#include <string>

#include "common/group/persister_shm.h"
#include "redis_client.h"

namespace gtpcp::persister {

class WritesWatch {
 public:
  static constexpr uint64_t kPeriodNs = 100'000'000;

  WritesWatch(RedisClient& redis, std::string group, std::string instance, GroupWritesShm& shm,
              PersisterCounters& counters, uint64_t start_ms) noexcept;
  WritesWatch(const WritesWatch&) = delete;
  WritesWatch& operator=(const WritesWatch&) = delete;

  // Once per loop turn: `written` is this instance's sessions_written.
  void turn(uint64_t now_ns, uint64_t written) noexcept;

  // One answer to HGETALL of the writes table, as [field, value, ...]
  // strings: the epoch goes up when another instance's entry is new or
  // changed. Public for the tests.
  void look(const redisReply& reply) noexcept;

 private:
  static void onRead(void* self, const RedisResult& result) noexcept;
  static void onWritten(void* self, const RedisResult& result) noexcept;
  void publishActs() noexcept;

  RedisClient& redis_;
  std::string key_;
  std::string instance_;
  GroupWritesShm& shm_;
  PersisterCounters& counters_;
  std::string start_ms_;
  std::string value_;
  uint64_t marked_ = ~uint64_t{0};  // `written` as last set in the table
  uint64_t next_ns_ = 0;
  bool reading_ = false;
  bool writing_ = false;
  bool wrote_ = false;            // this instance's writes marked at least once
  bool foreign_since_ = false;    // another instance wrote since this one's last mark
  bool others_in_table_ = false;  // another instance has an entry
};

}  // namespace gtpcp::persister
