#include "common/gtp/errors.h"

#include <cstdio>

namespace gtpcp::gtp {

std::string_view errcName(Errc code) noexcept {
  switch (code) {
    case Errc::kOk: return "ok";
    case Errc::kTruncatedHeader: return "truncated_header";
    case Errc::kUnsupportedVersion: return "unsupported_version";
    case Errc::kInvalidLength: return "invalid_length";
    case Errc::kUnknownMessageType: return "unknown_message_type";
    case Errc::kIeTruncated: return "ie_truncated";
    case Errc::kIeTooShort: return "ie_too_short";
    case Errc::kIeInvalidValue: return "ie_invalid_value";
    case Errc::kUnknownTvIe: return "unknown_tv_ie";
    case Errc::kTooManyIes: return "too_many_ies";
    case Errc::kGroupingTooDeep: return "grouping_too_deep";
    case Errc::kInvalidPiggyback: return "invalid_piggyback";
    case Errc::kInvalidExtensionHeader: return "invalid_extension_header";
    case Errc::kMandatoryIeMissing: return "mandatory_ie_missing";
    case Errc::kMandatoryIeIncorrect: return "mandatory_ie_incorrect";
    case Errc::kBufferTooSmall: return "buffer_too_small";
    case Errc::kInvalidArgument: return "invalid_argument";
  }
  return "unknown";
}

std::string describe(const Error& error) {
  const char* what = "";
  switch (error.code) {
    case Errc::kOk: what = "no error"; break;
    case Errc::kTruncatedHeader: what = "datagram too short for the GTP header"; break;
    case Errc::kUnsupportedVersion: what = "GTP version not supported"; break;
    case Errc::kInvalidLength: what = "header Length inconsistent with the datagram size"; break;
    case Errc::kUnknownMessageType: what = "message type not assigned"; break;
    case Errc::kIeTruncated: what = "runs past the end of its container"; break;
    case Errc::kIeTooShort: what = "shorter than its type's fixed part"; break;
    case Errc::kIeInvalidValue: what = "value breaks its type's encoding rules"; break;
    case Errc::kUnknownTvIe: what = "unknown TV type: its length cannot be known"; break;
    case Errc::kTooManyIes: what = "more IEs than the decoder holds"; break;
    case Errc::kGroupingTooDeep: what = "grouped IEs nested too deep"; break;
    case Errc::kInvalidPiggyback: what = "piggybacked message claims another piggyback"; break;
    case Errc::kInvalidExtensionHeader: what = "extension header of length 0 or past the end"; break;
    case Errc::kMandatoryIeMissing: what = "mandatory IE missing"; break;
    case Errc::kMandatoryIeIncorrect: what = "mandatory IE incorrect"; break;
    case Errc::kBufferTooSmall: what = "output buffer too small"; break;
    case Errc::kInvalidArgument: what = "value cannot be encoded"; break;
  }
  char buf[200];
  if (error.ie_type != 0) {
    std::snprintf(buf, sizeof buf, "IE %u instance %u at offset %u: %s", error.ie_type,
                  error.ie_instance, error.offset, what);
  } else {
    std::snprintf(buf, sizeof buf, "at offset %u: %s", error.offset, what);
  }
  return buf;
}

uint8_t v2Cause(Errc code) noexcept {
  switch (code) {
    case Errc::kOk: return 16;                   // Request accepted
    case Errc::kInvalidLength:
    case Errc::kIeTruncated: return 67;          // Invalid Length
    case Errc::kInvalidPiggyback:
    case Errc::kGroupingTooDeep: return 65;      // Invalid Message Format
    case Errc::kIeTooShort:
    case Errc::kIeInvalidValue:
    case Errc::kMandatoryIeIncorrect: return 69; // Mandatory IE incorrect
    case Errc::kMandatoryIeMissing: return 70;   // Mandatory IE missing
    case Errc::kTooManyIes: return 73;           // No resources available
    case Errc::kTruncatedHeader:
    case Errc::kUnsupportedVersion:
    case Errc::kUnknownMessageType:
    case Errc::kUnknownTvIe:
    case Errc::kInvalidExtensionHeader:
    case Errc::kBufferTooSmall:
    case Errc::kInvalidArgument: return 0;
  }
  return 0;
}

uint8_t v1Cause(Errc code) noexcept {
  switch (code) {
    case Errc::kOk: return 128;                   // Request accepted
    case Errc::kInvalidLength:
    case Errc::kIeTruncated:
    case Errc::kUnknownTvIe:
    case Errc::kInvalidPiggyback:
    case Errc::kGroupingTooDeep:
    case Errc::kInvalidExtensionHeader: return 193; // Invalid message format
    case Errc::kIeTooShort:
    case Errc::kIeInvalidValue:
    case Errc::kMandatoryIeIncorrect: return 201;   // Mandatory IE incorrect
    case Errc::kMandatoryIeMissing: return 202;     // Mandatory IE missing
    case Errc::kTooManyIes: return 199;             // No resources available
    case Errc::kTruncatedHeader:
    case Errc::kUnsupportedVersion:
    case Errc::kUnknownMessageType:
    case Errc::kBufferTooSmall:
    case Errc::kInvalidArgument: return 0;
  }
  return 0;
}

}  // namespace gtpcp::gtp
