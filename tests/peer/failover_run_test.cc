// A failover of the proxy group with real gtpcp-peer processes over
// loopback UDP (fixture in peer_fixture.h): an SGW-only and a PGW-only
// process, and between them a relay in the test that plays both instances
// of a proxy group, A and B, each with an access address (same port) and a
// gateway address (same port). The SGWs' requests reach the PGW whichever
// instance they came to, always from A's gateway address: only the PGW's
// redirection can bring its answers to B. The SGW switches on
// --failover-after, the PGW on SIGUSR1; the relay counts what arrives where.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tests/peer/peer_fixture.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {
namespace {

using namespace std::chrono_literals;
using gtp::v2::MessageType;
using nlohmann::json;
using testing::kPeer;
using testing::PeerIntegration;

// Two instances of a proxy group in one thread: sockets kAccessA and
// kAccessB on one port, kGatewayA and kGatewayB on another. A request from
// the SGW, at either access socket, goes to the PGW from kGatewayA; an
// answer from the PGW, at either gateway socket, goes back to the SGW from
// the access socket its request came to (matched by sequence number).
class TwoInstanceRelay {
 public:
  enum Socket { kAccessA, kAccessB, kGatewayA, kGatewayB, kSockets };
  // What arrived at one socket.
  struct Seen {
    std::map<uint8_t, uint64_t> by_type;  // GTPv2 message type -> datagrams
    uint64_t total = 0;
    uint32_t min_seq = std::numeric_limits<uint32_t>::max();
    uint32_t max_seq = 0;
    uint64_t count(MessageType t) const {
      auto it = by_type.find(static_cast<uint8_t>(t));
      return it == by_type.end() ? 0 : it->second;
    }
  };

  TwoInstanceRelay(const std::array<IpAddress, kSockets>& at, const Endpoint& pgw) : pgw_(pgw) {
    // Each instance pair on one port: the first binds port 0, the second
    // takes the port it got (busy by chance: try again).
    for (int pair = 0; pair < 2; ++pair) {
      const int first = pair * 2;
      for (int attempt = 0; attempt < 20 && fds_[first + 1] < 0; ++attempt) {
        closeFd(first);
        const uint16_t port = bind(first, Endpoint{at[first], 0});
        if (port != 0) bind(first + 1, Endpoint{at[first + 1], port});
      }
      EXPECT_GE(fds_[first + 1], 0) << "no common port for the pair at " << first;
    }
    thread_ = std::thread([this] { loop(); });
  }
  ~TwoInstanceRelay() {
    stop();
    for (int i = 0; i < kSockets; ++i) closeFd(i);
  }

  uint16_t port(Socket s) const { return ports_[s]; }
  // Waits until a datagram has arrived at kAccessB, up to `timeout`.
  bool waitForAccessB(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return access_b_seen_; });
  }
  // Stops the relay; seen() and unmatched() are valid afterwards.
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const Seen& seen(Socket s) const { return seen_[s]; }
  uint64_t unmatched() const { return unmatched_; }

 private:
  struct Route {
    int access = kAccessA;
    Endpoint sgw{};
  };

  uint16_t bind(int i, const Endpoint& local) {
    const int fd = ::socket(local.addr.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    SocketAddress sa{};
    const socklen_t length = toSockaddr(local, sa);
    if (fd < 0 || ::bind(fd, &sa.any, length) != 0) {
      if (fd >= 0) ::close(fd);
      return 0;
    }
    SocketAddress bound{};
    socklen_t bound_length = sizeof bound;
    ::getsockname(fd, &bound.any, &bound_length);
    fds_[i] = fd;
    ports_[i] = fromSockaddr(bound).port;
    return ports_[i];
  }
  void closeFd(int i) {
    if (fds_[i] >= 0) ::close(fds_[i]);
    fds_[i] = -1;
  }
  void send(int i, std::span<const uint8_t> bytes, const Endpoint& to) {
    SocketAddress sa{};
    const socklen_t length = toSockaddr(to, sa);
    ::sendto(fds_[i], bytes.data(), bytes.size(), 0, &sa.any, length);
  }
  void loop() {
    std::array<pollfd, kSockets> p{};
    for (int i = 0; i < kSockets; ++i) p[i] = pollfd{fds_[i], POLLIN, 0};
    std::array<uint8_t, 4096> buf{};
    while (!stop_) {
      if (::poll(p.data(), p.size(), 20) <= 0) continue;
      // Every socket drained in a fixed order each turn.
      for (int i = 0; i < kSockets; ++i) {
        for (;;) {
          SocketAddress from{};
          socklen_t from_length = sizeof from;
          const ssize_t n = ::recvfrom(fds_[i], buf.data(), buf.size(), 0, &from.any, &from_length);
          if (n <= 0) break;
          onDatagram(i, std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n)),
                     fromSockaddr(from));
        }
      }
    }
  }
  void onDatagram(int i, std::span<const uint8_t> bytes, const Endpoint& from) {
    auto h = gtp::v2::decodeHeader(bytes);
    if (!h) {
      ++unmatched_;
      return;
    }
    Seen& s = seen_[i];
    ++s.by_type[h->message_type];
    ++s.total;
    s.min_seq = std::min(s.min_seq, h->sequence_number);
    s.max_seq = std::max(s.max_seq, h->sequence_number);
    if (i == kAccessA || i == kAccessB) {
      routes_[h->sequence_number] = Route{i, from};
      send(kGatewayA, bytes, pgw_);
      if (i == kAccessB && !access_b_seen_) {
        std::lock_guard lock(mutex_);
        access_b_seen_ = true;
        cv_.notify_all();
      }
      return;
    }
    auto it = routes_.find(h->sequence_number);
    if (it == routes_.end()) {
      ++unmatched_;
      return;
    }
    send(it->second.access, bytes, it->second.sgw);
  }

  Endpoint pgw_;
  std::array<int, kSockets> fds_{-1, -1, -1, -1};
  std::array<uint16_t, kSockets> ports_{};
  // Written by the relay thread only; read after stop().
  std::array<Seen, kSockets> seen_{};
  std::map<uint32_t, Route> routes_;
  uint64_t unmatched_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool access_b_seen_ = false;  // guarded by mutex_
};

// A modify-only run split by the switch, as seen at the old instance's
// socket `a` and the new one's `b`: all `n` attach messages at `a`, all `n`
// detach messages at `b`, modifications at both, and every message at `b`
// numbered after every one at `a`.
void expectSplit(const TwoInstanceRelay::Seen& a, const TwoInstanceRelay::Seen& b,
                 MessageType attach, MessageType modify, MessageType detach, uint64_t n) {
  EXPECT_EQ(a.count(attach), n);
  EXPECT_EQ(b.count(attach), 0u);
  EXPECT_GT(a.count(modify), 0u);
  EXPECT_GT(b.count(modify), 0u);
  EXPECT_EQ(a.count(detach), 0u);
  EXPECT_EQ(b.count(detach), n);
  EXPECT_LT(a.max_seq, b.min_seq);
}

TEST_F(PeerIntegration, FailoverMovesBothRolesToTheOtherInstanceMidRun) {
  using Relay = TwoInstanceRelay;
  constexpr uint64_t kSubscribers = 100;
  // A: access .1, gateway .3; B: access .2, gateway .4.
  Relay relay({IpAddress(addr(1)), IpAddress(addr(2)), IpAddress(addr(3)), IpAddress(addr(4))},
              Endpoint{addr(21), 2123});
  ASSERT_NE(relay.port(Relay::kAccessB), 0);
  ASSERT_NE(relay.port(Relay::kGatewayB), 0);
  const std::string subscribers = std::to_string(kSubscribers);

  // The PGW sees the group at A's gateway address (where the relay sends
  // from) and moves to B's on SIGUSR1.
  auto pgw = start("pgw", {kPeer, "--pgw", ip(21), "--relay", "--proxy", ip(3), "--failover-to",
                           ip(4), "--subscribers", subscribers, "--duration", "60", "--json",
                           path("pgw.json")});
  ASSERT_TRUE(waitBound(21)) << testing::readFile(path("pgw.err"));

  // Attach (~0.1 s) through A; Modify Bearer for 2 s, through A then, from
  // 1 s on, B; detach through B.
  auto sgw = start("sgw", {kPeer, "--sgw", ip(11), "--relay", "--proxy",
                           ip(1) + ":" + std::to_string(relay.port(Relay::kAccessA)),
                           "--failover-to", ip(2), "--failover-after", "1", "--mode",
                           "modify-only", "--subscribers", subscribers, "--setup-rate", "1000",
                           "--rate", "200", "--duration", "2", "--seed", "1", "--t3-ms", "3000",
                           "--json", path("sgw.json")});
  ASSERT_TRUE(relay.waitForAccessB(30s)) << testing::readFile(path("sgw.err"));
  ASSERT_EQ(::kill(pgw.pid(), SIGUSR1), 0);
  EXPECT_EQ(sgw.wait(60s), std::optional<int>(0)) << testing::readFile(path("sgw.out"));
  EXPECT_EQ(pgw.stop(5s), 0) << testing::readFile(path("pgw.out"));
  relay.stop();

  const json s = readJson("sgw.json");
  EXPECT_EQ(s["failover"]["switched"], true);
  EXPECT_EQ(s["failover"]["trigger"], "timer");
  EXPECT_GE(s["failover"]["at_s"].get<double>(), 1.0);
  EXPECT_EQ(s["failover"]["redirected"], relay.seen(Relay::kAccessB).total);
  EXPECT_EQ(s["transactions"]["create_session"]["completed"], kSubscribers);
  EXPECT_EQ(s["transactions"]["delete_session"]["completed"], kSubscribers);
  EXPECT_EQ(s["timeouts"], 0);
  EXPECT_EQ(s["retransmissions"], 0);
  EXPECT_EQ(s["mismatches"]["total"], 0);
  EXPECT_EQ(s["malformed"]["total"], 0);
  EXPECT_EQ(s["sessions"]["up_at_end"], 0);
  EXPECT_NE(testing::readFile(path("sgw.err")).find("failover at"), std::string::npos);

  const json p = readJson("pgw.json");
  EXPECT_EQ(p["failover"]["switched"], true);
  EXPECT_EQ(p["failover"]["trigger"], "signal");
  EXPECT_EQ(p["failover"]["redirected"], relay.seen(Relay::kGatewayB).total);
  EXPECT_EQ(p["pgw"][ip(21)]["sessions_created"], kSubscribers);
  EXPECT_EQ(p["pgw"][ip(21)]["sessions_deleted"], kSubscribers);
  EXPECT_EQ(p["mismatches"]["total"], 0);

  // The SGW's requests, and the PGW's answers (all sent to A's gateway
  // address, moved by the signal), split alike.
  const auto& access_a = relay.seen(Relay::kAccessA);
  const auto& access_b = relay.seen(Relay::kAccessB);
  expectSplit(access_a, access_b, MessageType::kCreateSessionRequest,
              MessageType::kModifyBearerRequest, MessageType::kDeleteSessionRequest, kSubscribers);
  EXPECT_EQ(access_a.total + access_b.total, s["transactions"]["total"]["attempted"]);
  const auto& gateway_a = relay.seen(Relay::kGatewayA);
  const auto& gateway_b = relay.seen(Relay::kGatewayB);
  expectSplit(gateway_a, gateway_b, MessageType::kCreateSessionResponse,
              MessageType::kModifyBearerResponse, MessageType::kDeleteSessionResponse, kSubscribers);
  EXPECT_EQ(gateway_a.total + gateway_b.total, access_a.total + access_b.total);
  EXPECT_EQ(relay.unmatched(), 0u);
}

}  // namespace
}  // namespace gtpcp::peer
