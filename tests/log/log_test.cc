// Process logging: the file in the log directory and stderr, each line with
// the process name and PID, written once when stderr already is that file;
// IMSI masking; the rate limit of hot-path warnings.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
