// Typed views of GTPv2-C IE values (TS 29.274 §8).
//
// The contract is views.h's: `kType`, `static Result<T> decode(value)`,
// `encodedSize()` and `encode(out)`, so Builder::add() and read() work on any
// of them. The IEs that GTPv1-C encodes alike are views.h's templates, named
// here; the ones below them are GTPv2's own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/values.h"
#include "common/gtp/views.h"

namespace gtpcp::gtp::v2 {

// 8.3 International Mobile Subscriber Identity (IMSI): TBCD digits, at most 8
// octets. (GTPv1's is a fixed 8-octet TV field: v1::Imsi.)
using Imsi = TbcdDigits<IeType::kImsi, 8>;
// 8.11 MSISDN: TBCD digits alone. (GTPv1's starts with an address-type
// octet: v1::Msisdn.)
using Msisdn = TbcdDigits<IeType::kMsisdn, 16>;
// 8.10 Mobile Equipment Identity (MEI): IMEI or IMEISV, TBCD digits.
using Mei = TbcdDigits<IeType::kMei, 8>;

// 8.6 Access Point Name (APN): label encoded on the wire, dotted here.
using Apn = ApnLabels<IeType::kApn>;

// 8.5 Recovery (Restart Counter).
using Recovery = Octet<IeType::kRecovery>;
// 8.17 RAT Type: 1 UTRAN, 2 GERAN, 3 WLAN, 4 GAN, 5 HSPA Evolution, 6 EUTRAN, ...
using RatType = Octet<IeType::kRatType>;
// 8.57 APN Restriction.
using ApnRestriction = Octet<IeType::kApnRestriction>;
// 8.65 Node Type: 0 MME, 1 SGSN.
using NodeType = Octet<IeType::kNodeType>;

// 8.8 EPS Bearer ID: low 4 bits of the first octet.
using Ebi = LowBits<IeType::kEbi, 0x0f>;
// 8.34 PDN Type: 1 IPv4, 2 IPv6, 3 IPv4v6, 4 Non-IP, 5 Ethernet (low 3 bits).
using PdnType = LowBits<IeType::kPdnType, 0x07>;
// 8.58 Selection Mode (low 2 bits; spare bits 0, unlike GTPv1's).
using SelectionMode = LowBits<IeType::kSelectionMode, 0x03>;

// 8.29 Charging ID.
using ChargingId = Uint32<IeType::kChargingId>;
// 8.30 Charging Characteristics (TS 32.251 Annex A: 16 bits).
using ChargingCharacteristics = Uint16<IeType::kChargingCharacteristics>;
// 8.63 Port Number.
using PortNumber = Uint16<IeType::kPortNumber>;

// 8.18 Serving Network.
struct ServingNetwork {
  static constexpr IeType kType = IeType::kServingNetwork;
  Plmn plmn;
  static Result<ServingNetwork> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 3; }
  void encode(uint8_t* out) const noexcept { encodePlmn(plmn, out); }
};

// 8.21 User Location Information: the flags octet says which parts follow,
// in this order.
struct Uli {
  static constexpr IeType kType = IeType::kUli;
  struct Cgi { Plmn plmn; uint16_t lac = 0; uint16_t ci = 0; };
  struct Sai { Plmn plmn; uint16_t lac = 0; uint16_t sac = 0; };
  struct Rai { Plmn plmn; uint16_t lac = 0; uint8_t rac = 0; };
  struct Tai { Plmn plmn; uint16_t tac = 0; };
  struct Ecgi { Plmn plmn; uint32_t eci = 0; };        // 28 bits
  struct Lai { Plmn plmn; uint16_t lac = 0; };
  struct MacroEnb { Plmn plmn; uint32_t id = 0; };     // 20 bits
  struct ExtendedMacroEnb { Plmn plmn; bool smenb = false; uint32_t id = 0; };  // 21 bits
  std::optional<Cgi> cgi;
  std::optional<Sai> sai;
  std::optional<Rai> rai;
  std::optional<Tai> tai;
  std::optional<Ecgi> ecgi;
  std::optional<Lai> lai;
  std::optional<MacroEnb> macro_enb;
  std::optional<ExtendedMacroEnb> extended_macro_enb;
  static Result<Uli> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept;
  void encode(uint8_t* out) const noexcept;
};

// 8.22 Fully Qualified TEID (F-TEID).
struct FTeid {
  static constexpr IeType kType = IeType::kFTeid;
  uint8_t interface_type = 0;  // 6 bits
  uint32_t teid = 0;           // TEID or GRE key
  std::optional<Ipv4> ipv4;
  std::optional<Ipv6> ipv6;
  static Result<FTeid> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 5u + (ipv4 ? 4 : 0) + (ipv6 ? 16 : 0); }
  void encode(uint8_t* out) const noexcept;
};

// 8.4 Cause, with the PCE/BCE/CS flags and the offending IE of a rejection.
struct CauseIe {
  static constexpr IeType kType = IeType::kCause;
  struct OffendingIe { uint8_t type = 0; uint8_t instance = 0; };
  uint8_t value = 0;
  bool pce = false;  // PDN Connection IE Error
  bool bce = false;  // Bearer Context IE Error
  bool cs = false;   // Cause Source: 1 = originated by the remote node
  std::optional<OffendingIe> offending_ie;
  static Result<CauseIe> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return offending_ie ? 6 : 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.7 Aggregate Maximum Bit Rate (AMBR), kbps.
struct Ambr {
  static constexpr IeType kType = IeType::kAmbr;
  uint32_t uplink = 0;
  uint32_t downlink = 0;
  static Result<Ambr> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 8; }
  void encode(uint8_t* out) const noexcept;
};

// 8.14 PDN Address Allocation (PAA).
struct Paa {
  static constexpr IeType kType = IeType::kPaa;
  uint8_t pdn_type = 0;
  std::optional<Ipv4> ipv4;
  uint8_t ipv6_prefix_length = 0;
  std::optional<Ipv6> ipv6;
  static Result<Paa> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept;
  void encode(uint8_t* out) const noexcept;
};

// 8.12 Indication: flag octets; the number grows with each release.
struct Indication {
  static constexpr IeType kType = IeType::kIndication;
  std::array<uint8_t, 16> octets{};
  uint8_t size = 0;
  // Octet `octet` (5 = the first value octet, as the spec numbers them), bit 1..8.
  bool flag(std::size_t octet, unsigned bit) const noexcept {
    const std::size_t i = octet - 5;
    return i < size && ((octets[i] >> (bit - 1)) & 1);
  }
  static Result<Indication> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return size; }
  void encode(uint8_t* out) const noexcept;
};

// 8.15 Bearer Level Quality of Service (Bearer QoS); bit rates in kbps.
struct BearerQos {
  static constexpr IeType kType = IeType::kBearerQos;
  bool pci = false;  // pre-emption capability (1 = disabled)
  uint8_t pl = 0;    // priority level, 4 bits
  bool pvi = false;  // pre-emption vulnerability (1 = disabled)
  uint8_t qci = 0;
  uint64_t mbr_uplink = 0, mbr_downlink = 0, gbr_uplink = 0, gbr_downlink = 0;  // 40 bits
  static Result<BearerQos> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 22; }
  void encode(uint8_t* out) const noexcept;
};

// 8.44 UE Time Zone.
using UeTimeZone = TimeZone<IeType::kUeTimeZone>;

// 8.9 IP Address: IPv4 (4 octets) or IPv6 (16).
using IpAddress = Address<IeType::kIpAddress>;

// 8.62 Fully Qualified PDN Connection Set Identifier (FQ-CSID).
struct FqCsid {
  static constexpr IeType kType = IeType::kFqCsid;
  static constexpr std::size_t kMaxCsids = 15;
  uint8_t node_id_type = 0;  // 0 IPv4, 1 IPv6, 2 MCC/MNC-based 32-bit value
  std::optional<Ipv4> ipv4;
  std::optional<Ipv6> ipv6;
  uint32_t node_id = 0;      // node_id_type 2
  uint8_t csid_count = 0;
  std::array<uint16_t, kMaxCsids> csids{};
  static Result<FqCsid> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept;
  void encode(uint8_t* out) const noexcept;
};

// Octets the proxy never interprets, only carries: PCO (8.13), APCO (8.74),
// ePCO (8.128). The view points into the datagram.
using Pco = Opaque<IeType::kPco>;
using Apco = Opaque<IeType::kApco>;
using Epco = Opaque<IeType::kEpco>;

// 8.67 Private Extension: Enterprise ID and a proprietary value.
struct EnterpriseId {
  uint16_t enterprise_id = 0;
};
using PrivateExtension =
    PrivateExtensionOf<IeType::kPrivateExtension, EnterpriseId, &EnterpriseId::enterprise_id>;

// read<T>(message, ie): `ie` of `message` as T (views.h).
using gtp::read;

// Finds the first top-level IE of T's type and `instance` and reads it.
// Fails with kMandatoryIeMissing when absent (callers that treat the IE as
// optional check find() first).
template <class T>
Result<T> readFirst(const Message& message, uint8_t instance = 0) noexcept {
  return readFound<T>(message, message.find(T::kType, instance), instance);
}

}  // namespace gtpcp::gtp::v2
