#include "tests/integration/raw_gtp.h"

#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/group/session_identity.h"
#include "common/gtp/v2/message.h"
#include "common/partition.h"
#include "tools/peer/messages.h"

namespace gtpcp::integration {

namespace {

using namespace gtp::v2;

// One subscriber's identities, as the emulator derives them from its index.
peer::Identities identitiesOf(uint64_t imsi) {
  peer::Identities ids;
  ids.imsi_start = imsi;
  ids.imsi_digits = 15;
  ids.msisdn_start = 15550000000ull + imsi % 1000000;
  ids.msisdn_digits = 11;
  ids.count = 1;
  ids.plmn.mcc = {'0', '0', '1'};
  ids.plmn.mnc = {'0', '1', 0};
  ids.plmn.mnc_digits = 2;
  return ids;
}

Bytes take(const gtp::Result<std::size_t>& n, Bytes& buffer, const char* what) {
  if (!n) throw std::runtime_error(std::string("building ") + what + " failed");
  buffer.resize(*n);
  return buffer;
}

}  // namespace

Bytes createSessionRequest(uint32_t sequence, uint64_t imsi, const gtp::Ipv4& sgw, uint32_t sgw_teid,
                           std::string_view apn_text) {
  const peer::Identities ids = identitiesOf(imsi);
  Apn apn;
  for (char c : apn_text) apn.text.push(c);
  peer::CreateSessionRequestArgs a;
  a.sequence = sequence;
  a.ids = &ids;
  a.apn = &apn;
  a.sgw_addr = peer::fromIpv4(sgw);
  a.sgw_teid = sgw_teid;
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildCreateSessionRequest(a, b), b, "Create Session Request");
}

Bytes modifyBearerRequest(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& sgw,
                          uint32_t modify_count, uint32_t sender_teid) {
  const peer::Identities ids = identitiesOf(imsi);
  peer::ModifyBearerRequestArgs a;
  a.sequence = sequence;
  a.header_teid = header_teid;
  a.ids = &ids;
  a.sgw_addr = peer::fromIpv4(sgw);
  a.modify_count = modify_count;
  a.sender_teid = sender_teid;
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildModifyBearerRequest(a, b), b, "Modify Bearer Request");
}

Bytes deleteSessionRequest(uint32_t sequence, uint32_t header_teid) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildDeleteSessionRequest(sequence, header_teid, peer::kDefaultEbi, b), b,
              "Delete Session Request");
}

Bytes createBearerRequest(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& pgw) {
  peer::CreateBearerRequestArgs a;
  a.sequence = sequence;
  a.header_teid = header_teid;
  a.imsi = imsi;
  a.pgw_addr = peer::fromIpv4(pgw);
  a.charging_id = 0x600 + static_cast<uint32_t>(imsi % 1000);
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildCreateBearerRequest(a, b), b, "Create Bearer Request");
}

Bytes createBearerResponse(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& sgw,
                           const gtp::Ipv4& pgw) {
  peer::CreateBearerResponseArgs a;
  a.sequence = sequence;
  a.header_teid = header_teid;
  a.imsi = imsi;
  a.sgw_addr = peer::fromIpv4(sgw);
  a.pgw_u_addr = peer::fromIpv4(pgw);
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildCreateBearerResponse(a, b), b, "Create Bearer Response");
}

Bytes deleteBearerRequest(uint32_t sequence, uint32_t header_teid, uint8_t ebi) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildDeleteBearerRequest(sequence, header_teid, ebi, b), b, "Delete Bearer Request");
}

Bytes deleteBearerResponse(uint32_t sequence, uint32_t header_teid, uint8_t ebi) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildBearerResponse(MessageType::kDeleteBearerResponse, sequence, header_teid, kCauseAccepted,
                                        ebi, b),
              b, "Delete Bearer Response");
}

Bytes echoRequest(uint32_t sequence, uint8_t recovery) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildEchoRequest(sequence, recovery, b), b, "Echo Request");
}

Bytes createSessionResponse(uint32_t sequence, uint32_t header_teid, const gtp::Ipv4& pgw, uint32_t pgw_teid,
                            uint64_t imsi, uint8_t cause) {
  peer::CreateSessionResponseArgs a;
  a.sequence = sequence;
  a.header_teid = header_teid;
  a.cause = cause;
  a.pgw_addr = peer::fromIpv4(pgw);
  a.pgw_teid = pgw_teid;
  a.ue_ipv4 = 0x0a000000u | static_cast<uint32_t>(imsi & 0xffffff);
  a.pgw_u_teid = peer::userPlaneTeid(peer::PlaneSide::kPgw, imsi, a.pgw_addr);
  a.charging_id = pgw_teid;
  a.apn_ambr = Ambr{50000, 100000};
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildCreateSessionResponse(a, b), b, "Create Session Response");
}

Bytes modifyBearerResponse(uint32_t sequence, uint32_t header_teid, uint8_t cause) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildModifyBearerResponse(sequence, header_teid, cause, peer::kDefaultEbi, b), b,
              "Modify Bearer Response");
}

Bytes deleteSessionResponse(uint32_t sequence, uint32_t header_teid, uint8_t cause) {
  Bytes b(peer::kMaxBuiltMessage);
  return take(peer::buildDeleteSessionResponse(sequence, header_teid, cause, b), b, "Delete Session Response");
}

std::optional<FTeid> Decoded::fteid(uint8_t interface_type) const {
  for (const auto& f : fteids) {
    if (f.interface_type == interface_type) return f;
  }
  return std::nullopt;
}

std::string Decoded::describe() const {
  std::ostringstream o;
  if (!ok) return "undecodable: " + error;
  o << "type " << int(type) << " teid " << (teid_present ? std::to_string(teid) : std::string("-")) << " seq "
    << sequence;
  if (cause) o << " cause " << int(*cause);
  if (recovery) o << " recovery " << int(*recovery);
  if (imsi) o << " imsi " << *imsi;
  for (const auto& f : fteids) {
    o << " fteid{if " << int(f.interface_type) << " teid 0x" << std::hex << f.teid << std::dec;
    if (f.ipv4) o << " " << int(f.ipv4->octets[0]) << "." << int(f.ipv4->octets[1]) << "." << int(f.ipv4->octets[2])
                  << "." << int(f.ipv4->octets[3]);
    o << "}";
  }
  return o.str();
}

Decoded decode(std::span<const uint8_t> bytes) {
  Decoded d;
  auto m = std::make_unique<Message>();
  if (auto r = m->decode(bytes); !r) {
    d.error = std::string(gtp::errcName(r.error().code));
    return d;
  }
  d.ok = true;
  d.type = m->header().message_type;
  d.teid_present = m->header().teidPresent();
  d.teid = m->header().teid;
  d.sequence = m->header().sequence_number;
  if (auto c = readFirst<CauseIe>(*m)) d.cause = c->value;
  if (auto r = readFirst<Recovery>(*m)) d.recovery = r->value;
  if (auto i = readFirst<Imsi>(*m)) {
    uint64_t v = 0;
    if (peer::digitsValue(i->digits.view(), v)) d.imsi = v;
  }
  for (const Ie& ie : m->ies()) {
    if (ie.ieType() != IeType::kFTeid) continue;
    if (auto f = read<FTeid>(*m, ie)) d.fteids.push_back(*f);
  }
  return d;
}

uint16_t partitionOfImsi(uint64_t imsi) {
  const Bytes csr = createSessionRequest(1, imsi, gtp::Ipv4{{127, 0, 0, 1}}, 1);
  auto m = std::make_unique<Message>();
  if (!m->decode(csr)) throw std::runtime_error("own Create Session Request does not decode");
  return group::partitionOfCreateSession(*m);
}

std::vector<uint64_t> imsisOfWorker(uint64_t start, std::size_t count, uint16_t worker, uint16_t workers) {
  std::vector<uint64_t> out;
  for (uint64_t imsi = start; out.size() < count; ++imsi) {
    if (workerOf(partitionOfImsi(imsi), workers) == worker) out.push_back(imsi);
  }
  return out;
}

Bytes PgwResponder::answer(std::span<const uint8_t> request) {
  const Decoded r = decode(request);
  if (!r.ok) return {};
  switch (static_cast<MessageType>(r.type)) {
    case MessageType::kCreateSessionRequest: {
      auto sender = r.fteid(kIfSgwGtpC);
      if (!sender) return {};
      ++creates;
      const uint32_t teid = next_teid_++;
      sessions_[teid] = Session{r.imsi.value_or(0), sender->teid};
      return createSessionResponse(r.sequence, sender->teid, self_, teid, r.imsi.value_or(0));
    }
    case MessageType::kModifyBearerRequest:
    case MessageType::kDeleteSessionRequest: {
      const bool modify = r.type == static_cast<uint8_t>(MessageType::kModifyBearerRequest);
      auto it = sessions_.find(r.teid);
      if (it == sessions_.end()) {
        ++unknown;
        return modify ? modifyBearerResponse(r.sequence, 0, kCauseContextNotFound)
                      : deleteSessionResponse(r.sequence, 0, kCauseContextNotFound);
      }
      const uint32_t proxy_teid = it->second.proxy_teid;
      if (modify) {
        ++modifies;
        return modifyBearerResponse(r.sequence, proxy_teid);
      }
      ++deletes;
      sessions_.erase(it);
      return deleteSessionResponse(r.sequence, proxy_teid);
    }
    default:
      return {};
  }
}

}  // namespace gtpcp::integration
