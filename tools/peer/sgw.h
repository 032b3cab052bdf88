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
// timers fire (onTimers()); it sends through an Outbox. The load itself
// (queues, tokens, retransmissions) is AccessCore's, shared with the SGSNs.
// All state is allocated in the constructor: the per-datagram path does not
// allocate, throw or log. One thread only.
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
#include "tools/peer/access_core.h"
#include "tools/peer/answer_cache.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
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

struct SgwConfig : AccessConfig {
  std::vector<SgwNodeConfig> nodes;
  std::vector<IpAddress> local_pgws;      // PGWs of this process, if any
  std::vector<uint8_t> local_pgw_causes;  // their --pgw-cause (0: none)
  bool dedicated_bearer = false;  // the PGWs create, update and delete a dedicated bearer
  bool commands = false;          // two Modify Bearer Commands per attach
  uint32_t unknown_teid = 0;      // probes of TEIDs the proxy never gave
  uint64_t probe_seed = 1;        // of the probes' TEIDs
};

struct SgwSub : AccessSub<Txn> {
  // The session's dedicated bearer as the network made it so far.
  enum class Dedicated : uint8_t { kNone, kUp, kUpdated, kGone };
  uint32_t pgw_teid = 0;  // header TEID of later requests (of the probe, while kProbing)
  uint8_t commands_done = 0;
  Dedicated dedicated = Dedicated::kNone;
};

struct SgwNode : AccessNode {
  std::optional<IpAddress> failover;
};

class SgwEngine final : public AccessCore<SgwEngine, SgwSub, SgwNode, Txn, SgwStats> {
 public:
  SgwEngine(SgwConfig config, Outbox& outbox, SgwStats& stats, MismatchCounters& mismatches,
            MalformedCounters& malformed);

  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept override;

  // The control TEID node-side for subscriber `index` (and back: indexOfTeid()).
  uint32_t sgwTeid(uint32_t index) const noexcept { return controlTeid(index); }

 private:
  friend class AccessCore<SgwEngine, SgwSub, SgwNode, Txn, SgwStats>;
  using Dedicated = SgwSub::Dedicated;

  static constexpr Txn kAttachTxn = Txn::kCreate;
  static constexpr Txn kModifyTxn = Txn::kModify;
  static constexpr Txn kDetachTxn = Txn::kDelete;
  // Transactions of an attached subscriber: one that fails ends its session.
  static bool attachedDuring(Txn t) noexcept { return t != Txn::kCreate && t != Txn::kUnknownTeid; }
  // Lifecycle: a probe or attach when idle; once attached, modify, command,
  // detach (nullopt: waits for the dedicated bearer's deletion first).
  std::optional<Txn> lifecycleStep(uint32_t index) noexcept;
  void startTxn(uint32_t index, Txn txn, int64_t now) noexcept;
  uint32_t nextProbeTeid() noexcept;
  bool send(uint32_t index) noexcept;
  // Where subscriber requests go after an accepted creation whose PGW control
  // F-TEID is `f`: its address in node `n`'s family. False when there is
  // none, or it is not loopback and the run does not allow that.
  bool learnPgwAddress(const Node& n, const gtp::v2::FTeid& f, IpAddress& out) noexcept;
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
  std::vector<gtp::v2::Apn> apns_;
  AnswerCache answers_;  // to the network's requests, all nodes together
  uint64_t probes_left_ = 0;
  uint64_t probe_rng_ = 1;
  gtp::v2::Message message_;
};

}  // namespace gtpcp::peer
