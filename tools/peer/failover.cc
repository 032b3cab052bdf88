#include "tools/peer/failover.h"

#include <atomic>
#include <cerrno>
#include <cstring>

namespace gtpcp::peer {

namespace {

// Written only by the SIGUSR1 handler, read only by the runner's loop,
// never cleared. Both run on the loop's thread: SIGUSR1 is blocked except
// inside epoll_pwait2(), so the handler's store is sequenced before the loop's
// next load, and relaxed ordering is enough (nothing else is published with
// it). Lock-free, as a signal handler needs.
std::atomic<bool> g_failover_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onFailoverSignal(int) {
  g_failover_requested.store(true, std::memory_order_relaxed);
}

}  // namespace

Failover::Failover(const FailoverConfig& config) : config_(config) {
  for (const IpAddress& a : config_.proxy) learn(a);
}

bool Failover::tracked(const IpAddress& a) const noexcept {
  for (std::size_t i = 0; i < count_; ++i)
    if (addresses_[i] == a) return true;
  return false;
}

void Failover::learn(const IpAddress& a) noexcept {
  // The new instance's own address (its F-TEIDs name it) needs no moving.
  if (const auto& target = config_.targetFor(a); target && *target == a) return;
  if (tracked(a)) return;
  if (count_ == addresses_.size()) {
    ++untracked_;
    return;
  }
  addresses_[count_++] = a;
}

bool Failover::activate(int64_t now, Trigger why) noexcept {
  if (active() || why == Trigger::kNone) return false;
  trigger_ = why;
  switched_at_ = now;
  return true;
}

Endpoint Failover::route(const Endpoint& to) noexcept {
  if (!active()) return to;
  const std::optional<IpAddress>& target = config_.targetFor(to.addr);
  if (!target || !tracked(to.addr)) return to;
  ++redirected_;
  return Endpoint{*target, to.port};
}

const char* triggerName(Failover::Trigger t) noexcept {
  switch (t) {
    case Failover::Trigger::kSignal: return "signal";
    case Failover::Trigger::kTimer: return "timer";
    case Failover::Trigger::kNone: break;
  }
  return "none";
}

std::vector<std::string> failoverTargets(const FailoverConfig& c) {
  std::vector<std::string> to;
  for (const auto& a : {c.to_v4, c.to_v6})
    if (a) to.push_back(addressToString(*a));
  return to;
}

std::string installFailoverSignal() {
  struct sigaction sa {};
  sa.sa_handler = onFailoverSignal;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGUSR1, &sa, nullptr) != 0)
    return std::string("sigaction(SIGUSR1): ") + std::strerror(errno);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  if (::sigprocmask(SIG_BLOCK, &usr1, nullptr) != 0)
    return std::string("sigprocmask: ") + std::strerror(errno);
  return {};
}

sigset_t failoverWaitMask() noexcept {
  sigset_t mask;
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);  // cannot fail: no set to change
  sigdelset(&mask, SIGUSR1);
  return mask;
}

bool failoverRequested() noexcept {
  return g_failover_requested.load(std::memory_order_relaxed);
}

}  // namespace gtpcp::peer
