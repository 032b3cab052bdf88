// What the emulated PGWs (GTPv2-C) and GGSNs (GTPv1-C) share: the session
// table, answers given late (--*-delay-ms) or not at all (--*-drop), the
// last answer of each session for a repeated request, and the gateway's own
// requests with their retransmission after T3 (N3 times) and timeout. The
// engines (pgw.h, ggsn.h) add their protocol.
//
// Sessions live in a fixed table sized at construction; a slot freed by a
// deletion is reused last-freed-last, so the answer to a duplicate deletion
// stays available as long as possible. A session's TEID names its slot and
// the slot's generation (teidOf()).
//
// GatewayCore is a CRTP base (its derived engines see Session and State);
// `SessionT` derives from GatewaySession<N>, `Stats` from GatewayNodeStats<M>,
// the configuration from GatewayConfig. Nothing after the constructor
// allocates, throws or logs. One thread only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "tools/peer/engine.h"
#include "tools/peer/failover.h"
#include "tools/peer/hash_index.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
#include "tools/peer/random.h"
#include "tools/peer/requests.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

struct GatewayNodeConfig {
  IpAddress addr{};           // the node's address: its messages name it, in its family
  // The proxy's gateway-side address in the node's family (the requests
  // must name it); unused with `relay`.
  IpAddress proxy_gateway{};
  // The instance the proxy group fails over to, in the node's family
  // (--failover-to): the checks take addresses naming it as the proxy's.
  std::optional<IpAddress> failover_gateway;
  uint32_t socket = 0;        // Outbox socket index
  uint8_t reject_cause = 0;   // reject every creation with this cause (0: accept)
  int64_t delay_ns = 0;       // answer this late
  double drop = 0;            // drop this fraction of requests
};

// What every gateway configuration has (PgwConfig, GgsnConfig).
struct GatewayConfig {
  std::vector<GatewayNodeConfig> nodes;
  bool relay = false;          // no proxy in front: skip the "names the proxy" checks
  Identities ids;              // the IMSI range the access side uses
  uint32_t capacity = 0;       // sessions, all gateways together
  uint8_t recovery = 1;
  uint64_t seed = 1;           // of the drop decisions
  int64_t duplicate_window_ns = kDuplicateWindowNs;
  uint32_t delay_queue = 32768;  // delayed answers held per delayed gateway
  int64_t t3_ns = 3'000'000'000;  // of the gateway's own requests
  uint32_t n3 = 2;
  uint32_t sequence_seed = 0;     // first sequence number of the gateway's own requests
};

enum class SessionState : uint8_t { kFree, kActive, kDeleted };

// What every gateway session has: its identity, and the last request it
// answered with the answer's octets, for a repeat of it.
template <std::size_t kCachedResponse>
struct GatewaySession {
  uint64_t imsi = 0;
  int64_t last_time = 0;
  int64_t freed_at = 0;
  Endpoint last_src{};
  uint32_t peer_teid = 0;   // the access side's control TEID, as the gateway sees it
  uint32_t last_seq = 0;
  uint32_t last_digest = 0;  // of the last request's octets after the header (0: not kept)
  uint8_t gen = 0;
  SessionState state = SessionState::kFree;
  uint8_t node = 0;
  uint8_t last_type = 0;
  uint16_t response_length = 0;
  std::array<uint8_t, kCachedResponse> response{};
};

template <class Derived, class SessionT, class Stats>
class GatewayCore : public GatewayEngine {
 public:
  void onTimers(int64_t now) noexcept override {
    for (Node& n : nodes_) {
      while (n.delayed_count > 0) {
        Delayed& d = n.delayed[n.delayed_head];
        if (d.due > now) break;
        auto buf = outbox_.reserve(n.config.socket);
        std::memcpy(buf.data(), d.bytes.data(), d.length);
        outbox_.commit(n.config.socket, d.to, d.length);
        n.delayed_head = (n.delayed_head + 1) % n.delayed.size();
        --n.delayed_count;
      }
    }
    outgoing_list_.retransmitDue(
        now, common_.t3_ns, common_.n3,
        [&](uint32_t r) {
          Outgoing& o = outgoing_[r];
          ++stats_[o.node].procedures[static_cast<std::size_t>(o.procedure)].retransmissions;
          const uint32_t socket = nodes_[o.node].config.socket;
          auto buf = outbox_.reserve(socket);
          std::memcpy(buf.data(), o.bytes.data(), o.length);
          outbox_.commit(socket, o.to, o.length);
          return true;
        },
        [&](uint32_t r, bool) {
          Outgoing& o = outgoing_[r];
          ++stats_[o.node].procedures[static_cast<std::size_t>(o.procedure)].timeouts;
          close(r, true);
        });
  }
  int64_t nextTimer() const noexcept override {
    int64_t next = outgoing_list_.nextDeadline();
    for (const Node& n : nodes_)
      if (n.delayed_count > 0) next = std::min(next, n.delayed[n.delayed_head].due);
    return next;
  }
  uint64_t outstanding() const noexcept override { return outstanding_; }

  // The TEID the gateway allocated for session slot `slot` in generation `gen`.
  static uint32_t teidOf(uint32_t slot, uint8_t gen) noexcept {
    return (uint32_t{gen} << 24) | (slot + 1);
  }
  // Largest session table this TEID layout can address.
  static constexpr uint32_t kMaxCapacity = 0x00fffff0;

 protected:
  using Session = SessionT;
  using State = SessionState;
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  // The largest request of a gateway's own (a Create Bearer Request with
  // IPv6 F-TEIDs) is under 100 octets.
  static constexpr std::size_t kMaxOwnRequest = 128;
  static constexpr std::size_t kRecent = 1024;
  static constexpr std::size_t kDelayedSize = sizeof(SessionT{}.response);

  struct Delayed {
    int64_t due = 0;
    Endpoint to{};
    uint16_t length = 0;
    std::array<uint8_t, kDelayedSize> bytes{};
  };

  // A request the gateway sent, as sent, until answered or timed out.
  struct Outgoing {
    int64_t deadline = 0;
    uint64_t imsi = 0;
    Endpoint to{};
    uint32_t prev = kNone, next = kNone;  // DeadlineList
    uint32_t slot = 0;
    uint32_t seq = 0;
    uint8_t gen = 0;
    uint8_t node = 0;
    uint8_t bearer = 0;  // the bearer it names: EBI (v2), NSAPI (v1)
    uint8_t retries = 0;
    Procedure procedure = Procedure::kCreateBearer;
    uint16_t length = 0;
    std::array<uint8_t, kMaxOwnRequest> bytes{};
  };

  struct Node {
    GatewayNodeConfig config;
    std::vector<uint32_t> by_imsi;  // subscriber index -> slot + 1 (0: none)
    std::vector<Delayed> delayed;   // ring; empty unless delay_ns > 0
    std::size_t delayed_head = 0, delayed_count = 0;
    uint64_t rng = 0;
    uint32_t seq_next = 0;          // of the gateway's own requests
    HashIndex<uint32_t> outgoing;   // sequence number -> Outgoing record
    RecentRequests recent;          // own requests answered or timed out
  };

  // `sequence_mask`: the range of the gateway's own sequence numbers, 23
  // bits (v2), 16 bits (v1); `requests_per_session`: its own requests a
  // session may have outstanding at a time (0: it sends none).
  GatewayCore(const GatewayConfig& config, uint32_t sequence_mask, uint32_t requests_per_session,
              Outbox& outbox, std::vector<Stats>& stats, MismatchCounters& mismatches,
              MalformedCounters& malformed)
      : common_(config),
        sequence_mask_(sequence_mask),
        outbox_(outbox),
        stats_(stats),
        mismatches_(mismatches),
        malformed_(malformed) {
    common_.capacity = std::clamp<uint32_t>(common_.capacity, 1, kMaxCapacity);
    stats_.resize(common_.nodes.size());
    nodes_.resize(common_.nodes.size());
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      Node& n = nodes_[k];
      n.config = common_.nodes[k];
      n.by_imsi.assign(common_.ids.count, 0);
      if (n.config.delay_ns > 0) n.delayed.resize(std::max<uint32_t>(common_.delay_queue, 1));
      // xorshift64* needs a non-zero state; each gateway draws its own sequence.
      n.rng = randomState(common_.seed ^ (0x9e3779b97f4a7c15ull * (k + 1)));
    }
    sessions_.resize(common_.capacity);
    free_.resize(common_.capacity);
    for (uint32_t i = 0; i < common_.capacity; ++i) free_[i] = i;
    free_count_ = common_.capacity;
    // A subscriber has one session up at a time.
    outgoing_.resize(requests_per_session *
                     std::min<std::size_t>(common_.capacity, std::size_t{common_.ids.count} + 16));
    outgoing_free_.reserve(outgoing_.size());
    for (std::size_t i = outgoing_.size(); i > 0; --i)
      outgoing_free_.push_back(static_cast<uint32_t>(i - 1));
    if (!outgoing_.empty()) {
      for (std::size_t k = 0; k < nodes_.size(); ++k) {
        nodes_[k].outgoing.init(outgoing_.size());
        nodes_[k].recent.init(kRecent);
        nodes_[k].seq_next =
            (common_.sequence_seed + static_cast<uint32_t>(k) * 0x2a3b1u) & sequence_mask_;
      }
    }
  }

  // Whether `node` drops the request just received (--*-drop; counted).
  bool dropped(uint32_t node) noexcept {
    Node& n = nodes_[node];
    if (n.config.drop <= 0) return false;
    const uint64_t r = nextRandom(n.rng);
    if (static_cast<double>(r >> 11) * 0x1.0p-53 >= n.config.drop) return false;
    ++stats_[node].dropped;
    return true;
  }

  // The message just received on `node` answers one of the gateway's own
  // requests: Derived::onResponse(), or `unexpected` when it sends none.
  void ownResponse(uint32_t node, int64_t now, Mismatch unexpected) noexcept {
    if (outgoing_.empty()) {
      mismatches_.count(unexpected);
      return;
    }
    static_cast<Derived&>(*this).onResponse(node, now);
  }

  // Sends `bytes` from node `node` to `to`, after the node's delay.
  void respond(uint32_t node, const Endpoint& to, std::span<const uint8_t> bytes,
               int64_t now) noexcept {
    Node& n = nodes_[node];
    if (n.config.delay_ns > 0 && bytes.size() <= kDelayedSize) {
      if (n.delayed_count < n.delayed.size()) {
        Delayed& d = n.delayed[(n.delayed_head + n.delayed_count) % n.delayed.size()];
        d.due = now + n.config.delay_ns;
        d.to = to;
        d.length = static_cast<uint16_t>(bytes.size());
        std::memcpy(d.bytes.data(), bytes.data(), bytes.size());
        ++n.delayed_count;
        ++stats_[node].delayed;
        return;
      }
      ++stats_[node].delay_queue_full;
    }
    auto buf = outbox_.reserve(n.config.socket);
    if (buf.size() < bytes.size()) {
      ++stats_[node].internal_errors;
      return;
    }
    std::memcpy(buf.data(), bytes.data(), bytes.size());
    outbox_.commit(n.config.socket, to, bytes.size());
  }
  // Sends from `node` to `to` the message just built in scratch_ (`r`, its
  // length), after the node's delay; counts an internal error when it could
  // not be built.
  void respondBuilt(uint32_t node, const Endpoint& to, const gtp::Result<std::size_t>& r,
                    int64_t now) noexcept {
    if (!r) {
      ++stats_[node].internal_errors;
      return;
    }
    respond(node, to, std::span<const uint8_t>(scratch_.data(), *r), now);
  }
  // Answers an Echo Request received on `node` from `from` (unless dropped)
  // with the Echo Response `build(scratch_)` writes.
  template <class Build>
  void answerEcho(uint32_t node, const Endpoint& from, int64_t now, Build&& build) noexcept {
    if (dropped(node)) return;
    ++stats_[node].echo_requests;
    respondBuilt(node, from, build(std::span<uint8_t>(scratch_)), now);
  }
  // Sends the cached answer of session `s` again.
  void respondAgain(const Session& s, const Endpoint& to, int64_t now) noexcept {
    respond(s.node, to, std::span<const uint8_t>(s.response.data(), s.response_length), now);
  }

  // A request from `from` numbered `seq`, of `type`, whose octets after the
  // header digest to `digest` (0: not compared) repeats the last one session
  // `s` answered, within the window.
  bool duplicate(const Session& s, const Endpoint& from, uint32_t seq, uint8_t type,
                 uint32_t digest, int64_t now) const noexcept {
    const GatewayNodeConfig& n = nodes_[s.node].config;
    return s.state != SessionState::kFree && s.last_type == type && s.last_seq == seq &&
           s.last_digest == digest &&
           proxyPeer(s.last_src, n.proxy_gateway, n.failover_gateway) ==
               proxyPeer(from, n.proxy_gateway, n.failover_gateway) &&
           now - s.last_time < common_.duplicate_window_ns && s.response_length > 0;
  }
  // The answer of `length` octets just built in s.response answers the
  // request of `type` numbered `seq` from `from`: a repeat of it within the
  // window gets it again.
  void keepAnswer(Session& s, uint8_t type, uint32_t seq, uint32_t digest, const Endpoint& from,
                  std::size_t length, int64_t now) noexcept {
    s.response_length = static_cast<uint16_t>(length);
    s.last_type = type;
    s.last_seq = seq;
    s.last_digest = digest;
    s.last_src = from;
    s.last_time = now;
  }

  uint32_t sessionOfTeid(uint32_t teid) const noexcept {
    const uint32_t low = teid & 0x00ffffff;
    if (low == 0 || low > sessions_.size()) return kNone;
    const uint32_t slot = low - 1;
    const Session& s = sessions_[slot];
    if (s.state == SessionState::kFree || s.gen != static_cast<uint8_t>(teid >> 24)) return kNone;
    return slot;
  }

  uint32_t allocate(int64_t now) noexcept {
    if (free_count_ == 0) return kNone;
    const uint32_t slot = free_[free_head_];
    free_head_ = (free_head_ + 1) % free_.size();
    --free_count_;
    Session& s = sessions_[slot];
    if (s.state == SessionState::kDeleted && now - s.freed_at < common_.duplicate_window_ns)
      ++stats_[s.node].dup_window_evictions;
    const uint8_t gen = static_cast<uint8_t>(s.gen + 1);
    s = Session{};
    s.gen = gen;
    return slot;
  }

  // A slot for a new session on `node`, asked by a creation from `from`;
  // kNone when the creation is refused (counted): with `reject_cause` when
  // not 0, with `full_cause` when the table is full, `refusal(cause)` building
  // the answer in scratch_. The subscriber's session `existing` (kNone: none)
  // ends first when active: a new creation for a subscriber with a session
  // replaces it (one APN, one default bearer or PDP address per subscriber).
  template <class Refusal>
  uint32_t admit(uint32_t node, uint32_t existing, uint8_t reject_cause, uint8_t full_cause,
                 const Endpoint& from, int64_t now, Refusal&& refusal) noexcept {
    Stats& st = stats_[node];
    if (reject_cause != 0) {
      ++st.sessions_rejected;
      respondBuilt(node, from, refusal(reject_cause), now);
      return kNone;
    }
    if (existing != kNone && sessions_[existing].state == SessionState::kActive) {
      ++st.sessions_replaced;
      static_cast<Derived&>(*this).endSession(existing, now);
    }
    const uint32_t slot = allocate(now);
    if (slot == kNone) {
      ++st.no_resources;
      ++st.sessions_rejected;
      respondBuilt(node, from, refusal(full_cause), now);
    }
    return slot;
  }

  // Session `slot` is deleted: it keeps answering repeats until reused.
  void release(uint32_t slot, int64_t now) noexcept {
    Session& s = sessions_[slot];
    Node& n = nodes_[s.node];
    uint32_t index = 0;
    if (common_.ids.indexOfImsi(s.imsi, index) && n.by_imsi[index] == slot + 1) n.by_imsi[index] = 0;
    s.state = SessionState::kDeleted;
    s.freed_at = now;
    free_[(free_head_ + free_count_) % free_.size()] = slot;
    ++free_count_;
    if (stats_[s.node].sessions_up > 0) --stats_[s.node].sessions_up;
  }

  // The next sequence number of `n`'s own requests; one still outstanding
  // (16-bit numbers wrap) is passed over.
  uint32_t nextSequence(Node& n) noexcept {
    uint32_t seq = n.seq_next;
    for (uint32_t tries = 0; tries <= sequence_mask_; ++tries) {
      seq = n.seq_next;
      n.seq_next = (n.seq_next + 1) & sequence_mask_;
      if (uint32_t r = 0; !n.outgoing.find(seq, r)) break;
    }
    return seq;
  }

  // Takes a free Outgoing record for request `p` of session `slot`, to `to`,
  // numbered `seq`, naming bearer `bearer`, and fills it with `build(bytes)`;
  // kNone when none is free or the build failed (both counted). `send` then
  // sends it (after the node's delay, like its answers) and starts its timer.
  template <class Build>
  uint32_t prepare(uint32_t slot, const Endpoint& to, Procedure p, uint32_t seq, uint8_t bearer,
                   Build&& build) noexcept {
    const Session& s = sessions_[slot];
    Stats& st = stats_[s.node];
    if (outgoing_free_.empty()) {
      ++st.requests_refused;
      return kNone;
    }
    const uint32_t r = outgoing_free_.back();
    Outgoing& o = outgoing_[r];
    auto built = build(std::span<uint8_t>(o.bytes));
    if (!built) {
      ++st.internal_errors;
      return kNone;
    }
    outgoing_free_.pop_back();
    o.length = static_cast<uint16_t>(*built);
    o.imsi = s.imsi;
    o.to = to;
    o.slot = slot;
    o.seq = seq;
    o.gen = s.gen;
    o.node = s.node;
    o.bearer = bearer;
    o.retries = 0;
    o.procedure = p;
    nodes_[s.node].outgoing.insert(seq, r);  // cannot fail: twice as many slots as records
    ++outstanding_;
    ++st.procedures[static_cast<std::size_t>(p)].started;
    return r;
  }
  void send(uint32_t r, int64_t now) noexcept {
    Outgoing& o = outgoing_[r];
    respond(o.node, o.to, std::span<const uint8_t>(o.bytes.data(), o.length), now);
    outgoing_list_.append(r, now + nodes_[o.node].config.delay_ns + common_.t3_ns);
  }
  // Record `r` is done with: answered, or timed out.
  void close(uint32_t r, bool timed_out) noexcept {
    Outgoing& o = outgoing_[r];
    Node& n = nodes_[o.node];
    n.outgoing.erase(o.seq);
    n.recent.remember(o.seq, timed_out);
    outgoing_free_.push_back(r);  // within the capacity reserved
    --outstanding_;
  }
  // The record of the own request of `node` that the answer numbered `seq`
  // answers, taken off the timer list (kNone, counted, when none:
  // `unmatched` unless it is a repeat or comes late).
  uint32_t takeAnswered(uint32_t node, uint32_t seq, Mismatch unmatched) noexcept {
    Node& n = nodes_[node];
    uint32_t r = kNone;
    if (n.outgoing.find(seq, r)) return r;
    if (bool timed_out = false; n.recent.find(seq, timed_out))
      ++(timed_out ? stats_[node].late_responses : stats_[node].duplicate_responses);
    else
      mismatches_.count(unmatched);
    return kNone;
  }

  // Counts the mismatches `ms` found in a message of procedure `p` at `node`.
  void count(MismatchSet ms, uint32_t node, Procedure p) noexcept {
    if (ms.empty()) return;
    ++stats_[node].procedures[static_cast<std::size_t>(p)].mismatches;
    ms.countInto(mismatches_);
  }

  GatewayConfig common_;    // the derived engine's configuration, its common part
  uint32_t sequence_mask_;  // of the gateway's own sequence numbers
  Outbox& outbox_;
  std::vector<Stats>& stats_;
  MismatchCounters& mismatches_;
  MalformedCounters& malformed_;
  std::vector<Node> nodes_;
  std::vector<Session> sessions_;
  std::vector<uint32_t> free_;  // ring of free slots, oldest freed first
  std::size_t free_head_ = 0, free_count_ = 0;
  std::vector<Outgoing> outgoing_;       // empty unless the gateway sends requests of its own
  std::vector<uint32_t> outgoing_free_;  // a stack; capacity reserved: never grows
  DeadlineList<Outgoing> outgoing_list_{outgoing_};
  uint64_t outstanding_ = 0;
  std::array<uint8_t, kMaxBuiltMessage> scratch_{};  // answers not kept in a session
};

}  // namespace gtpcp::peer
