// Encoding GTPv2-C messages from typed values (TS 29.274 §5, §8.2).
//
// Builder writes into a caller's buffer and never allocates. Errors are sticky:
// every add() after an overflow does nothing, and finish() reports the first
// error, so call sites read as a plain list of IEs.
//
//   Builder b(buffer);
//   b.begin(MessageType::kEchoResponse, std::nullopt, seq);
//   b.add(Recovery{restart_counter});
//   auto bytes = b.finish();
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::gtp::v2 {

class Builder {
 public:
  explicit Builder(std::span<uint8_t> out) noexcept : out_(out) {}

  // Starts a message: T=1 with `teid` when given, else T=0 (Echo, Version Not
  // Supported). `message_priority` sets MP and the priority nibble.
  void begin(MessageType type, std::optional<uint32_t> teid, uint32_t sequence_number,
             std::optional<uint8_t> message_priority = std::nullopt) noexcept;

  // Closes the current message, sets its P flag and starts the piggybacked one.
  void beginPiggybacked(MessageType type, std::optional<uint32_t> teid, uint32_t sequence_number,
                        std::optional<uint8_t> message_priority = std::nullopt) noexcept;

  // Appends one IE with a typed value.
  template <class T>
  void add(const T& value, uint8_t instance = 0) noexcept {
    uint8_t* v = reserveIe(static_cast<uint8_t>(T::kType), instance, value.encodedSize());
    if (v != nullptr) value.encode(v);
  }
  // Appends one IE with the given value octets (any type, known or not).
  void addRaw(uint8_t type, uint8_t instance, std::span<const uint8_t> value) noexcept;

  // Opens a grouped IE; IEs added until endGrouped() are its children.
  void beginGrouped(IeType type, uint8_t instance = 0) noexcept;
  void endGrouped() noexcept;

  // Fills in the lengths and returns the datagram (every message built).
  Result<std::span<uint8_t>> finish() noexcept;

  std::size_t size() const noexcept { return pos_; }

 private:
  uint8_t* reserveIe(uint8_t type, uint8_t instance, std::size_t length) noexcept;
  void closeMessage() noexcept;

  std::span<uint8_t> out_;
  std::size_t pos_ = 0;
  std::size_t message_start_ = 0;
  bool open_ = false;
  Errc error_ = Errc::kOk;
  std::size_t group_stack_[kMaxGroupDepth]{};
  std::size_t depth_ = 0;
};

}  // namespace gtpcp::gtp::v2

namespace gtpcp::gtp::v2 {

// Writes `message` back from its decoded header and IE index: header fields
// and spare bits as received, IEs in the same order, grouped lengths
// recomputed from their children. An unmodified message comes out byte for
// byte; a difference means the decoder lost something.
Result<std::span<uint8_t>> reencode(const Message& message, std::span<uint8_t> out) noexcept;

}  // namespace gtpcp::gtp::v2
