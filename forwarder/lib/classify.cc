#include "forwarder/lib/classify.h"

#include "common/group/session_identity.h"
#include "common/partition.h"

namespace gtpcp::forwarder {

using namespace gtp::v2;

namespace {
constexpr uint8_t kEchoRequestType = 1;
constexpr uint8_t kEchoResponseType = 2;
constexpr uint32_t kSequenceMask = 0x7fffff;  // without the command bit
}  // namespace

Classification classify(std::span<const uint8_t> datagram, uint16_t workers, Message& scratch) noexcept {
  Classification c;
  if (datagram.empty()) return c;
  c.version = datagram[0] >> 5;
  if (c.version == 1) {
    c.route = Route::kGtpv1;
    if (datagram.size() > 1) c.message_type = datagram[1];
    return c;
  }
  if (c.version != kVersion) {
    // Too short to be any GTP header: not GTP at all.
    c.route = datagram.size() >= 8 ? Route::kVersionNotSupported : Route::kDrop;
    return c;
  }
  auto header = decodeHeader(datagram);
  if (!header) return c;  // kDrop
  c.message_type = header->message_type;
  if (c.message_type == kEchoRequestType) {
    c.route = Route::kEchoRequest;
    return c;
  }
  if (c.message_type == kEchoResponseType) {
    c.route = Route::kEchoResponse;
    return c;
  }
  if (c.message_type == static_cast<uint8_t>(MessageType::kDeletePdnConnectionSetRequest)) {
    // Names sessions by FQ-CSID (TS 29.274 §7.9.1): they may be in any
    // partition, so every worker looks at its own.
    c.route = Route::kEveryWorker;
    return c;
  }
  c.route = Route::kPriority;
  if (header->teidPresent() && header->teid != 0) {
    // A TEID the proxy allocated names its partition.
    c.worker = workerOf(partitionOf(header->teid), workers);
    return c;
  }
  if (c.message_type == static_cast<uint8_t>(MessageType::kCreateSessionRequest)) {
    c.route = Route::kNew;
    // A message that does not decode still goes to a worker, which answers
    // it with the cause it deserves; any worker will do.
    c.decoded = static_cast<bool>(scratch.decode(datagram));
    c.worker = c.decoded ? workerOf(group::partitionOfCreateSession(scratch), workers)
                         : static_cast<uint16_t>(header->sequence_number % workers);
    return c;
  }
  if (c.message_type == static_cast<uint8_t>(MessageType::kPgwDownlinkTriggeringNotification) &&
      scratch.decode(datagram)) {
    // TEID 0 by definition (TS 29.274 §5.5.2); it names its subscriber by
    // IMSI, which names the partition of the subscriber's sessions.
    c.worker = workerOf(group::partitionOfCreateSession(scratch), workers);
    return c;
  }
  // No TEID of the proxy's: a response to a request the proxy sent carries
  // the proxy's sequence number, which names the worker (seq % W == index).
  c.worker = static_cast<uint16_t>((header->sequence_number & kSequenceMask) % workers);
  return c;
}

}  // namespace gtpcp::forwarder
