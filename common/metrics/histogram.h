// Latency histograms that live in shared memory, like the counters
// (counter.h): one writer each, read by the metrics exporter (gtpcp-console)
// from another process.
//
// The buckets are fixed and the same for every histogram of the product, so
// that a dashboard can add histograms of several workers or gateways and
// take quantiles over the sum. Each bucket counts the observations of its
// own interval (not cumulative: one store per observation); the exporter
// adds them up into Prometheus's cumulative `le` buckets. `sum_ns` is the
// sum of the observations, in nanoseconds.
//
// An observation is a few compares and two relaxed stores on lines only the
// writer touches: cheap enough for every datagram of the data path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/metrics/counter.h"

namespace gtpcp::metrics {

// Upper bounds of the buckets, in nanoseconds: from 10 µs (what the proxy
// adds to a datagram on an idle host) to 10 s (past any T3 x N3). The last
// bucket, +Inf, has no bound here.
inline constexpr uint64_t kLatencyBoundsNs[] = {
    10'000,      25'000,      50'000,      100'000,       250'000,       500'000,
    1'000'000,   2'500'000,   5'000'000,   10'000'000,    25'000'000,    50'000'000,
    100'000'000, 250'000'000, 500'000'000, 1'000'000'000, 2'500'000'000, 10'000'000'000,
};
inline constexpr std::size_t kLatencyBuckets = std::size(kLatencyBoundsNs) + 1;

class Histogram {
 public:
  // Only the owning process calls this.
  void observe(uint64_t ns) noexcept {
    std::size_t i = 0;
    while (i < std::size(kLatencyBoundsNs) && ns > kLatencyBoundsNs[i]) ++i;
    buckets_[i].add();
    sum_ns_.add(ns);
  }

  // Readers: the observations of bucket i alone (0..kLatencyBuckets-1, the
  // last one +Inf), and the sum. A reader may see a bucket incremented
  // before the sum is: both are statistics, read a few observations apart.
  uint64_t bucket(std::size_t i) const noexcept { return buckets_[i].load(); }
  uint64_t sumNs() const noexcept { return sum_ns_.load(); }
  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (const Counter& b : buckets_) n += b.load();
    return n;
  }

 private:
  Counter buckets_[kLatencyBuckets];
  Counter sum_ns_;
};
static_assert(sizeof(Histogram) == (kLatencyBuckets + 1) * 8);

}  // namespace gtpcp::metrics
