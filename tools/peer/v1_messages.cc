#include "tools/peer/v1_messages.h"

#include <cstring>

#include "common/gtp/v1/builder.h"

namespace gtpcp::peer {

using gtp::Result;
using namespace gtp::v1;

namespace {

// TS 24.008 §10.5.6.5 octets 3..16 after the ARP octet (TS 29.060 §7.7.34):
// delay class 4 / reliability class 3, peak throughput 256 kB/s / precedence
// normal, mean best effort; then the R99 octets (traffic class, delivery
// order, maximum SDU size 1500, maximum and guaranteed bit rates, residual
// BER, SDU error ratio, transfer delay and handling priority) and the R7
// extended downlink rates.
constexpr uint8_t kQosCreate[] = {0x02, 0x23, 0x92, 0x1f, 0x73, 0x96, 0xfe, 0xfe,
                                  0x74, 0xfb, 0x00, 0x00, 0x00, 0x4a, 0x00};
constexpr uint8_t kQosUpdateOdd[] = {0x02, 0x23, 0x92, 0x1f, 0x73, 0x96, 0xfe, 0xfe,
                                     0x74, 0xfb, 0x00, 0x00, 0x00, 0x60, 0x00};
constexpr uint8_t kQosUpdateEven[] = {0x02, 0x23, 0x92, 0x1f, 0x73, 0x96, 0x80, 0xfe,
                                      0x74, 0xfb, 0x00, 0x00, 0x00, 0x00, 0x00};
constexpr uint8_t kQosSecondary[] = {0x01, 0x23, 0x92, 0x1f, 0x53, 0x96, 0x40, 0x40,
                                     0x74, 0x48, 0x40, 0x40, 0x00, 0x00, 0x00};
constexpr uint8_t kQosNetwork[] = {0x02, 0x23, 0x92, 0x1f, 0x73, 0x96, 0xfe, 0xfe,
                                   0x74, 0xfb, 0x00, 0x00, 0x00, 0x28, 0x00};

// PCO (TS 24.008 §10.5.6.3): PPP configuration, asking for DNS server IPv4
// addresses and for the address allocation through NAS signalling.
constexpr uint8_t kPco[] = {0x80, 0x00, 0x0d, 0x00, 0x00, 0x0a, 0x00};

Result<std::size_t> finish(Builder& b) noexcept {
  auto r = b.finish();
  if (!r) return tl::unexpected(r.error());
  return r->size();
}

// A message of `type` carrying `ies`, in that order.
template <class... Ies>
Result<std::size_t> message(std::span<uint8_t> out, MessageType type, uint32_t header_teid,
                            uint32_t sequence, const Ies&... ies) noexcept {
  Builder b(out);
  b.begin(type, header_teid, static_cast<uint16_t>(sequence));
  (b.add(ies), ...);
  return finish(b);
}

Rai rai(const Identities& ids, uint32_t index, uint32_t variant) noexcept {
  return Rai{ids.plmn, static_cast<uint16_t>(1 + (index + variant) % 1000),
             static_cast<uint8_t>(1 + index % 250)};
}

// ULI (§7.7.51) as a Service Area Identity.
Uli uli(const Identities& ids, uint32_t index, uint32_t variant) noexcept {
  return Uli{1, ids.plmn, static_cast<uint16_t>(1 + (index + variant) % 1000),
             static_cast<uint16_t>(index * 16 + variant % 16)};
}

QosProfile qosProfile(std::span<const uint8_t> value) noexcept {
  if (value.empty()) return QosProfile{};
  return QosProfile{value[0], value.subspan(1)};
}

// `ie` read as T, or nullopt with its error in `status`.
template <class T>
std::optional<T> readAs(const Message& m, const Ie& ie, Result<void>& status) noexcept {
  auto r = read<T>(m, ie);
  if (r) return *r;
  status = tl::unexpected(r.error());
  return std::nullopt;
}
// The `value` of `ie` read as T into `out`.
template <class T, class Out>
void readValue(const Message& m, const Ie& ie, Result<void>& status,
               std::optional<Out>& out) noexcept {
  if (auto x = readAs<T>(m, ie, status)) out = x->value;
}

bool namesProxy(const IpAddress& a, const IpAddress& proxy,
                const std::optional<IpAddress>& failover) noexcept {
  return a == proxy || (failover && a == *failover);
}

}  // namespace

std::span<const uint8_t> v1QosValue(V1Qos q) noexcept {
  switch (q) {
    case V1Qos::kCreate: return kQosCreate;
    case V1Qos::kUpdateOdd: return kQosUpdateOdd;
    case V1Qos::kUpdateEven: return kQosUpdateEven;
    case V1Qos::kSecondary: return kQosSecondary;
    case V1Qos::kNetwork: return kQosNetwork;
  }
  return kQosCreate;
}

uint32_t v1UserPlaneTeid(PlaneSide side, uint64_t imsi, uint8_t nsapi,
                         const IpAddress& addr) noexcept {
  // An IMSI has at most 15 digits (< 2^50): the NSAPI above it keeps every
  // context's TEID apart.
  return userPlaneTeid(side, imsi | (uint64_t{nsapi} << 50), addr);
}

NetworkPlan networkPlan(uint64_t imsi, double fraction) noexcept {
  if (!(fraction > 0)) return NetworkPlan::kNone;
  // splitmix64's finaliser: spread consecutive IMSIs over the unit interval.
  uint64_t x = imsi + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  if (static_cast<double>(x >> 11) * 0x1.0p-53 >= fraction) return NetworkPlan::kNone;
  return (x & 1) ? NetworkPlan::kUpdateAndDelete : NetworkPlan::kUpdate;
}

GsnAddress gsnAddress(const IpAddress& addr) noexcept {
  GsnAddress g;
  toGtpAddress(addr, g.ipv4, g.ipv6);
  return g;
}

IpAddress fromGsnAddress(const GsnAddress& a) noexcept {
  IpAddress out;
  if (!fromGtpAddress(a.ipv4, AF_INET, out)) fromGtpAddress(a.ipv6, AF_INET6, out);
  return out;
}

Result<std::size_t> buildCreatePdpContextRequest(const PdpRequestArgs& a,
                                                 std::span<uint8_t> out) noexcept {
  const bool primary = a.linked_nsapi == 0;
  if (a.ids == nullptr || (primary && a.apn == nullptr)) return gtp::fail(gtp::Errc::kInvalidArgument);
  const Identities& ids = *a.ids;
  const uint64_t imsi = ids.imsi(a.index);
  Builder b(out);
  b.begin(MessageType::kCreatePdpContextRequest, a.header_teid,
          static_cast<uint16_t>(a.sequence));
  b.add(Imsi{toDigits(imsi, ids.imsi_digits)});
  b.add(rai(ids, a.index, 0));
  if (a.recovery) b.add(Recovery{*a.recovery});
  if (primary) b.add(SelectionMode{0});  // MS or network provided APN, subscription verified
  b.add(TeidDataI{v1UserPlaneTeid(PlaneSide::kSgsn, imsi, a.nsapi, a.sgsn_addr)});
  if (a.teid_c != 0) b.add(TeidControlPlane{a.teid_c});
  b.add(Nsapi{a.nsapi});
  if (!primary) b.add(Nsapi{a.linked_nsapi});
  if (primary) {
    b.add(ChargingCharacteristics{0x0800});  // normal charging
    b.add(EndUserAddress{});                 // IETF, IPv4, no address: a dynamic one
    b.add(*a.apn);
    b.add(Pco{kPco});
  }
  b.add(gsnAddress(a.sgsn_addr));  // for signalling
  b.add(gsnAddress(a.sgsn_addr));  // for user traffic
  if (primary) b.add(Msisdn{0x91, toDigits(ids.msisdn(a.index), ids.msisdn_digits)});
  b.add(qosProfile(v1QosValue(a.qos)));
  if (!primary) b.add(Tft{kUdpTft});
  b.add(RatType{kRatUtran});
  b.add(uli(ids, a.index, 0));
  if (primary) b.add(ImeiSv{imeisvDigits(a.index)});
  return finish(b);
}

Result<std::size_t> buildUpdatePdpContextRequest(const PdpRequestArgs& a,
                                                 std::span<uint8_t> out) noexcept {
  if (a.ids == nullptr) return gtp::fail(gtp::Errc::kInvalidArgument);
  const uint64_t imsi = a.ids->imsi(a.index);
  Builder b(out);
  b.begin(MessageType::kUpdatePdpContextRequest, a.header_teid,
          static_cast<uint16_t>(a.sequence));
  b.add(rai(*a.ids, a.index, a.variant + 1));
  b.add(TeidDataI{v1UserPlaneTeid(PlaneSide::kSgsn, imsi, a.nsapi, a.sgsn_addr)});
  if (a.teid_c != 0) b.add(TeidControlPlane{a.teid_c});
  b.add(Nsapi{a.nsapi});
  b.add(gsnAddress(a.sgsn_addr));
  b.add(gsnAddress(a.sgsn_addr));
  b.add(qosProfile(v1QosValue(a.qos)));
  b.add(RatType{kRatUtran});
  b.add(uli(*a.ids, a.index, a.variant + 1));
  return finish(b);
}

Result<std::size_t> buildDeletePdpContextRequest(uint32_t sequence, uint32_t header_teid,
                                                 uint8_t nsapi, bool teardown,
                                                 std::span<uint8_t> out) noexcept {
  return message(out, MessageType::kDeletePdpContextRequest, header_teid, sequence,
                 TeardownInd{teardown}, Nsapi{nsapi});
}

Result<std::size_t> buildSgsnUpdateResponse(uint32_t sequence, uint32_t header_teid,
                                            uint8_t cause, uint32_t teid_u, V1Qos qos,
                                            std::span<uint8_t> out) noexcept {
  const auto type = MessageType::kUpdatePdpContextResponse;
  if (!gtp::v1::causeAccepted(cause)) return message(out, type, header_teid, sequence, CauseIe{cause});
  return message(out, type, header_teid, sequence, CauseIe{cause}, TeidDataI{teid_u},
                 qosProfile(v1QosValue(qos)));
}

Result<std::size_t> buildNetworkUpdateRequest(uint32_t sequence, uint32_t header_teid,
                                              uint8_t nsapi, V1Qos qos,
                                              std::span<uint8_t> out) noexcept {
  return message(out, MessageType::kUpdatePdpContextRequest, header_teid, sequence, Nsapi{nsapi},
                 qosProfile(v1QosValue(qos)));
}

Result<std::size_t> buildPdpContextResponse(const PdpResponseArgs& a,
                                            std::span<uint8_t> out) noexcept {
  const bool creation = a.type == MessageType::kCreatePdpContextResponse;
  Builder b(out);
  b.begin(a.type, a.header_teid, static_cast<uint16_t>(a.sequence));
  b.add(CauseIe{a.cause});
  const bool accepted = gtp::v1::causeAccepted(a.cause);
  if (accepted && creation) b.add(ReorderingRequired{false});
  if (a.recovery) b.add(Recovery{*a.recovery});
  if (accepted) {
    b.add(TeidDataI{a.teid_u});
    if (a.teid_c != 0) b.add(TeidControlPlane{a.teid_c});
    b.add(ChargingId{a.charging_id});
    if (a.ue_ipv4 != 0) {
      EndUserAddress eua;
      eua.ipv4 = toIpv4(a.ue_ipv4);
      b.add(eua);
    }
    b.add(gsnAddress(a.ggsn_addr));  // for control plane
    b.add(gsnAddress(a.ggsn_addr));  // for user traffic
    b.add(qosProfile(a.qos));
  }
  return finish(b);
}

Result<std::size_t> buildV1CauseOnly(MessageType type, uint32_t sequence, uint32_t header_teid,
                                     uint8_t cause, std::span<uint8_t> out) noexcept {
  return message(out, type, header_teid, sequence, CauseIe{cause});
}

Result<std::size_t> buildV1EchoResponse(uint32_t sequence, uint8_t recovery,
                                        std::span<uint8_t> out) noexcept {
  return message(out, MessageType::kEchoResponse, 0, sequence, Recovery{recovery});
}

Result<std::size_t> buildV1EchoRequest(uint32_t sequence, std::span<uint8_t> out) noexcept {
  return message(out, MessageType::kEchoRequest, 0, sequence);
}

Result<PdpView> viewPdp(const Message& m) noexcept {
  PdpView v;
  Result<void> status;
  uint8_t last = 0;
  std::size_t nsapis = 0, gsns = 0;
  for (const Ie& ie : m.ies()) {
    if (ie.type < last) v.ordered = false;
    last = ie.type;
    switch (ie.ieType()) {
      case IeType::kCause: readValue<CauseIe>(m, ie, status, v.cause); break;
      case IeType::kRecovery: readValue<Recovery>(m, ie, status, v.recovery); break;
      case IeType::kTeidDataI: readValue<TeidDataI>(m, ie, status, v.teid_u); break;
      case IeType::kTeidControlPlane: readValue<TeidControlPlane>(m, ie, status, v.teid_c); break;
      case IeType::kTeardownInd: readValue<TeardownInd>(m, ie, status, v.teardown); break;
      case IeType::kChargingId: readValue<ChargingId>(m, ie, status, v.charging_id); break;
      case IeType::kNsapi:  // the NSAPI, then the Linked NSAPI
        readValue<Nsapi>(m, ie, status, nsapis++ == 0 ? v.nsapi : v.linked_nsapi);
        break;
      case IeType::kImsi:
        if (auto i = readAs<Imsi>(m, ie, status)) {
          if (uint64_t imsi = 0; digitsValue(i->digits.view(), imsi)) v.imsi = imsi;
        }
        break;
      case IeType::kEndUserAddress:
        v.end_user_address = true;
        if (auto e = readAs<EndUserAddress>(m, ie, status); e && e->ipv4)
          v.ue_ipv4 = fromIpv4(*e->ipv4);
        break;
      case IeType::kApn: v.apn = true; break;
      case IeType::kTft: v.tft = true; break;
      case IeType::kGsnAddress:  // for signalling / control plane, then for user traffic
        if (auto g = readAs<GsnAddress>(m, ie, status); g && gsns < v.gsn.size())
          v.gsn[gsns] = fromGsnAddress(*g);
        ++gsns;
        break;
      case IeType::kQosProfile:
        if (readAs<QosProfile>(m, ie, status)) v.qos = m.value(ie);
        break;
      default: break;
    }
    if (!status) return tl::unexpected(status.error());
  }
  return v;
}

bool qosIs(const PdpView& v, V1Qos q) noexcept {
  const auto want = v1QosValue(q);
  return v.qos.size() == want.size() && std::memcmp(v.qos.data(), want.data(), want.size()) == 0;
}

MismatchSet checkSgsnRequest(const PdpView& v, const GgsnCheckContext& c, uint8_t nsapi,
                             bool teid_c) noexcept {
  MismatchSet s;
  const std::optional<IpAddress>& signalling = v.gsn[0];
  if (!signalling || signalling->family() != c.ggsn_addr.family() ||
      (!c.relay && !namesProxy(*signalling, c.proxy_gateway, c.failover_gateway)))
    s.add(Mismatch::kGgsnSgsnAddressNotProxy);
  const std::optional<IpAddress>& user = v.gsn[1];
  if (!c.user_plane_proxied &&
      (!user || !v.teid_u || user->family() != c.ggsn_addr.family() ||
       *v.teid_u != v1UserPlaneTeid(PlaneSide::kSgsn, c.imsi, nsapi, *user) ||
       (!c.relay && namesProxy(*user, c.proxy_gateway, c.failover_gateway))))
    s.add(Mismatch::kGgsnUserPlane);
  if (teid_c) {
    const uint32_t own = c.sgsn_teids != nullptr ? c.sgsn_teids->teid(c.index) : 0;
    if (!v.teid_c || *v.teid_c == 0 || (c.relay ? *v.teid_c != own : *v.teid_c == own))
      s.add(Mismatch::kGgsnControlTeid);
  } else if (v.teid_c) {
    s.add(Mismatch::kGgsnControlTeid);
  }
  if (!v.ordered) s.add(Mismatch::kGgsnIeOrder);
  return s;
}

namespace {

// The Cause of an answer: accepted, or a rejection the run expects.
void checkCause(const PdpView& v, const SgsnCheckContext& c, MismatchSet& s) noexcept {
  if (!v.cause || (!gtp::v1::causeAccepted(*v.cause) &&
                   !(gtp::v1::causeRejected(*v.cause) && c.expected_rejections != nullptr &&
                     c.expected_rejections->test(*v.cause))))
    s.add(Mismatch::kSgsnUnexpectedCause);
  if (!v.ordered) s.add(Mismatch::kSgsnIeOrder);
}

}  // namespace

MismatchSet checkPdpResponse(const PdpView& v, const SgsnCheckContext& c, V1Qos qos, bool control,
                             bool eua) noexcept {
  MismatchSet s;
  checkCause(v, c, s);
  if (!v.cause || !gtp::v1::causeAccepted(*v.cause)) return s;
  const int family = c.sgsn_addr.family();
  if (const std::optional<IpAddress>& g = v.gsn[0]; !g) {
    if (control) s.add(Mismatch::kSgsnControlInvalid);
  } else if (g->family() != family) {
    s.add(Mismatch::kSgsnControlInvalid);
  } else if (!c.relay && *g != c.proxy_access) {
    s.add(Mismatch::kSgsnGgsnAddressNotProxy);
  }
  if (!c.user_plane_proxied) {
    const std::optional<IpAddress>& user = v.gsn[1];
    bool ok = user && v.teid_u && user->family() == family &&
              *v.teid_u == v1UserPlaneTeid(PlaneSide::kGgsn, c.imsi, c.nsapi, *user) &&
              (c.relay || *user != c.proxy_access);
    if (ok && !c.local_ggsns.empty()) {
      ok = false;
      for (const IpAddress& a : c.local_ggsns) ok = ok || a == *user;
    }
    if (!ok) s.add(Mismatch::kSgsnUserPlane);
  }
  if (!qosIs(v, qos)) s.add(Mismatch::kSgsnQos);
  if (eua && !v.ue_ipv4) s.add(Mismatch::kSgsnEndUserAddress);
  return s;
}

MismatchSet checkDeleteResponse(const PdpView& v, const SgsnCheckContext& c) noexcept {
  MismatchSet s;
  checkCause(v, c, s);
  return s;
}

}  // namespace gtpcp::peer
