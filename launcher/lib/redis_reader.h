// The launcher's synchronous view of the group's Redis (gtpcp start, gtpcp
// session): one command at a time, sent to the server that owns its key
// (from any live seed node, following MOVED and ASK, in Cluster mode; the
// sentinels name the primary in Sentinel mode; a node that stops answering
// is looked for again once). Not for the data path: the persister has the
// real client.
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "common/config/instance.h"

namespace gtpcp::launcher {

using RedisReply = std::unique_ptr<redisReply, void (*)(void*)>;

class RedisReader {
 public:
  explicit RedisReader(const config::InstanceConfig& c) : c_(c) {}

  tl::expected<RedisReply, std::string> run(const std::vector<std::string>& argv);
  // Whether any key matches `pattern`, on any primary.
  tl::expected<bool, std::string> anyKey(const std::string& pattern);

 private:
  using Endpoint = std::pair<std::string, int>;
  tl::expected<Endpoint, std::string> primary();
  // Every primary: the cluster's, or the one.
  tl::expected<std::vector<Endpoint>, std::string> primaries();
  tl::expected<RedisReply, std::string> runAt(Endpoint at, const std::vector<std::string>& argv, bool follow);

  const config::InstanceConfig& c_;
  Endpoint primary_;
};

}  // namespace gtpcp::launcher
