// gtpcp-forwarder's main loop: the group's GTP-C sockets on one side, the
// workers' rings on the other.
//
// Each turn receives batches from the sockets that have datagrams (recvmmsg)
// and dispatches them (Dispatcher), then drains the workers' egress rings into
// sendmmsg batches, sending straight from ring memory. A socket is read until
// a batch comes back short, then only again once epoll says it is readable:
// each turn that did work ends with a non-blocking epoll_wait, so a socket
// with nothing waiting costs no system call (at low rates a turn per datagram
// used to cost a recvmmsg that found nothing on every socket, twice). With
// nothing to do it announces that it sleeps (ForwarderShm::bell) and waits
// in epoll_wait on the sockets and on its bell socket, which the workers
// write one byte to when they publish egress while it sleeps
// (common/ring/bell.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "common/config/routing.h"
#include "common/group/control_shm.h"
#include "common/group/paths.h"
#include "common/group/socket_plan.h"
#include "common/ring/bell.h"
#include "common/ring/segment.h"
#include "dispatcher.h"
#include "common/group/forwarder_shm.h"
#include "common/group/gateway_table_shm.h"
#include "handover.h"
#include "health.h"
#include "peer_rate_limit.h"

namespace gtpcp::forwarder {

struct ForwarderOptions {
  group::Paths paths{"", ""};
  uint32_t workers = 1;
  uint32_t priority_slots = 16384;
  uint32_t new_slots = 8192;
  uint32_t egress_slots = 16384;
  uint32_t batch = 64;
  int socket_buffer_bytes = 8 << 20;
  group::SocketPlan sockets;
  uint8_t recovery = 1;
  // The routing document: its gateways get Echo health checks. None: no checks.
  const config::RoutingTable* routing = nullptr;
  // The control segment's routing generation `routing` belongs to (0: the
  // configuration's document, no reload yet).
  uint64_t routing_generation = 0;
  // Take commands (drain, stop, reload) from the group's control segment.
  bool control = true;
  // Session creations per second per peer (0: no limit), and the burst.
  uint32_t creations_per_peer = 0;
  uint32_t creations_burst = 0;
  // Session creations that waited longer than this in the kernel are
  // refused with No resources available (0: never).
  uint32_t max_creation_wait_ms = 500;
  // Bind addresses that are not local yet (IP_FREEBIND): a BGP-announced
  // service address may be made local after the forwarder starts.
  bool freebind = false;
  // A planned restart: take the sockets over from the forwarder serving
  // now (handover.h) instead of binding them; fail when none hands over.
  bool take_over = false;
};

// How long a successor waits for the serving forwarder's sockets.
inline constexpr std::chrono::milliseconds kTakeOverWait{3000};

}  // namespace gtpcp::forwarder
namespace gtpcp::control {
class HeartbeatSender;
}  // namespace gtpcp::control
namespace gtpcp::forwarder {

class Sender;

// The kernel's running count of datagrams socket `fd` dropped for want of
// room (SO_MEMINFO): the count SO_RXQ_OVFL reports with each datagram. 0
// for -1 or when the kernel does not say.
uint32_t socketDrops(int fd) noexcept;

class Forwarder {
 public:
  // Makes (or adopts) the forwarder's own segments, attaches to every
  // worker's rings (waiting for the workers to have made them), and binds
  // the sockets. The error is one sentence for the log.
  static tl::expected<std::unique_ptr<Forwarder>, std::string> open(const ForwarderOptions& options);
  ~Forwarder();

  // Runs until `stop` is set (from a signal handler). Marks the process
  // serving on entry and stopped on return.
  void run(const std::atomic<bool>& stop) noexcept;

  ForwarderShm& shm() noexcept { return *shm_; }
  // Beats toward the thread watchdog from the loop (none: no beats).
  void setHeartbeat(control::HeartbeatSender* heartbeat) noexcept { heartbeat_ = heartbeat; }
  // False when the kernel refused the program that gives creations their own
  // socket (then every datagram shares one socket per address).
  // This process took its sockets over from a predecessor.
  bool tookOver() const noexcept { return took_over_; }
  // After run(): it returned because a successor took the sockets over.
  bool handedOver() const noexcept { return handed_over_; }
  // Why the last hand-over a successor asked for did not happen (empty: none failed).
  const std::string& handoverFailure() const noexcept { return handover_failure_; }
  // Something the operator should read in the log, from open() (empty: none).
  const std::string& notice() const noexcept { return notice_; }
  bool creationsSteered() const noexcept {
    for (int fd : new_sockets_)
      if (fd < 0) return false;
    return true;
  }

 private:
  Forwarder() = default;
  control::HeartbeatSender* heartbeat_ = nullptr;
  // One batch from address `socket`'s session socket, or its new-session
  // socket when `fresh`.
  // Datagrams received, 0 when none (or no such socket).
  int receive(std::size_t socket, bool fresh) noexcept;
  // Marks the sockets epoll reports readable, waiting up to `timeout_ms`.
  void pollReadable(int timeout_ms) noexcept;
  bool drainEgress() noexcept;
  bool egressPending() noexcept;
  void sleep() noexcept;
  // A new routing generation in the control segment: its document's gateways
  // get the health checks from now on. Allocates; runs once per reload.
  void reloadRouting() noexcept;
  // Between turns, a successor asking: true when it took everything over.
  bool handOver() noexcept;

  ForwarderOptions options_;
  std::optional<ring::SharedSegment> segment_;
  ForwarderShm* shm_ = nullptr;
  std::optional<ring::SharedSegment> table_segment_;  // the gateway table it owns, for the workers
  GatewayTableShm* table_ = nullptr;
  std::vector<ring::SharedSegment> ring_segments_;
  std::vector<WorkerPorts> ports_;
  std::vector<ring::Consumer> egress_;
  std::vector<int> sockets_;      // per address: sends, and receives all but creations
  std::vector<int> new_sockets_;  // per address: receives Create Session (PDP Context) Requests (-1: not steered)
  int epoll_ = -1;
  std::optional<ring::BellListener> bell_;
  static constexpr uint64_t kFreshTag = uint64_t{1} << 32;
  static constexpr uint64_t kBellTag = ~uint64_t{0};
  static constexpr uint64_t kHandoverTag = ~uint64_t{0} - 1;
  std::optional<HandoverListener> handover_;
  bool handover_wanted_ = false;
  bool handed_over_ = false;
  bool took_over_ = false;
  bool bell_path_ours_ = true;  // false while the bell socket serves a predecessor or a successor
  std::string handover_failure_;
  std::string notice_;
  // Per address: whether its session socket (readable_) and new-session
  // socket (readable_fresh_) may have datagrams waiting.
  std::vector<uint8_t> readable_;
  std::vector<uint8_t> readable_fresh_;
  std::unique_ptr<Sender> sender_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<GatewayHealth> health_;
  std::optional<ring::SharedSegment> control_segment_;
  group::GroupControlShm* control_ = nullptr;
  uint64_t routing_generation_ = 0;
  std::unique_ptr<PeerRateLimiter> peer_limit_;
  struct ReceiveBuffers;
  std::unique_ptr<ReceiveBuffers> rx_;
};

}  // namespace gtpcp::forwarder
