// The log's formatters (text, JSON, the journal's priority prefix), the log
// file sink that SIGHUP reopens and that rotates by size, and init().
//
// SIGHUP protocol: the handler only bumps g_reopen_requests. init() blocks
// SIGHUP in the thread that calls it (main, before any other thread starts,
// so every later thread inherits the block) and the log's own thread
// unblocks it: the signal is always delivered to the log thread, so no
// process loop ever sees EINTR from it. That thread compares the counter
// with the last value it acted on before each line and on each flush (every
// second, spdlog::flush_every), and reopens the file when it moved.
#include "common/log/log.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <vector>

#include <spdlog/async.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace gtpcp::log {

namespace {

// Bumped by the SIGHUP handler, read by the log thread. Relaxed: it carries
// no other data; the reader only needs to see that it changed.
std::atomic<uint32_t> g_reopen_requests{0};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "used from a signal handler");

void onHangup(int) { requestReopen(); }

// Whether file descriptor `fd` is open on `path` already.
bool sameFile(int fd, const std::string& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void put(spdlog::memory_buf_t& out, std::string_view text) { out.append(text.data(), text.data() + text.size()); }

// "info", "warning": spdlog's names, as the text format always wrote them.
std::string_view levelName(spdlog::level::level_enum level) {
  const spdlog::string_view_t name = spdlog::level::to_string_view(level);
  return {name.data(), name.size()};
}

// The message without trailing newlines, which would only end it with empty
// continuation lines.
// event() logs through a logger of this name, beside the process's own on
// the same sinks, and puts after the message, per field, the separator, 'n'
// (number) or 's' (string), the key, '=' and the value. Only that logger's
// lines are read for fields, and event() takes the separator (ASCII US) out
// of the message and the values: no byte a peer sent, logged anywhere, can
// make a field.
constexpr std::string_view kEventLogger = kEventLoggerName;
constexpr char kFieldSeparator = '\x1f';
std::shared_ptr<spdlog::logger> g_event_logger;

bool carriesFields(const spdlog::details::log_msg& msg) {
  return std::string_view(msg.logger_name.data(), msg.logger_name.size()) == kEventLogger;
}

// The message without its fields.
std::string_view messageOf(const spdlog::details::log_msg& msg) {
  std::string_view text(msg.payload.data(), msg.payload.size());
  if (carriesFields(msg)) text = text.substr(0, text.find(kFieldSeparator));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// The fields event() appended, as they are ("" when none).
std::string_view fieldsOf(const spdlog::details::log_msg& msg) {
  if (!carriesFields(msg)) return {};
  const std::string_view text(msg.payload.data(), msg.payload.size());
  const std::size_t at = text.find(kFieldSeparator);
  return at == std::string_view::npos ? std::string_view() : text.substr(at);
}

// "2024-05-01T12:00:00.123456Z": RFC 3339, UTC, microseconds.
void putTime(spdlog::memory_buf_t& out, spdlog::log_clock::time_point when) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch()).count();
  int64_t seconds = us / 1'000'000;
  int64_t fraction = us % 1'000'000;
  if (fraction < 0) {
    fraction += 1'000'000;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  struct tm utc {};
  ::gmtime_r(&t, &utc);
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", utc.tm_year + 1900,
                 utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
}

// The length of the well-formed UTF-8 sequence at text[at] (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), 0 when there is none.
std::size_t utf8Length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char b0 = byte(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (at + n > text.size() || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return n;
}

// `text` as a JSON string: quotes, backslashes and control characters
// escaped, each byte that starts no well-formed UTF-8 sequence replaced by
// U+FFFD, so that any byte string (a peer's APN) gives valid JSON.
void putJsonString(spdlog::memory_buf_t& out, std::string_view text) {
  out.push_back('"');
  for (std::size_t i = 0; i < text.size();) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch >= 0x80) {
      const std::size_t n = utf8Length(text, i);
      put(out, n == 0 ? std::string_view("\xEF\xBF\xBD") : text.substr(i, n));
      i += n == 0 ? 1 : n;
      continue;
    }
    switch (ch) {
      case '"': put(out, "\\\""); break;
      case '\\': put(out, "\\\\"); break;
      case '\n': put(out, "\\n"); break;
      case '\r': put(out, "\\r"); break;
      case '\t': put(out, "\\t"); break;
      case '\b': put(out, "\\b"); break;
      case '\f': put(out, "\\f"); break;
      default:
        if (ch < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", ch);
        else
          out.push_back(static_cast<char>(ch));
    }
    ++i;
  }
  out.push_back('"');
}

// The syslog priority of `level` as sd-daemon(3) spells it: "<3>" is SD_ERR.
void putPriority(spdlog::memory_buf_t& out, spdlog::level::level_enum level) {
  char digit = '6';  // SD_INFO
  switch (level) {
    case spdlog::level::critical: digit = '2'; break;  // SD_CRIT
    case spdlog::level::err: digit = '3'; break;       // SD_ERR
    case spdlog::level::warn: digit = '4'; break;      // SD_WARNING
    case spdlog::level::debug:
    case spdlog::level::trace: digit = '7'; break;     // SD_DEBUG
    default: break;
  }
  out.push_back('<');
  out.push_back(digit);
  out.push_back('>');
}

// "<time> <name>[<pid>] <level>: <message>", continuation lines of a
// multi-line message indented by kContinuation. The journal's variant puts
// the priority before every line (the journal reads each line on its own)
// and leaves out the time.
class TextFormatter final : public spdlog::formatter {
 public:
  static constexpr std::string_view kContinuation = "    ";

  TextFormatter(std::string name, int pid, bool journald) : name_(std::move(name)), pid_(pid), journald_(journald) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& out) override {
    const std::string_view text = messageOf(msg);
    std::size_t start = 0;
    for (bool first = true;; first = false) {
      const std::size_t newline = text.find('\n', start);
      if (journald_) putPriority(out, msg.level);
      if (first) {
        if (!journald_) {
          putTime(out, msg.time);
          out.push_back(' ');
        }
        fmt::format_to(std::back_inserter(out), "{}[{}] ", name_, pid_);
        put(out, levelName(msg.level));
        put(out, ": ");
      } else {
        put(out, kContinuation);
      }
      put(out, text.substr(start, newline == std::string_view::npos ? std::string_view::npos : newline - start));
      out.push_back('\n');
      if (newline == std::string_view::npos) break;
      start = newline + 1;
    }
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<TextFormatter>(name_, pid_, journald_);
  }

 private:
  std::string name_;
  int pid_;
  bool journald_;
};

// One JSON object per line: time, level, process, pid, event. The journal's
// variant leaves out the time and puts the priority before the object.
class JsonFormatter final : public spdlog::formatter {
 public:
  JsonFormatter(std::string name, int pid, bool journald) : name_(std::move(name)), pid_(pid), journald_(journald) {
    spdlog::memory_buf_t quoted;
    putJsonString(quoted, name_);
    quoted_name_.assign(quoted.data(), quoted.size());
  }

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& out) override {
    if (journald_) {
      putPriority(out, msg.level);
      put(out, "{");
    } else {
      put(out, "{\"time\":\"");
      putTime(out, msg.time);
      put(out, "\",");
    }
    put(out, "\"level\":\"");
    put(out, levelName(msg.level));
    put(out, "\",\"process\":");
    put(out, quoted_name_);
    fmt::format_to(std::back_inserter(out), ",\"pid\":{},\"event\":", pid_);
    putJsonString(out, messageOf(msg));
    std::string_view fields = fieldsOf(msg);
    while (!fields.empty()) {
      fields.remove_prefix(1);  // the separator
      const std::size_t end = std::min(fields.find(kFieldSeparator), fields.size());
      const std::string_view f = fields.substr(0, end);
      fields.remove_prefix(end);
      const std::size_t eq = f.find('=');
      if (f.size() < 2 || eq == std::string_view::npos) continue;
      out.push_back(',');
      putJsonString(out, f.substr(1, eq - 1));
      out.push_back(':');
      if (f[0] == 'n') {
        put(out, f.substr(eq + 1));
      } else {
        putJsonString(out, f.substr(eq + 1));
      }
    }
    put(out, "}\n");
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(name_, pid_, journald_);
  }

 private:
  std::string name_;
  std::string quoted_name_;
  int pid_;
  bool journald_;
};

// The log file. Written with write(2), unbuffered: a line is in the file as
// soon as it is logged (a crash loses none) and in order with what the
// runtime writes to stderr when stderr is the same file. Only the log thread
// calls it (the logger is asynchronous); base_sink's mutex is uncontended.
class LogFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens `path` for appending; throws spdlog::spdlog_ex when it cannot.
  // `follow_stdout`/`follow_stderr`: those descriptors are the file and are
  // re-pointed at each new file (reopen, rotation).
  LogFileSink(std::string path, uint64_t max_bytes, uint32_t keep, bool follow_stdout, bool follow_stderr)
      : path_(std::move(path)),
        max_bytes_(max_bytes),
        keep_(keep == 0 ? 1 : keep),
        follow_stdout_(follow_stdout),
        follow_stderr_(follow_stderr),
        seen_requests_(g_reopen_requests.load(std::memory_order_relaxed)) {
    fd_ = open();
    if (fd_ < 0) {
      const int error = errno;
      throw spdlog::spdlog_ex("cannot open " + path_, error);
    }
    size_ = sizeOf(fd_);
  }
  ~LogFileSink() override {
    if (fd_ >= 0) ::close(fd_);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    reopenIfAsked();
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    if (max_bytes_ != 0 && size_ != 0 && size_ + line.size() > max_bytes_) rotate();
    write(line);
  }
  void flush_() override { reopenIfAsked(); }

 private:
  int open() const { return ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644); }
  static uint64_t sizeOf(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  }

  void write(const spdlog::memory_buf_t& line) {
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a full disk: nowhere to say so
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    size_ += line.size();
  }
  // A line of the log's own (a reopen, a rotation that failed), in the
  // format of the others.
  void note(spdlog::level::level_enum level, const std::string& text) {
    const spdlog::details::log_msg msg(spdlog::string_view_t{}, level, text);
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    write(line);
  }

  // `fd` becomes the file, and stdout and stderr when they follow it.
  void adopt(int fd) {
    if (follow_stdout_) ::dup2(fd, STDOUT_FILENO);
    if (follow_stderr_) ::dup2(fd, STDERR_FILENO);
    ::close(fd_);
    fd_ = fd;
    size_ = sizeOf(fd);
  }

  void reopenIfAsked() {
    const uint32_t requests = g_reopen_requests.load(std::memory_order_relaxed);
    if (requests == seen_requests_) return;
    seen_requests_ = requests;
    const int fd = open();
    if (fd < 0) {
      const int error = errno;
      note(spdlog::level::err, "cannot reopen the log file " + path_ + ": " + std::strerror(error) +
                                   "; still writing to the file it was");
      return;
    }
    adopt(fd);
    note(spdlog::level::info, "log file reopened on SIGHUP");
  }

  // name.log.<keep-1> -> name.log.<keep> (the oldest, dropped), ... ,
  // name.log -> name.log.1, then a new name.log: spdlog's rotating sink's
  // scheme, with stdout and stderr following.
  void rotate() {
    for (uint32_t i = keep_; i > 1; --i)
      ::rename((path_ + "." + std::to_string(i - 1)).c_str(), (path_ + "." + std::to_string(i)).c_str());
    int fd = -1;
    if (::rename(path_.c_str(), (path_ + ".1").c_str()) == 0) fd = open();
    if (fd < 0) {
      const int error = errno;
      // Not again for another max_bytes: one note, not one per line.
      size_ = 0;
      note(spdlog::level::err, "cannot rotate the log file " + path_ + ": " + std::strerror(error) +
                                   "; going on in it");
      return;
    }
    adopt(fd);
  }

  const std::string path_;
  const uint64_t max_bytes_;
  const uint32_t keep_;
  const bool follow_stdout_;
  const bool follow_stderr_;
  int fd_ = -1;
  uint64_t size_ = 0;  // of the file, as far as this sink wrote it
  uint32_t seen_requests_;
};

// The SIGHUP handler for the process, and the signal blocked in the calling
// thread (see the protocol at the top).
void takeHangup() {
  struct sigaction sa {};
  sa.sa_handler = onHangup;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGHUP, &sa, nullptr);
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &hangup, nullptr);
}

// Runs first in the log thread.
void acceptHangupHere() {
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  ::pthread_sigmask(SIG_UNBLOCK, &hangup, nullptr);
}

}  // namespace

void requestReopen() noexcept { g_reopen_requests.fetch_add(1, std::memory_order_relaxed); }

std::unique_ptr<spdlog::formatter> makeFormatter(Format format, Output output, std::string_view name, int pid) {
  const bool journald = output == Output::kJournald;
  if (format == Format::kJson) return std::make_unique<JsonFormatter>(std::string(name), pid, journald);
  return std::make_unique<TextFormatter>(std::string(name), pid, journald);
}

void init(const std::string& name, const Options& options) {
  takeHangup();
  // Log lines are few (per-datagram events are counters): 1,024 queued
  // lines are plenty, and 8,192 cost every process 800 page faults at start.
  spdlog::init_thread_pool(1024, 1, acceptHangupHere);
  std::vector<spdlog::sink_ptr> sinks;
  bool stderr_is_file = false;
  if (options.output == Output::kFile && !options.file.empty()) {
    const bool stdout_follows = sameFile(STDOUT_FILENO, options.file);
    const bool stderr_follows = sameFile(STDERR_FILENO, options.file);
    try {
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(options.file).parent_path(), ec);
      sinks.push_back(std::make_shared<LogFileSink>(options.file, options.max_bytes, options.keep, stdout_follows,
                                                    stderr_follows));
      stderr_is_file = stderr_follows;
    } catch (const spdlog::spdlog_ex& e) {
      // The log still reaches stderr; say why the file has none.
      std::fprintf(stderr, "%s: log file %s: %s\n", name.c_str(), options.file.c_str(), e.what());
    }
  }
  // When stderr already is the file, each line is written once.
  if (!stderr_is_file) sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto logger = std::make_shared<spdlog::async_logger>(name, sinks.begin(), sinks.end(), spdlog::thread_pool(),
                                                       spdlog::async_overflow_policy::overrun_oldest);
  // The process name and PID on every line: a replaced process logs to the
  // same file as the one before it.
  logger->set_formatter(makeFormatter(options.format, options.output, name, static_cast<int>(::getpid())));
  logger->set_level(spdlog::level::from_str(options.level));
  logger->flush_on(spdlog::level::warn);
  g_event_logger = logger->clone(std::string(kEventLogger));
  spdlog::set_default_logger(logger);
  // Each flush lets the log thread act on a SIGHUP that came while nothing
  // was logged (the file sink itself writes unbuffered).
  if (options.output == Output::kFile && !options.file.empty()) spdlog::flush_every(std::chrono::seconds(1));
}

void init(const std::string& name, std::string_view level, const std::string& file) {
  Options options;
  options.level = std::string(level);
  options.file = file;
  init(name, options);
}

void shutdown() {
  g_event_logger.reset();
  spdlog::shutdown();
}

void event(spdlog::level::level_enum level, std::string_view message, std::initializer_list<Field> fields) {
  std::string text;
  for (char c : message) text += c == kFieldSeparator ? ' ' : c;
  // Before init() (a test, a tool): the message alone.
  if (!g_event_logger) {
    spdlog::log(level, spdlog::string_view_t(text.data(), text.size()));
    return;
  }
  for (const Field& f : fields) {
    text += kFieldSeparator;
    text += f.number ? 'n' : 's';
    text += f.key;
    text += '=';
    for (char c : f.value) text += c == kFieldSeparator ? ' ' : c;
  }
  g_event_logger->log(level, spdlog::string_view_t(text.data(), text.size()));
}

std::string maskDigits(std::string_view digits) {
  std::string out(digits);
  if (out.size() <= 6) return std::string(out.size(), '*');
  for (std::size_t i = 5; i + 1 < out.size(); ++i) out[i] = '*';
  return out;
}

}  // namespace gtpcp::log
