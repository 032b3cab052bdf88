#include "tools/peer/messages.h"

#include <bit>
#include <cstring>

#include "common/gtp/v2/builder.h"

namespace gtpcp::peer {

using gtp::Digits;
using gtp::Errc;
using gtp::Result;
using namespace gtp::v2;

gtp::Digits toDigits(uint64_t value, uint8_t width) noexcept {
  Digits d;
  if (width == 0 || width > 20) return d;
  char buf[20];
  for (int i = width - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  if (value != 0) return d;  // does not fit in `width` digits
  for (uint8_t i = 0; i < width; ++i) d.push(buf[i]);
  return d;
}

bool digitsValue(std::string_view digits, uint64_t& out) noexcept {
  if (digits.empty() || digits.size() > 19) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

uint32_t userPlaneTeid(PlaneSide side, uint64_t imsi, const IpAddress& addr) noexcept {
  // An IPv4 address is taken as it is, so IPv4 TEIDs are what they always
  // were; an IPv6 one folds into the 56 bits that survive the shift below.
  uint64_t a = addr.v4();
  if (!addr.isV4()) {
    uint64_t high = 0, low = 0;
    std::memcpy(&high, addr.octets.data(), 8);
    std::memcpy(&low, addr.octets.data() + 8, 8);
    a = high ^ std::rotl(low, 32);
    a ^= a >> 56;
  }
  // splitmix64 finaliser over the three inputs: any change to the address or
  // the TEID on the way shows as a mismatch.
  uint64_t x = imsi * 0x9e3779b97f4a7c15ull ^ (a << 8) ^ static_cast<uint64_t>(side);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  auto t = static_cast<uint32_t>(x >> 32);
  if (t == 0 || t == 0xffffffffu) t = 1;
  return t;
}

namespace {

uint32_t inverseMod32(uint32_t a) noexcept {
  uint32_t x = a;  // Newton's iteration: each step doubles the correct low bits
  for (int i = 0; i < 5; ++i) x *= 2u - a * x;
  return x;
}

}  // namespace

ControlTeids::ControlTeids(uint32_t count) noexcept : count_(count) {
  // Pick a multiplier that never gives 0xffffffff in the range.
  for (;;) {
    inverse_ = inverseMod32(multiplier_);
    const uint32_t reserved = 0xffffffffu * inverse_;  // i + 1 that maps to 0xffffffff
    if (reserved == 0 || reserved > count) break;
    multiplier_ += 2;
  }
}

gtp::Digits imeisvDigits(uint32_t index) noexcept {
  Digits d;
  for (char c : std::string_view("35209900")) d.push(c);
  const Digits serial = toDigits(index % 1000000, 6);
  for (char c : serial.view()) d.push(c);
  d.push('0');
  d.push('1');
  return d;
}

gtp::Ipv4 toIpv4(uint32_t addr) noexcept {
  return gtp::Ipv4{{static_cast<uint8_t>(addr >> 24), static_cast<uint8_t>(addr >> 16),
                    static_cast<uint8_t>(addr >> 8), static_cast<uint8_t>(addr)}};
}

uint32_t fromIpv4(const gtp::Ipv4& a) noexcept {
  return (uint32_t{a.octets[0]} << 24) | (uint32_t{a.octets[1]} << 16) |
         (uint32_t{a.octets[2]} << 8) | uint32_t{a.octets[3]};
}

namespace {

Result<std::size_t> finish(Builder& b) noexcept {
  auto r = b.finish();
  if (!r) return tl::unexpected(r.error());
  return r->size();
}

CauseIe cause(uint8_t value) noexcept {
  CauseIe c;
  c.value = value;
  return c;
}

// Starts a response: the header, then the Cause every response carries first.
void beginResponse(Builder& b, MessageType type, uint32_t header_teid, uint32_t sequence,
                   uint8_t cause_value) noexcept {
  b.begin(type, header_teid, sequence);
  b.add(cause(cause_value));
}

Uli uli(const Identities& ids, uint32_t index, uint32_t variant) noexcept {
  Uli u;
  u.tai = Uli::Tai{ids.plmn, static_cast<uint16_t>(1 + (index + variant) % 1000)};
  u.ecgi = Uli::Ecgi{ids.plmn, (index * 16 + variant % 16) & 0x0fffffffu};
  return u;
}

}  // namespace

Result<std::size_t> buildCreateSessionRequest(const CreateSessionRequestArgs& a,
                                              std::span<uint8_t> out) noexcept {
  if (a.ids == nullptr || a.apn == nullptr) return gtp::fail(Errc::kInvalidArgument);
  const Identities& ids = *a.ids;
  const uint64_t imsi = ids.imsi(a.index);
  Builder b(out);
  b.begin(MessageType::kCreateSessionRequest, 0u, a.sequence);
  b.add(Imsi{toDigits(imsi, ids.imsi_digits)});
  b.add(Msisdn{toDigits(ids.msisdn(a.index), ids.msisdn_digits)});
  b.add(Mei{imeisvDigits(a.index)});
  b.add(uli(ids, a.index, 0));
  b.add(ServingNetwork{ids.plmn});
  b.add(RatType{kRatEutran});
  Indication indication;
  indication.size = 3;  // no flag applies to an initial attach over GTP-based S5
  b.add(indication);
  b.add(makeFTeid(kIfS5S8SgwGtpC, a.sgw_teid, a.sgw_addr), 0);
  b.add(*a.apn);
  b.add(SelectionMode{0});
  b.add(PdnType{1});
  Paa paa;
  paa.pdn_type = 1;
  paa.ipv4 = gtp::Ipv4{};
  b.add(paa);
  b.add(Ambr{50000, 100000});
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{a.ebi});
  BearerQos qos;
  qos.pci = true;
  qos.pl = 15;
  qos.pvi = true;
  qos.qci = 9;
  b.add(qos);
  b.add(makeFTeid(kIfS5S8SgwGtpU, userPlaneTeid(PlaneSide::kSgw, imsi, a.sgw_addr), a.sgw_addr), 2);
  b.endGrouped();
  b.add(Recovery{a.recovery});
  b.add(UeTimeZone{0x40, 0});
  b.add(ChargingCharacteristics{0x0800});
  return finish(b);
}

Result<std::size_t> buildModifyBearerRequest(const ModifyBearerRequestArgs& a,
                                             std::span<uint8_t> out) noexcept {
  if (a.ids == nullptr) return gtp::fail(Errc::kInvalidArgument);
  const uint64_t imsi = a.ids->imsi(a.index);
  Builder b(out);
  b.begin(MessageType::kModifyBearerRequest, a.header_teid, a.sequence);
  b.add(uli(*a.ids, a.index, a.modify_count + 1));
  b.add(RatType{kRatEutran});
  if (a.sender_teid != 0) b.add(makeFTeid(kIfS5S8SgwGtpC, a.sender_teid, a.sgw_addr));
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{a.ebi});
  // Table 7.2.7-2: S5/S8-U SGW F-TEID is instance 1 in a Modify Bearer Request.
  b.add(makeFTeid(kIfS5S8SgwGtpU, userPlaneTeid(PlaneSide::kSgw, imsi, a.sgw_addr), a.sgw_addr), 1);
  b.endGrouped();
  return finish(b);
}

Result<std::size_t> buildDeleteSessionRequest(uint32_t sequence, uint32_t header_teid, uint8_t lbi,
                                              std::span<uint8_t> out) noexcept {
  Builder b(out);
  b.begin(MessageType::kDeleteSessionRequest, header_teid, sequence);
  b.add(Ebi{lbi});
  return finish(b);
}

Result<std::size_t> buildEchoRequest(uint32_t sequence, uint8_t recovery,
                                     std::span<uint8_t> out) noexcept {
  Builder b(out);
  b.begin(MessageType::kEchoRequest, std::nullopt, sequence);
  b.add(Recovery{recovery});
  return finish(b);
}

Result<std::size_t> buildEchoResponse(uint32_t sequence, uint8_t recovery,
                                      std::span<uint8_t> out) noexcept {
  Builder b(out);
  b.begin(MessageType::kEchoResponse, std::nullopt, sequence);
  b.add(Recovery{recovery});
  return finish(b);
}

Ambr commandedAmbr(uint32_t index) noexcept {
  return Ambr{100000 + index % 1000, 200000 + index % 1000};
}

BearerQos commandedQos() noexcept {
  BearerQos q;
  q.pci = true;
  q.pl = 15;
  q.pvi = true;
  q.qci = 8;
  return q;
}

BearerQos dedicatedQos(bool updated) noexcept {
  BearerQos q;
  q.pl = 2;
  q.qci = 1;  // conversational voice: a GBR bearer
  q.gbr_uplink = q.gbr_downlink = updated ? 128 : 64;
  q.mbr_uplink = q.mbr_downlink = updated ? 256 : 128;
  return q;
}

Result<std::size_t> buildBearerModification(MessageType type, const BearerModificationArgs& a,
                                            std::span<uint8_t> out) noexcept {
  const bool command = type == MessageType::kModifyBearerCommand;
  Builder b(out);
  b.begin(type, a.header_teid, a.sequence);
  if (command) b.add(a.apn_ambr);
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{a.ebi});
  b.add(a.qos);
  b.endGrouped();
  if (!command) b.add(a.apn_ambr);
  return finish(b);
}

Result<std::size_t> buildCreateBearerResponse(const CreateBearerResponseArgs& a,
                                              std::span<uint8_t> out) noexcept {
  Builder b(out);
  beginResponse(b, MessageType::kCreateBearerResponse, a.header_teid, a.sequence, a.cause);
  if (gtp::v2::causeAccepted(a.cause)) {
    b.beginGrouped(IeType::kBearerContext, 0);
    b.add(Ebi{a.ebi});
    b.add(cause(kCauseAccepted));
    b.add(makeFTeid(kIfS5S8SgwGtpU, userPlaneTeid(PlaneSide::kSgwDedicated, a.imsi, a.sgw_addr),
                    a.sgw_addr),
          2);
    b.add(makeFTeid(kIfS5S8PgwGtpU, userPlaneTeid(PlaneSide::kPgwDedicated, a.imsi, a.pgw_u_addr),
                    a.pgw_u_addr),
          3);
    b.endGrouped();
  }
  return finish(b);
}

Result<std::size_t> buildCreateBearerRequest(const CreateBearerRequestArgs& a,
                                             std::span<uint8_t> out) noexcept {
  Builder b(out);
  b.begin(MessageType::kCreateBearerRequest, a.header_teid, a.sequence);
  b.add(Ebi{a.lbi}, 0);
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{0});
  b.addRaw(static_cast<uint8_t>(IeType::kBearerTft), 0, kUdpTft);
  b.add(makeFTeid(kIfS5S8PgwGtpU, userPlaneTeid(PlaneSide::kPgwDedicated, a.imsi, a.pgw_addr),
                  a.pgw_addr),
        1);
  b.add(dedicatedQos(false));
  b.add(ChargingId{a.charging_id});
  b.endGrouped();
  return finish(b);
}

Result<std::size_t> buildDeleteBearerRequest(uint32_t sequence, uint32_t header_teid, uint8_t ebi,
                                             std::span<uint8_t> out) noexcept {
  Builder b(out);
  b.begin(MessageType::kDeleteBearerRequest, header_teid, sequence);
  b.add(Ebi{ebi}, 1);
  return finish(b);
}

Result<std::size_t> buildCreateSessionResponse(const CreateSessionResponseArgs& a,
                                               std::span<uint8_t> out) noexcept {
  Builder b(out);
  beginResponse(b, MessageType::kCreateSessionResponse, a.header_teid, a.sequence, a.cause);
  if (gtp::v2::causeAccepted(a.cause)) {
    b.add(makeFTeid(kIfS5S8PgwGtpC, a.pgw_teid, a.pgw_addr), 1);
    Paa paa;
    paa.pdn_type = 1;
    paa.ipv4 = toIpv4(a.ue_ipv4);
    b.add(paa);
    b.add(ApnRestriction{0});
    b.add(a.apn_ambr);
    b.beginGrouped(IeType::kBearerContext, 0);
    b.add(Ebi{a.ebi});
    b.add(cause(kCauseAccepted));
    b.add(makeFTeid(kIfS5S8PgwGtpU, a.pgw_u_teid, a.pgw_addr), 2);
    b.add(ChargingId{a.charging_id});
    b.endGrouped();
  }
  b.add(Recovery{a.recovery});
  return finish(b);
}

Result<std::size_t> buildBearerResponse(MessageType type, uint32_t sequence, uint32_t header_teid,
                                        uint8_t cause_value, uint8_t ebi,
                                        std::span<uint8_t> out) noexcept {
  Builder b(out);
  beginResponse(b, type, header_teid, sequence, cause_value);
  if (gtp::v2::causeAccepted(cause_value)) {
    b.beginGrouped(IeType::kBearerContext, 0);
    b.add(Ebi{ebi});
    b.add(cause(kCauseAccepted));
    b.endGrouped();
  }
  return finish(b);
}

Result<std::size_t> buildDeleteSessionResponse(uint32_t sequence, uint32_t header_teid,
                                               uint8_t cause_value,
                                               std::span<uint8_t> out) noexcept {
  return buildCauseOnlyResponse(MessageType::kDeleteSessionResponse, sequence, header_teid,
                                cause_value, out);
}

Result<std::size_t> buildDeleteBearerResponse(uint32_t sequence, uint32_t header_teid,
                                              uint8_t cause_value, uint8_t lbi,
                                              std::span<uint8_t> out) noexcept {
  Builder b(out);
  beginResponse(b, MessageType::kDeleteBearerResponse, header_teid, sequence, cause_value);
  if (gtp::v2::causeAccepted(cause_value) && lbi != 0) b.add(Ebi{lbi}, 0);
  return finish(b);
}

Result<std::size_t> buildCauseOnlyResponse(MessageType type, uint32_t sequence,
                                           uint32_t header_teid, uint8_t cause_value,
                                           std::span<uint8_t> out) noexcept {
  Builder b(out);
  beginResponse(b, type, header_teid, sequence, cause_value);
  return finish(b);
}

namespace {

// Reads an optional IE into `out`: absent leaves it empty, present but
// undecodable fails with `error` set.
template <class T>
bool readOptional(const Message& m, const Ie* ie, std::optional<T>& out,
                  gtp::Error& error) noexcept {
  if (ie == nullptr) return true;
  auto r = read<T>(m, *ie);
  if (!r) {
    error = r.error();
    return false;
  }
  out = *r;
  return true;
}

// The same for an IE whose one octet of interest is its `value` (EBI, Cause).
template <class T>
bool readValue(const Message& m, const Ie* ie, std::optional<uint8_t>& out,
               gtp::Error& error) noexcept {
  std::optional<T> v;
  if (!readOptional(m, ie, v, error)) return false;
  if (v) out = v->value;
  return true;
}

bool readBearerContext(const Message& m, BearerContextView& v, gtp::Error& e) noexcept {
  const Ie* bc = m.find(IeType::kBearerContext, 0);
  if (bc == nullptr) return true;
  v.present = true;
  v.tft = m.findChild(*bc, IeType::kBearerTft, 0) != nullptr;
  if (!readValue<Ebi>(m, m.findChild(*bc, IeType::kEbi, 0), v.ebi, e) ||
      !readValue<CauseIe>(m, m.findChild(*bc, IeType::kCause, 0), v.cause, e) ||
      !readOptional(m, m.findChild(*bc, IeType::kBearerQos, 0), v.qos, e))
    return false;
  for (uint8_t i = 0; i < v.fteid.size(); ++i)
    if (!readOptional(m, m.findChild(*bc, IeType::kFTeid, i), v.fteid[i], e)) return false;
  return true;
}

}  // namespace

Result<CreateSessionRequestView> viewCreateSessionRequest(const Message& m) noexcept {
  CreateSessionRequestView v;
  gtp::Error e;
  std::optional<Imsi> imsi;
  std::optional<Ebi> ebi;
  if (!readOptional(m, m.find(IeType::kImsi), imsi, e)) return tl::unexpected(e);
  if (imsi) {
    uint64_t value = 0;
    if (digitsValue(imsi->digits.view(), value)) v.imsi = value;
  }
  if (!readOptional(m, m.find(IeType::kFTeid, 0), v.sender, e)) return tl::unexpected(e);
  if (!readOptional(m, m.find(IeType::kAmbr, 0), v.apn_ambr, e)) return tl::unexpected(e);
  if (const Ie* bc = m.find(IeType::kBearerContext, 0)) {
    v.has_bearer = true;
    if (!readOptional(m, m.findChild(*bc, IeType::kEbi, 0), ebi, e)) return tl::unexpected(e);
    if (ebi) v.ebi = ebi->value;
    if (!readOptional(m, m.findChild(*bc, IeType::kFTeid, 2), v.sgw_u, e)) return tl::unexpected(e);
  }
  return v;
}

namespace {

// `addr` is the proxy's: its address, or the instance it fails over to.
bool isProxy(const IpAddress& addr, const IpAddress& proxy,
             const std::optional<IpAddress>& failover) noexcept {
  return addr == proxy || (failover && addr == *failover);
}

// An S5/S8-U F-TEID that must carry the TEID `side` computes for `imsi` and
// its own address (one family: the node's), and must not name the proxy.
bool userPlaneIntact(const std::optional<FTeid>& f, uint8_t interface_type, PlaneSide side,
                     std::optional<uint64_t> imsi, bool relay, const IpAddress& proxy,
                     const std::optional<IpAddress>& failover) noexcept {
  IpAddress addr;
  if (!f || f->interface_type != interface_type || !fteidSoleAddress(*f, addr)) return false;
  if (!relay && isProxy(addr, proxy, failover)) return false;
  if (imsi && f->teid != userPlaneTeid(side, *imsi, addr)) return false;
  return true;
}

// A control F-TEID names the proxy when it carries `proxy` (or `failover`)
// in the family of `proxy`; an address of the other family beside it does
// no harm (a proxy with both may give both).
bool namesProxy(const FTeid& f, const IpAddress& proxy,
                const std::optional<IpAddress>& failover) noexcept {
  IpAddress addr;
  return fteidAddress(f, proxy.family(), addr) && isProxy(addr, proxy, failover);
}

}  // namespace

MismatchSet checkCreateSessionRequest(const CreateSessionRequestView& v,
                                      const PgwCheckContext& c) noexcept {
  MismatchSet s;
  uint32_t index = 0;
  if (!v.imsi || c.ids == nullptr || !c.ids->indexOfImsi(*v.imsi, index))
    s.add(Mismatch::kPgwImsiOutOfRange);
  if (!v.sender || (!v.sender->ipv4 && !v.sender->ipv6) || v.sender->teid == 0 ||
      v.sender->interface_type != kIfS5S8SgwGtpC) {
    s.add(Mismatch::kPgwSenderFteidInvalid);
  } else if (!c.relay && !namesProxy(*v.sender, c.proxy_gateway, c.failover_gateway)) {
    s.add(Mismatch::kPgwSenderFteidNotProxy);
  }
  if (!v.has_bearer || !v.ebi) s.add(Mismatch::kPgwBearerContext);
  if (!userPlaneIntact(v.sgw_u, kIfS5S8SgwGtpU, PlaneSide::kSgw, v.imsi, c.relay,
                       c.proxy_gateway, c.failover_gateway))
    s.add(Mismatch::kPgwUserPlaneFteid);
  return s;
}

Result<ModifyBearerRequestView> viewModifyBearerRequest(const Message& m) noexcept {
  ModifyBearerRequestView v;
  gtp::Error e;
  std::optional<Ebi> ebi;
  if (const Ie* bc = m.find(IeType::kBearerContext, 0)) {
    v.has_bearer = true;
    if (!readOptional(m, m.findChild(*bc, IeType::kEbi, 0), ebi, e)) return tl::unexpected(e);
    if (ebi) v.ebi = ebi->value;
    if (!readOptional(m, m.findChild(*bc, IeType::kFTeid, 1), v.sgw_u, e)) return tl::unexpected(e);
  }
  return v;
}

MismatchSet checkModifyBearerRequest(const ModifyBearerRequestView& v, const PgwCheckContext& c,
                                     uint64_t imsi, uint8_t ebi) noexcept {
  MismatchSet s;
  if (!v.has_bearer || !v.ebi || *v.ebi != ebi) s.add(Mismatch::kPgwBearerContext);
  if (!userPlaneIntact(v.sgw_u, kIfS5S8SgwGtpU, PlaneSide::kSgw, imsi, c.relay, c.proxy_gateway,
                       c.failover_gateway))
    s.add(Mismatch::kPgwUserPlaneFteid);
  return s;
}

Result<DeleteSessionRequestView> viewDeleteSessionRequest(const Message& m) noexcept {
  DeleteSessionRequestView v;
  gtp::Error e;
  std::optional<Ebi> lbi;
  if (!readOptional(m, m.find(IeType::kEbi, 0), lbi, e)) return tl::unexpected(e);
  if (lbi) v.lbi = lbi->value;
  return v;
}

Result<ResponseView> viewResponse(const Message& m) noexcept {
  ResponseView v;
  gtp::Error e;
  BearerContextView bearer;
  if (!readValue<CauseIe>(m, m.find(IeType::kCause, 0), v.cause, e) ||
      !readOptional(m, m.find(IeType::kFTeid, 1), v.pgw_c, e) || !readBearerContext(m, bearer, e))
    return tl::unexpected(e);
  v.has_bearer = bearer.present;
  v.ebi = bearer.ebi;
  v.bearer_cause = bearer.cause;
  v.pgw_u = bearer.fteid[2];
  return v;
}

Result<BearerRequestView> viewBearerRequest(const Message& m) noexcept {
  BearerRequestView v;
  gtp::Error e;
  if (!readValue<Ebi>(m, m.find(IeType::kEbi, 0), v.lbi, e) ||
      !readValue<Ebi>(m, m.find(IeType::kEbi, 1), v.ebi, e) ||
      !readValue<CauseIe>(m, m.find(IeType::kCause, 0), v.cause, e) ||
      !readOptional(m, m.find(IeType::kAmbr, 0), v.apn_ambr, e) || !readBearerContext(m, v.bearer, e))
    return tl::unexpected(e);
  return v;
}

Result<BearerResponseView> viewBearerResponse(const Message& m) noexcept {
  BearerResponseView v;
  gtp::Error e;
  if (!readValue<CauseIe>(m, m.find(IeType::kCause, 0), v.cause, e) ||
      !readBearerContext(m, v.bearer, e))
    return tl::unexpected(e);
  return v;
}

MismatchSet checkCreateBearerRequest(const BearerRequestView& v, const SgwCheckContext& c) noexcept {
  MismatchSet s;
  const BearerContextView& b = v.bearer;
  if (v.lbi != kDefaultEbi || !b.present || b.ebi != 0 || !b.tft || !b.qos)
    s.add(Mismatch::kSgwBearerRequest);
  if (!userPlaneIntact(b.fteid[1], kIfS5S8PgwGtpU, PlaneSide::kPgwDedicated, c.imsi, c.relay,
                       c.proxy_access, c.failover_access))
    s.add(Mismatch::kSgwUserPlaneFteid);
  return s;
}

MismatchSet checkUpdateBearerRequest(const BearerRequestView& v, uint8_t ebi) noexcept {
  MismatchSet s;
  if (!v.bearer.present || v.bearer.ebi != ebi || !v.bearer.qos || !v.apn_ambr)
    s.add(Mismatch::kSgwBearerRequest);
  return s;
}

namespace {

bool bearerAccepted(const BearerResponseView& v, uint8_t ebi) noexcept {
  return v.cause && gtp::v2::causeAccepted(*v.cause) && v.bearer.present && v.bearer.ebi == ebi &&
         v.bearer.cause && gtp::v2::causeAccepted(*v.bearer.cause);
}

}  // namespace

MismatchSet checkCreateBearerResponse(const BearerResponseView& v, const PgwCheckContext& c,
                                      uint64_t imsi, uint8_t ebi) noexcept {
  MismatchSet s;
  if (!bearerAccepted(v, ebi)) s.add(Mismatch::kPgwBearerResponse);
  if (!userPlaneIntact(v.bearer.fteid[2], kIfS5S8SgwGtpU, PlaneSide::kSgwDedicated, imsi, c.relay,
                       c.proxy_gateway, c.failover_gateway) ||
      !userPlaneIntact(v.bearer.fteid[3], kIfS5S8PgwGtpU, PlaneSide::kPgwDedicated, imsi, c.relay,
                       c.proxy_gateway, c.failover_gateway))
    s.add(Mismatch::kPgwUserPlaneFteid);
  return s;
}

MismatchSet checkBearerResponse(const BearerResponseView& v, uint8_t ebi) noexcept {
  MismatchSet s;
  if (!bearerAccepted(v, ebi)) s.add(Mismatch::kPgwBearerResponse);
  return s;
}

MismatchSet checkCreateSessionResponse(const ResponseView& v, const SgwCheckContext& c) noexcept {
  MismatchSet s;
  if (!v.cause) {
    s.add(Mismatch::kSgwUnexpectedCause);
    return s;
  }
  if (!gtp::v2::causeAccepted(*v.cause)) {
    if (c.expected_rejections == nullptr || !c.expected_rejections->test(*v.cause))
      s.add(Mismatch::kSgwUnexpectedCause);
    return s;
  }
  if (!v.pgw_c || (!v.pgw_c->ipv4 && !v.pgw_c->ipv6) || v.pgw_c->teid == 0 ||
      v.pgw_c->interface_type != kIfS5S8PgwGtpC) {
    s.add(Mismatch::kSgwPgwFteidInvalid);
  } else if (!c.relay && !namesProxy(*v.pgw_c, c.proxy_access, c.failover_access)) {
    s.add(Mismatch::kSgwPgwFteidNotProxy);
  }
  if (!v.has_bearer || !v.ebi || *v.ebi != c.ebi || !v.bearer_cause ||
      !gtp::v2::causeAccepted(*v.bearer_cause))
    s.add(Mismatch::kSgwBearerContext);
  if (!userPlaneIntact(v.pgw_u, kIfS5S8PgwGtpU, PlaneSide::kPgw, c.imsi, c.relay,
                       c.proxy_access, c.failover_access)) {
    s.add(Mismatch::kSgwUserPlaneFteid);
  } else if (!c.local_pgws.empty()) {
    // With the PGWs in this process, the acceptance must come from one of
    // them, and from one that does not reject.
    IpAddress addr;
    fteidSoleAddress(*v.pgw_u, addr);  // cannot fail: userPlaneIntact() read it
    bool found = false;
    for (std::size_t i = 0; i < c.local_pgws.size(); ++i) {
      if (c.local_pgws[i] != addr) continue;
      found = true;
      if (i < c.local_pgw_causes.size() && c.local_pgw_causes[i] != 0)
        s.add(Mismatch::kSgwUnexpectedCause);
    }
    if (!found) s.add(Mismatch::kSgwUserPlaneFteid);
  }
  return s;
}

MismatchSet checkSimpleResponse(const ResponseView& v, const SgwCheckContext& c) noexcept {
  MismatchSet s;
  if (!v.cause || !gtp::v2::causeAccepted(*v.cause)) s.add(Mismatch::kSgwUnexpectedCause);
  if (v.has_bearer &&
      (!v.ebi || *v.ebi != c.ebi || (v.bearer_cause && !gtp::v2::causeAccepted(*v.bearer_cause))))
    s.add(Mismatch::kSgwBearerContext);
  return s;
}

}  // namespace gtpcp::peer
