// The header at offset 0 of every gtpcp shared-memory segment.
//
// A segment outlives the processes that use it (a restarted worker finds its
// sessions and queued datagrams again), so a process may meet a segment that
// an older or newer build created, or that holds something else entirely. The
// header lets it refuse such a segment with a clear message instead of reading
// garbage. Plain data only: no pointers, no std::string (STYLE.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gtpcp::ring {

// "GTPCSHM1" as it reads in a hex dump of the object (little-endian).
inline constexpr uint64_t kSegmentMagic = 0x314d485343505447ULL;
// Bump when SegmentHeaderShm changes; what a payload holds is versioned by
// the payload itself (e.g. RingHeaderShm::layout_version).
inline constexpr uint32_t kSegmentLayoutVersion = 1;
// Where the payload starts: a cache line, so that the payload's own cache-line
// layout (ring head and tail apart) holds in the mapping too.
inline constexpr std::size_t kSegmentPayloadOffset = 64;

// Every field is written by the creator only, while it initialises the
// segment, before `magic`; afterwards the header is constant. Attachers read it.
struct SegmentHeaderShm {
  // Writer: the creator, last, with a release store. Readers: attachers, with
  // an acquire load; 0 means "still being initialised" (the object is born
  // zero-filled), so nothing else in the header is read before it is non-zero.
  std::atomic<uint64_t> magic;
  uint32_t layout_version;  // kSegmentLayoutVersion of the creator's build
  uint32_t kind;            // the caller's tag for what the payload holds
  uint64_t payload_size;    // octets from kSegmentPayloadOffset
  int32_t creator_pid;      // for the operator: which process created it
  uint32_t reserved;        // zero
  uint8_t padding[kSegmentPayloadOffset - 32];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the magic is shared between processes: it must not hide a lock");
static_assert(std::is_standard_layout_v<SegmentHeaderShm>);
static_assert(sizeof(SegmentHeaderShm) == kSegmentPayloadOffset);
static_assert(kSegmentPayloadOffset % 64 == 0);

}  // namespace gtpcp::ring
