// The counter table of one Redis client channel (common/metrics/counter.h).
// The persister writes one per worker channel, in its own segment
// (persister_shm.h); `gtpcp status` and the metrics exporter read them.
#pragma once

#include "common/metrics/counter.h"

namespace gtpcp::persister {

#define GTPCP_REDIS_COUNTERS(X)                                                                         \
  X(connected, "redis.connected", "1 when every slot has a connected primary (gauge)")                  \
  X(in_flight, "redis.commands_in_flight", "commands sent and not yet answered (gauge)")                \
  X(queued, "redis.commands_queued", "commands held, not sent: no primary yet, or pipeline full (gauge)") \
  X(submitted, "redis.commands_submitted", "commands (or groups) accepted")                             \
  X(completed, "redis.commands_completed", "commands answered without error")                           \
  X(reply_errors, "redis.reply_errors", "commands answered with an error reply")                        \
  X(refused, "redis.commands_refused", "commands refused because max_pending were held")                \
  X(lost, "redis.commands_lost", "commands failed because their connection was lost")                   \
  X(timeouts, "redis.commands_timed_out", "commands failed for want of an answer in time")              \
  X(resent, "redis.commands_resent", "idempotent commands sent again after a connection loss")          \
  X(retried, "redis.commands_retried", "commands sent again after CLUSTERDOWN, TRYAGAIN, LOADING or READONLY") \
  X(moved, "redis.redirects_moved", "MOVED answers (slot owned by another primary)")                   \
  X(ask, "redis.redirects_ask", "ASK answers (slot being migrated)")                                    \
  X(redirect_failures, "redis.redirect_failures", "commands failed after max_redirects redirections")   \
  X(connects, "redis.connects", "connections established")                                               \
  X(reconnects, "redis.reconnects", "connections established again after a loss or a failed attempt")   \
  X(connect_failures, "redis.connect_failures", "connection attempts that failed")                       \
  X(disconnects, "redis.disconnects", "established connections lost or closed")                          \
  X(topology_refreshes, "redis.topology_refreshes", "slot maps (Cluster) or primary addresses (Sentinel) fetched and applied") \
  X(primary_switches, "redis.primary_switches", "Sentinel +switch-master announcements followed")

struct RedisCounters {
  GTPCP_COUNTER_FIELDS(GTPCP_REDIS_COUNTERS)
};
inline constexpr metrics::CounterInfo kRedisCounterInfo[] = {GTPCP_COUNTER_INFO(GTPCP_REDIS_COUNTERS)};

}  // namespace gtpcp::persister
