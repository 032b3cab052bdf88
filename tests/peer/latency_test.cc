// Latency percentiles: the histogram's answers against exact percentiles of
// the same samples (rank ceil(q * n) of the sorted samples).
#include "tools/peer/latency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace gtpcp::peer {
namespace {

uint64_t exactPercentile(std::vector<uint64_t> v, double q) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

TEST(LatencyHistogram, EmptyReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(0.99), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.percentile(0.5), 50u);
  EXPECT_EQ(h.percentile(0.99), 99u);
  EXPECT_EQ(h.percentile(1.0), 100u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(LatencyHistogram, BucketsTileTheRangeWithBoundedWidth) {
  for (std::size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::bucketHigh(b) + 1, LatencyHistogram::bucketLow(b + 1)) << b;
    const uint64_t low = LatencyHistogram::bucketLow(b);
    const uint64_t width = LatencyHistogram::bucketHigh(b) - low + 1;
    if (low >= LatencyHistogram::kLinear) {
      ASSERT_LE(width * 128, low) << b;
    }
  }
  for (uint64_t v : {0ull, 255ull, 256ull, 257ull, 1'000'000ull, 3'000'000'000ull, ~0ull}) {
    const std::size_t b = LatencyHistogram::bucketOf(v);
    EXPECT_LE(LatencyHistogram::bucketLow(b), v);
    EXPECT_GE(LatencyHistogram::bucketHigh(b), v);
  }
}

TEST(LatencyHistogram, PercentilesWithinOnePercentOfExact) {
  // Log-normal latencies around 1 ms with a long tail, plus a few multi-second
  // retransmission outliers.
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(1e6), 1.0);
  std::vector<uint64_t> samples;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<uint64_t>(dist(rng));
    samples.push_back(v);
    h.record(v);
  }
  for (uint64_t v : {3'000'000'000ull, 6'000'000'000ull}) {
    samples.push_back(v);
    h.record(v);
  }
  for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const auto exact = static_cast<double>(exactPercentile(samples, q));
    const auto got = static_cast<double>(h.percentile(q));
    EXPECT_LE(std::abs(got - exact), exact * 0.01) << "q=" << q << " exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.max(), 6'000'000'000u);
  EXPECT_EQ(h.count(), samples.size());
}

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (uint64_t v = 1000; v < 2'000'000; v += 997) {
    (v % 2 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.min(), all.min());
  for (double q : {0.5, 0.99, 0.999}) EXPECT_EQ(a.percentile(q), all.percentile(q));
}

}  // namespace
}  // namespace gtpcp::peer
