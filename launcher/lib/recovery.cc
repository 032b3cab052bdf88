#include "recovery.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "common/group/from_config.h"
#include "common/group/redis_keys.h"
#include "common/time/clock.h"
#include "redis_reader.h"

namespace gtpcp::launcher {

bool settleRecovery(const config::InstanceConfig& config_, const group::Paths& paths_, std::ostream& out) {
  // TS 23.007: the Recovery value changes when, and only when, the peers'
  // sessions are gone. The group's value lives in Redis; it goes up when the
  // group starts on storage that holds none of its sessions. The last value
  // is also kept in the run directory, for storage that lost everything
  // (the key included), and for the forwarder to read.
  const std::string file = paths_.recoveryFile();
  std::optional<int> last;
  if (std::ifstream in(file); in) {
    int v = -1;
    if (in >> v && v >= 0 && v <= 255) last = v;
  }
  int value = config_.gtpc.recovery;
  if (group::persists(config_)) {
    value = last.value_or(value);
    RedisReader redis(config_);
    const std::string key = group::recoveryKey(config_.group);
    auto stored = redis.run({"GET", key});
    auto sessions = redis.anyKey(group::sessionKeyPattern(config_.group));
    auto instances = redis.run({"HGETALL", group::instancesKey(config_.group)});
    auto shares = redis.run({"HGETALL", group::sharesKey(config_.group)});
    if (!stored || !sessions || !instances || !shares) {
      out << "recovery: cannot read the group's storage ("
          << (!stored ? stored.error() : !sessions ? sessions.error() : !instances ? instances.error() : shares.error())
          << "); the group's Recovery would be unknown\n";
      return false;
    }
    // Another instance of the group that runs (its persister renews its
    // entry every second) has announced the value to peers: an empty
    // storage then only means it holds no session now.
    std::string running;
    const uint64_t now_ms = realtimeNs() / 1'000'000;
    if ((*instances)->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i + 1 < (*instances)->elements; i += 2) {
        const std::string name((*instances)->element[i]->str, (*instances)->element[i]->len);
        const uint64_t until = std::strtoull((*instances)->element[i + 1]->str, nullptr, 10);
        if (name != config_.instance && until > now_ms) running = name;
        if (name == config_.instance || until <= now_ms) continue;
        // Two running instances with one share would give out the same TEIDs.
        const std::string mine = std::to_string(config_.instance_index) + "/" + std::to_string(config_.group_size);
        for (std::size_t j = 0; (*shares)->type == REDIS_REPLY_ARRAY && j + 1 < (*shares)->elements; j += 2) {
          if (std::string_view((*shares)->element[j]->str, (*shares)->element[j]->len) != name) continue;
          const std::string theirs((*shares)->element[j + 1]->str, (*shares)->element[j + 1]->len);
          const auto slash = theirs.find('/');
          const bool same_index = theirs.substr(0, slash) == std::to_string(config_.instance_index);
          const bool same_size = slash != std::string::npos && theirs.substr(slash + 1) == std::to_string(config_.group_size);
          if (same_index || !same_size) {
            out << config_.file << ": " << (same_index ? "instance_index" : "group_size") << ": instance " << name
                << " of group " << config_.group << " runs with instance_index/group_size " << theirs
                << ", this one has " << mine
                << "; every instance of a group needs the same group_size and its own instance_index\n";
            return false;
          }
        }
      }
    }
    const bool known = (*stored)->type == REDIS_REPLY_STRING;
    if (known) value = std::atoi((*stored)->str);
    if (known && !running.empty()) {
      out << "recovery: " << value << " (kept: instance " << running << " of the group runs)\n";
    } else if (!known || !*sessions) {
      value = (value + 1) % 256;
      out << "recovery: " << value << " (the group's storage holds no session: peers must forget theirs)\n";
    } else {
      out << "recovery: " << value << " (kept: the group's storage holds its sessions)\n";
    }
    if (auto set = redis.run({"SET", key, std::to_string(value)}); !set) {
      out << "recovery: " << set.error() << "\n";
      return false;
    }
  }
  std::ofstream(file) << value << "\n";
  return true;
}

}  // namespace gtpcp::launcher
