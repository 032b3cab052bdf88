// The emulated GGSNs (GTPv1-C over Gn/Gp, TS 29.060): answer Create, Update
// and Delete PDP Context and Echo Requests, check what the proxy made of the
// SGSN's requests, misbehave on demand (--ggsn-cause, --ggsn-delay-ms,
// --ggsn-drop), and with --network-initiated start procedures of their own.
//
// Answers (header TEID: the SGSN's TEID-C as received, kept in the session;
// sent to the request's UDP source):
//   * Create PDP Context Request, primary (header TEID 0): cause 128,
//     Reordering Required, Recovery, the GGSN's TEID Data I and TEID-C, a
//     Charging ID, an IPv4 End User Address (10.0.0.0/8), GGSN Address for
//     control plane and for user traffic (the node's), the QoS Profile asked.
//     A second primary for an IMSI with a session replaces it.
//   * Create PDP Context Request, secondary (header TEID: the session's):
//     the same for the new NSAPI, without TEID-C and End User Address.
//   * Update PDP Context Request: cause 128, TEID Data I, TEID-C, Charging
//     ID, the GGSN Addresses, the QoS Profile asked.
//   * Delete PDP Context Request: cause 128; NSAPI 5 (Teardown Ind 1) ends
//     the session, another NSAPI one secondary context.
//   * A header TEID naming no live session of this GGSN: cause 192, TEID 0.
// A retransmitted request (same source, sequence number, type and octets
// after the header, within 60 s) gets the cached answer again.
//
// With --network-initiated F, for the sessions networkPlan() picks (the SGSN
// knows them too): once the primary is created the GGSN sends an Update PDP
// Context Request (NSAPI 5, QoS V1Qos::kNetwork) to the SGSN Address for
// signalling it received (the proxy's), port 2123; for half of those, once
// that update was accepted, the SGSN's --modify updates received and its
// --secondary contexts created (a GGSN in another process needs the same
// --modify and --secondary), a Delete PDP Context Request (NSAPI 5, Teardown
// Ind 1): the session ends when it is sent. Both are sent again after T3, N3
// times; their answers are checked (rows network_update, network_delete).
//
// GgsnEngine is pure logic driven by the runner (GatewayCore holds the
// session table, delays, drops and own requests): nothing on the datagram
// path allocates, throws or logs. One thread only.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/gtp/v1/message.h"
#include "tools/peer/gateway_core.h"
#include "tools/peer/outbox.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"
#include "tools/peer/v1_messages.h"

namespace gtpcp::peer {

using GgsnNodeConfig = GatewayNodeConfig;

struct GgsnConfig : GatewayConfig {
  bool user_plane_proxied = false;  // the proxy rewrites user-plane addresses and TEIDs
  // What the SGSNs do, for the GGSN's own deletions (--network-initiated).
  uint32_t modifies = 1;
  uint32_t secondaries = 0;
  double network_initiated = 0;
  bool network_deletes = true;  // --mode lifecycle: the GGSN deletes the sessions it picked
};

struct GgsnSession : GatewaySession<128> {
  IpAddress sgsn_signalling{};  // where the GGSN's own requests go (port 2123)
  IpAddress sgsn_user{};        // the SGSN Address for user traffic of the creation
  uint32_t updates = 0;         // SGSN-initiated updates received, first copies
  uint16_t contexts = 0;        // NSAPIs up (bit n: NSAPI n)
  uint8_t secondaries = 0;      // secondary contexts created
  NetworkPlan plan = NetworkPlan::kNone;
  bool network_updated = false;  // its GGSN-initiated update was accepted
};

class GgsnEngine final : public GatewayCore<GgsnEngine, GgsnSession, GgsnNodeStats> {
  friend class GatewayCore<GgsnEngine, GgsnSession, GgsnNodeStats>;

 public:
  // `stats` has one entry per node.
  GgsnEngine(GgsnConfig config, Outbox& outbox, std::vector<GgsnNodeStats>& stats,
             MismatchCounters& mismatches, MalformedCounters& malformed);

  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept override;

 private:
  // Answers `message_` with its response type carrying `cause` only.
  void reject(uint32_t node, const Endpoint& to, uint32_t header_teid, uint8_t cause,
              int64_t now) noexcept;
  // A primary activation (header TEID 0).
  void onCreate(uint32_t node, const Endpoint& from, const PdpView& v, int64_t now) noexcept;
  // A request naming a session by its header TEID: a secondary activation,
  // an update, a deletion.
  void onSessionRequest(uint32_t node, const Endpoint& from, const PdpView& v,
                        int64_t now) noexcept;
  // The live session of `node` the header TEID names, or kNone (answered
  // with 192, counted).
  uint32_t sessionOfRequest(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` repeats the last request session `slot` answered: answered again.
  bool repeated(uint32_t slot, const Endpoint& from, int64_t now) noexcept;
  // What accepting `message_` (read as `v`) for context `nsapi` of session
  // `slot` answers, but for what only a creation or an update carries.
  PdpResponseArgs acceptance(uint32_t slot, uint8_t nsapi, const PdpView& v) const noexcept;
  // Keeps and sends the answer of `length` octets built in the session's cache.
  void answer(uint32_t slot, const Endpoint& from, std::size_t length, int64_t now) noexcept;
  GgsnCheckContext checkContext(uint32_t node, uint64_t imsi) const noexcept;
  // `message_` answers one of the GGSN's own requests.
  void onResponse(uint32_t node, int64_t now) noexcept;
  // The GGSN's own requests of session `slot`: its update, and its deletion
  // once everything it waits for happened.
  void startNetworkUpdate(uint32_t slot, int64_t now) noexcept;
  void maybeNetworkDelete(uint32_t slot, int64_t now) noexcept;
  // Session `slot` ends.
  void endSession(uint32_t slot, int64_t now) noexcept;

  GgsnConfig config_;
  ControlTeids sgsn_teids_;  // the TEID-Cs the SGSNs give
  gtp::v1::Message message_;
  uint32_t digest_ = 0;  // of `message_`'s octets after the header
};

}  // namespace gtpcp::peer
