#include "tests/architecture/include_walls.h"

#include <algorithm>
#include <fstream>
#include <regex>

namespace gtpcp::architecture {

namespace fs = std::filesystem;

namespace {

bool isProcessFolder(const std::string& top) {
  return std::find(kProcessFolders.begin(), kProcessFolders.end(), top) != kProcessFolders.end();
}

std::string topOf(const fs::path& relative) { return relative.begin() == relative.end() ? "" : relative.begin()->string(); }

bool isSource(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".hpp" || ext == ".cpp";
}

// The violations of one file at `relative` (from the root), whose folder is `top`.
void checkFile(const fs::path& root, const fs::path& relative, const std::string& top,
               std::vector<std::string>& out) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::ifstream in(root / relative);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::smatch m;
    if (!std::regex_search(line, m, kInclude)) continue;
    const fs::path target = m[1].str();
    const std::string where = relative.string() + ":" + std::to_string(number) + ": includes " + target.string();
    // A path the compiler finds beside the including file.
    const fs::path beside = (root / relative).parent_path() / target;
    if (fs::exists(beside)) {
      const fs::path resolved = fs::weakly_canonical(beside).lexically_relative(fs::weakly_canonical(root));
      if (topOf(resolved) != top) out.push_back(where + " (outside " + top + "/, by a relative path)");
      continue;
    }
    const std::string target_top = topOf(target);
    if (target_top == "common" || target_top == "proto") continue;
    if (isProcessFolder(top)) {
      if (target_top == top) {
        out.push_back(where + " (a file of its own folder: include it by a path relative to the including file)");
      } else if (isProcessFolder(target_top)) {
        out.push_back(where + " (a header of another process folder, " + target_top +
                      "/: contracts between processes live in common/)");
      } else {
        out.push_back(where + " (a process folder includes only common/ and proto/)");
      }
    } else if (isProcessFolder(target_top) || target_top == "tools" || target_top == "tests") {
      out.push_back(where + " (" + top + "/ is linked by every process: it includes no process folder, tools/ or tests/)");
    }
  }
}

}  // namespace

std::vector<std::string> includeViolations(const fs::path& root) {
  std::vector<std::string> out;
  std::vector<std::string> folders = kProcessFolders;
  folders.push_back("common");
  folders.push_back("proto");
  for (const std::string& folder : folders) {
    if (!fs::is_directory(root / folder)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root / folder))
      if (e.is_regular_file() && isSource(e.path())) files.push_back(e.path().lexically_relative(root));
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) checkFile(root, f, folder, out);
  }
  return out;
}

}  // namespace gtpcp::architecture
