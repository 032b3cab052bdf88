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
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "proto/session.pb.h"
#include "workers/lib/persist.h"

namespace gtpcp::persister {

class KeyNames {
 public:
  explicit KeyNames(std::string group) : group_(std::move(group)) {}
  std::string session(uint16_t partition, uint32_t access_teid) const;
  std::string imsi(uint16_t partition, std::string_view imsi) const;
  // The access TEIDs (8 hex digits) of the partition's stored sessions: what
  // a worker starting without them must not allocate (workers/lib/restore.h).
  std::string teids(uint16_t partition) const;
  // The hash tag alone (what a Cluster slot is computed from).
  std::string tag(uint16_t partition) const;

 private:
  std::string group_;
};

// One Redis command, its arguments as octet strings.
using Command = std::vector<std::string>;

// The changes of one batch, coalesced.
class Batch {
 public:
  explicit Batch(const KeyNames& keys) : keys_(keys) {}

  // One change record as a worker wrote it (partition: DatagramMeta::aux).
  // False when it does not parse (counted by the caller, skipped).
  bool add(std::span<const uint8_t> record, uint16_t partition);

  bool empty() const { return sessions_.empty(); }
  std::size_t sessions() const { return sessions_.size(); }
  // Per session, the commands that apply the batch to it, its record and its
  // index together: MULTI, the writes, EXEC, or the one write alone (a
  // modification: one HSET, atomic by itself). f(session key, commands); all
  // of one session's keys share the slot of their partition.
  template <class F>
  void forEachSession(F&& f) const {
    std::vector<Command> commands;
    for (const auto& [key, s] : sessions_) {
      commands.clear();
      appendCommands(key, s, commands);
      if (commands.size() > 1) {
        commands.insert(commands.begin(), Command{"MULTI"});
        commands.push_back(Command{"EXEC"});
      }
      f(keys_.session(key.partition, key.teid), commands);
    }
  }
  void clear() { sessions_.clear(); }

 private:
  struct SessionKey {
    uint16_t partition;
    uint32_t teid;
    friend auto operator<=>(const SessionKey&, const SessionKey&) = default;
  };
  // An attribute's last value in the batch, decoded when the commands are built.
  struct Raw {
    worker::Attribute attribute;
    uint8_t ebi;
    std::string value;
  };
  // What the batch does to one session: the last state of each field, kept
  // raw, so that a field written several times is encoded once.
  struct Pending {
    bool deleted = false;
    bool index = false;                  // the IMSI index needs the session (it was created)
    std::string imsi;
    worker::SessionShm core{};           // the slot's last snapshot
    uint64_t wall_ns = 0;
    std::map<std::string, Raw> set;      // field -> attribute
    std::vector<std::string> removed;    // fields to delete
  };
  void appendCommands(const SessionKey& key, const Pending& p, std::vector<Command>& out) const;

  const KeyNames& keys_;
  std::map<SessionKey, Pending> sessions_;
};

// A partial record of the attribute `attribute` with `value` (its raw IE
// value), for the session whose default bearer is `default_ebi`; false when
// the value does not decode (the attribute is then not written).
bool partialRecord(worker::Attribute attribute, uint8_t ebi, std::span<const uint8_t> value, uint8_t default_ebi,
                   proto::SessionRecord& out);
// The proxy's own state (a slot snapshot).
proto::SessionRecord coreRecord(const worker::SessionShm& core, uint32_t access_teid, uint16_t partition,
                                uint64_t wall_ns);
// A stored hash (HGETALL: field -> value) as one record; false when a field
// does not parse.
bool assemble(const std::map<std::string, std::string>& fields, proto::SessionRecord& out);

}  // namespace gtpcp::persister
