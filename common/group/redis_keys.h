// Every Redis key name of the product, in one place: the session records
// and their indexes (written by the persister, read back by the persister on
// restoration and by `gtpcp session`), the group's Recovery and its instance
// table (the launcher's Recovery rule, the persister's announcements).
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
// The group's own keys carry no hash tag:
//     gtpcp:<group>:recovery    the group's Recovery value (TS 23.007)
//     gtpcp:<group>:instances   a hash: instance -> until when it runs (ms since the epoch)
//     gtpcp:<group>:shares      a hash: instance -> "<instance_index>/<group_size>"
//     gtpcp:<group>:writes      a hash: instance -> "<persister start, ms>:<sessions written>",
//                               changed whenever that instance wrote sessions
// What a session's hash holds is common/session/record.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gtpcp::group {

class KeyNames {
 public:
  explicit KeyNames(std::string group);
  std::string session(uint16_t partition, uint32_t access_teid) const;
  std::string imsi(uint16_t partition, std::string_view imsi) const;
  // The access TEIDs (8 hex digits) of the partition's stored sessions: what
  // a worker starting without them must not allocate (common/session/lookup.h).
  std::string teids(uint16_t partition) const;
  // The hash tag alone (what a Cluster slot is computed from).
  std::string tag(uint16_t partition) const;

  // The same names appended to `out`: the persister formats them into its
  // command arena, so that naming a key allocates nothing once `out` has
  // room. Any thread (const).
  void appendSession(std::string& out, uint16_t partition, uint32_t access_teid) const;
  void appendImsi(std::string& out, uint16_t partition, std::string_view imsi) const;
  void appendTeids(std::string& out, uint16_t partition) const;
  // A member of the partition's TEID set: the access TEID in 8 lower-case hex digits.
  static void appendTeidMember(std::string& out, uint32_t access_teid);

 private:
  // "gtpcp:<group>:{<group>.<partition>}:", the start of every key.
  void appendPrefix(std::string& out, uint16_t partition) const;

  std::string group_;
  std::string prefix_;  // "gtpcp:<group>:{<group>."
};

// The group's Recovery value, as `gtpcp start` settled it.
std::string recoveryKey(std::string_view group);
// The group's instances and until when each said it runs.
std::string instancesKey(std::string_view group);
// Each instance's share of the session slots, beside its instance entry:
// `gtpcp start` refuses a share another running instance holds.
std::string sharesKey(std::string_view group);
// Who wrote sessions lately: each instance's persister changes its entry
// after it wrote (persister/lib/writes_watch.h).
std::string writesKey(std::string_view group);
// A pattern matching every session key of the group (SCAN MATCH).
std::string sessionKeyPattern(std::string_view group);

}  // namespace gtpcp::group
