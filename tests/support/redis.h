// Test support: real redis-server processes on loopback, as single servers,
// a Redis Cluster of 3 primaries and 3 replicas, and a Sentinel-managed
// primary with 2 replicas and 3 sentinels.
//
// Every server runs in a temporary directory of its own test, without
// persistence, on free ports of 127.0.0.1; the objects stop exactly the
// processes they started (by PID, resuming a paused one first) when they go
// away, and the children die with the test process if it crashes. Waits are
// bounded; a setup that does not come up in time throws, naming what failed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"

namespace gtpcp::testing {

// A TCP port free on 127.0.0.1 now; with `with_bus`, port + 10000 too (a
// cluster node's bus port).
uint16_t freeTcpPort(bool with_bus = false);

class RedisServer {
 public:
  struct Options {
    uint16_t port = 0;                 // 0: a free one
    std::vector<std::string> args;     // more redis-server arguments ("--cluster-enabled", "yes"...)
    std::string config_file;           // given first (sentinels need a writable one)
    bool sentinel = false;
  };
  // Starts redis-server in `dir` (created) and waits until it answers PING.
  RedisServer(const std::string& dir, Options options);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  uint16_t port() const noexcept { return options_.port; }
  int pid() const noexcept { return child_.pid(); }
  const std::string& dir() const noexcept { return dir_; }
  std::string logFile() const { return dir_ + "/redis.log"; }

  void kill();    // SIGKILL, and wait for it to be gone
  void pause();   // SIGSTOP: the port still accepts connections, nothing answers
  void resume();  // SIGCONT
  // Starts it again, same port and arguments, and waits for PING.
  void restart();
  bool running() { return child_.running(); }

 private:
  void start();

  std::string dir_;
  Options options_;
  Child child_;
  bool paused_ = false;
};

// One synchronous command to 127.0.0.1:`port` (2 s timeout), the reply as
// text: strings, status and integers as they are, "(nil)", "(error) ...",
// array elements one per line. nullopt when the server cannot be reached.
std::optional<std::string> redisCommand(uint16_t port, const std::vector<std::string>& argv);
// GET of every key, pipelined; nullopt for a missing key. Throws when the
// server cannot be reached.
std::vector<std::optional<std::string>> redisGetMany(uint16_t port, const std::vector<std::string>& keys);
// Every key of the server matching `pattern`, by SCAN (the server keeps
// serving others meanwhile). Throws when the server cannot be reached.
std::vector<std::string> redisScan(uint16_t port, const std::string& pattern);
// HGETALL of every key, pipelined: field -> value, empty for a missing key
// (or one of another type). Throws when the server cannot be reached.
std::vector<std::map<std::string, std::string>> redisHashes(uint16_t port, const std::vector<std::string>& keys);
// A field of INFO `section` ("master_link_status"), "" when absent.
std::string redisInfoField(uint16_t port, const std::string& section, const std::string& field);

struct ClusterNode {
  uint16_t port = 0;
  std::string id;
  bool primary = false;
  bool failed = false;
  std::string primary_id;                  // a replica's primary
  std::vector<std::pair<int, int>> slots;  // a primary's slot ranges
};

class RedisCluster {
 public:
  // Six nodes; `redis-cli --cluster create --cluster-replicas 1`; returns
  // once every node says cluster_state:ok and every replica's link is up.
  explicit RedisCluster(uint32_t node_timeout_ms = 1000);

  std::vector<uint16_t> ports() const;
  RedisServer& server(uint16_t port);
  // CLUSTER NODES as seen from `port` (0: the first node that answers).
  std::vector<ClusterNode> nodes(uint16_t port = 0) const;
  // The primary that serves `slot` now (0: none), for one slot or all 16384.
  uint16_t ownerOf(int slot) const;
  std::vector<uint16_t> slotOwners() const;
  // A replica of the primary on `primary_port` (0: none).
  uint16_t replicaOf(uint16_t primary_port) const;
  std::string idOf(uint16_t port) const;

 private:
  TempDir dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
};

class RedisSentinels {
 public:
  // A primary, two replicas of it, and three sentinels monitoring it as
  // `name` (quorum 2, down-after-milliseconds `down_after_ms`); returns once
  // every sentinel knows both replicas and the two other sentinels.
  explicit RedisSentinels(std::string name = "gtpcp", uint32_t down_after_ms = 1000);

  const std::string& name() const noexcept { return name_; }
  std::vector<uint16_t> sentinelPorts() const;
  std::vector<uint16_t> serverPorts() const;
  RedisServer& server(uint16_t port);
  // The primary's port as the first sentinel that answers reports it; 0 when none.
  uint16_t primaryPort() const;

 private:
  std::string name_;
  TempDir dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_, sentinels_;
};

}  // namespace gtpcp::testing
