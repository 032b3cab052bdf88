// The forwarder's counter table (common/metrics/counter.h): one writer, the
// forwarder; read by `gtpcp status` and the metrics exporter.
#pragma once

#include "common/metrics/counter.h"

namespace gtpcp::forwarder {

#define GTPCP_FORWARDER_COUNTERS(X)                                                                    \
  X(datagrams_received, "forwarder.datagrams_received", "datagrams received on the GTP-C sockets")    \
  X(datagrams_sent, "forwarder.datagrams_sent", "datagrams sent on the GTP-C sockets")                \
  X(receive_errors, "forwarder.receive_errors", "recvmmsg failures other than would-block")           \
  X(send_errors, "forwarder.send_errors", "datagrams the kernel refused to send")                     \
  X(socket_overflows, "forwarder.socket_overflows", "datagrams the kernel dropped for a full receive buffer") \
  X(echo_answered, "forwarder.echo_answered", "Echo Requests answered with the group Recovery")      \
  X(echo_responses, "forwarder.echo_responses", "Echo Responses received")                           \
  X(echo_requests_sent, "forwarder.echo_requests_sent", "Echo Requests sent to gateways (health checks)") \
  X(echo_responses_unmatched, "forwarder.echo_responses_unmatched", "Echo Responses to no health check of ours") \
  X(version_not_supported, "forwarder.version_not_supported_sent", "datagrams of another GTP version answered with Version Not Supported") \
  X(dropped_not_gtp, "forwarder.dropped_not_gtp", "datagrams that are not GTP-C (too short, a GTPv1 or GTPv2 header that does not decode)") \
  X(dropped_priority_full, "forwarder.dropped_priority_ring_full", "datagrams dropped because a worker's priority ring was full") \
  X(rejected_overload, "forwarder.rejected_overload", "session creations rejected (No resources) because a worker's new ring was full") \
  X(rejected_peer_rate, "forwarder.rejected_peer_rate", "session creations rejected (No resources) over the sending peer's overload.creations_per_peer") \
  X(rejected_stale, "forwarder.rejected_stale", "session creations rejected (No resources) after waiting longer than overload.max_creation_wait_ms") \
  X(rejected_draining, "forwarder.rejected_draining", "session creations rejected (No resources) while the group drains (gtpcp drain, gtpcp stop)") \
  X(dropped_closing, "forwarder.dropped_closing", "requests dropped while the group stops (their senders retransmit to the instance that takes over)") \
  X(routing_reloads, "forwarder.routing_reloads", "routing documents loaded at run time (gtpcp reload)") \
  X(routing_reload_failures, "forwarder.routing_reload_failures", "routing documents that did not load at run time (the previous one stays)") \
  X(from_new_session_sockets, "forwarder.datagrams_from_new_session_sockets", "datagrams the kernel steered to the new-session sockets") \
  X(dropped_overload, "forwarder.dropped_overload", "session creations dropped because neither the ring nor a rejection could be sent") \
  X(to_priority, "forwarder.datagrams_to_priority_ring", "datagrams put on workers' priority rings")   \
  X(to_new, "forwarder.datagrams_to_new_ring", "session-creating requests put on workers' new rings") \
  X(from_workers, "forwarder.datagrams_from_workers", "datagrams taken from the workers' egress rings") \
  X(wakeups, "forwarder.wakeups", "times the forwarder slept and woke") \
  X(handovers, "forwarder.handovers", "planned restarts in which this forwarder took the sockets over from its predecessor") \
  X(handovers_failed, "forwarder.handovers_failed", "hand-overs to a successor that did not complete (the forwarder kept serving)")

struct ForwarderCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_FORWARDER_COUNTERS)
};

inline constexpr metrics::CounterInfo kForwarderCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_FORWARDER_COUNTERS)};

}  // namespace gtpcp::forwarder
