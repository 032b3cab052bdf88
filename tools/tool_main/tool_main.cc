#include "tools/tool_main/tool_main.h"

#include <exception>
#include <iostream>

namespace gtpcp::tools {

int runTool(int argc, char** argv, CLI::App& app, const ToolSteps& steps) {
  bool check_config = false;
  app.add_flag("--check-config", check_config, "Validate the options and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help comes through here too, with exit code 0.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  const std::string& name = app.get_name();
  try {
    const auto errors = steps.configure();
    for (const auto& e : errors) std::cerr << name << ": " << e << "\n";
    if (!errors.empty()) return kExitUsage;
    if (check_config) return 0;
    if (auto e = steps.open(); !e.empty()) {
      std::cerr << name << ": " << e << "\n";
      return kExitUsage;
    }
    return steps.run();
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace gtpcp::tools
