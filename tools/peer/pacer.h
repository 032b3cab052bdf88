// The open-loop schedule of the peer emulator: token k falls due at
// start + k / rate, whatever the responses do, so queueing in the system under
// test shows as latency rather than as a slower offered load.
//
// The caller asks how many tokens are due (due()), issues or discards them,
// and reports them taken (take()). Tokens more than `max_backlog` behind the
// schedule (the emulator itself fell behind) are dropped and counted in
// lagged(), so a stall never turns into an unbounded burst.
#pragma once

#include <cstdint>

namespace gtpcp::peer {

class Pacer {
 public:
  Pacer() = default;
  // `rate` tokens per second (> 0), the first due at `start_ns`.
  Pacer(double rate, int64_t start_ns, uint64_t max_backlog) noexcept;

  // Tokens due at `now_ns` and not yet taken (after dropping the lag).
  uint64_t due(int64_t now_ns) noexcept;
  void take(uint64_t n) noexcept { taken_ += n; }
  // When the next token falls due.
  int64_t nextAt() const noexcept;

  uint64_t taken() const noexcept { return taken_; }
  uint64_t lagged() const noexcept { return lagged_; }
  double rate() const noexcept { return rate_; }

 private:
  double rate_ = 0;
  double ns_per_token_ = 0;
  int64_t start_ = 0;
  uint64_t taken_ = 0;
  uint64_t lagged_ = 0;
  uint64_t max_backlog_ = 0;
};

}  // namespace gtpcp::peer
