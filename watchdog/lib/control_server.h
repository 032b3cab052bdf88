// The group's control channel, served by gtpcp-thread-watchdog: ZeroMQ REP at
// <run_dir>/control.ipc, one protobuf ControlRequest in, one ControlReply
// out (proto/control.proto). `gtpcp status|drain|reload|restart|stop` are its
// clients.
//
// It runs in the watchdog's loop. A command that waits (a reload for the
// processes' acknowledgements, a stop for the open transactions) does not
// block the loop: the reply is sent from tick() once the wait ends, and
// heartbeats keep being read meanwhile.
//
// Commands reach the processes through the control segment
// (common/group/control_shm.h): the drain and close flags the forwarder reads
// per batch, the routing generation every process checks per loop turn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>
#include <zmq.hpp>

#include "common/group/control_shm.h"
#include "common/ring/segment.h"
#include "proto/control.pb.h"
#include "common/group/process_control.h"

namespace gtpcp::watchdog {

struct ControlSettings {
  // How long a stop waits for the transactions forwarded before it.
  uint32_t stop_drain_ms = 5000;
  // How long a reload waits for every running process to apply it.
  uint32_t reload_wait_ms = 5000;
  // BGP in use: a stop withdraws first, and waits for FRR to have the
  // withdraw (at most withdraw_wait_ms) and then withdraw_settle_ms for the
  // routers to move, before it refuses anything.
  bool bgp = false;
  uint32_t withdraw_wait_ms = 3000;
  uint32_t withdraw_settle_ms = 500;
};

class ControlServer {
 public:
  static tl::expected<std::unique_ptr<ControlServer>, std::string> open(zmq::context_t& context,
                                                                        group::ProcessControl& group,
                                                                        const ControlSettings& settings);

  zmq::socket_t& socket() noexcept { return socket_; }
  // Takes the requests that arrived; answers those that need no wait.
  void receive(uint64_t now_ns);
  // Moves the command in progress on; replies when it is done.
  void tick(uint64_t now_ns);
  // How soon tick() wants to run again (ms), -1: no command in progress.
  long pollTimeoutMs() const noexcept { return !wait_ ? -1 : *wait_ == Wait::kStop ? 5 : 1; }

  // The graceful stop without a requester (SIGTERM to the watchdog).
  void beginStop(uint64_t now_ns);
  // From the first moment of a stop: the watchdog replaces nothing any more.
  bool stopping() const noexcept { return stopping_; }
  // The watchdog's loop ends: the group is stopped, or the watchdog itself is
  // to be restarted (reexec()).
  bool finished() const noexcept { return finished_; }
  bool reexec() const noexcept { return reexec_; }

 private:
  // kWithdraw: a switchover or the first step of a stop waits for FRR.
  enum class Wait : uint8_t { kReload, kWithdraw, kStop };
  ControlServer(group::ProcessControl& group, const ControlSettings& settings) : group_(group), settings_(settings) {}

  void status(proto::ControlReply& reply);
  void drain(const proto::DrainRequest& r, proto::ControlReply& reply);
  bool reload(const proto::ReloadRequest& r, uint64_t now_ns, proto::ControlReply& reply);
  void restart(const proto::RestartRequest& r, proto::ControlReply& reply);
  void stop(uint32_t drain_ms, uint64_t now_ns);
  // The drain of a stop, once the route is gone (or at once without BGP).
  void beginDrain(uint64_t now_ns);
  bool switchover(const proto::SwitchoverRequest& r, uint64_t now_ns, proto::ControlReply& reply);
  // Whether the bridge reports that FRR holds the withdraw.
  bool withdrawApplied();
  // Rings the workers' doorbells and the forwarder's doorbell socket.
  void wakeProcesses();
  // The reload waited for: true when every running process answered.
  bool reloadDone(uint64_t now_ns, proto::ControlReply& reply);
  // The stop's drain: true when it is over (nothing open, or out of time).
  bool drainDone(uint64_t now_ns);
  void finishStop(proto::ControlReply& reply);
  // Open transactions of the running workers, and whether every ring the
  // forwarder feeds them is empty.
  uint64_t pendingTransactions(bool& rings_drained);
  void send(const proto::ControlReply& reply);

  group::ProcessControl& group_;
  ControlSettings settings_;
  zmq::socket_t socket_;
  std::optional<ring::SharedSegment> control_segment_;
  group::GroupControlShm* control_ = nullptr;

  std::optional<Wait> wait_;
  bool reply_owed_ = false;  // a requester waits for the reply of wait_
  uint64_t deadline_ns_ = 0;
  uint64_t started_ns_ = 0;
  // Reload in progress.
  uint64_t generation_ = 0;
  uint64_t routing_hash_ = 0;
  std::string routing_path_;
  // Withdraw in progress (switchover, or a stop's first step).
  bool withdraw_for_stop_ = false;
  uint32_t stop_drain_ms_ = 0;
  uint64_t withdrawn_ns_ = 0;  // when the bridge reported it; 0: not yet
  std::optional<ring::SharedSegment> bridge_segment_;  // attached once it exists
  // Stop in progress.
  std::vector<ring::SharedSegment> workers_;  // segments (counters) of the workers
  std::vector<ring::SharedSegment> rings_;    // their priority and new rings
  uint64_t open_at_start_ = 0;
  uint64_t abandoned_ = 0;
  int quiet_checks_ = 0;
  bool stopping_ = false;
  bool finished_ = false;
  bool reexec_ = false;
};

}  // namespace gtpcp::watchdog
