// The datagram a Proxy is handling, for the files that implement Proxy.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/v2/message.h"
#include "proxy.h"

namespace gtpcp::worker {

inline constexpr uint16_t kGtpcPort = 2123;
// Sequence numbers with the top bit set belong to command-triggered
// procedures (TS 29.274 §7.6); the proxy's numbers keep that bit.
inline constexpr uint32_t kCommandBit = 0x800000;

struct Proxy::Context {
  const Arrival& arrival;
  std::span<uint8_t> bytes;        // the whole datagram
  const gtp::v2::Message& message; // its first message
  std::span<uint8_t> message_bytes;
  // The sender F-TEID's TEID as received, once translation has overwritten
  // it in place: a rejection after that still names the sender's.
  std::optional<uint32_t> sender_teid = std::nullopt;
};

}  // namespace gtpcp::worker
