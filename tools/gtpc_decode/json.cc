#include "tools/gtpc_decode/json.h"

#include <cstdio>
#include <memory>
#include <optional>

#include "common/gtp/bytes.h"
#include "common/gtp/errors.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/values.h"

namespace gtpcp::gtpc_decode {

namespace {

namespace v1 = gtp::v1;
namespace v2 = gtp::v2;
using gtp::Errc;

std::string hexNumber(const char* format, uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}
std::string hex8(uint8_t v) { return hexNumber("0x%02x", v); }
std::string hex16(uint16_t v) { return hexNumber("0x%04x", v); }
std::string hex32(uint32_t v) { return hexNumber("0x%08x", v); }

// The generated tables return "" for unassigned values; a ticket reader
// should see a word, not an empty string.
std::string nameOr(std::string_view name) {
  return name.empty() ? std::string("Unknown") : std::string(name);
}

std::string errcText(Errc code) { return std::string(gtp::errcName(code)); }

Json plmnJson(const gtp::Plmn& plmn) {
  return Json{{"mcc", std::string(plmn.mccView())}, {"mnc", std::string(plmn.mncView())}};
}

std::string addressText(const std::optional<gtp::Ipv4>& ipv4, const std::optional<gtp::Ipv6>& ipv6) {
  if (ipv4) return gtp::toString(*ipv4);
  if (ipv6) return gtp::toString(*ipv6);
  return "";
}

// Hex of an identity IE with everything after the octets that hold only kept
// digits starred: TBCD puts two digits in an octet, so 5 kept digits leave
// 2 whole octets. `prefix_octets` are non-digit octets kept in front (the
// GTPv1 MSISDN's address type).
std::string maskedHex(std::span<const uint8_t> value, std::size_t prefix_octets) {
  std::string hex = toHex(value);
  const std::size_t keep = 2 * (prefix_octets + kMaskKeepDigits / 2);
  for (std::size_t i = keep; i < hex.size(); ++i) hex[i] = '*';
  return hex;
}

// IEs that embed an IMSI, MSISDN or IMEI(SV) in a layout this tool does not
// take apart (TShark finds a MEI inside a v2 MM Context): with --mask their
// hex is starred whole, since no part of it can be vouched for.
bool v2CarriesIdentity(uint8_t type) {
  using T = v2::IeType;
  const auto t = static_cast<T>(type);
  return (t >= T::kMmContextGsmKeyAndTriplets && t <= T::kMmContextUmtsKeyQuadrupletsAndQuintuplets) ||
         t == T::kRemoteUserId;
}
bool v1CarriesIdentity(uint8_t type) {
  return type == static_cast<uint8_t>(v1::IeType::kMmContext);
}
std::string starred(std::size_t length) { return std::string(2 * length, '*'); }

// Fills "value" for a TBCD identity. The strict decode comes first; octets it
// rejects are still shown the way Wireshark shows them, flagged, because an
// operator chasing a broken peer needs to see what it sent.
void putIdentity(Json& out, const gtp::Result<gtp::Digits>& strict, std::span<const uint8_t> tbcd,
                 std::size_t prefix_octets, std::span<const uint8_t> value, const Options& options) {
  auto show = [&](std::string_view digits) {
    out["value"] = options.mask ? maskDigits(digits) : std::string(digits);
    if (options.mask) out["hex"] = maskedHex(value, prefix_octets);
  };
  if (strict) {
    show(strict->view());
    return;
  }
  if (strict.error().code == Errc::kIeInvalidValue) {
    auto lenient = gtp::decodeTbcd(tbcd, gtp::TbcdMode::kLenient);
    if (lenient) {
      show(lenient->view());
      out["value_warning"] = errcText(Errc::kIeInvalidValue);
      return;
    }
  }
  out["value_error"] = errcText(strict.error().code);
  if (options.mask) out["hex"] = maskedHex(value, prefix_octets);
}

// Reads `ie` with typed view T and stores render(view) as "value", or the
// view's error as "value_error".
template <class T, class Message, class Ie, class Render>
void put(Json& out, const Message& message, const Ie& ie, Render&& render) {
  auto view = T::decode(message.value(ie));
  if (!view) {
    out["value_error"] = errcText(view.error().code);
    return;
  }
  out["value"] = render(*view);
}

template <class T, class Message, class Ie>
void putInteger(Json& out, const Message& message, const Ie& ie) {
  put<T>(out, message, ie, [](const T& v) { return v.value; });
}

// ---------------------------------------------------------------- GTPv2-C

Json uliJson(const v2::Uli& uli) {
  Json j = Json::object();
  if (uli.cgi) {
    Json p = plmnJson(uli.cgi->plmn);
    p["lac"] = uli.cgi->lac;
    p["ci"] = uli.cgi->ci;
    j["cgi"] = std::move(p);
  }
  if (uli.sai) {
    Json p = plmnJson(uli.sai->plmn);
    p["lac"] = uli.sai->lac;
    p["sac"] = uli.sai->sac;
    j["sai"] = std::move(p);
  }
  if (uli.rai) {
    Json p = plmnJson(uli.rai->plmn);
    p["lac"] = uli.rai->lac;
    p["rac"] = uli.rai->rac;
    j["rai"] = std::move(p);
  }
  if (uli.tai) {
    Json p = plmnJson(uli.tai->plmn);
    p["tac"] = uli.tai->tac;
    j["tai"] = std::move(p);
  }
  if (uli.ecgi) {
    Json p = plmnJson(uli.ecgi->plmn);
    p["eci"] = uli.ecgi->eci;
    j["ecgi"] = std::move(p);
  }
  if (uli.lai) {
    Json p = plmnJson(uli.lai->plmn);
    p["lac"] = uli.lai->lac;
    j["lai"] = std::move(p);
  }
  if (uli.macro_enb) {
    Json p = plmnJson(uli.macro_enb->plmn);
    p["id"] = uli.macro_enb->id;
    j["macro_enb"] = std::move(p);
  }
  if (uli.extended_macro_enb) {
    Json p = plmnJson(uli.extended_macro_enb->plmn);
    p["smenb"] = uli.extended_macro_enb->smenb;
    p["id"] = uli.extended_macro_enb->id;
    j["extended_macro_enb"] = std::move(p);
  }
  return j;
}

Json fteidJson(const v2::FTeid& f) {
  Json j{{"interface_type", f.interface_type},
         {"interface", nameOr(v2::fteidInterfaceTypeName(f.interface_type))},
         {"teid", hex32(f.teid)}};
  if (f.ipv4) j["ipv4"] = gtp::toString(*f.ipv4);
  if (f.ipv6) j["ipv6"] = gtp::toString(*f.ipv6);
  return j;
}

Json causeJson(const v2::CauseIe& c) {
  Json j{{"cause", c.value},
         {"name", nameOr(v2::causeName(c.value))},
         {"pce", c.pce},
         {"bce", c.bce},
         {"cs", c.cs}};
  if (c.offending_ie) {
    j["offending_ie"] = Json{{"type", c.offending_ie->type}, {"instance", c.offending_ie->instance}};
  }
  return j;
}

Json paaJson(const v2::Paa& p) {
  Json j{{"pdn_type", p.pdn_type}};
  if (p.ipv4) j["ipv4"] = gtp::toString(*p.ipv4);
  if (p.ipv6) {
    j["ipv6"] = gtp::toString(*p.ipv6);
    j["ipv6_prefix_length"] = p.ipv6_prefix_length;
  }
  return j;
}

Json bearerQosJson(const v2::BearerQos& q) {
  return Json{{"pci", q.pci},
              {"pl", q.pl},
              {"pvi", q.pvi},
              {"qci", q.qci},
              {"mbr_uplink_kbps", q.mbr_uplink},
              {"mbr_downlink_kbps", q.mbr_downlink},
              {"gbr_uplink_kbps", q.gbr_uplink},
              {"gbr_downlink_kbps", q.gbr_downlink}};
}

Json fqCsidJson(const v2::FqCsid& f) {
  Json j{{"node_id_type", f.node_id_type}};
  if (f.node_id_type == 2) {
    j["node_id"] = f.node_id;
  } else {
    j["node_id"] = addressText(f.ipv4, f.ipv6);
  }
  Json csids = Json::array();
  for (std::size_t i = 0; i < f.csid_count; ++i) csids.push_back(f.csids[i]);
  j["csids"] = std::move(csids);
  return j;
}

void putV2Value(Json& out, const v2::Message& m, const v2::Ie& ie, const Options& options) {
  using T = v2::IeType;
  const std::span<const uint8_t> value = m.value(ie);
  switch (ie.ieType()) {
    case T::kImsi:
      putIdentity(out, v2::Imsi::decode(value).map([](const v2::Imsi& v) { return v.digits; }),
                  value, 0, value, options);
      break;
    case T::kMsisdn:
      putIdentity(out, v2::Msisdn::decode(value).map([](const v2::Msisdn& v) { return v.digits; }),
                  value, 0, value, options);
      break;
    case T::kMei:
      putIdentity(out, v2::Mei::decode(value).map([](const v2::Mei& v) { return v.digits; }), value,
                  0, value, options);
      break;
    case T::kApn:
      put<v2::Apn>(out, m, ie, [](const v2::Apn& a) { return std::string(a.text.view()); });
      break;
    case T::kRecovery: putInteger<v2::Recovery>(out, m, ie); break;
    case T::kEbi: putInteger<v2::Ebi>(out, m, ie); break;
    case T::kRatType: putInteger<v2::RatType>(out, m, ie); break;
    case T::kPdnType: putInteger<v2::PdnType>(out, m, ie); break;
    case T::kSelectionMode: putInteger<v2::SelectionMode>(out, m, ie); break;
    case T::kApnRestriction: putInteger<v2::ApnRestriction>(out, m, ie); break;
    case T::kNodeType: putInteger<v2::NodeType>(out, m, ie); break;
    case T::kPortNumber: putInteger<v2::PortNumber>(out, m, ie); break;
    case T::kChargingId: putInteger<v2::ChargingId>(out, m, ie); break;
    case T::kChargingCharacteristics:
      put<v2::ChargingCharacteristics>(out, m, ie,
                                       [](const v2::ChargingCharacteristics& c) { return hex16(c.value); });
      break;
    case T::kServingNetwork:
      put<v2::ServingNetwork>(out, m, ie, [](const v2::ServingNetwork& s) { return plmnJson(s.plmn); });
      break;
    case T::kUli: put<v2::Uli>(out, m, ie, uliJson); break;
    case T::kFTeid: put<v2::FTeid>(out, m, ie, fteidJson); break;
    case T::kCause: put<v2::CauseIe>(out, m, ie, causeJson); break;
    case T::kAmbr:
      put<v2::Ambr>(out, m, ie, [](const v2::Ambr& a) {
        return Json{{"uplink_kbps", a.uplink}, {"downlink_kbps", a.downlink}};
      });
      break;
    case T::kPaa: put<v2::Paa>(out, m, ie, paaJson); break;
    case T::kIndication:
      put<v2::Indication>(out, m, ie, [](const v2::Indication& i) {
        return Json{{"flags", toHex({i.octets.data(), i.size})}};
      });
      break;
    case T::kBearerQos: put<v2::BearerQos>(out, m, ie, bearerQosJson); break;
    case T::kUeTimeZone:
      put<v2::UeTimeZone>(out, m, ie, [](const v2::UeTimeZone& t) {
        return Json{{"time_zone", hex8(t.time_zone)},
                    {"daylight_saving_time", t.daylight_saving_time}};
      });
      break;
    case T::kIpAddress:
      put<v2::IpAddress>(out, m, ie, [](const v2::IpAddress& a) { return addressText(a.ipv4, a.ipv6); });
      break;
    case T::kFqCsid: put<v2::FqCsid>(out, m, ie, fqCsidJson); break;
    case T::kPrivateExtension:
      put<v2::PrivateExtension>(out, m, ie, [](const v2::PrivateExtension& p) {
        return Json{{"enterprise_id", p.enterprise_id}, {"value", toHex(p.value)}};
      });
      break;
    default:
      // PCO, APCO, ePCO and types without a typed view: the hex says it all.
      break;
  }
}

Json v2IeJson(const v2::Message& m, const v2::Ie& ie, const Options& options) {
  Json j{{"type", ie.type}, {"name", nameOr(v2::ieTypeInfo(ie.type).name)}, {"instance", ie.instance()}};
  // The high nibble is CR (or spare) and almost always 0; shown only when
  // not, as a hint that the sender uses it.
  if (const uint8_t cr_spare = ie.spare_instance >> 4; cr_spare != 0) j["cr_spare"] = cr_spare;
  j["length"] = ie.length;
  if (v2::isGroupedIeType(ie.type)) {
    Json children = Json::array();
    for (const v2::Ie& child : m.children(ie)) children.push_back(v2IeJson(m, child, options));
    j["ies"] = std::move(children);
    return j;
  }
  j["hex"] = options.mask && v2CarriesIdentity(ie.type) ? starred(ie.length) : toHex(m.value(ie));
  putV2Value(j, m, ie, options);
  return j;
}

// ---------------------------------------------------------------- GTPv1-C

Json v1UliJson(const v1::Uli& u) {
  Json j{{"geographic_location_type", u.geographic_location_type}};
  j.update(plmnJson(u.plmn));
  j["lac"] = u.lac;
  switch (u.geographic_location_type) {
    case 0: j["ci"] = u.ci_sac_rac; break;
    case 1: j["sac"] = u.ci_sac_rac; break;
    // TS 29.060 §7.7.51: the RAC octet is followed by one spare octet.
    case 2: j["rac"] = u.ci_sac_rac >> 8; break;
    default: break;
  }
  return j;
}

Json endUserAddressJson(const v1::EndUserAddress& e) {
  Json j{{"pdp_type_organization", e.pdp_type_organization},
         {"pdp_type_number", hex8(e.pdp_type_number)}};
  if (e.ipv4) j["ipv4"] = gtp::toString(*e.ipv4);
  if (e.ipv6) j["ipv6"] = gtp::toString(*e.ipv6);
  return j;
}

void putV1Value(Json& out, const v1::Message& m, const v1::Ie& ie, const Options& options) {
  using T = v1::IeType;
  const std::span<const uint8_t> value = m.value(ie);
  auto teidText = [](const auto& v) { return hex32(v.value); };
  switch (ie.ieType()) {
    case T::kCause:
      put<v1::CauseIe>(out, m, ie, [](const v1::CauseIe& c) {
        return Json{{"cause", c.value}, {"name", nameOr(v1::causeName(c.value))}};
      });
      break;
    case T::kImsi:
      putIdentity(out, v1::Imsi::decode(value).map([](const v1::Imsi& v) { return v.digits; }),
                  value, 0, value, options);
      break;
    case T::kImeiSv:
      putIdentity(out, v1::ImeiSv::decode(value).map([](const v1::ImeiSv& v) { return v.digits; }),
                  value, 0, value, options);
      break;
    case T::kMsisdn:
      // The first octet is the address type (TS 29.002 AddressString), not digits.
      putIdentity(out, v1::Msisdn::decode(value).map([](const v1::Msisdn& v) { return v.digits; }),
                  value.empty() ? value : value.subspan(1), 1, value, options);
      break;
    case T::kRai:
      put<v1::Rai>(out, m, ie, [](const v1::Rai& r) {
        Json j = plmnJson(r.plmn);
        j["lac"] = r.lac;
        j["rac"] = r.rac;
        return j;
      });
      break;
    case T::kTlli: put<v1::Tlli>(out, m, ie, teidText); break;
    case T::kPTmsi: put<v1::PTmsi>(out, m, ie, teidText); break;
    case T::kTeidDataI: put<v1::TeidDataI>(out, m, ie, teidText); break;
    case T::kTeidControlPlane: put<v1::TeidControlPlane>(out, m, ie, teidText); break;
    case T::kTeidDataII:
      put<v1::TeidDataII>(out, m, ie, [](const v1::TeidDataII& t) {
        return Json{{"nsapi", t.nsapi}, {"teid", hex32(t.teid)}};
      });
      break;
    case T::kReorderingRequired: putInteger<v1::ReorderingRequired>(out, m, ie); break;
    case T::kTeardownInd: putInteger<v1::TeardownInd>(out, m, ie); break;
    case T::kRecovery: putInteger<v1::Recovery>(out, m, ie); break;
    case T::kSelectionMode: putInteger<v1::SelectionMode>(out, m, ie); break;
    case T::kNsapi: putInteger<v1::Nsapi>(out, m, ie); break;
    case T::kRatType: putInteger<v1::RatType>(out, m, ie); break;
    case T::kApnRestriction: putInteger<v1::ApnRestriction>(out, m, ie); break;
    case T::kChargingId: putInteger<v1::ChargingId>(out, m, ie); break;
    case T::kTraceReference: putInteger<v1::TraceReference>(out, m, ie); break;
    case T::kTraceType: putInteger<v1::TraceType>(out, m, ie); break;
    case T::kChargingCharacteristics:
      put<v1::ChargingCharacteristics>(out, m, ie,
                                       [](const v1::ChargingCharacteristics& c) { return hex16(c.value); });
      break;
    case T::kCommonFlags:
      put<v1::CommonFlags>(out, m, ie, [](const v1::CommonFlags& c) { return hex8(c.value); });
      break;
    case T::kEndUserAddress: put<v1::EndUserAddress>(out, m, ie, endUserAddressJson); break;
    case T::kApn:
      put<v1::Apn>(out, m, ie, [](const v1::Apn& a) { return std::string(a.text.view()); });
      break;
    case T::kGsnAddress:
      put<v1::GsnAddress>(out, m, ie, [](const v1::GsnAddress& a) { return addressText(a.ipv4, a.ipv6); });
      break;
    case T::kChargingGatewayAddress:
      put<v1::ChargingGatewayAddress>(out, m, ie, [](const v1::ChargingGatewayAddress& a) {
        return addressText(a.ipv4, a.ipv6);
      });
      break;
    case T::kQosProfile:
      put<v1::QosProfile>(out, m, ie, [](const v1::QosProfile& q) {
        return Json{{"allocation_retention_priority", q.allocation_retention_priority},
                    {"qos", toHex(q.qos)}};
      });
      break;
    case T::kUli: put<v1::Uli>(out, m, ie, v1UliJson); break;
    case T::kMsTimeZone:
      put<v1::MsTimeZone>(out, m, ie, [](const v1::MsTimeZone& t) {
        return Json{{"time_zone", hex8(t.time_zone)},
                    {"daylight_saving_time", t.daylight_saving_time}};
      });
      break;
    case T::kPrivateExtension:
      put<v1::PrivateExtension>(out, m, ie, [](const v1::PrivateExtension& p) {
        return Json{{"extension_identifier", p.extension_identifier}, {"value", toHex(p.value)}};
      });
      break;
    default:
      break;
  }
}

Json v1IeJson(const v1::Message& m, const v1::Ie& ie, const Options& options) {
  Json j{{"type", ie.type},
         {"name", nameOr(v1::ieTypeInfo(ie.type).name)},
         {"format", ie.isTv() ? "tv" : "tlv"},
         {"length", ie.length},
         {"hex", options.mask && v1CarriesIdentity(ie.type) ? starred(ie.length) : toHex(m.value(ie))}};
  putV1Value(j, m, ie, options);
  return j;
}

// ---------------------------------------------------------------- errors

Json errorJson(std::optional<uint8_t> version, const gtp::Error& error) {
  Json j = Json::object();
  if (version) j["version"] = *version;
  j["error"] = errcText(error.code);
  j["detail"] = gtp::describe(error);
  j["offset"] = error.offset;
  if (error.ie_type != 0) j["ie_type"] = error.ie_type;
  return j;
}

// The header keys of an error object come from the fixed header octets, read
// here rather than through decodeHeader(): that one also rejects a Length the
// datagram does not match, and a truncated message is exactly when an
// operator needs to know which message it was.
Json v2Error(std::span<const uint8_t> bytes, const gtp::Error& error) {
  Json j = errorJson(v2::kVersion, error);
  const bool teid = bytes[0] & v2::kFlagTeid;
  const std::size_t header_size = teid ? v2::kHeaderSizeWithTeid : v2::kHeaderSizeNoTeid;
  if (bytes.size() < header_size) return j;
  const uint8_t type = bytes[1];
  j["message_type"] = type;
  j["message_name"] = nameOr(v2::messageTypeInfo(type).name);
  if (teid) j["teid"] = hex32(gtp::load32(&bytes[4]));
  j["sequence_number"] = gtp::load24(&bytes[teid ? 8 : 4]);
  // Every error inside the first message lies before its end, so an offset at
  // or past it points into the piggybacked one.
  const std::size_t size = 4u + gtp::load16(&bytes[2]);
  if ((bytes[0] & v2::kFlagPiggyback) && size < bytes.size() && error.offset >= size)
    j["in_piggybacked"] = true;
  return j;
}

Json v1Error(std::span<const uint8_t> bytes, const gtp::Error& error) {
  Json j = errorJson(v1::kVersion, error);
  // GTP' (PT=0) shares the version number but not the message types.
  if (bytes.size() < v1::kHeaderSizeMandatory || !(bytes[0] & v1::kFlagProtocolType)) return j;
  const uint8_t type = bytes[1];
  j["message_type"] = type;
  j["message_name"] = nameOr(v1::messageTypeInfo(type).name);
  j["teid"] = hex32(gtp::load32(&bytes[4]));
  if ((bytes[0] & v1::kFlagSequenceNumber) && bytes.size() >= v1::kHeaderSizeOptional)
    j["sequence_number"] = gtp::load16(&bytes[8]);
  return j;
}

}  // namespace

std::string toHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0f]);
  }
  return out;
}

std::string maskDigits(std::string_view digits) {
  std::string out(digits);
  for (std::size_t i = kMaskKeepDigits; i < out.size(); ++i) out[i] = '*';
  return out;
}

Json toJson(const gtp::v2::Message& message, const Options& options) {
  const v2::Header& h = message.header();
  Json j{{"version", h.version()},
         {"message_type", h.message_type},
         {"message_name", nameOr(v2::messageTypeInfo(h.message_type).name)},
         {"flags",
          Json{{"piggyback", h.piggyback()},
               {"teid_present", h.teidPresent()},
               {"message_priority_present", h.messagePriorityPresent()}}}};
  if (h.messagePriorityPresent()) j["message_priority"] = h.messagePriority();
  j["length"] = h.length;
  if (h.teidPresent()) j["teid"] = hex32(h.teid);
  j["sequence_number"] = h.sequence_number;
  Json ies = Json::array();
  for (const v2::Ie& ie : message.topLevel()) ies.push_back(v2IeJson(message, ie, options));
  j["ies"] = std::move(ies);
  return j;
}

Json toJson(const gtp::v1::Message& message, const Options& options) {
  const v1::Header& h = message.header();
  Json j{{"version", h.version()},
         {"protocol_type", h.protocolType() ? 1 : 0},
         {"message_type", h.message_type},
         {"message_name", nameOr(v1::messageTypeInfo(h.message_type).name)},
         {"flags",
          Json{{"extension_header", h.hasExtensionHeader()},
               {"sequence_number", h.hasSequenceNumber()},
               {"npdu", h.hasNpdu()}}},
         {"length", h.length},
         {"teid", hex32(h.teid)}};
  // The three optional fields travel together whenever any of E, S, PN is set.
  if (h.hasOptionalFields()) {
    j["sequence_number"] = h.sequence_number;
    j["npdu_number"] = h.npdu_number;
    j["next_extension_header_type"] = hex8(h.next_extension_header_type);
  }
  if (h.extension_header_count != 0) {
    Json headers = Json::array();
    for (std::size_t i = 0; i < h.extension_header_count; ++i) {
      const v1::ExtensionHeader& e = h.extension_headers[i];
      // The whole header as received: length octet, content, next type.
      headers.push_back(Json{{"type", hex8(e.type)},
                             {"hex", toHex(message.bytes().subspan(e.offset, e.size))}});
    }
    j["extension_headers"] = std::move(headers);
  }
  if (h.message_type == static_cast<uint8_t>(v1::MessageType::kGPdu)) {
    j["payload_length"] = message.body().size();
    return j;
  }
  Json ies = Json::array();
  for (const v1::Ie& ie : message.ies()) ies.push_back(v1IeJson(message, ie, options));
  j["ies"] = std::move(ies);
  return j;
}

Json decodeDatagram(std::span<const uint8_t> bytes, const Options& options) {
  if (bytes.empty()) return errorJson(std::nullopt, gtp::Error{Errc::kTruncatedHeader});
  const uint8_t version = bytes[0] >> 5;
  if (version == v2::kVersion) {
    // A Datagram holds two fixed IE indexes (8 KiB): too big for the stack of
    // a recursive caller, and this is a tool, so the heap is fine.
    auto datagram = std::make_unique<v2::Datagram>();
    if (auto r = datagram->decode(bytes); !r) return v2Error(bytes, r.error());
    Json j = toJson(datagram->message, options);
    if (datagram->has_piggybacked) j["piggybacked"] = toJson(datagram->piggybacked, options);
    return j;
  }
  if (version == v1::kVersion) {
    auto message = std::make_unique<v1::Message>();
    if (auto r = message->decode(bytes); !r) return v1Error(bytes, r.error());
    return toJson(*message, options);
  }
  return errorJson(version, gtp::Error{Errc::kUnsupportedVersion});
}

bool isError(const Json& object) { return object.is_object() && object.contains("error"); }

}  // namespace gtpcp::gtpc_decode
