// Which partition owns a session, and which worker owns a partition.
//
// The session space is cut into 1024 partitions; a partition belongs to
// exactly one worker (p % W == index). Everything about one subscriber lives
// in one partition: both of the proxy's TEIDs for a session carry the
// partition in their top 10 bits, and a session-creating request, which has
// no TEID yet, is placed by a hash of the IMSI. These functions are the only
// place that mapping is written down: the forwarder, the workers and the
// tools all call them.
#pragma once

#include <cstdint>
#include <string_view>

namespace gtpcp {

inline constexpr uint32_t kPartitions = 1024;
inline constexpr unsigned kPartitionBits = 10;

// The partition of a TEID the proxy allocated.
inline constexpr uint16_t partitionOf(uint32_t teid) noexcept {
  return static_cast<uint16_t>(teid >> (32 - kPartitionBits));
}

// The partition of a subscriber, from the IMSI digits (or, for a session
// without IMSI, whatever identity stands in for it). FNV-1a over the digits:
// stable across builds, instances and releases, because every instance of a
// group must agree on it.
inline constexpr uint16_t partitionOf(std::string_view imsi) noexcept {
  uint32_t h = 2166136261u;
  for (char c : imsi) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return static_cast<uint16_t>(h % kPartitions);
}

inline constexpr uint16_t workerOf(uint16_t partition, uint16_t workers) noexcept {
  return static_cast<uint16_t>(partition % workers);
}

}  // namespace gtpcp
