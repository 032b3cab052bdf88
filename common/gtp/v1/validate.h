// Message-level checks of GTPv1-C: mandatory IEs (TS 29.060 §11.1.5-7).
#pragma once

#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1/message.h"

namespace gtpcp::gtp::v1 {

// Checks that every IE TS 29.060 marks "Mandatory" for this message is present
// (a type listed twice needs two instances) and well formed. `sender` picks
// the row of messages whose mandatory IEs depend on who sends them (Update PDP
// Context Request/Response); kAny checks the IEs mandatory either way.
// A response whose Cause is a rejection (192 and up) needs only its Cause.
// Errors: kMandatoryIeMissing / kMandatoryIeIncorrect naming the IE type.
Result<void> checkMandatory(const Message& message, Sender sender = Sender::kAny) noexcept;

// Checks one IE's value with its typed view, where one exists.
Result<void> checkIeValue(uint8_t type, std::span<const uint8_t> value) noexcept;

}  // namespace gtpcp::gtp::v1
