// Sessions in Redis: what a worker's change records (workers/lib/persist.h)
// become, and how a stored session reads back as one SessionRecord
// (proto/session.proto).
//
// Layout. A session is one hash, named after its access-leg proxy TEID
// (either TEID names it: they differ in one bit), with the group and the
// partition in a hash tag, so that in Redis Cluster a partition lives in one
// slot and one primary:
//     gtpcp:<group>:{<group>.<partition>}:s:<access teid, 8 hex digits>
// and an index of the subscriber's sessions, in the same slot (a session's
// partition is its IMSI's):
//     gtpcp:<group>:{<group>.<partition>}:imsi:<IMSI>   a set of session keys
// and the partition's stored TEIDs, which a worker starting with an empty
// session table reserves before it allocates any:
//     gtpcp:<group>:{<group>.<partition>}:teids         a set of access TEIDs (8 hex digits)
// Each hash field holds a SessionRecord with only the attributes that field
// owns, written by whichever message carried them last: "core" (the proxy's
// own state), one field per subscriber or location attribute, and per bearer
// one field for each side ("b<ebi>a" from the SGW, "b<ebi>g" from the PGW).
// No write needs a read; the record is the merge of the fields.
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
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/arena.h>

#include "persister/lib/redis_client.h"
#include "proto/session.pb.h"
#include "workers/lib/persist.h"

namespace gtpcp::persister {

class KeyNames {
 public:
  explicit KeyNames(std::string group);
  std::string session(uint16_t partition, uint32_t access_teid) const;
  std::string imsi(uint16_t partition, std::string_view imsi) const;
  // The access TEIDs (8 hex digits) of the partition's stored sessions: what
  // a worker starting without them must not allocate (workers/lib/restore.h).
  std::string teids(uint16_t partition) const;
  // The hash tag alone (what a Cluster slot is computed from).
  std::string tag(uint16_t partition) const;

  // The same names appended to `out`: the persister formats them into its
  // command arena, so that naming a key allocates nothing once `out` has
  // room. Any thread (const).
  void appendSession(std::string& out, uint16_t partition, uint32_t access_teid) const;
  void appendImsi(std::string& out, uint16_t partition, std::string_view imsi) const;
  void appendTeids(std::string& out, uint16_t partition) const;

 private:
  // "gtpcp:<group>:{<group>.<partition>}:", the start of every key.
  void appendPrefix(std::string& out, uint16_t partition) const;

  std::string group_;
  std::string prefix_;  // "gtpcp:<group>:{<group>."
};

// The Redis commands of one batch, built once (Batch::build) and kept until
// Redis acknowledged them all, so that the batch can be sent again whole,
// byte for byte, without building it again. Every argument lives in one
// arena (or in static storage: command names, field names); each command is a
// RedisArgv over them, each session's commands one Transaction. clear()
// keeps every buffer's capacity.
//
// Single-threaded; the views stay valid until clear() or the next build.
class Commands {
 public:
  struct Transaction {
    uint16_t slot;                        // keySlot() of the session's key
    std::string_view key;                 // the session's key
    std::span<const RedisArgv> commands;  // MULTI, the writes, EXEC; or one write alone
  };

  std::span<const Transaction> transactions() const noexcept { return transactions_; }
  bool empty() const noexcept { return transactions_.empty(); }
  void clear() noexcept;

  // Building, from clear() to seal(). An argument is a Piece: static text,
  // or a range of the arena held by offset, because the arena moves as it
  // grows; seal() turns every Piece into a view once nothing moves any more.
  struct Piece {
    const char* fixed;  // static storage, or null: arena_[offset, offset + length)
    uint32_t offset;
    uint32_t length;
  };
  // `fixed` must outlive the Commands (a literal, a constant table).
  static Piece text(std::string_view fixed) noexcept {
    return Piece{fixed.data(), 0, static_cast<uint32_t>(fixed.size())};
  }
  // Append an argument's octets here, then take piece(where it started).
  std::string& arena() noexcept { return arena_; }
  Piece piece(std::size_t start) const noexcept {
    return Piece{nullptr, static_cast<uint32_t>(start), static_cast<uint32_t>(arena_.size() - start)};
  }
  // Valid until the arena grows.
  std::string_view view(const Piece& p) const noexcept {
    return std::string_view(p.fixed != nullptr ? p.fixed : arena_.data() + p.offset, p.length);
  }
  // A transaction: MULTI first and EXEC last when `multi`.
  void beginTransaction(bool multi) noexcept;
  void command(std::initializer_list<Piece> args) noexcept;
  void beginCommand() noexcept;  // then arg() for each argument
  void arg(const Piece& p) noexcept;
  void endTransaction(uint16_t slot, const Piece& key) noexcept;
  void seal() noexcept;

 private:
  struct Range {
    uint32_t first;
    uint32_t count;
  };
  struct Pending {
    uint16_t slot;
    bool multi;
    Piece key;
    Range commands;  // into commands_
  };

  std::string arena_;
  std::vector<Piece> pieces_;    // every argument, in order
  std::vector<Range> commands_;  // into pieces_
  std::vector<Pending> pending_;
  // What seal() made of them.
  std::vector<std::string_view> args_;
  std::vector<RedisArgv> argvs_;
  std::vector<Transaction> transactions_;
};

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
  static constexpr std::size_t kFields = 8 + 2 * 16;

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
    worker::SessionShm core;  // the slot's last snapshot (its IMSI names the index)
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

// A partial record of the attribute `attribute` with `value` (its raw IE
// value), for the session whose default bearer is `default_ebi`; false when
// the value does not decode (the attribute is then not written). Sets only
// that attribute's fields in `out` (adds one bearer for a Bearer Context).
bool partialRecord(worker::Attribute attribute, uint8_t ebi, std::span<const uint8_t> value, uint8_t default_ebi,
                   proto::SessionRecord& out);
// The proxy's own state (a slot snapshot), written over `out`: every field it
// owns is set or cleared, so `out` may be reused from call to call (keeping
// its strings and sub-messages) as long as nothing else writes to it.
void coreRecord(const worker::SessionShm& core, uint32_t access_teid, uint16_t partition, uint64_t wall_ns,
                proto::SessionRecord& out);
// A stored hash (HGETALL: field -> value) as one record; false when a field
// does not parse.
bool assemble(const std::map<std::string, std::string>& fields, proto::SessionRecord& out);

}  // namespace gtpcp::persister
