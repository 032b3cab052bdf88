// gtpcp-relay: the benchmark's floor. A bare UDP relay between downstream
// peers (the emulated SGWs) and one upstream (a PGW): no parsing, no state
// beyond its fixed configuration.
//
//   downstream D_i --> listen socket --(from pair socket i)--> upstream
//   downstream D_i <-- listen socket <--(on pair socket i)---- upstream
//
// Pair socket i is bound to the listen address on an ephemeral port, so the
// upstream answers to it and the relay knows which downstream the answer is
// for. One thread, epoll, recvmmsg/sendmmsg, datagrams sent from the receive
// buffers without a copy; counters, no per-datagram logging.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/peer/udp.h"

namespace gtpcp::relay {

using peer::Endpoint;

struct RelayOptions {
  std::string listen;                // ADDR[:PORT]
  std::string upstream;              // ADDR[:PORT]
  std::vector<std::string> pairs;    // ADDR[:PORT] each
  double duration = 0;               // seconds; 0: until SIGTERM/SIGINT
  bool progress = false;
  bool allow_non_loopback = false;
  std::string json;
  int rcvbuf = 8 << 20;
  int sndbuf = 8 << 20;
};

struct RelayConfig {
  Endpoint listen{};
  Endpoint upstream{};
  std::vector<Endpoint> pairs;
  double duration_s = 0;
  bool progress = false;
  std::string json_path;
  int rcvbuf = 8 << 20;
  int sndbuf = 8 << 20;
};

// Checks the options; one message per problem, empty when usable.
std::vector<std::string> makeRelayConfig(const RelayOptions& options, RelayConfig& out);

struct RelayStats {
  uint64_t from_downstream = 0;     // datagrams received on the listen socket from a pair
  uint64_t to_upstream = 0;
  uint64_t from_upstream = 0;       // datagrams received on a pair socket from the upstream
  uint64_t to_downstream = 0;
  uint64_t unknown_downstream = 0;  // on the listen socket from an address not in --pairs
  uint64_t unknown_upstream = 0;    // on a pair socket from another address than --upstream
  uint64_t truncated = 0;           // longer than a receive slot: dropped
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
  uint64_t send_full = 0;
  uint64_t send_errors = 0;
  uint64_t drops = 0;               // SO_RXQ_OVFL over all sockets
};

class Relay {
 public:
  explicit Relay(RelayConfig config);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Binds the sockets; "" or what failed.
  std::string open();
  // Relays until --duration or a signal, then prints the counters to `out`
  // (and JSON when configured). Returns 0.
  int run(std::ostream& out, std::ostream& err);
  // The listen socket and the pair sockets' local endpoints (after open()).
  Endpoint pairLocal(std::size_t i) const { return sockets_[i + 1].local(); }
  const RelayStats& stats() const noexcept { return stats_; }
  nlohmann::json toJson(double elapsed_s) const;

 private:
  void fromDownstream() noexcept;
  void fromUpstream(std::size_t pair) noexcept;
  void collect() noexcept;

  RelayConfig config_;
  std::vector<peer::UdpSocket> sockets_;  // [0]: listen, [1 + i]: pair i
  std::vector<std::unique_ptr<peer::SendBatch>> batches_;
  peer::RecvBatch recv_;
  RelayStats stats_;
  int epoll_fd_ = -1;
  int signal_fd_ = -1;
};

}  // namespace gtpcp::relay
