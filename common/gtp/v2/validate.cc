#include "common/gtp/v2/validate.h"

#include "common/gtp/v2/ies.h"

namespace gtpcp::gtp::v2 {

namespace {

template <class T>
Result<void> decodes(std::span<const uint8_t> value) noexcept {
  auto r = T::decode(value);
  if (!r) return tl::unexpected(r.error());
  return {};
}

Result<void> checkGroup(const Message& m, const Ie& parent, const MandatoryRule& rule,
                        const MandatoryIe& entry) noexcept;

Result<void> checkOne(const Message& m, const Ie& ie, const MandatoryRule& rule,
                      const MandatoryIe& entry) noexcept {
  if (auto ok = checkIeValue(ie.type, m.value(ie)); !ok)
    return fail(Errc::kMandatoryIeIncorrect, ie.type, ie.instance(), ie.offset);
  if (entry.child_count != 0) return checkGroup(m, ie, rule, entry);
  return {};
}

Result<void> checkGroup(const Message& m, const Ie& parent, const MandatoryRule& rule,
                        const MandatoryIe& entry) noexcept {
  for (std::size_t c = 0; c < entry.child_count; ++c) {
    const MandatoryIe& child = rule.all[entry.child_begin + c];
    bool found = false;
    for (const Ie& ie : m.children(parent)) {
      if (ie.type != child.type || ie.instance() != child.instance) continue;
      found = true;
      if (auto ok = checkOne(m, ie, rule, child); !ok) return ok;
    }
    if (!found) return fail(Errc::kMandatoryIeMissing, child.type, child.instance, parent.offset);
  }
  return {};
}

}  // namespace

Result<void> checkIeValue(uint8_t type, std::span<const uint8_t> value) noexcept {
  if (value.size() < ieTypeInfo(type).min_length) return fail(Errc::kIeTooShort, type);
  switch (static_cast<IeType>(type)) {
    case IeType::kImsi: return decodes<Imsi>(value);
    case IeType::kMsisdn: return decodes<Msisdn>(value);
    case IeType::kMei: return decodes<Mei>(value);
    case IeType::kApn: return decodes<Apn>(value);
    case IeType::kServingNetwork: return decodes<ServingNetwork>(value);
    case IeType::kUli: return decodes<Uli>(value);
    case IeType::kFTeid: return decodes<FTeid>(value);
    case IeType::kCause: return decodes<CauseIe>(value);
    case IeType::kAmbr: return decodes<Ambr>(value);
    case IeType::kPaa: return decodes<Paa>(value);
    case IeType::kBearerQos: return decodes<BearerQos>(value);
    case IeType::kFqCsid: return decodes<FqCsid>(value);
    case IeType::kIpAddress: return decodes<IpAddress>(value);
    default: return {};
  }
}

Result<void> checkMandatory(const Message& message) noexcept {
  const MandatoryRule* rule = mandatoryRule(message.header().message_type);
  if (rule == nullptr) return {};
  // A response that rejects the request carries the Cause and little else:
  // TS 29.274 §7.7.1 applies the IE checks to requests and to responses
  // "without a rejection Cause value" (Table 8.4-1: 64..239; 240..255 are
  // kept for requests, so a response carrying one is checked).
  if (messageTypeInfo(message.header().message_type).role == MessageRole::kResponse) {
    const Ie* cause = message.find(IeType::kCause);
    if (cause != nullptr) {
      auto c = CauseIe::decode(message.value(*cause));
      if (!c) return fail(Errc::kMandatoryIeIncorrect, cause->type, cause->instance(), cause->offset);
      if (causeRejected(c->value)) return {};
    }
  }
  for (const MandatoryIe& entry : rule->top) {
    bool found = false;
    for (const Ie& ie : message.topLevel()) {
      if (ie.type != entry.type || ie.instance() != entry.instance) continue;
      found = true;
      if (auto ok = checkOne(message, ie, *rule, entry); !ok) return ok;
    }
    if (!found) return fail(Errc::kMandatoryIeMissing, entry.type, entry.instance);
  }
  return {};
}

}  // namespace gtpcp::gtp::v2
