#include "tools/peer/latency.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gtpcp::peer {

std::size_t LatencyHistogram::bucketOf(uint64_t value) noexcept {
  if (value < kLinear) return static_cast<std::size_t>(value);
  // Octave g >= 1 holds [2^(g+kSubBits), 2^(g+kSubBits+1)); within it the top
  // kSubBits+1 bits of the value (128..255) pick the bucket.
  const unsigned top = 63u - static_cast<unsigned>(std::countl_zero(value));
  const unsigned g = top - kSubBits;
  const uint64_t sub = value >> g;  // in [128, 255]
  return kLinear + (g - 1) * (1u << kSubBits) + static_cast<std::size_t>(sub - (1u << kSubBits));
}

uint64_t LatencyHistogram::bucketLow(std::size_t bucket) noexcept {
  if (bucket < kLinear) return bucket;
  const std::size_t rel = bucket - kLinear;
  const unsigned g = static_cast<unsigned>(rel >> kSubBits) + 1;
  const uint64_t sub = (rel & ((1u << kSubBits) - 1)) + (1u << kSubBits);
  return sub << g;
}

uint64_t LatencyHistogram::bucketHigh(std::size_t bucket) noexcept {
  if (bucket < kLinear) return bucket;
  const std::size_t rel = bucket - kLinear;
  const unsigned g = static_cast<unsigned>(rel >> kSubBits) + 1;
  return bucketLow(bucket) + ((uint64_t{1} << g) - 1);
}

void LatencyHistogram::record(uint64_t value_ns) noexcept {
  ++buckets_[bucketOf(value_ns)];
  ++count_;
  sum_ += value_ns;
  max_ = std::max(max_, value_ns);
  min_ = std::min(min_, value_ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

uint64_t LatencyHistogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const uint64_t low = bucketLow(i);
      const uint64_t mid = low + (bucketHigh(i) - low) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

}  // namespace gtpcp::peer
