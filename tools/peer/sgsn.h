// The emulated SGSNs (GTPv1-C over Gn/Gp, TS 29.060): subscribers activating
// a primary PDP context, optionally secondary ones, updating and deleting
// them through the proxy, with the retransmission behaviour of a real SGSN
// (TS 29.060 §7.6: same bytes and sequence number after T3, N3 times) and the
// checks of DESIGN.md's translation rules an SGSN can see.
//
// Subscriber i (IMSI --imsi-start + i, on SGSN i mod #SGSNs) in lifecycle:
//   Create PDP Context Request (header TEID 0, NSAPI 5, to the proxy), then
//   --secondary N secondary activations (header TEID the GGSN's TEID-C as
//   seen, NSAPI 6.., Linked NSAPI 5, a TFT, no TEID-C), --modify M Update PDP
//   Context Requests of the primary, the secondaries' deletions (Teardown Ind
//   0, highest NSAPI first) and the primary's (Teardown Ind 1). Later
//   requests go to the GGSN Address for control plane the SGSN received (the
//   proxy's), at the port of --proxy.
// The network's requests (networkPlan(), --network-initiated): a GGSN-
// initiated Update PDP Context Request of an attached session is accepted
// (cause 128, TEID Data I, the QoS asked); a GGSN-initiated Delete PDP
// Context Request deletes the session (NSAPI 5, Teardown Ind 1) or one
// secondary context (its NSAPI). A subscriber whose session the GGSN updates
// waits, before deleting anything, until that update came; one the GGSN also
// deletes waits for the deletion once its updates are done. An Initiate PDP
// Context Activation Request is refused (cause 197, MS refuses: the emulated
// MSs never activate what the network asks); a PDU Notification Request for
// a subscriber of the range is accepted (cause 128; nothing follows), one for
// another IMSI gets 194. Requests naming no attached session get 192
// (Non-existent) with header TEID 0. A repeated request gets the same answer
// again and is counted once.
//
// SgsnEngine is pure logic driven by the runner (AccessCore holds the load
// machinery): nothing on the datagram path allocates, throws or logs. One
// thread only.
#pragma once

#include <bitset>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tools/peer/access_core.h"
#include "tools/peer/answer_cache.h"
#include "tools/peer/outbox.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"
#include "tools/peer/v1_messages.h"

namespace gtpcp::peer {

struct SgsnNodeConfig {
  IpAddress addr{};     // the node's address: its GSN Addresses name it, in its family
  uint32_t socket = 0;  // Outbox socket index of the node's socket
  // The proxy's access address (in the node's family) and port: the node's
  // requests go there.
  Endpoint proxy{};
};

struct SgsnConfig : AccessConfig {
  std::vector<SgsnNodeConfig> nodes;
  bool user_plane_proxied = false;  // the proxy rewrites user-plane addresses and TEIDs
  uint32_t secondaries = 0;         // secondary PDP contexts per activation (at most 10)
  double network_initiated = 0;     // networkPlan()'s fraction
  std::vector<IpAddress> local_ggsns;  // GGSNs of this process, if any
};

struct SgsnSub : AccessSub<V1Txn> {
  uint32_t ggsn_teid_c = 0;  // header TEID of later requests: the GGSN's TEID-C as seen
  uint16_t contexts = 0;     // NSAPIs up (bit n: NSAPI n)
  uint8_t secondaries_created = 0;  // secondary activations answered this session
  bool network_updated = false;     // a GGSN-initiated update came this session
  bool recovery = false;            // the creation in flight carries Recovery
  NetworkPlan plan = NetworkPlan::kNone;
};

struct SgsnNode : AccessNode {
  bool recovery_sent = false;  // Recovery goes on the node's first request
};

// What an SGSN needs to answer a GGSN's request again.
struct V1Answer {
  uint32_t header_teid = 0;
  uint32_t index = 0;  // the subscriber (TEID Data I derives from it)
  gtp::v1::MessageType type = gtp::v1::MessageType::kDeletePdpContextResponse;
  uint8_t cause = kV1CauseNonExistent;
  uint8_t nsapi = kPrimaryNsapi;
  V1Qos qos = V1Qos::kNetwork;
};

class SgsnEngine final : public AccessCore<SgsnEngine, SgsnSub, SgsnNode, V1Txn, SgsnStats> {
 public:
  SgsnEngine(SgsnConfig config, Outbox& outbox, SgsnStats& stats, MismatchCounters& mismatches,
             MalformedCounters& malformed);

  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept override;

 private:
  friend class AccessCore<SgsnEngine, SgsnSub, SgsnNode, V1Txn, SgsnStats>;
  using Answer = V1Answer;

  static constexpr V1Txn kAttachTxn = V1Txn::kCreatePdp;
  static constexpr V1Txn kModifyTxn = V1Txn::kUpdatePdp;
  // Detaching deletes the whole session: Teardown Ind 1 takes its secondary
  // contexts along (TS 29.060 §7.3.5).
  static constexpr V1Txn kDetachTxn = V1Txn::kDeletePdp;
  static bool attachedDuring(V1Txn t) noexcept { return t != V1Txn::kCreatePdp; }
  // Lifecycle: create when idle; once attached, the secondaries, the
  // updates, the secondaries' deletions, the primary's (nullopt: waits for
  // the GGSN's update or deletion first).
  std::optional<V1Txn> lifecycleStep(uint32_t index) const noexcept;
  void startTxn(uint32_t index, V1Txn txn, int64_t now) noexcept;
  bool send(uint32_t index) noexcept;
  // The NSAPI the transaction in flight of `s` names.
  uint8_t nsapiOf(const Sub& s) const noexcept;
  uint32_t userTeid(uint32_t index, uint8_t nsapi) const noexcept;

  void onResponse(uint32_t node, V1Txn txn, int64_t now) noexcept;
  // What an accepted answer does to `s`.
  void accepted(uint32_t index, const PdpView& v) noexcept;
  bool learnGgsnAddress(const Node& n, const PdpView& v, IpAddress& out) noexcept;
  SgsnCheckContext checkContext(const Node& n, uint32_t index, uint8_t nsapi) const noexcept;

  // A request of the GGSN's received on `node` from `from`: answered, again
  // from the cache when repeated.
  void onNetworkRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  void networkUpdate(uint32_t node, const PdpView& v, Answer& a) noexcept;
  void networkDelete(uint32_t node, const PdpView& v, Answer& a) noexcept;
  void initiateActivation(uint32_t node, Answer& a) noexcept;
  void pduNotification(const PdpView& v, Answer& a) noexcept;
  // Subscriber `index` has TEID-C `teid` on `node` and is attached.
  bool attachedOn(uint32_t node, uint32_t teid, uint32_t& index) const noexcept;
  void sendAnswer(Node& n, const Endpoint& to, uint32_t seq, const Answer& a) noexcept;
  // Counts the mismatches `ms` found in a message of procedure `p`.
  void count(MismatchSet ms, Procedure p) noexcept;

  SgsnConfig config_;
  std::vector<gtp::v1::Apn> apns_;
  AnswerCacheOf<V1Answer> answers_;  // to the network's requests, all nodes together
  gtp::v1::Message message_;
};

}  // namespace gtpcp::peer
