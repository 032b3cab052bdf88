// The worker's hand on its metrics table (common/group/worker_metrics.h, in
// the segment header): the increments the procedures make, inline, and what
// a routing document's arrival does to the entries kept per gateway and per
// rule (carried over by name, then published with WKM-R1).
//
// Single writer: the worker's main loop (the engine holds the one
// WorkerMetrics; the session table publishes its gauges itself,
// session_table.h). Counts are relaxed stores (metrics::Counter); only
// routing_hash orders anything.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/config/routing.h"
#include "common/group/worker_metrics.h"
#include "worker_layout.h"

namespace gtpcp::worker {

// The entry of gateway `index` of the document in force: the last one for
// the gateways past kMetricGateways, none for kNoSelection or a table that
// is not there.
inline GatewayMetricsShm* gatewayEntry(WorkerMetricsShm* m, uint16_t index) noexcept {
  if (m == nullptr || index == kNoSelection) return nullptr;
  return &m->gateways[std::min<unsigned>(index, kMetricGateways - 1)];
}

class WorkerMetrics {
 public:
  explicit WorkerMetrics(WorkerMetricsShm& shm) noexcept : m_(shm) {}

  // -- per datagram
  // A datagram from the rings whose GTP-C header decoded, received on `leg`.
  void received(uint8_t version, Leg leg, uint8_t type) noexcept {
    m_.received[metricVersion(version)][static_cast<uint8_t>(leg)][type].add();
  }
  // A datagram handed to the egress toward `leg`: version and type are its
  // first octets'.
  void sent(Leg leg, std::span<const uint8_t> bytes) noexcept {
    if (bytes.size() < 2) return;
    const uint8_t version = bytes[0] >> 5;
    if (version == 1 || version == 2) m_.sent[metricVersion(version)][static_cast<uint8_t>(leg)][bytes[1]].add();
  }
  // The proxy answered a request with `cause` itself.
  void refused(uint8_t version, uint8_t cause) noexcept { m_.refusal_causes[metricVersion(version)][cause].add(); }
  // A gateway's answer of `type` relayed to the access side; none: no Cause
  // IE, which counts as accepting.
  void relayed(uint8_t version, uint8_t type, std::optional<uint8_t> cause) noexcept {
    m_.answers[metricVersion(version)][type][cause && !causeAccepts(version, *cause) ? 1 : 0].add();
  }
  // A retransmitted request of `type`, sent on while pending or answered
  // from the cache.
  void retransmission(uint8_t version, uint8_t type, bool replayed) noexcept {
    m_.retransmissions[metricVersion(version)][type][replayed ? 1 : 0].add();
  }
  // A request forwarded to a gateway whose transaction expired pending.
  void timedOut(uint8_t version, uint8_t type) noexcept { m_.requests_timed_out[metricVersion(version)][type].add(); }
  // A session created through rule `rule`.
  void ruleSession(uint16_t rule) noexcept {
    if (rule != kNoSelection) m_.rule_sessions[std::min<unsigned>(rule, kMetricRules - 1)].add();
  }
  GatewayMetricsShm* gateway(uint16_t index) noexcept { return gatewayEntry(&m_, index); }
  // Gateway `index` answered a creation sent to it; `cause` none: no Cause
  // IE (a rejection of cause "other").
  void creationAnswered(uint8_t version, uint16_t index, std::optional<uint8_t> cause) noexcept {
    if (cause) m_.creation_causes[metricVersion(version)][*cause].add();
    GatewayMetricsShm* g = gateway(index);
    if (g == nullptr) return;
    if (cause && causeAccepts(version, *cause)) {
      g->creations_accepted.add();
    } else {
      g->creations_rejected.add();
      g->creation_rejections[rejectionSlot(version, cause.value_or(0))].add();
    }
  }
  // Gateway `index` answered a request forwarded to it at `sent_ns`, at
  // `now_ns` (CLOCK_MONOTONIC).
  void answeredBy(uint16_t index, uint64_t sent_ns, uint64_t now_ns) noexcept {
    if (GatewayMetricsShm* g = gateway(index)) g->response_time.observe(now_ns > sent_ns ? now_ns - sent_ns : 0);
  }

  // -- the routing document (WKM-R1). Once per start or reload: these walk
  // the tables and may allocate.
  // At start, before the session table's gauges are counted: the entries
  // are zeroed unless the segment's were kept for this very document (a
  // worker that adopted its predecessor's segment).
  void open(const config::RoutingTable& routing) noexcept;
  // A reload from `before` to `after`: each gateway's and rule's entries go
  // to its index in `after` by name; those of a gateway or rule `after` does
  // not have are dropped.
  void carryOver(const config::RoutingTable& before, const config::RoutingTable& after);
  // The entries (and the session table's gauges) are `routing`'s now.
  void publish(const config::RoutingTable& routing) noexcept {
    // WKM-R1: pairs with WKM-A1 in the exporter (console/lib/collector.cc):
    // every entry written for this document is visible to a reader that
    // loads this hash.
    m_.routing_hash.store(routing.contentHash(), std::memory_order_release);
  }

 private:
  // routing_hash goes to 0 before any entry changes, so that a reader who
  // saw an entry change also sees the hash change.
  void beginChange() noexcept;

  WorkerMetricsShm& m_;
};

}  // namespace gtpcp::worker
