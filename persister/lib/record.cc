#include "persister/lib/record.h"

#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <utility>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/ies.h"
#include "persister/lib/redis_slot.h"
#include "workers/lib/teid.h"

namespace gtpcp::persister {

using namespace gtp::v2;
using worker::Attribute;

namespace {

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
void setEndpoint(const worker::Endpoint& e, uint8_t interface_type, proto::FTeid& out) {
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
          const bool gateway_side = f->interface_type == 5 || f->interface_type == 33 ||
                                    (f->interface_type != 4 && f->interface_type != 31 && !from_access);
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

// A GTPv1 PDP context as one side sent it (worker::Attribute::kV1PdpFrom*):
// TEID Data I, Charging ID, GSN Address for user traffic (IPv4, then an
// IPv6 Alternative) and QoS Profile, as v1 IEs.
bool readV1Pdp(std::span<const uint8_t> v, uint8_t nsapi, bool from_access, proto::Bearer& out) {
  out.set_ebi(nsapi);
  proto::FTeid* user = from_access ? out.mutable_sgw_user_plane() : out.mutable_pgw_user_plane();
  std::size_t pos = 0;
  while (pos < v.size()) {
    const uint8_t type = v[pos];
    if (type == 16 || type == 127) {  // TEID Data I, Charging ID: TV, 4 octets
      if (pos + 5 > v.size()) return false;
      const uint32_t value = (uint32_t{v[pos + 1]} << 24) | (uint32_t{v[pos + 2]} << 16) |
                             (uint32_t{v[pos + 3]} << 8) | v[pos + 4];
      if (type == 16) {
        user->set_teid(value);
      } else {
        out.set_charging_id(value);
      }
      pos += 5;
      continue;
    }
    if (type != 133 && type != 135) return false;  // GSN Address, QoS Profile: TLV
    if (pos + 3 > v.size()) return false;
    const std::size_t length = (std::size_t{v[pos + 1]} << 8) | v[pos + 2];
    if (pos + 3 + length > v.size()) return false;
    const auto value = v.subspan(pos + 3, length);
    pos += 3 + length;
    if (type == 135) {
      assign(out.mutable_v1_qos_profile(), value.data(), value.size());
    } else if (length == 4 && user->ipv4().empty()) {
      assign(user->mutable_ipv4(), value.data(), 4);
    } else if (length == 16 && user->ipv6().empty()) {
      assign(user->mutable_ipv6(), value.data(), 16);
    }
  }
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
  std::array<FieldName, Batch::kFields> names;  // by field
  std::array<Attribute, Batch::kFields> attribute;
  std::array<uint8_t, Batch::kFields> ebi;      // bearer fields
  std::array<uint8_t, 9> scalar;                // Attribute (1..8) -> field
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
  std::array<Field, Batch::kFields> f{};
  constexpr std::pair<Attribute, std::string_view> kScalars[] = {
      {Attribute::kImsi, "imsi"}, {Attribute::kMsisdn, "msisdn"},        {Attribute::kMei, "mei"},
      {Attribute::kRatType, "rat"}, {Attribute::kServingNetwork, "sn"}, {Attribute::kUli, "uli"},
      {Attribute::kPaa, "paa"},   {Attribute::kApnAmbr, "ambr"}};
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
static_assert(Batch::kFields <= 64, "a session's fields are a 64-bit mask");
static_assert(kFieldTable.names[0].view() == "ambr" && kFieldTable.names[3].view() == "b10a" &&
              kFieldTable.names[Batch::kFields - 1].view() == "uli");
static_assert(kFieldTable.names[kFieldTable.bearer[1][1]].view() == "b1g");
static_assert(kFieldTable.names[kFieldTable.scalar[static_cast<uint8_t>(Attribute::kRatType)]].view() == "rat" &&
              kFieldTable.names[kFieldTable.scalar[static_cast<uint8_t>(Attribute::kApnAmbr)]].view() == "ambr");

// The field an attribute goes to, or -1 (an attribute the record does not
// keep, or a bearer number no Bearer Context can carry: EBI is 4 bits).
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

// Appends `n` in decimal.
void appendDecimal(std::string& out, unsigned n) {
  char buf[12];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

// Serialises `m` at the end of the arena: one size computation, no
// intermediate string.
Commands::Piece appendSerialized(const google::protobuf::MessageLite& m, Commands& out) {
  std::string& a = out.arena();
  const std::size_t start = a.size();
  const std::size_t n = m.ByteSizeLong();
  a.resize(start + n);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(a.data() + start));
  return out.piece(start);
}

constexpr std::string_view kMulti = "MULTI", kExec = "EXEC", kHset = "HSET", kHdel = "HDEL", kDel = "DEL",
                           kSadd = "SADD", kSrem = "SREM", kCore = "core";

// A session's key names it by its access TEID in 8 lower-case hex digits,
// which is also what the partition's TEID set holds.
void appendHexTeid(std::string& out, uint32_t teid) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[8];
  for (int i = 7; i >= 0; --i, teid >>= 4) buf[i] = kHex[teid & 0xf];
  out.append(buf, sizeof buf);
}

}  // namespace

KeyNames::KeyNames(std::string group) : group_(std::move(group)), prefix_("gtpcp:" + group_ + ":{" + group_ + ".") {}

void KeyNames::appendPrefix(std::string& out, uint16_t partition) const {
  out.append(prefix_);
  appendDecimal(out, partition);
  out.append("}:");
}

void KeyNames::appendSession(std::string& out, uint16_t partition, uint32_t access_teid) const {
  appendPrefix(out, partition);
  out.append("s:");
  appendHexTeid(out, access_teid);
}

void KeyNames::appendImsi(std::string& out, uint16_t partition, std::string_view imsi) const {
  appendPrefix(out, partition);
  out.append("imsi:");
  out.append(imsi);
}

void KeyNames::appendTeids(std::string& out, uint16_t partition) const {
  appendPrefix(out, partition);
  out.append("teids");
}

std::string KeyNames::tag(uint16_t partition) const {
  std::string out = group_ + ".";
  appendDecimal(out, partition);
  return out;
}

std::string KeyNames::session(uint16_t partition, uint32_t access_teid) const {
  std::string out;
  appendSession(out, partition, access_teid);
  return out;
}

std::string KeyNames::imsi(uint16_t partition, std::string_view imsi) const {
  std::string out;
  appendImsi(out, partition, imsi);
  return out;
}

std::string KeyNames::teids(uint16_t partition) const {
  std::string out;
  appendTeids(out, partition);
  return out;
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

void coreRecord(const worker::SessionShm& core, uint32_t access_teid, uint16_t partition, uint64_t wall_ns,
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
  const worker::TeidParts t = worker::splitTeid(access_teid);
  p->set_gateway_teid(worker::makeTeid(t.partition, t.slot, worker::Leg::kGateway, t.generation));
  p->set_partition(partition);
  // Present, if empty, even before the endpoint is known.
  // F-TEID interface types are GTPv2's (S5/S8 SGW and PGW GTP-C); GTPv1
  // has none.
  setEndpoint(core.sgw, v1 ? 0 : 6, *p->mutable_sgw_control());
  setEndpoint(core.pgw, v1 ? 0 : 7, *p->mutable_pgw_control());
  p->set_pool_index(core.pool);
  p->set_gateway_index(core.gateway);
  p->set_rule_index(core.rule);
  assign(p->mutable_gateway_address(), core.gateway_address.bytes, core.gateway_address.family == AF_INET ? 4 : 16);
  p->set_gateway_port(core.gateway_address.port);
  p->set_default_ebi(core.default_ebi);
  p->set_bearer_mask(core.ebis);
  assign(p->mutable_requested_apn(), core.apn, std::min<std::size_t>(core.apn_length, sizeof core.apn));
  p->set_active(core.state == static_cast<uint8_t>(worker::SessionState::kActive));
  p->set_access_socket(core.access_socket);
  p->set_gateway_socket(core.gateway_socket);
  // Clear() keeps the elements, which add_csids() hands out again.
  p->mutable_csids()->Clear();
  for (const worker::CsidShm& c : core.csids) {
    if (c.node_id_type == 0) continue;
    proto::Csid* out = p->add_csids();
    out->set_node_id_type(c.node_id_type - 1u);
    assign(out->mutable_node_id(), c.node_id, c.node_id_type == 2 ? 16 : 4);
    out->set_csid(c.csid);
  }
}

void Commands::clear() noexcept {
  arena_.clear();
  pieces_.clear();
  commands_.clear();
  pending_.clear();
  args_.clear();
  argvs_.clear();
  transactions_.clear();
}

void Commands::beginTransaction(bool multi) noexcept {
  pending_.push_back(Pending{0, multi, {}, Range{static_cast<uint32_t>(commands_.size()), 0}});
  if (multi) command({text(kMulti)});
}

void Commands::beginCommand() noexcept { commands_.push_back(Range{static_cast<uint32_t>(pieces_.size()), 0}); }

void Commands::arg(const Piece& p) noexcept {
  pieces_.push_back(p);
  ++commands_.back().count;
}

void Commands::command(std::initializer_list<Piece> args) noexcept {
  beginCommand();
  for (const Piece& p : args) arg(p);
}

void Commands::endTransaction(uint16_t slot, const Piece& key) noexcept {
  Pending& t = pending_.back();
  if (t.multi) command({text(kExec)});
  t.slot = slot;
  t.key = key;
  t.commands.count = static_cast<uint32_t>(commands_.size()) - t.commands.first;
}

void Commands::seal() noexcept {
  args_.resize(pieces_.size());
  for (std::size_t i = 0; i < pieces_.size(); ++i) args_[i] = view(pieces_[i]);
  argvs_.resize(commands_.size());
  for (std::size_t i = 0; i < commands_.size(); ++i)
    argvs_[i] = RedisArgv(args_.data() + commands_[i].first, commands_[i].count);
  transactions_.resize(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const Pending& p = pending_[i];
    transactions_[i] =
        Transaction{p.slot, view(p.key), std::span<const RedisArgv>(argvs_.data() + p.commands.first, p.commands.count)};
  }
}

namespace {

constexpr std::size_t kBearerBlockBytes = 32 * 1024;

google::protobuf::ArenaOptions bearerArenaOptions(char* block) {
  google::protobuf::ArenaOptions o;
  o.initial_block = block;
  o.initial_block_size = kBearerBlockBytes;
  return o;
}

}  // namespace

Batch::Batch(const KeyNames& keys)
    : keys_(keys),
      bearer_block_(new char[kBearerBlockBytes]),
      bearer_arena_(bearerArenaOptions(bearer_block_.get())) {
  rehash(256);
}

void Batch::rehash(std::size_t buckets) {
  table_.assign(buckets, 0);
  const std::size_t mask = buckets - 1;
  for (std::size_t i = 0; i < used_; ++i) {
    Session& s = sessions_[i];
    // Fibonacci hashing: TEIDs of one partition differ in their middle bits.
    const uint64_t key = (uint64_t{s.partition} << 32) | s.teid;
    std::size_t b = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
    while (table_[b] != 0) b = (b + 1) & mask;
    table_[b] = static_cast<uint32_t>(i + 1);
    s.bucket = static_cast<uint32_t>(b);
  }
}

Batch::Session& Batch::find(uint16_t partition, uint32_t teid) {
  const std::size_t mask = table_.size() - 1;
  const uint64_t key = (uint64_t{partition} << 32) | teid;
  std::size_t b = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
  for (; table_[b] != 0; b = (b + 1) & mask) {
    Session& s = sessions_[table_[b] - 1];
    if (s.teid == teid && s.partition == partition) return s;
  }
  // A new session: an entry kept from an earlier batch, or a new one.
  if (used_ == sessions_.size()) sessions_.emplace_back();
  Session& s = sessions_[used_];
  table_[b] = static_cast<uint32_t>(++used_);
  s.partition = partition;
  s.teid = teid;
  s.bucket = static_cast<uint32_t>(b);
  s.deleted = false;
  s.index = false;
  s.fields = 0;
  s.removed_first = s.removed_last = kNone;
  // At most half full, so that probes stay short.
  if (2 * used_ > table_.size()) rehash(2 * table_.size());
  return s;
}

bool Batch::add(std::span<const uint8_t> record, uint16_t partition) noexcept {
  worker::ChangeView view;
  if (!worker::ChangeView::parse(record, view)) return false;
  const worker::ChangeHeader& h = *view.header;
  Session& s = find(partition, h.session_teid);
  s.core = h.core;
  s.wall_ns = h.wall_ns;
  if (h.kind == static_cast<uint16_t>(worker::ChangeKind::kDelete)) {
    s.deleted = true;
    s.index = false;
    s.fields = 0;
    s.removed_first = s.removed_last = kNone;
    return true;
  }
  s.deleted = false;
  // The index changes only when the session comes: its IMSI never changes.
  s.index |= h.core.state == static_cast<uint8_t>(worker::SessionState::kCreating);
  return view.forEach([&](Attribute a, uint8_t ebi, std::span<const uint8_t> value) {
    if (a == Attribute::kBearerRemoved) {
      if (ebi >= 16) return;
      s.fields &= ~((uint64_t{1} << kFieldTable.bearer[ebi][0]) | (uint64_t{1} << kFieldTable.bearer[ebi][1]));
      const auto at = static_cast<uint32_t>(removals_.size());
      removals_.push_back(Removal{ebi, kNone});
      if (s.removed_first == kNone) {
        s.removed_first = at;
      } else {
        removals_[s.removed_last].next = at;
      }
      s.removed_last = at;
      return;
    }
    const int field = fieldOf(a, ebi);
    if (field < 0) return;
    // The earlier value, if any, stays in the arena unused until clear().
    s.values[field] = Value{static_cast<uint32_t>(values_.size()), static_cast<uint32_t>(value.size())};
    values_.append(reinterpret_cast<const char*>(value.data()), value.size());
    s.fields |= uint64_t{1} << field;
  });
}

// The attribute a field's octets are, for a session of `gtp_version`: a
// GTPv1 session's fields hold the v1 encodings (fieldOf()).
Attribute encodingOf(Attribute field_attribute, uint8_t gtp_version) noexcept {
  if (gtp_version != 1) return field_attribute;
  switch (field_attribute) {
    case Attribute::kMsisdn: return Attribute::kV1Msisdn;
    case Attribute::kServingNetwork: return Attribute::kV1Rai;
    case Attribute::kUli: return Attribute::kV1Uli;
    case Attribute::kPaa: return Attribute::kV1EndUserAddress;
    case Attribute::kBearerFromAccess: return Attribute::kV1PdpFromAccess;
    case Attribute::kBearerFromGateway: return Attribute::kV1PdpFromGateway;
    default: return field_attribute;
  }
}

void Batch::appendPartial(std::size_t field, const Session& s, Commands& out) {
  const Value& v = s.values[field];
  const std::span<const uint8_t> value(reinterpret_cast<const uint8_t*>(values_.data()) + v.offset, v.length);
  const Attribute a = encodingOf(kFieldTable.attribute[field], s.core.gtp_version);
  if (a != Attribute::kBearerFromAccess && a != Attribute::kBearerFromGateway && a != Attribute::kV1PdpFromAccess &&
      a != Attribute::kV1PdpFromGateway) {
    partial_.Clear();
    if (!partialRecord(a, 0, value, s.core.default_ebi, partial_)) return;
    out.arg(Commands::text(fieldName(field)));
    out.arg(appendSerialized(partial_, out));
    return;
  }
  // Each bearer record is a new arena message; the arena is reset before it
  // outgrows its first block, so a bearer costs no malloc.
  if (bearer_arena_.SpaceUsed() > kBearerBlockBytes / 2) bearer_arena_.Reset();
  auto* partial = google::protobuf::Arena::CreateMessage<proto::SessionRecord>(&bearer_arena_);
  if (!partialRecord(a, kFieldTable.ebi[field], value, s.core.default_ebi, *partial)) return;
  out.arg(Commands::text(fieldName(field)));
  out.arg(appendSerialized(*partial, out));
}

void Batch::appendCommands(const Session& s, Commands& out) {
  std::string& arena = out.arena();
  std::size_t start = arena.size();
  keys_.appendSession(arena, s.partition, s.teid);
  const Commands::Piece session = out.piece(start);
  const uint16_t slot = keySlot(out.view(session));
  const std::string_view imsi(s.core.imsi, std::min<std::size_t>(s.core.imsi_length, sizeof s.core.imsi));
  const auto index = [&] {
    const std::size_t at = arena.size();
    keys_.appendImsi(arena, s.partition, imsi);
    return out.piece(at);
  };
  const auto teids = [&] {
    const std::size_t at = arena.size();
    keys_.appendTeids(arena, s.partition);
    return out.piece(at);
  };
  const auto member = [&] {
    const std::size_t at = arena.size();
    appendHexTeid(arena, s.teid);
    return out.piece(at);
  };
  if (s.deleted) {
    out.beginTransaction(true);
    out.command({Commands::text(kDel), session});
    if (!imsi.empty()) out.command({Commands::text(kSrem), index(), session});
    out.command({Commands::text(kSrem), teids(), member()});
    out.endTransaction(slot, session);
    return;
  }
  // Several writes go as one transaction, a lone HSET as itself.
  out.beginTransaction(s.removed_first != kNone || s.index);
  if (s.removed_first != kNone) {
    out.beginCommand();
    out.arg(Commands::text(kHdel));
    out.arg(session);
    for (uint32_t r = s.removed_first; r != kNone; r = removals_[r].next) {
      for (const uint8_t field : kFieldTable.bearer[removals_[r].ebi]) out.arg(Commands::text(fieldName(field)));
    }
  }
  out.beginCommand();
  out.arg(Commands::text(kHset));
  out.arg(session);
  out.arg(Commands::text(kCore));
  coreRecord(s.core, s.teid, s.partition, s.wall_ns, core_);
  out.arg(appendSerialized(core_, out));
  // A value that does not decode is not written: the peer's IE was malformed.
  for (uint64_t m = s.fields; m != 0; m &= m - 1) appendPartial(static_cast<std::size_t>(std::countr_zero(m)), s, out);
  if (s.index) {
    if (!imsi.empty()) out.command({Commands::text(kSadd), index(), session});
    out.command({Commands::text(kSadd), teids(), member()});
  }
  out.endTransaction(slot, session);
}

void Batch::build(Commands& out) noexcept {
  out.clear();
  for (std::size_t i = 0; i < used_; ++i) appendCommands(sessions_[i], out);
  out.seal();
}

void Batch::clear() noexcept {
  for (std::size_t i = 0; i < used_; ++i) table_[sessions_[i].bucket] = 0;
  used_ = 0;
  values_.clear();
  removals_.clear();
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
