// RedisClientImpl: the RedisClient of a real deployment, over hiredis 0.14's
// asynchronous API and the persister's EventLoop. One class serves the three
// modes; they differ only in where the slot map comes from:
//   single    one primary, fixed address, for every slot;
//   sentinel  one primary, its address asked of the sentinels (SENTINEL
//             get-master-addr-by-name) at start and whenever it is lost, and
//             followed on +switch-master (subscribed on a second sentinel
//             connection);
//   cluster   CLUSTER SLOTS from any reachable node, refreshed on MOVED, on
//             the loss of a primary, and every refresh_interval_ms while a
//             slot has no reachable primary.
//
// What waits where (all in one pool of max_pending requests, taken at submit,
// given back at completion; nothing is allocated per command once the pool's
// buffers have grown):
//   node.in_flight  sent on the node's connection, in order;
//   node.retry      to be sent there before anything new: answered MOVED/ASK,
//                   or idempotent and lost with the connection;
//   node.queue      routed there, not sent yet (connection down, pipeline
//                   full);
//   unrouted_       (cluster) slot without a known primary;
//   parked_         answered CLUSTERDOWN/TRYAGAIN/LOADING/READONLY/
//                   MASTERDOWN: routed again at the next tick.
// A new slot map (or primary) moves what waits to its new owner, oldest first,
// so commands of one slot keep their order except across a redirection.
//
// A tick timer runs only while there is something to watch: it fails
// commands past command_timeout_ms in flight (closing their connection, the
// only way to resynchronise a pipeline) or past request_timeout_ms since
// submit, re-routes parked commands, and polls the topology while degraded.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "common/log/log.h"
#include "event_loop.h"
#include "redis_client.h"
#include "redis_connection.h"

namespace gtpcp::persister {

enum class RedisMode : uint8_t { kSingle, kCluster, kSentinel };

struct RedisEndpoint {
  // An IP address: hiredis resolves a name with a blocking lookup.
  std::string host;
  int port = 0;
};

// "host:port" (the host may be a name or an IPv4 address). nullopt when malformed.
std::optional<RedisEndpoint> parseEndpoint(std::string_view text);

struct RedisClientConfig {
  RedisMode mode = RedisMode::kSingle;
  // single: the server; cluster: seed nodes; sentinel: the sentinels.
  std::vector<RedisEndpoint> endpoints;
  std::string master_name;              // sentinel: the name the sentinels monitor
  uint32_t max_pending = 65536;         // commands held (queued and in flight); more are refused
  uint32_t max_in_flight = 8192;        // per connection: the pipeline's depth
  uint32_t command_timeout_ms = 2000;   // sent and unanswered that long: the connection is closed
  uint32_t request_timeout_ms = 30000;  // submitted that long ago: no more waiting or resending
  uint32_t max_redirects = 5;           // MOVED/ASK answers one command may follow
  uint32_t refresh_interval_ms = 100;   // topology polling while a slot has no reachable primary
  ConnectionOptions connection;
};

// Empty when `config` is usable; otherwise one sentence naming what is wrong.
std::string validate(const RedisClientConfig& config);

class RedisClientImpl final : public RedisClient {
 public:
  // `counters`: where to count (e.g. in the process's shared-memory table);
  // null to use the client's own. The connections start at once.
  static tl::expected<std::unique_ptr<RedisClientImpl>, std::string> create(EventLoop& loop,
                                                                            const RedisClientConfig& config,
                                                                            RedisCounters* counters = nullptr);
  // Completes everything still held with kShutdown.
  ~RedisClientImpl() override;

  RedisErrc submit(uint16_t slot, RedisArgv argv, RedisCompletion done, uint8_t flags = kRedisNoFlags) noexcept override;
  RedisErrc submitGroup(uint16_t slot, std::span<const RedisArgv> commands, RedisCompletion done,
                        uint8_t flags = kRedisNoFlags) noexcept override;
  const RedisCounters& counters() const noexcept override { return *counters_; }
  uintptr_t primaryOf(uint16_t slot) const noexcept override;

  // Every slot has a primary whose connection is up.
  bool connected() const noexcept { return counters_->connected.load() != 0; }
  // The primaries that own slots now, "host:port" each, in the order of the
  // slots they first own, appended to `out` unless already in it. Walks the
  // slot map (Cluster): for the once-a-second report, not per command.
  void primaries(std::vector<std::string>& out) const;
  // Commands accepted and not yet completed.
  uint32_t held() const noexcept { return held_; }

 private:
  struct Request;
  struct Node;
  struct SentinelLink;
  // An intrusive FIFO of requests; a request is in at most one.
  struct RequestList {
    Request* head = nullptr;
    Request* tail = nullptr;
    uint32_t size = 0;
    void pushBack(Request* r) noexcept;
    Request* popFront() noexcept;
    void remove(Request* r) noexcept;
  };

  RedisClientImpl(EventLoop& loop, const RedisClientConfig& config, RedisCounters* counters);

  void route(Request* r) noexcept;
  void dispatch(Node& n) noexcept;
  bool send(Node& n, Request* r) noexcept;
  static void onReply(redisAsyncContext* ac, void* reply, void* privdata);
  void answered(Node& n, Request* r, const redisReply* reply) noexcept;
  void classifyError(Request* r, std::string_view error) noexcept;
  void requeueLost(Node& n, Request* r) noexcept;
  void redirect(Request* r) noexcept;
  void park(Request* r) noexcept;
  void complete(Request* r, RedisErrc e, const redisReply* reply = nullptr) noexcept;
  bool expired(const Request* r, uint64_t now_ns) const noexcept;

  void nodeUp(Node& n) noexcept;
  void nodeDown(Node& n, bool was_up) noexcept;
  Node* nodeFor(std::string_view host, int port) noexcept;
  void setOwner(uint16_t slot, Node* n) noexcept;
  void reroute() noexcept;
  void updateConnected() noexcept;
  void updateGauges() noexcept;

  void wantRefresh() noexcept;
  void refresh() noexcept;
  static void onClusterSlots(redisAsyncContext* ac, void* reply, void* privdata);
  void applyClusterSlots(Node& asked, const redisReply* reply) noexcept;
  void sentinelUp(SentinelLink& link) noexcept;
  void sentinelDown(SentinelLink& link) noexcept;
  static void onPrimaryAddress(redisAsyncContext* ac, void* reply, void* privdata);
  static void onSwitchMaster(redisAsyncContext* ac, void* reply, void* privdata);
  void applyPrimary(std::string_view host, int port) noexcept;

  void ensureTick() noexcept;
  static void onTick(void* self) noexcept;
  void tick() noexcept;

  EventLoop& loop_;
  const RedisClientConfig config_;
  RedisCounters own_counters_;
  RedisCounters* counters_;
  std::unique_ptr<Request[]> pool_;
  RequestList free_, unrouted_, parked_;
  std::vector<std::unique_ptr<Node>> nodes_;  // never shrinks: hiredis callbacks point at nodes
  std::vector<Node*> slots_;                  // slot -> primary; all the same node outside cluster mode
  uint32_t unowned_slots_ = 0;
  uint32_t held_ = 0, in_flight_ = 0;
  Timer tick_;
  bool shutting_down_ = false;
  // Topology: CLUSTER SLOTS or SENTINEL get-master-addr-by-name.
  bool have_topology_ = false;
  bool refresh_wanted_ = false;
  bool refresh_in_flight_ = false;
  uint64_t refresh_sent_ns_ = 0;
  std::size_t refresh_cursor_ = 0;
  std::unique_ptr<SentinelLink> sentinel_query_, sentinel_watch_;
  std::string query_command_, subscribe_command_;
  log::RateLimit warn_limit_{std::chrono::seconds(1)};
};

}  // namespace gtpcp::persister
