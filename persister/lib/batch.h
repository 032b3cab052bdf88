// The changes of one batch of change records (common/session/change_record.h),
// coalesced per session and turned into the Redis commands that apply them
// (common/session/record.h says what each hash field holds).
//
// Batch. Changes drained from the rings in one turn are coalesced: per
// session, the last value of each field, the bearers removed, or its
// deletion. Each session's writes then go as one MULTI/EXEC, so a record
// and its index change together; the batch's transactions are pipelined,
// one round trip for all.
//
// Cost. The persister does this for every change the workers make (tens of
// thousands a second per worker), so a batch reuses everything it holds: the
// per-session table, the raw values, the command arguments and the protobuf
// objects keep their capacity from one batch to the next. Once warmed up a
// batch allocates nothing, bar the odd bearer F-TEID with an IPv6 address (a
// string too long for std::string's inline buffer, in a message that lives
// on an arena and is made anew for each bearer). The price is memory held
// between batches, sized by the largest batch: 0.3 to 1.3 KiB per change
// record (measured: 1.3 MiB per channel for 4096 Modify Bearer changes,
// 5 MiB for 4096 Create Session ones).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <google/protobuf/arena.h>

#include "common/group/redis_keys.h"
#include "common/session/record.h"
#include "commands.h"
#include "proto/session.pb.h"

namespace gtpcp::persister {

using group::KeyNames;

// The changes of one batch, coalesced.
//
// Sessions are found by an open-addressing table (linear probing) over a
// dense array of entries kept from batch to batch; an entry's fields are a
// fixed array indexed by field (the set is small and known: core, imsi,
// msisdn, mei, rat, sn, uli, paa, ambr, b<ebi>a and b<ebi>g for EBI 0..15),
// each value an offset into one byte arena. Single-threaded.
class Batch {
 public:
  explicit Batch(const KeyNames& keys);
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // One change record as a worker wrote it (partition: DatagramMeta::aux).
  // False when it does not parse (counted by the caller, skipped). The record
  // is copied: it need not outlive the call.
  bool add(std::span<const uint8_t> record, uint16_t partition) noexcept;

  bool empty() const noexcept { return used_ == 0; }
  std::size_t sessions() const noexcept { return used_; }

  // Per session, the commands that apply the batch to it, its record and its
  // index together: MULTI, the writes, EXEC, or the one write alone (a
  // modification: one HSET, atomic by itself). All of one session's keys
  // share the slot of their partition. Sessions come in the order the batch
  // first saw them: their transactions are independent of one another.
  // `out` is cleared first; the batch is left as it was.
  void build(Commands& out) noexcept;
  void clear() noexcept;

  // The hash fields a partial record goes to (core aside).
  static constexpr std::size_t kFields = session::kRecordFields;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  // A raw value in values_.
  struct Value {
    uint32_t offset;
    uint32_t length;
  };
  // What the batch does to one session: the last state of each field, kept
  // raw, so that a field written several times is encoded once.
  struct Session {
    uint16_t partition;
    uint32_t teid;
    uint32_t bucket;       // its place in table_
    bool deleted;
    bool index;            // the indexes need the session (it was created)
    uint64_t wall_ns;
    session::SessionShm core;  // the slot's last snapshot (its IMSI names the index)
    uint64_t fields;       // bit f: values[f] holds field f's last value
    std::array<Value, kFields> values;
    uint32_t removed_first;  // removals_, in the order they came; kNone: none
    uint32_t removed_last;
  };
  // Bearers removed, as a list per session threaded through one array.
  struct Removal {
    uint8_t ebi;
    uint32_t next;
  };

  Session& find(uint16_t partition, uint32_t teid);
  void rehash(std::size_t buckets);
  void appendCommands(const Session& s, Commands& out);
  // Field `field`'s name and partial record, serialised into the arena, as
  // two more arguments of the command being built; nothing when its value
  // does not decode (the peer's IE was malformed: it is not written).
  void appendPartial(std::size_t field, const Session& s, Commands& out);

  const KeyNames& keys_;
  std::vector<Session> sessions_;  // [0, used_): this batch's; the rest kept for the next
  std::size_t used_ = 0;
  std::vector<uint32_t> table_;    // session index + 1; 0: free. A power of two, at most half full
  std::string values_;             // raw attribute values
  std::vector<Removal> removals_;
  // Reused from session to session: Clear() keeps a message's strings and
  // repeated elements (not, in proto3 with protobuf 3.21, its sub-messages).
  proto::SessionRecord core_;      // always coreRecord()'s: it overwrites what it owns
  proto::SessionRecord partial_;   // attributes without sub-messages
  // Bearer partials have sub-messages (F-TEIDs, QoS), which Clear() would
  // free and the next bearer allocate again: they come from an arena reset
  // when it has used half of its first block, so they cost no malloc.
  std::unique_ptr<char[]> bearer_block_;
  google::protobuf::Arena bearer_arena_;
};

}  // namespace gtpcp::persister
