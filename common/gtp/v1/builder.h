// Encoding GTPv1-C messages from typed values (TS 29.060 §6, §7.7).
//
// Same shape as v2::Builder: a caller's buffer, no allocation, sticky errors.
// TS 29.060 §7.7.0 wants IEs in ascending type order; add them in that order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"

namespace gtpcp::gtp::v1 {

class Builder {
 public:
  explicit Builder(std::span<uint8_t> out) noexcept : out_(out) {}

  // Starts the message. GTP-C messages always carry a sequence number (S=1);
  // `npdu_number` sets PN.
  void begin(MessageType type, uint32_t teid, std::optional<uint16_t> sequence_number,
             std::optional<uint8_t> npdu_number = std::nullopt) noexcept;

  template <class T>
  void add(const T& value) noexcept {
    uint8_t* v = reserveIe(static_cast<uint8_t>(T::kType), value.encodedSize());
    if (v != nullptr) value.encode(v);
  }
  // One IE with the given value octets. For a TV type the size must be the
  // table's length.
  void addRaw(uint8_t type, std::span<const uint8_t> value) noexcept;

  Result<std::span<uint8_t>> finish() noexcept;

 private:
  uint8_t* reserveIe(uint8_t type, std::size_t length) noexcept;

  std::span<uint8_t> out_;
  std::size_t pos_ = 0;
  bool open_ = false;
  Errc error_ = Errc::kOk;
};

// Writes `message` back from its decoded header and IE index (see
// v2::reencode): equal bytes for an unmodified message.
Result<std::span<uint8_t>> reencode(const Message& message, std::span<uint8_t> out) noexcept;

}  // namespace gtpcp::gtp::v1
