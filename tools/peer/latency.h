// Latency distribution of the emulator's transactions: a log-linear histogram
// in the manner of HdrHistogram, fixed size, no allocation when recording.
//
// Values are nanoseconds. Below 256 every value has its own bucket; above,
// each power of two is split into 128 buckets, so a bucket is at most 1/128 of
// its lower bound wide and a reported percentile (the bucket's midpoint,
// clamped to the exact minimum and maximum) is within 0.4% of the exact
// sample. The maximum, minimum, count and sum are exact.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace gtpcp::peer {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 7;                   // 128 buckets per octave
  static constexpr std::size_t kLinear = 2u << kSubBits;    // 256 exact buckets
  static constexpr unsigned kOctaves = 64 - (kSubBits + 1);  // up to 2^64 ns
  static constexpr std::size_t kBuckets = kLinear + kOctaves * (1u << kSubBits);

  void record(uint64_t value_ns) noexcept;
  void merge(const LatencyHistogram& other) noexcept;

  uint64_t count() const noexcept { return count_; }
  uint64_t max() const noexcept { return max_; }
  uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
  double mean() const noexcept { return count_ == 0 ? 0 : static_cast<double>(sum_) / count_; }
  // The value at quantile q in [0, 1]: the sample of rank ceil(q * count)
  // (1-based, at least 1) in sorted order, within the error above. 0 when
  // empty.
  uint64_t percentile(double q) const noexcept;

  // Bucket arithmetic, exposed for tests.
  static std::size_t bucketOf(uint64_t value) noexcept;
  static uint64_t bucketLow(std::size_t bucket) noexcept;
  static uint64_t bucketHigh(std::size_t bucket) noexcept;  // inclusive

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
};

}  // namespace gtpcp::peer
