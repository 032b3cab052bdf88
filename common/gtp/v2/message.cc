#include "common/gtp/v2/message.h"

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v2 {


Result<Header> decodeHeader(std::span<const uint8_t> bytes) noexcept {
  if (bytes.empty()) return fail(Errc::kTruncatedHeader);
  Header h;
  h.flags = bytes[0];
  if (h.version() != kVersion) return fail(Errc::kUnsupportedVersion);
  if (bytes.size() < h.headerSize()) return fail(Errc::kTruncatedHeader);
  h.message_type = bytes[1];
  h.length = load16(bytes.data() + 2);
  const uint8_t* p = bytes.data() + 4;
  if (h.teidPresent()) {
    h.teid = load32(p);
    p += 4;
  }
  h.sequence_number = load24(p);
  h.last_octet = p[3];
  // The Length field counts everything after the first 4 octets, so it must at
  // least cover the rest of the header, and the message must fit the datagram.
  if (h.messageSize() < h.headerSize() || h.messageSize() > bytes.size())
    return fail(Errc::kInvalidLength, 0, 0, 2);
  return h;
}

Result<void> Message::decode(std::span<const uint8_t> bytes) noexcept {
  count_ = 0;
  bytes_ = {};
  auto header = decodeHeader(bytes);
  if (!header) return tl::unexpected(header.error());
  header_ = *header;
  const std::size_t size = header_.messageSize();
  // Without P the message is the whole datagram; with P another must follow.
  if (header_.piggyback() ? size == bytes.size() : size != bytes.size())
    return fail(Errc::kInvalidLength, 0, 0, 2);
  if (messageTypeInfo(header_.message_type).role == MessageRole::kUnknown)
    return fail(Errc::kUnknownMessageType, 0, 0, 1);
  bytes_ = bytes.first(size);
  return decodeIes(header_.headerSize(), size, 0);
}

Result<void> Message::decodeIes(std::size_t pos, std::size_t end, std::size_t depth) noexcept {
  const uint8_t* base = bytes_.data();
  while (pos < end) {
    if (end - pos < kIeHeaderSize) return fail(Errc::kIeTruncated, base[pos], 0, pos);
    const uint8_t type = base[pos];
    const uint16_t length = load16(base + pos + 1);
    const uint8_t spare_instance = base[pos + 3];
    if (length > end - pos - kIeHeaderSize)
      return fail(Errc::kIeTruncated, type, spare_instance & 0x0f, pos);
    if (count_ == kMaxIes) return fail(Errc::kTooManyIes, type, spare_instance & 0x0f, pos);
    const std::size_t index = count_++;
    Ie& ie = ies_[index];
    ie.offset = static_cast<uint16_t>(pos);
    ie.length = length;
    ie.type = type;
    ie.spare_instance = spare_instance;
    if (isGroupedIeType(type)) {
      // This grouped IE is nesting level depth + 1; Builder allows kMaxGroupDepth.
      if (depth + 1 > kMaxGroupDepth)
        return fail(Errc::kGroupingTooDeep, type, spare_instance & 0x0f, pos);
      auto children = decodeIes(pos + kIeHeaderSize, pos + kIeHeaderSize + length, depth + 1);
      if (!children) return children;
    }
    ies_[index].end = static_cast<uint16_t>(count_);
    pos += kIeHeaderSize + length;
  }
  return {};
}

const Ie* Message::find(IeType type, uint8_t instance) const noexcept {
  const auto t = static_cast<uint8_t>(type);
  for (std::size_t i = 0; i < count_; i = ies_[i].end) {
    if (ies_[i].type == t && ies_[i].instance() == instance) return &ies_[i];
  }
  return nullptr;
}

const Ie* Message::findChild(const Ie& parent, IeType type, uint8_t instance) const noexcept {
  const auto t = static_cast<uint8_t>(type);
  for (std::size_t i = indexOf(parent) + 1; i < parent.end; i = ies_[i].end) {
    if (ies_[i].type == t && ies_[i].instance() == instance) return &ies_[i];
  }
  return nullptr;
}

const Ie* Message::findNth(IeType type, uint8_t instance, std::size_t n) const noexcept {
  const auto t = static_cast<uint8_t>(type);
  for (std::size_t i = 0; i < count_; i = ies_[i].end) {
    if (ies_[i].type == t && ies_[i].instance() == instance && n-- == 0) return &ies_[i];
  }
  return nullptr;
}

Result<void> Datagram::decode(std::span<const uint8_t> bytes) noexcept {
  has_piggybacked = false;
  auto first = message.decode(bytes);
  if (!first) return first;
  if (!message.header().piggyback()) return {};
  const std::size_t offset = message.header().messageSize();
  if (bytes[offset] & kFlagPiggyback) return fail(Errc::kInvalidPiggyback, 0, 0, offset);
  auto second = piggybacked.decode(bytes.subspan(offset));
  if (!second) {
    Error e = second.error();
    e.offset = static_cast<uint16_t>(e.offset + offset);
    return tl::unexpected(e);
  }
  has_piggybacked = true;
  return {};
}

}  // namespace gtpcp::gtp::v2
