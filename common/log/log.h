// Process logging: spdlog with an asynchronous sink, so the thread that logs
// never waits for the write.
//
// Per-datagram events are counters, not log lines; the hot path may only use
// SPDLOG_LOGGER_TRACE/DEBUG (compiled out of release builds) and rate-limited
// warnings (RateLimit below). IMSI and MSISDN are masked at info and above
// (maskDigits).
//
// Lines are text or JSON (Format) and go to a log file, to stderr, or to
// stderr for systemd's journal (Output). A message of several lines stays one
// event: JSON escapes its newlines, text indents its continuation lines (so a
// newline in a peer's string cannot fake a line of its own either). The log
// file is reopened on SIGHUP (logrotate moves it and signals the process) and
// can be rotated by size, as spdlog's rotating sink does it.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

namespace gtpcp::log {

enum class Format : uint8_t {
  kText,  // 2024-05-01T12:00:00.123456Z worker-3[812] info: message
  kJson,  // {"time":"...","level":"info","process":"worker-3","pid":812,"event":"message"}
};

enum class Output : uint8_t {
  kFile,      // the log file (and stderr, unless stderr already is that file)
  kStderr,    // stderr only
  kJournald,  // stderr only, each line prefixed with its syslog priority
              // ("<3>", sd-daemon(3)) and without time (the journal stamps it)
};

struct Options {
  std::string level = "info";  // trace|debug|info|warn|error|off
  Format format = Format::kText;
  Output output = Output::kFile;
  std::string file;            // kFile: appended to, its directory made; empty: stderr only
  uint64_t max_bytes = 0;      // kFile: rotated before it would grow past this; 0: never
  uint32_t keep = 5;           // kFile: rotated files kept, file.1 (newest) .. file.<keep>
};

// Sets up the default logger of process `name` ("forwarder", "worker-0").
// With Output::kFile, when stderr (or stdout) already is the file (the
// launcher points both there, so that what a crash or the runtime prints
// lands beside the log), each line is written once, and stderr follows the
// file when it is reopened or rotated. Installs the SIGHUP handler
// (requestReopen()) in every output mode, so that SIGHUP never ends a
// process. Called once from main, before other threads start.
void init(const std::string& name, const Options& options);
// The text format to `file` and stderr at `level`.
void init(const std::string& name, std::string_view level, const std::string& file = "");
void shutdown();

// Asks for the log file to be reopened: what the SIGHUP handler calls, and
// the only thing it does (async-signal-safe, any thread). The log's own
// thread reopens the file before its next line, and at the latest within
// about a second (the periodic flush), then writes "log file reopened" to
// the new file.
void requestReopen() noexcept;

// The formatter of every line for `format` and `output` (init() installs
// it; tests format messages with it directly). `name` and `pid` are those
// every line carries.
std::unique_ptr<spdlog::formatter> makeFormatter(Format format, Output output, std::string_view name, int pid);

// A key and its value, carried by an event (event() below) for the tools
// that read JSON logs: what the message says in words, as fields.
struct Field {
  std::string_view key;  // a literal of the call site: [a-z_]+, not time, level, process, pid or event
  std::string value;
  bool number = false;   // an integer: a JSON number, not a string
};

template <class T>
Field field(std::string_view key, const T& value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return {key, std::to_string(value), true};
  } else {
    return {key, fmt::format("{}", value), false};
  }
}

// The logger event() logs through (and the only one whose lines carry fields).
inline constexpr std::string_view kEventLoggerName = "gtpcp.event";

// Logs `message` at `level` with `fields`: in JSON each field is a member of
// the event's object after "event"; the text format shows the message
// alone, which says the same in words. Not for the per-datagram path (it
// allocates).
void event(spdlog::level::level_enum level, std::string_view message, std::initializer_list<Field> fields);

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
