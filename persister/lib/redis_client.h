// RedisClient: how the persister talks to Redis, whatever the deployment
// (DESIGN.md, "State and storage"): one server, a Redis Cluster with replicas,
// or a Sentinel-managed primary with replicas. One client is one channel: the
// persister runs one per worker, each with its own connections.
//
// A command goes to the primary that owns its hash slot (single and Sentinel
// modes have one primary for every slot). Commands are pipelined: many in
// flight per connection, answered in order. Every accepted command gets its
// completion called exactly once, from the event loop; errors are values
// (RedisErrc), never exceptions, and each kind is counted.
//
// Single-threaded: the client, its completions and its event loop run on one
// thread. A completion may submit more commands; it must not destroy the
// client.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <hiredis/hiredis.h>

#include "common/group/redis_counters.h"

namespace gtpcp::persister {

enum class RedisErrc : uint8_t {
  kOk,               // accepted (submit) or answered without error (completion)
  kReplyError,       // the server answered with an error reply (-ERR, -WRONGTYPE...): `reply` holds it
  kRefused,          // not accepted: the client holds max_pending commands already
  kBadCommand,       // not accepted: empty command, or a group larger than kMaxGroupCommands
  kConnectionLost,   // sent, then the connection was lost: it may or may not have been applied
  kTimeout,          // no answer within command_timeout_ms, or not sent within request_timeout_ms
  kTooManyRedirects, // MOVED/ASK more than max_redirects times
  kShutdown,         // the client was destroyed before an answer
};

// Stable snake_case name ("connection_lost"), for logs and test output.
std::string_view errcName(RedisErrc e) noexcept;

struct RedisResult {
  RedisErrc error = RedisErrc::kOk;
  // The server's answer for kOk and kReplyError (the last command's, for a
  // group); null otherwise. Owned by hiredis: valid during the call only.
  const redisReply* reply = nullptr;
};

// A completion: a function and its argument, no allocation per command.
struct RedisCompletion {
  void (*fn)(void* user, const RedisResult& result) noexcept = nullptr;
  void* user = nullptr;
};

// One command: its arguments as byte strings, the name first.
using RedisArgv = std::span<const std::string_view>;

// Per-command options.
enum RedisFlags : uint8_t {
  kRedisNoFlags = 0,
  // Safe to apply twice (SET of a whole record, DEL): when the connection is
  // lost with the command in flight, it is sent again instead of failing with
  // kConnectionLost.
  kRedisIdempotent = 1,
};

inline constexpr std::size_t kMaxGroupCommands = 16;

class RedisClient {
 public:
  virtual ~RedisClient() = default;

  // Sends `argv` to the primary of hash slot `slot` (keySlot() of its key).
  // kOk: accepted, `done` will be called exactly once; anything else (kRefused,
  // kBadCommand, kShutdown from a completion run by the destructor): refused
  // now, `done` will not be called. The arguments are copied.
  virtual RedisErrc submit(uint16_t slot, RedisArgv argv, RedisCompletion done,
                           uint8_t flags = kRedisNoFlags) noexcept = 0;

  // A group: commands sent back to back on one connection (MULTI ... EXEC, or
  // several commands on keys of one hash tag), sent again as a whole after a
  // redirection or a retryable error of any member. `done` gets the last
  // command's reply, so a group whose members' answers matter is a MULTI/EXEC.
  virtual RedisErrc submitGroup(uint16_t slot, std::span<const RedisArgv> commands, RedisCompletion done,
                                uint8_t flags = kRedisNoFlags) noexcept = 0;

  virtual const RedisCounters& counters() const noexcept = 0;
  // Which primary serves `slot` now, as a token equal for slots of one
  // primary (0: not known). Single and Sentinel modes have one for all.
  virtual uintptr_t primaryOf(uint16_t slot) const noexcept {
    (void)slot;
    return 1;
  }
};

}  // namespace gtpcp::persister
