// Process logging: spdlog with an asynchronous sink, so the thread that logs
// never waits for the write.
//
// Per-datagram events are counters, not log lines; the hot path may only use
// SPDLOG_LOGGER_TRACE/DEBUG (compiled out of release builds) and rate-limited
// warnings (RateLimit below). IMSI and MSISDN are masked at info and above
// (maskDigits).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace gtpcp::log {

// Sets up the default logger for process `name` ("forwarder", "worker-0")
// writing to `file` (appending; empty: none) and to stderr. When stderr
// already is `file` (the launcher points it there, so that what a crash or
// the runtime prints lands beside the log), each line is written once.
// `level`: trace|debug|info|warn|error|off.
void init(const std::string& name, std::string_view level, const std::string& file = "");
void shutdown();

// "001010123456789" -> "00101*********9" : enough to tell subscribers apart in
// a ticket, not enough to identify one.
std::string maskDigits(std::string_view digits);

// Lets one event through per `interval` and counts the ones it held back.
class RateLimit {
 public:
  explicit RateLimit(std::chrono::milliseconds interval) : interval_ns_(uint64_t(interval.count()) * 1'000'000) {}
  // True when the caller may log now; `suppressed` receives how many were
  // held back since the last time.
  bool allow(uint64_t now_ns, uint64_t& suppressed) noexcept {
    if (now_ns - last_ns_ < interval_ns_ && last_ns_ != 0) {
      ++held_;
      return false;
    }
    last_ns_ = now_ns;
    suppressed = held_;
    held_ = 0;
    return true;
  }

 private:
  uint64_t interval_ns_;
  uint64_t last_ns_ = 0;
  uint64_t held_ = 0;
};

}  // namespace gtpcp::log
