// The include rule holds in this tree, and the check finds each kind of
// arrow that breaks it (a checker that can find nothing proves nothing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/architecture/include_walls.h"

namespace gtpcp::architecture {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(IncludeWalls, NoProcessFolderIncludesAnotherAndCommonIncludesNone) {
  const auto violations = includeViolations(GTPCP_SOURCE_DIR);
  std::string all;
  for (const auto& v : violations) all += v + "\n";
  EXPECT_THAT(violations, IsEmpty()) << all;
}

class SyntheticTree : public ::testing::Test {
 protected:
  SyntheticTree() : root_(fs::temp_directory_path() / ("gtpcp_walls_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
  }
  ~SyntheticTree() override { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  fs::path root_;
};

TEST_F(SyntheticTree, FindsEveryKindOfArrowThatBreaksTheRule) {
  write("common/ring/ring.h", "#pragma once\n");
  write("proto/session.proto", "");
  write("workers/lib/proxy.h", "#pragma once\n");
  write("workers/lib/ok.cc",
        "#include \"proxy.h\"\n#include \"common/ring/ring.h\"\n#include \"proto/session.pb.h\"\n#include <vector>\n");
  write("workers/lib/own_by_name.cc", "#include \"workers/lib/proxy.h\"\n");
  write("persister/lib/record.cc", "// a contract taken from the worker\n#include \"workers/lib/proxy.h\"\n");
  write("launcher/lib/x.cc", "#include \"tools/peer/messages.h\"\n");
  write("common/group/status.cc", "#include \"watchdog/lib/supervisor.h\"\n#include \"tests/support/process.h\"\n");
  write("console/lib/y.cc", "#include \"../../workers/lib/proxy.h\"\n");
  const auto v = includeViolations(root_);
  ASSERT_EQ(v.size(), 6u) << ::testing::PrintToString(v);
  EXPECT_THAT(v[0], HasSubstr("workers/lib/own_by_name.cc:1: includes workers/lib/proxy.h (a file of its own folder"));
  EXPECT_THAT(v[1], HasSubstr("persister/lib/record.cc:2: includes workers/lib/proxy.h (a header of another process folder"));
  EXPECT_THAT(v[2], HasSubstr("launcher/lib/x.cc:1: includes tools/peer/messages.h (a process folder includes only"));
  EXPECT_THAT(v[3], HasSubstr("console/lib/y.cc:1: includes ../../workers/lib/proxy.h (outside console/"));
  EXPECT_THAT(v[4], HasSubstr("common/group/status.cc:1: includes watchdog/lib/supervisor.h"));
  EXPECT_THAT(v[5], HasSubstr("common/group/status.cc:2: includes tests/support/process.h"));
}

}  // namespace
}  // namespace gtpcp::architecture
