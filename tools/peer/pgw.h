// The emulated PGWs: answer Create Session, Modify Bearer, Delete Session and
// Echo requests per TS 29.274, check what the proxy made of the SGW's
// requests, and misbehave on demand (reject with a cause, answer late, drop a
// fraction of requests).
//
// On request the PGWs start procedures of their own: with --dedicated-bearer
// each accepted session gets a dedicated bearer, created (Create Bearer
// Request, piggybacked on the Create Session Response with --piggyback),
// updated and deleted, each step once the previous one was answered; with
// --commands a Modify Bearer Command is answered by an Update Bearer Request
// numbered like it (TS 29.274 §7.6), every second one of a session by a
// Modify Bearer Failure Indication, cause 72. The PGW's own requests go to
// the address the session's requests come from, port 2123, and are sent
// again after T3, N3 times.
//
// A retransmitted request (same source address and port, same sequence
// number, same message type, within 60 s) gets the cached answer again, not a
// second session. Sessions live in a fixed table sized at construction;
// a slot freed by a deletion is reused last-freed-last, so the answer to a
// duplicate Delete Session Request stays available as long as possible.
//
// PgwEngine is pure logic driven by the runner: no allocation, exception or
// log line per datagram. One thread only.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tools/peer/hash_index.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
#include "tools/peer/requests.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

struct PgwNodeConfig {
  IpAddress addr{};           // the node's address: its F-TEIDs name it, in its family
  // The proxy's gateway-side address in the node's family (the sender
  // F-TEIDs must name it); unused with `relay`.
  IpAddress proxy_gateway{};
  // The instance the proxy group fails over to, in the node's family
  // (--failover-to): the checks take F-TEIDs naming it as the proxy's.
  std::optional<IpAddress> failover_gateway;
  uint32_t socket = 0;        // Outbox socket index
  uint8_t reject_cause = 0;   // reject every creation with this cause (0: accept)
  int64_t delay_ns = 0;       // answer this late
  double drop = 0;            // drop this fraction of requests
};

struct PgwConfig {
  std::vector<PgwNodeConfig> nodes;
  bool relay = false;          // no proxy in front: skip the "names the proxy" checks
  Identities ids;              // the IMSI range the SGWs use
  uint32_t capacity = 0;       // sessions, all PGWs together
  uint8_t recovery = 1;
  uint64_t seed = 1;           // of the drop decisions
  int64_t duplicate_window_ns = kDuplicateWindowNs;
  uint32_t delay_queue = 32768;  // delayed answers held per delayed PGW
  int64_t t3_ns = 3'000'000'000;  // of the PGW's own requests
  uint32_t n3 = 2;
  bool dedicated_bearer = false;  // a dedicated bearer per session: created, updated, deleted
  bool piggyback = false;         // its Create Bearer Request rides on the Create Session Response
  bool commands = false;          // Modify Bearer Commands are expected and answered
  uint32_t sequence_seed = 0;     // first sequence number of the PGW's own requests
};

class PgwEngine {
 public:
  // `stats` has one entry per node.
  PgwEngine(PgwConfig config, Outbox& outbox, std::vector<PgwNodeStats>& stats,
            MismatchCounters& mismatches, MalformedCounters& malformed);

  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept;
  // Sends the delayed answers due at `now`.
  void onTimers(int64_t now) noexcept;
  int64_t nextTimer() const noexcept;
  // The PGW's own requests awaiting their answer.
  uint64_t outstanding() const noexcept { return outstanding_; }

  // The TEID the PGW allocated for session slot `slot` in generation `gen`.
  static uint32_t teidOf(uint32_t slot, uint8_t gen) noexcept {
    return (uint32_t{gen} << 24) | (slot + 1);
  }
  // Largest session table this TEID layout can address.
  static constexpr uint32_t kMaxCapacity = 0x00fffff0;

 private:
  static constexpr std::size_t kCachedResponse = 192;
  // The largest request of the PGW's own, a Create Bearer Request with IPv6
  // F-TEIDs, is under 100 octets.
  static constexpr std::size_t kMaxOwnRequest = 128;
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  enum class State : uint8_t { kFree, kActive, kDeleted };

  struct Session {
    uint64_t imsi = 0;
    int64_t last_time = 0;
    int64_t freed_at = 0;
    Endpoint last_src{};
    uint32_t peer_teid = 0;
    uint32_t last_seq = 0;
    uint8_t gen = 0;
    State state = State::kFree;
    uint8_t node = 0;
    uint8_t ebi = 0;
    uint8_t last_type = 0;
    uint8_t response_length = 0;
    uint8_t commands = 0;  // Modify Bearer Commands received, first copies
    std::array<uint8_t, kCachedResponse> response{};
  };

  struct Delayed {
    int64_t due = 0;
    Endpoint to{};
    uint16_t length = 0;
    std::array<uint8_t, kCachedResponse> bytes{};
  };

  // A request the PGW sent, as sent, until answered or timed out.
  struct Outgoing {
    int64_t deadline = 0;
    uint64_t imsi = 0;
    Endpoint to{};
    uint32_t prev = kNone, next = kNone;  // DeadlineList
    uint32_t slot = 0;
    uint32_t seq = 0;
    uint8_t gen = 0;
    uint8_t node = 0;
    uint8_t ebi = 0;  // the bearer it names
    uint8_t retries = 0;
    Procedure procedure = Procedure::kCreateBearer;
    uint16_t length = 0;
    std::array<uint8_t, kMaxOwnRequest> bytes{};
  };
  static constexpr std::size_t kRecent = 1024;

  struct Node {
    PgwNodeConfig config;
    std::vector<uint32_t> by_imsi;  // subscriber index -> slot + 1 (0: none)
    std::vector<Delayed> delayed;   // ring; empty unless delay_ns > 0
    std::size_t delayed_head = 0, delayed_count = 0;
    uint64_t rng = 0;
    uint32_t seq_next = 0;          // of the PGW's own requests
    HashIndex<uint32_t> outgoing;   // sequence number -> Outgoing record
    RecentRequests recent;          // own requests answered or timed out
  };

  bool dropNow(Node& n) noexcept;
  void respond(uint32_t node, const Endpoint& to, std::span<const uint8_t> bytes,
               int64_t now) noexcept;
  void respondCauseOnly(uint32_t node, const Endpoint& to, gtp::v2::MessageType type,
                        uint32_t seq, uint32_t teid, uint8_t cause, int64_t now) noexcept;
  bool duplicate(const Session& s, const Endpoint& from, uint32_t seq, uint8_t type,
                 int64_t now) const noexcept;
  // The answer of `length` octets just built in s.response answers `message_`
  // (of `type`, from `from`): a repeat of it within the window gets it again.
  void keepAnswer(Session& s, uint8_t type, const Endpoint& from, std::size_t length,
                  int64_t now) noexcept;
  uint32_t sessionOfTeid(uint32_t teid) const noexcept;
  uint32_t allocate(int64_t now) noexcept;
  void release(uint32_t slot, int64_t now) noexcept;
  void onCreate(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  void onModifyOrDelete(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` is a Modify Bearer Command (TS 29.274 §7.2.14.1).
  void onCommand(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` answers one of the PGW's own requests.
  void onResponse(uint32_t node, int64_t now) noexcept;

  // Takes a free Outgoing record for request `p` of session `slot` numbered
  // `seq` and fills it with `build(bytes)`; kNone when none is free or the
  // build failed (both counted). `send` then sends it (after the node's
  // delay, like its answers) and starts its timer.
  template <class Build>
  uint32_t prepare(uint32_t slot, Procedure p, uint32_t seq, uint8_t ebi, Build&& build) noexcept;
  void send(uint32_t r, int64_t now) noexcept;
  // Opens and sends the dedicated bearer's next request: `p` of session `slot`.
  void startDedicated(uint32_t slot, Procedure p, int64_t now) noexcept;
  // Record `r` is done with: answered, or timed out.
  void close(uint32_t r, bool timed_out) noexcept;
  uint32_t nextSequence(Node& n) noexcept;
  // Counts the mismatches `ms` found in a message of procedure `p` at `node`.
  void count(MismatchSet ms, uint32_t node, Procedure p) noexcept;

  PgwConfig config_;
  Outbox& outbox_;
  std::vector<PgwNodeStats>& stats_;
  MismatchCounters& mismatches_;
  MalformedCounters& malformed_;
  std::vector<Node> nodes_;
  std::vector<Session> sessions_;
  std::vector<uint32_t> free_;  // ring of free slots, oldest freed first
  std::size_t free_head_ = 0, free_count_ = 0;
  std::vector<Outgoing> outgoing_;       // empty unless the PGW sends requests of its own
  std::vector<uint32_t> outgoing_free_;  // a stack; capacity reserved: never grows
  DeadlineList<Outgoing> outgoing_list_{outgoing_};
  uint64_t outstanding_ = 0;
  gtp::v2::Message message_;
  std::array<uint8_t, kMaxBuiltMessage> scratch_{};
};

}  // namespace gtpcp::peer
