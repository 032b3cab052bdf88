#include "common/gtp/v2/builder.h"

#include <cstring>

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v2 {

void Builder::begin(MessageType type, std::optional<uint32_t> teid, uint32_t sequence_number,
                    std::optional<uint8_t> message_priority) noexcept {
  if (error_ != Errc::kOk) return;
  if (open_ || depth_ != 0) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  const std::size_t header = teid ? kHeaderSizeWithTeid : kHeaderSizeNoTeid;
  if (out_.size() - pos_ < header) {
    error_ = Errc::kBufferTooSmall;
    return;
  }
  message_start_ = pos_;
  uint8_t* p = out_.data() + pos_;
  p[0] = static_cast<uint8_t>((kVersion << 5) | (teid ? kFlagTeid : 0) |
                              (message_priority ? kFlagMessagePriority : 0));
  p[1] = static_cast<uint8_t>(type);
  store16(p + 2, 0);  // set by closeMessage()
  uint8_t* q = p + 4;
  if (teid) {
    store32(q, *teid);
    q += 4;
  }
  store24(q, sequence_number & 0xffffff);
  q[3] = message_priority ? static_cast<uint8_t>((*message_priority & 0x0f) << 4) : 0;
  pos_ += header;
  open_ = true;
}

void Builder::beginPiggybacked(MessageType type, std::optional<uint32_t> teid,
                               uint32_t sequence_number,
                               std::optional<uint8_t> message_priority) noexcept {
  if (error_ != Errc::kOk) return;
  if (!open_ || depth_ != 0) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  out_[message_start_] |= kFlagPiggyback;
  closeMessage();
  begin(type, teid, sequence_number, message_priority);
}

uint8_t* Builder::reserveIe(uint8_t type, uint8_t instance, std::size_t length) noexcept {
  if (error_ != Errc::kOk) return nullptr;
  if (!open_ || length > 0xffff) {
    error_ = Errc::kInvalidArgument;
    return nullptr;
  }
  if (out_.size() - pos_ < kIeHeaderSize + length) {
    error_ = Errc::kBufferTooSmall;
    return nullptr;
  }
  uint8_t* p = out_.data() + pos_;
  p[0] = type;
  store16(p + 1, static_cast<uint16_t>(length));
  p[3] = instance & 0x0f;
  pos_ += kIeHeaderSize + length;
  return p + kIeHeaderSize;
}

void Builder::addRaw(uint8_t type, uint8_t instance, std::span<const uint8_t> value) noexcept {
  uint8_t* v = reserveIe(type, instance, value.size());
  if (v != nullptr && !value.empty()) std::memcpy(v, value.data(), value.size());
}

void Builder::beginGrouped(IeType type, uint8_t instance) noexcept {
  if (error_ != Errc::kOk) return;
  if (depth_ == kMaxGroupDepth) {
    error_ = Errc::kGroupingTooDeep;
    return;
  }
  const std::size_t at = pos_;
  if (reserveIe(static_cast<uint8_t>(type), instance, 0) == nullptr) return;
  group_stack_[depth_++] = at;
}

void Builder::endGrouped() noexcept {
  if (error_ != Errc::kOk) return;
  if (depth_ == 0) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  const std::size_t at = group_stack_[--depth_];
  const std::size_t length = pos_ - at - kIeHeaderSize;
  if (length > 0xffff) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  store16(out_.data() + at + 1, static_cast<uint16_t>(length));
}

void Builder::closeMessage() noexcept {
  const std::size_t length = pos_ - message_start_ - 4;
  if (length > 0xffff) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  store16(out_.data() + message_start_ + 2, static_cast<uint16_t>(length));
  open_ = false;
}

Result<std::span<uint8_t>> Builder::finish() noexcept {
  if (error_ == Errc::kOk && (!open_ || depth_ != 0)) error_ = Errc::kInvalidArgument;
  if (error_ == Errc::kOk) closeMessage();
  if (error_ != Errc::kOk) return fail(error_);
  return out_.first(pos_);
}

}  // namespace gtpcp::gtp::v2

namespace gtpcp::gtp::v2 {

namespace {

// Writes the IEs of index range [begin, end) at out[pos]; returns the new pos
// or 0 on overflow (0 is never a valid position after a header).
std::size_t writeIes(const Message& m, std::size_t begin, std::size_t end, std::span<uint8_t> out,
                     std::size_t pos) noexcept {
  for (std::size_t i = begin; i < end; i = m.ie(i).end) {
    const Ie& ie = m.ie(i);
    if (out.size() - pos < kIeHeaderSize) return 0;
    const std::size_t at = pos;
    out[at] = ie.type;
    out[at + 3] = ie.spare_instance;
    pos += kIeHeaderSize;
    if (isGroupedIeType(ie.type)) {
      pos = writeIes(m, i + 1, ie.end, out, pos);
      if (pos == 0) return 0;
    } else {
      if (out.size() - pos < ie.length) return 0;
      auto v = m.value(ie);
      if (!v.empty()) std::memcpy(out.data() + pos, v.data(), v.size());
      pos += ie.length;
    }
    store16(out.data() + at + 1, static_cast<uint16_t>(pos - at - kIeHeaderSize));
  }
  return pos;
}

}  // namespace

Result<std::span<uint8_t>> reencode(const Message& message, std::span<uint8_t> out) noexcept {
  const Header& h = message.header();
  const std::size_t header = h.headerSize();
  if (out.size() < header) return fail(Errc::kBufferTooSmall);
  out[0] = h.flags;
  out[1] = h.message_type;
  std::size_t pos = 4;
  if (h.teidPresent()) {
    store32(out.data() + pos, h.teid);
    pos += 4;
  }
  store24(out.data() + pos, h.sequence_number);
  out[pos + 3] = h.last_octet;
  pos += 4;
  pos = writeIes(message, 0, message.ieCount(), out, pos);
  if (pos == 0) return fail(Errc::kBufferTooSmall);
  store16(out.data() + 2, static_cast<uint16_t>(pos - 4));
  return out.first(pos);
}

}  // namespace gtpcp::gtp::v2
