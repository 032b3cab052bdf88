// What a worker measures for the metrics exporter (gtpcp-console) beyond its
// flat counter table (worker_counters.h): messages by GTP version, leg and
// message type, causes, and per gateway and per rule of the routing document
// in force in the worker. It lives in the worker's segment header
// (worker_shm.h), after the counters.
//
// Writer: the worker (gtpcp-worker --index I), every field, with relaxed
// stores (common/metrics/counter.h, histogram.h). Readers: the exporter and
// tests, relaxed.
//
// Entries of `gateways` and `rules` are indexed by the routing document in
// force in the worker: entry i is its gateway (rule) i. A routing reload
// that reorders them carries each entry's figures over to its new index by
// name (figures of a gateway or rule the reload removed are dropped), then
// publishes the new document's content hash in `routing_hash` (WKM-R1); the
// exporter names entries only when that hash is the one of the document it
// loaded itself, and leaves them out of a scrape meanwhile.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/metrics/counter.h"
#include "common/metrics/histogram.h"

namespace gtpcp::worker {

// Which side a message was received on or sent to.
enum class MetricLeg : uint8_t {
  kAccess = 0,   // SGW / SGSN (S5/S8 SGW side, Gn/Gp SGSN side)
  kGateway = 1,  // PGW / GGSN
};
inline constexpr unsigned kMetricLegs = 2;
// Index of a GTP version in the tables below: 0 GTPv1-C, 1 GTPv2-C.
inline constexpr unsigned kMetricVersions = 2;
inline constexpr unsigned metricVersion(uint8_t gtp_version) noexcept { return gtp_version == 1 ? 0 : 1; }

// Gateways and rules measured; a document's gateways and rules past these
// share the last entry (the exporter labels it "other").
inline constexpr unsigned kMetricGateways = 1024;  // forwarder::kMaxHealthChecked
inline constexpr unsigned kMetricRules = 256;

// A rejection cause as a slot of a gateway's small cause table: GTPv2
// rejection causes 64..126 (TS 29.274 Table 8.4-1) and GTPv1 ones 192..254
// (TS 29.060 §7.7.1) have slots 0..62; any other cause is slot 63, "other".
inline constexpr unsigned kRejectionSlots = 64;
inline constexpr unsigned rejectionSlot(uint8_t gtp_version, uint8_t cause) noexcept {
  const unsigned first = gtp_version == 1 ? 192 : 64;
  return cause >= first && cause < first + kRejectionSlots - 1 ? cause - first : kRejectionSlots - 1;
}
inline constexpr int rejectionCauseOfSlot(uint8_t gtp_version, unsigned slot) noexcept {
  return slot == kRejectionSlots - 1 ? -1 : int((gtp_version == 1 ? 192 : 64) + slot);
}

// Whether a cause value accepts (TS 29.274 §8.4: 16..63; TS 29.060 §7.7.1:
// 128..191).
inline constexpr bool causeAccepts(uint8_t gtp_version, uint8_t cause) noexcept {
  return gtp_version == 1 ? cause >= 128 && cause < 192 : cause >= 16 && cause < 64;
}

// One gateway of the routing document in force.
struct GatewayMetricsShm {
  // Gauge: sessions held by this worker whose gateway it is (live ones:
  // created or being created, not those only in Redis).
  metrics::Counter sessions_active;
  // Create Session / Create PDP Context Requests sent to it (failovers to it
  // included), answered with acceptance, answered with a rejection cause,
  // and not answered within failover.response_timeout_ms or T3 x N3.
  metrics::Counter creations_sent;
  metrics::Counter creations_accepted;
  metrics::Counter creations_rejected;
  metrics::Counter creations_timed_out;
  // Every request forwarded to it (creations included), and the time from
  // forwarding a request (its first send) to the proxy's receipt of the
  // answer, per answer.
  metrics::Counter requests_sent;
  metrics::Histogram response_time;
  // Rejection causes of its answers to creations, by cause slot
  // (rejectionSlot below).
  metrics::Counter creation_rejections[kRejectionSlots];
};

struct WorkerMetricsShm {
  // Messages the worker took from its rings and sent toward the forwarder,
  // by version, leg and message type (the first octet after the flags).
  // Received: every datagram that decoded as a GTP-C header; sent: every
  // datagram handed to the egress ring, the proxy's own included.
  metrics::Counter received[kMetricVersions][kMetricLegs][256];
  metrics::Counter sent[kMetricVersions][kMetricLegs][256];
  // Causes of the answers to session creations from gateways (TS 29.274
  // §8.4, TS 29.060 §7.7.1), acceptances included, by version.
  metrics::Counter creation_causes[kMetricVersions][256];
  // Causes the proxy answered requests with itself (no route, no gateway,
  // context not found, table full...), by version.
  metrics::Counter refusal_causes[kMetricVersions][256];
  // Answers relayed from gateways to the access side, by version and the
  // answer's message type, index 0 accepting causes (causeAccepts), 1 the
  // others; an answer without a Cause IE counts as accepting.
  metrics::Counter answers[kMetricVersions][256][2];
  // Requests forwarded to a gateway and never answered (transactions that
  // expired pending), by version and request type.
  metrics::Counter requests_timed_out[kMetricVersions][256];
  // Retransmitted requests (same peer, same sequence number, TS 29.274
  // §7.6, TS 29.060 §7.2) by version and request type: index 0 sent on
  // again while pending, 1 answered from the answer cache.
  metrics::Counter retransmissions[kMetricVersions][256][2];
  // Gauge: sessions held now, by version (their sum is
  // worker.sessions_active).
  metrics::Counter sessions_by_version[kMetricVersions];
  // Sessions created (accepted by a gateway) per rule that chose their pool.
  metrics::Counter rule_sessions[kMetricRules];
  // WKM-R1. Writer: the worker, a release after carrying the entries over
  // to a newly loaded routing document (and at start, after zeroing or
  // adopting them); pairs with WKM-A1 in the exporter, which reads it before
  // and after reading the entries and drops them when it changed.
  alignas(64) std::atomic<uint64_t> routing_hash{0};
  alignas(64) GatewayMetricsShm gateways[kMetricGateways];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace gtpcp::worker
