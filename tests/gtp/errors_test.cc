// The codec's error values: their stable names (metric labels, gtpc-decode
// JSON) and the Cause each one is answered with.
//
// Cause numbers are checked twice: as literals from the specification tables
// (TS 29.274 Table 8.4-1, TS 29.060 Table 38), and by name through the
// generated tables, whose names the vector tests compare with tshark's.
#include "common/gtp/errors.h"

#include <gtest/gtest.h>

#include <string>

#include "common/gtp/v1_tables.gen.h"
#include "common/gtp/v2_tables.gen.h"

namespace gtpcp::gtp {
namespace {

struct Mapping {
  Errc code;
  const char* name;
  uint8_t v2_cause;  // 0: drop, or Version Not Supported Indication
  uint8_t v1_cause;  // 0: drop, or Version Not Supported
  const char* why;
};

// One row per Errc, in enum order.
const Mapping kMappings[] = {
    {Errc::kOk, "ok", 16, 128, "Request accepted (8.4-1: 16; Table 38: 128)"},
    {Errc::kTruncatedHeader, "truncated_header", 0, 0,
     "no header to answer to: the sequence number is unknown, so the datagram is dropped"},
    {Errc::kUnsupportedVersion, "unsupported_version", 0, 0,
     "answered by a Version Not Supported message (29.274 §7.1.3, 29.060 §7.2.3), not a Cause"},
    {Errc::kInvalidLength, "invalid_length", 67, 193,
     "v2: 'Invalid length' (29.274 §7.7.3); v1 has no such Cause: 'Invalid message format'"},
    {Errc::kUnknownMessageType, "unknown_message_type", 0, 0,
     "silently discarded (29.274 §7.7.4, 29.060 §11.1.4)"},
    {Errc::kIeTruncated, "ie_truncated", 67, 193,
     "an IE Length past its container is an invalid length (v2) / invalid format (v1)"},
    {Errc::kIeTooShort, "ie_too_short", 69, 201, "Mandatory IE incorrect"},
    {Errc::kIeInvalidValue, "ie_invalid_value", 69, 201, "Mandatory IE incorrect"},
    {Errc::kUnknownTvIe, "unknown_tv_ie", 0, 193,
     "GTPv1 only: the rest of the message cannot be parsed: Invalid message format"},
    {Errc::kTooManyIes, "too_many_ies", 73, 199, "No resources available (the decoder's capacity)"},
    {Errc::kGroupingTooDeep, "grouping_too_deep", 65, 193, "Invalid Message Format"},
    {Errc::kInvalidPiggyback, "invalid_piggyback", 65, 193, "Invalid Message Format"},
    {Errc::kInvalidExtensionHeader, "invalid_extension_header", 0, 193,
     "GTPv1 only (GTPv2 has no extension headers): Invalid message format"},
    {Errc::kMandatoryIeMissing, "mandatory_ie_missing", 70, 202, "Mandatory IE missing"},
    {Errc::kMandatoryIeIncorrect, "mandatory_ie_incorrect", 69, 201, "Mandatory IE incorrect"},
    {Errc::kBufferTooSmall, "buffer_too_small", 0, 0, "an encoding error: never sent to a peer"},
    {Errc::kInvalidArgument, "invalid_argument", 0, 0, "an encoding error: never sent to a peer"},
};

TEST(GtpErrors, TableCoversEveryErrc) {
  ASSERT_EQ(std::size(kMappings), static_cast<std::size_t>(Errc::kInvalidArgument) + 1);
  for (std::size_t i = 0; i < std::size(kMappings); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kMappings[i].code), i) << kMappings[i].name;
  }
}

TEST(GtpErrors, NamesAreStable) {
  for (const auto& m : kMappings) EXPECT_EQ(errcName(m.code), m.name);
}

TEST(GtpErrors, EachErrcMapsToItsV2Cause) {
  for (const auto& m : kMappings) {
    EXPECT_EQ(v2Cause(m.code), m.v2_cause) << m.name << ": " << m.why;
  }
}

TEST(GtpErrors, EachErrcMapsToItsV1Cause) {
  for (const auto& m : kMappings) {
    EXPECT_EQ(v1Cause(m.code), m.v1_cause) << m.name << ": " << m.why;
  }
}

// The same mapping read by name: an off-by-one between "Mandatory IE
// incorrect" (69) and "Mandatory IE missing" (70) shows here.
TEST(GtpErrors, V2CausesAreTheNamedOnes) {
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kOk)), "Request accepted");
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kInvalidLength)), "Invalid length");
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kGroupingTooDeep)), "Invalid Message Format");
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kMandatoryIeIncorrect)), "Mandatory IE incorrect");
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kMandatoryIeMissing)), "Mandatory IE missing");
  EXPECT_EQ(v2::causeName(v2Cause(Errc::kTooManyIes)), "No resources available");
  EXPECT_EQ(v2Cause(Errc::kMandatoryIeMissing),
            static_cast<uint8_t>(v2::Cause::kMandatoryIeMissing));
  EXPECT_EQ(v2Cause(Errc::kMandatoryIeIncorrect),
            static_cast<uint8_t>(v2::Cause::kMandatoryIeIncorrect));
}

TEST(GtpErrors, V1CausesAreTheNamedOnes) {
  EXPECT_EQ(v1::causeName(v1Cause(Errc::kOk)), "Request accepted");
  EXPECT_EQ(v1::causeName(v1Cause(Errc::kInvalidLength)), "Invalid message format");
  EXPECT_EQ(v1::causeName(v1Cause(Errc::kMandatoryIeIncorrect)), "Mandatory IE incorrect");
  EXPECT_EQ(v1::causeName(v1Cause(Errc::kMandatoryIeMissing)), "Mandatory IE missing");
  EXPECT_EQ(v1::causeName(v1Cause(Errc::kTooManyIes)), "No resources available");
}

TEST(GtpErrors, DescribeNamesTheIeAndOffset) {
  EXPECT_EQ(describe(Error{Errc::kIeTruncated, 87, 1, 40}),
            "IE 87 instance 1 at offset 40: runs past the end of its container");
  EXPECT_EQ(describe(Error{Errc::kInvalidLength, 0, 0, 2}),
            "at offset 2: header Length inconsistent with the datagram size");
}

}  // namespace
}  // namespace gtpcp::gtp
