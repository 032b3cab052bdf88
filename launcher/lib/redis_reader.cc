#include "redis_reader.h"

#include <signal.h>

#include <chrono>
#include <thread>

namespace gtpcp::launcher {

namespace {

using Storage = config::InstanceConfig::Storage;
using Context = std::unique_ptr<redisContext, void (*)(redisContext*)>;

Context connectTo(const std::string& host, int port) {
  // hiredis writes with write(2): a Redis going away mid-command must fail
  // the look-up, not end `gtpcp` with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  timeval tv{2, 0};
  return Context(redisConnectWithTimeout(host.c_str(), port, tv), redisFree);
}

std::string where(const std::string& host, int port) { return host + ":" + std::to_string(port); }

// Errors of a storage in the middle of a failover (a Cluster electing a
// replica, a node loading its data): asked again until kTransientWait ran
// out, as the persister does, so that a start during a failover waits for
// it rather than failing at once.
constexpr auto kTransientWait = std::chrono::seconds(5);
constexpr auto kTransientPause = std::chrono::milliseconds(100);
bool transient(const std::string& error) {
  for (const char* prefix : {"CLUSTERDOWN", "TRYAGAIN", "LOADING"})
    if (error.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

tl::expected<RedisReply, std::string> RedisReader::runAt(Endpoint at, const std::vector<std::string>& argv,
                                                          bool follow) {
  const auto deadline = std::chrono::steady_clock::now() + kTransientWait;
  for (int hop = 0; hop < 4; ++hop) {
    Context ctx = connectTo(at.first, at.second);
    if (!ctx || ctx->err) return tl::unexpected("cannot reach Redis at " + where(at.first, at.second));
    std::vector<const char*> args;
    std::vector<std::size_t> lengths;
    for (const auto& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    RedisReply r(static_cast<redisReply*>(
                     redisCommandArgv(ctx.get(), static_cast<int>(args.size()), args.data(), lengths.data())),
                 freeReplyObject);
    if (!r) return tl::unexpected("Redis at " + where(at.first, at.second) + " did not answer");
    if (r->type == REDIS_REPLY_ERROR) {
      const std::string e(r->str, r->len);
      // "MOVED 3999 127.0.0.1:7002": the slot lives elsewhere.
      if (follow && (e.rfind("MOVED ", 0) == 0 || e.rfind("ASK ", 0) == 0)) {
        const std::string to = e.substr(e.rfind(' ') + 1);
        at = Endpoint{to.substr(0, to.rfind(':')), std::stoi(to.substr(to.rfind(':') + 1))};
        continue;
      }
      if (transient(e) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(kTransientPause);
        --hop;  // not a redirection
        continue;
      }
      return tl::unexpected("Redis at " + where(at.first, at.second) + ": " + e);
    }
    return r;
  }
  return tl::unexpected(std::string("Redis: too many redirections"));
}

tl::expected<RedisReply, std::string> RedisReader::run(const std::vector<std::string>& argv) {
  // The node that answered last, then (it died, or the primary moved) a
  // fresh look at the seeds or the sentinels.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (primary_.first.empty()) {
      auto p = primary();
      if (!p) return tl::unexpected(p.error());
      primary_ = *p;
    }
    auto r = runAt(primary_, argv, true);
    if (r || attempt == 1 || r.error().rfind("cannot reach", 0) != 0) return r;
    primary_ = {};
  }
  return tl::unexpected(std::string("Redis: no node answers"));
}

tl::expected<RedisReader::Endpoint, std::string> RedisReader::primary() {
  switch (c_.storage.mode) {
    case Storage::Mode::kOff:
      return tl::unexpected(std::string("storage.mode is off: sessions are not kept in Redis"));
    case Storage::Mode::kEmbedded: return Endpoint{"127.0.0.1", c_.storage.embedded_port};
    case Storage::Mode::kSingle: return Endpoint{c_.storage.servers.at(0).address, c_.storage.servers.at(0).port};
    case Storage::Mode::kCluster: {
      // Any live seed: commands follow MOVED from there, so a seed that died
      // (its slots failed over to a replica) stops nobody.
      std::string why;
      for (const auto& s : c_.storage.servers) {
        auto r = runAt({s.address, s.port}, {"PING"}, false);
        if (r) return Endpoint{s.address, s.port};
        why += (why.empty() ? "" : "; ") + r.error();
      }
      return tl::unexpected("no seed node of storage.servers answers (" + why + ")");
    }
    case Storage::Mode::kSentinel:
      for (const auto& s : c_.storage.servers) {
        auto r = runAt({s.address, s.port}, {"SENTINEL", "get-master-addr-by-name", c_.storage.sentinel_master}, false);
        if (r && (*r)->type == REDIS_REPLY_ARRAY && (*r)->elements == 2)
          return Endpoint{(*r)->element[0]->str, std::stoi((*r)->element[1]->str)};
      }
      return tl::unexpected("no sentinel of storage.servers names the primary " + c_.storage.sentinel_master);
  }
  return tl::unexpected(std::string("unknown storage.mode"));
}

tl::expected<std::vector<RedisReader::Endpoint>, std::string> RedisReader::primaries() {
  if (c_.storage.mode != Storage::Mode::kCluster) {
    auto p = primary();
    if (!p) return tl::unexpected(p.error());
    return std::vector<Endpoint>{*p};
  }
  // CLUSTER SLOTS: [start, end, [host, port, id], replicas...] per range.
  auto r = run({"CLUSTER", "SLOTS"});
  if (!r) return tl::unexpected(r.error());
  std::vector<Endpoint> out;
  for (std::size_t i = 0; i < (*r)->elements; ++i) {
    const redisReply* range = (*r)->element[i];
    if (range->elements < 3 || range->element[2]->elements < 2) continue;
    Endpoint e{range->element[2]->element[0]->str, static_cast<int>(range->element[2]->element[1]->integer)};
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

tl::expected<bool, std::string> RedisReader::anyKey(const std::string& pattern) {
  auto nodes = primaries();
  if (!nodes) return tl::unexpected(nodes.error());
  for (const Endpoint& n : *nodes) {
    std::string cursor = "0";
    do {
      auto r = runAt(n, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, false);
      if (!r) return tl::unexpected(r.error());
      if ((*r)->type != REDIS_REPLY_ARRAY || (*r)->elements != 2) return tl::unexpected(std::string("SCAN: unexpected reply"));
      if ((*r)->element[1]->elements != 0) return true;
      cursor = (*r)->element[0]->str;
    } while (cursor != "0");
  }
  return false;
}

}  // namespace gtpcp::launcher
