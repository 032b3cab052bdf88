// Message-level checks of GTPv2-C: mandatory IEs (TS 29.274 §7.7.6) and the
// well-formedness of IEs whose contents the proxy relies on.
#pragma once

#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::gtp::v2 {

// Checks that every IE the message's table in TS 29.274 §7 marks "M" is
// present, and that each present instance of one is well formed (at least its
// type's minimum length, and decodable by its typed view). Grouped mandatory
// IEs are checked for their own mandatory children, in every occurrence.
// Messages without a rule in common/gtp/tables/v2_mandatory.tsv pass. A
// response whose Cause is a rejection (64 and up) needs only its Cause.
//
// Errors: kMandatoryIeMissing or kMandatoryIeIncorrect, naming the IE type and
// instance (the Cause IE's offending IE in the rejection).
Result<void> checkMandatory(const Message& message) noexcept;

// Checks one IE's value against its type: minimum length, and the typed view
// when the type has one. kIeTooShort / kIeInvalidValue on failure.
Result<void> checkIeValue(uint8_t type, std::span<const uint8_t> value) noexcept;

}  // namespace gtpcp::gtp::v2
