// The worker's own segment beyond its header (common/group/worker_shm.h):
// the session slots, each partition's free-slot bookkeeping, the transaction
// table and the answer cache, so that a restarted worker process finds its
// sessions and in-flight transactions where its predecessor left them.
//
// Writer and reader: the worker process (one at a time); no other process
// looks past the header. These are plain structs; what makes them survive a
// crash of the worker is that every slot's `state` is the truth and
// everything else (free lists, counts) is rebuilt from the states on attach.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/group/worker_shm.h"
#include "common/partition.h"
#include "common/net/address.h"
#include "common/session/session_shm.h"
#include "common/session/teid.h"

namespace gtpcp::worker {

// The session formats every process shares, by the names the worker's code
// has always used for them.
using session::CsidNode;
using session::CsidShm;
using session::Endpoint;
using session::isLive;
using session::kCsidNodes;
using session::kNoSlot;
using session::Leg;
using session::makeTeid;
using session::nextGeneration;
using session::other;
using session::splitTeid;
using session::TeidParts;
using session::kFirstGeneration;
using session::kLastGeneration;
using session::kMaxSlotsPerPartition;
using session::kSlotBits;
using session::SessionShm;
using session::SessionState;

// SessionShm::pool, gateway or rule of a session whose routing document
// entry is gone (removed by a reload since its creation), or not chosen yet:
// it keeps its gateway address and endpoints, and no walk over a pool or
// gateway finds it.
inline constexpr uint16_t kNoSelection = 0xffff;

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
  // µs after received_ns at which the request went to the gateway it waits
  // on (0: its first send; later, a failover's): a gateway's response time
  // runs from there.
  uint32_t forwarded_us;
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
