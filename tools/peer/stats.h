// Counters of the peer emulator: one table per role, plain integers written by
// the single emulator thread and read for the progress line and the summary.
// Every check the emulator makes has a Mismatch kind with a stable name (JSON
// key); nothing observed is dropped without a counter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/gtp/errors.h"
#include "tools/peer/latency.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

enum class Mismatch : uint8_t {
  // Seen by an emulated SGW in a response.
  kSgwHeaderTeid,          // header TEID is not the SGW's own for the session
  kSgwUnmatchedResponse,   // no outstanding request has this sequence number
  kSgwSequenceNumber,      // right session, but not the sequence number sent
  kSgwMessageType,         // response type does not answer the request
  kSgwPgwFteidNotProxy,    // PGW S5/S8-C F-TEID names something else than the proxy
  kSgwPgwFteidInvalid,     // PGW S5/S8-C F-TEID missing, wrong interface type, TEID 0
  kSgwUserPlaneFteid,      // S5/S8-U PGW F-TEID missing or not as the PGW sent it
  kSgwUnexpectedCause,     // a cause that this run does not expect
  kSgwBearerContext,       // bearer context missing, or EBI / bearer cause wrong
  kSgwUnexpectedMessage,   // a request the SGW does not handle
  kSgwUnsafeDestination,   // a request would go to a non-loopback address
  kSgwDeleteBearerRequest, // Delete Bearer Request without the session's default EBI as LBI
  kSgwBearerRequest,       // Create/Update/Delete Bearer Request of a dedicated bearer: LBI, EBI,
                           // TFT, QoS or APN-AMBR wrong or missing, or a bearer it has not (or has)
  kSgwRequestTeid,         // Create/Update Bearer Request whose header TEID names no attached session
  kSgwCommandSequence,     // command-triggered message whose number is no outstanding command's
  kSgwCommandOutcome,      // a command answered otherwise than the emulated PGWs answer it
  kSgwUnknownTeidAnswer,   // a request to a TEID the proxy never gave not answered with cause 64
  // Seen by an emulated PGW in a request.
  kPgwSenderFteidNotProxy,  // sender S5/S8-C F-TEID names something else than the proxy
  kPgwSenderFteidInvalid,   // sender F-TEID missing, wrong interface type, TEID 0
  kPgwImsiOutOfRange,       // IMSI missing or outside the configured range
  kPgwUserPlaneFteid,       // S5/S8-U SGW F-TEID missing or not as the SGW sent it
  kPgwUnknownTeid,          // header TEID names no live session of this PGW
  kPgwBearerContext,        // bearer context / EBI / LBI missing or wrong
  kPgwUnexpectedMessage,    // a message the PGW does not handle (commands without --commands)
  kPgwHeaderTeid,           // response header TEID is not the PGW's own for the session
  kPgwUnmatchedResponse,    // no request of this PGW outstanding with that sequence number
  kPgwMessageType,          // response type does not answer the request
  kPgwBearerResponse,       // Create/Update/Delete Bearer Response not accepted, bearer context wrong
  kPgwCommand,              // Modify Bearer Command without the command bit or for another bearer
  // GTPv1-C (--sgsn, --ggsn). Seen by an emulated SGSN.
  kSgsnHeaderTeid,          // header TEID is not the SGSN's TEID-C of the session (0 allowed on a
                            // rejected creation)
  kSgsnUnmatchedResponse,   // no outstanding request has this sequence number
  kSgsnSequenceNumber,      // right session, but not the sequence number sent
  kSgsnMessageType,         // response type does not answer the request
  kSgsnGgsnAddressNotProxy, // GGSN Address for control plane names something else than the proxy
  kSgsnControlInvalid,      // TEID Control Plane or GGSN Address for control plane missing, 0, of
                            // another family, or not the session's
  kSgsnUserPlane,           // GGSN Address for user traffic / TEID Data I not as the GGSN made them
  kSgsnUnexpectedCause,     // a cause that this run does not expect
  kSgsnQos,                 // QoS Profile of an accepted answer is not the one asked for
  kSgsnEndUserAddress,      // accepted primary creation without an IPv4 End User Address
  kSgsnUnexpectedMessage,   // a message the SGSN does not handle
  kSgsnUnsafeDestination,   // a request would go to a non-loopback address
  kSgsnNetworkRequest,      // a GGSN-initiated request naming no context of the session (NSAPI),
                            // without QoS, or with a wrong Teardown Ind
  kSgsnRequestTeid,         // a GGSN-initiated Update whose header TEID names no attached session
  kSgsnIeOrder,             // IEs not in ascending type order (TS 29.060 §7.7.0)
  // Seen by an emulated GGSN.
  kGgsnSgsnAddressNotProxy,  // SGSN Address for signalling names something else than the proxy
  kGgsnControlTeid,          // TEID Control Plane missing or 0, the SGSN's own through a proxy,
                             // changed through a relay, or present in a secondary activation
  kGgsnImsiOutOfRange,       // IMSI missing or outside the configured range
  kGgsnUserPlane,            // SGSN Address for user traffic / TEID Data I not as the SGSN made
                             // them, or naming the proxy
  kGgsnUnknownTeid,          // header TEID names no live session of this GGSN
  kGgsnContext,              // NSAPI, Linked NSAPI, Teardown Ind, End User Address, APN, QoS or
                             // TFT wrong or missing
  kGgsnUnexpectedMessage,    // a message the GGSN does not handle
  kGgsnHeaderTeid,           // answer to a GGSN request without the GGSN's TEID-C of the session
  kGgsnUnmatchedResponse,    // no request of this GGSN outstanding with that sequence number
  kGgsnMessageType,          // response type does not answer the request
  kGgsnNetworkResponse,      // answer to a GGSN-initiated request not accepted, or its TEID Data I
                             // or QoS not as asked
  kGgsnIeOrder,              // IEs not in ascending type order (TS 29.060 §7.7.0)
  kCount
};
inline constexpr std::size_t kMismatchCount = static_cast<std::size_t>(Mismatch::kCount);
std::string_view mismatchName(Mismatch m) noexcept;
// The GTP version whose emulated nodes check `m` (1 or 2): a summary lists
// the kinds of its run's version.
inline int mismatchVersion(Mismatch m) noexcept { return m >= Mismatch::kSgsnHeaderTeid ? 1 : 2; }

// Malformed datagrams, by codec error (gtp::Errc) and total.
struct MalformedCounters {
  static constexpr std::size_t kErrcCount = 32;
  std::array<uint64_t, kErrcCount> by_errc{};
  uint64_t total = 0;
  void count(gtp::Errc e) noexcept {
    ++total;
    const auto i = static_cast<std::size_t>(e);
    ++by_errc[i < kErrcCount ? i : 0];
  }
};

struct MismatchCounters {
  std::array<uint64_t, kMismatchCount> by_kind{};
  uint64_t total = 0;
  void count(Mismatch m) noexcept {
    ++total;
    ++by_kind[static_cast<std::size_t>(m)];
  }
  uint64_t operator[](Mismatch m) const noexcept { return by_kind[static_cast<std::size_t>(m)]; }
};

// The SGW side's transaction kinds: requests it sends and retransmits until
// answered. A Modify Bearer Command is answered by a triggered Update Bearer
// Request or a Modify Bearer Failure Indication (TS 29.274 §7.2.14); an
// unknown-TEID probe is a Modify Bearer Request to a TEID the proxy never gave.
enum class Txn : uint8_t { kCreate, kModify, kDelete, kModifyBearerCommand, kUnknownTeid, kCount };
inline constexpr std::size_t kTxnCount = static_cast<std::size_t>(Txn::kCount);
std::string_view txnName(Txn t) noexcept;

// The SGSN side's transaction kinds (TS 29.060 §7.3): the primary PDP
// context's creation, update and deletion, and a secondary one's creation
// and deletion (--secondary).
enum class V1Txn : uint8_t {
  kCreatePdp, kCreateSecondary, kUpdatePdp, kDeleteSecondary, kDeletePdp, kCount
};
inline constexpr std::size_t kV1TxnCount = static_cast<std::size_t>(V1Txn::kCount);
std::string_view txnName(V1Txn t) noexcept;

// The procedures beyond attach, modify and detach, each seen by both sides
// (--dedicated-bearer, --commands, --unknown-teid).
enum class Procedure : uint8_t {
  kCreateBearer,           // PGW-initiated, a dedicated bearer (EBI 6)
  kUpdateBearer,           // PGW-initiated, of the dedicated bearer
  kDeleteBearer,           // PGW-initiated, of the dedicated bearer
  kModifyBearerCommand,    // SGW-initiated (TS 29.274 §7.2.14.1)
  kTriggeredUpdateBearer,  // the PGW's answer to a command, numbered like it (§7.6)
  kFailureIndication,      // Modify Bearer Failure Indication, the other answer (§7.2.14.2)
  kUnknownTeid,            // Modify Bearer Request to a TEID the proxy never gave
  // GTPv1-C: the GGSN's own requests and those an SGSN answers (TS 29.060 §7.3).
  kNetworkUpdate,          // GGSN-initiated Update PDP Context Request (--network-initiated)
  kNetworkDelete,          // GGSN-initiated Delete PDP Context Request (--network-initiated)
  kInitiateActivation,     // Initiate PDP Context Activation Request (answered, refused)
  kPduNotification,        // PDU Notification Request (answered)
  kCount
};
inline constexpr std::size_t kProcedureCount = static_cast<std::size_t>(Procedure::kCount);
std::string_view procedureName(Procedure p) noexcept;
// The GTP version of procedure `p` (1 or 2).
inline int procedureVersion(Procedure p) noexcept { return p >= Procedure::kNetworkUpdate ? 1 : 2; }

// One procedure as one side sees it. For a procedure the side starts:
// requests sent (first copies), answers received and accepted,
// retransmissions after T3, timeouts. For one it answers: requests received
// (first copies), answered with acceptance, retransmissions answered again.
// `mismatches`: messages of the procedure that failed a check (each check
// also counts in MismatchCounters).
struct ProcedureCounters {
  uint64_t started = 0;
  uint64_t completed = 0;
  uint64_t retransmissions = 0;
  uint64_t timeouts = 0;
  uint64_t mismatches = 0;
};
using ProcedureTable = std::array<ProcedureCounters, kProcedureCount>;

// Sessions per PGW as the SGW sees them: the address in the S5/S8-U PGW
// F-TEID of each accepted Create Session Response (it names the PGW even
// behind the proxy). Fixed capacity; the rest land in `other`.
struct SplitCounters {
  static constexpr std::size_t kMax = 64;
  std::array<IpAddress, kMax> addr{};
  std::array<uint64_t, kMax> count{};
  std::size_t size = 0;
  uint64_t other = 0;
  void add(const IpAddress& a) noexcept {
    for (std::size_t i = 0; i < size; ++i)
      if (addr[i] == a) {
        ++count[i];
        return;
      }
    if (size == kMax) {
      ++other;
      return;
    }
    addr[size] = a;
    count[size++] = 1;
  }
};

// The counters every access-side role keeps (SGWs, SGSNs), over its `N`
// transaction kinds.
template <std::size_t N>
struct TransactionStats {
  std::array<uint64_t, N> attempted{};
  std::array<uint64_t, N> completed{};
  std::array<uint64_t, N> retransmissions{};
  std::array<uint64_t, N> timeouts{};
  // Measured transactions completed inside the measured window.
  uint64_t completed_in_window = 0;
  uint64_t measured_attempted = 0;
  uint64_t duplicate_responses = 0;  // a second answer to a request already answered
  uint64_t late_responses = 0;       // an answer after the request timed out
  uint64_t sessions_created = 0;
  uint64_t sessions_rejected = 0;
  uint64_t sessions_deleted = 0;
  uint64_t echo_requests_answered = 0;
  uint64_t starved = 0;  // tokens with no subscriber free to use them
  uint64_t internal_errors = 0;  // a message that could not be built
  std::array<uint64_t, 256> causes{};  // Cause of every response received
  uint64_t transactions_cancelled = 0;       // in flight when their session was deleted
  uint64_t answers_evicted = 0;              // an answer forgotten within the duplicate window
  // Procedures the network side starts, and the rows of the role's own ones.
  ProcedureTable procedures{};
  SplitCounters split;
  std::array<LatencyHistogram, N> latency{};
};

struct SgwStats : TransactionStats<kTxnCount> {
  // Requests from the network side (a proxy or PGW deleting sessions, e.g.
  // after a PGW restart). Retransmissions are counted only as duplicates.
  uint64_t delete_bearer_requests = 0;       // Delete Bearer Requests, first copies
  uint64_t sessions_deleted_by_network = 0;  // accepted: the subscriber is detached
  uint64_t delete_bearer_unknown = 0;        // TEID names no attached session: cause 64
  uint64_t delete_bearer_duplicates = 0;     // retransmissions answered again
  uint64_t piggybacked = 0;                  // requests that came on a response (TS 29.274 §5.5.1)
  std::array<uint64_t, 256> delete_bearer_causes{};  // Cause of each request (0: none)
  // The rows of Txn::kModifyBearerCommand and kUnknownTeid in `procedures`
  // stay empty but for their mismatches: the transaction counters hold the
  // rest.
};

struct SgsnStats : TransactionStats<kV1TxnCount> {
  // The GGSN's requests (rows network_update, network_delete,
  // initiate_activation and pdu_notification of `procedures`: first copies
  // received, accepted, repeats answered again).
  uint64_t sessions_deleted_by_network = 0;  // Delete PDP Context Requests that ended a session
  uint64_t network_unknown = 0;       // GGSN requests naming no attached session: cause 192
  uint64_t network_early = 0;         // GGSN requests that overtook the creation: not answered
  uint64_t version_not_supported = 0;  // Version Not Supported messages received
  uint64_t error_indications = 0;      // Error Indications received
  uint64_t secondaries_created = 0;    // secondary PDP contexts accepted
  uint64_t secondaries_deleted = 0;    // deleted by the SGSN, or with their session by the GGSN
};

// The counters of one emulated gateway (PGW, GGSN): requests by the `N`
// transaction kinds of the access side.
template <std::size_t N>
struct GatewayNodeStats {
  std::array<uint64_t, N> requests{};
  uint64_t echo_requests = 0;
  uint64_t sessions_created = 0;
  uint64_t sessions_rejected = 0;  // --pgw-cause / --ggsn-cause, or no room
  uint64_t sessions_deleted = 0;
  uint64_t sessions_replaced = 0;  // a new creation for an IMSI with a session
  uint64_t duplicates = 0;         // retransmitted requests answered from the cache
  uint64_t dropped = 0;            // --pgw-drop / --ggsn-drop
  uint64_t delayed = 0;            // --pgw-delay-ms / --ggsn-delay-ms
  uint64_t delay_queue_full = 0;   // sent at once: the delay queue was full
  uint64_t context_not_found = 0;  // answered with cause 64 (v2) / 192 (v1)
  uint64_t no_resources = 0;       // rejected with cause 73 (v2) / 199 (v1): session table full
  uint64_t dup_window_evictions = 0;  // a deleted session's slot reused within 60 s
  uint64_t internal_errors = 0;  // a response that could not be built
  uint64_t sessions_up = 0;
  // The gateway's own requests (--dedicated-bearer and the answers to
  // commands; --network-initiated).
  ProcedureTable procedures{};
  uint64_t duplicate_responses = 0;  // a second answer to a request already answered
  uint64_t late_responses = 0;       // an answer after the request timed out
  uint64_t requests_refused = 0;     // not started: every outstanding-request record in use
};

struct PgwNodeStats : GatewayNodeStats<kTxnCount> {
  uint64_t piggybacked = 0;  // Create Bearer Requests sent on a Create Session Response
};

struct GgsnNodeStats : GatewayNodeStats<kV1TxnCount> {
  uint64_t secondaries_created = 0;  // secondary PDP contexts accepted
  uint64_t contexts_up = 0;          // PDP contexts up, secondaries included
  uint64_t version_not_supported = 0;
  uint64_t error_indications = 0;
};

}  // namespace gtpcp::peer
