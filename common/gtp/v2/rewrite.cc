#include "common/gtp/v2/rewrite.h"

#include <cstring>
#include <functional>

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v2 {

// Where write() is in `out`, and its first error (later writes do nothing).
struct Rewriter::Output {
  std::span<uint8_t> bytes;
  std::size_t pos = 0;
  Error error{};

  bool ok() const noexcept { return error.code == Errc::kOk; }

  // `size` octets at pos, or nullptr (and kBufferTooSmall) when they do not fit.
  uint8_t* take(std::size_t size) noexcept {
    if (!ok()) return nullptr;
    if (bytes.size() - pos < size) {
      error = Error{Errc::kBufferTooSmall};
      return nullptr;
    }
    uint8_t* at = bytes.data() + pos;
    pos += size;
    return at;
  }

  void copy(std::span<const uint8_t> octets) noexcept {
    uint8_t* at = take(octets.size());
    if (at != nullptr && !octets.empty()) std::memcpy(at, octets.data(), octets.size());
  }

  // An IE header; the Length is set by setLength() once the value is written.
  std::size_t ieHeader(uint8_t type, uint8_t spare_instance) noexcept {
    const std::size_t at = pos;
    uint8_t* p = take(kIeHeaderSize);
    if (p != nullptr) {
      p[0] = type;
      p[3] = spare_instance;
    }
    return at;
  }

  // Sets the Length of the IE whose header is at `at` from what follows it.
  // `offset` is the IE's offset in the received message, for the error.
  void setLength(std::size_t at, uint8_t type, uint8_t spare_instance, uint16_t offset) noexcept {
    if (!ok()) return;
    const std::size_t length = pos - at - kIeHeaderSize;
    if (length > 0xffff) {
      error = Error{Errc::kInvalidArgument, type, static_cast<uint8_t>(spare_instance & 0x0f), offset};
      return;
    }
    store16(bytes.data() + at + 1, static_cast<uint16_t>(length));
  }

  void ie(uint8_t type, uint8_t spare_instance, std::span<const uint8_t> value,
          uint16_t offset) noexcept {
    const std::size_t at = ieHeader(type, spare_instance);
    copy(value);
    setLength(at, type, spare_instance, offset);
  }
};

// Whether the index covers the message: top-level IEs back to back from the
// header to the last octet. A failed decode() leaves a partial index (and the
// bytes set), which would write a truncated message.
bool Rewriter::decoded() const noexcept {
  const auto bytes = message_.bytes();
  std::size_t pos = message_.header().headerSize();
  if (bytes.size() < pos) return false;
  for (std::size_t i = 0; i < message_.ieCount(); i = message_.ie(i).end) {
    const Ie& ie = message_.ie(i);
    if (ie.offset != pos || ie.end <= i || ie.end > message_.ieCount()) return false;
    pos += kIeHeaderSize + ie.length;
  }
  return pos == bytes.size();
}

bool Rewriter::indexOf(const Ie& ie, uint16_t& index) const noexcept {
  // std::less: a total order even for a pointer into another array.
  const auto ies = message_.ies();
  if (std::less<const Ie*>{}(&ie, ies.data()) ||
      !std::less<const Ie*>{}(&ie, ies.data() + ies.size()))
    return false;
  index = static_cast<uint16_t>(message_.indexOf(ie));
  return true;
}

// Whether IE `index`, or a grouped IE containing it, is replaced or removed.
bool Rewriter::covered(uint16_t index) const noexcept {
  for (std::size_t e = 0; e < count_; ++e) {
    const Edit& edit = edits_[e];
    if (edit.kind == Kind::kAppend) continue;
    if (edit.target <= index && index < message_.ie(edit.target).end) return true;
  }
  return false;
}

// Whether an edit lies strictly inside IE `index`: on a descendant, or an
// append to it or to a descendant.
bool Rewriter::editedWithin(uint16_t index) const noexcept {
  const uint16_t end = message_.ie(index).end;
  for (std::size_t e = 0; e < count_; ++e) {
    const Edit& edit = edits_[e];
    if (edit.kind == Kind::kAppend) {
      if (edit.target != kTopLevel && index <= edit.target && edit.target < end) return true;
    } else if (index < edit.target && edit.target < end) {
      return true;
    }
  }
  return false;
}

const Rewriter::Edit* Rewriter::editOn(uint16_t index) const noexcept {
  for (std::size_t e = 0; e < count_; ++e) {
    if (edits_[e].kind != Kind::kAppend && edits_[e].target == index) return &edits_[e];
  }
  return nullptr;
}

bool Rewriter::add(const Edit& edit) noexcept {
  if (count_ == kMaxEdits) return false;
  edits_[count_++] = edit;
  return true;
}

bool Rewriter::replace(const Ie& ie, std::span<const uint8_t> value) noexcept {
  uint16_t index;
  if (!indexOf(ie, index) || covered(index) || editedWithin(index)) return false;
  return add(Edit{value, index, Kind::kReplace});
}

bool Rewriter::remove(const Ie& ie) noexcept {
  uint16_t index;
  if (!indexOf(ie, index) || covered(index) || editedWithin(index)) return false;
  return add(Edit{{}, index, Kind::kRemove});
}

bool Rewriter::append(IeType type, uint8_t instance, std::span<const uint8_t> value) noexcept {
  if (instance > 0x0f) return false;
  return add(Edit{value, kTopLevel, Kind::kAppend, static_cast<uint8_t>(type), instance});
}

bool Rewriter::appendTo(const Ie& grouped_parent, IeType type, uint8_t instance,
                        std::span<const uint8_t> value) noexcept {
  uint16_t parent;
  if (instance > 0x0f || !indexOf(grouped_parent, parent) ||
      !isGroupedIeType(grouped_parent.type) || covered(parent))
    return false;
  return add(Edit{value, parent, Kind::kAppend, static_cast<uint8_t>(type), instance});
}

// Writes the siblings [begin, end) of the index, then the IEs appended to
// `parent` (kTopLevel for the message). Recursion follows the message's
// nesting, which the decoder bounds by kMaxGroupDepth.
void Rewriter::writeSiblings(Output& out, uint16_t begin, uint16_t end,
                             uint16_t parent) const noexcept {
  for (uint16_t i = begin; i < end && out.ok(); i = message_.ie(i).end) {
    const Ie& ie = message_.ie(i);
    if (ie.end <= i || ie.end > end) {  // an index decode() did not finish
      out.error = Error{Errc::kInvalidArgument, ie.type, ie.instance(), ie.offset};
      return;
    }
    if (const Edit* edit = editOn(i); edit != nullptr) {
      if (edit->kind == Kind::kReplace) out.ie(ie.type, ie.spare_instance, edit->value, ie.offset);
    } else if (!editedWithin(i)) {
      out.copy(message_.raw(ie));  // as received, Length included
    } else {
      const std::size_t at = out.ieHeader(ie.type, ie.spare_instance);
      writeSiblings(out, static_cast<uint16_t>(i + 1), ie.end, i);
      out.setLength(at, ie.type, ie.spare_instance, ie.offset);
    }
  }
  for (std::size_t e = 0; e < count_ && out.ok(); ++e) {
    const Edit& edit = edits_[e];
    if (edit.kind == Kind::kAppend && edit.target == parent)
      out.ie(edit.type, edit.instance, edit.value, 0);
  }
}

Result<std::size_t> Rewriter::write(std::span<uint8_t> out) const noexcept {
  if (!decoded()) return fail(Errc::kInvalidArgument);
  const std::span<const uint8_t> received = message_.bytes();
  const std::size_t header = message_.header().headerSize();
  Output o{out};
  o.copy(received.first(header));
  if (!o.ok()) return tl::unexpected(o.error);
  out[0] = static_cast<uint8_t>(out[0] & ~kFlagPiggyback);
  writeSiblings(o, 0, static_cast<uint16_t>(message_.ieCount()), kTopLevel);
  if (!o.ok()) return tl::unexpected(o.error);
  // The header Length counts the octets after the first 4 (TS 29.274 §5.5.1).
  if (o.pos - 4 > 0xffff) return fail(Errc::kInvalidArgument);
  store16(out.data() + 2, static_cast<uint16_t>(o.pos - 4));
  return o.pos;
}

}  // namespace gtpcp::gtp::v2
