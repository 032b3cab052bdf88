// The look-up protocol between a worker and the persister (DESIGN.md, "State
// and storage"; the worker's side is workers/lib/restore.h, the persister's
// persister/lib/restore_server.h). Two rings per worker, besides the persist
// ring: the lookup ring (worker -> persister) carries questions, the restore
// ring (persister -> worker) their answers. A question is one of:
// - kSession: the record of the session named by an access TEID. The answer
//   is the slot as the storage has it (SessionRestore), or "absent", or
//   "failed" (the storage did not answer).
// - kStoredTeids: every access TEID the storage holds in a partition, sent
//   back in chunks (StoredTeidsChunk) that fit a ring slot.
// - kSubscriber: the access TEIDs of a subscriber's stored sessions (the
//   partition's IMSI index), for a request that names the subscriber by IMSI
//   alone (PGW Downlink Triggering Notification); the worker then reads the
//   sessions it does not hold as kSession look-ups.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/session/change_record.h"
#include "common/session/session_shm.h"

namespace gtpcp::session {

// Ring records: DatagramMeta::flags says which.
enum class LookupKind : uint16_t {
  kSession = 1,
  kStoredTeids = 2,
  kSubscriber = 3,
};

// Both rings' size: a look-up is one slot, an answer a few (a list of stored
// TEIDs is chunked to fit).
inline constexpr uint32_t kLookupRingSlots = 16384;

// kSession, lookup ring.
struct SessionLookup {
  uint32_t access_teid;
  uint16_t partition;
  uint16_t reserved;
};

// kStoredTeids, lookup ring.
struct StoredTeidsLookup {
  uint16_t partition;
  uint16_t reserved;
};

enum class RestoreOutcome : uint8_t {
  kFound = 1,
  kAbsent = 2,
  kFailed = 3,  // the storage did not answer (unreachable, timed out, unreadable record)
};

// kSession, restore ring.
struct SessionRestore {
  uint32_t access_teid;
  uint8_t outcome;  // RestoreOutcome
  uint8_t reserved[3];
  SessionShm record;  // kFound: the session as stored (state kActive or kCreating)
  // kFound: its pool, gateway and rule by name; the worker finds them in the
  // routing document it runs (record's indexes are the storing document's).
  RoutingNames names;
};
static_assert(std::is_trivially_copyable_v<SessionRestore>);

// kStoredTeids, restore ring: the header, then `count` uint32 access TEIDs.
// A partition's list comes in chunks; the one with `last` set ends it.
struct StoredTeidsChunk {
  uint16_t partition;
  uint8_t outcome;  // kFound (the list, possibly empty) or kFailed
  uint8_t last;
  uint32_t count;
};
inline constexpr uint32_t kStoredTeidsPerChunk = 8192;

// kSubscriber, lookup ring: the IMSI's digits.
struct SubscriberLookup {
  uint16_t partition;
  uint8_t imsi_length;
  char imsi[15];
};

// kSubscriber, restore ring: the header, then `count` uint32 access TEIDs
// (at most kMaxSubscriberSessions: more PDN connections than a UE has).
struct SubscriberSessions {
  uint16_t partition;
  uint8_t outcome;  // kFound (the list, possibly empty) or kFailed
  uint8_t imsi_length;
  char imsi[15];
  uint8_t reserved;
  uint32_t count;
};
inline constexpr uint32_t kMaxSubscriberSessions = 32;

}  // namespace gtpcp::session
