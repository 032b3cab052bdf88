// gtpcp.yaml: the key table and everything derived from it (see instance.h).
//
// The table kKeys is the only place a key is described. To add a key: add a
// field to InstanceConfig, add one entry here (in file order, after its
// section), add its tests, and regenerate config/gtpcp.yaml:
//   GTPCP_UPDATE_EXAMPLES=1 gtpcp_config_tests --gtest_filter=InstanceExample.*
// Cross-key rules (one address at least, one CPU per worker, paths) are in
// crossCheck(), those of the bgp section in crossCheckBgp(); derived values
// are computed in derive() and checked in checkDerived().
#include "common/config/instance.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "common/config/address.h"
#include "common/config/instance_detail.h"
#include "common/config/yaml_util.h"

namespace gtpcp::config {

namespace detail {
// A validated value on its way from the YAML node to InstanceConfig.
struct KeyValue {
  int64_t integer = 0;  // kInteger; kEnum: index in choices
  std::string text;     // kName, kPath
  std::vector<int64_t> list;
  std::vector<InstanceConfig::Storage::Server> endpoints;  // kEndpointList
  std::vector<std::string> addresses;                      // kAddressList, canonical text
  std::vector<InstanceConfig::Bgp::Neighbor> neighbors;    // kNeighborList
  gtp::Ipv4 ipv4;
  gtp::Ipv6 ipv6;
};
}  // namespace detail

namespace {

using detail::Diagnostics;
using detail::KeyValue;
using detail::MapEntry;
using detail::quote;

// ZeroMQ ipc:// endpoints live in run_dir, and a Unix socket path must fit
// in sockaddr_un.sun_path (108 bytes with its terminator): this leaves room
// for the endpoint names.
constexpr std::size_t kMaxRunDirBytes = 80;
constexpr std::string_view kNameExtraChars = "_-";
// Smaller log files would rotate every few lines.
constexpr uint64_t kMinLogRotateBytes = 65536;

template <class T>
std::string showNumber(T value) {
  return std::to_string(value);
}
std::string showAddress(const std::optional<gtp::Ipv4>& a) { return a ? gtp::toString(*a) : ""; }
std::string showAddress(const std::optional<gtp::Ipv6>& a) { return a ? gtp::toString(*a) : ""; }
// "address:port" entries as a YAML flow list, IPv6 addresses in brackets.
std::string showEndpoints(const std::vector<InstanceConfig::Storage::Server>& endpoints) {
  std::string out = "[";
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const auto& e = endpoints[i];
    const bool v6 = e.address.find(':') != std::string::npos;
    out += (i ? ", " : "") + (v6 ? "\"[" + e.address + "]:" : "\"" + e.address + ":") + std::to_string(e.port) + "\"";
  }
  return out + "]";
}

std::string showTexts(const std::vector<std::string>& texts) {
  std::string out = "[";
  for (std::size_t i = 0; i < texts.size(); ++i) out += (i ? ", " : "") + quote(texts[i]);
  return out + "]";
}
// Holds the passwords, so that changedKeys() sees a new one: compare it, never
// log it.
std::string showNeighbors(const std::vector<InstanceConfig::Bgp::Neighbor>& neighbors) {
  std::string out = "[";
  for (std::size_t i = 0; i < neighbors.size(); ++i) {
    const auto& n = neighbors[i];
    out += (i ? ", " : "") + std::string("{address: ") + quote(n.address) +
           ", as: " + std::to_string(n.remote_as) +
           (n.password.empty() ? "" : ", password: " + quote(n.password)) + "}";
  }
  return out + "]";
}

// clang-format off
constexpr KeyInfo kKeys[] = {
  {.path = "group", .type = KeyType::kName, .min = 1, .max = 32, .flags = KeyInfo::kRequired,
   .doc = "Name of the group; names its shared-memory objects and its run directory.",
   .example = "local",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.group = v.text; },
   .show = [](const InstanceConfig& c) { return c.group; }},
  {.path = "instance", .type = KeyType::kName, .min = 1, .max = 16, .default_value = "a",
   .doc = "This instance within the group (active and standby instances differ here).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.instance = v.text; },
   .show = [](const InstanceConfig& c) { return c.instance; }},
  {.path = "group_size", .type = KeyType::kInteger, .min = 1, .max = 4, .default_value = "1",
   .doc = "How many instances the group has (an active and a standby: 2). Each instance gives out session TEIDs "
          "from its own share of every partition's slots, so that two instances never give out the same TEID "
          "whatever either knows of the other's sessions; the same on every instance of the group.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.group_size = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.group_size); }},
  {.path = "instance_index", .type = KeyType::kInteger, .min = 0, .max = 3, .default_value = "0",
   .doc = "This instance's share of the session slots (slot % group_size), below group_size; a different one "
          "on each instance of the group.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.instance_index = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.instance_index); }},
  {.path = "run_dir", .type = KeyType::kPath, .default_value = "/tmp/gtpcp/<group>",
   .doc = "Directory of the group's pid files, logs and sockets; <group> is replaced by the group name.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.run_dir.configured = v.text; },
   .show = [](const InstanceConfig& c) { return c.run_dir.resolved; }},
  {.path = "workers", .type = KeyType::kInteger, .min = 1, .max = 64, .default_value = "2",
   .doc = "Number of worker processes; worker I owns the partitions p with p % workers == I.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.workers = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.workers); }},
  {.path = "routing", .type = KeyType::kPath, .reload = ReloadClass::kReload, .flags = KeyInfo::kRequired,
   .doc = "Path of the routing document (pools and rules); relative to the directory of this file.",
   .example = "routing.yaml",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.routing.configured = v.text; },
   .show = [](const InstanceConfig& c) { return c.routing.resolved; }},

  {.path = "log", .type = KeyType::kSection, .doc = "Logging."},
  {.path = "log.level", .type = KeyType::kEnum, .default_value = "info",
   .choices = "trace|debug|info|warn|error|off", .reload = ReloadClass::kReload,
   .doc = "Least severe level logged; IMSI and MSISDN are masked at info and above.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.log.level = static_cast<LogLevel>(v.integer); },
   .show = [](const InstanceConfig& c) { return std::string(logLevelName(c.log.level)); }},
  {.path = "log.format", .type = KeyType::kEnum, .default_value = "text", .choices = "text|json",
   .doc = "Line format: text (time, process[pid], level: message; the further lines of a multi-line message "
          "indented) or json (one object per line: time, level, process, pid, event).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.log.format = static_cast<InstanceConfig::Log::Format>(v.integer); },
   .show = [](const InstanceConfig& c) { return std::string(c.log.format == InstanceConfig::Log::Format::kJson ? "json" : "text"); }},
  {.path = "log.directory", .type = KeyType::kPath, .default_value = "<run_dir>",
   .doc = "Directory of the log files, a <process>.log each, reopened on SIGHUP (<run_dir> and <group> are "
          "replaced); or stderr (stderr only), or journald (stderr only, each line prefixed with its syslog "
          "priority for systemd's journal, and no time); a directory of either name is written ./stderr, ./journald.",
   .store = [](InstanceConfig& c, const KeyValue& v) {
      using Output = InstanceConfig::Log::Output;
      c.log.directory.configured = v.text;
      c.log.output = v.text == "journald" ? Output::kJournald : v.text == "stderr" ? Output::kStderr : Output::kDirectory; },
   .show = [](const InstanceConfig& c) {
      return c.log.output == InstanceConfig::Log::Output::kDirectory ? c.log.directory.resolved : c.log.directory.configured; }},
  {.path = "log.max_bytes", .type = KeyType::kInteger, .min = 0, .max = 1099511627776, .default_value = "0",
   .doc = "A log file about to grow past this many bytes (at least 65536) is renamed <process>.log.1, older "
          "ones moving up to .<keep>, and a new one started; 0: never (leave it to logrotate and SIGHUP).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.log.max_bytes = static_cast<uint64_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.log.max_bytes); }},
  {.path = "log.keep", .type = KeyType::kInteger, .min = 1, .max = 1000, .default_value = "5",
   .doc = "With log.max_bytes, the rotated files kept of each process: <process>.log.1 (the newest) to "
          "<process>.log.<keep>; an older one is deleted.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.log.keep = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.log.keep); }},

  {.path = "gtpc", .type = KeyType::kSection, .doc = "GTP-C: the proxy's UDP sockets on both legs."},
  {.path = "gtpc.port", .type = KeyType::kInteger, .min = 1, .max = 65535, .default_value = "2123",
   .doc = "UDP port of GTP-C on both legs (TS 29.274 and TS 29.060 use 2123).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.port = static_cast<uint16_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.gtpc.port); }},
  {.path = "gtpc.access", .type = KeyType::kSection,
   .doc = "The proxy's GTP-C address toward SGWs and SGSNs: ipv4, ipv6 or both (at least one)."},
  {.path = "gtpc.access.ipv4", .type = KeyType::kIpv4,
   .doc = "IPv4 address toward the access side.", .example = "127.0.0.1",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.access.ipv4 = v.ipv4; },
   .show = [](const InstanceConfig& c) { return showAddress(c.gtpc.access.ipv4); }},
  {.path = "gtpc.access.ipv6", .type = KeyType::kIpv6, .flags = KeyInfo::kCommentedInExample,
   .doc = "IPv6 address toward the access side.", .example = "::1",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.access.ipv6 = v.ipv6; },
   .show = [](const InstanceConfig& c) { return showAddress(c.gtpc.access.ipv6); }},
  {.path = "gtpc.gateway", .type = KeyType::kSection, .flags = KeyInfo::kCommentedInExample,
   .doc = "The proxy's GTP-C address toward PGWs and GGSNs; without this section, the access addresses."},
  {.path = "gtpc.gateway.ipv4", .type = KeyType::kIpv4,
   .doc = "IPv4 address toward the gateway side.", .example = "127.0.0.1",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.gateway.ipv4 = v.ipv4; },
   .show = [](const InstanceConfig& c) { return showAddress(c.gtpc.gateway.ipv4); }},
  {.path = "gtpc.gateway.ipv6", .type = KeyType::kIpv6,
   .doc = "IPv6 address toward the gateway side.", .example = "::1",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.gateway.ipv6 = v.ipv6; },
   .show = [](const InstanceConfig& c) { return showAddress(c.gtpc.gateway.ipv6); }},
  {.path = "gtpc.socket_buffer_bytes", .type = KeyType::kInteger, .min = 65536, .max = 268435456,
   .default_value = "8388608",
   .doc = "SO_RCVBUF and SO_SNDBUF of each GTP-C socket, in bytes.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.socket_buffer_bytes = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.gtpc.socket_buffer_bytes); }},
  {.path = "gtpc.recovery", .type = KeyType::kInteger, .min = 0, .max = 255, .default_value = "1",
   .doc = "Recovery (restart counter, TS 29.274 8.5) the group announces without storage, and starts from with "
          "it: Redis then keeps the group's value, which goes up by one when a start finds no session stored.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.gtpc.recovery = static_cast<uint8_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.gtpc.recovery); }},

  {.path = "overload", .type = KeyType::kSection,
   .doc = "Protection of established sessions from surges of new ones (full new rings are refused anyway)."},
  {.path = "overload.creations_per_peer", .type = KeyType::kInteger, .min = 0, .max = 10000000,
   .default_value = "0",
   .doc = "Session-creating requests per second accepted from one peer address; more are rejected with "
          "No resources available. 0: no limit.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.overload.creations_per_peer = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.overload.creations_per_peer); }},
  {.path = "overload.creations_burst", .type = KeyType::kInteger, .min = 0, .max = 10000000,
   .default_value = "0",
   .doc = "Requests one peer may send at once above its rate; 0: one second's worth.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.overload.creations_burst = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.overload.creations_burst); }},
  {.path = "overload.max_creation_wait_ms", .type = KeyType::kInteger, .min = 0, .max = 60000,
   .default_value = "500",
   .doc = "Session-creating requests that waited longer than this in the kernel (the forwarder is behind) are "
          "rejected with No resources available at once. 0: never.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.overload.max_creation_wait_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.overload.max_creation_wait_ms); }},

  {.path = "timers", .type = KeyType::kSection,
   .doc = "Retransmission of the requests the proxy sends (TS 29.274 7.6, TS 29.060 7.6)."},
  {.path = "timers.t3_ms", .type = KeyType::kInteger, .min = 100, .max = 60000, .default_value = "3000",
   .reload = ReloadClass::kReload,
   .doc = "T3-RESPONSE: milliseconds to wait for a response before sending the request again.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.timers.t3_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.timers.t3_ms); }},
  {.path = "timers.n3", .type = KeyType::kInteger, .min = 0, .max = 10, .default_value = "2",
   .reload = ReloadClass::kReload,
   .doc = "N3-REQUESTS: how many times a request is sent again before it is given up.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.timers.n3 = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.timers.n3); }},

  {.path = "rings", .type = KeyType::kSection,
   .doc = "Shared-memory rings between the forwarder and each worker (slots: rounded up to a power of two)."},
  {.path = "rings.priority_slots", .type = KeyType::kInteger, .min = 4096, .max = 1048576,
   .default_value = "16384", .flags = KeyInfo::kPowerOfTwo,
   .doc = "64-octet slots of each worker's priority ring (responses, established sessions); a datagram of N octets takes (N + 48) / 64 slots, rounded up.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.rings.priority_slots.configured = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.rings.priority_slots.effective); }},
  {.path = "rings.new_slots", .type = KeyType::kInteger, .min = 4096, .max = 1048576,
   .default_value = "8192", .flags = KeyInfo::kPowerOfTwo,
   .doc = "Slots of each worker's ring of session-creating requests; when full, new sessions are rejected.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.rings.new_slots.configured = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.rings.new_slots.effective); }},
  {.path = "rings.persist_slots", .type = KeyType::kInteger, .min = 4096, .max = 4194304,
   .default_value = "262144", .flags = KeyInfo::kPowerOfTwo,
   .doc = "Slots of each worker's ring of session changes toward the persister: what waits while Redis is "
          "unreachable (a change takes about 8 slots); when full, changes are dropped and counted.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.rings.persist_slots.configured = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.rings.persist_slots.effective); }},
  {.path = "rings.batch", .type = KeyType::kInteger, .min = 1, .max = 1024, .default_value = "64",
   .doc = "Datagrams per recvmmsg/sendmmsg call.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.rings.batch = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.rings.batch); }},

  {.path = "sessions", .type = KeyType::kSection,
   .doc = "Session and transaction tables in shared memory (rounded up to a power of two)."},
  {.path = "sessions.per_partition", .type = KeyType::kInteger, .min = 64, .max = 16384,
   .default_value = "4096", .flags = KeyInfo::kPowerOfTwo,
   .doc = "Session slots of each of the 1024 partitions.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.sessions.per_partition.configured = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.sessions.per_partition.effective); }},
  {.path = "sessions.transactions", .type = KeyType::kInteger, .min = 1024, .max = 4194304,
   .default_value = "524288", .flags = KeyInfo::kPowerOfTwo,
   .doc = "Transactions of each worker: a request is held from its arrival until T3 x (N3 + 1) later, "
          "answered or not, so size it to requests per second per worker x that lifetime.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.sessions.transactions.configured = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.sessions.transactions.effective); }},
  {.path = "sessions.answer_cache_bytes", .type = KeyType::kInteger, .min = 1048576, .max = 4294967296,
   .default_value = "33554432",
   .doc = "Octets of each worker's cache of answers, replayed to retransmitted requests: answers per second "
          "per worker x average answer size x T3 x (N3 + 1).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.sessions.answer_cache_bytes = static_cast<uint64_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.sessions.answer_cache_bytes); }},

  {.path = "storage", .type = KeyType::kSection, .doc = "Redis, where the group keeps its sessions."},
  {.path = "storage.mode", .type = KeyType::kEnum, .default_value = "embedded",
   .choices = "embedded|single|cluster|sentinel|off",
   .doc = "Which Redis: embedded (gtpcp start runs a local redis-server, its data in run_dir), single (one "
          "server), cluster (Redis Cluster; servers are seed nodes), sentinel (a Sentinel-managed primary; "
          "servers are the sentinels) or off (sessions live in shared memory only).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.mode = static_cast<InstanceConfig::Storage::Mode>(v.integer); },
   .show = [](const InstanceConfig& c) {
      constexpr const char* kNames[] = {"embedded", "single", "cluster", "sentinel", "off"};
      return std::string(kNames[static_cast<int>(c.storage.mode)]); }},
  {.path = "storage.servers", .type = KeyType::kEndpointList, .min = 0, .max = 64, .default_value = "[]",
   .doc = "Redis servers as \"address:port\" (IPv6 as \"[address]:port\"): one for single, seed nodes for "
          "cluster, the sentinels for sentinel; none for embedded and off.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.servers = v.endpoints; },
   .show = [](const InstanceConfig& c) { return showEndpoints(c.storage.servers); }},
  {.path = "storage.sentinel_master", .type = KeyType::kName, .min = 1, .max = 64, .default_value = "gtpcp",
   .doc = "The name the sentinels monitor the primary under (sentinel mode).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.sentinel_master = v.text; },
   .show = [](const InstanceConfig& c) { return c.storage.sentinel_master; }},
  {.path = "storage.embedded_port", .type = KeyType::kInteger, .min = 1024, .max = 65535, .default_value = "6379",
   .doc = "Port of the embedded redis-server on 127.0.0.1 (embedded mode).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.embedded_port = static_cast<uint16_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.storage.embedded_port); }},
  {.path = "storage.persist", .type = KeyType::kEnum, .default_value = "async", .choices = "async|sync",
   .doc = "When answers leave: async (at once, the changes following in batches) or sync (an answer that "
          "creates, changes or deletes a session waits until Redis acknowledged the change).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.persist = static_cast<InstanceConfig::Storage::Persist>(v.integer); },
   .show = [](const InstanceConfig& c) { return std::string(c.storage.persist == InstanceConfig::Storage::Persist::kSync ? "sync" : "async"); }},
  {.path = "storage.sync_replicas", .type = KeyType::kInteger, .min = 0, .max = 8, .default_value = "1",
   .doc = "With persist: sync, how many replicas of each primary must hold a change before its answer leaves "
          "(one WAIT per batch and primary); 0: the primary's acknowledgement alone. A primary with fewer "
          "replicas connected is reported (persister.replicas_missing) and not waited on.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.sync_replicas = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.storage.sync_replicas); }},
  {.path = "storage.sync_wait_ms", .type = KeyType::kInteger, .min = 10, .max = 60000, .default_value = "1000",
   .doc = "With persist: sync, how long one WAIT blocks; a batch its replicas have not copied by then is waited "
          "for again while the primary has the replicas connected.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.storage.sync_wait_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.storage.sync_wait_ms); }},

  {.path = "watchdog", .type = KeyType::kSection,
   .doc = "The thread watchdog: every process beats from inside its main loop; a silent or dead one is replaced."},
  {.path = "watchdog.timeout_ms", .type = KeyType::kInteger, .min = 200, .max = 60000, .default_value = "1000",
   .doc = "A process silent this long (its main loop hung, or stopped) is killed and started again.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.watchdog.timeout_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.watchdog.timeout_ms); }},
  {.path = "watchdog.max_restarts", .type = KeyType::kInteger, .min = 1, .max = 1000, .default_value = "5",
   .doc = "Restarts of one process within a minute after which the watchdog gives up on it and says why in "
          "gtpcp status; between restarts it waits twice as long each time, from 100 ms to 10 s.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.watchdog.max_restarts = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.watchdog.max_restarts); }},
  {.path = "watchdog.stop_drain_ms", .type = KeyType::kInteger, .min = 0, .max = 600000, .default_value = "5000",
   .doc = "gtpcp stop (or SIGTERM to the watchdog): how long the group waits for the answers to the requests it "
          "forwarded before it stops anyway; meanwhile creations get cause 73 and other requests are dropped.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.watchdog.stop_drain_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.watchdog.stop_drain_ms); }},

  {.path = "management", .type = KeyType::kSection,
   .doc = "gtpcp-console, the management process: Prometheus metrics, health probes and the status API over HTTP."},
  {.path = "management.listen", .type = KeyType::kEndpointList, .min = 0, .max = 2,
   .default_value = "[\"127.0.0.1:9123\"]",
   .doc = "IPv4 addresses and ports gtpcp-console listens on (\"address:port\"), apart from the GTP-C addresses; "
          "[]: the group runs without it.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.management.listen = v.endpoints; },
   .show = [](const InstanceConfig& c) { return showEndpoints(c.management.listen); }},

  {.path = "bgp", .type = KeyType::kSection,
   .doc = "BGP: while this instance is healthy, this host's FRR announces the group's service addresses to the routers."},
  {.path = "bgp.mode", .type = KeyType::kEnum, .default_value = "off", .choices = "off|frr",
   .doc = "Who announces: off (the group does not use BGP: no bgp-watchdog, no bridge) or frr (gtpcp-bgpd-bridge "
          "drives this host's FRR through vtysh).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.mode = static_cast<InstanceConfig::Bgp::Mode>(v.integer); },
   .show = [](const InstanceConfig& c) { return std::string(c.bgp.mode == InstanceConfig::Bgp::Mode::kFrr ? "frr" : "off"); }},
  {.path = "bgp.role", .type = KeyType::kEnum, .default_value = "active", .choices = "active|standby",
   .doc = "This instance's route: active, or standby (announced too, but made worse by standby_med and "
          "standby_prepend, so that routers use it only while the active's is withdrawn).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.role = static_cast<InstanceConfig::Bgp::Role>(v.integer); },
   .show = [](const InstanceConfig& c) { return std::string(c.bgp.role == InstanceConfig::Bgp::Role::kStandby ? "standby" : "active"); }},
  // At most the four gtpc addresses, each once.
  {.path = "bgp.service_addresses", .type = KeyType::kAddressList, .min = 0, .max = 4, .default_value = "[]",
   .doc = "Addresses announced, as /32 or /128, each one of the gtpc addresses; []: every gtpc address, access and "
          "gateway.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.service_addresses = v.addresses; },
   .show = [](const InstanceConfig& c) { return showTexts(c.bgp.service_addresses); }},
  {.path = "bgp.local_as", .type = KeyType::kInteger, .min = 1, .max = 4294967295, .flags = KeyInfo::kCommentedInExample,
   .doc = "This host's AS number; bgp.mode frr needs it.", .example = "65001",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.local_as = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return c.bgp.local_as == 0 ? std::string() : showNumber(c.bgp.local_as); }},
  {.path = "bgp.router_id", .type = KeyType::kIpv4, .flags = KeyInfo::kCommentedInExample,
   .doc = "BGP router ID of this host's bgpd; left out, FRR picks one of the host's addresses.",
   .example = "10.250.0.1",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.router_id = v.ipv4; },
   .show = [](const InstanceConfig& c) { return showAddress(c.bgp.router_id); }},
  {.path = "bgp.neighbors", .type = KeyType::kNeighborList, .min = 0, .max = 16, .default_value = "[]",
   .flags = KeyInfo::kCommentedInExample,
   .doc = "The routers to announce to, each {address: IPv4 or IPv6, as: 1..4294967295, password: optional TCP MD5 "
          "key of 1 to 80 printable characters without spaces}; bgp.mode frr needs one at least.",
   .example = "[{address: 10.250.0.2, as: 65000}]",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.neighbors = v.neighbors; },
   .show = [](const InstanceConfig& c) { return showNeighbors(c.bgp.neighbors); }},
  {.path = "bgp.standby_med", .type = KeyType::kInteger, .min = 0, .max = 4294967295, .default_value = "200",
   .doc = "MED of the standby's route: routers prefer the lower MED, but compare it only between routes from one "
          "neighbouring AS (hence standby_prepend).",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.standby_med = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.standby_med); }},
  {.path = "bgp.standby_prepend", .type = KeyType::kInteger, .min = 0, .max = 10, .default_value = "3",
   .doc = "Extra copies of local_as the standby prepends to its AS path, which makes its route worse seen from any AS.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.standby_prepend = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.standby_prepend); }},
  {.path = "bgp.bfd", .type = KeyType::kSection,
   .doc = "BFD on each neighbour session: a dead link or router is noticed in interval_ms x multiplier, not after the BGP hold time."},
  {.path = "bgp.bfd.enabled", .type = KeyType::kEnum, .default_value = "on", .choices = "on|off",
   .doc = "With on, BFD watches each neighbour session; with off, a dead neighbour is noticed only when the BGP hold "
          "time expires.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.bfd = v.integer == 0; },
   .show = [](const InstanceConfig& c) { return std::string(c.bgp.bfd ? "on" : "off"); }},
  {.path = "bgp.bfd.interval_ms", .type = KeyType::kInteger, .min = 50, .max = 60000, .default_value = "300",
   .doc = "Transmit and receive interval of BFD control packets, in milliseconds.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.bfd_interval_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.bfd_interval_ms); }},
  {.path = "bgp.bfd.multiplier", .type = KeyType::kInteger, .min = 2, .max = 255, .default_value = "3",
   .doc = "BFD packets missed in a row after which the neighbour is declared down.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.bfd_multiplier = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.bfd_multiplier); }},
  {.path = "bgp.check_interval_ms", .type = KeyType::kInteger, .min = 100, .max = 60000, .default_value = "1000",
   .doc = "How often the bgp-watchdog judges this instance's health and renews its verdict.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.check_interval_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.check_interval_ms); }},
  {.path = "bgp.withdraw_hold_ms", .type = KeyType::kInteger, .min = 0, .max = 600000, .default_value = "10000",
   .doc = "A recoverable fault (such as storage slow to acknowledge) withdraws the route only when it lasts this long; "
          "an unrecoverable one withdraws it at once.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.withdraw_hold_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.withdraw_hold_ms); }},
  {.path = "bgp.return_hold_ms", .type = KeyType::kInteger, .min = 0, .max = 3600000, .default_value = "30000",
   .doc = "After a withdrawal, the instance must be healthy this long, continuously, before its route is announced again.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.return_hold_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.return_hold_ms); }},
  {.path = "bgp.damping", .type = KeyType::kSection,
   .doc = "An instance that keeps failing returns later, so that the routers do not follow every flap."},
  {.path = "bgp.damping.flaps", .type = KeyType::kInteger, .min = 1, .max = 1000, .default_value = "3",
   .doc = "This many unhealthy spells within window_s make the return hold-down hold_ms instead of return_hold_ms; "
          "a spell is health lost while serving: neither the start nor gtpcp switchover or stop counts.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.damping_flaps = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.damping_flaps); }},
  {.path = "bgp.damping.window_s", .type = KeyType::kInteger, .min = 1, .max = 86400, .default_value = "300",
   .doc = "Seconds over which the unhealthy spells are counted.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.damping_window_s = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.damping_window_s); }},
  {.path = "bgp.damping.hold_ms", .type = KeyType::kInteger, .min = 0, .max = 86400000, .default_value = "300000",
   .doc = "Return hold-down, in milliseconds, of an instance that flapped flaps times within window_s.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.damping_hold_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.damping_hold_ms); }},
  {.path = "bgp.lease_ms", .type = KeyType::kInteger, .min = 500, .max = 60000, .default_value = "2000",
   .doc = "The bridge withdraws the route when the bgp-watchdog's last verdict is older than this, so that a hung "
          "bgp-watchdog cannot keep it announced; longer than check_interval_ms.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.lease_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.lease_ms); }},
  {.path = "bgp.stop_settle_ms", .type = KeyType::kInteger, .min = 0, .max = 60000, .default_value = "500",
   .doc = "gtpcp stop withdraws the route first; once FRR has the withdraw, the routers get this long to move "
          "traffic to the other instance before this one refuses anything.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.stop_settle_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.stop_settle_ms); }},
  {.path = "bgp.storage_ack_ms", .type = KeyType::kInteger, .min = 100, .max = 600000, .default_value = "5000",
   .doc = "With storage.persist async, changes Redis leaves unacknowledged longer than this are a recoverable fault.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.storage_ack_ms = static_cast<uint32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.bgp.storage_ack_ms); }},
  {.path = "bgp.vtysh", .type = KeyType::kPath, .default_value = "/usr/bin/vtysh",
   .doc = "FRR's vtysh, through which the bridge configures bgpd and bfdd.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.vtysh.configured = v.text; },
   .show = [](const InstanceConfig& c) { return c.bgp.vtysh.resolved; }},
  // A path cannot be empty: FRR's default is the key left out.
  {.path = "bgp.vty_socket_dir", .type = KeyType::kPath, .flags = KeyInfo::kCommentedInExample,
   .doc = "Directory of FRR's vty sockets (vtysh --vty_socket); left out, FRR's default.",
   .example = "/var/run/frr",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.bgp.vty_socket_dir = v.text; },
   .show = [](const InstanceConfig& c) { return c.bgp.vty_socket_dir; }},

  {.path = "cpu", .type = KeyType::kSection, .doc = "CPU pinning."},
  {.path = "cpu.forwarder", .type = KeyType::kInteger, .min = -1, .max = 1023, .default_value = "-1",
   .doc = "CPU the forwarder is pinned to; -1 leaves it unpinned.",
   .store = [](InstanceConfig& c, const KeyValue& v) { c.cpu.forwarder = static_cast<int32_t>(v.integer); },
   .show = [](const InstanceConfig& c) { return showNumber(c.cpu.forwarder); }},
  {.path = "cpu.workers", .type = KeyType::kIntegerList, .min = 0, .max = 1023, .default_value = "[]",
   .doc = "CPU of each worker, by worker index: [] leaves them unpinned, else one entry per worker.",
   .store = [](InstanceConfig& c, const KeyValue& v) {
      c.cpu.workers.assign(v.list.begin(), v.list.end()); },
   .show = [](const InstanceConfig& c) {
      std::string out = "[";
      for (std::size_t i = 0; i < c.cpu.workers.size(); ++i)
        out += (i ? ", " : "") + std::to_string(c.cpu.workers[i]);
      return out + "]"; }},
};
// clang-format on

std::string_view parentOf(std::string_view path) noexcept {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : path.substr(0, dot);
}
std::string_view leafOf(std::string_view path) noexcept {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::vector<std::string_view> childrenOf(std::string_view section) {
  std::vector<std::string_view> out;
  for (const KeyInfo& k : kKeys)
    if (parentOf(k.path) == section) out.push_back(leafOf(k.path));
  return out;
}

std::string joinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

std::vector<std::string_view> splitChoices(std::string_view choices) {
  std::vector<std::string_view> out;
  while (!choices.empty()) {
    const auto bar = choices.find('|');
    out.push_back(choices.substr(0, bar));
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return out;
}

[[noreturn]] void invariantFailed(const char* what) {
  std::fprintf(stderr, "gtpcp config: internal invariant broken: %s\n", what);
  std::abort();
}
// Derived values and table defaults are computed by this file, not read from
// peers: a broken one is a bug, so it stops the process in every build type.
#define GTPCP_CONFIG_INVARIANT(cond) \
  do {                               \
    if (!(cond)) invariantFailed(#cond); \
  } while (0)

// -- reading values ----------------------------------------------------------

// Placeholders a path may hold.
constexpr std::string_view kPlaceholders[] = {"<group>", "<run_dir>"};

// "" when every '<' of `text` opens a known placeholder, else the message.
std::string placeholderProblem(std::string_view text) {
  for (std::size_t at = text.find('<'); at != std::string_view::npos; at = text.find('<', at + 1)) {
    const bool known = std::any_of(std::begin(kPlaceholders), std::end(kPlaceholders),
                                   [&](std::string_view p) { return text.substr(at, p.size()) == p; });
    if (!known) {
      const auto end = text.find('>', at);
      const std::string_view bad =
          text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at + 1);
      return "unknown placeholder " + quote(bad) + " (known: <group>, <run_dir>)";
    }
  }
  return "";
}

// "192.0.2.1:6379" or "[2001:db8::1]:6379".
std::optional<InstanceConfig::Storage::Server> parseEndpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  uint32_t port = 0;
  for (char ch : port_text) {
    if (ch < '0' || ch > '9' || port > 65535) return std::nullopt;
    port = port * 10 + static_cast<uint32_t>(ch - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  InstanceConfig::Storage::Server out;
  out.port = static_cast<uint16_t>(port);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    gtp::Ipv6 a;
    if (!gtp::parseIpv6(std::string(host), a)) return std::nullopt;
  } else {
    gtp::Ipv4 a;
    if (!gtp::parseIpv4(std::string(host), a)) return std::nullopt;
  }
  out.address = std::string(host);
  return out;
}

// An IPv4 or IPv6 unicast literal in `node`, as canonical text; reported at
// `line` under `key` otherwise.
std::optional<std::string> readAnyAddress(const YAML::Node& node, int line, const std::string& key,
                                          Diagnostics& diag) {
  const std::string* text = detail::readScalar(node, line, key, "an IPv4 or IPv6 address", diag);
  if (!text) return std::nullopt;
  std::string problem;
  std::string canonical;
  gtp::Ipv4 v4;
  gtp::Ipv6 v6;
  if (gtp::parseIpv4(*text, v4)) {
    problem = detail::unicastProblem(v4);
    canonical = gtp::toString(v4);
  } else if (gtp::parseIpv6(*text, v6)) {
    problem = detail::unicastProblem(v6);
    canonical = gtp::toString(v6);
  } else {
    problem = "is not an IPv4 or IPv6 address";
  }
  if (!problem.empty()) {
    diag.error(line, key, quote(*text) + " " + problem);
    return std::nullopt;
  }
  return canonical;
}

// `node` is a list of at most `key.max` entries; reports it otherwise.
bool checkList(const KeyInfo& key, const YAML::Node& node, int line, std::string_view expected,
               Diagnostics& diag) {
  if (!node.IsSequence()) {
    diag.error(line, std::string(key.path),
               "expected " + std::string(expected) + ", found " + std::string(detail::kindOf(node)));
    return false;
  }
  if (node.size() > static_cast<std::size_t>(key.max)) {
    diag.error(line, std::string(key.path),
               "has " + std::to_string(node.size()) + " entries; at most " + std::to_string(key.max));
    return false;
  }
  return true;
}

int itemLine(const YAML::Node& item, int list_line) {
  const int line = detail::lineOf(item);
  return line != 0 ? line : list_line;
}

std::optional<KeyValue> readAddressList(const KeyInfo& key, const YAML::Node& node, int line,
                                        Diagnostics& diag) {
  if (!checkList(key, node, line, "a list of IPv4 and IPv6 addresses", diag)) return std::nullopt;
  const std::size_t errors = diag.count();
  KeyValue v;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const int item_line = itemLine(item, line);
    const std::string item_path = detail::indexKey(key.path, i);
    std::optional<std::string> address = readAnyAddress(item, item_line, item_path, diag);
    if (!address) continue;
    // Compared as canonical text, so "2001:db8::1" and "2001:DB8:0::1" are one.
    auto same = std::find(v.addresses.begin(), v.addresses.end(), *address);
    if (same != v.addresses.end()) {
      diag.error(item_line, item_path,
                 quote(*address) + " is listed twice (also " +
                     detail::indexKey(key.path, static_cast<std::size_t>(same - v.addresses.begin())) + ")");
      continue;
    }
    v.addresses.push_back(std::move(*address));
  }
  if (diag.count() != errors) return std::nullopt;
  return v;
}

// A TCP MD5 key as FRR takes it on one vtysh line. The message never repeats
// the password: error output ends up in logs and terminals.
std::string passwordProblem(std::string_view password) {
  constexpr std::size_t kMaxPasswordChars = 80;  // TCP_MD5SIG_MAXKEYLEN
  if (password.empty()) return "must not be empty";
  if (password.size() > kMaxPasswordChars)
    return "is " + std::to_string(password.size()) + " characters long; at most " +
           std::to_string(kMaxPasswordChars);
  for (std::size_t i = 0; i < password.size(); ++i) {
    const auto ch = static_cast<unsigned char>(password[i]);
    if (ch <= 0x20 || ch >= 0x7f)
      return "character " + std::to_string(i + 1) + " is a space or not printable ASCII; a password is 1 to " +
             std::to_string(kMaxPasswordChars) + " of ! to ~";
  }
  return "";
}

constexpr std::string_view kNeighborKeys[] = {"address", "as", "password"};

std::optional<KeyValue> readNeighbors(const KeyInfo& key, const YAML::Node& node, int line,
                                      Diagnostics& diag) {
  if (!checkList(key, node, line, "a list of {address, as, password}", diag)) return std::nullopt;
  const std::size_t errors = diag.count();
  KeyValue v;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const int item_line = itemLine(item, line);
    const std::string item_path = detail::indexKey(key.path, i);
    if (!item.IsMap()) {
      diag.error(item_line, item_path,
                 "expected a mapping of address, as and password, found " + std::string(detail::kindOf(item)));
      continue;
    }
    InstanceConfig::Bgp::Neighbor n;
    bool has_address = false;
    bool has_as = false;
    int address_line = item_line;
    for (const MapEntry& e : detail::mapEntries(item, item_path, diag)) {
      const bool known = std::find(std::begin(kNeighborKeys), std::end(kNeighborKeys), e.key) !=
                         std::end(kNeighborKeys);
      if (!known) {
        detail::reportUnknownKey(diag, e, kNeighborKeys);
        continue;
      }
      has_address = has_address || e.key == "address";
      if (e.key == "address") address_line = e.line;
      has_as = has_as || e.key == "as";
      if (e.value.IsNull()) {
        diag.error(e.line, e.path, "has no value");
      } else if (e.key == "address") {
        if (auto address = readAnyAddress(e.value, e.line, e.path, diag)) n.address = std::move(*address);
      } else if (e.key == "as") {
        if (auto as = detail::readInteger(e.value, e.line, e.path, 1, 4294967295, diag))
          n.remote_as = static_cast<uint32_t>(*as);
      } else if (const std::string* password =
                     detail::readScalar(e.value, e.line, e.path, "a password", diag)) {
        if (std::string problem = passwordProblem(*password); !problem.empty())
          diag.error(e.line, e.path, problem);
        else
          n.password = *password;
      }
    }
    if (!has_address) diag.error(item_line, item_path + ".address", "required key is missing");
    if (!has_as) diag.error(item_line, item_path + ".as", "required key is missing");
    if (n.address.empty()) continue;
    // FRR keeps one session per neighbour address: a second entry would
    // silently rewrite the first.
    auto same = std::find_if(v.neighbors.begin(), v.neighbors.end(),
                             [&](const InstanceConfig::Bgp::Neighbor& o) { return o.address == n.address; });
    if (same != v.neighbors.end()) {
      diag.error(address_line, item_path + ".address",
                 quote(n.address) + " is already the address of " +
                     detail::indexKey(key.path, static_cast<std::size_t>(same - v.neighbors.begin())));
      continue;
    }
    v.neighbors.push_back(std::move(n));
  }
  if (diag.count() != errors) return std::nullopt;
  return v;
}

std::optional<KeyValue> readValue(const KeyInfo& key, const YAML::Node& node, int line,
                                  Diagnostics& diag) {
  const std::string path(key.path);
  KeyValue v;
  switch (key.type) {
    case KeyType::kSection:
      return std::nullopt;
    case KeyType::kInteger: {
      auto value = detail::readInteger(node, line, path, key.min, key.max, diag);
      if (!value) return std::nullopt;
      v.integer = *value;
      return v;
    }
    case KeyType::kIntegerList: {
      if (!node.IsSequence()) {
        diag.error(line, path, "expected a list of integers " + std::to_string(key.min) + ".." +
                                   std::to_string(key.max) + ", found " +
                                   std::string(detail::kindOf(node)));
        return std::nullopt;
      }
      bool ok = true;
      for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const int item_line = detail::lineOf(item) ? detail::lineOf(item) : line;
        auto value = detail::readInteger(item, item_line, detail::indexKey(path, i), key.min, key.max, diag);
        if (value) v.list.push_back(*value);
        ok = ok && value.has_value();
      }
      if (!ok) return std::nullopt;
      return v;
    }
    case KeyType::kEndpointList: {
      if (!node.IsSequence()) {
        diag.error(line, path, "expected a list of \"address:port\", found " + std::string(detail::kindOf(node)));
        return std::nullopt;
      }
      if (node.size() > static_cast<std::size_t>(key.max)) {
        diag.error(line, path, "has " + std::to_string(node.size()) + " entries; at most " + std::to_string(key.max));
        return std::nullopt;
      }
      bool ok = true;
      for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        const int item_line = detail::lineOf(item) ? detail::lineOf(item) : line;
        const std::string item_path = detail::indexKey(path, i);
        const std::string* text = detail::readScalar(item, item_line, item_path, "\"address:port\"", diag);
        auto endpoint = text ? parseEndpoint(*text) : std::nullopt;
        if (text && !endpoint) {
          diag.error(item_line, item_path,
                     quote(*text) + " is not \"address:port\" (an IPv4 address, or an IPv6 one in brackets, "
                                    "and a port 1..65535)");
        }
        if (endpoint) v.endpoints.push_back(*endpoint);
        ok = ok && endpoint.has_value();
      }
      if (!ok) return std::nullopt;
      return v;
    }
    case KeyType::kAddressList:
      return readAddressList(key, node, line, diag);
    case KeyType::kNeighborList:
      return readNeighbors(key, node, line, diag);
    case KeyType::kName: {
      const std::string* text = detail::readScalar(node, line, path, "a name", diag);
      if (!text) return std::nullopt;
      if (!detail::isName(*text, static_cast<std::size_t>(key.min), static_cast<std::size_t>(key.max),
                          kNameExtraChars)) {
        diag.error(line, path, quote(*text) + " is not a valid name: " + key.typeText());
        return std::nullopt;
      }
      v.text = *text;
      return v;
    }
    case KeyType::kPath: {
      const std::string* text = detail::readScalar(node, line, path, "a path", diag);
      if (!text) return std::nullopt;
      if (text->empty()) {
        diag.error(line, path, "must not be empty");
        return std::nullopt;
      }
      if (text->find('\0') != std::string::npos) {
        diag.error(line, path, quote(*text) + " holds a NUL character");
        return std::nullopt;
      }
      if (std::string problem = placeholderProblem(*text); !problem.empty()) {
        diag.error(line, path, quote(*text) + ": " + problem);
        return std::nullopt;
      }
      v.text = *text;
      return v;
    }
    case KeyType::kEnum: {
      const std::string* text = detail::readScalar(node, line, path, key.typeText(), diag);
      if (!text) return std::nullopt;
      const std::vector<std::string_view> choices = splitChoices(key.choices);
      const std::string lower = detail::toLower(*text);
      auto it = std::find(choices.begin(), choices.end(), lower);
      if (it == choices.end()) {
        diag.error(line, path, quote(*text) + " is not one of " + joinNames(choices));
        return std::nullopt;
      }
      v.integer = it - choices.begin();
      return v;
    }
    case KeyType::kIpv4: {
      const std::string* text = detail::readScalar(node, line, path, "an IPv4 address", diag);
      if (!text) return std::nullopt;
      if (!gtp::parseIpv4(*text, v.ipv4)) {
        diag.error(line, path, quote(*text) + " is not an IPv4 address" +
                                   detail::otherFamilyHint(*text, true));
        return std::nullopt;
      }
      if (std::string problem = detail::unicastProblem(v.ipv4); !problem.empty()) {
        diag.error(line, path, quote(*text) + " " + problem);
        return std::nullopt;
      }
      return v;
    }
    case KeyType::kIpv6: {
      const std::string* text = detail::readScalar(node, line, path, "an IPv6 address", diag);
      if (!text) return std::nullopt;
      if (!gtp::parseIpv6(*text, v.ipv6)) {
        diag.error(line, path, quote(*text) + " is not an IPv6 address" +
                                   detail::otherFamilyHint(*text, false));
        return std::nullopt;
      }
      if (std::string problem = detail::unicastProblem(v.ipv6); !problem.empty()) {
        diag.error(line, path, quote(*text) + " " + problem);
        return std::nullopt;
      }
      return v;
    }
  }
  return std::nullopt;
}

// The YAML text of a table value (default or example) as written in the
// example file: integers and lists as they are, other values quoted when
// YAML could read them as something else.
std::string yamlText(const KeyInfo& key, std::string_view value) {
  if (key.type == KeyType::kInteger || key.type == KeyType::kIntegerList || key.type == KeyType::kEndpointList ||
      key.type == KeyType::kAddressList || key.type == KeyType::kNeighborList)
    return std::string(value);
  const bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '/' || c == '-';
  });
  return plain ? std::string(value) : quote(value);
}

// The table's default of `key`, through the same checks as a value from a file.
KeyValue defaultValue(const KeyInfo& key) {
  Diagnostics diag("<default>");
  const YAML::Node node = YAML::Load(yamlText(key, key.default_value));
  std::optional<KeyValue> value = readValue(key, node, 0, diag);
  GTPCP_CONFIG_INVARIANT(value.has_value());
  return *value;
}

// -- walking the document ----------------------------------------------------

struct Found {
  std::map<std::string, MapEntry, std::less<>> values;  // key path -> entry
  std::map<std::string, int, std::less<>> sections;     // section path -> line
};

void walk(const YAML::Node& map, std::string_view prefix, Diagnostics& diag, Found& found) {
  const std::vector<std::string_view> known = childrenOf(prefix);
  for (MapEntry& entry : detail::mapEntries(map, prefix, diag)) {
    const KeyInfo* info = findInstanceKey(entry.path);
    // "gtpc.port" written as one key at the top is not gtpc: port.
    if (info == nullptr || parentOf(info->path) != prefix) {
      detail::reportUnknownKey(diag, entry, known);
      continue;
    }
    if (!info->isSection()) {
      found.values.emplace(entry.path, entry);
      continue;
    }
    found.sections.emplace(entry.path, entry.line);
    if (entry.value.IsNull()) continue;  // every key of the section commented out
    if (!entry.value.IsMap()) {
      diag.error(entry.line, entry.path,
                 "expected a section (a mapping of " + joinNames(childrenOf(info->path)) +
                     "), found " + std::string(detail::kindOf(entry.value)));
      continue;
    }
    walk(entry.value, entry.path, diag, found);
  }
}

// Line of the innermost section present above `path`, 0 when none is.
int sectionLine(const Found& found, std::string_view path) {
  for (std::string_view p = parentOf(path); !p.empty(); p = parentOf(p)) {
    auto it = found.sections.find(p);
    if (it != found.sections.end()) return it->second;
  }
  return 0;
}

std::string substitute(std::string text, std::string_view placeholder, std::string_view value) {
  for (auto at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
  return text;
}

std::string resolvePath(const std::string& base_dir, const std::string& text) {
  std::filesystem::path p(text);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string absoluteDir(const std::string& dir) {
  std::filesystem::path p = dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir);
  if (p.is_relative()) p = std::filesystem::current_path() / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

int entryLine(const Found& found, std::string_view path) {
  auto it = found.values.find(path);
  return it == found.values.end() ? sectionLine(found, path) : it->second.line;
}

// The gtpc addresses in canonical text, access then gateway, each once.
std::vector<std::string> gtpcAddresses(const InstanceConfig& c) {
  std::vector<std::string> out;
  auto add = [&](std::string text) {
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  };
  for (const AddressPair* p : {&c.gtpc.access, &c.gtpc.gateway}) {
    if (p->ipv4) add(gtp::toString(*p->ipv4));
    if (p->ipv6) add(gtp::toString(*p->ipv6));
  }
  return out;
}

// The bgp keys that depend on each other and on gtpc; runs after the gateway
// addresses are settled. The service addresses are checked in every mode; the
// rules that only matter to an announcement (local_as, neighbours, lease)
// apply with mode frr, so that a file with BGP off need not fill them in.
void crossCheckBgp(const InstanceConfig& c, const Found& found, Diagnostics& diag) {
  using Mode = InstanceConfig::Bgp::Mode;
  const auto listed = found.values.find("bgp.service_addresses");
  if (listed != found.values.end() && !diag.hasErrorAt("bgp.service_addresses") &&
      !diag.hasErrorAt("gtpc.access") && !diag.hasErrorAt("gtpc.gateway")) {
    const std::vector<std::string> gtpc = gtpcAddresses(c);
    std::string known;
    for (const std::string& a : gtpc) known += (known.empty() ? "" : ", ") + a;
    const YAML::Node& list = listed->second.value;
    for (std::size_t i = 0; i < c.bgp.service_addresses.size(); ++i) {
      const std::string& a = c.bgp.service_addresses[i];
      if (std::find(gtpc.begin(), gtpc.end(), a) != gtpc.end()) continue;
      // Routers would send GTP-C to an address no socket of the proxy is bound to.
      diag.error(itemLine(list[i], listed->second.line), detail::indexKey("bgp.service_addresses", i),
                 quote(a) + " is not one of the gtpc addresses (" + known + ")");
    }
  }

  if (diag.hasErrorAt("bgp.mode") || c.bgp.mode != Mode::kFrr) return;
  const int mode_line = entryLine(found, "bgp.mode");
  if (!diag.hasErrorAt("bgp.local_as") && c.bgp.local_as == 0)
    diag.error(mode_line, "bgp.mode", "bgp.mode frr needs bgp.local_as");
  if (!diag.hasErrorAt("bgp.neighbors") && c.bgp.neighbors.empty()) {
    const bool present = found.values.count("bgp.neighbors") != 0;
    diag.error(present ? entryLine(found, "bgp.neighbors") : mode_line,
               present ? "bgp.neighbors" : "bgp.mode",
               "bgp.mode frr needs at least one neighbour in bgp.neighbors");
  }
  // The bgp-watchdog renews its verdict once per check: a shorter lease would
  // run out between checks and withdraw a healthy instance's route.
  if (!diag.hasErrorAt("bgp.lease_ms") && !diag.hasErrorAt("bgp.check_interval_ms") &&
      c.bgp.lease_ms <= c.bgp.check_interval_ms) {
    const std::string path =
        found.values.count("bgp.lease_ms") != 0 ? "bgp.lease_ms" : "bgp.check_interval_ms";
    diag.error(entryLine(found, path), path,
               "bgp.lease_ms (" + std::to_string(c.bgp.lease_ms) +
                   ") must be longer than bgp.check_interval_ms (" +
                   std::to_string(c.bgp.check_interval_ms) +
                   "): the bgp-watchdog renews its verdict once per check");
  }
}

// Rules that tie keys together, and the paths (which depend on group and
// run_dir). Each check runs only when the keys it reads are valid, so that
// one mistake is reported once.
void crossCheck(InstanceConfig& c, const Found& found, Diagnostics& diag) {
  if (!diag.hasErrorAt("gtpc.access") && !c.gtpc.access.ipv4 && !c.gtpc.access.ipv6) {
    const bool present = found.sections.count("gtpc.access") != 0;
    diag.error(present ? found.sections.find("gtpc.access")->second : sectionLine(found, "gtpc.access"),
               "gtpc.access",
               present ? "needs an ipv4 or an ipv6 address (or both)"
                       : "is missing: give the proxy's ipv4 and/or ipv6 address toward the SGWs");
  }
  const auto gateway = found.sections.find("gtpc.gateway");
  c.gtpc.gateway_from_access = gateway == found.sections.end();
  if (c.gtpc.gateway_from_access) {
    c.gtpc.gateway = c.gtpc.access;
  } else if (!diag.hasErrorAt("gtpc.gateway") && !c.gtpc.gateway.ipv4 && !c.gtpc.gateway.ipv6) {
    diag.error(gateway->second, "gtpc.gateway",
               "needs an ipv4 or an ipv6 address (or both); remove the section to use the "
               "access addresses toward the gateways too");
  }

  crossCheckBgp(c, found, diag);

  if (!diag.hasErrorAt("log.max_bytes") && c.log.max_bytes != 0 && c.log.max_bytes < kMinLogRotateBytes)
    diag.error(entryLine(found, "log.max_bytes"), "log.max_bytes",
               std::to_string(c.log.max_bytes) + " is below " + std::to_string(kMinLogRotateBytes) +
                   ": a file that small would be rotated every few lines (0: no rotation)");

  if (const auto listed = found.values.find("management.listen");
      listed != found.values.end() && !diag.hasErrorAt("management.listen")) {
    for (std::size_t i = 0; i < c.management.listen.size(); ++i) {
      // The console's HTTP server (Debian's civetweb) is built without IPv6.
      if (c.management.listen[i].address.find(':') != std::string::npos)
        diag.error(itemLine(listed->second.value[i], listed->second.line), detail::indexKey("management.listen", i),
                   "gtpcp-console listens on IPv4 addresses only; give an IPv4 address (127.0.0.1 for this host "
                   "alone)");
    }
  }

  if (!diag.hasErrorAt("group_size") && !diag.hasErrorAt("instance_index") && c.instance_index >= c.group_size) {
    const std::string path = found.values.count("instance_index") != 0 ? "instance_index" : "group_size";
    diag.error(entryLine(found, path), path,
               "instance_index (" + std::to_string(c.instance_index) + ") must be below group_size (" +
                   std::to_string(c.group_size) + "): each instance of the group has its own share of the "
                   "session slots, 0 to group_size - 1");
  }

  if (!diag.hasErrorAt("cpu.workers") && !diag.hasErrorAt("workers") && !c.cpu.workers.empty() &&
      c.cpu.workers.size() != c.workers) {
    diag.error(entryLine(found, "cpu.workers"), "cpu.workers",
               "has " + std::to_string(c.cpu.workers.size()) + " entries but workers is " +
                   std::to_string(c.workers) + ": give one CPU per worker, or []");
  }

  if (!diag.hasErrorAt("storage.mode") && !diag.hasErrorAt("storage.servers")) {
    using Mode = InstanceConfig::Storage::Mode;
    const std::size_t n = c.storage.servers.size();
    const bool listed = found.values.count("storage.servers") != 0;
    const std::string path = listed ? "storage.servers" : "storage.mode";
    const int line = entryLine(found, path);
    switch (c.storage.mode) {
      case Mode::kEmbedded:
      case Mode::kOff:
        if (n != 0) diag.error(line, path, "lists servers, but storage.mode is embedded or off: they would not be used");
        break;
      case Mode::kSingle:
        if (n != 1) diag.error(line, path, "storage.mode single needs exactly one server, found " + std::to_string(n));
        break;
      case Mode::kCluster:
        if (n == 0) diag.error(line, path, "storage.mode cluster needs at least one seed node in storage.servers");
        break;
      case Mode::kSentinel:
        if (n == 0) diag.error(line, path, "storage.mode sentinel needs at least one sentinel in storage.servers");
        break;
    }
  }

  if (diag.hasErrorAt("group") || diag.hasErrorAt("run_dir")) return;
  if (c.run_dir.configured.find("<run_dir>") != std::string::npos) {
    diag.error(entryLine(found, "run_dir"), "run_dir", "cannot refer to itself (<run_dir>)");
    return;
  }
  c.run_dir.resolved =
      resolvePath(c.base_dir, substitute(c.run_dir.configured, "<group>", c.group));
  if (c.run_dir.resolved.size() > kMaxRunDirBytes) {
    diag.error(entryLine(found, "run_dir"), "run_dir",
               quote(c.run_dir.resolved) + " is " + std::to_string(c.run_dir.resolved.size()) +
                   " bytes long; at most " + std::to_string(kMaxRunDirBytes) +
                   ", so that the ipc:// sockets in it fit in a Unix socket path");
  }
  auto resolve = [&](const PathSetting& p) {
    return resolvePath(c.base_dir, substitute(substitute(p.configured, "<group>", c.group),
                                              "<run_dir>", c.run_dir.resolved));
  };
  if (!diag.hasErrorAt("log.directory") && c.log.output == InstanceConfig::Log::Output::kDirectory)
    c.log.directory.resolved = resolve(c.log.directory);
  if (!diag.hasErrorAt("routing")) c.routing.resolved = resolve(c.routing);
  if (!diag.hasErrorAt("bgp.vtysh")) c.bgp.vtysh.resolved = resolve(c.bgp.vtysh);
  if (!diag.hasErrorAt("bgp.vty_socket_dir") && !c.bgp.vty_socket_dir.empty())
    c.bgp.vty_socket_dir = resolve(PathSetting{c.bgp.vty_socket_dir, ""});
}

PowerOfTwo roundUp(PowerOfTwo p) {
  p.effective = std::bit_ceil(p.configured);
  return p;
}

// Values computed once from validated keys.
void derive(InstanceConfig& c) {
  c.rings.priority_slots = roundUp(c.rings.priority_slots);
  c.rings.new_slots = roundUp(c.rings.new_slots);
  c.rings.persist_slots = roundUp(c.rings.persist_slots);
  c.sessions.per_partition = roundUp(c.sessions.per_partition);
  c.sessions.transactions = roundUp(c.sessions.transactions);
  c.timers.transaction_lifetime_ms = c.timers.t3_ms * (c.timers.n3 + 1);
  if (c.bgp.service_addresses.empty()) c.bgp.service_addresses = gtpcAddresses(c);
}

void checkPowerOfTwo(const PowerOfTwo& p, std::string_view path) {
  const KeyInfo* key = findInstanceKey(path);
  GTPCP_CONFIG_INVARIANT(key != nullptr);
  GTPCP_CONFIG_INVARIANT(std::has_single_bit(p.effective));
  GTPCP_CONFIG_INVARIANT(p.effective >= p.configured && p.effective / 2 < p.configured);
  GTPCP_CONFIG_INVARIANT(p.effective <= key->max);
}

void checkDerived(const InstanceConfig& c) {
  checkPowerOfTwo(c.rings.priority_slots, "rings.priority_slots");
  checkPowerOfTwo(c.rings.new_slots, "rings.new_slots");
  checkPowerOfTwo(c.rings.persist_slots, "rings.persist_slots");
  checkPowerOfTwo(c.sessions.per_partition, "sessions.per_partition");
  checkPowerOfTwo(c.sessions.transactions, "sessions.transactions");
  // A batch never exceeds a ring: the bounds make it so.
  GTPCP_CONFIG_INVARIANT(c.rings.batch <= c.rings.new_slots.effective);
  GTPCP_CONFIG_INVARIANT(c.rings.batch <= c.rings.priority_slots.effective);
  GTPCP_CONFIG_INVARIANT(c.timers.transaction_lifetime_ms == c.timers.t3_ms * (c.timers.n3 + 1));
  GTPCP_CONFIG_INVARIANT(c.gtpc.access.ipv4 || c.gtpc.access.ipv6);
  GTPCP_CONFIG_INVARIANT(c.gtpc.gateway.ipv4 || c.gtpc.gateway.ipv6);
  GTPCP_CONFIG_INVARIANT(!c.gtpc.gateway_from_access || c.gtpc.gateway == c.gtpc.access);
  GTPCP_CONFIG_INVARIANT(c.cpu.workers.empty() || c.cpu.workers.size() == c.workers);
  for (const PathSetting* p : {&c.run_dir, &c.routing, &c.bgp.vtysh})
    GTPCP_CONFIG_INVARIANT(!p->resolved.empty() && p->resolved.front() == '/');
  // Empty otherwise: group::Paths then puts the files the launcher still
  // writes (a process's stdout and stderr) in the run directory.
  GTPCP_CONFIG_INVARIANT(c.log.output == InstanceConfig::Log::Output::kDirectory
                             ? !c.log.directory.resolved.empty() && c.log.directory.resolved.front() == '/'
                             : c.log.directory.resolved.empty());
  GTPCP_CONFIG_INVARIANT(c.log.max_bytes == 0 || c.log.max_bytes >= kMinLogRotateBytes);
  GTPCP_CONFIG_INVARIANT(c.bgp.vty_socket_dir.empty() || c.bgp.vty_socket_dir.front() == '/');
  const std::vector<std::string> gtpc = gtpcAddresses(c);
  GTPCP_CONFIG_INVARIANT(!c.bgp.service_addresses.empty());
  for (const std::string& a : c.bgp.service_addresses)
    GTPCP_CONFIG_INVARIANT(std::find(gtpc.begin(), gtpc.end(), a) != gtpc.end());
  GTPCP_CONFIG_INVARIANT(c.bgp.mode != InstanceConfig::Bgp::Mode::kFrr ||
                         (c.bgp.local_as != 0 && !c.bgp.neighbors.empty() &&
                          c.bgp.lease_ms > c.bgp.check_interval_ms));
}

// On failure, `routing_path` is the resolved routing path when it is known.
Result<InstanceConfig> parseImpl(std::string_view text, const std::string& display_name,
                                 const std::string& base_dir, std::string& routing_path) {
  routing_path.clear();
  Diagnostics diag(display_name);
  InstanceConfig c;
  c.file = display_name;
  c.base_dir = absoluteDir(base_dir);

  const std::optional<YAML::Node> doc = detail::parseDocument(text, diag);
  if (!doc) return tl::unexpected(diag.take());
  Found found;
  if (doc->IsMap()) {
    walk(*doc, "", diag, found);
  } else if (!doc->IsNull()) {
    diag.error(detail::lineOf(*doc), "",
               "expected a mapping of keys, found " + std::string(detail::kindOf(*doc)));
    return tl::unexpected(diag.take());
  }

  for (const KeyInfo& key : kKeys) {
    if (key.isSection()) continue;
    std::optional<KeyValue> value;
    auto it = found.values.find(key.path);
    if (it != found.values.end()) {
      const MapEntry& entry = it->second;
      if (entry.value.IsNull()) {
        diag.error(entry.line, entry.path,
                   key.default_value.empty()
                       ? "has no value"
                       : "has no value (remove the key to use the default " +
                             yamlText(key, key.default_value) + ")");
      } else {
        value = readValue(key, entry.value, entry.line, diag);
      }
    } else if (key.required()) {
      diag.error(sectionLine(found, key.path), std::string(key.path), "required key is missing");
    } else if (!key.default_value.empty()) {
      value = defaultValue(key);
    }
    if (value) key.store(c, *value);
  }

  crossCheck(c, found, diag);
  if (!diag.empty()) {
    routing_path = c.routing.resolved;
    return tl::unexpected(diag.take());
  }
  derive(c);
  checkDerived(c);
  return c;
}

}  // namespace

std::string_view logLevelName(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  return "?";
}

std::string_view reloadClassName(ReloadClass reload) noexcept {
  return reload == ReloadClass::kReload ? "reload" : "restart";
}

std::string KeyInfo::typeText() const {
  switch (type) {
    case KeyType::kSection: return "section";
    case KeyType::kName:
      return "name of " + std::to_string(min) + " to " + std::to_string(max) +
             " characters A-Z a-z 0-9 _ -";
    case KeyType::kPath: return "path";
    case KeyType::kInteger:
      return "integer " + std::to_string(min) + ".." + std::to_string(max) +
             (powerOfTwo() ? ", rounded up to a power of two" : "");
    case KeyType::kEnum: return "one of " + joinNames(splitChoices(choices));
    case KeyType::kIpv4: return "IPv4 address";
    case KeyType::kIpv6: return "IPv6 address";
    case KeyType::kIntegerList:
      return "list of integers " + std::to_string(min) + ".." + std::to_string(max);
    case KeyType::kEndpointList:
      return "list of \"address:port\", at most " + std::to_string(max);
    case KeyType::kAddressList:
      return "list of IPv4 and IPv6 addresses, at most " + std::to_string(max);
    case KeyType::kNeighborList:
      return "list of {address, as, password}, at most " + std::to_string(max);
  }
  return "?";
}

std::optional<int32_t> InstanceConfig::workerCpu(uint32_t index) const noexcept {
  if (index >= cpu.workers.size()) return std::nullopt;
  return cpu.workers[index];
}

std::span<const KeyInfo> instanceKeys() noexcept { return kKeys; }

const KeyInfo* findInstanceKey(std::string_view path) noexcept {
  for (const KeyInfo& k : kKeys)
    if (k.path == path) return &k;
  return nullptr;
}

namespace {

Result<InstanceConfig> parseGuarded(std::string_view yaml_text, const std::string& display_name,
                                    const std::string& base_dir, std::string& routing_path) {
  try {
    return parseImpl(yaml_text, display_name, base_dir, routing_path);
  } catch (const std::exception& e) {
    routing_path.clear();
    ConfigErrors errors;
    errors.add(display_name, 0, "", std::string("cannot be loaded: ") + e.what());
    return tl::unexpected(std::move(errors));
  }
}

}  // namespace

Result<InstanceConfig> parseInstanceConfig(std::string_view yaml_text,
                                           const std::string& display_name,
                                           const std::string& base_dir) {
  std::string routing_path;
  return parseGuarded(yaml_text, display_name, base_dir, routing_path);
}

Result<InstanceConfig> detail::loadInstanceConfig(const std::string& path,
                                                  std::string& routing_path) {
  routing_path.clear();
  std::string text;
  std::string problem;
  try {
    if (std::filesystem::is_directory(path)) {
      problem = "is a directory, not a file";
    } else if (detail::readTextFile(path, text, problem)) {
      const std::string dir = std::filesystem::path(path).parent_path().string();
      return parseGuarded(text, path, dir, routing_path);
    }
  } catch (const std::exception& e) {
    problem = std::string("cannot be loaded: ") + e.what();
  }
  ConfigErrors errors;
  errors.add(path, 0, "", problem);
  return tl::unexpected(std::move(errors));
}

Result<InstanceConfig> loadInstanceConfig(const std::string& path) {
  std::string routing_path;
  return detail::loadInstanceConfig(path, routing_path);
}

std::vector<const KeyInfo*> changedKeys(const InstanceConfig& a, const InstanceConfig& b) {
  std::vector<const KeyInfo*> out;
  for (const KeyInfo& k : kKeys)
    if (!k.isSection() && k.show(a) != k.show(b)) out.push_back(&k);
  return out;
}

namespace {

// "default 2", "required", "optional".
std::string defaultText(const KeyInfo& key) {
  if (key.required()) return "required";
  if (key.default_value.empty()) return "optional";
  return "default " + yamlText(key, key.default_value);
}

bool commentedInExample(const KeyInfo& key) {
  for (std::string_view p = key.path; !p.empty(); p = parentOf(p)) {
    const KeyInfo* k = findInstanceKey(p);
    if (k != nullptr && (k->flags & KeyInfo::kCommentedInExample) != 0) return true;
  }
  return false;
}

}  // namespace

std::string renderInstanceExample() {
  std::string out =
      "# gtpcp.yaml: the configuration of one instance of a gtpcp proxy group.\n"
      "#\n"
      "# This example runs a local group of two workers whose GTP-C service address\n"
      "# is 127.0.0.1 on both legs, routing sessions with routing.yaml from this\n"
      "# directory. Every binary checks a file with --check-config FILE.\n"
      "#\n"
      "# Every key is listed with its type and bounds, its default and its reload\n"
      "# class: \"reload\" keys take effect on `gtpcp reload`, \"restart\" keys when the\n"
      "# processes restart. A key left out takes its default; an unknown key is an\n"
      "# error. Commented-out keys show optional settings.\n"
      "#\n"
      "# Generated by renderInstanceExample() from the key table in\n"
      "# common/config/instance.cc; a unit test keeps this file identical to it.\n";
  bool after_section = false;  // no blank line between a section and its first key
  for (const KeyInfo& key : kKeys) {
    const std::size_t depth =
        static_cast<std::size_t>(std::count(key.path.begin(), key.path.end(), '.'));
    const std::string indent(2 * depth, ' ');
    const std::string code_prefix = indent + (commentedInExample(key) ? "# " : "");
    out += (after_section ? "" : "\n") + indent + "# " + std::string(key.doc) + "\n";
    after_section = key.isSection();
    if (key.isSection()) {
      out += code_prefix + std::string(leafOf(key.path)) + ":\n";
      continue;
    }
    out += indent + "# " + key.typeText() + "; " + defaultText(key) + "; " +
           std::string(reloadClassName(key.reload)) + "\n";
    const std::string_view value = key.example.empty() ? key.default_value : key.example;
    GTPCP_CONFIG_INVARIANT(!value.empty());
    out += code_prefix + std::string(leafOf(key.path)) + ": " + yamlText(key, value) + "\n";
  }
  return out;
}

std::string renderInstanceKeyReference() {
  std::string out;
  for (const KeyInfo& key : kKeys) {
    out += std::string(key.path) + "\n  " + std::string(key.doc) + "\n";
    if (key.isSection()) {
      out += "  section\n";
      continue;
    }
    out += "  " + key.typeText() + "; " + defaultText(key) + "; " +
           std::string(reloadClassName(key.reload)) + "\n";
  }
  return out;
}

std::string summary(const InstanceConfig& c) {
  auto addresses = [](const AddressPair& p) {
    std::string out;
    if (p.ipv4) out += gtp::toString(*p.ipv4);
    if (p.ipv6) out += (out.empty() ? "" : " ") + gtp::toString(*p.ipv6);
    return out;
  };
  auto bgp = [&] {
    if (c.bgp.mode == InstanceConfig::Bgp::Mode::kOff) return std::string("BGP off");
    const std::size_t n = c.bgp.neighbors.size();
    return std::string("BGP frr ") +
           (c.bgp.role == InstanceConfig::Bgp::Role::kStandby ? "standby" : "active") + " AS " +
           std::to_string(c.bgp.local_as) + " to " + std::to_string(n) +
           (n == 1 ? " neighbour" : " neighbours");
  };
  return "group " + c.group + " instance " + c.instance + ", " + std::to_string(c.workers) +
         " workers, GTP-C port " + std::to_string(c.gtpc.port) + " access " +
         addresses(c.gtpc.access) + " gateway " +
         (c.gtpc.gateway_from_access ? std::string("(= access)") : addresses(c.gtpc.gateway)) +
         ", run_dir " + c.run_dir.resolved + ", " + bgp();
}

}  // namespace gtpcp::config
