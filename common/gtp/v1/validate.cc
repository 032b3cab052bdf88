#include "common/gtp/v1/validate.h"

#include "common/gtp/v1/ies.h"

namespace gtpcp::gtp::v1 {

namespace {
template <class T>
Result<void> decodes(std::span<const uint8_t> value) noexcept {
  auto r = T::decode(value);
  if (!r) return tl::unexpected(r.error());
  return {};
}
}  // namespace

Result<void> checkIeValue(uint8_t type, std::span<const uint8_t> value) noexcept {
  switch (static_cast<IeType>(type)) {
    case IeType::kImsi: return decodes<Imsi>(value);
    case IeType::kRai: return decodes<Rai>(value);
    case IeType::kEndUserAddress: return decodes<EndUserAddress>(value);
    case IeType::kApn: return decodes<Apn>(value);
    case IeType::kGsnAddress: return decodes<GsnAddress>(value);
    case IeType::kMsisdn: return decodes<Msisdn>(value);
    case IeType::kQosProfile: return decodes<QosProfile>(value);
    case IeType::kUli: return decodes<Uli>(value);
    case IeType::kImeiSv: return decodes<ImeiSv>(value);
    case IeType::kCause: return decodes<CauseIe>(value);
    case IeType::kTlli: return decodes<Tlli>(value);
    case IeType::kPTmsi: return decodes<PTmsi>(value);
    case IeType::kReorderingRequired: return decodes<ReorderingRequired>(value);
    case IeType::kRecovery: return decodes<Recovery>(value);
    case IeType::kSelectionMode: return decodes<SelectionMode>(value);
    case IeType::kTeidDataI: return decodes<TeidDataI>(value);
    case IeType::kTeidControlPlane: return decodes<TeidControlPlane>(value);
    case IeType::kTeidDataII: return decodes<TeidDataII>(value);
    case IeType::kTeardownInd: return decodes<TeardownInd>(value);
    case IeType::kNsapi: return decodes<Nsapi>(value);
    case IeType::kChargingCharacteristics: return decodes<ChargingCharacteristics>(value);
    case IeType::kTraceReference: return decodes<TraceReference>(value);
    case IeType::kTraceType: return decodes<TraceType>(value);
    case IeType::kChargingId: return decodes<ChargingId>(value);
    case IeType::kCommonFlags: return decodes<CommonFlags>(value);
    case IeType::kApnRestriction: return decodes<ApnRestriction>(value);
    case IeType::kRatType: return decodes<RatType>(value);
    case IeType::kMsTimeZone: return decodes<MsTimeZone>(value);
    case IeType::kChargingGatewayAddress: return decodes<ChargingGatewayAddress>(value);
    case IeType::kPrivateExtension: return decodes<PrivateExtension>(value);
    default: return {};
  }
}

Result<void> checkMandatory(const Message& message, Sender sender) noexcept {
  const MandatoryRule* rule = mandatoryRule(message.header().message_type, sender);
  if (rule == nullptr) return {};
  // A rejection (TS 29.060 §7.7.1) carries only the Cause and what the
  // message table makes conditional on it.
  if (messageTypeInfo(message.header().message_type).role == MessageRole::kResponse) {
    const Ie* cause = message.find(IeType::kCause);
    if (cause != nullptr && causeRejected(message.value(*cause)[0])) return {};
  }
  const auto& types = rule->types;
  for (std::size_t i = 0; i < types.size(); ++i) {
    // A type listed k times needs k instances; check the one this entry names.
    std::size_t nth = 0;
    for (std::size_t j = 0; j < i; ++j) nth += types[j] == types[i];
    const Ie* ie = message.find(static_cast<IeType>(types[i]), nth);
    if (ie == nullptr) return fail(Errc::kMandatoryIeMissing, types[i]);
    if (auto ok = checkIeValue(ie->type, message.value(*ie)); !ok)
      return fail(Errc::kMandatoryIeIncorrect, ie->type, 0, ie->offset);
  }
  return {};
}

}  // namespace gtpcp::gtp::v1
