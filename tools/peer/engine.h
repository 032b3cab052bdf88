// What the runner drives, whatever the GTP version: the access-side engine
// (emulated SGWs or SGSNs: the load, paced by tokens) and the gateway-side
// engine (emulated PGWs or GGSNs: the answers, and requests of their own).
// A run has the nodes of one version only; the runner's loop, sockets and
// phases are the same for both.
//
// Every method is called from the runner's one thread, on the datagram path:
// none allocates, throws or logs.
#pragma once

#include <cstdint>
#include <span>

#include "tools/peer/udp.h"

namespace gtpcp::peer {

// What a token does on the access side.
enum class AccessPhase : uint8_t {
  kIdle,       // nothing: tokens are not taken
  kLifecycle,  // each subscriber's next step: attach, modify x N, detach, again
  kAttach,     // attach every subscriber once
  kModify,     // modify attached subscribers
  kDetach,     // detach every attached subscriber
};

class AccessEngine {
 public:
  virtual ~AccessEngine() = default;

  // Tokens now start `phase` steps; `measured` marks the transactions they
  // start for latency and throughput.
  virtual void setPhase(AccessPhase phase, bool measured) noexcept = 0;
  // Completions after `t` no longer count toward the measured throughput.
  virtual void setWindowEnd(int64_t t) noexcept = 0;
  // Starts up to `tokens` transactions; returns how many started. A token
  // that finds no subscriber free is counted as starved.
  virtual uint64_t issue(uint64_t tokens, int64_t now) noexcept = 0;
  // A datagram received on node `node`'s socket from `from`.
  virtual void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                          int64_t now) noexcept = 0;
  // Retransmissions and timeouts due at `now`.
  virtual void onTimers(int64_t now) noexcept = 0;
  // When onTimers() next has work (max int64 when none).
  virtual int64_t nextTimer() const noexcept = 0;
  // Requests sent and not yet answered or timed out.
  virtual uint64_t outstanding() const noexcept = 0;
  virtual uint64_t sessionsUp() const noexcept = 0;
  // Subscribers out of the queue until the network does something (deletes
  // a dedicated bearer, updates or deletes a PDP context).
  virtual uint64_t waitingForNetwork() const noexcept = 0;
  // The phase has nothing more to start (attach: all attempted; detach: all
  // attempted; lifecycle: every subscriber finished its cycles).
  virtual bool phaseExhausted() const noexcept = 0;
};

class GatewayEngine {
 public:
  virtual ~GatewayEngine() = default;

  virtual void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                          int64_t now) noexcept = 0;
  // Delayed answers, and the gateway's own retransmissions and timeouts, due
  // at `now`.
  virtual void onTimers(int64_t now) noexcept = 0;
  virtual int64_t nextTimer() const noexcept = 0;
  // The gateway's own requests awaiting their answer.
  virtual uint64_t outstanding() const noexcept = 0;
};

}  // namespace gtpcp::peer
