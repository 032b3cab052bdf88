// What leaves a worker for Redis: one record per change of a session's state,
// on the worker's persist ring, for gtpcp-persister to batch (DESIGN.md,
// "State and storage"). The worker writes records (workers/lib/persist.h),
// the persister reads them; this file is the format between the two.
//
// The worker does no more than copy: a snapshot of the session's slot (what
// the proxy itself needs to carry the session on) and the raw values of the
// IEs the session record keeps that the message carried (subscriber and
// location from the SGW, address and rates from the PGW, Bearer Contexts from
// both). The persister decodes them into the protobuf record
// (proto/session.proto); the data path stays free of protobuf and allocation.
//
// A record (the ring payload): ChangeHeader, then attributes, each an
// AttributeHeader and `length` octets. DatagramMeta::flags carries the
// ChangeKind and DatagramMeta::aux the session's partition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "common/session/session_shm.h"

namespace gtpcp::session {

enum class ChangeKind : uint16_t {
  kUpsert = 1,  // the session exists; `core` is its slot as of this change
  kDelete = 2,  // the session is gone: its record and indexes go
};

// What an attribute's octets are.
enum class Attribute : uint8_t {
  kImsi = 1,            // IE values as received (TS 29.274 §8)
  kMsisdn = 2,
  kMei = 3,
  kRatType = 4,
  kServingNetwork = 5,
  kUli = 6,
  kPaa = 7,
  kApnAmbr = 8,
  kBearerFromAccess = 9,   // a Bearer Context (grouped IE value) the SGW sent
  kBearerFromGateway = 10, // one the PGW sent
  kBearerRemoved = 11,     // no octets: bearer `ebi` is gone
  // GTPv1 (TS 29.060 §7.7), values as received. The IMSI, IMEI(SV) and RAT
  // Type are encoded as in GTPv2 and use kImsi, kMei and kRatType.
  kV1Msisdn = 12,
  kV1Rai = 13,
  kV1Uli = 14,
  kV1EndUserAddress = 15,  // from the GGSN: the PDP address it allocated
  // One PDP context (`ebi`: its NSAPI) as one side sent it: its TEID Data
  // I, GSN Address for user traffic, QoS Profile and (the GGSN) Charging
  // ID, as the v1 IEs themselves, in the order received.
  kV1PdpFromAccess = 16,
  kV1PdpFromGateway = 17,
  // The names of the session's pool, gateway and rule in the routing
  // document of its creation: three names, each ended by a NUL. Written
  // with the messages of a creation (the gateway may change until it is
  // answered).
  kRouting = 18,
};

// The names a session's record holds for its routing selection (kRouting),
// NUL-terminated; empty: not known (a record written before names).
inline constexpr std::size_t kRoutingNameSize = 33;  // the routing document's 32 characters, and the NUL
struct RoutingNames {
  char pool[kRoutingNameSize];
  char gateway[kRoutingNameSize];
  char rule[kRoutingNameSize];
};
static_assert(std::is_trivially_copyable_v<RoutingNames>);

struct ChangeHeader {
  uint32_t session_teid;   // the session's access-leg proxy TEID: names the record
  uint16_t kind;           // ChangeKind
  uint16_t reserved;
  uint64_t wall_ns;        // CLOCK_REALTIME of the change
  SessionShm core;         // the slot as of the change (for kDelete: its last state)
};
static_assert(std::is_trivially_copyable_v<ChangeHeader>);

struct AttributeHeader {
  uint8_t attribute;  // Attribute
  uint8_t ebi;        // bearer attributes: the EPS bearer; else 0
  uint16_t length;
};

// Reads a record back (the persister, tests). Invalid records give false.
struct ChangeView {
  const ChangeHeader* header = nullptr;
  std::span<const uint8_t> attributes;  // AttributeHeader-prefixed values

  static bool parse(std::span<const uint8_t> record, ChangeView& out) noexcept;
  // Calls f(Attribute, ebi, value) for each attribute; false on a torn one.
  template <class F>
  bool forEach(F&& f) const noexcept {
    std::size_t pos = 0;
    while (pos < attributes.size()) {
      if (attributes.size() - pos < sizeof(AttributeHeader)) return false;
      AttributeHeader a;
      std::memcpy(&a, attributes.data() + pos, sizeof a);
      pos += sizeof a;
      if (attributes.size() - pos < a.length) return false;
      f(static_cast<Attribute>(a.attribute), a.ebi, attributes.subspan(pos, a.length));
      pos += a.length;
    }
    return true;
  }
};

}  // namespace gtpcp::session
