// What a worker keeps in its own shared-memory segment, so that a restarted
// worker process finds its sessions and in-flight transactions where its
// predecessor left them.
//
// Writer: the worker process (one at a time). The launcher and `gtpcp status`
// read the header (status, counters). Sessions and transactions are read and
// written by the worker only, so they are plain structs; what makes them
// survive a crash of the worker is that every slot's `state` is the truth and
// everything else (free lists, counts) is rebuilt from the states on attach.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/group/process_status_shm.h"
#include "common/partition.h"
#include "common/net/address.h"
#include "workers/lib/worker_counters.h"

namespace gtpcp::worker {

inline constexpr uint32_t kWorkerSegmentKind = 0x574b5231;  // "WKR1"
inline constexpr uint32_t kNoSlot = 0xffffffffu;

// A peer's control-plane endpoint: its F-TEID.
struct Endpoint {
  uint32_t teid = 0;
  net::Address address;  // port: GTP-C's (2123)
};

enum class SessionState : uint8_t {
  kFree = 0,
  kCreating = 1,  // Create Session Request forwarded, no accepted response yet
  kActive = 2,
};

struct SessionShm {
  uint8_t state;              // SessionState
  uint8_t generation;         // of this slot, in both of the session's TEIDs
  uint8_t gtp_version;        // 2 (S5/S8)
  uint8_t default_ebi;
  uint32_t free_next;         // next free slot of the partition (rebuilt on attach)
  uint16_t pool;              // routing selection, for status and failover
  uint16_t gateway;
  uint8_t access_socket;      // forwarder socket facing the SGW
  uint8_t gateway_socket;     // forwarder socket facing the PGW
  uint8_t imsi_length;
  uint8_t reserved;
  Endpoint sgw;               // the SGW's S5/S8 GTP-C F-TEID
  Endpoint pgw;               // the PGW's, once its Create Session Response arrived
  net::Address gateway_address;  // the selected gateway (requests go there until pgw is known)
  char imsi[16];
  uint64_t created_ns;        // CLOCK_REALTIME
  uint64_t updated_ns;
};
static_assert(std::is_trivially_copyable_v<SessionShm> && std::is_standard_layout_v<SessionShm>);

// Free-slot bookkeeping of one partition; rebuilt on attach.
struct PartitionShm {
  uint32_t free_head;    // kNoSlot when none
  uint32_t used;
  uint32_t high_water;   // slots [high_water, capacity) have never been used
  uint32_t reserved;
};

enum class TransactionState : uint8_t { kFree = 0, kPending = 1 };

// A request the proxy forwarded and whose response it waits for, found by the
// sequence number the proxy put in it.
struct TransactionShm {
  uint32_t proxy_sequence;    // the key
  uint8_t state;              // TransactionState
  uint8_t toward;             // Leg the request was sent toward
  uint8_t message_type;
  uint8_t requester_socket;   // forwarder socket the request arrived on
  uint32_t session_teid;      // a proxy TEID of the session (any leg), 0 for none
  uint32_t requester_sequence;
  net::Address requester;     // where the response goes: the request's source address and port
  uint64_t sent_ns;           // CLOCK_MONOTONIC
};
static_assert(std::is_trivially_copyable_v<TransactionShm> && std::is_standard_layout_v<TransactionShm>);

// The fixed part at the start of the segment. Geometry fields are written once
// by the creator; a worker refuses to attach to a segment whose geometry
// differs from its configuration.
struct WorkerShmHeader {
  group::ProcessStatusShm status;
  uint32_t workers;
  uint32_t index;
  uint32_t per_partition;      // session slots per partition
  uint32_t transactions;       // transaction table capacity
  uint32_t local_partitions;
  uint32_t reserved;
  uint64_t partitions_offset;  // from the start of the payload
  uint64_t sessions_offset;
  uint64_t transactions_offset;
  // Writer: the worker. The next proxy sequence number counter; kept here so
  // a restarted worker does not reuse numbers of its predecessor's pending
  // transactions.
  uint64_t sequence_counter;
  alignas(64) WorkerCounters counters;
};

// Where everything is, for a given geometry.
struct WorkerLayout {
  uint32_t workers = 0;
  uint32_t index = 0;
  uint32_t per_partition = 0;
  uint32_t transactions = 0;
  uint32_t local_partitions = 0;
  uint64_t partitions_offset = 0;
  uint64_t sessions_offset = 0;
  uint64_t transactions_offset = 0;
  uint64_t total = 0;

  static WorkerLayout compute(uint32_t workers, uint32_t index, uint32_t per_partition,
                              uint32_t transactions) noexcept;
  // The partitions this worker owns are index, index + W, ...; local index p / W.
  uint32_t localPartition(uint16_t partition) const noexcept { return partition / workers; }
  uint16_t globalPartition(uint32_t local) const noexcept {
    return static_cast<uint16_t>(local * workers + index);
  }
};

}  // namespace gtpcp::worker
