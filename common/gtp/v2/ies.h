// Typed views of GTPv2-C IE values (TS 29.274 §8).
//
// Each type decodes from an IE's value octets (Message::value()) and encodes
// back to them. decode() checks the octets against the clause's layout and
// returns an error value, never throws, and accepts values longer than the
// fixed part (extendable IEs: later releases append fields). Types that hold
// a std::span (Pco, PrivateExtension...) point into the datagram they were
// decoded from.
//
// Every type has `kType`, `static Result<T> decode(value)`, `encodedSize()` and
// `encode(out)` (out must hold encodedSize() octets), so Builder::add() and
// read() work on any of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/gtp/errors.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/values.h"

namespace gtpcp::gtp::v2 {

// 8.3 International Mobile Subscriber Identity (IMSI): TBCD digits.
struct Imsi {
  static constexpr IeType kType = IeType::kImsi;
  Digits digits;
  static Result<Imsi> decode(std::span<const uint8_t> value) noexcept;
  std::size_t encodedSize() const noexcept { return (digits.size + 1u) / 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.11 MSISDN: TBCD digits.
struct Msisdn {
  static constexpr IeType kType = IeType::kMsisdn;
  Digits digits;
  static Result<Msisdn> decode(std::span<const uint8_t> value) noexcept;
  std::size_t encodedSize() const noexcept { return (digits.size + 1u) / 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.10 Mobile Equipment Identity (MEI): IMEI or IMEISV, TBCD digits.
struct Mei {
  static constexpr IeType kType = IeType::kMei;
  Digits digits;
  static Result<Mei> decode(std::span<const uint8_t> value) noexcept;
  std::size_t encodedSize() const noexcept { return (digits.size + 1u) / 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.6 Access Point Name (APN): label encoded on the wire, dotted here.
struct Apn {
  static constexpr IeType kType = IeType::kApn;
  ApnText text;
  static Result<Apn> decode(std::span<const uint8_t> value) noexcept;
  std::size_t encodedSize() const noexcept { return text.size == 0 ? 0 : text.size + 1u; }
  void encode(uint8_t* out) const noexcept;
};

// A one-octet value IE.
template <IeType T>
struct Octet {
  static constexpr IeType kType = T;
  uint8_t value = 0;
  static Result<Octet> decode(std::span<const uint8_t> v) noexcept {
    if (v.empty()) return fail(Errc::kIeTooShort, static_cast<uint8_t>(T));
    return Octet{v[0]};
  }
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = value; }
};

// 8.5 Recovery (Restart Counter).
using Recovery = Octet<IeType::kRecovery>;
// 8.17 RAT Type: 1 UTRAN, 2 GERAN, 3 WLAN, 4 GAN, 5 HSPA Evolution, 6 EUTRAN, ...
using RatType = Octet<IeType::kRatType>;
// 8.57 APN Restriction.
using ApnRestriction = Octet<IeType::kApnRestriction>;
// 8.65 Node Type: 0 MME, 1 SGSN.
using NodeType = Octet<IeType::kNodeType>;

// 8.8 EPS Bearer ID: low 4 bits of the first octet.
struct Ebi {
  static constexpr IeType kType = IeType::kEbi;
  uint8_t value = 0;
  static Result<Ebi> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = value & 0x0f; }
};

// 8.34 PDN Type: 1 IPv4, 2 IPv6, 3 IPv4v6, 4 Non-IP, 5 Ethernet (low 3 bits).
struct PdnType {
  static constexpr IeType kType = IeType::kPdnType;
  uint8_t value = 0;
  static Result<PdnType> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = value & 0x07; }
};

// 8.58 Selection Mode (low 2 bits).
struct SelectionMode {
  static constexpr IeType kType = IeType::kSelectionMode;
  uint8_t value = 0;
  static Result<SelectionMode> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 1; }
  void encode(uint8_t* out) const noexcept { out[0] = value & 0x03; }
};

// 8.29 Charging ID.
struct ChargingId {
  static constexpr IeType kType = IeType::kChargingId;
  uint32_t value = 0;
  static Result<ChargingId> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 4; }
  void encode(uint8_t* out) const noexcept;
};

// 8.30 Charging Characteristics (TS 32.251 Annex A: 16 bits).
struct ChargingCharacteristics {
  static constexpr IeType kType = IeType::kChargingCharacteristics;
  uint16_t value = 0;
  static Result<ChargingCharacteristics> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.63 Port Number.
struct PortNumber {
  static constexpr IeType kType = IeType::kPortNumber;
  uint16_t value = 0;
  static Result<PortNumber> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 2; }
  void encode(uint8_t* out) const noexcept;
};

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
struct UeTimeZone {
  static constexpr IeType kType = IeType::kUeTimeZone;
  uint8_t time_zone = 0;              // TS 24.008 §10.5.3.8 coding
  uint8_t daylight_saving_time = 0;   // 0..2 hours
  static Result<UeTimeZone> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 2; }
  void encode(uint8_t* out) const noexcept;
};

// 8.9 IP Address: IPv4 (4 octets) or IPv6 (16).
struct IpAddress {
  static constexpr IeType kType = IeType::kIpAddress;
  std::optional<Ipv4> ipv4;
  std::optional<Ipv6> ipv6;
  static Result<IpAddress> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return ipv4 ? 4 : 16; }
  void encode(uint8_t* out) const noexcept;
};

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
template <IeType T>
struct Opaque {
  static constexpr IeType kType = T;
  std::span<const uint8_t> octets;
  static Result<Opaque> decode(std::span<const uint8_t> v) noexcept { return Opaque{v}; }
  std::size_t encodedSize() const noexcept { return octets.size(); }
  void encode(uint8_t* out) const noexcept;
};
using Pco = Opaque<IeType::kPco>;
using Apco = Opaque<IeType::kApco>;
using Epco = Opaque<IeType::kEpco>;

// 8.67 Private Extension: enterprise ID and a proprietary value.
struct PrivateExtension {
  static constexpr IeType kType = IeType::kPrivateExtension;
  uint16_t enterprise_id = 0;
  std::span<const uint8_t> value;
  static Result<PrivateExtension> decode(std::span<const uint8_t> v) noexcept;
  std::size_t encodedSize() const noexcept { return 2 + value.size(); }
  void encode(uint8_t* out) const noexcept;
};

// Reads `ie` of `message` as T; fails if the IE is of another type.
template <class T>
Result<T> read(const Message& message, const Ie& ie) noexcept {
  if (ie.type != static_cast<uint8_t>(T::kType))
    return fail(Errc::kIeInvalidValue, ie.type, ie.instance(), ie.offset);
  auto r = T::decode(message.value(ie));
  if (!r) {
    Error e = r.error();
    return fail(e.code, ie.type, ie.instance(), ie.offset);
  }
  return r;
}

// Finds the first top-level IE of T's type and `instance` and reads it.
// Fails with kMandatoryIeMissing when absent (callers that treat the IE as
// optional check find() first).
template <class T>
Result<T> readFirst(const Message& message, uint8_t instance = 0) noexcept {
  const Ie* ie = message.find(T::kType, instance);
  if (ie == nullptr) return fail(Errc::kMandatoryIeMissing, static_cast<uint8_t>(T::kType), instance);
  return read<T>(message, *ie);
}

}  // namespace gtpcp::gtp::v2
