// The emulator's pseudo-random draws (which requests a PGW drops, which
// TEIDs an SGW probes): xorshift64*, reproducible from a seed, no state but
// the caller's word.
#pragma once

#include <cstdint>

namespace gtpcp::peer {

// A seed xorshift64* can start from: never 0.
inline uint64_t randomState(uint64_t seed) noexcept { return seed | 1; }

// The next 64-bit draw; advances `state` (not 0).
inline uint64_t nextRandom(uint64_t& state) noexcept {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545f4914f6cdd1dull;
}

}  // namespace gtpcp::peer
