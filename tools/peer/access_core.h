// What the emulated SGWs (GTPv2-C) and SGSNs (GTPv1-C) share: the
// subscribers and their nodes' queues, the tokens that start their steps,
// the requests in flight with their retransmission after T3 (N3 times, the
// same bytes and sequence number) and timeout, and the counters of it all.
// The engines (sgw.h, sgsn.h) add their protocol: which request a step
// sends, what the answers and the network's own requests do.
//
// AccessCore is a CRTP base (its derived engines see Sub, Node and State);
// `Derived` provides
//   bool send(uint32_t index) noexcept: (re)builds and sends the request of
//     subscriber `index`'s transaction in flight; false when it could not be
//     built (counted);
//   void startTxn(uint32_t index, TxnT txn, int64_t now) noexcept: starts
//     `txn` for `index` (with start());
//   std::optional<TxnT> lifecycleStep(uint32_t index) noexcept: what an idle
//     or established subscriber does next in lifecycle; nullopt: it waits
//     for the network (out of the queue until endWait());
//   kAttachTxn, kModifyTxn, kDetachTxn: what a subscriber does in the phases
//     of those names;
//   static bool attachedDuring(TxnT): whether a transaction of that kind
//     belongs to an attached session (its failure ends the session).
// `SubT` derives from AccessSub<TxnT>, `NodeT` from AccessNode, `Stats` from
// TransactionStats<N>; the configuration from AccessConfig. All state is
// allocated by the constructor: nothing on the datagram path allocates,
// throws or logs. One thread only.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/peer/engine.h"
#include "tools/peer/hash_index.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
#include "tools/peer/requests.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

inline constexpr uint32_t kNilIndex = std::numeric_limits<uint32_t>::max();

// An emulated subscriber's state, whatever the version.
enum class SubState : uint8_t {
  kIdle,         // not attached
  kCreating,     // its creation in flight
  kEstablished,  // attached, in its node's queue
  kBusy,         // attached, a transaction in flight (its `txn` says which)
  kProbing,      // not attached; a probe of a TEID nobody gave in flight (v2)
  kWaiting,      // attached, out of the queue until the network does something
  kDone,         // finished its cycles
  kAbandoned,    // a transaction failed or timed out: out for good
};

template <class TxnT>
struct AccessSub {
  int64_t first_sent = 0;
  int64_t deadline = 0;
  uint32_t seq = 0;
  uint32_t prev = kNilIndex;  // outstanding list, in deadline order
  uint32_t next = kNilIndex;
  uint32_t qnext = kNilIndex;  // node queue
  uint32_t cycles_done = 0;
  uint32_t modifies_total = 0;
  uint16_t modifies_done = 0;
  SubState state = SubState::kIdle;
  TxnT txn{};
  uint8_t retries = 0;
  bool measured = false;
  // Where the requests of an attached session go: the address its creation's
  // answer named (the PGW's control F-TEID, the GGSN Address for control
  // plane: the proxy's) in the node's family, checked safe when learnt.
  IpAddress peer_addr{};
};

struct AccessNode {
  IpAddress addr{};     // the node's: its messages name it, in its family
  Endpoint proxy{};     // where its requests go (the proxy's access address)
  uint32_t socket = 0;  // Outbox socket index
  uint32_t seq_next = 0;
  uint32_t q_head = kNilIndex, q_tail = kNilIndex, q_size = 0;
  uint32_t attach_left = 0;   // kAttach: subscribers not yet attempted
  HashIndex<uint32_t> table;  // outstanding requests: sequence number -> subscriber
  RecentRequests recent;      // requests recently answered or timed out
};

// What every access-side configuration has (SgwConfig, SgsnConfig).
struct AccessConfig {
  bool relay = false;   // a bare relay instead of a proxy: every request to the node's `proxy`
  Identities ids;
  std::vector<std::string> apns{"internet"};
  uint32_t modifies = 1;     // Modify Bearer / Update PDP Context transactions per attach
  uint32_t cycles = 0;       // attach..detach cycles per subscriber; 0: unlimited
  int64_t t3_ns = 3'000'000'000;
  uint32_t n3 = 2;
  // A network request repeated within this long gets the first answer.
  int64_t duplicate_window_ns = kDuplicateWindowNs;
  bool same_sequence = false;  // every node starts at the same number, strict round robin
  uint32_t sequence_seed = 0;  // first sequence number (per node unless same_sequence)
  // Rejection causes this run expects (--pgw-cause / --ggsn-cause, --expect-cause).
  std::bitset<256> expected_rejections;
  uint8_t recovery = 1;
  bool allow_non_loopback = false;
};

// The APNs as `ApnT` (v2::Apn, v1::Apn) sees them; one empty APN for none.
template <class ApnT>
std::vector<ApnT> apnsOf(const std::vector<std::string>& texts) {
  std::vector<ApnT> apns;
  for (const auto& text : texts) {
    ApnT apn;
    for (char c : text) apn.text.push(c);
    apns.push_back(apn);
  }
  if (apns.empty()) apns.push_back(ApnT{});
  return apns;
}

template <class Derived, class SubT, class NodeT, class TxnT, class Stats>
class AccessCore : public AccessEngine {
 public:
  void setPhase(AccessPhase phase, bool measured) noexcept override {
    phase_ = phase;
    measured_ = measured;
    if (phase == AccessPhase::kAttach)
      for (Node& n : nodes_) n.attach_left = n.q_size;
  }
  void setWindowEnd(int64_t t) noexcept override { window_end_ = t; }

  uint64_t issue(uint64_t tokens, int64_t now) noexcept override {
    if (nodes_.empty() || phase_ == AccessPhase::kIdle) return 0;
    uint64_t used = 0;
    for (uint64_t t = 0; t < tokens; ++t) {
      // Round robin over the nodes; with --same-sequence strictly so (each
      // node's n-th request carries the same number), else a node with no
      // subscriber free passes its turn to the next.
      const std::size_t tries = settings_.same_sequence ? 1 : nodes_.size();
      bool started = false;
      for (std::size_t k = 0; k < tries && !started; ++k) {
        Node& n = nodes_[rr_];
        rr_ = (rr_ + 1) % nodes_.size();
        started = startNext(n, now);
      }
      if (started) {
        ++used;
      } else {
        // Leftover tokens once the phase has nothing more to start are not
        // starvation: the runner is about to move on.
        if (phaseExhausted()) break;
        ++stats_.starved;
      }
    }
    return used;
  }

  void onTimers(int64_t now) noexcept override {
    outstanding_list_.retransmitDue(
        now, settings_.t3_ns, settings_.n3,
        [&](uint32_t index) {
          ++stats_.retransmissions[at(subs_[index].txn)];
          return derived().send(index);
        },
        [&](uint32_t index, bool timed_out) {
          if (timed_out) ++stats_.timeouts[at(subs_[index].txn)];
          abandon(index);
        });
  }
  int64_t nextTimer() const noexcept override { return outstanding_list_.nextDeadline(); }

  uint64_t outstanding() const noexcept override { return outstanding_; }
  uint64_t sessionsUp() const noexcept override { return sessions_up_; }
  uint64_t waitingForNetwork() const noexcept override { return waiting_; }

  bool phaseExhausted() const noexcept override {
    switch (phase_) {
      case AccessPhase::kIdle: return true;
      case AccessPhase::kModify: return false;
      case AccessPhase::kLifecycle: return settings_.cycles != 0 && finished_ == subs_.size();
      case AccessPhase::kAttach:
        for (const Node& n : nodes_)
          if (n.attach_left != 0 && n.q_size != 0) return false;
        return true;
      case AccessPhase::kDetach:
        for (const Node& n : nodes_)
          if (n.q_size != 0) return false;
        return true;
    }
    return true;
  }

  // The control TEID of subscriber `index` on its node, and back.
  uint32_t controlTeid(uint32_t index) const noexcept { return teids_.teid(index); }
  bool indexOfTeid(uint32_t teid, uint32_t& index) const noexcept {
    return teids_.indexOf(teid, index);
  }

 protected:
  using Sub = SubT;
  using Node = NodeT;
  using State = SubState;

  // Requests recently answered or timed out that each node remembers.
  static constexpr std::size_t kRecent = 4096;

  // Sizes everything for the subscribers of `config` over `nodes` (each with
  // an address, a proxy and a socket), and queues every subscriber. Sequence
  // numbers run over `sequence_mask`: 23 bits (v2), 16 bits (v1).
  template <class NodeConfig>
  AccessCore(const AccessConfig& config, const std::vector<NodeConfig>& nodes,
             uint32_t sequence_mask, Outbox& outbox, Stats& stats, MismatchCounters& mismatches,
             MalformedCounters& malformed)
      : settings_{config.cycles, config.t3_ns, config.n3, config.same_sequence, sequence_mask,
                  config.relay},
        outbox_(outbox),
        stats_(stats),
        mismatches_(mismatches),
        malformed_(malformed) {
    const uint32_t count = config.ids.count;
    subs_.resize(count);
    teids_ = ControlTeids(count);
    nodes_.resize(nodes.size());
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      Node& n = nodes_[k];
      n.addr = nodes[k].addr;
      n.proxy = nodes[k].proxy;
      n.socket = nodes[k].socket;
      n.table.init(count / nodes_.size() + 1);
      n.recent.init(kRecent);
      // Per-node counters start at different values unless --same-sequence.
      const uint32_t offset = settings_.same_sequence ? 0 : static_cast<uint32_t>(k) * 0x2a3b1u;
      n.seq_next = (config.sequence_seed + offset) & sequence_mask;
    }
    for (uint32_t i = 0; i < count; ++i) push(nodes_[nodeOf(i)], i);
  }

  static constexpr std::size_t at(TxnT t) noexcept { return static_cast<std::size_t>(t); }
  static constexpr std::size_t at(Procedure p) noexcept { return static_cast<std::size_t>(p); }
  Derived& derived() noexcept { return static_cast<Derived&>(*this); }

  uint32_t nodeOf(uint32_t index) const noexcept {
    return static_cast<uint32_t>(index % nodes_.size());
  }

  void push(Node& n, uint32_t index) noexcept {
    subs_[index].qnext = kNilIndex;
    if (n.q_tail == kNilIndex)
      n.q_head = index;
    else
      subs_[n.q_tail].qnext = index;
    n.q_tail = index;
    ++n.q_size;
  }
  uint32_t pop(Node& n) noexcept {
    const uint32_t index = n.q_head;
    if (index == kNilIndex) return kNilIndex;
    n.q_head = subs_[index].qnext;
    if (n.q_head == kNilIndex) n.q_tail = kNilIndex;
    --n.q_size;
    return index;
  }

  bool startNext(Node& n, int64_t now) noexcept {
    for (;;) {
      if (phase_ == AccessPhase::kAttach && n.attach_left == 0) return false;
      const uint32_t index = pop(n);
      if (index == kNilIndex) return false;
      const Sub& s = subs_[index];
      if (phase_ == AccessPhase::kAttach) {
        --n.attach_left;
        if (s.state != SubState::kIdle) {
          push(n, index);  // already attached: keep it for the next phase
          continue;
        }
      } else if (phase_ == AccessPhase::kModify || phase_ == AccessPhase::kDetach) {
        if (s.state != SubState::kEstablished) continue;  // rejected at attach: parked
      }
      if (startStep(index, now)) return true;
    }
  }

  // Starts the step of the current phase for `index`, popped from its node's
  // queue; false when it starts nothing (the subscriber stays out of it).
  bool startStep(uint32_t index, int64_t now) noexcept {
    std::optional<TxnT> txn;
    switch (phase_) {
      case AccessPhase::kIdle: return false;
      case AccessPhase::kAttach: txn = Derived::kAttachTxn; break;
      case AccessPhase::kModify: txn = Derived::kModifyTxn; break;
      case AccessPhase::kDetach: txn = Derived::kDetachTxn; break;
      case AccessPhase::kLifecycle: {
        const State st = subs_[index].state;
        if (st != State::kIdle && st != State::kEstablished) return false;
        txn = derived().lifecycleStep(index);
        if (!txn) {
          wait(index);  // the network's request puts it back
          return false;
        }
        break;
      }
    }
    derived().startTxn(index, *txn, now);
    return true;
  }

  // The next free sequence number of node `n`: one still outstanding (the
  // 16-bit numbers of GTPv1 wrap under load) is passed over.
  uint32_t takeSequence(Node& n) noexcept {
    uint32_t seq = n.seq_next;
    for (uint32_t tries = 0; tries <= settings_.sequence_mask; ++tries) {
      seq = n.seq_next;
      n.seq_next = (n.seq_next + 1) & settings_.sequence_mask;
      if (uint32_t other = 0; !n.table.find(seq, other)) break;
    }
    return seq;
  }

  // Starts transaction `txn` of subscriber `index`, now in `state`, its
  // number with `sequence_flags` (v2's command bit) set; sends it.
  void start(uint32_t index, TxnT txn, SubState state, int64_t now,
             uint32_t sequence_flags = 0) noexcept {
    Sub& s = subs_[index];
    Node& n = nodes_[nodeOf(index)];
    s.txn = txn;
    s.state = state;
    s.seq = takeSequence(n) | sequence_flags;
    s.retries = 0;
    s.first_sent = now;
    s.measured = measured_;
    ++stats_.attempted[at(txn)];
    if (measured_) ++stats_.measured_attempted;
    n.table.insert(s.seq, index);  // cannot fail: twice as many slots as subscribers
    ++outstanding_;
    if (!derived().send(index)) {
      abandon(index);
      return;
    }
    outstanding_list_.append(index, now + settings_.t3_ns);
  }

  // The transaction of `index` was answered at `now`.
  void finish(uint32_t index, int64_t now) noexcept {
    Sub& s = subs_[index];
    Node& n = nodes_[nodeOf(index)];
    outstanding_list_.remove(index);
    n.table.erase(s.seq);
    n.recent.remember(s.seq, false);
    --outstanding_;
    const auto t = at(s.txn);
    ++stats_.completed[t];
    if (s.measured) {
      stats_.latency[t].record(static_cast<uint64_t>(now - s.first_sent));
      if (now <= window_end_) ++stats_.completed_in_window;
    }
  }

  // Drops the outstanding request of `index` (already off the timer list):
  // an answer that still comes counts as late.
  void forget(uint32_t index) noexcept {
    Sub& s = subs_[index];
    Node& n = nodes_[nodeOf(index)];
    n.table.erase(s.seq);
    n.recent.remember(s.seq, true);
    --outstanding_;
  }

  // The transaction of `index` failed for good: the subscriber is out.
  void abandon(uint32_t index) noexcept {
    Sub& s = subs_[index];
    forget(index);
    if (Derived::attachedDuring(s.txn) && sessions_up_ > 0) --sessions_up_;
    s.state = SubState::kAbandoned;
    ++finished_;
  }

  // The answer to `index`'s transaction is malformed (`code`): counted, and
  // the subscriber is out.
  void malformedAnswer(uint32_t index, gtp::Errc code, int64_t now) noexcept {
    malformed_.count(code);
    finish(index, now);
    if (Derived::attachedDuring(subs_[index].txn) && sessions_up_ > 0) --sessions_up_;
    drop(index);
  }

  // Gives up on `index` after an answer it cannot go on from.
  void drop(uint32_t index) noexcept {
    subs_[index].state = SubState::kAbandoned;
    ++finished_;
  }

  // Puts `index` back in its node's queue, or out when its cycles are done.
  void afterCompletion(uint32_t index) noexcept {
    Sub& s = subs_[index];
    Node& n = nodes_[nodeOf(index)];
    if (s.state == SubState::kEstablished) {
      push(n, index);
    } else if (s.state == SubState::kIdle) {
      if (settings_.cycles != 0 && s.cycles_done >= settings_.cycles) {
        s.state = SubState::kDone;
        ++finished_;
      } else if (phase_ == AccessPhase::kLifecycle || phase_ == AccessPhase::kIdle) {
        push(n, index);
      }
      // Modify-only: a subscriber rejected at attach or detached stays out.
    }
  }

  // Where the request in flight of `index` goes: --proxy, or for an attached
  // session the address its creation's answer named (through a bare relay,
  // --proxy always).
  Endpoint destination(uint32_t index) const noexcept {
    const Sub& s = subs_[index];
    Endpoint to = nodes_[nodeOf(index)].proxy;
    if (Derived::attachedDuring(s.txn) && !settings_.relay) to.addr = s.peer_addr;
    return to;
  }

  // Sends from node `n` to `to` the message `build(buffer)` writes (a
  // gtp::Result with its length); false, counted, when it could not be built.
  template <class Build>
  bool sendBuilt(const Node& n, const Endpoint& to, Build&& build) noexcept {
    auto buf = outbox_.reserve(n.socket);
    auto r = build(buf);
    if (!r) {
      ++stats_.internal_errors;
      return false;
    }
    outbox_.commit(n.socket, to, *r);
    return true;
  }
  // Answers an Echo Request from `from` with the Echo Response `build` writes.
  template <class Build>
  void answerEcho(const Node& n, const Endpoint& from, Build&& build) noexcept {
    if (sendBuilt(n, from, std::forward<Build>(build))) ++stats_.echo_requests_answered;
  }

  // `index` goes out of the queue until the network does something.
  void wait(uint32_t index) noexcept {
    subs_[index].state = SubState::kWaiting;
    ++waiting_;
  }
  // The network did it: `index` is established and queued again.
  void endWait(uint32_t index) noexcept {
    --waiting_;
    subs_[index].state = SubState::kEstablished;
    push(nodes_[nodeOf(index)], index);
  }

  // The network deleted attached subscriber `index`'s session: a
  // transaction of it in flight is cancelled (no retransmission, no timeout;
  // its answer, if it still comes, counts as late). Lifecycle attaches it
  // again (a cycle has ended), modify-only and hold leave it alone.
  void detachByNetwork(uint32_t index) noexcept {
    Sub& s = subs_[index];
    // An established subscriber waits in its node's queue; a waiting one
    // nowhere; one with a transaction in flight has it cancelled.
    const bool queued = s.state == SubState::kEstablished;
    if (s.state == SubState::kWaiting) {
      --waiting_;
    } else if (!queued) {
      outstanding_list_.remove(index);
      forget(index);
      ++stats_.transactions_cancelled;
    }
    if (sessions_up_ > 0) --sessions_up_;
    s.state = SubState::kIdle;
    ++s.cycles_done;
    if (!queued) {
      afterCompletion(index);
    } else if (settings_.cycles != 0 && s.cycles_done >= settings_.cycles) {
      s.state = SubState::kDone;  // startNext() drops it from the queue
      ++finished_;
    }
  }

  // The answer to `index`'s transaction matched: the subscriber for the
  // sequence number of the message just received on `n`, or false (counted:
  // a duplicate or late answer, or `unmatched` / `wrong_sequence` when the
  // header TEID names a subscriber of `n` with a request in flight).
  bool matchResponse(uint32_t node, uint32_t sequence, bool teid_present, uint32_t teid,
                     Mismatch unmatched, Mismatch wrong_sequence, uint32_t& index) noexcept {
    Node& n = nodes_[node];
    if (n.table.find(sequence, index)) return true;
    if (bool timed_out = false; n.recent.find(sequence, timed_out)) {
      ++(timed_out ? stats_.late_responses : stats_.duplicate_responses);
      return false;
    }
    uint32_t owner = 0;
    const bool in_flight = teid_present && indexOfTeid(teid, owner) && nodeOf(owner) == node &&
                           (subs_[owner].state == SubState::kCreating ||
                            subs_[owner].state == SubState::kBusy);
    mismatches_.count(in_flight ? wrong_sequence : unmatched);
    return false;
  }

  // How the core runs the load.
  struct Settings {
    uint32_t cycles;
    int64_t t3_ns;
    uint32_t n3;
    bool same_sequence;
    uint32_t sequence_mask;
    bool relay;
  };

  Settings settings_;
  Outbox& outbox_;
  Stats& stats_;
  MismatchCounters& mismatches_;
  MalformedCounters& malformed_;
  std::vector<Sub> subs_;
  std::vector<Node> nodes_;
  ControlTeids teids_;
  DeadlineList<Sub> outstanding_list_{subs_};  // requests awaiting their answer
  uint64_t outstanding_ = 0;
  uint64_t sessions_up_ = 0;
  uint64_t finished_ = 0;  // subscribers done or abandoned
  uint64_t waiting_ = 0;   // subscribers kWaiting
  std::size_t rr_ = 0;
  AccessPhase phase_ = AccessPhase::kIdle;
  bool measured_ = false;
  int64_t window_end_ = std::numeric_limits<int64_t>::max();
};

}  // namespace gtpcp::peer
