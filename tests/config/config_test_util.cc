#include "config_test_util.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gtpcp::config::testing {

std::string sourcePath(std::string_view relative) {
  return std::string(GTPCP_SOURCE_DIR) + "/" + std::string(relative);
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::path(GTPCP_BINARY_DIR) / "tests" / "config" / "tmp" /
                   (std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  path_ = dir.string();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(std::string_view name, std::string_view text) const {
  const auto file = std::filesystem::path(path_) / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
  return file.string();
}

std::vector<std::string> lines(const ConfigErrors& errors) {
  std::vector<std::string> out;
  for (const ConfigError& e : errors.errors) out.push_back(e.toString());
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace gtpcp::config::testing
