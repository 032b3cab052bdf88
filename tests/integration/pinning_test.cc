// gtpcp.yaml's cpu.forwarder and cpu.workers pin the processes.
#include <fstream>
#include <string>

#include "tests/integration/fixture.h"

namespace gtpcp::integration {
namespace {

// "Cpus_allowed_list" of a process: the CPUs it may run on, e.g. "1" or "0-1".
std::string allowedCpus(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  }
  return "";
}

class PinningTest : public DataPathTest {};

TEST_F(PinningTest, ProcessesRunOnTheConfiguredCpus) {
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = "version: 1\npools:\n  p:\n    gateways:\n      - {name: g, address: " + ip(21) +
                   "}\nrules:\n  - name: all\n    pool: p\n";
  o.extra_yaml = "cpu:\n  forwarder: 1\n  workers: [0, 1]\n";
  auto& g = startGroup(o);
  EXPECT_EQ(allowedCpus(g.pidOf("forwarder")), "1");
  EXPECT_EQ(allowedCpus(g.pidOf("worker-0")), "0");
  EXPECT_EQ(allowedCpus(g.pidOf("worker-1")), "1");
}

}  // namespace
}  // namespace gtpcp::integration
