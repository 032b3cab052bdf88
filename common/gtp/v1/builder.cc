#include "common/gtp/v1/builder.h"

#include <cstring>

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v1 {

namespace {
// TS 29.060 §7.7.40: the TLV whose Length field is one octet.
constexpr uint8_t kExtensionHeaderTypeList = static_cast<uint8_t>(IeType::kExtensionHeaderTypeList);
}  // namespace

void Builder::begin(MessageType type, uint32_t teid, std::optional<uint16_t> sequence_number,
                    std::optional<uint8_t> npdu_number) noexcept {
  if (error_ != Errc::kOk) return;
  if (open_) {
    error_ = Errc::kInvalidArgument;
    return;
  }
  const bool optional = sequence_number || npdu_number;
  const std::size_t header = optional ? kHeaderSizeOptional : kHeaderSizeMandatory;
  if (out_.size() < header) {
    error_ = Errc::kBufferTooSmall;
    return;
  }
  uint8_t* p = out_.data();
  p[0] = static_cast<uint8_t>((kVersion << 5) | kFlagProtocolType |
                              (sequence_number ? kFlagSequenceNumber : 0) |
                              (npdu_number ? kFlagNpdu : 0));
  p[1] = static_cast<uint8_t>(type);
  store16(p + 2, 0);
  store32(p + 4, teid);
  if (optional) {
    store16(p + 8, sequence_number.value_or(0));
    p[10] = npdu_number.value_or(0);
    p[11] = 0;  // no extension header
  }
  pos_ = header;
  open_ = true;
}

uint8_t* Builder::reserveIe(uint8_t type, std::size_t length) noexcept {
  if (error_ != Errc::kOk) return nullptr;
  if (!open_) {
    error_ = Errc::kInvalidArgument;
    return nullptr;
  }
  const bool tv = type < 128;
  if (tv) {
    const IeTypeInfo& info = ieTypeInfo(type);
    if (info.format != IeFormat::kTv || info.tv_length != length) {
      error_ = Errc::kInvalidArgument;
      return nullptr;
    }
  } else if (length > (type == kExtensionHeaderTypeList ? 0xff : 0xffff)) {
    error_ = Errc::kInvalidArgument;
    return nullptr;
  }
  const std::size_t header = tv ? 1 : type == kExtensionHeaderTypeList ? 2 : 3;
  if (out_.size() - pos_ < header + length) {
    error_ = Errc::kBufferTooSmall;
    return nullptr;
  }
  uint8_t* p = out_.data() + pos_;
  p[0] = type;
  if (header == 2) p[1] = static_cast<uint8_t>(length);
  if (header == 3) store16(p + 1, static_cast<uint16_t>(length));
  pos_ += header + length;
  return p + header;
}

void Builder::addRaw(uint8_t type, std::span<const uint8_t> value) noexcept {
  uint8_t* v = reserveIe(type, value.size());
  if (v != nullptr && !value.empty()) std::memcpy(v, value.data(), value.size());
}

Result<std::span<uint8_t>> Builder::finish() noexcept {
  if (error_ == Errc::kOk && !open_) error_ = Errc::kInvalidArgument;
  if (error_ == Errc::kOk && pos_ - kHeaderSizeMandatory > 0xffff) error_ = Errc::kInvalidArgument;
  if (error_ != Errc::kOk) return fail(error_);
  store16(out_.data() + 2, static_cast<uint16_t>(pos_ - kHeaderSizeMandatory));
  open_ = false;
  return out_.first(pos_);
}

Result<std::span<uint8_t>> reencode(const Message& message, std::span<uint8_t> out) noexcept {
  const Header& h = message.header();
  if (out.size() < h.size) return fail(Errc::kBufferTooSmall);
  out[0] = h.flags;
  out[1] = h.message_type;
  store32(out.data() + 4, h.teid);
  std::size_t pos = kHeaderSizeMandatory;
  if (h.hasOptionalFields()) {
    store16(out.data() + 8, h.sequence_number);
    out[10] = h.npdu_number;
    out[11] = h.next_extension_header_type;
    pos = kHeaderSizeOptional;
    for (std::size_t i = 0; i < h.extension_header_count; ++i) {
      const ExtensionHeader& e = h.extension_headers[i];
      std::memcpy(out.data() + pos, message.bytes().data() + e.offset, e.size);
      pos += e.size;
    }
  }
  if (h.message_type == 255) {
    // G-PDU: the body is a user packet, copied whole.
    auto body = message.body();
    if (out.size() - pos < body.size()) return fail(Errc::kBufferTooSmall);
    if (!body.empty()) std::memcpy(out.data() + pos, body.data(), body.size());
    pos += body.size();
  }
  for (const Ie& ie : message.ies()) {
    if (out.size() - pos < ie.header_size + ie.length) return fail(Errc::kBufferTooSmall);
    out[pos] = ie.type;
    if (ie.header_size == 2) out[pos + 1] = static_cast<uint8_t>(ie.length);
    if (ie.header_size == 3) store16(out.data() + pos + 1, ie.length);
    auto v = message.value(ie);
    if (!v.empty()) std::memcpy(out.data() + pos + ie.header_size, v.data(), v.size());
    pos += ie.header_size + ie.length;
  }
  store16(out.data() + 2, static_cast<uint16_t>(pos - kHeaderSizeMandatory));
  return out.first(pos);
}

}  // namespace gtpcp::gtp::v1
