// A failover of the proxy group to another instance, as the peers see it.
//
// In production the group's address moves (BGP) and the peers' datagrams,
// to the same address as before, reach another machine. On a test host the
// other instance has loopback addresses of its own, so the emulator
// redirects instead: from the switch on, every datagram it sends (either
// role: requests, retransmissions, answers) to an address of the proxy's
// goes to the --failover-to address of that family, at the port it would
// have used. The proxy's addresses are --proxy's, --proxy-gateway's and the
// control F-TEID addresses the proxy gave (Outbox::noteProxyAddress()).
// Sessions, TEIDs and sequence numbers do not change: the new instance
// serves them from the shared store. Datagrams from the new instance are
// accepted as those from the old (no check looks at a response's source;
// the F-TEID checks accept the --failover-to address as the proxy's).
//
// The switch comes once, from SIGUSR1 or --failover-after. The SIGUSR1
// handler only sets an atomic flag, which the runner's loop reads
// (failoverRequested()) before it calls Failover::activate().
//
// Failover and FailoverOutbox belong to the runner's thread; nothing on
// their path allocates, throws or logs.
#pragma once

#include <signal.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tools/peer/outbox.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

struct FailoverConfig {
  // --failover-to: the new instance's address per family (none: no failover).
  std::optional<IpAddress> to_v4, to_v6;
  // The proxy's addresses as configured (--proxy, --proxy-gateway).
  std::vector<IpAddress> proxy;
  // --failover-after, seconds from the start of the run; < 0: SIGUSR1 only.
  double after_s = -1;

  bool enabled() const noexcept { return to_v4.has_value() || to_v6.has_value(); }
  // The --failover-to address of `a`'s family, if any.
  const std::optional<IpAddress>& targetFor(const IpAddress& a) const noexcept {
    return a.isV4() ? to_v4 : to_v6;
  }
};

class Failover {
 public:
  // Addresses tracked as the proxy's at most: the configured ones and those
  // its F-TEIDs named (normally the same few).
  static constexpr std::size_t kMaxAddresses = 32;
  enum class Trigger : uint8_t { kNone, kSignal, kTimer };

  explicit Failover(const FailoverConfig& config);

  // `a` is an address of the proxy's (a control F-TEID it gave names it).
  // Beyond kMaxAddresses it is not redirected, and counted.
  void learn(const IpAddress& a) noexcept;
  // Switches to the new instance at `now` (ns, monotonic), once; later calls
  // do nothing. Returns whether this call switched.
  bool activate(int64_t now, Trigger why) noexcept;
  bool active() const noexcept { return trigger_ != Trigger::kNone; }
  Trigger trigger() const noexcept { return trigger_; }
  int64_t switchedAt() const noexcept { return switched_at_; }

  // Where a datagram for `to` goes now: `to` itself, or after the switch, for
  // an address of the proxy's with a --failover-to of its family, that
  // address at `to`'s port (counted).
  Endpoint route(const Endpoint& to) noexcept;

  const FailoverConfig& config() const noexcept { return config_; }
  std::span<const IpAddress> addresses() const noexcept { return {addresses_.data(), count_}; }
  uint64_t redirected() const noexcept { return redirected_; }
  uint64_t untracked() const noexcept { return untracked_; }

 private:
  bool tracked(const IpAddress& a) const noexcept;

  FailoverConfig config_;
  std::array<IpAddress, kMaxAddresses> addresses_{};
  std::size_t count_ = 0;
  Trigger trigger_ = Trigger::kNone;
  int64_t switched_at_ = 0;
  uint64_t redirected_ = 0;  // datagrams sent to --failover-to instead
  uint64_t untracked_ = 0;   // addresses learnt beyond kMaxAddresses
};

// The peer a request from `from` comes from, to tell a repeat from a new
// request: the failover instance's address counts as the proxy's, at the
// same port (one peer, as when the group's address moves).
inline Endpoint proxyPeer(const Endpoint& from, const IpAddress& proxy,
                          const std::optional<IpAddress>& failover) noexcept {
  return failover && from.addr == *failover ? Endpoint{proxy, from.port} : from;
}

// "signal", "timer" or "none", as the summary spells them.
const char* triggerName(Failover::Trigger t) noexcept;
// The --failover-to addresses as text, IPv4 first. Allocates: not for the
// datagram path.
std::vector<std::string> failoverTargets(const FailoverConfig& c);

// The Outbox the engines send through when a failover is configured: every
// destination goes through Failover::route(), and the proxy addresses the
// engines note are the Failover's to redirect. Both outlive it.
class FailoverOutbox final : public Outbox {
 public:
  FailoverOutbox(Outbox& inner, Failover& failover) : inner_(inner), failover_(failover) {}
  std::span<uint8_t> reserve(uint32_t socket) noexcept override { return inner_.reserve(socket); }
  void commit(uint32_t socket, const Endpoint& to, std::size_t length) noexcept override {
    inner_.commit(socket, failover_.route(to), length);
  }
  void noteProxyAddress(const IpAddress& a) noexcept override { failover_.learn(a); }

 private:
  Outbox& inner_;
  Failover& failover_;
};

// Installs the SIGUSR1 handler, which only sets the flag failoverRequested()
// reads, and blocks SIGUSR1: it is to be delivered only while the runner
// waits, with failoverWaitMask(), so that the wait returns at once and the
// loop sees the flag. Returns "" or what failed. Startup only, before other
// threads exist.
std::string installFailoverSignal();
// The mask in force without SIGUSR1: for epoll_pwait2(), once every signal
// the loop reads from a signalfd is blocked (they stay so).
sigset_t failoverWaitMask() noexcept;
// SIGUSR1 came (since installFailoverSignal()). The runner's thread only.
bool failoverRequested() noexcept;

}  // namespace gtpcp::peer
