// GTPv1-C message decoding (TS 29.060 §6 header, §7.7 IEs).
//
// As for GTPv2 (see v2/message.h): one pass builds a fixed-capacity index of
// the IEs in wire order; values stay in the datagram. TV IEs (types 1..127)
// have a length fixed by type, taken from the generated table; an unknown TV
// type stops decoding because nothing says where the next IE starts. TLV IEs
// (128..255) carry a 2-octet length and unknown ones are kept as they are;
// the Extension Header Type List (141) is the exception, with a 1-octet length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1_tables.gen.h"

namespace gtpcp::gtp::v1 {

inline constexpr uint8_t kVersion = 1;
inline constexpr std::size_t kHeaderSizeMandatory = 8;
inline constexpr std::size_t kHeaderSizeOptional = 12;  // with sequence number, N-PDU, next ext
inline constexpr std::size_t kMaxIes = 256;
inline constexpr std::size_t kMaxExtensionHeaders = 8;

// Octet 1 (TS 29.060 §6): version (3), PT, spare, E, S, PN.
inline constexpr uint8_t kFlagProtocolType = 0x10;
inline constexpr uint8_t kFlagExtensionHeader = 0x04;
inline constexpr uint8_t kFlagSequenceNumber = 0x02;
inline constexpr uint8_t kFlagNpdu = 0x01;
inline constexpr uint8_t kFlagsOptional = kFlagExtensionHeader | kFlagSequenceNumber | kFlagNpdu;

struct ExtensionHeader {
  uint8_t type = 0;      // the "next extension header type" that announced it
  uint16_t offset = 0;   // of its length octet, from the start of the message
  uint16_t size = 0;     // in octets, length octet and next-type octet included
};

struct Header {
  uint8_t flags = 0;          // octet 1 as received
  uint8_t message_type = 0;
  uint16_t length = 0;        // octets after the mandatory 8
  uint32_t teid = 0;
  uint16_t sequence_number = 0;     // meaningful when S is set
  uint8_t npdu_number = 0;          // meaningful when PN is set
  uint8_t next_extension_header_type = 0;
  uint8_t extension_header_count = 0;
  ExtensionHeader extension_headers[kMaxExtensionHeaders]{};
  uint16_t size = 8;          // header octets, optional fields and extension headers included

  uint8_t version() const noexcept { return flags >> 5; }
  bool protocolType() const noexcept { return flags & kFlagProtocolType; }
  bool hasExtensionHeader() const noexcept { return flags & kFlagExtensionHeader; }
  bool hasSequenceNumber() const noexcept { return flags & kFlagSequenceNumber; }
  bool hasNpdu() const noexcept { return flags & kFlagNpdu; }
  bool hasOptionalFields() const noexcept { return flags & kFlagsOptional; }
  std::size_t messageSize() const noexcept { return kHeaderSizeMandatory + length; }
};

// Decodes the header (optional fields and extension headers included) of the
// message at the start of `bytes` and checks that it fits.
Result<Header> decodeHeader(std::span<const uint8_t> bytes) noexcept;

struct Ie {
  uint16_t offset = 0;       // of the Type octet, from the start of the message
  uint16_t length = 0;       // of the value
  uint8_t type = 0;
  uint8_t header_size = 0;   // 1 for TV, 3 for TLV, 2 for Extension Header Type List

  uint16_t valueOffset() const noexcept { return static_cast<uint16_t>(offset + header_size); }
  bool isTv() const noexcept { return type < 128; }
  IeType ieType() const noexcept { return static_cast<IeType>(type); }
};
static_assert(sizeof(Ie) == 6);

class Message {
 public:
  // Decodes the message that fills `bytes` exactly (GTPv1 has no piggyback).
  // `bytes` must outlive this object.
  Result<void> decode(std::span<const uint8_t> bytes) noexcept;

  const Header& header() const noexcept { return header_; }
  MessageType messageType() const noexcept { return static_cast<MessageType>(header_.message_type); }
  std::span<const uint8_t> bytes() const noexcept { return bytes_; }
  // Octets after the header: the IEs, or the user packet of a G-PDU.
  std::span<const uint8_t> body() const noexcept { return bytes_.subspan(header_.size); }

  std::span<const Ie> ies() const noexcept { return {ies_, count_}; }
  std::size_t ieCount() const noexcept { return count_; }
  const Ie& ie(std::size_t i) const noexcept { return ies_[i]; }

  // The `n`th (0-based) IE of `type`, or nullptr: GTPv1 tells repeated IEs
  // apart by order (GSN Address for signalling, then for user traffic).
  const Ie* find(IeType type, std::size_t n = 0) const noexcept;
  std::span<const uint8_t> value(const Ie& ie) const noexcept {
    return bytes_.subspan(ie.valueOffset(), ie.length);
  }
  std::span<const uint8_t> raw(const Ie& ie) const noexcept {
    return bytes_.subspan(ie.offset, ie.header_size + ie.length);
  }

 private:
  Header header_{};
  std::span<const uint8_t> bytes_{};
  std::size_t count_ = 0;
  Ie ies_[kMaxIes];
};

}  // namespace gtpcp::gtp::v1
