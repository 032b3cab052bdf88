// The worker's counter table (see common/metrics/counter.h): one writer, the
// worker; read by `gtpcp status` and the metrics exporter.
#pragma once

#include "common/metrics/counter.h"

namespace gtpcp::worker {

#define GTPCP_WORKER_COUNTERS(X)                                                                     \
  X(datagrams_received, "worker.datagrams_received", "datagrams taken from the worker's rings")     \
  X(datagrams_sent, "worker.datagrams_sent", "datagrams handed to the forwarder for sending")        \
  X(egress_full, "worker.egress_full_dropped", "datagrams dropped because the egress ring was full") \
  X(decode_errors, "worker.decode_errors", "datagrams that did not decode as GTP-C")                \
  X(rejections_sent, "worker.rejections_sent", "requests the proxy answered itself with an error cause") \
  X(context_not_found, "worker.context_not_found", "requests for a TEID the worker does not hold")   \
  X(sessions_created, "worker.sessions_created", "sessions accepted by a gateway")                   \
  X(sessions_rejected, "worker.sessions_rejected", "session creations a gateway rejected")           \
  X(sessions_deleted, "worker.sessions_deleted", "sessions removed by an accepted Delete Session")   \
  X(sessions_expired, "worker.sessions_expired", "creations abandoned because the gateway never answered") \
  X(sessions_active, "worker.sessions_active", "sessions held now (gauge)")                          \
  X(session_table_full, "worker.session_table_full", "creations refused because the partition was full") \
  X(no_route, "worker.no_route", "creations no routing rule matched")                                \
  X(no_gateway, "worker.no_gateway", "creations whose pool had no gateway up")                       \
  X(transactions_started, "worker.transactions_started", "requests forwarded awaiting a response")   \
  X(transactions_completed, "worker.transactions_completed", "responses matched and relayed")       \
  X(transactions_expired, "worker.transactions_expired", "forwarded requests never answered")        \
  X(transactions_evicted, "worker.transactions_evicted", "pending transactions dropped for lack of room") \
  X(responses_unmatched, "worker.responses_unmatched", "responses to no pending request (late or duplicate)") \
  X(messages_dropped, "worker.messages_dropped", "messages dropped without an answer (not GTPv2-C, unexpected)")

struct WorkerCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_WORKER_COUNTERS)
};

inline constexpr metrics::CounterInfo kWorkerCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_WORKER_COUNTERS)};
static_assert(sizeof(WorkerCounters) == sizeof(kWorkerCounterInfo) / sizeof(kWorkerCounterInfo[0]) * 8);

}  // namespace gtpcp::worker
