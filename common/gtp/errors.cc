#include "common/gtp/errors.h"

#include <cstdio>

#include "common/gtp/v1_tables.gen.h"
#include "common/gtp/v2_tables.gen.h"

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

namespace {

template <class CauseEnum>
constexpr uint8_t cause(CauseEnum c) noexcept {
  return static_cast<uint8_t>(c);
}

// The Cause of each version for an error, 0 where none is sent (v2Cause()).
struct Causes {
  uint8_t v2 = 0;
  uint8_t v1 = 0;
};

constexpr Causes causesOf(Errc code) noexcept {
  switch (code) {
    case Errc::kOk: return {cause(v2::Cause::kRequestAccepted), cause(v1::Cause::kRequestAccepted)};
    case Errc::kInvalidLength:
    case Errc::kIeTruncated: return {cause(v2::Cause::kInvalidLength), cause(v1::Cause::kInvalidMessageFormat)};
    case Errc::kInvalidPiggyback:
    case Errc::kGroupingTooDeep:
      return {cause(v2::Cause::kInvalidMessageFormat), cause(v1::Cause::kInvalidMessageFormat)};
    case Errc::kIeTooShort:
    case Errc::kIeInvalidValue:
    case Errc::kMandatoryIeIncorrect:
      return {cause(v2::Cause::kMandatoryIeIncorrect), cause(v1::Cause::kMandatoryIeIncorrect)};
    case Errc::kMandatoryIeMissing:
      return {cause(v2::Cause::kMandatoryIeMissing), cause(v1::Cause::kMandatoryIeMissing)};
    case Errc::kTooManyIes:
      return {cause(v2::Cause::kNoResourcesAvailable), cause(v1::Cause::kNoResourcesAvailable)};
    // GTPv1 only: GTPv2 has neither TV IEs nor extension headers.
    case Errc::kUnknownTvIe:
    case Errc::kInvalidExtensionHeader: return {0, cause(v1::Cause::kInvalidMessageFormat)};
    case Errc::kTruncatedHeader:
    case Errc::kUnsupportedVersion:
    case Errc::kUnknownMessageType:
    case Errc::kBufferTooSmall:
    case Errc::kInvalidArgument: return {};
  }
  return {};
}

}  // namespace

uint8_t v2Cause(Errc code) noexcept { return causesOf(code).v2; }
uint8_t v1Cause(Errc code) noexcept { return causesOf(code).v1; }

}  // namespace gtpcp::gtp
