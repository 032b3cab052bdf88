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
  X(transactions_full, "worker.transactions_full", "requests refused because the transaction table was full") \
  X(transactions_live, "worker.transactions_live", "transactions held now, pending or answered (gauge)") \
  X(transactions_pending, "worker.transactions_pending", "requests forwarded and not yet answered, now (gauge; a stop waits for 0)") \
  X(routing_reloads, "worker.routing_reloads", "routing documents loaded at run time (gtpcp reload)") \
  X(routing_reload_failures, "worker.routing_reload_failures", "routing documents that did not load at run time (the previous one stays)") \
  X(requests_retransmitted, "worker.requests_retransmitted", "retransmitted requests sent on again while pending") \
  X(answers_replayed, "worker.answers_replayed", "retransmitted requests answered from the answer cache") \
  X(answers_lost, "worker.answers_lost", "retransmitted requests whose cached answer was overwritten (cache too small)") \
  X(sequence_reused, "worker.sequence_reused", "new requests with the sequence number of a live transaction of the same peer") \
  X(responses_unmatched, "worker.responses_unmatched", "responses to no live transaction (late, after the lifetime)") \
  X(responses_duplicate, "worker.responses_duplicate", "second copies of a response already relayed") \
  X(responses_session_gone, "worker.responses_session_gone", "responses to a transaction whose session ended meanwhile (a Delete crossed it): closed, relayed to nobody") \
  X(triggered_unmatched, "worker.triggered_unmatched", "command-triggered requests whose command the proxy did not find") \
  X(creations_failed_over, "worker.creations_failed_over", "Create Session Requests sent on to another gateway of the pool") \
  X(creations_timed_out, "worker.creations_timed_out", "gateways silent past failover.response_timeout_ms on a creation") \
  X(creations_exhausted, "worker.creations_exhausted", "creations refused because no gateway of the pool was left") \
  X(creation_timers_full, "worker.creation_timers_full", "creations sent without a failover timer (timer queue full)") \
  X(gateway_restarts, "worker.gateway_restarts", "gateway restarts seen (a changed Recovery value)")          \
  X(restart_sessions_removed, "worker.restart_sessions_removed", "sessions removed because their gateway restarted") \
  X(restart_notifications_sent, "worker.restart_notifications_sent", "Delete Bearer Requests sent to SGWs for them") \
  X(own_requests_answered, "worker.own_requests_answered", "answers to the proxy's own requests (restart notifications, orphan deletions)") \
  X(own_requests_retransmitted, "worker.own_requests_retransmitted", "the proxy's own requests sent again after T3") \
  X(own_requests_unanswered, "worker.own_requests_unanswered", "the proxy's own requests never answered after N3 retransmissions") \
  X(orphans_deleted, "worker.orphans_deleted", "Delete Session Requests to a gateway that accepted a creation sent elsewhere") \
  X(messages_rewritten, "worker.messages_rewritten", "messages copied to change a length (F-TEID family, overrides)") \
  X(rewrite_failures, "worker.rewrite_failures", "rewrites that did not fit (sent as patched in place)") \
  X(overrides_applied, "worker.overrides_applied", "Create Session Requests changed by their rule's overrides") \
  X(connection_sets_deleted, "worker.connection_sets_deleted", "Delete PDN Connection Set Requests carried out (every worker counts its copy)") \
  X(connection_set_sessions_deleted, "worker.connection_set_sessions_deleted", "sessions removed because a Delete PDN Connection Set named them") \
  X(connection_set_requests_sent, "worker.connection_set_requests_sent", "Delete PDN Connection Set Requests sent on to peers of the other leg") \
  X(connection_set_overflow, "worker.connection_set_overflow", "Delete PDN Connection Set work refused: too many at once, too large, or too many peers") \
  X(one_way_relayed, "worker.one_way_relayed", "messages without a reply relayed (Trace Session Activation/Deactivation)") \
  X(recovery_rewritten, "worker.recovery_rewritten", "Recovery IEs of relayed messages set to the group's value") \
  X(persist_changes, "worker.persist_changes", "session changes written to the persist ring") \
  X(persist_ring_full, "worker.persist_ring_full", "session changes lost because the persist ring was full") \
  X(sessions_stored, "worker.sessions_stored", "sessions known to be in the storage and not yet restored: their TEIDs are reserved (gauge)") \
  X(restore_parked, "worker.restore_parked", "messages for a TEID the worker does not hold, held while the storage is asked") \
  X(restore_duplicates, "worker.restore_duplicates", "retransmissions of a held message, dropped (the first copy is answered)") \
  X(restore_found, "worker.restore_found", "sessions read back from the storage and served") \
  X(stored_released, "worker.stored_released", "reservations of stored sessions the storage no longer holds (another instance deleted them), freed") \
  X(sessions_demoted, "worker.sessions_demoted", "live sessions given back to the storage's keeping because another instance of the group wrote sessions meanwhile (read again from Redis at their next message)") \
  X(restore_unrouted, "worker.restore_unrouted", "sessions read back whose pool, gateway or rule (by name) is not in the routing document in force") \
  X(sessions_unrouted, "worker.sessions_unrouted", "live sessions whose pool, gateway or rule the last routing reload removed (gauge)") \
  X(restore_incomplete, "worker.restore_incomplete", "sessions read back as stored before their gateway's answer (their creation ran on an instance that is gone): removed, their request answered Context Not Found") \
  X(restore_absent, "worker.restore_absent", "look-ups the storage had no record for (answered Context Not Found)") \
  X(restore_failed, "worker.restore_failed", "look-ups the storage could not answer; their messages were dropped (peers retransmit)") \
  X(restore_timeouts, "worker.restore_timeouts", "look-ups unanswered in time; their messages were dropped (peers retransmit)") \
  X(restore_overflow, "worker.restore_overflow", "messages dropped because too many were held, or too large to hold") \
  X(ring_corruptions, "worker.ring_corruptions", "records of the worker's rings discarded as corrupt (a torn record header, or a head and tail that disagree)") \
  X(restore_conflicts, "worker.restore_conflicts", "stored sessions whose slot this worker had given to another session") \
  X(completions, "worker.completions", "times every stored session of the worker's partitions was read in for a walk (a gateway restart, a connection set deleted)") \
  X(completion_reads, "worker.completion_reads", "stored sessions looked up by completions") \
  X(sync_held, "worker.sync_held", "datagrams held until Redis acknowledged the changes before them (storage.persist: sync)") \
  X(sync_holding, "worker.sync_holding", "answers waiting now for Redis to acknowledge the changes before them (gauge)") \
  X(sync_overflow, "worker.sync_overflow", "datagrams dropped because too many were held for Redis (peers retransmit)") \
  X(v1_datagrams_received, "worker.v1_datagrams_received", "GTPv1-C datagrams (Gn/Gp) taken from the rings") \
  X(v1_error_indications, "worker.v1_error_indications", "GTPv1 Error Indications on the control port, dropped (user plane: not mapped)") \
  X(v1_pdu_notifications, "worker.v1_pdu_notifications", "GGSN PDU Notification Requests relayed to the subscriber's SGSN") \
  X(v1_gsn_address_invalid, "worker.v1_gsn_address_invalid", "GTPv1 requests refused for a GSN Address of a length other than 4 or 16") \
  X(v1_qos_capped, "worker.v1_qos_capped", "Create PDP Context Requests whose QoS Profile maximum bit rates a rule capped") \
  X(messages_dropped, "worker.messages_dropped", "messages dropped without an answer (not GTP-C, unexpected)")

struct WorkerCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_WORKER_COUNTERS)
};

inline constexpr metrics::CounterInfo kWorkerCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_WORKER_COUNTERS)};
static_assert(sizeof(WorkerCounters) == sizeof(kWorkerCounterInfo) / sizeof(kWorkerCounterInfo[0]) * 8);

}  // namespace gtpcp::worker
