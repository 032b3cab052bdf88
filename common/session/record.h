// A session as Redis keeps it (the key names are common/group/redis_keys.h):
// one hash per session, each field a serialised SessionRecord
// (proto/session.proto) with only the attributes that field owns, written by
// whichever message carried them last: "core" (the proxy's own state, a
// snapshot of the worker's slot), one field per subscriber or location
// attribute, and per bearer one field for each side ("b<ebi>a" from the SGW,
// "b<ebi>g" from the PGW). No write needs a read; the record is the merge of
// the fields.
//
// The persister writes the fields (persister/lib/batch.h) and reads "core"
// back to restore a session into a worker (slotFromRecord(), the inverse of
// coreRecord()); `gtpcp session` reads whole hashes (assemble()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "common/session/change_record.h"
#include "common/session/session_shm.h"
#include "proto/session.pb.h"

namespace gtpcp::session {

// The hash field of the proxy's own state.
inline constexpr std::string_view kCoreField = "core";
// The other fields, numbered 0..kRecordFields-1 in the lexicographic order
// of their names ("ambr", "b0a", "b0g", "b10a", ... "uli").
inline constexpr std::size_t kRecordFields = 9 + 2 * 16;

// The field an attribute goes to, or -1 (an attribute the record does not
// keep, or a bearer number no Bearer Context can carry: EBI is 4 bits).
int fieldOf(Attribute attribute, uint8_t ebi) noexcept;
std::string_view fieldName(std::size_t field) noexcept;
// The attribute whose octets field `field` holds, in a session of
// `gtp_version` (a GTPv1 session's fields hold the v1 encodings), and its
// bearer (0 for a scalar field).
Attribute fieldAttribute(std::size_t field, uint8_t gtp_version) noexcept;
uint8_t fieldEbi(std::size_t field) noexcept;
// Bearer `ebi`'s two fields: the SGW's ("a") and the PGW's ("g").
std::array<uint8_t, 2> bearerFields(uint8_t ebi) noexcept;

// A partial record of the attribute `attribute` with `value` (its raw IE
// value), for the session whose default bearer is `default_ebi`; false when
// the value does not decode (the attribute is then not written). Sets only
// that attribute's fields in `out` (adds one bearer for a Bearer Context).
bool partialRecord(Attribute attribute, uint8_t ebi, std::span<const uint8_t> value, uint8_t default_ebi,
                   proto::SessionRecord& out);
// The proxy's own state (a slot snapshot), written over `out`: every field it
// owns is set or cleared, so `out` may be reused from call to call (keeping
// its strings and sub-messages) as long as nothing else writes to it.
void coreRecord(const SessionShm& core, uint32_t access_teid, uint16_t partition, uint64_t wall_ns,
                proto::SessionRecord& out);
// A stored hash (HGETALL: field -> value) as one record; false when a field
// does not parse.
bool assemble(const std::map<std::string, std::string>& fields, proto::SessionRecord& out);

// The slot a stored record's "core" field describes, as the worker keeps it
// (the inverse of coreRecord()); false when it does not describe one.
bool slotFromRecord(const proto::SessionRecord& record, SessionShm& out) noexcept;
// The record's names of its pool, gateway and rule (empty where it has none).
void routingNamesOf(const proto::SessionRecord& record, RoutingNames& out) noexcept;

}  // namespace gtpcp::session
