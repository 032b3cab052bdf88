#include "common/log/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace gtpcp::log {

namespace {
// Whether file descriptor `fd` is open on `path` already.
bool sameFile(int fd, const std::string& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
}  // namespace

void init(const std::string& name, std::string_view level, const std::string& file) {
  // Log lines are few (per-datagram events are counters): 1,024 queued
  // lines are plenty, and 8,192 cost every process 800 page faults at start.
  spdlog::init_thread_pool(1024, 1);
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  if (!file.empty() && !sameFile(STDERR_FILENO, file)) {
    try {
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, false));
    } catch (const spdlog::spdlog_ex& e) {
      // The log still reaches stderr; say why the file has none.
      std::fprintf(stderr, "%s: log file %s: %s\n", name.c_str(), file.c_str(), e.what());
    }
  }
  auto logger = std::make_shared<spdlog::async_logger>(name, sinks.begin(), sinks.end(), spdlog::thread_pool(),
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
