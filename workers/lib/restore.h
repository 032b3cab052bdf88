// Sessions read back from the storage (DESIGN.md, "State and storage"): a
// worker that gets a message for a TEID it does not hold asks the persister,
// without blocking, whether Redis has the session, and serves the message
// when the record arrives. This is what makes a process restart with a fresh
// segment, an instance restart or a failover to another instance of the
// group invisible to peers.
//
// Two rings per worker, besides the persist ring: the lookup ring (worker ->
// persister) carries questions, the restore ring (persister -> worker) their
// answers. A question is one of:
// - kSession: the record of the session named by an access TEID. The answer
//   is the slot as the storage has it (SessionRestore), or "absent", or
//   "failed" (the storage did not answer: the message is dropped, and the
//   peer's retransmission asks again).
// - kStoredTeids: every access TEID the storage holds in a partition. A
//   worker starting with an empty session table reserves them (kStored slots)
//   before it allocates any slot, so a new session never gets the TEIDs of a
//   stored one. Until every partition is read, creations wait in the
//   new-session ring; established sessions are served meanwhile.
//
// Completion. The walks over sessions (a gateway's restart, a connection
// set deleted) see the session table; after a failover, a restart with a
// fresh segment or a demotion, the partition's stored sessions live in
// Redis only. complete() reads them in: each local partition's stored TEIDs
// are listed again (kStoredTeids), and every one without a live session
// here is looked up (kSession, no message held), a bounded number at a
// time, so that the walk then sees them all. Only the instance that acts
// for the group's stored sessions completes (GroupWritesShm::acts_for_stored):
// a standby that read them in would tell the SGWs what the active tells them.
//
// Held messages. The message waits in a fixed arena (no allocation per
// datagram), chained to the look-up of its session; a retransmission of a
// held message (same peer, same sequence number) is dropped, so it is never
// held twice and the first copy is the one answered. A look-up unanswered
// for `timeout_ns` drops its messages (counted): the peer retransmits.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/group/worker_shm.h"
#include "common/session/lookup.h"
#include "arrival.h"
#include "session_table.h"
#include "worker_layout.h"

namespace gtpcp::worker {

using session::kLookupRingSlots;
using session::kStoredTeidsPerChunk;
using session::LookupKind;
using session::RestoreOutcome;
using session::SessionLookup;
using session::SessionRestore;
using session::StoredTeidsChunk;
using session::StoredTeidsLookup;
using session::SubscriberLookup;
using session::SubscriberSessions;

// Where look-ups go: the lookup ring, or a test's record of them.
class LookupSink {
 public:
  virtual ~LookupSink() = default;
  // False when the ring is full (the caller retries later or drops).
  virtual bool lookup(LookupKind kind, uint16_t partition, std::span<const uint8_t> body) noexcept = 0;
};

struct RestoreSettings {
  uint32_t max_held = 1024;          // messages held at once
  uint32_t max_message = 4096;       // longer ones are dropped, not held
  uint32_t max_lookups = 512;        // sessions asked for at once
  uint64_t timeout_ns = 2'000'000'000;
  // A partition's stored TEIDs asked again after a failure or no answer.
  uint64_t stored_retry_ns = 1'000'000'000;
  // How often the next partition with reserved slots asks again which of
  // its stored sessions still are (another instance may have deleted them),
  // one partition at a time: 512 of them in under two minutes; 0: never.
  uint64_t stored_refresh_ns = 200'000'000;
  // Ask for the stored TEIDs before allocating (a fresh session table).
  bool load_stored_teids = true;
};

// Partitions whose stored TEIDs are asked for at once at a cold start.
inline constexpr uint32_t kStoredTeidsAsking = 64;

class Restorer {
 public:
  // `loaded`: the segment's flag (WorkerShmHeader::stored_teids_loaded).
  Restorer(const RestoreSettings& settings, const WorkerLayout& layout, SessionTable& sessions,
           WorkerCounters& counters, LookupSink& sink, uint32_t& loaded);

  // The proxy, for a request (or a message without reply) naming `teid`,
  // which no live session holds. True: taken (held until the storage answers,
  // or dropped as a copy of a held one, or for want of room; all counted).
  // False: the storage cannot hold it, or just said it does not; answer it
  // as unknown.
  bool hold(const Arrival& arrival, std::span<const uint8_t> datagram, uint32_t teid,
            uint32_t sequence) noexcept;

  // A request that names its subscriber by IMSI alone (PGW Downlink
  // Triggering Notification) and matched no session held here: held while
  // the storage lists the subscriber's sessions (kSubscriber) and those not
  // held are read in, then handed back once; the second time the proxy
  // answers it itself. True: taken (or dropped, counted); false: answer now.
  bool holdForSubscriber(const Arrival& arrival, std::span<const uint8_t> datagram, uint16_t partition,
                         std::string_view imsi, uint32_t sequence) noexcept;

  // What is done with a held message once its session is known (or known
  // gone): handed back to the proxy as if it arrived now.
  struct Replay {
    void (*fn)(void* user, const Arrival& arrival, std::span<uint8_t> datagram) noexcept;
    void* user;
  };
  // Called with each session installed from the storage, with the names of
  // its pool, gateway and rule (the engine finds them in its document).
  struct Installed {
    void (*fn)(void* user, SessionShm& session, const session::RoutingNames& names) noexcept = nullptr;
    void* user = nullptr;
  };
  void setInstalled(Installed installed) noexcept { installed_ = installed; }
  // One record of the restore ring.
  void apply(LookupKind kind, std::span<const uint8_t> payload, uint64_t now_ns, uint64_t wall_ns,
             Replay replay) noexcept;

  // Timeouts, and the stored-TEID questions still to ask. Every loop turn.
  void tick(uint64_t now_ns) noexcept;

  // Reads every stored session of the local partitions in (Completion
  // above). False when this instance does not act for stored sessions, or
  // the first load is not over; true when one is under way or begun now.
  bool complete() noexcept;
  bool completing() const noexcept { return completing_; }
  // Completions finished: a walk that began before one ended walks again.
  uint64_t completions() const noexcept { return completions_; }
  // GroupWritesShm::acts_for_stored; none (the tests): this worker acts.
  void setActsFlag(const std::atomic<uint32_t>* acts) noexcept { acts_ = acts; }

  // True once the stored TEIDs are reserved: creations may allocate.
  bool ready() const noexcept { return loaded_ != 0; }
  uint32_t held() const noexcept { return held_count_; }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  struct Held {
    uint32_t next = kNone;  // next message of the same look-up, or next free
    uint32_t length = 0;
    uint32_t sequence = 0;
    Arrival arrival;
  };
  struct Lookup {
    uint32_t access_teid = 0;  // 0: unused
    uint32_t first = kNone;    // held messages, in arrival order
    uint32_t last = kNone;
    uint64_t deadline_ns = 0;
    bool completion = false;   // asked by a completion (messages may join it)
  };
  // A subscriber's sessions being listed, with the messages that wait.
  struct SubscriberWait {
    uint16_t partition = 0;
    uint8_t imsi_length = 0;  // 0: unused
    char imsi[15]{};
    uint32_t first = kNone, last = kNone;
    uint64_t deadline_ns = 0;
  };
  static constexpr std::size_t kSubscriberWaits = 64;
  // A message copied into the arena: its index, or kNone (counted).
  uint32_t keep(const Arrival& arrival, std::span<const uint8_t> datagram, uint32_t sequence) noexcept;
  // Frees a chain of held messages, replaying them unless `drop`.
  void release(uint32_t first, bool drop, uint64_t now_ns, uint64_t wall_ns, Replay replay) noexcept;
  void subscriberListed(std::span<const uint8_t> payload, uint64_t now_ns, uint64_t wall_ns, Replay replay) noexcept;
  // Completion lookups in flight at most: the rest of the table is for
  // held messages.
  uint32_t completionSlots() const noexcept { return std::max<uint32_t>(1, settings_.max_lookups / 2); }
  void stepCompletion(uint64_t now_ns) noexcept;
  void completionListed(const session::StoredTeidsChunk& c, std::span<const uint8_t> payload) noexcept;
  // A lookup of `l` ends: the completion's count of those in flight.
  void lookupEnded(uint32_t l) noexcept;
  uint32_t findLookup(uint32_t access_teid) const noexcept;
  // Drops (drop) or replays every message of look-up `l`, then frees it.
  void finish(uint32_t l, bool drop, uint64_t now_ns, uint64_t wall_ns, Replay replay) noexcept;
  void storedTeids(std::span<const uint8_t> payload) noexcept;
  void askStoredTeids(uint64_t now_ns) noexcept;
  // After the first load: the next partition with reserved slots asks
  // again; its list, once whole, frees the reservations it no longer names.
  void refreshStored(uint64_t now_ns) noexcept;
  void refreshed(const session::StoredTeidsChunk& c, std::span<const uint8_t> payload) noexcept;

  RestoreSettings settings_;
  WorkerLayout layout_;
  SessionTable& sessions_;
  WorkerCounters& counters_;
  LookupSink& sink_;
  uint32_t& loaded_;
  Installed installed_;

  // max_held x max_message, left uninitialised: its pages are committed as
  // messages are first held, not at start (4 MiB of zeros cost a cold start
  // about 1,000 page faults).
  std::unique_ptr<uint8_t[]> arena_;
  std::vector<Held> held_;
  uint32_t free_held_ = kNone;
  uint32_t held_count_ = 0;
  std::vector<Lookup> lookups_;
  uint32_t lookup_count_ = 0;
  uint64_t next_sweep_ns_ = 0;
  // Set while the messages of an absent session are replayed: hold() says no.
  uint32_t refusing_ = 0;

  // Stored TEIDs, per local partition: when it was last asked (0: not yet),
  // and whether its list is complete.
  std::vector<uint64_t> asked_ns_;
  std::vector<uint8_t> partition_done_;
  uint32_t partitions_done_ = 0;
  // The refresh in progress: its local partition (kNone: none), when it was
  // asked, which slots its list named so far.
  uint32_t refresh_lp_ = kNone;
  uint32_t refresh_cursor_ = 0;  // where the search for the next partition goes on
  uint64_t refresh_asked_ns_ = 0;
  uint64_t next_refresh_ns_ = 0;
  std::vector<uint8_t> listed_;

  // The completion under way: the next local partition to list, the one
  // being listed (kNone: none), the TEIDs to look up and how far.
  const std::atomic<uint32_t>* acts_ = nullptr;
  bool completing_ = false;
  uint64_t completions_ = 0;
  uint32_t completion_next_lp_ = 0;
  uint32_t completion_lp_ = kNone;
  uint64_t completion_asked_ns_ = 0;
  std::vector<uint32_t> to_fetch_;
  std::size_t fetched_ = 0;
  uint32_t completion_in_flight_ = 0;

  std::vector<SubscriberWait> subscriber_waits_;
  uint32_t subscriber_wait_count_ = 0;
  // Set while messages that waited for their subscriber are handed back:
  // holdForSubscriber() says no.
  bool replaying_subscriber_ = false;
};

}  // namespace gtpcp::worker
