#include "common/session/record.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/gtp/constants.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/ies.h"
#include "common/session/teid.h"

namespace gtpcp::session {

using namespace gtp::v2;

namespace {

// GTPv1 IE types of a PDP context's attribute (kV1PdpFrom*).
constexpr uint8_t kV1TeidDataI = static_cast<uint8_t>(gtp::v1::IeType::kTeidDataI);
constexpr uint8_t kV1ChargingId = static_cast<uint8_t>(gtp::v1::IeType::kChargingId);
constexpr uint8_t kV1GsnAddress = static_cast<uint8_t>(gtp::v1::IeType::kGsnAddress);
constexpr uint8_t kV1QosProfile = static_cast<uint8_t>(gtp::v1::IeType::kQosProfile);

// Sets a string or bytes field through its mutable pointer: assigning into
// the string a reused message already holds keeps its capacity, where the
// generated set_x(pointer, size) builds a temporary std::string first.
void assign(std::string* field, const void* p, std::size_t n) { field->assign(static_cast<const char*>(p), n); }
void assign(std::string* field, std::string_view v) { field->assign(v.data(), v.size()); }

void setFTeid(const FTeid& f, proto::FTeid& out) {
  out.set_interface_type(f.interface_type);
  out.set_teid(f.teid);
  if (f.ipv4) assign(out.mutable_ipv4(), f.ipv4->octets.data(), 4);
  if (f.ipv6) assign(out.mutable_ipv6(), f.ipv6->octets.data(), 16);
}

// `out` is cleared first: coreRecord() reuses it.
void setEndpoint(const Endpoint& e, uint8_t interface_type, proto::FTeid& out) {
  out.Clear();
  if (!e.address.valid()) return;
  out.set_interface_type(interface_type);
  out.set_teid(e.teid);
  if (e.address.family == AF_INET) {
    assign(out.mutable_ipv4(), e.address.bytes, 4);
  } else {
    assign(out.mutable_ipv6(), e.address.bytes, 16);
  }
}

void setQos(const BearerQos& q, proto::BearerQos& out) {
  out.set_qci(q.qci);
  out.set_priority_level(q.pl);
  // TS 29.274 §8.15: the flags say "disabled" when set.
  out.set_pre_emption_capability(!q.pci);
  out.set_pre_emption_vulnerability(!q.pvi);
  out.set_mbr_uplink_kbps(q.mbr_uplink);
  out.set_mbr_downlink_kbps(q.mbr_downlink);
  out.set_gbr_uplink_kbps(q.gbr_uplink);
  out.set_gbr_downlink_kbps(q.gbr_downlink);
}

// A Bearer Context's value (grouped IE, TS 29.274 §8.28) as one side's view
// of the bearer: its user-plane F-TEID (instance 0, 2 or 4... the S5/S8 one
// whatever the instance, by interface type), QoS and Charging ID.
bool readBearer(std::span<const uint8_t> v, uint8_t ebi, bool from_access, proto::Bearer& out) {
  out.set_ebi(ebi);
  std::size_t pos = 0;
  while (pos + 4 <= v.size()) {
    const uint8_t type = v[pos];
    const std::size_t length = (std::size_t{v[pos + 1]} << 8) | v[pos + 2];
    if (pos + 4 + length > v.size()) return false;
    const auto value = v.subspan(pos + 4, length);
    pos += 4 + length;
    switch (static_cast<IeType>(type)) {
      case IeType::kFTeid:
        if (auto f = FTeid::decode(value)) {
          // Whose endpoint it is, by interface type (TS 29.274 Table 8.22-1;
          // S5/S8-U: 4 SGW, 5 PGW; S2b-U: 31 ePDG, 33 PGW): a Create Bearer
          // Response from the SGW gives the PGW's back beside its own, and
          // is where the PGW's side of a dedicated bearer gets its EBI.
          // Other types count as the sender's own. Each side keeps the
          // first F-TEID it is named by.
          const bool gateway_side =
              isGatewayUserInterface(f->interface_type) ||
              (!isAccessUserInterface(f->interface_type) && !from_access);
          proto::FTeid* slot = gateway_side ? out.mutable_pgw_user_plane() : out.mutable_sgw_user_plane();
          if (slot->teid() == 0 && slot->ipv4().empty() && slot->ipv6().empty()) setFTeid(*f, *slot);
        }
        break;
      case IeType::kBearerQos:
        if (auto q = BearerQos::decode(value)) setQos(*q, *out.mutable_qos());
        break;
      case IeType::kChargingId:
        if (auto c = ChargingId::decode(value)) out.set_charging_id(c->value);
        break;
      default:
        break;
    }
  }
  return pos == v.size();
}

// A GTPv1 PDP context as one side sent it (Attribute::kV1PdpFrom*):
// TEID Data I, Charging ID, GSN Address for user traffic (IPv4, then an
// IPv6 Alternative) and QoS Profile, as v1 IEs.
bool readV1Pdp(std::span<const uint8_t> v, uint8_t nsapi, bool from_access, proto::Bearer& out) {
  out.set_ebi(nsapi);
  proto::FTeid* user = from_access ? out.mutable_sgw_user_plane() : out.mutable_pgw_user_plane();
  std::size_t pos = 0;
  while (pos < v.size()) {
    const uint8_t type = v[pos];
    if (type == kV1TeidDataI || type == kV1ChargingId) {  // TV, 4 octets
      if (pos + 5 > v.size()) return false;
      const uint32_t value = (uint32_t{v[pos + 1]} << 24) | (uint32_t{v[pos + 2]} << 16) |
                             (uint32_t{v[pos + 3]} << 8) | v[pos + 4];
      if (type == kV1TeidDataI) {
        user->set_teid(value);
      } else {
        out.set_charging_id(value);
      }
      pos += 5;
      continue;
    }
    if (type != kV1GsnAddress && type != kV1QosProfile) return false;  // TLV
    if (pos + 3 > v.size()) return false;
    const std::size_t length = (std::size_t{v[pos + 1]} << 8) | v[pos + 2];
    if (pos + 3 + length > v.size()) return false;
    const auto value = v.subspan(pos + 3, length);
    pos += 3 + length;
    if (type == kV1QosProfile) {
      assign(out.mutable_v1_qos_profile(), value.data(), value.size());
    } else if (length == 4 && user->ipv4().empty()) {
      assign(user->mutable_ipv4(), value.data(), 4);
    } else if (length == 16 && user->ipv6().empty()) {
      assign(user->mutable_ipv6(), value.data(), 16);
    }
  }
  return true;
}


bool endpointFrom(const proto::FTeid& f, Endpoint& out) {
  if (f.ipv4().size() == 4) {
    gtp::Ipv4 a;
    std::memcpy(a.octets.data(), f.ipv4().data(), 4);
    out.address = net::Address::v4(a, gtp::kGtpcPort);
  } else if (f.ipv6().size() == 16) {
    gtp::Ipv6 a;
    std::memcpy(a.octets.data(), f.ipv6().data(), 16);
    out.address = net::Address::v6(a, gtp::kGtpcPort);
  } else {
    return false;
  }
  out.teid = f.teid();
  return true;
}

// The hash fields, numbered in the lexicographic order of their names
// ("ambr", "b0a", "b0g", "b10a", ... "b1a", ... "uli"): a session's fields go
// into its HSET in that order, as they did when they were kept in a
// std::map<std::string, ...>, so that the same changes give the same bytes.
struct FieldName {
  char text[6];  // "msisdn", the longest
  uint8_t length;
  constexpr std::string_view view() const { return {text, length}; }
};

struct FieldTable {
  std::array<FieldName, kRecordFields> names;  // by field
  std::array<Attribute, kRecordFields> attribute;
  std::array<uint8_t, kRecordFields> ebi;      // bearer fields
  std::array<uint8_t, 19> scalar;               // Attribute (1..8, 18) -> field
  std::array<std::array<uint8_t, 2>, 16> bearer;  // [ebi][0 SGW's ("a"), 1 PGW's ("g")] -> field
};

constexpr FieldName nameOf(std::string_view text) {
  FieldName n{};
  for (std::size_t i = 0; i < text.size(); ++i) n.text[i] = text[i];
  n.length = static_cast<uint8_t>(text.size());
  return n;
}

constexpr FieldTable makeFieldTable() {
  struct Field {
    FieldName name;
    Attribute attribute;
    uint8_t ebi;
  };
  std::array<Field, kRecordFields> f{};
  constexpr std::pair<Attribute, std::string_view> kScalars[] = {
      {Attribute::kImsi, "imsi"}, {Attribute::kMsisdn, "msisdn"},        {Attribute::kMei, "mei"},
      {Attribute::kRatType, "rat"}, {Attribute::kServingNetwork, "sn"}, {Attribute::kUli, "uli"},
      {Attribute::kPaa, "paa"},   {Attribute::kApnAmbr, "ambr"},       {Attribute::kRouting, "rt"}};
  std::size_t n = 0;
  for (const auto& [attribute, name] : kScalars) f[n++] = Field{nameOf(name), attribute, 0};
  for (uint8_t ebi = 0; ebi < 16; ++ebi) {
    for (const char side : {'a', 'g'}) {
      FieldName name{};
      name.text[0] = 'b';
      std::size_t at = 1;
      if (ebi >= 10) name.text[at++] = '1';
      name.text[at++] = static_cast<char>('0' + ebi % 10);
      name.text[at++] = side;
      name.length = static_cast<uint8_t>(at);
      f[n++] = Field{name, side == 'a' ? Attribute::kBearerFromAccess : Attribute::kBearerFromGateway, ebi};
    }
  }
  std::sort(f.begin(), f.end(), [](const Field& x, const Field& y) { return x.name.view() < y.name.view(); });
  FieldTable t{};
  for (std::size_t i = 0; i < f.size(); ++i) {
    t.names[i] = f[i].name;
    t.attribute[i] = f[i].attribute;
    t.ebi[i] = f[i].ebi;
    if (f[i].attribute == Attribute::kBearerFromAccess || f[i].attribute == Attribute::kBearerFromGateway) {
      t.bearer[f[i].ebi][f[i].attribute == Attribute::kBearerFromAccess ? 0 : 1] = static_cast<uint8_t>(i);
    } else {
      t.scalar[static_cast<uint8_t>(f[i].attribute)] = static_cast<uint8_t>(i);
    }
  }
  return t;
}

constexpr FieldTable kFieldTable = makeFieldTable();
static_assert(kRecordFields <= 64, "a session's fields are a 64-bit mask");
static_assert(kFieldTable.names[0].view() == "ambr" && kFieldTable.names[3].view() == "b10a" &&
              kFieldTable.names[kRecordFields - 1].view() == "uli");
static_assert(kFieldTable.names[kFieldTable.bearer[1][1]].view() == "b1g");
static_assert(kFieldTable.names[kFieldTable.scalar[static_cast<uint8_t>(Attribute::kRatType)]].view() == "rat" &&
              kFieldTable.names[kFieldTable.scalar[static_cast<uint8_t>(Attribute::kApnAmbr)]].view() == "ambr");

}  // namespace

int fieldOf(Attribute a, uint8_t ebi) noexcept {
  switch (a) {
    case Attribute::kImsi:
    case Attribute::kMsisdn:
    case Attribute::kMei:
    case Attribute::kRatType:
    case Attribute::kServingNetwork:
    case Attribute::kUli:
    case Attribute::kPaa:
    case Attribute::kApnAmbr:
    case Attribute::kRouting:
      return kFieldTable.scalar[static_cast<uint8_t>(a)];
    case Attribute::kBearerFromAccess:
    case Attribute::kBearerFromGateway:
      if (ebi >= 16) return -1;
      return kFieldTable.bearer[ebi][a == Attribute::kBearerFromAccess ? 0 : 1];
    case Attribute::kBearerRemoved:
      return -1;
    // GTPv1: the same fields as their GTPv2 counterparts (the record's
    // gtp_version says how the octets are encoded).
    case Attribute::kV1Msisdn: return kFieldTable.scalar[static_cast<uint8_t>(Attribute::kMsisdn)];
    case Attribute::kV1Rai: return kFieldTable.scalar[static_cast<uint8_t>(Attribute::kServingNetwork)];
    case Attribute::kV1Uli: return kFieldTable.scalar[static_cast<uint8_t>(Attribute::kUli)];
    case Attribute::kV1EndUserAddress: return kFieldTable.scalar[static_cast<uint8_t>(Attribute::kPaa)];
    case Attribute::kV1PdpFromAccess:
    case Attribute::kV1PdpFromGateway:
      if (ebi >= 16) return -1;
      return kFieldTable.bearer[ebi][a == Attribute::kV1PdpFromAccess ? 0 : 1];
  }
  return -1;
}

std::string_view fieldName(std::size_t field) noexcept { return kFieldTable.names[field].view(); }

uint8_t fieldEbi(std::size_t field) noexcept { return kFieldTable.ebi[field]; }

std::array<uint8_t, 2> bearerFields(uint8_t ebi) noexcept { return kFieldTable.bearer[ebi & 0x0f]; }

Attribute fieldAttribute(std::size_t field, uint8_t gtp_version) noexcept {
  const Attribute a = kFieldTable.attribute[field];
  // GTPv1: the same fields as their GTPv2 counterparts (fieldOf()).
  if (gtp_version != 1) return a;
  switch (a) {
    case Attribute::kMsisdn: return Attribute::kV1Msisdn;
    case Attribute::kServingNetwork: return Attribute::kV1Rai;
    case Attribute::kUli: return Attribute::kV1Uli;
    case Attribute::kPaa: return Attribute::kV1EndUserAddress;
    case Attribute::kBearerFromAccess: return Attribute::kV1PdpFromAccess;
    case Attribute::kBearerFromGateway: return Attribute::kV1PdpFromGateway;
    default: return a;
  }
}


bool partialRecord(Attribute attribute, uint8_t ebi, std::span<const uint8_t> value, uint8_t default_ebi,
                   proto::SessionRecord& out) {
  switch (attribute) {
    case Attribute::kImsi: {
      auto v = Imsi::decode(value);
      if (!v) return false;
      assign(out.mutable_imsi(), v->digits.view());
      return true;
    }
    case Attribute::kMsisdn: {
      auto v = Msisdn::decode(value);
      if (!v) return false;
      assign(out.mutable_msisdn(), v->digits.view());
      return true;
    }
    case Attribute::kMei: {
      auto v = Mei::decode(value);
      if (!v) return false;
      assign(out.mutable_mei(), v->digits.view());
      return true;
    }
    case Attribute::kRatType: {
      auto v = RatType::decode(value);
      if (!v) return false;
      out.set_rat_type(v->value);
      return true;
    }
    case Attribute::kServingNetwork:
      if (!ServingNetwork::decode(value)) return false;
      assign(out.mutable_serving_network(), value.data(), value.size());
      return true;
    case Attribute::kUli:
      if (!Uli::decode(value)) return false;
      assign(out.mutable_uli(), value.data(), value.size());
      return true;
    case Attribute::kPaa:
      if (!Paa::decode(value)) return false;
      assign(out.mutable_paa(), value.data(), value.size());
      return true;
    case Attribute::kApnAmbr: {
      auto v = Ambr::decode(value);
      if (!v) return false;
      out.set_apn_ambr_uplink_kbps(v->uplink);
      out.set_apn_ambr_downlink_kbps(v->downlink);
      return true;
    }
    case Attribute::kBearerFromAccess:
    case Attribute::kBearerFromGateway: {
      proto::Bearer* b = out.add_bearers();
      if (!readBearer(value, ebi, attribute == Attribute::kBearerFromAccess, *b)) return false;
      if (ebi == default_ebi && b->charging_id() != 0) out.set_charging_id(b->charging_id());
      return true;
    }
    case Attribute::kBearerRemoved:
      return false;
    case Attribute::kRouting: {
      // Three NUL-terminated names.
      std::string_view rest(reinterpret_cast<const char*>(value.data()), value.size());
      std::string_view names[3];
      for (std::string_view& n : names) {
        const std::size_t end = rest.find('\0');
        if (end == std::string_view::npos || end >= kRoutingNameSize) return false;
        n = rest.substr(0, end);
        rest.remove_prefix(end + 1);
      }
      proto::Proxy* p = out.mutable_proxy();
      assign(p->mutable_pool_name(), names[0]);
      assign(p->mutable_gateway_name(), names[1]);
      assign(p->mutable_rule_name(), names[2]);
      return true;
    }
    case Attribute::kV1Msisdn: {
      auto v = gtp::v1::Msisdn::decode(value);
      if (!v) return false;
      assign(out.mutable_msisdn(), v->digits.view());
      return true;
    }
    case Attribute::kV1Rai:
      // The routeing area's PLMN is the serving network (its 3 octets).
      if (!gtp::v1::Rai::decode(value)) return false;
      assign(out.mutable_serving_network(), value.data(), 3);
      return true;
    case Attribute::kV1Uli:
      if (!gtp::v1::Uli::decode(value)) return false;
      assign(out.mutable_uli(), value.data(), value.size());
      return true;
    case Attribute::kV1EndUserAddress:
      if (!gtp::v1::EndUserAddress::decode(value)) return false;
      assign(out.mutable_paa(), value.data(), value.size());
      return true;
    case Attribute::kV1PdpFromAccess:
    case Attribute::kV1PdpFromGateway: {
      proto::Bearer* b = out.add_bearers();
      if (!readV1Pdp(value, ebi, attribute == Attribute::kV1PdpFromAccess, *b)) return false;
      if (ebi == default_ebi) {
        if (b->charging_id() != 0) out.set_charging_id(b->charging_id());
        // The GGSN's QoS Profile is the one negotiated; the SGSN's stands
        // until the GGSN answered.
        if (!b->v1_qos_profile().empty() &&
            (attribute == Attribute::kV1PdpFromGateway || out.v1_qos_profile().empty()))
          assign(out.mutable_v1_qos_profile(), b->v1_qos_profile());
      }
      return true;
    }
  }
  return false;
}

void coreRecord(const SessionShm& core, uint32_t access_teid, uint16_t partition, uint64_t wall_ns,
                proto::SessionRecord& r) {
  // Every field set below is set on every call, or cleared when it has no
  // value: `r` may hold the previous session's record.
  r.set_gtp_version(core.gtp_version);
  const bool v1 = core.gtp_version == 1;
  // GTPv1: the primary PDP context's NSAPI.
  r.set_nsapi(v1 ? core.default_ebi : 0);
  assign(r.mutable_imsi(), core.imsi, std::min<std::size_t>(core.imsi_length, sizeof core.imsi));
  if (auto apn = Apn::decode({core.apn, std::min<std::size_t>(core.apn_length, sizeof core.apn)})) {
    assign(r.mutable_apn(), apn->text.view());
  } else {
    r.clear_apn();
  }
  r.set_created_unix_ns(core.created_ns);
  r.set_updated_unix_ns(std::max(core.updated_ns, wall_ns));
  proto::Proxy* p = r.mutable_proxy();
  p->set_access_teid(access_teid);
  const TeidParts t = splitTeid(access_teid);
  p->set_gateway_teid(makeTeid(t.partition, t.slot, Leg::kGateway, t.generation));
  p->set_partition(partition);
  // Present, if empty, even before the endpoint is known.
  // F-TEID interface types are GTPv2's (S5/S8 SGW and PGW GTP-C); GTPv1
  // has none.
  setEndpoint(core.sgw, v1 ? 0 : static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpC), *p->mutable_sgw_control());
  setEndpoint(core.pgw, v1 ? 0 : static_cast<uint8_t>(FTeidInterfaceType::kS5S8PgwGtpC), *p->mutable_pgw_control());
  p->set_pool_index(core.pool);
  p->set_gateway_index(core.gateway);
  p->set_rule_index(core.rule);
  assign(p->mutable_gateway_address(), core.gateway_address.bytes, core.gateway_address.family == AF_INET ? 4 : 16);
  p->set_gateway_port(core.gateway_address.port);
  p->set_default_ebi(core.default_ebi);
  p->set_bearer_mask(core.ebis);
  assign(p->mutable_requested_apn(), core.apn, std::min<std::size_t>(core.apn_length, sizeof core.apn));
  p->set_active(core.state == static_cast<uint8_t>(SessionState::kActive));
  p->set_access_socket(core.access_socket);
  p->set_gateway_socket(core.gateway_socket);
  // Clear() keeps the elements, which add_csids() hands out again.
  p->mutable_csids()->Clear();
  for (const CsidShm& c : core.csids) {
    if (c.node_id_type == 0) continue;
    proto::Csid* out = p->add_csids();
    out->set_node_id_type(c.node_id_type - 1u);
    assign(out->mutable_node_id(), c.node_id, c.node_id_type == 2 ? 16 : 4);
    out->set_csid(c.csid);
  }
}

void routingNamesOf(const proto::SessionRecord& r, RoutingNames& out) noexcept {
  out = RoutingNames{};
  auto copy = [](const std::string& from, char (&to)[kRoutingNameSize]) {
    const std::size_t n = std::min(from.size(), kRoutingNameSize - 1);
    std::memcpy(to, from.data(), n);
    to[n] = '\0';
  };
  copy(r.proxy().pool_name(), out.pool);
  copy(r.proxy().gateway_name(), out.gateway);
  copy(r.proxy().rule_name(), out.rule);
}

bool slotFromRecord(const proto::SessionRecord& r, SessionShm& s) noexcept {
  if (!r.has_proxy() || r.proxy().access_teid() == 0) return false;
  const proto::Proxy& p = r.proxy();
  s = SessionShm{};
  s.state = static_cast<uint8_t>(p.active() ? SessionState::kActive : SessionState::kCreating);
  s.generation = splitTeid(p.access_teid()).generation;
  s.gtp_version = static_cast<uint8_t>(r.gtp_version());
  s.default_ebi = static_cast<uint8_t>(p.default_ebi());
  s.free_next = kNoSlot;
  s.pool = static_cast<uint16_t>(p.pool_index());
  s.gateway = static_cast<uint16_t>(p.gateway_index());
  s.rule = static_cast<uint16_t>(p.rule_index());
  s.access_socket = static_cast<uint8_t>(p.access_socket());
  s.gateway_socket = static_cast<uint8_t>(p.gateway_socket());
  s.ebis = static_cast<uint16_t>(p.bearer_mask());
  // A session always knows its SGW; its PGW once the creation was answered.
  if (!endpointFrom(p.sgw_control(), s.sgw)) return false;
  endpointFrom(p.pgw_control(), s.pgw);
  if (p.gateway_address().size() == 4) {
    gtp::Ipv4 a;
    std::memcpy(a.octets.data(), p.gateway_address().data(), 4);
    s.gateway_address = net::Address::v4(a, static_cast<uint16_t>(p.gateway_port()));
  } else if (p.gateway_address().size() == 16) {
    gtp::Ipv6 a;
    std::memcpy(a.octets.data(), p.gateway_address().data(), 16);
    s.gateway_address = net::Address::v6(a, static_cast<uint16_t>(p.gateway_port()));
  }
  s.imsi_length = static_cast<uint8_t>(std::min(r.imsi().size(), sizeof s.imsi));
  std::memcpy(s.imsi, r.imsi().data(), s.imsi_length);
  s.apn_length = static_cast<uint8_t>(std::min(p.requested_apn().size(), sizeof s.apn));
  std::memcpy(s.apn, p.requested_apn().data(), s.apn_length);
  std::size_t i = 0;
  for (const proto::Csid& c : p.csids()) {
    if (i == kCsidNodes) break;
    CsidShm& out = s.csids[i++];
    out.node_id_type = static_cast<uint8_t>(c.node_id_type() + 1);
    out.csid = static_cast<uint16_t>(c.csid());
    std::memcpy(out.node_id, c.node_id().data(), std::min(c.node_id().size(), sizeof out.node_id));
  }
  s.created_ns = r.created_unix_ns();
  s.updated_ns = r.updated_unix_ns();
  return true;
}

bool assemble(const std::map<std::string, std::string>& fields, proto::SessionRecord& out) {
  out.Clear();
  std::map<uint32_t, proto::Bearer> bearers;
  // "core" last: the proxy's view of the time and identity wins.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [field, value] : fields) {
      if ((field == "core") != (pass == 1)) continue;
      proto::SessionRecord partial;
      if (!partial.ParseFromString(value)) return false;
      for (const proto::Bearer& b : partial.bearers()) bearers[b.ebi()].MergeFrom(b);
      partial.clear_bearers();
      out.MergeFrom(partial);
    }
  }
  for (auto& [ebi, b] : bearers) *out.add_bearers() = std::move(b);
  return true;
}

}  // namespace gtpcp::session
