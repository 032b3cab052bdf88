// The emulated SGWs: subscribers attaching, modifying their bearer and
// detaching through the proxy, with the retransmission behaviour of a real
// SGW (TS 29.274 §7.6: same bytes and sequence number after T3, N3 times) and
// every check of DESIGN.md's translation rules that an SGW can see.
//
// The network side may delete a session (TS 29.274 §7.2.9.2: a proxy or PGW
// sends a Delete Bearer Request with the session's LBI, e.g. after a PGW
// restart): the SGW answers, detaches the subscriber and cancels whatever
// transaction it had in flight for it. A retransmitted request gets the same
// answer again (AnswerCache).
//
// Beyond attach, modify and detach, on request:
//   * --dedicated-bearer: the PGW creates, updates and deletes a dedicated
//     bearer (EBI 6) on each session; the SGW answers, and a subscriber
//     detaches only once its dedicated bearer is gone (kWaiting until then).
//   * --commands: after its modifications each subscriber sends two Modify
//     Bearer Commands (TS 29.274 §7.2.14.1): the emulated PGWs answer the
//     first with an Update Bearer Request numbered like the command (§7.6),
//     the second with a Modify Bearer Failure Indication, cause 72.
//   * --unknown-teid N: before attaching, subscribers send N Modify Bearer
//     Requests in all to TEIDs drawn at random (never 0 or 0xffffffff), which
//     the proxy never gave: each must be answered with cause 64, TEID 0.
//
// SgwEngine is pure logic driven by the runner's event loop: tokens from the
// pacer start transactions (issue()), datagrams arrive (onDatagram()), and
// timers fire (onTimers()); it sends through an Outbox. All state is
// allocated in the constructor: the per-datagram path does not allocate,
// throw or log. One thread only.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "tools/peer/answer_cache.h"
#include "tools/peer/hash_index.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
#include "tools/peer/requests.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

struct SgwNodeConfig {
  IpAddress addr{};     // the node's address: its F-TEIDs name it, in its family
  uint32_t socket = 0;  // Outbox socket index of the node's socket
  // The proxy's access address (in the node's family) and port: the node's
  // requests go there.
  Endpoint proxy{};
  // The instance the proxy group fails over to, in the node's family
  // (--failover-to): the checks take F-TEIDs naming it as the proxy's.
  std::optional<IpAddress> failover;
};

struct SgwConfig {
  std::vector<SgwNodeConfig> nodes;
  bool relay = false;   // a bare relay instead of a proxy: every request to the node's `proxy`
  Identities ids;
  std::vector<std::string> apns{"internet"};
  uint32_t modifies = 1;     // Modify Bearer transactions per attach
  uint32_t cycles = 0;       // attach..detach cycles per subscriber; 0: unlimited
  int64_t t3_ns = 3'000'000'000;
  uint32_t n3 = 2;
  // A Delete Bearer Request repeated within this long gets the first answer.
  int64_t duplicate_window_ns = kDuplicateWindowNs;
  bool same_sequence = false;
  uint32_t sequence_seed = 0;  // first sequence number (per node unless same_sequence)
  std::bitset<256> expected_rejections;
  std::vector<IpAddress> local_pgws;      // PGWs of this process, if any
  std::vector<uint8_t> local_pgw_causes;  // their --pgw-cause (0: none)
  uint8_t recovery = 1;
  bool allow_non_loopback = false;
  bool dedicated_bearer = false;  // the PGWs create, update and delete a dedicated bearer
  bool commands = false;          // two Modify Bearer Commands per attach
  uint32_t unknown_teid = 0;      // probes of TEIDs the proxy never gave
  uint64_t probe_seed = 1;        // of the probes' TEIDs
};

// What a token does.
enum class SgwPhase : uint8_t {
  kIdle,       // nothing: tokens are not taken
  kLifecycle,  // each subscriber's next step: attach, modify x N, detach, again
  kAttach,     // attach every subscriber once
  kModify,     // Modify Bearer on attached subscribers
  kDetach,     // detach every attached subscriber
};

class SgwEngine {
 public:
  SgwEngine(SgwConfig config, Outbox& outbox, SgwStats& stats, MismatchCounters& mismatches,
            MalformedCounters& malformed);

  // Tokens now start `phase` steps; `measured` marks the transactions they
  // start for latency and throughput.
  void setPhase(SgwPhase phase, bool measured) noexcept;
  // Completions after `t` no longer count toward the measured throughput.
  void setWindowEnd(int64_t t) noexcept { window_end_ = t; }

  // Starts up to `tokens` transactions; returns how many started. A token
  // that finds no subscriber free is counted in SgwStats::starved.
  uint64_t issue(uint64_t tokens, int64_t now) noexcept;
  // A datagram received on node `node`'s socket from `from`.
  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept;
  // Retransmissions and timeouts due at `now`.
  void onTimers(int64_t now) noexcept;
  // When onTimers() next has work (max int64 when none).
  int64_t nextTimer() const noexcept;

  uint64_t outstanding() const noexcept { return outstanding_; }
  uint64_t sessionsUp() const noexcept { return sessions_up_; }
  // Subscribers that would detach but wait for the network to delete their
  // dedicated bearer.
  uint64_t waitingForNetwork() const noexcept { return waiting_; }
  // The phase has nothing more to start (attach: all attempted; detach: all
  // attempted; lifecycle: every subscriber finished its cycles).
  bool phaseExhausted() const noexcept;

  // The control TEID node-side for subscriber `index`, and back.
  uint32_t sgwTeid(uint32_t index) const noexcept;
  bool indexOfTeid(uint32_t teid, uint32_t& index) const noexcept;

 private:
  static constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();

  enum class State : uint8_t {
    kIdle, kCreating, kEstablished, kModifying, kDeleting, kDone, kAbandoned,
    kCommanding,  // a Modify Bearer Command awaits its triggered request or failure indication
    kProbing,     // not attached; an unknown-TEID probe awaits its answer
    kWaiting,     // attached, done, out of the queue until its dedicated bearer is deleted
  };
  // The session's dedicated bearer as the network made it so far.
  enum class Dedicated : uint8_t { kNone, kUp, kUpdated, kGone };

  struct Sub {
    int64_t first_sent = 0;
    int64_t deadline = 0;
    uint32_t pgw_teid = 0;  // header TEID of later requests (of the probe, while kProbing)
    uint32_t seq = 0;
    uint32_t prev = kNil;   // outstanding list, in deadline order
    uint32_t next = kNil;
    uint32_t qnext = kNil;  // node queue
    uint32_t cycles_done = 0;
    uint32_t modifies_total = 0;
    uint16_t modifies_done = 0;
    uint8_t commands_done = 0;
    Dedicated dedicated = Dedicated::kNone;
    State state = State::kIdle;
    Txn txn = Txn::kCreate;
    uint8_t retries = 0;
    bool measured = false;
    // Where later requests go: the control F-TEID's address in the node's
    // family (the proxy's), checked safe when it was learnt.
    IpAddress pgw_addr{};
  };

  // Requests recently answered or timed out, per node.
  static constexpr std::size_t kRecent = 4096;

  struct Node {
    IpAddress addr{};
    Endpoint proxy{};
    std::optional<IpAddress> failover;
    uint32_t socket = 0;
    uint32_t seq_next = 0;
    uint32_t q_head = kNil, q_tail = kNil, q_size = 0;
    uint32_t attach_left = 0;  // kAttach: subscribers not yet attempted
    HashIndex<uint32_t> table;  // outstanding requests: sequence number -> subscriber
    RecentRequests recent;
  };

  uint32_t nodeOf(uint32_t index) const noexcept {
    return static_cast<uint32_t>(index % nodes_.size());
  }
  void push(Node& n, uint32_t index) noexcept;
  uint32_t pop(Node& n) noexcept;
  bool startNext(Node& n, int64_t now) noexcept;
  // Lifecycle: what established subscriber `s` does next (modify, command,
  // detach).
  Txn nextStep(const Sub& s) const noexcept;
  void start(uint32_t index, Txn txn, int64_t now) noexcept;
  uint32_t nextProbeTeid() noexcept;
  bool send(uint32_t index) noexcept;
  void finish(uint32_t index, int64_t now) noexcept;
  // Drops the outstanding request of `index` (already off the timer list):
  // an answer that still comes counts as late.
  void forget(uint32_t index) noexcept;
  void abandon(uint32_t index) noexcept;
  void afterCompletion(uint32_t index) noexcept;
  // Where subscriber requests go after an accepted creation whose PGW control
  // F-TEID is `f`: its address in node `n`'s family. False when there is
  // none, or it is not loopback and the run does not allow that.
  bool learnPgwAddress(const Node& n, const gtp::v2::FTeid& f, IpAddress& out) noexcept;
  void answerEcho(Node& n, const Endpoint& from, uint32_t seq) noexcept;
  // Subscriber `index` has control TEID `teid` on node `node` and is attached.
  bool attachedOn(uint32_t node, uint32_t teid, uint32_t& index) const noexcept;
  // Handles `message_`, received on node `node` from `from`.
  void onMessage(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` is a Create, Update or Delete Bearer Request that node `node`
  // received from `from`: answered, and again from the cache when repeated.
  void onNetworkRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // What the answer to `message_` says, the request read as `v`; each fills
  // `a` (Context Not Found, TEID 0, when it names nothing of this SGW).
  void deletePdnConnection(uint32_t node, const BearerRequestView& v,
                           AnswerCache::Answer& a) noexcept;
  void deleteDedicatedBearer(uint32_t node, const BearerRequestView& v,
                             AnswerCache::Answer& a) noexcept;
  void createOrUpdateDedicatedBearer(uint32_t node, const BearerRequestView& v,
                                     AnswerCache::Answer& a) noexcept;
  void triggeredUpdateBearer(uint32_t node, const BearerRequestView& v, AnswerCache::Answer& a,
                             int64_t now) noexcept;
  // The attached session on `node` that the header TEID of `message_` names;
  // counts procedure `p` started, and a mismatch of it when there is none.
  bool sessionOfRequest(uint32_t node, Procedure p, uint32_t& index) noexcept;
  // The answers to an unknown-TEID probe and to a command (its failure
  // indication); `index`'s transaction is the one answered.
  void onProbeAnswer(uint32_t index, const ResponseView& v, int64_t now) noexcept;
  void onFailureIndication(uint32_t index, const ResponseView& v, int64_t now) noexcept;
  // The command of `index` was answered: on to its next step.
  void commandDone(uint32_t index) noexcept;
  // Counts the mismatches `ms` found in a message of procedure `p`.
  void count(MismatchSet ms, Procedure p) noexcept;
  SgwCheckContext checkContext(const Node& n, uint32_t index) const noexcept;
  // Detaches attached subscriber `index`, cancelling its transaction in flight.
  void deleteByNetwork(uint32_t index) noexcept;
  void sendAnswer(Node& n, const Endpoint& to, uint32_t seq, const AnswerCache::Answer& a) noexcept;

  SgwConfig config_;
  Outbox& outbox_;
  SgwStats& stats_;
  MismatchCounters& mismatches_;
  MalformedCounters& malformed_;
  std::vector<gtp::v2::Apn> apns_;
  std::vector<Sub> subs_;
  std::vector<Node> nodes_;
  AnswerCache answers_;  // to the network's requests, all nodes together
  uint32_t teid_multiplier_ = 0x9e3779b1u;
  uint32_t teid_inverse_ = 0;
  DeadlineList<Sub> outstanding_list_{subs_};  // requests awaiting their answer
  uint64_t outstanding_ = 0;
  uint64_t sessions_up_ = 0;
  uint64_t finished_ = 0;  // subscribers done or abandoned
  uint64_t waiting_ = 0;   // subscribers kWaiting
  uint64_t probes_left_ = 0;
  uint64_t probe_rng_ = 1;
  std::size_t rr_ = 0;
  SgwPhase phase_ = SgwPhase::kIdle;
  bool measured_ = false;
  int64_t window_end_ = std::numeric_limits<int64_t>::max();
  gtp::v2::Message message_;
};

}  // namespace gtpcp::peer
