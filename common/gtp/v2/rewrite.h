// Rewriting a GTPv2-C message into another buffer: the worker's slow path for
// edits that change an IE's length (TS 29.274 §5, §8.2).
//
// patch.h changes octets in place, which covers what a relay changes in
// nearly every message (TEIDs, sequence numbers, same-family addresses). When
// an edit changes a length (an F-TEID going from IPv6 to IPv4, an APN
// rewritten, a PAA shortened, a Charging Characteristics or Selection Mode IE
// added, an IE dropped) the message has to be copied: a Rewriter collects the
// edits against the decoded Message, then write() produces the edited message
// in one pass, recomputing the Length of the header and of every grouped IE
// whose content changed. Everything not edited is copied as received: header
// fields and spare bits, unknown IEs, CR/spare nibbles, and the order of IEs.
//
// No allocation and no exceptions: the Rewriter is a fixed-size object (about
// 1.5 KiB) that a worker keeps on its stack or per slot.
//
//   Rewriter rw(message);
//   rw.replace(*fteid, FTeid{10, teid, ipv4, std::nullopt});   // IPv6 -> IPv4
//   rw.append(ChargingCharacteristics{0x0800});
//   auto size = rw.write(out);                                  // Result<std::size_t>
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::gtp::v2 {

// Edits one Rewriter holds: a worker's slow path makes a handful per message.
inline constexpr std::size_t kMaxEdits = 16;
// Octets the typed helpers can encode into the Rewriter's own storage, all
// edits together: an F-TEID takes at most 25, an APN 100, a PAA 22.
inline constexpr std::size_t kRewriteScratchSize = 1024;

// An IE value type of ies.h: kType, encodedSize() and encode(out).
template <class T>
concept EncodableIe = requires(const T& value, uint8_t* out) {
  { T::kType } -> std::convertible_to<IeType>;
  { value.encodedSize() } -> std::convertible_to<std::size_t>;
  value.encode(out);
};

// The edits to one decoded message, and the writer that applies them.
//
// Each edit method returns false, and records nothing, when the Rewriter
// already holds kMaxEdits edits, when an Ie is not an entry of the message's
// index, when an instance is over 15, or when the edit would overlap another:
// an IE is replaced or removed at most once, and nothing inside a replaced or
// removed grouped IE can be edited (in either order), so the result never
// depends on the order of the calls. Value spans are not copied: they must
// stay valid until the last write(). The typed helpers encode at once into
// the Rewriter's own storage (kRewriteScratchSize octets in all), so their
// arguments may be temporaries.
//
// Not copyable (values may point into the object). One thread at a time.
class Rewriter {
 public:
  // `message` must be decoded (Message::decode() succeeded); it and the bytes
  // it was decoded from must outlive the Rewriter and stay as they are (edits
  // name IEs by their place in the index: no decode() of another message
  // into the same object while the Rewriter is in use).
  explicit Rewriter(const Message& message) noexcept : message_(message) {}
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  // Gives `ie` a new value, keeping its type and its CR/spare-instance octet.
  // For a grouped IE, `value` is its whole new content (its children encoded).
  bool replace(const Ie& ie, std::span<const uint8_t> value) noexcept;
  // Drops `ie`, with its children when it is grouped.
  bool remove(const Ie& ie) noexcept;
  // Adds an IE after the last top-level IE (after those appended before it).
  // The CR/spare nibble is 0.
  bool append(IeType type, uint8_t instance, std::span<const uint8_t> value) noexcept;
  // Adds an IE after the last child of `grouped_parent`, which must be a
  // grouped IE of the message.
  bool appendTo(const Ie& grouped_parent, IeType type, uint8_t instance,
                std::span<const uint8_t> value) noexcept;

  // The same with a typed value of ies.h, encoded now. replace() also refuses
  // a value of another type than `ie`'s.
  template <EncodableIe T>
  bool replace(const Ie& ie, const T& value) noexcept {
    if (ie.type != static_cast<uint8_t>(T::kType)) return false;
    const auto encoded = encode(value);
    return encoded.data() != nullptr && keep(replace(ie, encoded), encoded.size());
  }
  template <EncodableIe T>
  bool append(const T& value, uint8_t instance = 0) noexcept {
    const auto encoded = encode(value);
    return encoded.data() != nullptr && keep(append(T::kType, instance, encoded), encoded.size());
  }
  template <EncodableIe T>
  bool appendTo(const Ie& grouped_parent, const T& value, uint8_t instance = 0) noexcept {
    const auto encoded = encode(value);
    return encoded.data() != nullptr &&
           keep(appendTo(grouped_parent, T::kType, instance, encoded), encoded.size());
  }

  // Writes the edited message at the start of `out` and returns its size.
  // The header is the received one (flags, type, TEID, sequence number, the
  // priority/spare octet) with the P flag cleared, since only this message is
  // written, and its Length recomputed. Untouched IEs, grouped ones included,
  // are copied byte for byte; a grouped IE with an edit inside gets its
  // Length recomputed, at every level. May be called more than once. On an
  // error, `out` may hold part of a message: send nothing from it.
  //
  // Errors: kBufferTooSmall when `out` cannot hold the message;
  // kInvalidArgument when an IE's value or the message would exceed what a
  // 16-bit Length can say (the IE's type and instance in the error; none for
  // the message), or when the message's decode() did not succeed.
  Result<std::size_t> write(std::span<uint8_t> out) const noexcept;

  std::size_t editCount() const noexcept { return count_; }

 private:
  enum class Kind : uint8_t { kReplace, kRemove, kAppend };
  struct Edit {
    std::span<const uint8_t> value;
    uint16_t target = 0;  // kReplace, kRemove: index of the IE; kAppend: its parent
    Kind kind = Kind::kRemove;
    uint8_t type = 0;      // kAppend only
    uint8_t instance = 0;  // kAppend only
  };
  // The parent of a top-level append; Message indexes stay below kMaxIes.
  static constexpr uint16_t kTopLevel = 0xffff;
  static_assert(kMaxIes < kTopLevel);
  struct Output;

  bool decoded() const noexcept;
  bool indexOf(const Ie& ie, uint16_t& index) const noexcept;
  bool covered(uint16_t index) const noexcept;
  bool editedWithin(uint16_t index) const noexcept;
  const Edit* editOn(uint16_t index) const noexcept;
  bool add(const Edit& edit) noexcept;
  void writeSiblings(Output& out, uint16_t begin, uint16_t end, uint16_t parent) const noexcept;

  // Storage for a typed value: a span of its encoded octets, or one with a
  // null data() when the storage is full. keep() commits it once the edit is
  // recorded.
  template <EncodableIe T>
  std::span<const uint8_t> encode(const T& value) noexcept {
    const std::size_t size = value.encodedSize();
    if (size > kRewriteScratchSize - scratch_used_) return {};
    uint8_t* at = scratch_ + scratch_used_;
    value.encode(at);
    return {at, size};
  }
  bool keep(bool added, std::size_t size) noexcept {
    if (added) scratch_used_ += size;
    return added;
  }

  const Message& message_;
  std::size_t count_ = 0;
  Edit edits_[kMaxEdits];
  std::size_t scratch_used_ = 0;
  uint8_t scratch_[kRewriteScratchSize];
};

}  // namespace gtpcp::gtp::v2
