// The procedures of a worker: GTPv2-C on S5/S8 (session creation and
// deletion, and relaying every other message of a known session with TEIDs,
// sequence numbers and control-plane F-TEIDs translated; DESIGN.md,
// "Translation rules") and GTPv1-C on Gn/Gp (PDP contexts, proxy_v1.cc).
//
// handle() takes one datagram from the forwarder, patches it in place and
// hands the result to the Egress; it never blocks, throws or allocates.
// Single-threaded: the worker's main loop is the only caller.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/config/gateway_picker.h"
#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/rewrite.h"
#include "common/net/address.h"
#include "common/group/gateway_table_shm.h"
#include "arrival.h"
#include "connection_set.h"
#include "persist.h"
#include "egress.h"
#include "session_table.h"
#include "transaction_table.h"
#include "worker_layout.h"

namespace gtpcp::worker {

class Restorer;

struct ProxySettings {
  uint32_t workers = 1;
  uint32_t index = 0;
  group::SocketPlan sockets;
  uint64_t transaction_timeout_ns = 9'000'000'000;  // T3 x (N3 + 1)
  // The proxy's own requests (Delete Bearer after a PGW restart, Delete
  // Session of an orphan) are sent again every T3, N3 times.
  uint64_t t3_ns = 3'000'000'000;
  uint32_t n3 = 2;
  // The group's Recovery when no forwarder segment tells it (tests).
  uint8_t recovery = 1;
};

class Proxy {
 public:
  Proxy(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
        TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress);

  // One datagram from the forwarder. `bytes` is writable scratch the proxy may
  // patch (it is the ring slot, owned by the worker until released).
  void handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;

  // Expires transactions older than the timeout. Call it every loop turn: the
  // work it does is proportional to the time since the last call.
  void tick(uint64_t now_ns) noexcept;

  // Replaces the routing document (between datagrams).
  void setRouting(const config::RoutingTable& routing);

  // Where the forwarder publishes the group's Recovery and its health
  // checks' gateway states and restarts; without it every gateway counts as
  // up and the settings' Recovery is the group's.
  void setGatewayStatus(const forwarder::GatewayTableShm* table);

  // Where changes of sessions go for Redis; none: not persisted.
  void setPersist(PersistSink* sink) noexcept;
  // Who asks the storage for sessions this worker does not hold; none: a
  // message for an unknown TEID is answered Context Not Found at once.
  void setRestorer(Restorer* restorer) noexcept { restorer_ = restorer; }

  struct Context;  // the datagram being handled
  struct V1Context;  // a GTPv1-C datagram being handled

 private:
  // -- GTPv1-C on Gn/Gp (proxy_v1.cc). A session is a primary PDP context
  // with its secondaries: one TEID-C pair, NSAPIs in SessionShm::ebis.
  void handleV1(const Arrival& arrival, std::span<uint8_t> bytes) noexcept;
  void handleV1Request(V1Context& c) noexcept;
  void handleV1Response(V1Context& c) noexcept;
  void createPdpContext(V1Context& c) noexcept;
  void relayV1Request(V1Context& c, SessionShm& session, Leg from) noexcept;
  // A GGSN's PDU Notification Request (TEID 0, the subscriber by IMSI): to
  // the SGSN of the subscriber's contexts, under a session of its own.
  void relayPduNotification(V1Context& c) noexcept;
  // A new GTPv1 session in `partition`, or nullptr (the request refused).
  SessionShm* allocateV1Session(V1Context& c, uint16_t partition) noexcept;
  // A notification's session (no NSAPI) is over.
  void endNotification(SessionShm& session) noexcept;
  void finishCreatePdpContext(V1Context& c, TransactionShm& t, SessionShm& session) noexcept;
  void relayV1Response(V1Context& c, TransactionShm& t, SessionShm& session) noexcept;
  void retransmittedV1(V1Context& c, TransactionShm& t) noexcept;
  // persist() of a GTPv1 session with the attributes `m` carries (those of
  // PDP context `nsapi`).
  void persistV1(const SessionShm& session, const gtp::v1::Message& m, Leg from, uint8_t nsapi) noexcept;
  // The TEID Control Plane and the control-plane GSN Addresses a peer on
  // `from` put in the message, recorded as the session's and replaced by the
  // proxy's on the other leg (in `out_family` when the proxy has none in the
  // address's own). A cause when a GSN Address is malformed, else 0.
  uint8_t translateV1Control(V1Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept;
  // A rule's overrides on a Create PDP Context Request (APN, Charging
  // Characteristics, Selection Mode, QoS cap).
  void applyV1Overrides(V1Context& c, const config::Overrides& overrides) noexcept;
  void restoreV1Apn(V1Context& c, const SessionShm& session) noexcept;
  TransactionShm* openV1Transaction(const V1Context& c, uint64_t response_key, const SessionShm& session,
                                    Leg toward, uint8_t destination_socket, const net::Address& destination) noexcept;
  void rejectV1(V1Context& c, uint8_t cause) noexcept;
  void answerV1(uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid, uint16_t sequence,
                uint8_t cause, TransactionShm* transaction = nullptr) noexcept;
  // The proxy's next number toward `toward`: 16 bits, seq % W == index.
  uint16_t allocateV1Sequence(Leg toward) noexcept;
  // The message to send: patched in place, or written anew when an edit
  // changed a length; Recovery IEs set to the group's value.
  std::span<const uint8_t> outgoingV1(V1Context& c) noexcept;
  void noteV1Recovery(uint16_t gateway, const gtp::v1::Message& m, uint64_t before_wall_ns) noexcept;
  // A GGSN restarted: the SGSN is told to delete the contexts (Teardown).
  void sendDeletePdpContext(SessionShm& session) noexcept;
  // An accepted Create PDP Context Response for a creation sent elsewhere.
  void deleteV1Orphan(V1Context& c) noexcept;
  // failOver() of a v1 creation: the kept request, renumbered (and its
  // control GSN Address in the new gateway's family), to the next gateway.
  std::span<uint8_t> v1ControlAddressIn(std::span<uint8_t> request, uint8_t family) noexcept;

  void handleRequest(Context& c) noexcept;
  void handleResponse(Context& c) noexcept;
  void createSession(Context& c) noexcept;
  void relayRequest(Context& c, SessionShm& session, Leg from) noexcept;
  // A PGW Downlink Triggering Notification: to the SGW of the IMSI's session.
  void relayDownlinkTriggering(Context& c) noexcept;
  // A message of a session that has no reply (Trace Session Activation...).
  void relayOneWay(Context& c) noexcept;

  // -- PDN connection sets (proxy_connection_set.cc)
  // A Delete PDN Connection Set Request; every worker gets a copy, one answers.
  void deletePdnConnectionSet(Context& c) noexcept;
  // Walks the sessions for the deletions under way, a bounded number of
  // slots per turn.
  void deleteConnectionSets() noexcept;
  struct SetDeletion;
  // Sends the request of `d` to `peer`, on the leg `toward`, unless it had it.
  void relaySetDeletion(SetDeletion& d, Leg toward, uint8_t socket, const net::Address& peer) noexcept;
  void finishCreateSession(Context& c, TransactionShm& t, SessionShm& session) noexcept;
  void relayResponse(Context& c, TransactionShm& t, SessionShm& session) noexcept;
  // Keeps SessionShm::ebis in step with an accepted answer to a request
  // that creates or deletes bearers.
  void trackBearers(uint8_t request_type, SessionShm& session, const gtp::v2::Message& response) noexcept;
  // A request seen before: sent on again while pending, answered from the
  // cache once answered.
  void retransmitted(Context& c, TransactionShm& t) noexcept;
  // The pending command of `session` the proxy sent with `sequence`, or nullptr.
  TransactionShm* triggeringCommand(uint32_t sequence, const SessionShm& session) noexcept;
  TransactionShm* openTransaction(const Context& c, const gtp::v2::Message& request, uint64_t response_key,
                                  const SessionShm& session, Leg toward, uint8_t destination_socket,
                                  const net::Address& destination) noexcept;
  // Sends the answer of `t` to its requester and keeps it for retransmissions.
  void reply(TransactionShm& t, std::span<const uint8_t> bytes) noexcept;

  // Rewrites the top-level control-plane F-TEIDs a peer on `from` put in the
  // message (its own GTP-C endpoint) to the proxy's endpoint on the other
  // leg, and records the peer's in the session.
  bool translateControlFTeids(Context& c, SessionShm& session, Leg from, uint8_t out_family) noexcept;
  // The Rewriter of the datagram's first message, made on first use.
  gtp::v2::Rewriter& rewriter() noexcept;
  // The datagram to send: as patched in place, or rewritten when an edit
  // changed a length; with the piggybacked message or without.
  std::span<const uint8_t> outgoing(Context& c, bool with_piggybacked) noexcept;
  uint8_t socketFamily(uint8_t socket) const noexcept;
  // Every top-level Recovery IE of `m` (at `bytes`) set to the group's value.
  void announceRecovery(const gtp::v2::Message& m, std::span<uint8_t> bytes) noexcept;
  // The group's Recovery: the forwarder's (what it answers Echo with), else the settings'.
  uint8_t groupRecovery() const noexcept;
  // A rule's overrides on a Create Session Request; a cause when it must be
  // refused (a PDN type the rule does not allow), else 0.
  uint8_t applyOverrides(Context& c, const config::Overrides& overrides) noexcept;
  uint8_t restrictPdnType(Context& c, const config::Overrides& overrides) noexcept;
  // A message from the PGW naming the APN a rule rewrote: the SGW gets its own back.
  void restoreApn(Context& c, const SessionShm& session) noexcept;
  // Translates the request piggybacked on the response being relayed, as a
  // request of its own from the same peer. False when it cannot be relayed
  // (then the response goes alone, without it: the peer will retransmit it).
  bool translatePiggybacked(Context& c, SessionShm& session, Leg from) noexcept;
  // Answers a request with `cause` (and the offending IE when given).
  void reject(Context& c, uint8_t cause, uint8_t offending_type = 0, uint8_t offending_instance = 0) noexcept;
  // Sends a response of `response_type` carrying only a Cause.
  void answer(uint8_t socket, const net::Address& to, uint8_t response_type, uint32_t teid,
              uint32_t sequence, uint8_t cause, uint8_t offending_type = 0,
              uint8_t offending_instance = 0, TransactionShm* transaction = nullptr) noexcept;
  uint32_t allocateSequence(bool command) noexcept;
  // The session's state as of now (and the attributes `m`, from `from`,
  // carries) to the persist ring.
  void persist(const SessionShm& session, const gtp::v2::Message* m, Leg from) noexcept;
  // The session is over: its record goes, its slot is freed.
  void endSession(SessionShm& session) noexcept;

  // -- gateways: health, failover, restarts
  bool gatewayUp(uint16_t gateway) const noexcept;
  // Gateway `gateway` of the routing document as an address, and the
  // socket toward it (group::kNoSocket when none of its family).
  net::Address gatewayAddress(uint16_t gateway) const noexcept;
  // Matches the routing document's gateways with the forwarder's entries.
  void mapGatewayStatus();
  // Looks at the forwarder's restart counts (every few milliseconds).
  void watchGateways(uint64_t now_ns, uint64_t wall_ns) noexcept;
  // A Recovery IE in a message from `gateway`: a changed value is a restart.
  void noteRecovery(uint16_t gateway, const gtp::v2::Message& m, uint64_t before_wall_ns) noexcept;
  void gatewayRestarted(uint16_t gateway, uint64_t before_wall_ns) noexcept;
  // Removes the sessions of restarted gateways and tells their SGWs, at
  // most health_check.restart_notify_rate per second.
  void cleanUpRestarts(uint64_t now_ns) noexcept;
  void sendDeleteBearer(SessionShm& session) noexcept;
  // A transaction for a request the proxy sends on its own behalf.
  // Sends `bytes`, the proxy's own request numbered `sequence`, and holds it
  // for its answer, sending it again every T3 until answered, N3 times.
  void sendOwnRequest(uint32_t sequence, gtp::v2::MessageType type, Leg toward, uint8_t socket,
                      const net::Address& to, uint32_t session_teid, std::span<const uint8_t> bytes) noexcept {
    sendOwnRequest(proxyNumbered(sequence), sequence, static_cast<uint8_t>(type), 0, toward, socket, to, session_teid,
                   bytes);
  }
  // The same for any version: the request's response key, number, type and
  // TransactionShm::flags (kGtpv1 for a GTPv1 request).
  void sendOwnRequest(uint64_t response_key, uint32_t sequence, uint8_t message_type, uint8_t flags, Leg toward,
                      uint8_t socket, const net::Address& to, uint32_t session_teid,
                      std::span<const uint8_t> bytes) noexcept;
  void retransmitOwnRequests(uint64_t now_ns) noexcept;
  // An accepted Create Session Response matching no transaction: when its
  // session went elsewhere, the gateway is asked to delete what it made.
  void deleteOrphan(Context& c) noexcept;
  // Sends the creation of `t` to the next gateway of the session's pool.
  // False when none is left: the SGW was answered and the session removed.
  bool failOver(TransactionShm& t, SessionShm& session) noexcept;
  // `request` (a kept Create Session Request) with the proxy's sender F-TEID
  // in `family`: a view of rewritten_, or `request` itself when it cannot be.
  std::span<uint8_t> senderFTeidIn(std::span<uint8_t> request, uint8_t family) noexcept;
  void startCreationTimer(const TransactionShm& t, uint64_t now_ns) noexcept;
  void expireCreations(uint64_t now_ns) noexcept;
  bool send(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept;
  net::Address proxyAddress(Leg leg, uint8_t family) const noexcept;

  ProxySettings settings_;
  WorkerShmHeader& header_;
  WorkerCounters& counters_;
  SessionTable& sessions_;
  TransactionTable& transactions_;
  const config::RoutingTable* routing_;
  config::GatewayPicker picker_;
  Egress& egress_;
  gtp::v2::Datagram datagram_;
  uint64_t last_tick_ns_ = 0;
  uint64_t sweep_credit_ = 0;  // table slots the sweep owes
  uint64_t now_ns_ = 0;        // the latest CLOCK_MONOTONIC reading seen
  uint64_t now_wall_ns_ = 0;   // CLOCK_REALTIME of the datagram or turn being handled
  std::optional<ChangeWriter> changes_;
  Restorer* restorer_ = nullptr;

  struct GatewayWatch {
    const forwarder::GatewayStatusShm* status = nullptr;  // none: unchecked, counts as up
    uint32_t restarts = 0;                                // the forwarder's count last seen
    uint32_t recovery = forwarder::kRecoveryUnknown;      // the gateway's Recovery as this worker knows it
  };
  const forwarder::GatewayTableShm* status_shm_ = nullptr;
  uint32_t status_published_ = 0;
  uint32_t status_version_ = 0;  // GatewayTableShm::version when mapped
  std::vector<GatewayWatch> watch_;  // by gateway index of the routing document
  uint64_t next_watch_ns_ = 0;

  struct Restart {
    uint16_t gateway;
    uint64_t before_wall_ns;  // sessions created before this are gone
  };
  std::vector<Restart> restarts_;  // capacity reserved: a restart never allocates
  SessionTable::Cursor restart_cursor_;
  double notify_credit_ = 0;
  uint64_t last_notify_ns_ = 0;

  struct CreationTimer {
    uint32_t record;
    uint64_t response_key;  // the record still waits for this answer
    uint64_t deadline_ns;
  };
  std::vector<CreationTimer> timers_;  // a ring; deadlines come in order
  uint32_t timer_head_ = 0;
  uint32_t timer_count_ = 0;
  struct OwnRetry {
    uint32_t record;
    uint64_t response_key;
    uint64_t deadline_ns;
    uint32_t sent;  // times sent so far
  };
  std::vector<OwnRetry> retries_;  // a ring; deadlines come in order (all T3 apart)
  uint32_t retry_head_ = 0;
  uint32_t retry_count_ = 0;
  // A Delete PDN Connection Set Request being carried out.
  struct SetDeletion {
    static constexpr std::size_t kMaxRequest = 1024;
    static constexpr std::size_t kMaxPeers = 64;
    bool active = false;
    CsidSet csids;
    net::Address requester;  // only the sessions it is a peer of go
    SessionTable::Cursor cursor;
    uint16_t request_length = 0;
    std::array<uint8_t, kMaxRequest> request{};  // as received, sent on with the proxy's numbers
    uint8_t peer_count = 0;
    std::array<net::Address, kMaxPeers> peers{};  // on the other leg, already sent the request
  };
  std::vector<SetDeletion> set_deletions_;  // a fixed number, made once
  std::vector<uint8_t> resend_;  // a kept request, copied to be patched and sent elsewhere
  std::optional<gtp::v2::Rewriter> rewriter_;  // of the datagram being handled, when it needs one
  std::vector<uint8_t> rewritten_;             // what the Rewriter wrote

  // GTPv1: the message being handled and the edits that change a length
  // (an IE replaced, removed or added), applied by outgoingV1().
  gtp::v1::Message v1_message_;
  struct V1Edit {
    enum class Kind : uint8_t { kReplace, kRemove, kInsert };
    Kind kind = Kind::kReplace;
    uint8_t type = 0;      // kInsert: the IE type added (before the first IE of a higher type)
    uint16_t ie = 0;       // kReplace, kRemove: the IE's index in the message
    uint16_t length = 0;
    std::array<uint8_t, 104> value{};
  };
  static constexpr std::size_t kMaxV1Edits = 8;
  std::array<V1Edit, kMaxV1Edits> v1_edits_{};
  std::size_t v1_edit_count_ = 0;
  bool addV1Edit(const V1Edit& edit) noexcept;
  // PDU Notification sessions open (an estimate after a restart: 0), so
  // that creations look for one only when there may be one.
  uint32_t notifications_open_ = 0;
};

}  // namespace gtpcp::worker
