#include "control_server.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <filesystem>
#include <iomanip>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/config/routing.h"
#include "common/group/bgp_shm.h"
#include "common/group/from_config.h"
#include "common/group/rings.h"
#include "common/group/status.h"
#include "common/ring/bell.h"
#include "common/ring/doorbell.h"
#include "common/time/clock.h"
#include "common/group/worker_shm.h"

namespace gtpcp::watchdog {

namespace {
// How long a stopping process may take before it is killed.
constexpr int kTerminateMs = 5000;
// How long a restarted process may take to serve.
constexpr int kRestartMs = 10000;
// A drain is over when nothing is open at this many checks in a row (5 ms
// apart): a response relayed between two looks is not missed.
constexpr int kQuietChecks = 3;

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << v;
  return s.str();
}
}  // namespace

tl::expected<std::unique_ptr<ControlServer>, std::string> ControlServer::open(zmq::context_t& context,
                                                                              group::ProcessControl& group,
                                                                              const ControlSettings& settings) {
  std::unique_ptr<ControlServer> c(new ControlServer(group, settings));
  const group::Paths& paths = group.paths();
  auto segment = group::attachControl(paths.controlSegment());
  if (!segment) return tl::unexpected("shared memory " + paths.controlSegment() + ": " + segment.error().message);
  c->control_segment_.emplace(std::move(*segment));
  c->control_ = &group::controlOf(*c->control_segment_);
  const std::string endpoint = paths.controlEndpoint();
  try {
    c->socket_ = zmq::socket_t(context, zmq::socket_type::rep);
    // The last reply (to a stop, or to the watchdog's own restart) still
    // leaves when the socket closes right after it.
    c->socket_.set(zmq::sockopt::linger, 2000);
    // A socket file left by a watchdog that was killed would refuse the bind.
    ::unlink(endpoint.substr(std::string("ipc://").size()).c_str());
    c->socket_.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return tl::unexpected("control socket " + endpoint + ": " + e.what());
  }
  return c;
}

void ControlServer::send(const proto::ControlReply& reply) {
  std::string bytes;
  reply.SerializeToString(&bytes);
  try {
    socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    spdlog::warn("control reply not sent: {}", e.what());
  }
}

void ControlServer::receive(uint64_t now_ns) {
  // REP: one request at a time; the next is read once this one is answered.
  while (!reply_owed_ && !finished_) {
    zmq::message_t m;
    bool got = false;
    try {
      got = socket_.recv(m, zmq::recv_flags::dontwait).has_value();
    } catch (const zmq::error_t&) {
      got = false;
    }
    if (!got) return;
    proto::ControlRequest request;
    proto::ControlReply reply;
    if (!request.ParseFromArray(m.data(), static_cast<int>(m.size()))) {
      reply.set_error("not a ControlRequest");
      send(reply);
      continue;
    }
    if (stopping_ && !request.has_status()) {
      reply.set_error("the group is stopping");
      send(reply);
      continue;
    }
    switch (request.command_case()) {
      case proto::ControlRequest::kStatus:
        status(reply);
        break;
      case proto::ControlRequest::kDrain:
        drain(request.drain(), reply);
        break;
      case proto::ControlRequest::kReload:
        if (reload(request.reload(), now_ns, reply)) {
          reply_owed_ = true;  // answered once the processes applied it
          continue;
        }
        break;
      case proto::ControlRequest::kRestart:
        restart(request.restart(), reply);
        break;
      case proto::ControlRequest::kStop:
        stop(request.stop().drain_ms(), now_ns);
        reply_owed_ = true;
        continue;
      case proto::ControlRequest::kSwitchover:
        if (switchover(request.switchover(), now_ns, reply)) {
          reply_owed_ = true;  // answered once FRR has the withdraw
          continue;
        }
        break;
      case proto::ControlRequest::COMMAND_NOT_SET:
        reply.set_error("empty ControlRequest");
        break;
    }
    send(reply);
  }
}

void ControlServer::status(proto::ControlReply& reply) {
  reply.set_ok(true);
  reply.set_status_json(group::groupStatus(group_).dump());
}

void ControlServer::drain(const proto::DrainRequest& r, proto::ControlReply& reply) {
  control_->draining.store(r.on() ? 1 : 0, std::memory_order_relaxed);
  bool drained = false;
  const uint64_t open = pendingTransactions(drained);
  reply.set_ok(true);
  reply.set_transactions_open(open);
  reply.set_text(r.on() ? "group " + group_.config().group + " draining: session creations get cause 73 (No "
                              "resources available); " + std::to_string(open) + " transactions open\n"
                        : "group " + group_.config().group + " takes new sessions again\n");
  spdlog::info("{}", r.on() ? "draining: session creations refused" : "drain ended: session creations accepted");
}

bool ControlServer::reload(const proto::ReloadRequest& r, uint64_t now_ns, proto::ControlReply& reply) {
  std::string path = r.routing_path().empty() ? group_.config().routing.resolved : r.routing_path();
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  if (!ec) path = absolute.string();
  if (path.size() >= group::kRoutingPathBytes) {
    reply.set_error(path + ": path longer than " + std::to_string(group::kRoutingPathBytes - 1) + " octets");
    return false;
  }
  // Validated here first: a document that does not load never reaches the
  // processes, and the one in force stays.
  auto routing = config::loadRoutingDocument(path);
  if (!routing) {
    reply.set_error(routing.error().toString());
    spdlog::warn("reload refused: {}", routing.error().toString());
    return false;
  }
  routing_hash_ = routing->contentHash();
  routing_path_ = path;
  generation_ = control_->routing_generation.load(std::memory_order_relaxed) + 1;
  std::memset(control_->routing_path, 0, sizeof control_->routing_path);
  std::memcpy(control_->routing_path, path.data(), path.size());
  // CTL-R1: pairs with CTL-A1 in the processes (routingInForce()): the path first.
  control_->routing_generation.store(generation_, std::memory_order_release);
  wakeProcesses();
  wait_ = Wait::kReload;
  started_ns_ = now_ns;
  deadline_ns_ = now_ns + uint64_t{settings_.reload_wait_ms} * 1'000'000;
  spdlog::info("routing {} (version {}) sent to the processes as generation {}", path, hex(routing_hash_),
               generation_);
  return true;
}

void ControlServer::wakeProcesses() {
  // Sleeping processes look at the new generation now rather than at their
  // next timer. A worker's doorbell: its wait() also checks the generation,
  // so the ring cannot be lost.
  for (uint32_t w = 0; w < group_.config().workers; ++w) {
    auto bell = ring::SharedSegment::attach(group_.paths().workerDoorbell(w), group::kDoorbellSegmentKind);
    if (bell) ring::Doorbell(static_cast<ring::DoorbellShm*>(bell->payload())).ring();
  }
  // The forwarder sleeps in epoll on its bell socket (common/ring/bell.h):
  // a byte wakes it.
  if (auto bell = ring::BellRinger::open(group_.paths().forwarderBellSocket())) bell->ringNow();
}

bool ControlServer::reloadDone(uint64_t now_ns, proto::ControlReply& reply) {
  std::ostringstream text;
  bool all = true;
  bool failed = false;
  auto look = [&](const std::string& name, const group::ControlAckShm& ack) {
    if (!group_.runningPid(name)) {
      text << "  " << std::left << std::setw(12) << name << " not running: loads it when it starts\n";
      return;
    }
    // CTL-A2: pairs with CTL-R2 in the process: hash and verdict are its own.
    const uint64_t g = ack.routing_generation.load(std::memory_order_acquire);
    if (g < generation_) {
      all = false;
      text << "  " << std::left << std::setw(12) << name << " has not applied it\n";
      return;
    }
    if (ack.routing_failed.load(std::memory_order_relaxed) != 0) {
      failed = true;
      text << "  " << std::left << std::setw(12) << name << " could not load it and keeps the one before\n";
      return;
    }
    text << "  " << std::left << std::setw(12) << name << " applied version "
         << hex(ack.routing_hash.load(std::memory_order_relaxed)) << "\n";
  };
  look("forwarder", control_->forwarder);
  for (uint32_t w = 0; w < group_.config().workers && w < group::kControlMaxWorkers; ++w)
    look(group::Paths::workerName(w), control_->workers[w]);
  if (!all && now_ns < deadline_ns_) return false;
  const double seconds = double(now_ns - started_ns_) / 1e9;
  reply.set_ok(all && !failed);
  reply.set_routing_hash(routing_hash_);
  reply.set_routing_path(routing_path_);
  std::ostringstream head;
  head << "routing " << routing_path_ << " version " << hex(routing_hash_) << " (generation " << generation_ << ")"
       << (all && !failed ? " applied in " : " NOT applied everywhere after ") << std::fixed
       << std::setprecision(3) << seconds << " s\n";
  reply.set_text(head.str() + text.str());
  if (!reply.ok()) reply.set_error("the routing document was not applied by every process");
  spdlog::info("routing generation {}: {}", generation_, all && !failed ? "applied" : "not applied everywhere");
  return true;
}

void ControlServer::restart(const proto::RestartRequest& r, proto::ControlReply& reply) {
  std::string name = r.process();
  if (name == "watchdog") {
    // The reply goes first; the watchdog's main then executes itself again
    // (same pid, so the launcher's pid file stays right).
    reply.set_ok(true);
    reply.set_text("watchdog restarting\n");
    reexec_ = true;
    finished_ = true;
    spdlog::info("restarting itself on request");
    return;
  }
  bool known = false;
  for (const group::ProcessSpec& spec : group_.processes()) known |= spec.name == name;
  if (!known) {
    reply.set_error("no process named " + name + " in group " + group_.config().group);
    return;
  }
  spdlog::info("{}: restarting on request", name);
  std::ostringstream out;
  const uint64_t t0 = monotonicNs();
  const bool ok = group_.restart(name, out, kRestartMs);
  const double ms = double(monotonicNs() - t0) / 1e6;
  reply.set_ok(ok);
  reply.set_text(out.str());
  if (!ok) {
    reply.set_error(name + " did not come up serving");
    spdlog::error("{}: restart on request failed: {}", name, out.str());
  } else {
    spdlog::info("{}: restarted on request, serving after {:.1f} ms", name, ms);
  }
}

uint64_t ControlServer::pendingTransactions(bool& rings_drained) {
  const uint32_t n = group_.config().workers;
  if (workers_.size() != n) {
    workers_.clear();
    rings_.clear();
    for (uint32_t w = 0; w < n; ++w) {
      auto seg = ring::SharedSegment::attach(group_.paths().workerSegment(w), worker::kWorkerSegmentKind);
      if (seg) workers_.push_back(std::move(*seg));
      for (auto kind : {group::RingKind::kPriority, group::RingKind::kNew}) {
        auto r = ring::SharedSegment::attach(group_.paths().ring(w, kind), group::kRingSegmentKind);
        if (r) rings_.push_back(std::move(*r));
      }
    }
  }
  uint64_t open = 0;
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    // A worker that is not running answers nothing: what it holds is not waited for.
    if (!group_.runningPid(group::Paths::workerName(w))) continue;
    const auto* h = static_cast<const worker::WorkerShmHeader*>(workers_[w].payload());
    open += h->counters.transactions_pending.load();
  }
  rings_drained = true;
  for (const ring::SharedSegment& r : rings_) rings_drained = rings_drained && group::ringDrained(r);
  return open;
}

void ControlServer::beginStop(uint64_t now_ns) {
  if (stopping_) return;
  stop(settings_.stop_drain_ms, now_ns);
}

bool ControlServer::switchover(const proto::SwitchoverRequest& r, uint64_t now_ns, proto::ControlReply& reply) {
  if (!settings_.bgp) {
    reply.set_error(group_.config().file + ": bgp.mode is off: this group announces nothing to switch over");
    return false;
  }
  control_->bgp_withdraw.store(r.on() ? 1 : 0, std::memory_order_relaxed);
  if (!r.on()) {
    reply.set_ok(true);
    reply.set_text("switchover ended: the route is announced again once the instance has been healthy for " +
                   std::to_string(group_.config().bgp.return_hold_ms) + " ms\n");
    spdlog::info("switchover ended");
    return false;
  }
  spdlog::info("switchover: withdrawing the service addresses");
  withdraw_for_stop_ = false;
  withdrawn_ns_ = 0;
  wait_ = Wait::kWithdraw;
  started_ns_ = now_ns;
  deadline_ns_ = now_ns + uint64_t{settings_.withdraw_wait_ms} * 1'000'000;
  return true;
}

bool ControlServer::withdrawApplied() {
  if (!bridge_segment_) {
    auto seg = ring::SharedSegment::attach(group_.paths().bridgeSegment(), group::kBridgeSegmentKind);
    if (!seg) return false;
    bridge_segment_.emplace(std::move(*seg));
  }
  const auto* b = static_cast<const group::BridgeShm*>(bridge_segment_->payload());
  // BRG-A1: pairs with BRG-R1 in the bridge: the intent is that generation's.
  b->applied.applied_generation.load(std::memory_order_acquire);
  return static_cast<group::BgpIntent>(b->applied.intent.load(std::memory_order_relaxed)) == group::BgpIntent::kWithdraw;
}

void ControlServer::stop(uint32_t drain_ms, uint64_t now_ns) {
  stopping_ = true;
  stop_drain_ms_ = drain_ms;
  if (settings_.bgp) {
    // Peers move to the other instance first; only then does this one
    // refuse anything, so that nothing they send is lost.
    control_->bgp_withdraw.store(1, std::memory_order_relaxed);
    withdraw_for_stop_ = true;
    withdrawn_ns_ = 0;
    wait_ = Wait::kWithdraw;
    started_ns_ = now_ns;
    deadline_ns_ = now_ns + uint64_t{settings_.withdraw_wait_ms} * 1'000'000;
    spdlog::info("stopping: withdrawing the service addresses first");
    return;
  }
  beginDrain(now_ns);
}

void ControlServer::beginDrain(uint64_t now_ns) {
  const uint32_t drain_ms = stop_drain_ms_;
  // New sessions get cause 73 at once; other requests are dropped (their
  // senders retransmit to whoever takes the address over); responses are
  // still relayed, so what was forwarded completes.
  control_->draining.store(1, std::memory_order_relaxed);
  control_->closing.store(1, std::memory_order_relaxed);
  bool drained = false;
  open_at_start_ = pendingTransactions(drained);
  quiet_checks_ = 0;
  wait_ = Wait::kStop;
  started_ns_ = now_ns;
  deadline_ns_ = now_ns + uint64_t{drain_ms == 0 ? settings_.stop_drain_ms : drain_ms} * 1'000'000;
  spdlog::info("stopping: draining {} open transactions (at most {} ms)", open_at_start_,
               (deadline_ns_ - now_ns) / 1'000'000);
}

bool ControlServer::drainDone(uint64_t now_ns) {
  bool drained = false;
  const uint64_t open = pendingTransactions(drained);
  quiet_checks_ = open == 0 && drained ? quiet_checks_ + 1 : 0;
  if (quiet_checks_ >= kQuietChecks) {
    abandoned_ = 0;
    return true;
  }
  if (now_ns < deadline_ns_) return false;
  abandoned_ = open;
  return true;
}

void ControlServer::finishStop(proto::ControlReply& reply) {
  const double seconds = double(monotonicNs() - started_ns_) / 1e9;
  std::ostringstream text;
  text << "drained in " << std::fixed << std::setprecision(3) << seconds << " s: " << open_at_start_
       << " transactions were open, " << abandoned_ << " left unanswered\n";
  spdlog::info("drained in {:.3f} s: {} transactions were open, {} left unanswered", seconds, open_at_start_,
               abandoned_);
  const bool clean = group_.stopDataPath(text, kTerminateMs);
  reply.set_ok(clean);
  if (!clean) reply.set_error("a process had to be killed");
  reply.set_transactions_open(open_at_start_);
  reply.set_transactions_abandoned(abandoned_);
  reply.set_drain_seconds(seconds);
  reply.set_text(text.str());
  workers_.clear();
  rings_.clear();
}

void ControlServer::tick(uint64_t now_ns) {
  if (!wait_) return;
  proto::ControlReply reply;
  if (*wait_ == Wait::kReload) {
    if (!reloadDone(now_ns, reply)) return;
  } else if (*wait_ == Wait::kWithdraw) {
    if (withdrawn_ns_ == 0) {
      const bool applied = withdrawApplied();
      if (!applied && now_ns < deadline_ns_) return;
      withdrawn_ns_ = now_ns;
      const double ms = double(now_ns - started_ns_) / 1e6;
      if (applied) spdlog::info("FRR has the withdraw after {:.0f} ms", ms);
      else spdlog::warn("FRR did not confirm the withdraw within {} ms; going on", settings_.withdraw_wait_ms);
      if (!withdraw_for_stop_) {
        reply.set_ok(applied);
        if (!applied) reply.set_error("the bridge did not confirm the withdraw within " +
                                      std::to_string(settings_.withdraw_wait_ms) + " ms (gtpcp status shows why)");
        std::ostringstream text;
        text << std::fixed << std::setprecision(0) << "withdrawn: FRR had it " << ms
             << " ms after the request; this instance answers what still reaches it (gtpcp switchover --off announces "
                "it again)\n";
        reply.set_text(text.str());
        wait_.reset();
        if (reply_owed_) send(reply);
        reply_owed_ = false;
        return;
      }
    }
    if (now_ns < withdrawn_ns_ + uint64_t{settings_.withdraw_settle_ms} * 1'000'000) return;
    wait_.reset();
    beginDrain(now_ns);
    return;
  } else {
    if (!drainDone(now_ns)) return;
    finishStop(reply);
    finished_ = true;
  }
  wait_.reset();
  if (reply_owed_) send(reply);
  reply_owed_ = false;
}

}  // namespace gtpcp::watchdog
