// The fixture of the tests that run gtpcp-peer and gtpcp-relay as real
// processes over loopback UDP, and a plain UDP socket for a test that plays
// a node itself. Each test uses its own 127.X.Y.0/24 (X >= 64) so that
// concurrent runs (and other developers' tests on 127.0.0.1:2123) do not
// collide; every process is bounded in time and stopped by PID.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tools/peer/messages.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer::testing {

using namespace std::chrono_literals;
// The shared test support, under the names these tests call it by.
using gtpcp::testing::Child;
using gtpcp::testing::readFile;

inline const std::string kPeer = GTPCP_PEER_BIN;
inline const std::string kRelay = GTPCP_RELAY_BIN;

class PeerIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs each test in its own process, several at once: pick the
    // /24 from the test's name, the PID and the time, within
    // 127.64.0.0-127.253.255.255 (clear of 127.0.0.x, where others run).
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::size_t h = std::hash<std::string>{}(
        std::string(info->name()) + "/" + std::to_string(::getpid()) + "/" +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    net_ = (127u << 24) | ((64u + static_cast<uint32_t>(h % 190)) << 16) |
           ((1u + static_cast<uint32_t>((h / 190) % 254)) << 8);
    dir_ = std::filesystem::temp_directory_path() /
           ("gtpcp_peer_test_" + std::to_string(::getpid()) + "_" + info->name());
    // Children append to their output files: start from none.
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
    else std::fprintf(stderr, "outputs kept in %s\n", dir_.c_str());
  }

  uint32_t addr(uint32_t host) const { return net_ | host; }
  std::string ip(uint32_t host) const { return addressToString(addr(host)); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Whether a child has bound port 2123 at `host` within `timeout`: it is ready.
  bool waitBound(uint32_t host, std::chrono::milliseconds timeout = 5s) const {
    return gtpcp::testing::waitUdpBound(toIpv4(addr(host)), 2123, timeout);
  }

  // Starts argv with stdout in `name`.out and stderr in `name`.err.
  Child start(const std::string& name, const std::vector<std::string>& argv) {
    return Child::spawn(argv, path(name + ".out"), path(name + ".err"));
  }
  Child startRelay(const std::vector<std::string>& pairs) {
    std::string list;
    for (const auto& p : pairs) list += (list.empty() ? "" : ",") + p;
    auto relay = start("relay", {kRelay, "--listen", ip(1) + ":2123", "--upstream", ip(21) + ":2123",
                                 "--pairs", list, "--duration", "60", "--json", path("relay.json")});
    EXPECT_TRUE(waitBound(1)) << "relay did not bind";
    return relay;
  }
  nlohmann::json readJson(const std::string& name) {
    const std::string text = readFile(path(name));
    EXPECT_FALSE(text.empty()) << name << " is empty; stderr: " << readFile(path("peer.err"));
    return text.empty() ? nlohmann::json::object() : nlohmann::json::parse(text);
  }
  // Runs gtpcp-peer with SGWs 11,12 and PGW 21 through the relay at .1.
  int runThroughRelay(std::vector<std::string> extra, bool relay_flag = true,
                      std::chrono::seconds timeout = 60s) {
    auto relay = startRelay({ip(11), ip(12)});
    std::vector<std::string> argv{kPeer,     "--proxy", ip(1),        "--sgw", ip(11) + "," + ip(12),
                                  "--pgw",   ip(21),    "--json",     path("peer.json")};
    if (relay_flag) argv.push_back("--relay");
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto peer = start("peer", argv);
    auto status = peer.wait(timeout);
    EXPECT_TRUE(status.has_value()) << "gtpcp-peer did not finish in time";
    if (!status) peer.stop(2s);
    EXPECT_EQ(relay.stop(5s), 0);
    return status.value_or(-1);
  }

  uint32_t net_ = 0;
  std::filesystem::path dir_;
};

// A plain UDP socket of either family, for a test that plays a node or the
// proxy itself.
class UdpClient {
 public:
  explicit UdpClient(const IpAddress& local, uint16_t port = 0) {
    fd_ = ::socket(local.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
    SocketAddress sa{};
    const socklen_t length = toSockaddr(Endpoint{local, port}, sa);
    EXPECT_EQ(::bind(fd_, &sa.any, length), 0);
    SocketAddress bound{};
    socklen_t bound_length = sizeof bound;
    ::getsockname(fd_, &bound.any, &bound_length);
    local_ = fromSockaddr(bound);
  }
  ~UdpClient() { ::close(fd_); }
  // The bound address, with the port the kernel chose for port 0.
  const Endpoint& local() const { return local_; }
  void send(std::span<const uint8_t> bytes, const Endpoint& to) {
    SocketAddress sa{};
    const socklen_t length = toSockaddr(to, sa);
    EXPECT_EQ(::sendto(fd_, bytes.data(), bytes.size(), 0, &sa.any, length),
              static_cast<ssize_t>(bytes.size()));
  }
  // One datagram within `timeout`, or empty.
  std::vector<uint8_t> receive(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return {};
    std::vector<uint8_t> buf(4096);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return buf;
  }

 private:
  int fd_ = -1;
  Endpoint local_{};
};

}  // namespace gtpcp::peer::testing
