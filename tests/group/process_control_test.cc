// ProcessControl's view of a group's processes (common/group/process_control.h):
// what a pid file names is running only once it runs its program; one forked
// and not yet exec'd is starting, not gone, so the thread watchdog does not
// start a second one beside it.
#include "common/group/process_control.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "tests/support/process.h"

namespace gtpcp::group {
namespace {

TEST(ProcessControlStarting, AForkedChildNotYetItsProgramIsStartingNotRunning) {
  testing::TempDir dir;
  const std::string yaml = "group: pc1\nrouting: routing.yaml\ngtpc:\n  access:\n    ipv4: 127.0.0.1\nrun_dir: " +
                           dir.path() + "\n";
  auto config = config::parseInstanceConfig(yaml, "gtpcp.yaml", dir.path());
  ASSERT_TRUE(config) << config.error().toString();
  ProcessControl control(*config, dir.file("gtpcp.yaml"), dir.path());
  const std::string pid_file = pathsOf(*config).pidFile("bgpd-bridge");
  std::filesystem::create_directories(std::filesystem::path(pid_file).parent_path());

  // A child of this test that never execs: its command line is this test's.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::ofstream(pid_file) << child << "\n";
  EXPECT_FALSE(control.runningPid("bgpd-bridge")) << "not the bridge's program";
  EXPECT_TRUE(control.starting("bgpd-bridge"));

  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(control.starting("bgpd-bridge")) << "gone is gone";
  EXPECT_FALSE(control.starting("persister")) << "no pid file";
  // A pid file naming a process that runs for long (pid 1): a reused pid.
  std::ofstream(pid_file) << 1 << "\n";
  EXPECT_FALSE(control.starting("bgpd-bridge"));
}

}  // namespace
}  // namespace gtpcp::group
