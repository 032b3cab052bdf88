// Decoding and encoding errors of the GTP-C codec, as values.
//
// Peer input never throws: every decoder returns Result<T>, whose error names
// what was wrong and where, and maps to the Cause a peer must get (or to "drop
// silently" where TS 29.274 §7.7 / TS 29.060 §11.1 say so). The names are
// stable: they are metric labels and appear in gtpc-decode's JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace gtpcp::gtp {

enum class Errc : uint8_t {
  kOk = 0,
  kTruncatedHeader,        // shorter than the version's fixed header
  kUnsupportedVersion,     // version field is not the decoder's
  kInvalidLength,          // header Length inconsistent with the datagram
  kUnknownMessageType,     // message type not assigned in the spec
  kIeTruncated,            // an IE runs past the end of its message or grouped IE
  kIeTooShort,             // an IE is shorter than its type's fixed part
  kIeInvalidValue,         // an IE's octets break its type's rules
  kUnknownTvIe,            // GTPv1: a TV IE of unknown type, whose length cannot be known
  kTooManyIes,             // more IEs than the decoder's fixed capacity
  kGroupingTooDeep,        // grouped IEs nested deeper than the decoder allows
  kInvalidPiggyback,       // a piggybacked message that itself claims a piggyback
  kInvalidExtensionHeader, // GTPv1: an extension header of length 0 or past the end
  kMandatoryIeMissing,
  kMandatoryIeIncorrect,
  kBufferTooSmall,         // encoding: the output buffer cannot hold the message
  kInvalidArgument,        // encoding: a typed value cannot be encoded (too many digits...)
};

// Where a problem was found. `ie_type` is 0 when the problem is not in an IE.
struct Error {
  Errc code = Errc::kOk;
  uint8_t ie_type = 0;
  uint8_t ie_instance = 0;
  uint16_t offset = 0;  // octet offset in the datagram where decoding stopped

  friend bool operator==(const Error&, const Error&) = default;
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(Errc code, uint8_t ie_type = 0, uint8_t ie_instance = 0,
                                  std::size_t offset = 0) noexcept {
  return tl::unexpected<Error>(Error{code, ie_type, ie_instance, static_cast<uint16_t>(offset)});
}

// Stable snake_case name, e.g. "ie_truncated".
std::string_view errcName(Errc code) noexcept;

// One sentence for logs and tools, e.g. "IE 87 instance 0 at offset 40 runs past
// the end of its container". Allocates: not for the hot path.
std::string describe(const Error& error);

// The Cause to answer a request with, or 0 when the message must be dropped
// without an answer (truncated header, unknown message type) or answered with
// a Version Not Supported message instead of a Cause.
uint8_t v2Cause(Errc code) noexcept;
uint8_t v1Cause(Errc code) noexcept;

}  // namespace gtpcp::gtp
