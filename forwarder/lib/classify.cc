#include "classify.h"

#include "common/group/session_identity.h"
#include "common/gtp/v1_tables.gen.h"
#include "common/gtp/v2/message.h"
#include "common/partition.h"

namespace gtpcp::forwarder {

namespace {

// Echo messages have the same type in both versions (TS 29.274 Table 6.1-1,
// TS 29.060 Table 1).
constexpr uint8_t kEchoRequestType = static_cast<uint8_t>(gtp::v2::MessageType::kEchoRequest);
constexpr uint8_t kEchoResponseType = static_cast<uint8_t>(gtp::v2::MessageType::kEchoResponse);
static_assert(kEchoRequestType == static_cast<uint8_t>(gtp::v1::MessageType::kEchoRequest) &&
              kEchoResponseType == static_cast<uint8_t>(gtp::v1::MessageType::kEchoResponse));
constexpr uint32_t kSequenceMask = gtp::v2::kCommandBit - 1;  // GTPv2, without the command bit

// Echo Request and Response, the forwarder's own in either version: true
// when `c` is one of them (its route set).
bool isEcho(Classification& c) noexcept {
  if (c.message_type == kEchoRequestType) {
    c.route = Route::kEchoRequest;
  } else if (c.message_type == kEchoResponseType) {
    c.route = Route::kEchoResponse;
  } else {
    return false;
  }
  return true;
}

// What tells the two versions apart here.
struct V2 {
  using Message = gtp::v2::Message;
  static constexpr auto kCreation = static_cast<uint8_t>(gtp::v2::MessageType::kCreateSessionRequest);
  // TEID 0 by definition (TS 29.274 §5.5.2), names its subscriber by IMSI.
  static constexpr auto kNamesSubscriber =
      static_cast<uint8_t>(gtp::v2::MessageType::kPgwDownlinkTriggeringNotification);
  static auto decodeHeader(std::span<const uint8_t> datagram) noexcept { return gtp::v2::decodeHeader(datagram); }
  // Names sessions by FQ-CSID (TS 29.274 §7.9.1): they may be in any
  // partition, so every worker looks at its own.
  static bool toEveryWorker(uint8_t type) noexcept {
    return type == static_cast<uint8_t>(gtp::v2::MessageType::kDeletePdnConnectionSetRequest);
  }
  static uint32_t teid(const gtp::v2::Header& h) noexcept { return h.teidPresent() ? h.teid : 0; }
  static uint32_t sequence(const gtp::v2::Header& h) noexcept { return h.sequence_number & kSequenceMask; }
  static uint16_t partition(const Message& m) noexcept { return group::partitionOfCreateSession(m); }
};

struct V1 {
  using Message = gtp::v1::Message;
  static constexpr auto kCreation = static_cast<uint8_t>(gtp::v1::MessageType::kCreatePdpContextRequest);
  // GGSN to SGSN with TEID 0 (TS 29.060 §7.3.8, no PDP context yet), names
  // its subscriber by IMSI.
  static constexpr auto kNamesSubscriber = static_cast<uint8_t>(gtp::v1::MessageType::kPduNotificationRequest);
  // GTP' (PT 0) and a header that does not fit the datagram do not decode.
  static auto decodeHeader(std::span<const uint8_t> datagram) noexcept { return gtp::v1::decodeHeader(datagram); }
  static bool toEveryWorker(uint8_t) noexcept { return false; }
  static uint32_t teid(const gtp::v1::Header& h) noexcept { return h.teid; }
  // 16 bits; 0 when the header has none (S unset).
  static uint32_t sequence(const gtp::v1::Header& h) noexcept { return h.sequence_number; }
  static uint16_t partition(const Message& m) noexcept { return group::partitionOfCreatePdpContext(m); }
};

template <class V>
Classification classifyAs(std::span<const uint8_t> datagram, uint16_t workers, typename V::Message& scratch,
                          Classification c) noexcept {
  auto header = V::decodeHeader(datagram);
  if (!header) return c;  // kDrop
  c.message_type = header->message_type;
  if (isEcho(c)) return c;
  if (V::toEveryWorker(c.message_type)) {
    c.route = Route::kEveryWorker;
    return c;
  }
  c.route = Route::kPriority;
  if (const uint32_t teid = V::teid(*header); teid != 0) {
    // A TEID the proxy allocated names its partition (a secondary PDP
    // context's Create PDP Context Request too: it names its primary).
    c.worker = workerOf(partitionOf(teid), workers);
    return c;
  }
  // No TEID of the proxy's: a response to a request the proxy sent carries
  // the proxy's sequence number, which names the worker (seq % W == index).
  const auto by_sequence = static_cast<uint16_t>(V::sequence(*header) % workers);
  if (c.message_type == V::kCreation) {
    c.route = Route::kNew;
    // A message that does not decode still goes to a worker, which answers
    // it with the cause it deserves; any worker will do.
    c.decoded = static_cast<bool>(scratch.decode(datagram));
    c.worker = c.decoded ? workerOf(V::partition(scratch), workers) : by_sequence;
    return c;
  }
  // The IMSI names the partition of the subscriber's sessions.
  c.worker = c.message_type == V::kNamesSubscriber && scratch.decode(datagram)
                 ? workerOf(V::partition(scratch), workers)
                 : by_sequence;
  return c;
}

}  // namespace

Classification classify(std::span<const uint8_t> datagram, uint16_t workers, ClassifyScratch& scratch) noexcept {
  Classification c;
  if (datagram.empty()) return c;
  c.version = datagram[0] >> 5;
  if (c.version == gtp::v2::kVersion) return classifyAs<V2>(datagram, workers, scratch.v2, c);
  if (c.version == gtp::v1::kVersion) return classifyAs<V1>(datagram, workers, scratch.v1, c);
  // Too short to be any GTP header: not GTP at all.
  c.route = datagram.size() >= 8 ? Route::kVersionNotSupported : Route::kDrop;
  return c;
}

}  // namespace gtpcp::forwarder
