// The base of every integration test of the data path: a loopback /24 of the
// test's own, the group (when the test starts one), the emulator runs, and,
// when the test fails, everything needed to understand it from CI output
// alone: the launcher's output, `gtpcp status`, the logs of the run directory
// and the emulator's summary. TearDown stops the group and checks that none of
// its shared memory is left in /dev/shm.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/peer.h"
#include "tests/support/test_group.h"

namespace gtpcp::integration {

// Host numbers in the test's /24.
inline constexpr uint8_t kProxyHost = 1;
inline constexpr uint8_t kSgwHosts[] = {11, 12};
inline constexpr uint8_t kPgwHosts[] = {21, 22, 23, 24, 25};

// A routing document with one pool of one gateway, for every session;
// `extra` is appended (a health_check or failover section).
inline std::string onlyGateway(const std::string& address, const std::string& extra = "") {
  return "version: 1\npools:\n  internet:\n    gateways:\n      - {name: only, address: " + address +
         "}\nrules:\n  - {name: default, pool: internet}\n" + extra;
}
// No Echo Requests to the gateways: for tests that count every datagram.
inline constexpr const char* kNoHealthChecks = "health_check: {interval_ms: 0}\n";

// Whether something is bound to UDP `address`:`port` now (an emulator's
// socket): what a test waits for before sending to it.
inline bool udpPortTaken(const std::string& address, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  const bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

// The group's status once every session is gone and every worker has sent
// on what it took (the last answers may still be on their way out when the
// emulator exits; every datagram of such a run has exactly one answer or
// relay).
inline nlohmann::json settledStatus(testing::TestGroup& g) {
  using namespace std::chrono_literals;
  nlohmann::json s;
  testing::waitUntil(
      [&] {
        s = g.status();
        const uint64_t in = testing::TestGroup::workerSum(s, "worker.datagrams_received");
        return s.value("sessions", 1ull) == 0 && in == testing::TestGroup::workerSum(s, "worker.datagrams_sent") &&
               in == s.at("counters").value("forwarder.datagrams_sent", 0ull);
      },
      5s, 20ms);
  return s;
}

inline uint64_t workers(const nlohmann::json& s, const std::string& counter) {
  return testing::TestGroup::workerSum(s, counter);
}

class DataPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    net_ = testing::freeSubnet({kProxyHost, 11, 12, 21, 22, 23, 24, 25, 30});
  }

  void TearDown() override {
    if (HasFailure()) {
      std::string text;
      for (const auto& n : notes_) text += n + "\n";
      if (group_) text += group_->diagnostics();
      std::fprintf(stderr, "==== diagnostics of the failed test\n%s==== end of diagnostics\n", text.c_str());
    }
    if (group_) {
      group_->stop();
      EXPECT_TRUE(group_->sharedMemoryObjects().empty())
          << "shared memory left in /dev/shm: " << ::testing::PrintToString(group_->sharedMemoryObjects());
    }
  }

  // A group on the test's proxy address (net_.ip(1)); options.address is set.
  testing::TestGroup& makeGroup(testing::GroupOptions options) {
    options.address = net_.addr(kProxyHost);
    group_ = std::make_unique<testing::TestGroup>(options);
    return *group_;
  }
  // makeGroup() and `gtpcp start`, asserting that it serves.
  testing::TestGroup& startGroup(const testing::GroupOptions& options) {
    makeGroup(options);
    EXPECT_TRUE(group_->start()) << "gtpcp start failed";
    return *group_;
  }
  // The same for a group of `workers` with routing document `routing` and
  // more top-level keys of gtpcp.yaml in `extra_yaml`.
  testing::TestGroup& startGroup(unsigned workers, const std::string& routing, const std::string& extra_yaml = "") {
    testing::GroupOptions o;
    o.workers = workers;
    o.routing_yaml = routing;
    o.extra_yaml = extra_yaml;
    return startGroup(o);
  }

  // Runs the emulator against the group and keeps its output for the
  // failure report.
  testing::PeerResult runPeer(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
                              const std::string& name = "peer") {
    testing::PeerResult r = testing::runPeer(args, group_ ? group_->dir().path() : tmp_.path(), timeout, name);
    note(r.describe());
    return r;
  }
  void note(const std::string& text) { notes_.push_back(text); }

  std::string ip(uint8_t host) const { return net_.ip(host); }
  std::string proxy() const { return net_.ip(kProxyHost); }

  testing::Subnet net_;
  std::unique_ptr<testing::TestGroup> group_;
  testing::TempDir tmp_;
  std::vector<std::string> notes_;
};

}  // namespace gtpcp::integration
