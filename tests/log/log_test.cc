// Process logging: the file in the log directory and stderr, each line with
// the process name and PID, written once when stderr already is that file;
// the text, JSON and journal formats (a multi-line message as one event,
// JSON escaping of any byte string); rotation by size and reopening on
// SIGHUP, stderr following the file; IMSI masking; the rate limit of
// hot-path warnings.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/log/log.h"

namespace gtpcp::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  LogTest() {
    char tmpl[] = "/tmp/gtpcp-log-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~LogTest() override { std::filesystem::remove_all(dir_); }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  }
  // Runs `body` with stderr pointed at `path` (appending), then restores it.
  template <class F>
  static void withStderrAt(const std::string& path, F body) {
    const int saved = ::dup(STDERR_FILENO);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ASSERT_GE(fd, 0);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
    body();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
  }

  std::string dir_;
};

TEST_F(LogTest, LinesGoToTheLogDirectoryWithNameAndPid) {
  const std::string file = dir_ + "/logs/worker-3.log";  // the directory is made
  const std::string elsewhere = dir_ + "/stderr.txt";
  withStderrAt(elsewhere, [&] {
    init("worker-3", "info", file);
    spdlog::info("resumed {} sessions", 12);
    spdlog::debug("not at info");
    shutdown();
  });
  const std::string text = read(file);
  EXPECT_NE(text.find("worker-3[" + std::to_string(::getpid()) + "] info: resumed 12 sessions"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("not at info"), std::string::npos);
  EXPECT_EQ(count(read(elsewhere), "resumed 12 sessions"), 1) << "stderr has it too";
}

TEST_F(LogTest, StderrAlreadyOnTheFileWritesEachLineOnce) {
  const std::string file = dir_ + "/forwarder.log";
  withStderrAt(file, [&] {
    init("forwarder", "info", file);
    spdlog::warn("one line");
    shutdown();
  });
  EXPECT_EQ(count(read(file), "one line"), 1) << read(file);
}

TEST_F(LogTest, AnUnwritableFileLeavesStderr) {
  const std::string elsewhere = dir_ + "/stderr.txt";
  withStderrAt(elsewhere, [&] {
    init("persister", "info", "/proc/gtpcp-no-such/persister.log");
    spdlog::error("still logged");
    shutdown();
  });
  const std::string text = read(elsewhere);
  EXPECT_NE(text.find("still logged"), std::string::npos) << text;
  EXPECT_NE(text.find("log file /proc/gtpcp-no-such/persister.log"), std::string::npos) << text;
}

// Until `done` holds, checked every 10 ms for at most 5 s.
template <class F>
bool waitFor(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_F(LogTest, SizeRotationKeepsTheNewestFilesAndStderrFollows) {
  const std::string file = dir_ + "/worker-1.log";
  constexpr int kLines = 200;
  withStderrAt(file, [&] {
    Options o;
    o.file = file;
    o.max_bytes = 1000;
    o.keep = 3;
    init("worker-1", o);
    for (int i = 0; i < kLines; ++i) spdlog::info("line {:04} {}", i, std::string(40, 'x'));
    shutdown();
    // What the runtime prints after the last rotation lands in the new file.
    const std::string after = "printed to stderr after rotating\n";
    ASSERT_EQ(::write(STDERR_FILENO, after.data(), after.size()), ssize_t(after.size()));
  });
  // Oldest first: .3, .2, .1, then the file itself.
  std::string all;
  for (const std::string suffix : {".3", ".2", ".1", ""}) {
    const std::string path = file + suffix;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_LE(std::filesystem::file_size(path), 1000u + 40) << path;  // + the stderr line
    if (!suffix.empty()) {
      EXPECT_LE(std::filesystem::file_size(path), 1000u) << path;
    }
    all += read(path);
  }
  EXPECT_FALSE(std::filesystem::exists(file + ".4")) << "only log.keep rotated files";
  EXPECT_EQ(count(read(file), "printed to stderr after rotating"), 1) << read(file);
  // The files hold the newest lines, in order, none lost between them.
  int expected = -1;
  for (const std::string& line : linesOf(all)) {
    const auto at = line.find("line ");
    if (at == std::string::npos) continue;
    const int n = std::stoi(line.substr(at + 5, 4));
    if (expected >= 0) {
      EXPECT_EQ(n, expected) << line;
    }
    expected = n + 1;
  }
  EXPECT_EQ(expected, kLines);
}

TEST_F(LogTest, SighupReopensTheMovedFileAndStderrFollows) {
  const std::string file = dir_ + "/persister.log";
  const std::string moved = file + ".moved";
  withStderrAt(file, [&] {
    Options o;
    o.file = file;
    init("persister", o);
    spdlog::info("before the move");
    ASSERT_TRUE(waitFor([&] { return count(read(file), "before the move") == 1; }));
    std::filesystem::rename(file, moved);  // what logrotate does
    // To the process, not this thread: init() blocked SIGHUP here, so it
    // reaches the log's own thread.
    ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);
    // Nothing logged meanwhile: the periodic flush has it act.
    ASSERT_TRUE(waitFor([&] { return count(read(file), "log file reopened on SIGHUP") == 1; })) << read(moved);
    spdlog::info("after the move");
    shutdown();
    const std::string after = "printed to stderr later\n";
    ASSERT_EQ(::write(STDERR_FILENO, after.data(), after.size()), ssize_t(after.size()));
  });
  const std::string old_text = read(moved);
  const std::string new_text = read(file);
  EXPECT_EQ(count(old_text, "before the move"), 1) << old_text;
  EXPECT_EQ(count(old_text, "after the move"), 0) << old_text;
  EXPECT_EQ(count(new_text, "after the move"), 1) << new_text;
  EXPECT_EQ(count(new_text, "printed to stderr later"), 1) << new_text;
  EXPECT_EQ(count(old_text, "printed to stderr"), 0) << old_text;
}

TEST_F(LogTest, StderrAndJournaldOutputsOpenNoFile) {
  const std::string file = dir_ + "/forwarder.log";
  const std::string elsewhere = dir_ + "/stderr.txt";
  withStderrAt(elsewhere, [&] {
    Options o;
    o.file = file;
    o.output = Output::kStderr;
    init("forwarder", o);
    spdlog::info("to stderr");
    shutdown();
    o.output = Output::kJournald;
    init("forwarder", o);
    spdlog::error("to the journal");
    // SIGHUP with no file: nothing to do, and the process goes on.
    ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);
    spdlog::warn("still here");
    shutdown();
  });
  EXPECT_FALSE(std::filesystem::exists(file));
  const std::vector<std::string> lines = linesOf(read(elsewhere));
  ASSERT_EQ(lines.size(), 3u) << read(elsewhere);
  const std::string pid = std::to_string(::getpid());
  EXPECT_TRUE(lines[0].ends_with("Z forwarder[" + pid + "] info: to stderr")) << lines[0];
  EXPECT_EQ(lines[1], "<3>forwarder[" + pid + "] error: to the journal");
  EXPECT_EQ(lines[2], "<4>forwarder[" + pid + "] warning: still here");
}

// -- formatters ----------------------------------------------------------------

// `msg` at `level`, logged at 2024-05-01T12:34:56.123456Z.
std::string formatted(Format format, Output output, spdlog::level::level_enum level, std::string_view msg) {
  spdlog::details::log_msg m(spdlog::string_view_t{}, level, spdlog::string_view_t(msg.data(), msg.size()));
  m.time = spdlog::log_clock::time_point(std::chrono::microseconds(1714566896123456));
  spdlog::memory_buf_t out;
  makeFormatter(format, output, "worker-0", 4242)->format(m, out);
  return std::string(out.data(), out.size());
}

TEST(JsonFormat, OneObjectPerLineWithEveryField) {
  const std::string line = formatted(Format::kJson, Output::kFile, spdlog::level::warn, "ring full");
  ASSERT_EQ(line.find('\n'), line.size() - 1) << line;
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j.size(), 5u) << j;
  EXPECT_EQ(j["time"], "2024-05-01T12:34:56.123456Z");
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["process"], "worker-0");
  EXPECT_EQ(j["pid"], 4242);
  EXPECT_EQ(j["event"], "ring full");
  // Fields in a fixed order, for readers that grep.
  EXPECT_EQ(line.rfind("{\"time\":\"2024-05-01T12:34:56.123456Z\",\"level\":\"warning\",", 0), 0u) << line;
}

TEST(JsonFormat, EscapesAnyByteStringIntoValidJson) {
  // Quotes, backslashes, control characters, valid UTF-8 of 2 to 4 bytes.
  const std::string text = "say \"hi\" \\ tab\there\x01\x1f del\x7f caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  const std::string line = formatted(Format::kJson, Output::kFile, spdlog::level::info, text);
  EXPECT_NE(line.find("\\\"hi\\\" \\\\ tab\\there\\u0001\\u001f"), std::string::npos) << line;
  EXPECT_EQ(nlohmann::json::parse(line)["event"], text);

  // A lone continuation byte, a truncated sequence, an overlong '/', a UTF-16
  // surrogate, a code point above U+10FFFF, 0xFF: each byte becomes U+FFFD.
  const std::string bad = "a\x80" "b\xE2\x82" "c\xC0\xAF" "d\xED\xA0\x80" "e\xF4\x90\x80\x80" "f\xFF";
  const std::string bad_line = formatted(Format::kJson, Output::kFile, spdlog::level::info, bad);
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(nlohmann::json::parse(bad_line)["event"],
            "a" + r + "b" + r + r + "c" + r + r + "d" + r + r + r + "e" + r + r + r + r + "f" + r);
}

TEST(JsonFormat, AMultiLineMessageIsOneLine) {
  const std::string text = "reload refused:\nrouting.yaml:3: pools.a: unknown key\nrouting.yaml:9: rules[0]: no pool\n";
  const std::string line = formatted(Format::kJson, Output::kFile, spdlog::level::err, text);
  ASSERT_EQ(line.find('\n'), line.size() - 1) << line;
  // The message without its trailing newline.
  EXPECT_EQ(nlohmann::json::parse(line)["event"], text.substr(0, text.size() - 1));
}

TEST(JsonFormat, ForTheJournalCarriesThePriorityAndNoTime) {
  const std::string line = formatted(Format::kJson, Output::kJournald, spdlog::level::critical, "cannot start");
  ASSERT_EQ(line.rfind("<2>{", 0), 0u) << line;
  const auto j = nlohmann::json::parse(line.substr(3));
  EXPECT_FALSE(j.contains("time")) << j;
  EXPECT_EQ(j["level"], "critical");
  EXPECT_EQ(j["pid"], 4242);
}

// An event's line as event() hands it to the sinks: its logger's name, the
// message, then each field after ASCII US.
std::string formattedEvent(Format format, std::string_view payload) {
  spdlog::details::log_msg m(spdlog::string_view_t(kEventLoggerName.data(), kEventLoggerName.size()),
                             spdlog::level::warn, spdlog::string_view_t(payload.data(), payload.size()));
  m.time = spdlog::log_clock::time_point(std::chrono::microseconds(1714566896123456));
  spdlog::memory_buf_t out;
  makeFormatter(format, Output::kFile, "forwarder", 7)->format(m, out);
  return std::string(out.data(), out.size());
}

TEST(EventFields, AreMembersOfTheJsonObjectAndLeftOutOfText) {
  const std::string payload = "gateway pgw1 down\x1fsgateway_event=down\x1fsgateway=pgw1\x1fnmisses=3\x1fsnote=a \"b\"";
  const auto j = nlohmann::json::parse(formattedEvent(Format::kJson, payload));
  EXPECT_EQ(j["event"], "gateway pgw1 down");
  EXPECT_EQ(j["gateway_event"], "down");
  EXPECT_EQ(j["gateway"], "pgw1");
  EXPECT_EQ(j["misses"], 3) << "a number, not a string";
  EXPECT_EQ(j["note"], "a \"b\"");
  EXPECT_EQ(j.size(), 9u) << j;
  EXPECT_EQ(formattedEvent(Format::kText, payload), "2024-05-01T12:34:56.123456Z forwarder[7] warning: gateway pgw1 down\n");
}

TEST(EventFields, NoOtherLoggersLineIsReadForFields) {
  // A peer's bytes in an ordinary line (the unit separator among them) stay
  // the message: only event()'s logger carries fields.
  const std::string text = "apn x\x1fsgateway=forged";
  const auto j = nlohmann::json::parse(formatted(Format::kJson, Output::kFile, spdlog::level::info, text));
  EXPECT_EQ(j["event"], text);
  EXPECT_FALSE(j.contains("gateway")) << j;
}

TEST_F(LogTest, AnEventsFieldsReachTheFileAndAForgedSeparatorDoesNot) {
  Options o;
  o.format = Format::kJson;
  o.file = dir_ + "/forwarder.log";
  withStderrAt(dir_ + "/stderr.txt", [&] {
    init("forwarder", o);
    event(spdlog::level::info, "gateway a up\x1fsgateway=forged", {{"gateway", "a\x1fsx=y"}, field("down_ms", 1500)});
    shutdown();
  });
  const std::string text = read(dir_ + "/forwarder.log");
  const auto j = nlohmann::json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(j["event"], "gateway a up sgateway=forged") << "the separator taken out of the message";
  EXPECT_EQ(j["gateway"], "a sx=y") << "and out of the values";
  EXPECT_EQ(j["down_ms"], 1500);
  EXPECT_FALSE(j.contains("x")) << j;
}

TEST(TextFormat, IndentsTheFurtherLinesOfAMessage) {
  const std::string line =
      formatted(Format::kText, Output::kFile, spdlog::level::err, "reload refused:\nfirst error\n\nthird\n");
  EXPECT_EQ(line,
            "2024-05-01T12:34:56.123456Z worker-0[4242] error: reload refused:\n"
            "    first error\n"
            "    \n"
            "    third\n");
  EXPECT_EQ(formatted(Format::kText, Output::kFile, spdlog::level::info, "one line"),
            "2024-05-01T12:34:56.123456Z worker-0[4242] info: one line\n");
}

TEST(TextFormat, ForTheJournalPrefixesEveryLineWithItsPriority) {
  const std::pair<spdlog::level::level_enum, std::string> priorities[] = {
      {spdlog::level::trace, "<7>"}, {spdlog::level::debug, "<7>"}, {spdlog::level::info, "<6>"},
      {spdlog::level::warn, "<4>"},  {spdlog::level::err, "<3>"},   {spdlog::level::critical, "<2>"}};
  for (const auto& [level, prefix] : priorities) {
    const std::string line = formatted(Format::kText, Output::kJournald, level, "a\nb");
    const std::string name(spdlog::level::to_string_view(level).data(), spdlog::level::to_string_view(level).size());
    EXPECT_EQ(line, prefix + "worker-0[4242] " + name + ": a\n" + prefix + "    b\n");
  }
}

TEST(MaskDigits, KeepsTheNetworkAndTheLastDigitOnly) {
  EXPECT_EQ(maskDigits("001010123456789"), "00101*********9");
  EXPECT_EQ(maskDigits("15550000001"), "15550*****1");
  EXPECT_EQ(maskDigits("12345"), "*****");
}

TEST(RateLimit, OneEventPerIntervalAndACountOfTheRest) {
  RateLimit limit(std::chrono::milliseconds(100));
  uint64_t suppressed = 99;
  EXPECT_TRUE(limit.allow(1'000'000'000, suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_FALSE(limit.allow(1'050'000'000, suppressed));
  EXPECT_FALSE(limit.allow(1'090'000'000, suppressed));
  EXPECT_TRUE(limit.allow(1'100'000'000, suppressed));
  EXPECT_EQ(suppressed, 2u);
}

}  // namespace
}  // namespace gtpcp::log
