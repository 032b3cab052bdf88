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

inline constexpr uint32_t kWorkerSegmentKind = 0x574b5237;  // "WKR7"
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
  // In the storage, not in this worker: the slot and its generation are the
  // stored session's TEIDs, kept from allocation until a message for them
  // brings the record in (restore.h) or the storage says it is gone.
  kStored = 3,
};

inline constexpr bool isLive(uint8_t state) noexcept {
  return state == static_cast<uint8_t>(SessionState::kCreating) ||
         state == static_cast<uint8_t>(SessionState::kActive);
}

// The CSID a node gave a session's PDN connection, with the node-ID of the
// FQ-CSID that carried it (TS 29.274 §8.62; connection_set.h).
struct CsidShm {
  uint8_t node_id_type;  // FqCsid::node_id_type + 1; 0: no CSID
  uint8_t reserved;
  uint16_t csid;
  uint8_t node_id[16];   // an IPv6 address; an IPv4 one or a type 2 value in the first 4 octets
};

// Whose CSID each entry of SessionShm::csids is.
enum class CsidNode : uint8_t {
  kAccessCore = 0,  // the MME (or the ePDG, the TWAN)
  kSgw = 1,
  kPgw = 2,
};
inline constexpr std::size_t kCsidNodes = 3;

struct SessionShm {
  uint8_t state;              // SessionState
  uint8_t generation;         // of this slot, in both of the session's TEIDs
  uint8_t gtp_version;        // 2 (S5/S8) or 1 (Gn/Gp)
  uint8_t default_ebi;        // v1: the primary PDP context's NSAPI
  uint32_t free_next;         // next free slot of the partition (rebuilt on attach)
  uint16_t pool;              // routing selection, for status and failover
  uint16_t gateway;
  uint8_t access_socket;      // forwarder socket facing the SGW
  uint8_t gateway_socket;     // forwarder socket facing the PGW
  uint8_t imsi_length;
  uint8_t apn_length;         // of `apn`
  uint16_t rule;              // the routing rule that chose the pool (its overrides)
  uint16_t ebis;              // bit n: EPS bearer n is up (the default one included); v1: NSAPI n
  Endpoint sgw;               // the SGW's S5/S8 GTP-C F-TEID; v1: the SGSN's TEID-C and address for signalling
  Endpoint pgw;               // the PGW's, once its Create Session Response arrived; v1: the GGSN's
  net::Address gateway_address;  // the selected gateway (requests go there until pgw is known)
  char imsi[16];
  CsidShm csids[kCsidNodes];  // by CsidNode
  uint8_t apn[100];           // the APN the SGW asked for, as on the wire (label encoded)
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

// TransactionShm::requester_socket of a request the proxy sends on its own
// behalf (a Delete Bearer Request after a PGW restart): its answer goes nowhere.
inline constexpr uint8_t kProxyOrigin = 0xff;
// TransactionShm::flags: a Delete Bearer Request naming the default bearer
// (LBI): accepted, it ends the whole session.
inline constexpr uint8_t kDeletesPdnConnection = 0x01;
// TransactionShm::flags: a request another worker answers (each worker gets a
// copy of a Delete PDN Connection Set Request): a retransmission is ignored.
inline constexpr uint8_t kAnsweredElsewhere = 0x02;
// TransactionShm::flags: a GTPv1-C request (message_type is a TS 29.060 type).
inline constexpr uint8_t kGtpv1 = 0x04;

enum class TransactionState : uint8_t {
  kFree = 0,
  kPending = 1,   // forwarded, no response yet
  kAnswered = 2,  // response relayed; kept for retransmissions until the lifetime ends
};

// A request the proxy forwarded (transaction_table.h).
struct TransactionShm {
  uint8_t state;               // TransactionState
  uint8_t toward;              // Leg the request was sent toward
  uint8_t message_type;
  uint8_t requester_socket;    // forwarder socket the request arrived on; kProxyOrigin: the proxy's own
  uint8_t destination_socket;  // forwarder socket it was sent on
  uint8_t attempts;            // gateways tried (a creation that fails over)
  uint8_t flags;               // kDeletesPdnConnection, kAnsweredElsewhere, kGtpv1
  uint8_t nsapi;               // v1: the NSAPI a Create or Delete PDP Context Request names
  uint16_t tried[4];           // their indexes in the routing document
  uint32_t session_teid;       // the session's access-leg proxy TEID, 0 for none
  uint32_t requester_sequence;
  uint64_t response_key;       // proxyNumbered() or commandNumbered()
  net::Address requester;      // where the response goes: the request's source address and port
  net::Address destination;    // where the request went
  uint32_t next_free;          // free list (rebuilt on attach)
  uint32_t answer_length;      // 0: no cached answer
  uint64_t answer_position;    // in the answer cache's byte stream
  uint32_t request_length;     // 0: the request is not kept (kept for failover)
  uint32_t reserved2;
  uint64_t request_position;
  uint64_t received_ns;        // CLOCK_MONOTONIC of the request's first arrival
};
static_assert(std::is_trivially_copyable_v<TransactionShm> && std::is_standard_layout_v<TransactionShm>);

// One slot of a transaction index: `record` is the record's index + 1 (0: free).
struct TransactionIndexShm {
  uint64_t key;
  uint32_t record;
  uint32_t reserved;
};

// Where a worker's transaction table lives (filled from WorkerLayout).
struct TransactionMemory {
  TransactionShm* records = nullptr;
  uint32_t capacity = 0;                      // power of two
  TransactionIndexShm* by_response = nullptr; // 2 x capacity slots
  TransactionIndexShm* by_requester = nullptr;
  uint8_t* answers = nullptr;
  uint64_t answer_bytes = 0;                  // multiple of 8
  uint64_t* answer_head = nullptr;            // in the header: bytes ever written
  uint32_t* high_water = nullptr;             // in the header
};

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
  // Writer: the worker. Transaction records [high water, capacity) were never
  // used: a restarted worker need not look at them.
  uint32_t transactions_high_water;
  uint64_t answer_bytes;       // answer cache size
  uint64_t partitions_offset;  // from the start of the payload
  uint64_t sessions_offset;
  uint64_t transactions_offset;
  uint64_t answers_offset;
  // Writer: the worker. Bytes ever written to the answer cache.
  uint64_t answer_head;
  // Writer: the worker. The next proxy sequence number counter; kept here so
  // a restarted worker does not reuse numbers of its predecessor's pending
  // transactions.
  uint64_t sequence_counter;
  // Writer: the worker. 1 once the stored TEIDs of every partition of the
  // worker are reserved (kStored slots): from then on it may allocate. A
  // worker that dies while reading them reads them again.
  uint32_t stored_teids_loaded;
  // Writer: the worker. GTPv1 sequence numbers are 16 bits: one counter per
  // leg (by Leg), started at a random value when the segment is made, so a
  // peer that remembers (peer, sequence number) pairs across a restart of
  // the group (osmo-ggsn keeps them 60 s) does not take new requests for
  // copies of old ones.
  uint16_t v1_sequence_counter[2];
  alignas(64) WorkerCounters counters;
};

// Where everything is, for a given geometry.
struct WorkerLayout {
  uint32_t workers = 0;
  uint32_t index = 0;
  uint32_t per_partition = 0;
  uint32_t transactions = 0;
  uint32_t local_partitions = 0;
  uint64_t answer_bytes = 0;
  uint64_t partitions_offset = 0;
  uint64_t sessions_offset = 0;
  uint64_t transactions_offset = 0;
  uint64_t by_response_offset = 0;
  uint64_t by_requester_offset = 0;
  uint64_t answers_offset = 0;
  uint64_t total = 0;

  static WorkerLayout compute(uint32_t workers, uint32_t index, uint32_t per_partition,
                              uint32_t transactions, uint64_t answer_bytes) noexcept;
  // The transaction table of the segment at `base` (its payload).
  TransactionMemory transactionMemory(uint8_t* base, WorkerShmHeader& header) const noexcept;
  // The partitions this worker owns are index, index + W, ...; local index p / W.
  uint32_t localPartition(uint16_t partition) const noexcept { return partition / workers; }
  uint16_t globalPartition(uint32_t local) const noexcept {
    return static_cast<uint16_t>(local * workers + index);
  }
};

}  // namespace gtpcp::worker
