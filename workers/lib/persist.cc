#include "persist.h"

#include <array>
#include <cstring>

#include "common/gtp/v2/ies.h"

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

// Appends attributes to a record being built; drops what does not fit (the
// record stays valid: a torn Bearer Context is never written).
class Appender {
 public:
  Appender(std::span<uint8_t> out, std::size_t pos) noexcept : out_(out), pos_(pos) {}
  void add(Attribute a, uint8_t ebi, std::span<const uint8_t> value) noexcept {
    if (value.size() > 0xffff || out_.size() - pos_ < sizeof(AttributeHeader) + value.size()) return;
    const AttributeHeader h{static_cast<uint8_t>(a), ebi, static_cast<uint16_t>(value.size())};
    std::memcpy(out_.data() + pos_, &h, sizeof h);
    pos_ += sizeof h;
    if (!value.empty()) std::memcpy(out_.data() + pos_, value.data(), value.size());
    pos_ += value.size();
  }
  std::size_t size() const noexcept { return pos_; }

 private:
  std::span<uint8_t> out_;
  std::size_t pos_;
};

Attribute attributeOf(IeType type, Leg from) noexcept {
  switch (type) {
    case IeType::kImsi: return Attribute::kImsi;
    case IeType::kMsisdn: return Attribute::kMsisdn;
    case IeType::kMei: return Attribute::kMei;
    case IeType::kRatType: return Attribute::kRatType;
    case IeType::kServingNetwork: return Attribute::kServingNetwork;
    case IeType::kUli: return Attribute::kUli;
    case IeType::kPaa: return Attribute::kPaa;
    case IeType::kAmbr: return Attribute::kApnAmbr;
    case IeType::kBearerContext:
      return from == Leg::kAccess ? Attribute::kBearerFromAccess : Attribute::kBearerFromGateway;
    default: return Attribute{};
  }
}

std::span<uint8_t> begin(PersistSink& sink, ChangeKind kind, uint16_t partition, uint32_t teid,
                         uint64_t wall_ns, const SessionShm* core) noexcept {
  auto out = sink.reserve(kind, partition, ChangeWriter::kMaxRecord);
  if (out.size() < sizeof(ChangeHeader)) return {};
  ChangeHeader h{};
  h.session_teid = teid;
  h.kind = static_cast<uint16_t>(kind);
  h.wall_ns = wall_ns;
  if (core != nullptr) h.core = *core;
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

// A Bearer Context the record keeps, and its EBI: one that names the
// bearer and carries the side's user-plane F-TEID. The persister stores a
// side's context whole, so a context without one (a Modify Bearer Response's
// is EBI and Cause) would replace what the creation stored with nothing.
bool keptBearer(const Message& m, const Ie& ie, uint8_t& ebi) noexcept {
  const Ie* e = m.findChild(ie, IeType::kEbi, 0);
  if (e == nullptr) return false;
  auto v = read<Ebi>(m, *e);
  if (!v || v->value == 0) return false;  // a bearer the PGW has not numbered yet
  ebi = v->value;
  for (const Ie& child : m.children(ie))
    if (child.ieType() == IeType::kFTeid) return true;
  return false;
}

}  // namespace

bool ChangeWriter::upsert(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns,
                          const Message* m, Leg from, std::span<const uint8_t> routing) noexcept {
  auto out = begin(sink_, ChangeKind::kUpsert, partition, session_teid, wall_ns, &session);
  if (out.empty()) return false;
  Appender a(out, sizeof(ChangeHeader));
  if (!routing.empty()) a.add(Attribute::kRouting, 0, routing);
  if (m != nullptr) {
    for (const Ie& ie : m->topLevel()) {
      // Instance 0 only: other instances of these types are other things
      // (a Bearer Context to be removed is instance 1 in some messages).
      if (ie.instance() != 0) continue;
      const Attribute attr = attributeOf(ie.ieType(), from);
      if (attr == Attribute{}) continue;
      uint8_t ebi = 0;
      if (ie.ieType() == IeType::kBearerContext && !keptBearer(*m, ie, ebi)) continue;
      a.add(attr, ebi, m->value(ie));
    }
  }
  sink_.commit(a.size());
  return true;
}

bool ChangeWriter::upsertV1(const SessionShm& session, uint32_t session_teid, uint16_t partition, uint64_t wall_ns,
                            const gtp::v1::Message& m, Leg from, uint8_t nsapi,
                            std::span<const uint8_t> routing) noexcept {
  namespace v1 = gtp::v1;
  auto out = begin(sink_, ChangeKind::kUpsert, partition, session_teid, wall_ns, &session);
  if (out.empty()) return false;
  Appender a(out, sizeof(ChangeHeader));
  if (!routing.empty()) a.add(Attribute::kRouting, 0, routing);
  // The PDP context's IEs, gathered as they come (raw, header included).
  std::array<uint8_t, 96> pdp;
  std::size_t pdp_size = 0;
  bool has_teid = false;
  std::size_t gsn_position = 0;
  // The GSN Addresses for user traffic are the odd ones (after each control
  // one), except in an Update PDP Context Response from the SGSN, which has
  // user-traffic addresses only (TS 29.060 §7.3.4).
  const bool user_only =
      m.header().message_type == static_cast<uint8_t>(v1::MessageType::kUpdatePdpContextResponse) &&
      from == Leg::kAccess;
  auto keep = [&](const v1::Ie& ie) {
    const auto raw = m.raw(ie);
    if (pdp_size + raw.size() > pdp.size()) return;
    std::memcpy(pdp.data() + pdp_size, raw.data(), raw.size());
    pdp_size += raw.size();
  };
  for (const v1::Ie& ie : m.ies()) {
    switch (ie.ieType()) {
      case v1::IeType::kImsi: a.add(Attribute::kImsi, 0, m.value(ie)); break;
      case v1::IeType::kMsisdn: a.add(Attribute::kV1Msisdn, 0, m.value(ie)); break;
      case v1::IeType::kImeiSv: a.add(Attribute::kMei, 0, m.value(ie)); break;
      case v1::IeType::kRatType: a.add(Attribute::kRatType, 0, m.value(ie)); break;
      case v1::IeType::kRai: a.add(Attribute::kV1Rai, 0, m.value(ie)); break;
      case v1::IeType::kUli: a.add(Attribute::kV1Uli, 0, m.value(ie)); break;
      case v1::IeType::kEndUserAddress:
        if (from == Leg::kGateway) a.add(Attribute::kV1EndUserAddress, 0, m.value(ie));
        break;
      case v1::IeType::kTeidDataI:
        has_teid = true;
        keep(ie);
        break;
      case v1::IeType::kChargingId:
      case v1::IeType::kQosProfile: keep(ie); break;
      case v1::IeType::kGsnAddress:
        if (user_only || gsn_position % 2 == 1) keep(ie);
        ++gsn_position;
        break;
      default: break;
    }
  }
  // Without its TEID Data I an answer says nothing of the context's user
  // plane: what the creation stored stays.
  if (has_teid && nsapi <= 15) {
    a.add(from == Leg::kAccess ? Attribute::kV1PdpFromAccess : Attribute::kV1PdpFromGateway, nsapi,
          std::span<const uint8_t>(pdp.data(), pdp_size));
  }
  sink_.commit(a.size());
  return true;
}

bool ChangeWriter::carriesAttributes(const Message& m, Leg from) noexcept {
  for (const Ie& ie : m.topLevel()) {
    if (ie.instance() != 0 || attributeOf(ie.ieType(), from) == Attribute{}) continue;
    uint8_t ebi = 0;
    if (ie.ieType() != IeType::kBearerContext || keptBearer(m, ie, ebi)) return true;
  }
  return false;
}

bool ChangeWriter::removeBearers(const SessionShm& session, uint32_t session_teid, uint16_t partition,
                                 uint64_t wall_ns, uint16_t ebis) noexcept {
  auto out = begin(sink_, ChangeKind::kUpsert, partition, session_teid, wall_ns, &session);
  if (out.empty()) return false;
  Appender a(out, sizeof(ChangeHeader));
  for (uint8_t ebi = 1; ebi < 16; ++ebi)
    if (ebis & (1u << ebi)) a.add(Attribute::kBearerRemoved, ebi, {});
  sink_.commit(a.size());
  return true;
}

bool ChangeWriter::erase(const SessionShm& session, uint32_t session_teid, uint16_t partition,
                         uint64_t wall_ns) noexcept {
  auto out = begin(sink_, ChangeKind::kDelete, partition, session_teid, wall_ns, &session);
  if (out.empty()) return false;
  sink_.commit(sizeof(ChangeHeader));
  return true;
}

}  // namespace gtpcp::worker
