// The worker's end of the persist ring: change records (their format is
// common/session/change_record.h) built from a session's slot and the
// message that changed it, written into the ring without allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"
#include "common/session/change_record.h"
#include "worker_layout.h"

namespace gtpcp::worker {

using session::Attribute;
using session::AttributeHeader;
using session::ChangeHeader;
using session::ChangeKind;
using session::ChangeView;

// The end of the persist ring a worker writes, or a test's record of it.
class PersistSink {
 public:
  virtual ~PersistSink() = default;
  // Room for a record of up to `max` octets, or an empty span when the ring
  // is full (the change is lost and counted by the caller).
  virtual std::span<uint8_t> reserve(ChangeKind kind, uint16_t partition, std::size_t max) noexcept = 0;
  // The record reserved last is `length` octets long.
  virtual void commit(std::size_t length) noexcept = 0;
};

// Builds change records into a PersistSink.
class ChangeWriter {
 public:
  // A record never exceeds this: a few Bearer Contexts and identities.
  static constexpr std::size_t kMaxRecord = 4096;

  explicit ChangeWriter(PersistSink& sink) noexcept : sink_(sink) {}

  // The session as it is now, with the attributes `m` (from `from`) carries;
  // `m` may be null (a change of the proxy's own state). False when the ring
  // had no room.
  // `routing`: the kRouting attribute's octets, or empty.
  bool upsert(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns,
              const gtp::v2::Message* m, Leg from, std::span<const uint8_t> routing = {}) noexcept;
  // A GTPv1 session as it is now, with the attributes `m` (from `from`)
  // carries; its PDP context attributes are NSAPI `nsapi`'s.
  bool upsertV1(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns,
                const gtp::v1::Message& m, Leg from, uint8_t nsapi, std::span<const uint8_t> routing = {}) noexcept;
  // Bearers the session no longer has (bits of `ebis`).
  bool removeBearers(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns,
                     uint16_t ebis) noexcept;
  // Whether `m` (from `from`) carries an attribute the record keeps.
  static bool carriesAttributes(const gtp::v2::Message& m, Leg from) noexcept;
  // The session is gone; `session` is its last state (the persister needs
  // its IMSI for the index).
  bool erase(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns) noexcept;

 private:
  PersistSink& sink_;
};

}  // namespace gtpcp::worker
