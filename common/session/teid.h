// The layout of the TEIDs the proxy allocates.
//
//   | partition (10) | slot (14) | leg (1) | generation (7) |
//
// The partition comes first because the forwarder routes on it alone
// (partitionOf()). The slot is the session's index in its partition's array,
// so a TEID leads to its session without a hash lookup. The leg bit tells the
// two TEIDs of one session apart: the one the SGW addresses (access leg) and
// the one the PGW addresses (gateway leg). The generation changes each time a
// slot is reused, so a late message for a deleted session does not reach its
// successor. Generations run 1..126: generation 0 would make partition 0 slot
// 0 TEID 0, and 127 would make the last slot of partition 1023 0xffffffff,
// neither of which may be allocated (TS 29.274 §5.5.1, TS 29.060 §6).
#pragma once

#include <cstdint>

#include "common/partition.h"

namespace gtpcp::session {

enum class Leg : uint8_t {
  kAccess = 0,   // toward the SGW: the TEID the SGW uses to reach the proxy
  kGateway = 1,  // toward the PGW: the TEID the PGW uses to reach the proxy
};

inline constexpr Leg other(Leg leg) noexcept { return leg == Leg::kAccess ? Leg::kGateway : Leg::kAccess; }

inline constexpr unsigned kSlotBits = 14;
inline constexpr uint32_t kMaxSlotsPerPartition = 1u << kSlotBits;
inline constexpr uint8_t kFirstGeneration = 1;
inline constexpr uint8_t kLastGeneration = 126;

struct TeidParts {
  uint16_t partition;
  uint16_t slot;
  Leg leg;
  uint8_t generation;
};

inline constexpr uint32_t makeTeid(uint16_t partition, uint16_t slot, Leg leg, uint8_t generation) noexcept {
  return (uint32_t{partition} << 22) | (uint32_t{slot} << 8) | (uint32_t{static_cast<uint8_t>(leg)} << 7) |
         generation;
}

inline constexpr TeidParts splitTeid(uint32_t teid) noexcept {
  return TeidParts{partitionOf(teid), static_cast<uint16_t>((teid >> 8) & (kMaxSlotsPerPartition - 1)),
                   static_cast<Leg>((teid >> 7) & 1), static_cast<uint8_t>(teid & 0x7f)};
}

inline constexpr uint8_t nextGeneration(uint8_t g) noexcept {
  return g >= kLastGeneration || g < kFirstGeneration ? kFirstGeneration : static_cast<uint8_t>(g + 1);
}

static_assert(partitionOf(makeTeid(1023, 5, Leg::kGateway, 9)) == 1023);
static_assert(makeTeid(0, 0, Leg::kAccess, kFirstGeneration) != 0);
static_assert(makeTeid(1023, kMaxSlotsPerPartition - 1, Leg::kGateway, kLastGeneration) != 0xffffffffu);

}  // namespace gtpcp::session
