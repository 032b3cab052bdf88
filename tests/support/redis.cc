#include "tests/support/redis.h"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gtpcp::testing {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kSetupTimeout = std::chrono::seconds(30);

bool tcpPortFree(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  close(fd);
  return ok;
}

struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Context = std::unique_ptr<redisContext, ContextDeleter>;

Context connectTo(uint16_t port) {
  const timeval timeout{2, 0};
  Context c(redisConnectWithTimeout("127.0.0.1", port, timeout));
  if (!c || c->err != 0) return nullptr;
  redisSetTimeout(c.get(), timeout);
  return c;
}

void render(const redisReply* r, std::string& out) {
  switch (r->type) {
    case REDIS_REPLY_NIL: out += "(nil)"; break;
    case REDIS_REPLY_INTEGER: out += std::to_string(r->integer); break;
    case REDIS_REPLY_ERROR: out += "(error) " + std::string(r->str, r->len); break;
    case REDIS_REPLY_ARRAY:
      for (std::size_t i = 0; i < r->elements; ++i) {
        if (i > 0) out += "\n";
        render(r->element[i], out);
      }
      break;
    default: out.append(r->str, r->len);
  }
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "key\nvalue\nkey\nvalue..." (SENTINEL MASTER) -> the value of `key`.
std::string pairValue(const std::string& text, const std::string& key) {
  const auto l = lines(text);
  for (std::size_t i = 0; i + 1 < l.size(); i += 2)
    if (l[i] == key) return l[i + 1];
  return "";
}

std::vector<uint16_t> portsOf(const std::vector<std::unique_ptr<RedisServer>>& servers) {
  std::vector<uint16_t> out;
  for (const auto& s : servers) out.push_back(s->port());
  return out;
}

RedisServer& serverOn(const std::vector<std::unique_ptr<RedisServer>>& servers, uint16_t port) {
  for (const auto& s : servers)
    if (s->port() == port) return *s;
  throw std::runtime_error("no redis server of this test on port " + std::to_string(port));
}

void mustWait(const std::function<bool()>& condition, std::chrono::milliseconds timeout, const std::string& what) {
  if (!waitUntil(condition, timeout, std::chrono::milliseconds(50)))
    throw std::runtime_error("redis test setup: timed out waiting for " + what);
}

// `command` KEY for every key, pipelined in runs of 1000; `f` sees each
// reply in order. Throws when the server cannot be reached or stops answering.
void forEachKeyReply(uint16_t port, const char* command, const std::vector<std::string>& keys,
                     const std::function<void(const redisReply*)>& f) {
  Context c = connectTo(port);
  if (!c) throw std::runtime_error("cannot connect to redis on port " + std::to_string(port));
  constexpr std::size_t kBatch = 1000;
  for (std::size_t first = 0; first < keys.size(); first += kBatch) {
    const std::size_t last = std::min(keys.size(), first + kBatch);
    for (std::size_t i = first; i < last; ++i) {
      const char* argv[] = {command, keys[i].data()};
      const size_t lens[] = {std::strlen(command), keys[i].size()};
      redisAppendCommandArgv(c.get(), 2, argv, lens);
    }
    for (std::size_t i = first; i < last; ++i) {
      void* raw = nullptr;
      if (redisGetReply(c.get(), &raw) != REDIS_OK)
        throw std::runtime_error(std::string(command) + " failed on port " + std::to_string(port));
      auto* r = static_cast<redisReply*>(raw);
      f(r);
      freeReplyObject(r);
    }
  }
}

}  // namespace

uint16_t freeTcpPort(bool with_bus) {
  std::random_device rd;
  std::mt19937 rng(rd() ^ static_cast<unsigned>(getpid()));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    // Below the ephemeral range (32768+), bus port (+10000) included, so that
    // no outgoing connection takes a port between this check and the bind.
    const auto port = static_cast<uint16_t>(10000 + rng() % 12000);
    if (tcpPortFree(port) && (!with_bus || tcpPortFree(static_cast<uint16_t>(port + 10000)))) return port;
  }
  throw std::runtime_error("no free TCP port on 127.0.0.1");
}

RedisServer::RedisServer(const std::string& dir, Options options) : dir_(dir), options_(std::move(options)) {
  std::filesystem::create_directories(dir_);
  if (options_.port == 0) options_.port = freeTcpPort();
  start();
}

RedisServer::~RedisServer() {
  if (paused_) child_.kill(SIGCONT);
  child_.stop(std::chrono::milliseconds(2000));
}

void RedisServer::start() {
  std::vector<std::string> argv{"redis-server"};
  if (!options_.config_file.empty()) argv.push_back(options_.config_file);
  if (options_.sentinel) argv.push_back("--sentinel");
  argv.insert(argv.end(), {"--port", std::to_string(options_.port), "--bind", "127.0.0.1", "--daemonize", "no",
                           "--dir", dir_, "--logfile", logFile()});
  if (!options_.sentinel) argv.insert(argv.end(), {"--save", "", "--appendonly", "no"});
  argv.insert(argv.end(), options_.args.begin(), options_.args.end());
  child_ = Child::spawn(argv, dir_ + "/stdout.log");
  paused_ = false;
  const bool up = waitUntil(
      [&] {
        const auto pong = redisCommand(options_.port, {"PING"});
        return (pong && *pong == "PONG") || !child_.running();
      },
      kStartTimeout, std::chrono::milliseconds(10));
  if (!up || !child_.running())
    throw std::runtime_error("redis-server on port " + std::to_string(options_.port) +
                             " did not start: " + tailFile(logFile(), 5) + tailFile(dir_ + "/stdout.log", 5));
}

void RedisServer::kill() {
  if (paused_) child_.kill(SIGCONT);
  paused_ = false;
  child_.kill(SIGKILL);
  child_.wait(std::chrono::seconds(10));
}

void RedisServer::pause() {
  child_.kill(SIGSTOP);
  paused_ = true;
}

void RedisServer::resume() {
  child_.kill(SIGCONT);
  paused_ = false;
}

void RedisServer::restart() {
  if (child_.running()) child_.stop(std::chrono::milliseconds(2000));
  start();
}

std::optional<std::string> redisCommand(uint16_t port, const std::vector<std::string>& argv) {
  Context c = connectTo(port);
  if (!c) return std::nullopt;
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(redisCommandArgv(c.get(), static_cast<int>(args.size()), args.data(),
                                                          lengths.data()));
  if (reply == nullptr) return std::nullopt;
  std::string out;
  render(reply, out);
  freeReplyObject(reply);
  return out;
}

std::vector<std::optional<std::string>> redisGetMany(uint16_t port, const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  forEachKeyReply(port, "GET", keys, [&](const redisReply* r) {
    if (r->type == REDIS_REPLY_STRING) {
      values.emplace_back(std::string(r->str, r->len));
    } else {
      values.emplace_back(std::nullopt);
    }
  });
  return values;
}

std::vector<std::string> redisScan(uint16_t port, const std::string& pattern) {
  Context c = connectTo(port);
  if (!c) throw std::runtime_error("cannot connect to redis on port " + std::to_string(port));
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    const char* argv[] = {"SCAN", cursor.c_str(), "MATCH", pattern.c_str(), "COUNT", "1000"};
    const size_t lens[] = {4, cursor.size(), 5, pattern.size(), 5, 4};
    auto* r = static_cast<redisReply*>(redisCommandArgv(c.get(), 6, argv, lens));
    const bool ok = r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                    r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_ARRAY;
    if (!ok) {
      if (r != nullptr) freeReplyObject(r);
      throw std::runtime_error("SCAN failed on port " + std::to_string(port));
    }
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (std::size_t i = 0; i < r->element[1]->elements; ++i)
      keys.emplace_back(r->element[1]->element[i]->str, r->element[1]->element[i]->len);
    freeReplyObject(r);
  } while (cursor != "0");
  return keys;
}

std::vector<std::map<std::string, std::string>> redisHashes(uint16_t port, const std::vector<std::string>& keys) {
  std::vector<std::map<std::string, std::string>> hashes;
  hashes.reserve(keys.size());
  forEachKeyReply(port, "HGETALL", keys, [&](const redisReply* r) {
    auto& fields = hashes.emplace_back();
    if (r->type != REDIS_REPLY_ARRAY) return;
    for (std::size_t i = 0; i + 1 < r->elements; i += 2)
      fields[std::string(r->element[i]->str, r->element[i]->len)] =
          std::string(r->element[i + 1]->str, r->element[i + 1]->len);
  });
  return hashes;
}

std::string redisInfoField(uint16_t port, const std::string& section, const std::string& field) {
  const auto info = redisCommand(port, {"INFO", section});
  if (!info) return "";
  for (const auto& line : lines(*info))
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  return "";
}

RedisCluster::RedisCluster(uint32_t node_timeout_ms) {
  std::set<uint16_t> taken;
  while (taken.size() < 6) taken.insert(freeTcpPort(true));
  std::vector<std::string> create{"redis-cli", "--cluster", "create"};
  for (const uint16_t port : taken) {
    RedisServer::Options o;
    o.port = port;
    o.args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
              std::to_string(node_timeout_ms)};
    servers_.push_back(std::make_unique<RedisServer>(dir_.file(std::to_string(port)), o));
    create.push_back("127.0.0.1:" + std::to_string(port));
  }
  create.insert(create.end(), {"--cluster-replicas", "1", "--cluster-yes"});
  const auto out = run(create, std::chrono::seconds(60));
  if (!out || out->status != 0 || out->text.find("All 16384 slots covered") == std::string::npos)
    throw std::runtime_error("redis-cli --cluster create failed: " + (out ? out->text : "timed out"));
  // A replica whose first sync has not finished refuses to fail over.
  mustWait(
      [&] {
        for (const uint16_t port : ports()) {
          const auto info = redisCommand(port, {"CLUSTER", "INFO"});
          if (!info || info->find("cluster_state:ok") == std::string::npos ||
              info->find("cluster_known_nodes:6") == std::string::npos)
            return false;
        }
        const auto all = nodes();
        if (all.size() != 6) return false;
        for (const auto& n : all)
          if (!n.primary && redisInfoField(n.port, "replication", "master_link_status") != "up") return false;
        return std::count_if(all.begin(), all.end(), [](const ClusterNode& n) { return n.primary; }) == 3;
      },
      kSetupTimeout, "cluster_state:ok and every replica in sync");
}

std::vector<uint16_t> RedisCluster::ports() const { return portsOf(servers_); }

RedisServer& RedisCluster::server(uint16_t port) { return serverOn(servers_, port); }

std::vector<ClusterNode> RedisCluster::nodes(uint16_t port) const {
  std::optional<std::string> text;
  for (const auto& s : servers_) {
    if (port != 0 && s->port() != port) continue;
    text = redisCommand(s->port(), {"CLUSTER", "NODES"});
    if (text && text->rfind("(error)", 0) != 0) break;
    text.reset();
  }
  std::vector<ClusterNode> out;
  if (!text) return out;
  // <id> <ip:port@bus[,host]> <flags> <primary> <ping> <pong> <epoch> <link> <slot>...
  for (const auto& line : lines(*text)) {
    const auto w = words(line);
    if (w.size() < 8) continue;
    ClusterNode n;
    n.id = w[0];
    const auto colon = w[1].find(':');
    const auto at = w[1].find('@');
    n.port = static_cast<uint16_t>(std::stoi(w[1].substr(colon + 1, at - colon - 1)));
    n.primary = w[2].find("master") != std::string::npos;
    n.failed = w[2].find("fail") != std::string::npos && w[2].find("fail?") == std::string::npos;
    n.primary_id = w[3] == "-" ? "" : w[3];
    for (std::size_t i = 8; i < w.size(); ++i) {
      if (w[i].front() == '[') continue;  // a slot being migrated
      const auto dash = w[i].find('-');
      const int lo = std::stoi(w[i].substr(0, dash));
      n.slots.emplace_back(lo, dash == std::string::npos ? lo : std::stoi(w[i].substr(dash + 1)));
    }
    out.push_back(n);
  }
  return out;
}

uint16_t RedisCluster::ownerOf(int slot) const { return slotOwners()[static_cast<std::size_t>(slot)]; }

std::vector<uint16_t> RedisCluster::slotOwners() const {
  std::vector<uint16_t> owners(16384, 0);
  for (const auto& n : nodes())
    for (const auto& [lo, hi] : n.slots)
      if (n.primary && !n.failed)
        for (int s = lo; s <= hi; ++s) owners[static_cast<std::size_t>(s)] = n.port;
  return owners;
}

uint16_t RedisCluster::replicaOf(uint16_t primary_port) const {
  const std::string id = idOf(primary_port);
  for (const auto& n : nodes())
    if (!n.primary && n.primary_id == id) return n.port;
  return 0;
}

std::string RedisCluster::idOf(uint16_t port) const {
  for (const auto& n : nodes())
    if (n.port == port) return n.id;
  return "";
}

RedisSentinels::RedisSentinels(std::string name, uint32_t down_after_ms) : name_(std::move(name)) {
  RedisServer::Options primary;
  servers_.push_back(std::make_unique<RedisServer>(dir_.file("primary"), primary));
  const std::string primary_port = std::to_string(servers_.front()->port());
  for (int i = 1; i <= 2; ++i) {
    RedisServer::Options replica;
    replica.args = {"--replicaof", "127.0.0.1", primary_port};
    servers_.push_back(std::make_unique<RedisServer>(dir_.file("replica" + std::to_string(i)), replica));
  }
  mustWait(
      [&] {
        for (std::size_t i = 1; i < servers_.size(); ++i)
          if (redisInfoField(servers_[i]->port(), "replication", "master_link_status") != "up") return false;
        return true;
      },
      kSetupTimeout, "both replicas in sync");
  for (int i = 1; i <= 3; ++i) {
    const std::string dir = dir_.file("sentinel" + std::to_string(i));
    std::filesystem::create_directories(dir);
    RedisServer::Options o;
    o.sentinel = true;
    o.config_file = dir + "/sentinel.conf";
    writeFile(o.config_file, "sentinel monitor " + name_ + " 127.0.0.1 " + primary_port + " 2\n" +
                                 "sentinel down-after-milliseconds " + name_ + " " + std::to_string(down_after_ms) +
                                 "\nsentinel failover-timeout " + name_ + " 5000\n" + "sentinel parallel-syncs " +
                                 name_ + " 1\n");
    sentinels_.push_back(std::make_unique<RedisServer>(dir, o));
  }
  mustWait(
      [&] {
        for (const auto& s : sentinels_) {
          const auto master = redisCommand(s->port(), {"SENTINEL", "MASTER", name_});
          if (!master || pairValue(*master, "num-slaves") != "2" || pairValue(*master, "num-other-sentinels") != "2")
            return false;
        }
        return true;
      },
      kSetupTimeout, "every sentinel to know both replicas and the other sentinels");
}

std::vector<uint16_t> RedisSentinels::sentinelPorts() const { return portsOf(sentinels_); }

std::vector<uint16_t> RedisSentinels::serverPorts() const { return portsOf(servers_); }

RedisServer& RedisSentinels::server(uint16_t port) { return serverOn(servers_, port); }

uint16_t RedisSentinels::primaryPort() const {
  for (const auto& s : sentinels_) {
    const auto addr = redisCommand(s->port(), {"SENTINEL", "get-master-addr-by-name", name_});
    if (!addr) continue;
    const auto l = lines(*addr);
    if (l.size() == 2) return static_cast<uint16_t>(std::stoi(l[1]));
  }
  return 0;
}

}  // namespace gtpcp::testing
