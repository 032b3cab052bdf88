#include "common/gtp/v1/message.h"

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v1 {

namespace {
constexpr uint8_t kGpdu = 255;
}

Result<Header> decodeHeader(std::span<const uint8_t> bytes) noexcept {
  if (bytes.empty()) return fail(Errc::kTruncatedHeader);
  Header h;
  h.flags = bytes[0];
  // PT=0 is GTP' (TS 32.295), a charging protocol that is not GTP-C.
  if (h.version() != kVersion || !h.protocolType()) return fail(Errc::kUnsupportedVersion);
  if (bytes.size() < kHeaderSizeMandatory) return fail(Errc::kTruncatedHeader);
  h.message_type = bytes[1];
  h.length = load16(bytes.data() + 2);
  h.teid = load32(bytes.data() + 4);
  if (h.messageSize() > bytes.size()) return fail(Errc::kInvalidLength, 0, 0, 2);
  if (!h.hasOptionalFields()) return h;
  // The optional fields come as one block of 4 octets whenever E, S or PN is set.
  if (h.messageSize() < kHeaderSizeOptional) return fail(Errc::kInvalidLength, 0, 0, 2);
  h.sequence_number = load16(bytes.data() + 8);
  h.npdu_number = bytes[10];
  h.next_extension_header_type = bytes[11];
  std::size_t pos = kHeaderSizeOptional;
  uint8_t next = h.hasExtensionHeader() ? h.next_extension_header_type : 0;
  const std::size_t end = h.messageSize();
  while (next != 0) {
    // Each extension header: length in 4-octet units, content, next type.
    if (pos >= end || bytes[pos] == 0) return fail(Errc::kInvalidExtensionHeader, 0, 0, pos);
    const std::size_t size = 4u * bytes[pos];
    if (size > end - pos) return fail(Errc::kInvalidExtensionHeader, 0, 0, pos);
    if (h.extension_header_count == kMaxExtensionHeaders)
      return fail(Errc::kInvalidExtensionHeader, 0, 0, pos);
    h.extension_headers[h.extension_header_count++] =
        ExtensionHeader{next, static_cast<uint16_t>(pos), static_cast<uint16_t>(size)};
    next = bytes[pos + size - 1];
    pos += size;
  }
  h.size = static_cast<uint16_t>(pos);
  return h;
}

Result<void> Message::decode(std::span<const uint8_t> bytes) noexcept {
  count_ = 0;
  bytes_ = {};
  auto header = decodeHeader(bytes);
  if (!header) return tl::unexpected(header.error());
  header_ = *header;
  if (header_.messageSize() != bytes.size()) return fail(Errc::kInvalidLength, 0, 0, 2);
  if (messageTypeInfo(header_.message_type).role == MessageRole::kUnknown)
    return fail(Errc::kUnknownMessageType, 0, 0, 1);
  bytes_ = bytes;
  if (header_.message_type == kGpdu) return {};  // the body is a user packet
  std::size_t pos = header_.size;
  const std::size_t end = bytes.size();
  const uint8_t* base = bytes.data();
  while (pos < end) {
    const uint8_t type = base[pos];
    Ie ie;
    ie.offset = static_cast<uint16_t>(pos);
    ie.type = type;
    if (type < 128) {
      const uint8_t length = tvLength(type);
      if (length == 0) return fail(Errc::kUnknownTvIe, type, 0, pos);
      ie.header_size = 1;
      ie.length = length;
    } else if (type == static_cast<uint8_t>(IeType::kExtensionHeaderTypeList)) {
      // The one TLV type whose Length is a single octet (TS 29.060 §7.7.40).
      if (end - pos < 2) return fail(Errc::kIeTruncated, type, 0, pos);
      ie.header_size = 2;
      ie.length = base[pos + 1];
    } else {
      if (end - pos < 3) return fail(Errc::kIeTruncated, type, 0, pos);
      ie.header_size = 3;
      ie.length = load16(base + pos + 1);
    }
    if (ie.length > end - pos - ie.header_size) return fail(Errc::kIeTruncated, type, 0, pos);
    if (count_ == kMaxIes) return fail(Errc::kTooManyIes, type, 0, pos);
    ies_[count_++] = ie;
    pos += ie.header_size + ie.length;
  }
  return {};
}

const Ie* Message::find(IeType type, std::size_t n) const noexcept {
  const auto t = static_cast<uint8_t>(type);
  for (std::size_t i = 0; i < count_; ++i) {
    if (ies_[i].type == t && n-- == 0) return &ies_[i];
  }
  return nullptr;
}

}  // namespace gtpcp::gtp::v1
