#include "replies.h"

#include "common/gtp/bytes.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"

namespace gtpcp::forwarder {

std::size_t echoResponseV2(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept {
  auto h = gtp::v2::decodeHeader(request);
  if (!h) return 0;
  gtp::v2::Builder b(out);
  b.begin(gtp::v2::MessageType::kEchoResponse, std::nullopt, h->sequence_number);
  b.add(gtp::v2::Recovery{recovery});
  auto r = b.finish();
  return r ? r->size() : 0;
}

std::size_t echoResponseV1(std::span<const uint8_t> request, uint8_t recovery, std::span<uint8_t> out) noexcept {
  auto h = gtp::v1::decodeHeader(request);
  if (!h || !h->hasSequenceNumber()) return 0;
  gtp::v1::Builder b(out);
  b.begin(gtp::v1::MessageType::kEchoResponse, 0, h->sequence_number);
  b.add(gtp::v1::Recovery{recovery});
  auto r = b.finish();
  return r ? r->size() : 0;
}

std::size_t versionNotSupportedV2(std::span<uint8_t> out) noexcept {
  // The other side's header cannot be read, so its sequence number is not
  // known: 0 (TS 29.274 §7.7.2 asks only for the supported version).
  gtp::v2::Builder b(out);
  b.begin(gtp::v2::MessageType::kVersionNotSupportedIndication, std::nullopt, 0);
  auto r = b.finish();
  return r ? r->size() : 0;
}

std::size_t versionNotSupportedV1(std::span<const uint8_t> request, std::span<uint8_t> out) noexcept {
  const uint16_t sequence = request.size() >= 6 ? gtp::load16(request.data() + 4) : 0;
  gtp::v1::Builder b(out);
  b.begin(gtp::v1::MessageType::kVersionNotSupported, 0, sequence);
  auto r = b.finish();
  return r ? r->size() : 0;
}

std::size_t createSessionOverload(const gtp::v2::Message& request, std::span<uint8_t> out) noexcept {
  using namespace gtp::v2;
  uint32_t teid = 0;
  if (auto f = readFirst<FTeid>(request, 0)) teid = f->teid;
  Builder b(out);
  b.begin(MessageType::kCreateSessionResponse, teid, request.header().sequence_number);
  CauseIe cause;
  cause.value = static_cast<uint8_t>(Cause::kNoResourcesAvailable);
  b.add(cause);
  auto r = b.finish();
  return r ? r->size() : 0;
}

std::size_t createPdpContextOverload(const gtp::v1::Message& request, uint8_t recovery,
                                     std::span<uint8_t> out) noexcept {
  using namespace gtp::v1;
  uint32_t teid = 0;
  if (auto t = readNth<TeidControlPlane>(request)) teid = t->value;
  Builder b(out);
  b.begin(MessageType::kCreatePdpContextResponse, teid, request.header().sequence_number);
  b.add(CauseIe{static_cast<uint8_t>(Cause::kNoResourcesAvailable)});
  b.add(Recovery{recovery});  // IEs in ascending type order: Cause 1, Recovery 14
  auto r = b.finish();
  return r ? r->size() : 0;
}

}  // namespace gtpcp::forwarder
