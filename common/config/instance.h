// gtpcp.yaml: the configuration of one instance of a proxy group.
//
// Every key is described once, in the table that instanceKeys() returns
// (instance.cc): its path, type, bounds, default, reload class and a one-line
// doc. Parsing, defaults, validation, the commented example file
// (config/gtpcp.yaml, renderInstanceExample()) and the key reference
// (renderInstanceKeyReference(), for `gtpcp config-keys`) are all derived from
// it, so a key cannot be documented one way and parsed another.
//
// Loading is a cold path: it allocates and may use exceptions internally, but
// the functions below return values. An error lists every problem found, each
// with its file, line and key path.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/errors.h"
#include "common/gtp/values.h"

namespace gtpcp::config {

enum class LogLevel : uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kOff };
// "trace", "debug", "info", "warn", "error", "off".
std::string_view logLevelName(LogLevel level) noexcept;

// When a change of the key takes effect.
enum class ReloadClass : uint8_t {
  kRestart,  // the processes must be restarted (sockets, shared memory, pinning...)
  kReload,   // `gtpcp reload` applies it to the running processes
};
std::string_view reloadClassName(ReloadClass reload) noexcept;  // "restart", "reload"

enum class KeyType : uint8_t {
  kSection,      // a mapping of further keys
  kName,         // min..max characters of A-Z a-z 0-9 _ -
  kPath,         // a file or directory; placeholders <group> and <run_dir>
  kInteger,      // min..max, written without quotes
  kEnum,         // one of `choices` ("a|b|c"), case-insensitive
  kIpv4,         // a unicast IPv4 address
  kIpv6,         // a unicast IPv6 address
  kIntegerList,  // a list of integers, each min..max
  kEndpointList, // a list of "address:port" (IPv6 in brackets), at most max entries
  kAddressList,  // a list of unicast IPv4 and IPv6 addresses, at most max entries
  kNeighborList, // a list of BGP neighbours {address, as, password}, at most max entries
};

struct InstanceConfig;
namespace detail {
struct KeyValue;
using StoreFn = void (*)(InstanceConfig&, const KeyValue&);
using ShowFn = std::string (*)(const InstanceConfig&);
}  // namespace detail

// One key (or section) of gtpcp.yaml.
struct KeyInfo {
  static constexpr uint8_t kRequired = 1;             // no default: the file must give it
  static constexpr uint8_t kPowerOfTwo = 2;           // the value is rounded up to a power of two
  static constexpr uint8_t kCommentedInExample = 4;   // commented out in config/gtpcp.yaml

  std::string_view path = {};      // "gtpc.access.ipv4"
  KeyType type = KeyType::kSection;
  int64_t min = 0;                 // kInteger, kIntegerList: value; kName: length
  int64_t max = 0;                 // as min; kEndpointList, kAddressList, kNeighborList: entries
  std::string_view default_value = {};  // as YAML text; empty: required, or optional without default
  std::string_view choices = {};   // kEnum: "trace|debug|info"
  ReloadClass reload = ReloadClass::kRestart;
  uint8_t flags = 0;
  std::string_view doc = {};       // one line
  std::string_view example = {};   // the value in config/gtpcp.yaml when not the default
  detail::StoreFn store = nullptr; // writes a validated value into InstanceConfig
  detail::ShowFn show = nullptr;   // the effective value as text ("" when unset)

  bool required() const noexcept { return (flags & kRequired) != 0; }
  bool powerOfTwo() const noexcept { return (flags & kPowerOfTwo) != 0; }
  bool isSection() const noexcept { return type == KeyType::kSection; }
  // "integer 1..64", "one of trace, debug, ...", "IPv4 address", ...
  std::string typeText() const;
};

// A value rounded up to a power of two: what the file says and what is used.
struct PowerOfTwo {
  uint32_t configured = 0;
  uint32_t effective = 0;
};

// A path as written and as used: placeholders replaced, made absolute against
// the directory of gtpcp.yaml, lexically normalised (symbolic links are not
// followed).
struct PathSetting {
  std::string configured;
  std::string resolved;
};

struct AddressPair {
  std::optional<gtp::Ipv4> ipv4;
  std::optional<gtp::Ipv6> ipv6;
  friend bool operator==(const AddressPair&, const AddressPair&) = default;
};

struct InstanceConfig {
  std::string file;      // display name of the file it was read from
  std::string base_dir;  // absolute directory relative paths are resolved against

  std::string group;
  std::string instance;
  uint32_t group_size = 1;      // instances of the group
  uint32_t instance_index = 0;  // this one's share of the session slots, below group_size
  PathSetting run_dir;   // default /tmp/gtpcp/<group>
  uint32_t workers = 0;
  PathSetting routing;   // the routing document

  struct Log {
    enum class Format : uint8_t { kText, kJson };
    // Where lines go: log.directory names a directory, or is "stderr" or
    // "journald".
    enum class Output : uint8_t { kDirectory, kStderr, kJournald };
    LogLevel level = LogLevel::kInfo;
    Format format = Format::kText;
    Output output = Output::kDirectory;
    PathSetting directory;  // default <run_dir>; resolved is empty unless output is kDirectory
    uint64_t max_bytes = 0; // a file is rotated before it grows past this; 0: never
    uint32_t keep = 5;      // rotated files kept
  } log;

  struct Gtpc {
    uint16_t port = 0;
    AddressPair access;             // toward SGWs / SGSNs; at least one address
    AddressPair gateway;            // toward PGWs / GGSNs; at least one address
    bool gateway_from_access = false;  // true: no gtpc.gateway section, gateway == access
    uint32_t socket_buffer_bytes = 0;
    uint8_t recovery = 0;
  } gtpc;

  struct Overload {
    uint32_t creations_per_peer = 0;  // 0: no limit
    uint32_t creations_burst = 0;     // 0: one second's worth
    uint32_t max_creation_wait_ms = 0;  // 0: never refused for waiting
  } overload;

  struct Timers {
    uint32_t t3_ms = 0;
    uint32_t n3 = 0;
    // Derived: from the first send of a request until it is given up,
    // t3_ms * (n3 + 1) (the first send and n3 retransmissions, T3 apart).
    uint32_t transaction_lifetime_ms = 0;
  } timers;

  struct Rings {
    PowerOfTwo priority_slots;
    PowerOfTwo new_slots;
    PowerOfTwo persist_slots;
    uint32_t batch = 0;
  } rings;

  struct Sessions {
    PowerOfTwo per_partition;
    PowerOfTwo transactions;
    uint64_t answer_cache_bytes = 0;
  } sessions;

  // Where sessions are kept (DESIGN.md, "State and storage").
  struct Storage {
    enum class Mode : uint8_t { kEmbedded, kSingle, kCluster, kSentinel, kOff };
    enum class Persist : uint8_t { kAsync, kSync };
    struct Server {
      std::string address;  // an IPv4 or IPv6 literal
      uint16_t port = 0;
      friend bool operator==(const Server&, const Server&) = default;
    };
    Mode mode = Mode::kEmbedded;
    std::vector<Server> servers;   // single: the server; cluster: seed nodes; sentinel: the sentinels
    std::string sentinel_master;   // sentinel: the monitored primary's name
    uint16_t embedded_port = 0;    // embedded: the local redis-server's port on 127.0.0.1
    Persist persist = Persist::kAsync;
    uint32_t sync_replicas = 1;    // sync: replicas that must hold a batch (WAIT)
    uint32_t sync_wait_ms = 1000;  // sync: how long one WAIT blocks
  } storage;

  struct Watchdog {
    uint32_t timeout_ms = 0;    // silence after which a process is replaced
    uint32_t max_restarts = 0;  // per process and minute, then given up
    uint32_t stop_drain_ms = 0; // a stop waits this long for open transactions
  } watchdog;

  // gtpcp-console, the management process: /metrics, health probes, the
  // status API (console/).
  struct Management {
    std::vector<Storage::Server> listen;  // empty: no management process
  } management;

  // The group's service addresses announced over BGP by the FRR of this
  // instance's host (gtpcp-bgp-watchdog decides, gtpcp-bgpd-bridge applies).
  struct Bgp {
    enum class Mode : uint8_t { kOff, kFrr };
    enum class Role : uint8_t { kActive, kStandby };
    struct Neighbor {
      std::string address;   // an IPv4 or IPv6 literal
      uint32_t remote_as = 0;
      std::string password;  // empty: none (TCP MD5 otherwise)
      friend bool operator==(const Neighbor&, const Neighbor&) = default;
    };
    Mode mode = Mode::kOff;
    Role role = Role::kActive;
    // Announced as /32 and /128; each one of the gtpc addresses, in canonical
    // text. Empty in the file: every gtpc address (access, then gateway), which
    // the loader fills in, so that this is never empty once loaded.
    std::vector<std::string> service_addresses;
    uint32_t local_as = 0;  // 0: not given (only valid with mode off)
    std::optional<gtp::Ipv4> router_id;
    std::vector<Neighbor> neighbors;
    // The standby's route is worse by MED and by AS-path prepend: MED alone
    // compares only routes learnt from one neighbour AS.
    uint32_t standby_med = 0;
    uint32_t standby_prepend = 0;  // extra copies of local_as
    bool bfd = true;
    uint32_t bfd_interval_ms = 0;  // transmit and receive
    uint32_t bfd_multiplier = 0;
    uint32_t check_interval_ms = 0;
    uint32_t withdraw_hold_ms = 0;  // recoverable faults: withdrawn only after this
    uint32_t return_hold_ms = 0;    // healthy this long, continuously, before announcing again
    uint32_t damping_flaps = 0;     // this many unhealthy spells within damping_window_s...
    uint32_t damping_window_s = 0;
    uint32_t damping_hold_ms = 0;   // ...make the return hold-down this long instead
    uint32_t lease_ms = 0;          // the bridge withdraws when the bgp-watchdog's verdict is older
    uint32_t stop_settle_ms = 0;    // gtpcp stop: after FRR has the withdraw, before refusing anything
    uint32_t storage_ack_ms = 0;    // async storage: unacknowledged writes older than this are a fault
    PathSetting vtysh;              // FRR's vtysh
    // FRR's --vty_socket directory, resolved like the paths; empty: FRR's default.
    std::string vty_socket_dir;
  } bgp;

  struct Cpu {
    int32_t forwarder = -1;        // -1: not pinned
    std::vector<int32_t> workers;  // empty, or one CPU per worker index
  } cpu;

  // The CPU of worker `index`, nullopt when workers are not pinned.
  std::optional<int32_t> workerCpu(uint32_t index) const noexcept;
};

// The key table, in file order. Sections come before their keys.
std::span<const KeyInfo> instanceKeys() noexcept;
// The entry of `path` ("gtpc.port"), nullptr when there is none.
const KeyInfo* findInstanceKey(std::string_view path) noexcept;

// Parses gtpcp.yaml given as text. `display_name` names the file in errors;
// `base_dir` is the directory relative paths are resolved against (made
// absolute against the current directory when relative; empty means the
// current directory). Unknown keys, bad values and missing required keys are
// all reported, each once.
Result<InstanceConfig> parseInstanceConfig(std::string_view yaml_text,
                                           const std::string& display_name,
                                           const std::string& base_dir);

// Reads and parses the file at `path` (errors name the file as `path`
// is written; relative paths in it are resolved against its directory).
Result<InstanceConfig> loadInstanceConfig(const std::string& path);

// The keys whose effective value differs between `a` and `b` (entries of the
// table, sections excluded), e.g. to tell which changes a reload cannot apply.
std::vector<const KeyInfo*> changedKeys(const InstanceConfig& a, const InstanceConfig& b);

// The commented example file for a local two-worker group on 127.0.0.1: every
// key with its doc, type, bounds, default and reload class. config/gtpcp.yaml
// is this text (a test checks it).
std::string renderInstanceExample();

// One paragraph per key: path, type, default, reload class, doc. What
// `gtpcp config-keys` prints.
std::string renderInstanceKeyReference();

// One line summing up a loaded configuration (for logs and --check-config).
std::string summary(const InstanceConfig& config);

}  // namespace gtpcp::config
