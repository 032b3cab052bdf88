#include "common/log/log.h"

#include <spdlog/async.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace gtpcp::log {

void init(const std::string& name, std::string_view level) {
  spdlog::init_thread_pool(8192, 1);
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::async_logger>(name, sink, spdlog::thread_pool(),
                                                       spdlog::async_overflow_policy::overrun_oldest);
  // The process name and PID on every line: a replaced process logs to the
  // same file as the one before it.
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %n[%P] %l: %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(std::string(level)));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

void shutdown() { spdlog::shutdown(); }

std::string maskDigits(std::string_view digits) {
  std::string out(digits);
  if (out.size() <= 6) return std::string(out.size(), '*');
  for (std::size_t i = 5; i + 1 < out.size(); ++i) out[i] = '*';
  return out;
}

}  // namespace gtpcp::log
