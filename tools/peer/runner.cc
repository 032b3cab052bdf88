#include "tools/peer/runner.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>

namespace gtpcp::peer {

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// The pacer ticks at most this often: tokens due in between go out together.
constexpr int64_t kTick = 100'000;
// Tokens issued per loop iteration at most, so receiving keeps up.
constexpr uint64_t kMaxTokensPerTurn = 1024;
// Receive batches per socket per turn, for fairness between sockets.
constexpr int kMaxBatchesPerTurn = 8;
constexpr uint32_t kSignalTag = 0xffffffffu;

template <std::size_t N>
uint64_t sum(const std::array<uint64_t, N>& a) {
  return std::accumulate(a.begin(), a.end(), uint64_t{0});
}

}  // namespace

class Runner::BatchOutbox final : public Outbox {
 public:
  BatchOutbox(std::vector<UdpSocket>& sockets, std::vector<std::unique_ptr<SendBatch>>& batches)
      : sockets_(sockets), batches_(batches) {}
  std::span<uint8_t> reserve(uint32_t socket) noexcept override {
    return batches_[socket]->reserve(sockets_[socket].fd());
  }
  void commit(uint32_t socket, const Endpoint& to, std::size_t length) noexcept override {
    batches_[socket]->commit(to, length);
  }

 private:
  std::vector<UdpSocket>& sockets_;
  std::vector<std::unique_ptr<SendBatch>>& batches_;
};

Runner::Runner(RunConfig config) : config_(std::move(config)) {}

Runner::~Runner() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
}

std::string Runner::open() {
  // Before the sockets: a test that sees them bound may send SIGUSR1.
  if (config_.failover.enabled()) {
    if (auto e = installFailoverSignal(); !e.empty()) return e;
  }
  std::vector<Endpoint> binds = config_.access_binds;
  binds.insert(binds.end(), config_.gateway_binds.begin(), config_.gateway_binds.end());
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return std::string("epoll_create1: ") + std::strerror(errno);
  for (std::size_t i = 0; i < binds.size(); ++i) {
    UdpSocket s;
    if (auto e = s.open(binds[i], config_.rcvbuf, config_.sndbuf); !e.empty()) return e;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, s.fd(), &ev) != 0)
      return std::string("epoll_ctl: ") + std::strerror(errno);
    sockets_.push_back(std::move(s));
    batches_.push_back(std::make_unique<SendBatch>());
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return std::string("sigprocmask: ") + std::strerror(errno);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) return std::string("signalfd: ") + std::strerror(errno);
  if (config_.failover.enabled()) wait_mask_ = failoverWaitMask();
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kSignalTag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, signal_fd_, &ev) != 0)
    return std::string("epoll_ctl: ") + std::strerror(errno);

  outbox_ = std::make_unique<BatchOutbox>(sockets_, batches_);
  Outbox* outbox = outbox_.get();
  if (config_.failover.enabled()) {
    failover_ = std::make_unique<Failover>(config_.failover);
    failover_outbox_ = std::make_unique<FailoverOutbox>(*outbox_, *failover_);
    outbox = failover_outbox_.get();
  }
  if (config_.sgw_role)
    access_ = std::make_unique<SgwEngine>(config_.sgw, *outbox, sgw_stats_, mismatches_, malformed_);
  if (config_.pgw_role)
    gateway_ =
        std::make_unique<PgwEngine>(config_.pgw, *outbox, pgw_stats_, mismatches_, malformed_);
  if (config_.sgsn_role)
    access_ =
        std::make_unique<SgsnEngine>(config_.sgsn, *outbox, sgsn_stats_, mismatches_, malformed_);
  if (config_.ggsn_role)
    gateway_ =
        std::make_unique<GgsnEngine>(config_.ggsn, *outbox, ggsn_stats_, mismatches_, malformed_);
  return {};
}

void Runner::checkFailover(int64_t now, std::ostream& err) {
  if (!failover_ || failover_->active()) return;
  const auto why = failoverRequested() ? Failover::Trigger::kSignal
                   : now >= failover_at_ ? Failover::Trigger::kTimer
                                         : Failover::Trigger::kNone;
  if (!failover_->activate(now, why)) return;
  std::string to;
  for (const auto& a : failoverTargets(failover_->config())) to += (to.empty() ? "" : ", ") + a;
  char at[32];
  std::snprintf(at, sizeof at, "%.3f", static_cast<double>(now - start_) / 1e9);
  err << "gtpcp-peer: failover at " << at << " s ("
      << (why == Failover::Trigger::kSignal ? "SIGUSR1" : "--failover-after")
      << "): datagrams for the proxy go to " << to << " from now on\n"
      << std::flush;
}

void Runner::startPacer(double rate, int64_t now) noexcept {
  // Tokens more than 50 ms behind the schedule are dropped (and counted):
  // the emulator, not the system under test, fell behind.
  const auto backlog = static_cast<uint64_t>(std::max(64.0, rate * 0.05));
  pacer_ = Pacer(rate, now, backlog);
  pacing_ = true;
}

void Runner::endWindow(int64_t now) noexcept {
  if (!window_open_) return;
  window_open_ = false;
  window_end_ = now;
  if (access_) access_->setWindowEnd(now);
}

void Runner::stopRequested(int64_t now) noexcept {
  ++signals_;
  report_.interrupted = true;
  if (signals_ >= 2) {
    phase_ = Phase::kDone;
    return;
  }
  switch (phase_) {
    case Phase::kRun:
    case Phase::kAttach:
    case Phase::kModify:
      phase_deadline_ = now;  // advance() moves on
      break;
    case Phase::kServe:
    case Phase::kHold:
      phase_ = Phase::kDone;
      break;
    default:
      break;
  }
}

void Runner::advance(int64_t now) noexcept {
  const int64_t settle = config_.t3_ns * (config_.n3 + 1) + 200 * kMs;
  auto stopPacing = [&] {
    if (pacing_) report_.schedule_lagged += pacer_.lagged();
    pacing_ = false;
    pacer_ = Pacer();
  };
  switch (phase_) {
    case Phase::kRun:
      if (now >= phase_deadline_ || access_->phaseExhausted()) {
        endWindow(now);
        stopPacing();
        access_->setPhase(AccessPhase::kIdle, false);
        phase_ = Phase::kDrain;
        phase_deadline_ = now + settle;
      }
      break;
    case Phase::kAttach:
      if (access_->phaseExhausted() || now >= phase_deadline_) {
        stopPacing();
        access_->setPhase(AccessPhase::kIdle, false);
        phase_ = Phase::kAttachSettle;
        phase_deadline_ = now + settle;
      }
      break;
    case Phase::kAttachSettle:
      if (access_->outstanding() == 0 || now >= phase_deadline_) {
        if (config_.mode == RunMode::kHold) {
          phase_ = Phase::kHold;
          phase_deadline_ =
              report_.interrupted ? now : now + static_cast<int64_t>(config_.duration_s * 1e9);
          break;
        }
        if (report_.interrupted) {
          phase_ = Phase::kModifySettle;  // straight to the detach
          phase_deadline_ = now;
          break;
        }
        access_->setPhase(AccessPhase::kModify, true);
        startPacer(config_.rate, now);
        window_start_ = now;
        window_open_ = true;
        phase_ = Phase::kModify;
        phase_deadline_ = now + static_cast<int64_t>(config_.duration_s * 1e9);
      }
      break;
    case Phase::kModify:
      if (now >= phase_deadline_) {
        endWindow(now);
        stopPacing();
        access_->setPhase(AccessPhase::kIdle, false);
        phase_ = Phase::kModifySettle;
        phase_deadline_ = now + settle;
      }
      break;
    case Phase::kModifySettle:
      if (access_->outstanding() == 0 || now >= phase_deadline_) {
        access_->setPhase(AccessPhase::kDetach, false);
        startPacer(config_.setup_rate, now);
        phase_ = Phase::kDetach;
        // Bounded: every attached subscriber once, at the setup rate.
        phase_deadline_ = now + static_cast<int64_t>(config_.options.subscribers /
                                                      config_.setup_rate * 1e9 * 2) + settle;
      }
      break;
    case Phase::kDetach:
      if (access_->phaseExhausted() || now >= phase_deadline_) {
        stopPacing();
        access_->setPhase(AccessPhase::kIdle, false);
        phase_ = Phase::kDetachSettle;
        phase_deadline_ = now + settle;
      }
      break;
    case Phase::kDetachSettle:
    case Phase::kDrain:
      if (settled() || now >= phase_deadline_) phase_ = Phase::kDone;
      break;
    case Phase::kServe:
    case Phase::kHold:
      if (now >= phase_deadline_) phase_ = Phase::kDone;
      break;
    case Phase::kDone:
      break;
  }
}

bool Runner::settled() const noexcept {
  return access_->outstanding() == 0 && access_->waitingForNetwork() == 0 &&
         (!gateway_ || gateway_->outstanding() == 0);
}

Runner::Totals Runner::totals() const noexcept {
  Totals t;
  auto access = [&t](const auto& s) {
    t.completed = sum(s.completed);
    t.retransmissions = sum(s.retransmissions);
    t.timeouts = sum(s.timeouts);
  };
  auto gateways = [&t](const auto& nodes) {
    for (const auto& n : nodes) t.gateway_requests += sum(n.requests) + n.echo_requests;
  };
  if (config_.version == 1) {
    access(sgsn_stats_);
    gateways(ggsn_stats_);
  } else {
    access(sgw_stats_);
    gateways(pgw_stats_);
  }
  return t;
}

void Runner::receive(uint32_t socket, int64_t& now) noexcept {
  const bool is_access = socket < config_.access_binds.size();
  const auto node =
      static_cast<uint32_t>(is_access ? socket : socket - config_.access_binds.size());
  for (int b = 0; b < kMaxBatchesPerTurn; ++b) {
    const int n = recv_.receive(sockets_[socket]);
    if (n <= 0) return;
    now = monotonicNs();
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (recv_.truncated(k)) {
        malformed_.count(gtp::Errc::kInvalidLength);
        continue;
      }
      if (is_access)
        access_->onDatagram(node, recv_.source(k), recv_.data(k), now);
      else
        gateway_->onDatagram(node, recv_.source(k), recv_.data(k), now);
    }
    if (static_cast<std::size_t>(n) < RecvBatch::kBatch) return;
  }
}

void Runner::flushAll() noexcept {
  for (std::size_t i = 0; i < batches_.size(); ++i)
    if (batches_[i]->pending() != 0) batches_[i]->flush(sockets_[i].fd());
}

void Runner::progress(int64_t now, std::ostream& err) {
  const char* names[] = {"run",           "attach", "attach-settle", "modify", "modify-settle",
                         "detach",        "detach-settle", "drain", "serve", "hold", "done"};
  static_assert(std::size(names) == static_cast<std::size_t>(Phase::kDone) + 1);
  char line[512];
  const double t = static_cast<double>(now - start_) / 1e9;
  const Totals sums = totals();
  if (access_) {
    const uint64_t up = access_->sessionsUp();
    std::snprintf(line, sizeof line,
                  "progress t=%.1fs phase=%s sessions_up=%llu tx/s=%llu outstanding=%llu "
                  "retransmissions=%llu timeouts=%llu mismatches=%llu malformed=%llu\n",
                  t, names[static_cast<int>(phase_)], static_cast<unsigned long long>(up),
                  static_cast<unsigned long long>(sums.completed - last_completed_),
                  static_cast<unsigned long long>(access_->outstanding()),
                  static_cast<unsigned long long>(sums.retransmissions),
                  static_cast<unsigned long long>(sums.timeouts),
                  static_cast<unsigned long long>(mismatches_.total),
                  static_cast<unsigned long long>(malformed_.total));
    last_completed_ = sums.completed;
  } else {
    uint64_t up = 0;
    for (const auto& p : pgw_stats_) up += p.sessions_up;
    for (const auto& g : ggsn_stats_) up += g.sessions_up;
    std::snprintf(line, sizeof line,
                  "progress t=%.1fs phase=%s sessions_up=%llu requests/s=%llu mismatches=%llu "
                  "malformed=%llu\n",
                  t, names[static_cast<int>(phase_)], static_cast<unsigned long long>(up),
                  static_cast<unsigned long long>(sums.gateway_requests - last_pgw_requests_),
                  static_cast<unsigned long long>(mismatches_.total),
                  static_cast<unsigned long long>(malformed_.total));
    last_pgw_requests_ = sums.gateway_requests;
  }
  err << line << std::flush;
}

int Runner::run(std::ostream& out, std::ostream& err) {
  snmp_start_ = systemUdpRcvbufErrors();
  for (const auto& s : sockets_) {
    if (s.rcvbuf() < config_.rcvbuf || s.sndbuf() < config_.sndbuf)
      err << "gtpcp-peer: warning: " << toString(s.local()) << " got buffers of "
          << s.rcvbuf() << "/" << s.sndbuf() << " octets, asked " << config_.rcvbuf << "/"
          << config_.sndbuf << " (net.core.rmem_max/wmem_max)\n";
  }
  int64_t now = monotonicNs();
  start_ = now;
  next_progress_ = now + kSecond;
  failover_at_ = failover_ && config_.failover.after_s >= 0
                     ? now + static_cast<int64_t>(config_.failover.after_s * 1e9)
                     : kNever;
  if (access_) {
    if (config_.mode == RunMode::kLifecycle) {
      access_->setPhase(AccessPhase::kLifecycle, true);
      startPacer(config_.rate, now);
      window_start_ = now;
      window_open_ = true;
      phase_ = Phase::kRun;
      phase_deadline_ = now + static_cast<int64_t>(config_.duration_s * 1e9);
    } else {
      access_->setPhase(AccessPhase::kAttach, false);
      startPacer(config_.setup_rate, now);
      phase_ = Phase::kAttach;
      // Bounded: every subscriber once at the setup rate, with room to spare.
      phase_deadline_ = now + static_cast<int64_t>(config_.options.subscribers /
                                                    config_.setup_rate * 1e9 * 2) +
                        config_.t3_ns * (config_.n3 + 1);
    }
  } else {
    phase_ = Phase::kServe;
    phase_deadline_ = config_.duration_s > 0 ? now + static_cast<int64_t>(config_.duration_s * 1e9)
                                             : kNever;
  }

  epoll_event events[64];
  while (phase_ != Phase::kDone) {
    // Sleep until the next thing to do.
    int64_t next = std::min(phase_deadline_, next_progress_);
    if (pacing_) next = std::min(next, std::max(pacer_.nextAt(), now + kTick));
    if (access_) next = std::min(next, access_->nextTimer());
    if (gateway_) next = std::min(next, gateway_->nextTimer());
    if (failover_ && !failover_->active()) next = std::min(next, failover_at_);
    int64_t wait = std::clamp<int64_t>(next - now, 0, kSecond);
    timespec ts{static_cast<time_t>(wait / kSecond), static_cast<long>(wait % kSecond)};
    // SIGUSR1 (blocked otherwise) interrupts the wait: n is -1, EINTR.
    const int n = ::epoll_pwait2(epoll_fd_, events, 64, &ts, failover_ ? &wait_mask_ : nullptr);
    now = monotonicNs();
    checkFailover(now, err);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u32 == kSignalTag) {
        signalfd_siginfo info;
        while (::read(signal_fd_, &info, sizeof info) == sizeof info) stopRequested(now);
        continue;
      }
      receive(events[i].data.u32, now);
    }
    now = monotonicNs();
    if (access_) access_->onTimers(now);
    if (gateway_) gateway_->onTimers(now);
    if (pacing_) {
      const uint64_t due = std::min(pacer_.due(now), kMaxTokensPerTurn);
      if (due != 0) {
        access_->issue(due, now);
        pacer_.take(due);
      }
    }
    flushAll();
    advance(now);
    if (now >= next_progress_) {
      if (config_.progress) progress(now, err);
      next_progress_ += kSecond;
      if (next_progress_ <= now) next_progress_ = now + kSecond;
    }
  }
  flushAll();
  now = monotonicNs();
  endWindow(now);
  if (pacing_) report_.schedule_lagged += pacer_.lagged();
  buildReport(now);
  printSummary(report_, out);
  if (!config_.json_path.empty()) {
    std::ofstream f(config_.json_path);
    f << toJson(report_).dump(2) << "\n";
    if (!f) err << "gtpcp-peer: cannot write " << config_.json_path << "\n";
  }
  return report_.exit_status;
}

void Runner::buildReport(int64_t now) {
  report_.config = &config_;
  report_.sgw = config_.sgw_role ? &sgw_stats_ : nullptr;
  report_.pgw = config_.pgw_role ? &pgw_stats_ : nullptr;
  report_.sgsn = config_.sgsn_role ? &sgsn_stats_ : nullptr;
  report_.ggsn = config_.ggsn_role ? &ggsn_stats_ : nullptr;
  report_.mismatches = mismatches_;
  report_.malformed = malformed_;
  report_.elapsed_s = static_cast<double>(now - start_) / 1e9;
  report_.window_s = window_end_ > window_start_
                         ? static_cast<double>(window_end_ - window_start_) / 1e9
                         : 0.0;
  report_.sgw_sessions_up = access_ ? access_->sessionsUp() : 0;
  report_.outstanding = access_ ? access_->outstanding() : 0;
  report_.sgw_waiting = access_ ? access_->waitingForNetwork() : 0;
  report_.pgw_outstanding = gateway_ ? gateway_->outstanding() : 0;
  report_.failover = failover_.get();
  report_.failover_at_s = failover_ && failover_->active()
                              ? static_cast<double>(failover_->switchedAt() - start_) / 1e9
                              : -1;
  report_.sockets.clear();
  for (std::size_t i = 0; i < sockets_.size(); ++i) {
    SocketReport s;
    const bool access = i < config_.access_binds.size();
    s.role = config_.version == 1 ? (access ? "sgsn" : "ggsn") : (access ? "sgw" : "pgw");
    s.local = sockets_[i].local();
    s.drops = sockets_[i].drops();
    s.rcvbuf = sockets_[i].rcvbuf();
    s.sndbuf = sockets_[i].sndbuf();
    report_.sockets.push_back(s);
    report_.send_full += batches_[i]->sendFull();
    report_.send_errors += batches_[i]->sendErrors();
  }
  const int64_t snmp_end = systemUdpRcvbufErrors();
  report_.snmp_rcvbuf_errors_delta =
      (snmp_start_ >= 0 && snmp_end >= 0) ? snmp_end - snmp_start_ : -1;
  report_.exit_status = exitStatusOf(report_);
}

}  // namespace gtpcp::peer
