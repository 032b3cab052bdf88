// A session as the proxy keeps it: the slot a worker holds in its segment
// (DESIGN.md, "State and storage"). Three processes share this layout: the
// worker writes it, the persister stores snapshots of it in Redis (the
// change record's `core`, change_record.h) and sends it back on restoration
// (lookup.h), and the launcher's session look-up shows it. A plain struct:
// no pointers, trivially copyable, the same bytes in every process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/net/address.h"

namespace gtpcp::session {

// SessionShm::free_next (and the worker's free lists) of no next slot.
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
  // Read back from the storage as stored before its gateway's answer was:
  // the creation that would complete it ran on an instance that is gone
  // (the record's "established" write was lost with a Redis primary, or
  // never made). It cannot go on here; the first message that names it
  // removes it and is answered Context Not Found.
  kIncomplete = 4,
};

inline constexpr bool isLive(uint8_t state) noexcept {
  return state == static_cast<uint8_t>(SessionState::kCreating) ||
         state == static_cast<uint8_t>(SessionState::kActive) ||
         state == static_cast<uint8_t>(SessionState::kIncomplete);
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

}  // namespace gtpcp::session
