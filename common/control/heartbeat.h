// A process's heartbeat toward the thread watchdog (DESIGN.md, "Control
// plane"): a ZeroMQ PUB socket connected to the watchdog's SUB, one small
// protobuf message every kPeriodNs, sent from inside the process's main loop.
// A loop that hangs stops beating even though the process lives, which is
// what the watchdog looks for.
//
// beat() is called every loop turn: it compares the time and returns unless
// a period has passed; then it serialises into a fixed buffer and sends
// without blocking (no watchdog, or a slow one: the beat is dropped by
// ZeroMQ, never queued without bound). The message is built once and only its
// counters change; what ZeroMQ allocates for a send happens ten times a
// second, never per datagram.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <tl/expected.hpp>
#include <zmq.hpp>

#include "proto/control.pb.h"

namespace gtpcp::control {

class HeartbeatSender {
 public:
  static constexpr uint64_t kPeriodNs = 100'000'000;

  // Connects to `endpoint` (Paths::heartbeatEndpoint()); the watchdog need
  // not be there yet.
  static tl::expected<std::unique_ptr<HeartbeatSender>, std::string> open(const std::string& endpoint,
                                                                           const std::string& process);

  void beat(uint64_t now_ns) noexcept;
  uint64_t sent() const noexcept { return sent_; }

 private:
  HeartbeatSender() = default;

  zmq::context_t context_{1};
  zmq::socket_t socket_;
  proto::Heartbeat message_;
  std::array<uint8_t, 96> buffer_{};
  uint64_t next_ns_ = 0;
  uint64_t sent_ = 0;
};

}  // namespace gtpcp::control
