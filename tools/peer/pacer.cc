#include "tools/peer/pacer.h"

#include <cmath>

namespace gtpcp::peer {

Pacer::Pacer(double rate, int64_t start_ns, uint64_t max_backlog) noexcept
    : rate_(rate),
      ns_per_token_(1e9 / rate),
      start_(start_ns),
      max_backlog_(max_backlog == 0 ? 1 : max_backlog) {}

uint64_t Pacer::due(int64_t now_ns) noexcept {
  if (rate_ <= 0 || now_ns < start_) return 0;
  // Tokens 0..k are due when start + k * interval <= now.
  const double elapsed = static_cast<double>(now_ns - start_);
  const uint64_t scheduled = static_cast<uint64_t>(std::floor(elapsed / ns_per_token_)) + 1;
  if (scheduled <= taken_) return 0;
  uint64_t n = scheduled - taken_;
  if (n > max_backlog_) {
    lagged_ += n - max_backlog_;
    taken_ += n - max_backlog_;
    n = max_backlog_;
  }
  return n;
}

int64_t Pacer::nextAt() const noexcept {
  return start_ + static_cast<int64_t>(std::ceil(static_cast<double>(taken_) * ns_per_token_));
}

}  // namespace gtpcp::peer
