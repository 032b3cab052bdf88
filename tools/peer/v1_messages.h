// The GTPv1-C messages the peer emulator's SGSNs and GGSNs send (Gn/Gp,
// TS 29.060 §7.2, §7.3), what they read from those they receive, and the
// checks each side makes.
//
// Builders write into a caller's buffer with the codec's v1::Builder, IEs in
// ascending type order (TS 29.060 §7.7.0), and are deterministic: the same
// arguments give the same octets, which is how a node retransmits "the same
// bytes" without keeping them. The view reads, in one pass, every IE the
// checks need; check functions compare it with what the emulator knows and
// return the Mismatch kinds found. Nothing here allocates or throws.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "tools/peer/messages.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

// The causes the emulator sends (TS 29.060 Table 38), as the octets of a
// Cause IE.
enum V1Cause : uint8_t {
  kV1CauseAccepted = static_cast<uint8_t>(gtp::v1::Cause::kRequestAccepted),
  kV1CauseNonExistent = static_cast<uint8_t>(gtp::v1::Cause::kNonExistent),
  kV1CauseImsiNotKnown = static_cast<uint8_t>(gtp::v1::Cause::kImsiImeiNotKnown),
  // An Initiate PDP Context Activation refused.
  kV1CauseMsRefuses = static_cast<uint8_t>(gtp::v1::Cause::kMsRefusesReject),
  // The session table is full.
  kV1CauseNoResources = static_cast<uint8_t>(gtp::v1::Cause::kNoResourcesAvailable),
};

// The primary PDP context's NSAPI; secondary ones take 6, 7, ... 15. RAT
// Type 1: UTRAN.
enum : uint8_t { kPrimaryNsapi = 5, kMaxSecondaries = 10, kRatUtran = 1 };

// The QoS Profiles the emulator asks for and grants (TS 29.060 §7.7.34:
// Allocation/Retention Priority, then TS 24.008 §10.5.6.5 octets 3 to 16:
// 15 octets). The GGSN grants what it is asked; the SGSN accepts what the
// GGSN asks.
enum class V1Qos : uint8_t {
  kCreate,     // interactive, 8640 kbit/s up, 16 Mbit/s down
  kUpdateOdd,  // the 1st, 3rd, ... update: 18.2 Mbit/s down
  kUpdateEven, // the 2nd, 4th, ... update: 576 kbit/s up, 8640 kbit/s down
  kSecondary,  // streaming, 64 kbit/s guaranteed both ways
  kNetwork,    // what a GGSN-initiated update asks: 12.6 Mbit/s down
};
// The QoS Profile IE's value (ARP first).
std::span<const uint8_t> v1QosValue(V1Qos q) noexcept;
// The QoS an SGSN-initiated update asks, its `count`th of the subscriber.
inline V1Qos updateQos(uint32_t count) noexcept {
  return count % 2 == 0 ? V1Qos::kUpdateOdd : V1Qos::kUpdateEven;
}

// The TEID Data I a side gives the PDP context `nsapi` of subscriber `imsi`
// on the node `addr` (PlaneSide::kSgsn, kGgsn): both sides compute it.
uint32_t v1UserPlaneTeid(PlaneSide side, uint64_t imsi, uint8_t nsapi,
                         const IpAddress& addr) noexcept;

// What the GGSN does on its own to the sessions of subscriber `imsi` with
// --network-initiated `fraction`: both sides compute it. That fraction of the
// subscribers (by a hash of the IMSI) get a GGSN-initiated Update PDP Context
// Request once each session is created; half of those (another bit of the
// hash) are also deleted by the GGSN, once the SGSN made its secondary
// contexts and updates, instead of by the SGSN.
enum class NetworkPlan : uint8_t { kNone, kUpdate, kUpdateAndDelete };
NetworkPlan networkPlan(uint64_t imsi, double fraction) noexcept;

// A GSN Address IE naming `addr` (4 or 16 octets, by its family), and back.
gtp::v1::GsnAddress gsnAddress(const IpAddress& addr) noexcept;
IpAddress fromGsnAddress(const gtp::v1::GsnAddress& a) noexcept;

// ---- SGSN side ----

// Create PDP Context Request (§7.3.1) and SGSN-initiated Update PDP Context
// Request (§7.3.3, Table 7).
struct PdpRequestArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // 0 for a primary creation; else the GGSN's TEID-C as seen
  uint32_t index = 0;        // subscriber: IMSI, MSISDN, IMEISV, RAI and ULI derive from it
  const Identities* ids = nullptr;
  const gtp::v1::Apn* apn = nullptr;  // primary creation only
  IpAddress sgsn_addr{};     // the node's: both SGSN Addresses, in its family
  uint32_t teid_c = 0;       // TEID Control Plane (0: none, as in a secondary activation)
  uint8_t nsapi = kPrimaryNsapi;
  uint8_t linked_nsapi = 0;  // a secondary activation's primary (0: a primary one)
  std::optional<uint8_t> recovery;  // on the first request to a peer
  V1Qos qos = V1Qos::kCreate;
  uint32_t variant = 0;      // varies the RAI and ULI from one update to the next
};
// A primary activation: IMSI, RAI, Recovery (when given), Selection Mode,
// TEID Data I, TEID Control Plane, NSAPI, Charging Characteristics, End User
// Address (IPv4, dynamic), APN, PCO, SGSN Address for signalling and for user
// traffic, MSISDN, QoS Profile, RAT Type (UTRAN), ULI, IMEISV. A secondary
// one (linked_nsapi != 0): IMSI, RAI, TEID Data I, NSAPI, Linked NSAPI, the
// SGSN Addresses, QoS Profile, TFT, RAT Type, ULI.
gtp::Result<std::size_t> buildCreatePdpContextRequest(const PdpRequestArgs& a,
                                                      std::span<uint8_t> out) noexcept;
// RAI, TEID Data I, TEID Control Plane, NSAPI, the SGSN Addresses, QoS
// Profile, RAT Type, ULI.
gtp::Result<std::size_t> buildUpdatePdpContextRequest(const PdpRequestArgs& a,
                                                      std::span<uint8_t> out) noexcept;
// Delete PDP Context Request (§7.3.5), from either side: Teardown Ind, NSAPI.
gtp::Result<std::size_t> buildDeletePdpContextRequest(uint32_t sequence, uint32_t header_teid,
                                                      uint8_t nsapi, bool teardown,
                                                      std::span<uint8_t> out) noexcept;
// Update PDP Context Response from the SGSN (§7.3.4, Table 10): Cause and,
// accepted, TEID Data I and the QoS Profile granted.
gtp::Result<std::size_t> buildSgsnUpdateResponse(uint32_t sequence, uint32_t header_teid,
                                                 uint8_t cause, uint32_t teid_u, V1Qos qos,
                                                 std::span<uint8_t> out) noexcept;

// ---- GGSN side ----

// GGSN-initiated Update PDP Context Request (§7.3.3, Table 8): NSAPI, QoS.
gtp::Result<std::size_t> buildNetworkUpdateRequest(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t nsapi, V1Qos qos,
                                                   std::span<uint8_t> out) noexcept;

// Create PDP Context Response (§7.3.2) and GGSN's Update PDP Context
// Response (§7.3.4, Table 9).
struct PdpResponseArgs {
  gtp::v1::MessageType type = gtp::v1::MessageType::kCreatePdpContextResponse;
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the SGSN's TEID-C as seen
  uint8_t cause = kV1CauseAccepted;
  std::optional<uint8_t> recovery;
  // The rest only when accepted.
  uint32_t teid_u = 0;       // the GGSN's TEID Data I
  uint32_t teid_c = 0;       // the GGSN's TEID-C (0: none, as for a secondary context)
  uint32_t charging_id = 0;
  uint32_t ue_ipv4 = 0;      // End User Address (0: none)
  IpAddress ggsn_addr{};     // both GGSN Addresses, in its family
  std::span<const uint8_t> qos{};  // the QoS Profile value granted
};
// Cause, then accepted: Reordering Required (creation), Recovery, TEID Data
// I, TEID Control Plane, Charging ID, End User Address, GGSN Address for
// control plane and for user traffic, QoS Profile. Rejected: Cause, Recovery.
gtp::Result<std::size_t> buildPdpContextResponse(const PdpResponseArgs& a,
                                                 std::span<uint8_t> out) noexcept;

// ---- Both ----

// A message of `type` carrying a Cause only (Delete PDP Context Response,
// rejections, Initiate PDP Context Activation and PDU Notification
// Responses).
gtp::Result<std::size_t> buildV1CauseOnly(gtp::v1::MessageType type, uint32_t sequence,
                                          uint32_t header_teid, uint8_t cause,
                                          std::span<uint8_t> out) noexcept;
// Echo Response (§7.2.2): Recovery. An Echo Request (§7.2.1) has no IE.
gtp::Result<std::size_t> buildV1EchoResponse(uint32_t sequence, uint8_t recovery,
                                             std::span<uint8_t> out) noexcept;
gtp::Result<std::size_t> buildV1EchoRequest(uint32_t sequence, std::span<uint8_t> out) noexcept;

// Every IE of a PDP context message the checks read, in one pass.
struct PdpView {
  std::optional<uint8_t> cause;
  std::optional<uint64_t> imsi;
  std::optional<uint8_t> recovery;
  std::optional<uint32_t> teid_u;     // TEID Data I
  std::optional<uint32_t> teid_c;     // TEID Control Plane
  std::optional<bool> teardown;
  std::optional<uint8_t> nsapi;         // the first NSAPI IE
  std::optional<uint8_t> linked_nsapi;  // the second one (Linked NSAPI)
  std::optional<uint32_t> charging_id;
  bool end_user_address = false;
  std::optional<uint32_t> ue_ipv4;      // the End User Address's IPv4 address
  bool apn = false;
  bool tft = false;
  // GSN Address for signalling / control plane, then for user traffic.
  std::array<std::optional<IpAddress>, 2> gsn{};
  std::span<const uint8_t> qos{};       // the QoS Profile value; empty when absent
  bool ordered = true;                  // IE types never decrease (TS 29.060 §7.7.0)
};
// Reads `m`. A known IE whose value does not decode is an error.
gtp::Result<PdpView> viewPdp(const gtp::v1::Message& m) noexcept;
// The QoS Profile `v` carries is `q`.
bool qosIs(const PdpView& v, V1Qos q) noexcept;

// What a GGSN checks a request of the SGSN against.
struct GgsnCheckContext {
  bool relay = false;               // no proxy: the SGSN's values arrive as it sent them
  bool user_plane_proxied = false;  // the proxy rewrites user-plane addresses and TEIDs
  IpAddress ggsn_addr{};            // the GGSN node's (its family is the leg's)
  IpAddress proxy_gateway{};        // the proxy's gateway-side address in that family
  std::optional<IpAddress> failover_gateway;
  const ControlTeids* sgsn_teids = nullptr;  // the TEID-Cs the SGSNs give
  uint32_t index = 0;               // the subscriber
  uint64_t imsi = 0;
};
// SGSN Address for signalling names the proxy (a relay: anything of the
// leg's family), SGSN Address for user traffic and TEID Data I of context
// `nsapi` as the SGSN made them; TEID Control Plane when `teid_c` (required:
// not 0, and through a proxy not the SGSN's own, through a relay its own),
// absent otherwise.
MismatchSet checkSgsnRequest(const PdpView& v, const GgsnCheckContext& c, uint8_t nsapi,
                             bool teid_c) noexcept;

// What an SGSN checks an answer of the GGSN against.
struct SgsnCheckContext {
  bool relay = false;
  bool user_plane_proxied = false;
  IpAddress sgsn_addr{};     // the SGSN node's (its family is the leg's)
  IpAddress proxy_access{};  // the proxy's access address in that family
  uint64_t imsi = 0;
  uint8_t nsapi = kPrimaryNsapi;
  // Rejection causes this run expects (--ggsn-cause, --expect-cause).
  const std::bitset<256>* expected_rejections = nullptr;
  // The GGSNs of this process (may be empty): a GGSN Address for user
  // traffic must name one of them.
  std::span<const IpAddress> local_ggsns{};
};
// A Create or Update PDP Context Response: Cause accepted or an expected
// rejection; accepted: GGSN Address for control plane naming the proxy
// (required with `control`), GGSN Address for user traffic and TEID Data I as
// the GGSN made them, QoS Profile `qos`, and with `eua` an IPv4 End User
// Address.
MismatchSet checkPdpResponse(const PdpView& v, const SgsnCheckContext& c, V1Qos qos, bool control,
                             bool eua) noexcept;
// A Delete PDP Context Response: Cause accepted or an expected rejection.
MismatchSet checkDeleteResponse(const PdpView& v, const SgsnCheckContext& c) noexcept;

}  // namespace gtpcp::peer
