// The include rule of DESIGN.md ("Processes"), as a check over a source tree:
// a process folder includes only common/ and proto/ (and its own files, by
// paths relative to the including file, so that its folder's name never
// appears in an #include); common/ and proto/ include nothing of a process
// folder, of tools/ or of tests/. Every arrow that breaks the rule is one
// line: "<file>:<line>: includes <path> (<why>)".
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gtpcp::architecture {

// The process folders, present and to come.
inline const std::vector<std::string> kProcessFolders = {"forwarder", "workers",     "persister", "watchdog",
                                                         "launcher",  "bgpd-bridge", "console"};

// Every violation in the tree at `root`, in file order.
std::vector<std::string> includeViolations(const std::filesystem::path& root);

}  // namespace gtpcp::architecture
