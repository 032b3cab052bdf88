// What the bgp-watchdog looks at once per check, and how it classes what it
// sees (DESIGN.md, gtpcp-bgp-watchdog):
//
//   unrecoverable   the thread watchdog gave up on a process; every process
//                   of the data path silent; a service address not local or
//                   no longer held by the forwarder; a process down with no
//                   thread watchdog to replace it
//   administrative  gtpcp switchover or gtpcp stop asked for the withdraw
//   recoverable     a process down or silent that the thread watchdog is
//                   replacing, or replaced since the last check (it may
//                   have died and come back between two looks: a process
//                   that keeps failing never looks healthy for long); the
//                   thread watchdog itself silent; storage not
//                   acknowledging writes (a Redis failover)
//
// classify() is the rule, on facts; GroupObserver gathers the facts from
// the group's segments and the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/group/control_shm.h"
#include "common/group/process_control.h"
#include "common/ring/segment.h"
#include "bgp_decider.h"

namespace gtpcp::watchdog {

struct GroupFacts {
  struct Process {
    std::string name;     // "forwarder", "worker-0", "persister"
    bool alive = false;   // its pid runs
    bool beating = false; // serving, heartbeat within the thread watchdog's timeout
  };
  std::vector<Process> processes;  // the data path's
  bool thread_watchdog_beating = false;
  uint32_t given_up = 0;           // processes the thread watchdog gave up on
  uint64_t replaced = 0;           // processes the thread watchdog replaced since the last look
  std::vector<std::string> addresses_not_local;
  std::vector<std::string> addresses_not_held;  // no socket of the forwarder bound to it
  enum class Storage : uint8_t { kNotUsed, kAcknowledging, kSlow, kDown } storage = Storage::kNotUsed;
  uint64_t storage_lag_ms = 0;
  bool withdraw_asked = false;     // gtpcp switchover
  bool stopping = false;           // gtpcp stop began
};

BgpHealthReport classify(const GroupFacts& facts);

struct ObserverSettings {
  uint64_t heartbeat_timeout_ns = 1'000'000'000;  // watchdog.timeout_ms
  uint64_t storage_ack_ms = 5000;
  bool sync_storage = false;
  uint16_t gtpc_port = 2123;
  std::vector<std::string> service_addresses;  // literals
};

class GroupObserver {
 public:
  GroupObserver(group::ProcessControl& group, ObserverSettings settings)
      : group_(group), settings_(std::move(settings)) {}
  GroupFacts observe(uint64_t mono_ns);
  // gtpcp switchover or gtpcp stop asked for the withdraw (the control
  // segment's flags; cheap enough for every turn).
  bool withdrawAsked();

 private:
  group::ProcessControl& group_;
  ObserverSettings settings_;
  const group::GroupControlShm* control();

  std::optional<ring::SharedSegment> control_;
  std::optional<uint64_t> restarts_;  // the thread watchdog's count at the last look
};

}  // namespace gtpcp::watchdog
