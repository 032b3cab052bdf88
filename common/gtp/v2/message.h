// GTPv2-C message decoding (TS 29.274 §5 header, §8.2 IE format).
//
// decode() walks a datagram once and builds an index of its IEs in wire order
// (grouped IEs recursively, children right after their parent); values stay in
// the datagram and are read through typed views (ies.h) only when needed. The
// index lives in the Message object, a fixed array: no allocation per message
// or per IE, so a worker keeps one Message per slot and reuses it.
//
// Unknown IE types are indexed like any other and never rewritten, so a
// message relayed by the proxy keeps them byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2_tables.gen.h"

namespace gtpcp::gtp::v2 {

inline constexpr uint8_t kVersion = 2;
inline constexpr std::size_t kHeaderSizeNoTeid = 8;
inline constexpr std::size_t kHeaderSizeWithTeid = 12;
inline constexpr std::size_t kIeHeaderSize = 4;
// Index capacity of one message. A Create Session Request with 11 bearer
// contexts has about 150 IEs; a Context Response a few more.
inline constexpr std::size_t kMaxIes = 512;
// PDN Connection > Bearer Context > ... : real messages nest two levels.
inline constexpr std::size_t kMaxGroupDepth = 6;

// Header flag bits of octet 1 (TS 29.274 §5.1).
inline constexpr uint8_t kFlagPiggyback = 0x10;
inline constexpr uint8_t kFlagTeid = 0x08;
inline constexpr uint8_t kFlagMessagePriority = 0x04;

// The top bit of the 24-bit sequence number: set in the numbers of
// command-triggered procedures (a Modify/Delete Bearer or Bearer Resource
// Command and the request it triggers), clear in all others (TS 29.274 §7.6).
inline constexpr uint32_t kCommandBit = 0x800000;

struct Header {
  uint8_t flags = 0;             // octet 1 as received: version, P, T, MP, spare
  uint8_t message_type = 0;
  uint16_t length = 0;           // octets after the first 4 (TS 29.274 §5.5.1)
  uint32_t teid = 0;             // valid when teidPresent()
  uint32_t sequence_number = 0;  // 24 bits
  uint8_t last_octet = 0;        // message priority (high nibble when MP) and spare bits

  uint8_t version() const noexcept { return flags >> 5; }
  bool piggyback() const noexcept { return flags & kFlagPiggyback; }
  bool teidPresent() const noexcept { return flags & kFlagTeid; }
  bool messagePriorityPresent() const noexcept { return flags & kFlagMessagePriority; }
  uint8_t messagePriority() const noexcept { return last_octet >> 4; }
  std::size_t headerSize() const noexcept {
    return teidPresent() ? kHeaderSizeWithTeid : kHeaderSizeNoTeid;
  }
  std::size_t messageSize() const noexcept { return 4u + length; }
};

// Decodes just the header of the message at the start of `bytes`: enough for
// the forwarder to classify a datagram. Checks the version and that the
// declared length fits in `bytes`; does not look at the IEs.
Result<Header> decodeHeader(std::span<const uint8_t> bytes) noexcept;

// One entry of the IE index.
struct Ie {
  uint16_t offset = 0;       // of the IE's Type octet, from the start of the message
  uint16_t length = 0;       // of the value (the Length field)
  uint16_t end = 0;          // index one past this IE's last descendant
  uint8_t type = 0;
  uint8_t spare_instance = 0;  // octet 4 as received: CR/spare high nibble, instance low

  uint8_t instance() const noexcept { return spare_instance & 0x0f; }
  uint16_t valueOffset() const noexcept { return static_cast<uint16_t>(offset + kIeHeaderSize); }
  IeType ieType() const noexcept { return static_cast<IeType>(type); }
};
static_assert(sizeof(Ie) == 8);

class Message {
 public:
  // Decodes the single message at the start of `bytes`, which must hold exactly
  // that message, or more when its P flag announces a piggybacked one (the
  // caller decodes that one separately, see decodeDatagram()). `bytes` must
  // outlive this object: the index points into it.
  Result<void> decode(std::span<const uint8_t> bytes) noexcept;

  const Header& header() const noexcept { return header_; }
  MessageType messageType() const noexcept { return static_cast<MessageType>(header_.message_type); }
  // This message's octets (header included), without a piggybacked message.
  std::span<const uint8_t> bytes() const noexcept { return bytes_; }

  // Every IE, in wire order, grouped IEs followed by their children.
  std::span<const Ie> ies() const noexcept { return {ies_, count_}; }
  std::size_t ieCount() const noexcept { return count_; }
  const Ie& ie(std::size_t index) const noexcept { return ies_[index]; }
  std::size_t indexOf(const Ie& ie) const noexcept { return static_cast<std::size_t>(&ie - ies_); }

  // Iterates siblings: top-level IEs, or the children of one grouped IE.
  class Range {
   public:
    class Iterator {
     public:
      Iterator(const Ie* base, uint16_t i) noexcept : base_(base), i_(i) {}
      const Ie& operator*() const noexcept { return base_[i_]; }
      const Ie* operator->() const noexcept { return base_ + i_; }
      Iterator& operator++() noexcept {
        i_ = base_[i_].end;
        return *this;
      }
      bool operator!=(const Iterator& o) const noexcept { return i_ != o.i_; }
      bool operator==(const Iterator& o) const noexcept { return i_ == o.i_; }

     private:
      const Ie* base_;
      uint16_t i_;
    };
    Range(const Ie* base, uint16_t begin, uint16_t end) noexcept
        : base_(base), begin_(begin), end_(end) {}
    Iterator begin() const noexcept { return {base_, begin_}; }
    Iterator end() const noexcept { return {base_, end_}; }
    bool empty() const noexcept { return begin_ == end_; }

   private:
    const Ie* base_;
    uint16_t begin_, end_;
  };
  Range topLevel() const noexcept { return {ies_, 0, static_cast<uint16_t>(count_)}; }
  Range children(const Ie& parent) const noexcept {
    const auto i = static_cast<uint16_t>(indexOf(parent));
    return {ies_, static_cast<uint16_t>(i + 1), parent.end};
  }

  // First top-level IE of `type` and `instance`, or nullptr.
  const Ie* find(IeType type, uint8_t instance = 0) const noexcept;
  // First child of `parent` of `type` and `instance`, or nullptr.
  const Ie* findChild(const Ie& parent, IeType type, uint8_t instance = 0) const noexcept;
  // The `n`th (0-based) top-level IE of `type` and `instance`, or nullptr.
  const Ie* findNth(IeType type, uint8_t instance, std::size_t n) const noexcept;

  std::span<const uint8_t> value(const Ie& ie) const noexcept {
    return bytes_.subspan(ie.valueOffset(), ie.length);
  }
  // The whole IE, header included.
  std::span<const uint8_t> raw(const Ie& ie) const noexcept {
    return bytes_.subspan(ie.offset, kIeHeaderSize + ie.length);
  }

 private:
  Result<void> decodeIes(std::size_t begin, std::size_t end, std::size_t depth) noexcept;

  Header header_{};
  std::span<const uint8_t> bytes_{};
  std::size_t count_ = 0;
  Ie ies_[kMaxIes];
};

// A datagram: one message, and the message piggybacked on it when its P flag
// is set (TS 29.274 §5.5.1: the second message follows the first, and may not
// itself carry P).
struct Datagram {
  Message message;
  Message piggybacked;
  bool has_piggybacked = false;

  // Decodes both messages. The piggybacked message's offset in `bytes` is
  // message.header().messageSize().
  Result<void> decode(std::span<const uint8_t> bytes) noexcept;
};

}  // namespace gtpcp::gtp::v2
