// Typed views of GTPv1-C IE values (TS 29.060 §7.7).
//
// The contract is views.h's: `kType`, `static Result<T> decode(value)`,
// `encodedSize()`, `encode(out)`. TV types must encode exactly their table
// length; decode() of a TV type is given exactly that many octets. The IEs
// that GTPv2-C encodes alike are views.h's templates, named here; the ones
// below them are GTPv1's own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/values.h"
#include "common/gtp/views.h"

namespace gtpcp::gtp::v1 {

// 7.7.1 Cause.
using Cause1 = Octet<IeType::kCause>;
// 7.7.11 Recovery (restart counter).
using Recovery = Octet<IeType::kRecovery>;
// 7.7.50 RAT Type (TLV, one octet): 1 UTRAN, 2 GERAN, 3 WLAN, 4 GAN, 5 HSPA Evolution, 6 EUTRAN.
using RatType = Octet<IeType::kRatType>;
// 7.7.48 Common Flags: one octet of flags.
using CommonFlags = Octet<IeType::kCommonFlags>;
// 7.7.49 APN Restriction.
using ApnRestriction = Octet<IeType::kApnRestriction>;
// 7.7.5 TLLI, 7.7.5 P-TMSI: 4 octets.
using Tlli = Uint32<IeType::kTlli>;
using PTmsi = Uint32<IeType::kPTmsi>;
// 7.7.13 TEID Data I, 7.7.14 TEID Control Plane.
using TeidDataI = Uint32<IeType::kTeidDataI>;
using TeidControlPlane = Uint32<IeType::kTeidControlPlane>;
// 7.7.26 Charging ID.
using ChargingId = Uint32<IeType::kChargingId>;
// 7.7.23 Charging Characteristics, 7.7.24 Trace Reference, 7.7.25 Trace Type.
using ChargingCharacteristics = Uint16<IeType::kChargingCharacteristics>;
using TraceReference = Uint16<IeType::kTraceReference>;
using TraceType = Uint16<IeType::kTraceType>;

// The cause of TS 29.060 §7.7.1 (named apart from the generated Cause enum).
using CauseIe = Cause1;

// 7.7.6 Reordering Required, 7.7.16 Teardown Ind: one flag in bit 1.
template <IeType T>
struct Flag {
  static constexpr IeType kType = T;
  bool value = false;
  static Result<Flag> decode(std::span<const uint8_t> v) noexcept {
    if (v.empty()) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    return Flag{static_cast<bool>(v[0] & 0x01)};
  }
  std::size_t encodedSize() const noexcept { return 1; }
  // Spare bits are sent as 1s (TS 29.060 §7.7.6, §7.7.16).
  void encode(uint8_t* out) const noexcept { out[0] = static_cast<uint8_t>(0xfe | (value ? 1 : 0)); }
};
using ReorderingRequired = Flag<IeType::kReorderingRequired>;
using TeardownInd = Flag<IeType::kTeardownInd>;

// 7.7.12 Selection Mode: low 2 bits, spare bits 1s (GTPv2's are 0s).
using SelectionMode = LowBits<IeType::kSelectionMode, 0x03, 0xfc>;

// 7.7.17 NSAPI: low 4 bits.
using Nsapi = LowBits<IeType::kNsapi, 0x0f>;

// 7.7.15 TEID Data II: NSAPI and TEID.
struct TeidDataII {
  static constexpr IeType kType = IeType::kTeidDataII;
  uint8_t nsapi = 0;
  uint32_t teid = 0;
  static Result<TeidDataII> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 5; }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.2 IMSI: TV, TBCD in 8 octets padded with 0xF, at least one digit.
// (GTPv2's is a TLV as long as its digits: v2::Imsi.)
using Imsi = PaddedTbcdDigits<IeType::kImsi, 8, 1>;

// 7.7.53 IMEI(SV): TBCD in 8 octets, padded with 0xF.
using ImeiSv = PaddedTbcdDigits<IeType::kImeiSv, 8>;

// 7.7.33 MSISDN: an AddressString (TS 29.002): nature of address and
// numbering plan octet (0x91: international, E.164), then TBCD digits.
// Not views.h's TbcdDigits, which GTPv2's MSISDN (8.11) is: that one has no
// such octet, its value is the digits alone.
struct Msisdn {
  static constexpr IeType kType = IeType::kMsisdn;
  uint8_t address_type = 0x91;
  Digits digits;
  static Result<Msisdn> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 1 + (digits.size + 1u) / 2; }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.3 Routeing Area Identity: PLMN, LAC, RAC.
struct Rai {
  static constexpr IeType kType = IeType::kRai;
  Plmn plmn;
  uint16_t lac = 0;
  uint8_t rac = 0;
  static Result<Rai> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 6; }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.27 End User Address: PDP type organisation and number, then the address.
struct EndUserAddress {
  static constexpr IeType kType = IeType::kEndUserAddress;
  uint8_t pdp_type_organization = 1;  // 0 ETSI (PPP), 1 IETF
  uint8_t pdp_type_number = 0x21;     // 0x21 IPv4, 0x57 IPv6, 0x8d IPv4v6
  std::optional<Ipv4> ipv4;
  std::optional<Ipv6> ipv6;
  static Result<EndUserAddress> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 2u + (ipv4 ? 4 : 0) + (ipv6 ? 16 : 0); }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.30 Access Point Name.
using Apn = ApnLabels<IeType::kApn>;

// 7.7.32 GSN Address and 7.7.44 Charging Gateway Address: IPv4 or IPv6.
using GsnAddress = Address<IeType::kGsnAddress>;
using ChargingGatewayAddress = Address<IeType::kChargingGatewayAddress>;

// 7.7.34 Quality of Service Profile: allocation/retention priority, then the
// QoS octets of TS 24.008 §10.5.6.5 from octet 3 on (kept as they are).
struct QosProfile {
  static constexpr IeType kType = IeType::kQosProfile;
  uint8_t allocation_retention_priority = 0;
  std::span<const uint8_t> qos;
  static Result<QosProfile> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 1 + qos.size(); }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.51 User Location Information: geographic location type (0 CGI, 1 SAI,
// 2 RAI) and the location: PLMN, LAC and CI / SAC / RAC. (GTPv2's ULI, 8.21,
// is a flags octet and any set of parts: v2::Uli.)
struct Uli {
  static constexpr IeType kType = IeType::kUli;
  uint8_t geographic_location_type = 0;
  Plmn plmn;
  uint16_t lac = 0;
  uint16_t ci_sac_rac = 0;  // for a RAI, the RAC in the high octet
  static Result<Uli> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 8; }
  void encode(uint8_t* out) const noexcept;
};

// 7.7.52 MS Time Zone.
using MsTimeZone = TimeZone<IeType::kMsTimeZone>;

// Octets carried and never interpreted: PCO (7.7.31), TFT (7.7.36).
using Pco = Opaque<IeType::kPco>;
using Tft = Opaque<IeType::kTft>;

// 7.7.46 Private Extension: Extension Identifier (an enterprise number) and
// a proprietary value.
struct ExtensionIdentifier {
  uint16_t extension_identifier = 0;
};
using PrivateExtension = PrivateExtensionOf<IeType::kPrivateExtension, ExtensionIdentifier,
                                            &ExtensionIdentifier::extension_identifier>;

// read<T>(message, ie): `ie` of `message` as T (views.h; GTPv1 IEs have no
// instance, errors name instance 0).
using gtp::read;

// Finds the `n`th (0-based) IE of T's type and reads it: GTPv1 tells
// repeated IEs apart by their order. Fails with kMandatoryIeMissing when
// there are not that many.
template <class T>
Result<T> readNth(const Message& message, std::size_t n = 0) noexcept {
  return readFound<T>(message, message.find(T::kType, n), 0);
}

}  // namespace gtpcp::gtp::v1
