// The open-loop schedule: tokens fall due at start + k / rate, whatever the
// caller does with them; a backlog beyond the cap is dropped and counted.
#include "tools/peer/pacer.h"

#include <gtest/gtest.h>

namespace gtpcp::peer {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(Pacer, FirstTokenIsDueAtStart) {
  Pacer p(1000, 5 * kMs, 1000);
  EXPECT_EQ(p.due(5 * kMs - 1), 0u);
  EXPECT_EQ(p.due(5 * kMs), 1u);
  EXPECT_EQ(p.nextAt(), 5 * kMs);
}

TEST(Pacer, IssuesRateTimesElapsed) {
  Pacer p(2000, 0, 1'000'000);  // one token every 500 us
  EXPECT_EQ(p.due(0), 1u);
  EXPECT_EQ(p.due(499'999), 1u);
  EXPECT_EQ(p.due(500'000), 2u);
  EXPECT_EQ(p.due(1'000 * kMs - 1), 2000u);  // tokens 0..1999 by just under 1 s
  p.take(2000);
  EXPECT_EQ(p.due(1'000 * kMs - 1), 0u);
  EXPECT_EQ(p.nextAt(), 1'000 * kMs);
  EXPECT_EQ(p.due(1'000 * kMs), 1u);
}

TEST(Pacer, TakingTicksAtAnyGranularityKeepsTheSchedule) {
  // Whether the loop wakes every 100 us or every 7 ms, by time t exactly the
  // tokens scheduled up to t have been issued, and none is lost.
  for (int64_t tick : {int64_t{100000}, 1 * kMs, 7 * kMs}) {
    Pacer p(1234, 0, 1'000'000);
    uint64_t total = 0;
    int64_t last = 0;
    for (int64_t t = 0; t < 10'000 * kMs; t += tick) {
      const uint64_t n = p.due(t);
      p.take(n);
      total += n;
      last = t;
    }
    const auto scheduled = static_cast<uint64_t>(static_cast<double>(last) * 1234 / 1e9) + 1;
    EXPECT_EQ(total, scheduled) << "tick " << tick;
    EXPECT_NEAR(static_cast<double>(total), 12340.0, 1234.0 * static_cast<double>(tick) / 1e9 + 1)
        << "tick " << tick;
    EXPECT_EQ(p.lagged(), 0u);
  }
}

TEST(Pacer, NextAtIsWhenTheNextTokenFallsDue) {
  Pacer p(100, 0, 1000);  // every 10 ms
  p.take(p.due(25 * kMs));  // tokens 0, 1, 2
  EXPECT_EQ(p.taken(), 3u);
  EXPECT_EQ(p.nextAt(), 30 * kMs);
  EXPECT_EQ(p.due(29 * kMs), 0u);
  EXPECT_EQ(p.due(30 * kMs), 1u);
}

TEST(Pacer, BacklogBeyondTheCapIsDroppedAndCounted) {
  Pacer p(1000, 0, 50);
  // A 1 s stall: 1001 tokens due, only the cap is kept.
  const uint64_t n = p.due(1'000 * kMs);
  EXPECT_EQ(n, 50u);
  EXPECT_EQ(p.lagged(), 951u);
  p.take(n);
  EXPECT_EQ(p.due(1'000 * kMs), 0u);
  // The schedule goes on from where it was, not from the stall.
  EXPECT_EQ(p.due(1'001 * kMs), 1u);
}

TEST(Pacer, UnstartedPacerIssuesNothing) {
  Pacer p;
  EXPECT_EQ(p.due(1'000'000 * kMs), 0u);
}

}  // namespace
}  // namespace gtpcp::peer
