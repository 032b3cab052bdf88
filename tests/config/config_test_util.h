// Helpers shared by the configuration tests: files in a private temporary
// directory, error lists as strings, paths of the example files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config/errors.h"

namespace gtpcp::config::testing {

// Absolute path of a file of the source tree, e.g. "config/gtpcp.yaml".
std::string sourcePath(std::string_view relative);

// A directory of its own under the build tree, removed with the object.
// Tests run in parallel processes: each gets a unique one.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to path()/name (creating directories); returns its path.
  std::string write(std::string_view name, std::string_view text) const;

 private:
  std::string path_;
};

// The errors as "file:line: key: message" strings.
std::vector<std::string> lines(const ConfigErrors& errors);

std::string readFile(const std::string& path);

}  // namespace gtpcp::config::testing
