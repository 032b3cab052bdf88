// What the forwarder tells the workers, in a segment of its own: the group's
// Recovery value and what its Echo health checks know of each gateway of the
// routing document (forwarder/lib/health.h). The workers pick only gateways
// that are up, put the group's Recovery in the messages they relay, and
// clean up after a gateway whose Recovery changed.
//
// Owner: gtpcp-forwarder, which creates the segment and writes every field.
// Readers attach to it and never create it: a worker that starts before the
// forwarder (gtpcp start starts the workers first) takes it once the
// forwarder has made it, and until then has no datagram to handle anyway,
// since every datagram reaches it through the forwarder.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/metrics/counter.h"
#include "common/metrics/histogram.h"
#include "common/net/address.h"

namespace gtpcp::forwarder {

// The layout version is its last character: bump it whenever GatewayTableShm changes.
inline constexpr uint32_t kGatewayTableSegmentKind = 0x47575432;  // "GWT2"
inline constexpr unsigned kMaxHealthChecked = 1024;  // gateways with Echo health checks
inline constexpr uint32_t kRecoveryUnknown = 0x100;  // no Echo Response seen yet

// One gateway of the routing document: entry i is the document's gateway i.
struct GatewayStatusShm {
  // Writer: the forwarder, before it publishes GatewayTableShm::published
  // (GWT-R1); readers compare it with their own gateway's address after
  // reading that count (GWT-A1).
  net::Address address;
  // Writer: the forwarder. 1 up, 0 down. Relaxed: a worker acting on a state
  // a few microseconds old picks a gateway a few microseconds late.
  std::atomic<uint32_t> up{1};
  // Writer: the forwarder. The Recovery value of the last Echo Response
  // (kRecoveryUnknown before the first), then `restarts` (GWT-R2) when it
  // changed; a worker reads `restarts` (GWT-A2), then `recovery`.
  std::atomic<uint32_t> recovery{kRecoveryUnknown};
  std::atomic<uint32_t> restarts{0};
  // Writer: the forwarder, with `address`. The GTP version its Echo Requests
  // use (its pool's): a gateway that changes version starts over, since a
  // node's GTPv1 and GTPv2 Recovery values need not agree.
  uint32_t gtp_version = 2;
  metrics::Counter echo_sent;
  metrics::Counter echo_answered;
  metrics::Counter misses;  // intervals that ended without an answer
  // Writer: the forwarder. Round trip of the last answered Echo Request,
  // in nanoseconds (0 before the first), and every answered one's.
  metrics::Counter echo_rtt_ns;
  metrics::Histogram echo_rtt;
};

struct GatewayTableShm {
  // Writer: the forwarder, at start. The group's Recovery (TS 23.007), as
  // `gtp start` settled it: the forwarder answers Echo with it, the workers
  // write it into every Recovery IE they relay. Relaxed: it is set before
  // the forwarder serves, and a worker sees the forwarder's datagrams only
  // after that.
  alignas(64) std::atomic<uint32_t> recovery{0};
  // Writer: the forwarder; GWT-R1, a release after writing the entries'
  // addresses, pairs with GWT-A1 in the worker's mapping of its gateways.
  alignas(64) std::atomic<uint32_t> published{0};
  // Writer: the forwarder; incremented (GWT-R3, release) after every
  // publication, also one with the same count (a reloaded routing document).
  // A worker that sees it change (GWT-A3) maps its gateways to the entries
  // again.
  std::atomic<uint32_t> version{0};
  alignas(64) GatewayStatusShm gateways[kMaxHealthChecked];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

}  // namespace gtpcp::forwarder
