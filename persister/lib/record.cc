#include "persister/lib/record.h"

#include <sys/socket.h>

#include <cstdio>
#include <cstring>

#include "common/gtp/v2/ies.h"
#include "workers/lib/teid.h"

namespace gtpcp::persister {

using namespace gtp::v2;
using worker::Attribute;

namespace {

std::string octets(const uint8_t* p, std::size_t n) { return std::string(reinterpret_cast<const char*>(p), n); }

void setFTeid(const FTeid& f, proto::FTeid& out) {
  out.set_interface_type(f.interface_type);
  out.set_teid(f.teid);
  if (f.ipv4) out.set_ipv4(octets(f.ipv4->octets.data(), 4));
  if (f.ipv6) out.set_ipv6(octets(f.ipv6->octets.data(), 16));
}

void setEndpoint(const worker::Endpoint& e, uint8_t interface_type, proto::FTeid& out) {
  if (!e.address.valid()) return;
  out.set_interface_type(interface_type);
  out.set_teid(e.teid);
  if (e.address.family == AF_INET) {
    out.set_ipv4(octets(e.address.bytes, 4));
  } else {
    out.set_ipv6(octets(e.address.bytes, 16));
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
          // S5/S8-U: 4 SGW, 5 PGW; S2b-U: 31 ePDG, 32 PGW... a side keeps
          // the first user-plane F-TEID it names.
          proto::FTeid* slot = from_access ? out.mutable_sgw_user_plane() : out.mutable_pgw_user_plane();
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

std::string fieldOf(Attribute a, uint8_t ebi) {
  switch (a) {
    case Attribute::kImsi: return "imsi";
    case Attribute::kMsisdn: return "msisdn";
    case Attribute::kMei: return "mei";
    case Attribute::kRatType: return "rat";
    case Attribute::kServingNetwork: return "sn";
    case Attribute::kUli: return "uli";
    case Attribute::kPaa: return "paa";
    case Attribute::kApnAmbr: return "ambr";
    case Attribute::kBearerFromAccess: return "b" + std::to_string(ebi) + "a";
    case Attribute::kBearerFromGateway: return "b" + std::to_string(ebi) + "g";
    case Attribute::kBearerRemoved: return {};
  }
  return {};
}

// The ID the index holds for a session: its key's last part.
std::string hexTeid(uint32_t teid) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", teid);
  return buf;
}

}  // namespace

std::string KeyNames::tag(uint16_t partition) const { return group_ + "." + std::to_string(partition); }

std::string KeyNames::session(uint16_t partition, uint32_t access_teid) const {
  return "gtpcp:" + group_ + ":{" + tag(partition) + "}:s:" + hexTeid(access_teid);
}

std::string KeyNames::imsi(uint16_t partition, std::string_view imsi) const {
  return "gtpcp:" + group_ + ":{" + tag(partition) + "}:imsi:" + std::string(imsi);
}

std::string KeyNames::teids(uint16_t partition) const { return "gtpcp:" + group_ + ":{" + tag(partition) + "}:teids"; }

bool partialRecord(Attribute attribute, uint8_t ebi, std::span<const uint8_t> value, uint8_t default_ebi,
                   proto::SessionRecord& out) {
  switch (attribute) {
    case Attribute::kImsi: {
      auto v = Imsi::decode(value);
      if (!v) return false;
      out.set_imsi(std::string(v->digits.view()));
      return true;
    }
    case Attribute::kMsisdn: {
      auto v = Msisdn::decode(value);
      if (!v) return false;
      out.set_msisdn(std::string(v->digits.view()));
      return true;
    }
    case Attribute::kMei: {
      auto v = Mei::decode(value);
      if (!v) return false;
      out.set_mei(std::string(v->digits.view()));
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
      out.set_serving_network(octets(value.data(), value.size()));
      return true;
    case Attribute::kUli:
      if (!Uli::decode(value)) return false;
      out.set_uli(octets(value.data(), value.size()));
      return true;
    case Attribute::kPaa:
      if (!Paa::decode(value)) return false;
      out.set_paa(octets(value.data(), value.size()));
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
  }
  return false;
}

proto::SessionRecord coreRecord(const worker::SessionShm& core, uint32_t access_teid, uint16_t partition,
                                uint64_t wall_ns) {
  proto::SessionRecord r;
  r.set_gtp_version(core.gtp_version);
  r.set_imsi(std::string(core.imsi, std::min<std::size_t>(core.imsi_length, sizeof core.imsi)));
  if (auto apn = Apn::decode({core.apn, std::min<std::size_t>(core.apn_length, sizeof core.apn)})) {
    r.set_apn(std::string(apn->text.view()));
  }
  r.set_created_unix_ns(core.created_ns);
  r.set_updated_unix_ns(std::max(core.updated_ns, wall_ns));
  proto::Proxy* p = r.mutable_proxy();
  p->set_access_teid(access_teid);
  const worker::TeidParts t = worker::splitTeid(access_teid);
  p->set_gateway_teid(worker::makeTeid(t.partition, t.slot, worker::Leg::kGateway, t.generation));
  p->set_partition(partition);
  setEndpoint(core.sgw, 6, *p->mutable_sgw_control());
  setEndpoint(core.pgw, 7, *p->mutable_pgw_control());
  p->set_pool_index(core.pool);
  p->set_gateway_index(core.gateway);
  p->set_rule_index(core.rule);
  p->set_gateway_address(octets(core.gateway_address.bytes, core.gateway_address.family == AF_INET ? 4 : 16));
  p->set_gateway_port(core.gateway_address.port);
  p->set_default_ebi(core.default_ebi);
  p->set_bearer_mask(core.ebis);
  p->set_requested_apn(octets(core.apn, std::min<std::size_t>(core.apn_length, sizeof core.apn)));
  p->set_active(core.state == static_cast<uint8_t>(worker::SessionState::kActive));
  p->set_access_socket(core.access_socket);
  p->set_gateway_socket(core.gateway_socket);
  for (const worker::CsidShm& c : core.csids) {
    if (c.node_id_type == 0) continue;
    proto::Csid* out = p->add_csids();
    out->set_node_id_type(c.node_id_type - 1u);
    out->set_node_id(octets(c.node_id, c.node_id_type == 2 ? 16 : 4));
    out->set_csid(c.csid);
  }
  return r;
}

bool Batch::add(std::span<const uint8_t> record, uint16_t partition) {
  worker::ChangeView view;
  if (!worker::ChangeView::parse(record, view)) return false;
  const worker::ChangeHeader& h = *view.header;
  Pending& p = sessions_[SessionKey{partition, h.session_teid}];
  p.imsi.assign(h.core.imsi, std::min<std::size_t>(h.core.imsi_length, sizeof h.core.imsi));
  p.core = h.core;
  p.wall_ns = h.wall_ns;
  if (h.kind == static_cast<uint16_t>(worker::ChangeKind::kDelete)) {
    p.deleted = true;
    p.index = false;
    p.set.clear();
    p.removed.clear();
    return true;
  }
  p.deleted = false;
  // The index changes only when the session comes: its IMSI never changes.
  p.index |= h.core.state == static_cast<uint8_t>(worker::SessionState::kCreating);
  return view.forEach([&](Attribute a, uint8_t ebi, std::span<const uint8_t> value) {
    if (a == Attribute::kBearerRemoved) {
      for (const char side : {'a', 'g'}) {
        std::string field = "b" + std::to_string(ebi) + side;
        p.set.erase(field);
        p.removed.push_back(std::move(field));
      }
      return;
    }
    std::string field = fieldOf(a, ebi);
    if (field.empty()) return;
    p.set[std::move(field)] = Raw{a, ebi, std::string(reinterpret_cast<const char*>(value.data()), value.size())};
  });
}

void Batch::appendCommands(const SessionKey& key, const Pending& p, std::vector<Command>& out) const {
  const std::string session = keys_.session(key.partition, key.teid);
  const std::string index = p.imsi.empty() ? std::string() : keys_.imsi(key.partition, p.imsi);
  if (p.deleted) {
    out.push_back(Command{"DEL", session});
    if (!index.empty()) out.push_back(Command{"SREM", index, session});
    out.push_back(Command{"SREM", keys_.teids(key.partition), hexTeid(key.teid)});
    return;
  }
  if (!p.removed.empty()) {
    Command hdel{"HDEL", session};
    hdel.insert(hdel.end(), p.removed.begin(), p.removed.end());
    out.push_back(std::move(hdel));
  }
  Command hset{"HSET", session, "core", coreRecord(p.core, key.teid, key.partition, p.wall_ns).SerializeAsString()};
  for (const auto& [field, raw] : p.set) {
    proto::SessionRecord partial;
    const auto* v = reinterpret_cast<const uint8_t*>(raw.value.data());
    // A value that does not decode is not written: the peer's IE was malformed.
    if (!partialRecord(raw.attribute, raw.ebi, {v, raw.value.size()}, p.core.default_ebi, partial)) continue;
    hset.push_back(field);
    hset.push_back(partial.SerializeAsString());
  }
  out.push_back(std::move(hset));
  if (p.index) {
    if (!index.empty()) out.push_back(Command{"SADD", index, session});
    out.push_back(Command{"SADD", keys_.teids(key.partition), hexTeid(key.teid)});
  }
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

}  // namespace gtpcp::persister
