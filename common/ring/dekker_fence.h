// The seq_cst fence of the two wake-up protocols (doorbell.h, bell.h): each
// orders a store of "I published" or "I sleep" before a load of the other
// side's flag (Dekker). ThreadSanitizer does not model fences, and GCC says
// so (-Wtsan). That is harmless here: the fences guard no plain data (the
// ring's own release and acquire on head and tail do), only the "no lost
// wake-up" property, which the tests check by behaviour; the fence
// instruction is still executed.
#pragma once

#include <atomic>

namespace gtpcp::ring {

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
// DOOR-F1, DOOR-F2, BELL-F1 and BELL-F2 are this fence, each side's.
inline void dekkerFence() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

}  // namespace gtpcp::ring
