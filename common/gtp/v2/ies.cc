#include "common/gtp/v2/ies.h"

#include <cstring>

#include "common/gtp/bytes.h"

namespace gtpcp::gtp::v2 {

namespace {

Result<Plmn> plmnAt(std::span<const uint8_t> v, std::size_t pos) {
  if (v.size() < pos + 3) return fail(Errc::kIeTooShort);
  return decodePlmn(v.data() + pos);
}

}  // namespace

Result<ServingNetwork> ServingNetwork::decode(std::span<const uint8_t> v) noexcept {
  auto p = plmnAt(v, 0);
  if (!p) return tl::unexpected(p.error());
  return ServingNetwork{*p};
}

// ULI flags octet (8.21): bit 1 CGI ... bit 8 Extended Macro eNodeB ID.
namespace {
constexpr uint8_t kUliCgi = 0x01, kUliSai = 0x02, kUliRai = 0x04, kUliTai = 0x08,
                  kUliEcgi = 0x10, kUliLai = 0x20, kUliMacroEnb = 0x40, kUliExtMacroEnb = 0x80;
}

Result<Uli> Uli::decode(std::span<const uint8_t> v) noexcept {
  if (v.empty()) return fail(Errc::kIeTooShort);
  Uli u;
  const uint8_t flags = v[0];
  std::size_t pos = 1;
  auto need = [&](std::size_t n) { return v.size() >= pos + n; };
#define GTPCP_ULI_PLMN(part)                          \
  auto plmn = plmnAt(v, pos);                         \
  if (!plmn) return tl::unexpected(plmn.error());     \
  (part).plmn = *plmn;                                \
  pos += 3
  if (flags & kUliCgi) {
    if (!need(7)) return fail(Errc::kIeTooShort);
    Cgi c;
    GTPCP_ULI_PLMN(c);
    c.lac = load16(&v[pos]);
    c.ci = load16(&v[pos + 2]);
    pos += 4;
    u.cgi = c;
  }
  if (flags & kUliSai) {
    if (!need(7)) return fail(Errc::kIeTooShort);
    Sai s;
    GTPCP_ULI_PLMN(s);
    s.lac = load16(&v[pos]);
    s.sac = load16(&v[pos + 2]);
    pos += 4;
    u.sai = s;
  }
  if (flags & kUliRai) {
    // RAC is one octet followed by one octet of all 1s.
    if (!need(7)) return fail(Errc::kIeTooShort);
    Rai r;
    GTPCP_ULI_PLMN(r);
    r.lac = load16(&v[pos]);
    r.rac = v[pos + 2];
    pos += 4;
    u.rai = r;
  }
  if (flags & kUliTai) {
    if (!need(5)) return fail(Errc::kIeTooShort);
    Tai t;
    GTPCP_ULI_PLMN(t);
    t.tac = load16(&v[pos]);
    pos += 2;
    u.tai = t;
  }
  if (flags & kUliEcgi) {
    if (!need(7)) return fail(Errc::kIeTooShort);
    Ecgi e;
    GTPCP_ULI_PLMN(e);
    e.eci = load32(&v[pos]) & 0x0fffffff;
    pos += 4;
    u.ecgi = e;
  }
  if (flags & kUliLai) {
    if (!need(5)) return fail(Errc::kIeTooShort);
    Lai l;
    GTPCP_ULI_PLMN(l);
    l.lac = load16(&v[pos]);
    pos += 2;
    u.lai = l;
  }
  if (flags & kUliMacroEnb) {
    if (!need(6)) return fail(Errc::kIeTooShort);
    MacroEnb m;
    GTPCP_ULI_PLMN(m);
    m.id = load24(&v[pos]) & 0x0fffff;
    pos += 3;
    u.macro_enb = m;
  }
  if (flags & kUliExtMacroEnb) {
    if (!need(6)) return fail(Errc::kIeTooShort);
    ExtendedMacroEnb m;
    GTPCP_ULI_PLMN(m);
    m.smenb = v[pos] & 0x80;
    m.id = load24(&v[pos]) & 0x1fffff;
    pos += 3;
    u.extended_macro_enb = m;
  }
#undef GTPCP_ULI_PLMN
  return u;
}

std::size_t Uli::encodedSize() const noexcept {
  return 1 + (cgi ? 7 : 0) + (sai ? 7 : 0) + (rai ? 7 : 0) + (tai ? 5 : 0) + (ecgi ? 7 : 0) +
         (lai ? 5 : 0) + (macro_enb ? 6 : 0) + (extended_macro_enb ? 6 : 0);
}

void Uli::encode(uint8_t* out) const noexcept {
  uint8_t flags = 0;
  uint8_t* p = out + 1;
  if (cgi) {
    flags |= kUliCgi;
    encodePlmn(cgi->plmn, p);
    store16(p + 3, cgi->lac);
    store16(p + 5, cgi->ci);
    p += 7;
  }
  if (sai) {
    flags |= kUliSai;
    encodePlmn(sai->plmn, p);
    store16(p + 3, sai->lac);
    store16(p + 5, sai->sac);
    p += 7;
  }
  if (rai) {
    flags |= kUliRai;
    encodePlmn(rai->plmn, p);
    store16(p + 3, rai->lac);
    p[5] = rai->rac;
    p[6] = 0xff;
    p += 7;
  }
  if (tai) {
    flags |= kUliTai;
    encodePlmn(tai->plmn, p);
    store16(p + 3, tai->tac);
    p += 5;
  }
  if (ecgi) {
    flags |= kUliEcgi;
    encodePlmn(ecgi->plmn, p);
    store32(p + 3, ecgi->eci & 0x0fffffff);
    p += 7;
  }
  if (lai) {
    flags |= kUliLai;
    encodePlmn(lai->plmn, p);
    store16(p + 3, lai->lac);
    p += 5;
  }
  if (macro_enb) {
    flags |= kUliMacroEnb;
    encodePlmn(macro_enb->plmn, p);
    store24(p + 3, macro_enb->id & 0x0fffff);
    p += 6;
  }
  if (extended_macro_enb) {
    flags |= kUliExtMacroEnb;
    encodePlmn(extended_macro_enb->plmn, p);
    store24(p + 3, (extended_macro_enb->id & 0x1fffff) | (extended_macro_enb->smenb ? 0x800000 : 0));
    p += 6;
  }
  out[0] = flags;
}

// F-TEID flags octet (8.22): V4 bit 8, V6 bit 7, interface type bits 6-1.
Result<FTeid> FTeid::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 5) return fail(Errc::kIeTooShort);
  FTeid f;
  const uint8_t flags = v[0];
  f.interface_type = flags & 0x3f;
  f.teid = load32(&v[1]);
  std::size_t pos = 5;
  if (flags & 0x80) {
    if (v.size() < pos + 4) return fail(Errc::kIeTooShort);
    Ipv4 a;
    std::memcpy(a.octets.data(), &v[pos], 4);
    f.ipv4 = a;
    pos += 4;
  }
  if (flags & 0x40) {
    if (v.size() < pos + 16) return fail(Errc::kIeTooShort);
    Ipv6 a;
    std::memcpy(a.octets.data(), &v[pos], 16);
    f.ipv6 = a;
    pos += 16;
  }
  // An F-TEID names an endpoint: without an address it names none.
  if (!f.ipv4 && !f.ipv6) return fail(Errc::kIeInvalidValue);
  return f;
}

void FTeid::encode(uint8_t* out) const noexcept {
  out[0] = static_cast<uint8_t>((ipv4 ? 0x80 : 0) | (ipv6 ? 0x40 : 0) | (interface_type & 0x3f));
  store32(out + 1, teid);
  uint8_t* p = out + 5;
  if (ipv4) {
    std::memcpy(p, ipv4->octets.data(), 4);
    p += 4;
  }
  if (ipv6) std::memcpy(p, ipv6->octets.data(), 16);
}

Result<CauseIe> CauseIe::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 2) return fail(Errc::kIeTooShort);
  CauseIe c;
  c.value = v[0];
  c.pce = v[1] & 0x04;
  c.bce = v[1] & 0x02;
  c.cs = v[1] & 0x01;
  // The offending IE (type, a zero length, instance) follows in rejections.
  if (v.size() >= 6) c.offending_ie = OffendingIe{v[2], static_cast<uint8_t>(v[5] & 0x0f)};
  return c;
}

void CauseIe::encode(uint8_t* out) const noexcept {
  out[0] = value;
  out[1] = static_cast<uint8_t>((pce ? 0x04 : 0) | (bce ? 0x02 : 0) | (cs ? 0x01 : 0));
  if (offending_ie) {
    out[2] = offending_ie->type;
    out[3] = 0;
    out[4] = 0;
    out[5] = offending_ie->instance & 0x0f;
  }
}

Result<Ambr> Ambr::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 8) return fail(Errc::kIeTooShort);
  return Ambr{load32(&v[0]), load32(&v[4])};
}
void Ambr::encode(uint8_t* out) const noexcept {
  store32(out, uplink);
  store32(out + 4, downlink);
}

// PAA (8.14): PDN type, then IPv4 (4), IPv6 (prefix length + 16) or IPv4v6
// (prefix length + 16 + 4). Other PDN types carry no address here.
Result<Paa> Paa::decode(std::span<const uint8_t> v) noexcept {
  if (v.empty()) return fail(Errc::kIeTooShort);
  Paa p;
  p.pdn_type = v[0] & 0x07;
  auto v4 = [&](std::size_t pos) {
    Ipv4 a;
    std::memcpy(a.octets.data(), &v[pos], 4);
    p.ipv4 = a;
  };
  auto v6 = [&](std::size_t pos) {
    p.ipv6_prefix_length = v[pos];
    Ipv6 a;
    std::memcpy(a.octets.data(), &v[pos + 1], 16);
    p.ipv6 = a;
  };
  switch (p.pdn_type) {
    case 1:
      if (v.size() < 5) return fail(Errc::kIeTooShort);
      v4(1);
      break;
    case 2:
      if (v.size() < 18) return fail(Errc::kIeTooShort);
      v6(1);
      break;
    case 3:
      if (v.size() < 22) return fail(Errc::kIeTooShort);
      v6(1);
      v4(18);
      break;
    default:
      break;
  }
  return p;
}

std::size_t Paa::encodedSize() const noexcept {
  return 1 + (ipv6 ? 17 : 0) + (ipv4 ? 4 : 0);
}

void Paa::encode(uint8_t* out) const noexcept {
  out[0] = pdn_type & 0x07;
  uint8_t* p = out + 1;
  if (ipv6) {
    p[0] = ipv6_prefix_length;
    std::memcpy(p + 1, ipv6->octets.data(), 16);
    p += 17;
  }
  if (ipv4) std::memcpy(p, ipv4->octets.data(), 4);
}

Result<Indication> Indication::decode(std::span<const uint8_t> v) noexcept {
  Indication i;
  // Flags beyond the 16th octet belong to releases this proxy does not know;
  // the IE is relayed untouched, so only the view is cut.
  i.size = static_cast<uint8_t>(std::min(v.size(), i.octets.size()));
  std::memcpy(i.octets.data(), v.data(), i.size);
  return i;
}
void Indication::encode(uint8_t* out) const noexcept { std::memcpy(out, octets.data(), size); }

Result<BearerQos> BearerQos::decode(std::span<const uint8_t> v) noexcept {
  if (v.size() < 22) return fail(Errc::kIeTooShort);
  BearerQos q;
  q.pci = v[0] & 0x40;
  q.pl = (v[0] >> 2) & 0x0f;
  q.pvi = v[0] & 0x01;
  q.qci = v[1];
  q.mbr_uplink = load40(&v[2]);
  q.mbr_downlink = load40(&v[7]);
  q.gbr_uplink = load40(&v[12]);
  q.gbr_downlink = load40(&v[17]);
  return q;
}

void BearerQos::encode(uint8_t* out) const noexcept {
  out[0] = static_cast<uint8_t>((pci ? 0x40 : 0) | ((pl & 0x0f) << 2) | (pvi ? 0x01 : 0));
  out[1] = qci;
  store40(out + 2, mbr_uplink);
  store40(out + 7, mbr_downlink);
  store40(out + 12, gbr_uplink);
  store40(out + 17, gbr_downlink);
}

// FQ-CSID (8.62): node-ID type (high nibble) | number of CSIDs (low nibble),
// node-ID, then the CSIDs, 2 octets each.
Result<FqCsid> FqCsid::decode(std::span<const uint8_t> v) noexcept {
  if (v.empty()) return fail(Errc::kIeTooShort);
  FqCsid f;
  f.node_id_type = v[0] >> 4;
  f.csid_count = v[0] & 0x0f;
  std::size_t pos = 1;
  switch (f.node_id_type) {
    case 0: {
      if (v.size() < pos + 4) return fail(Errc::kIeTooShort);
      Ipv4 a;
      std::memcpy(a.octets.data(), &v[pos], 4);
      f.ipv4 = a;
      pos += 4;
      break;
    }
    case 1: {
      if (v.size() < pos + 16) return fail(Errc::kIeTooShort);
      Ipv6 a;
      std::memcpy(a.octets.data(), &v[pos], 16);
      f.ipv6 = a;
      pos += 16;
      break;
    }
    case 2:
      if (v.size() < pos + 4) return fail(Errc::kIeTooShort);
      f.node_id = load32(&v[pos]);
      pos += 4;
      break;
    default:
      return fail(Errc::kIeInvalidValue);
  }
  if (v.size() < pos + 2u * f.csid_count) return fail(Errc::kIeTooShort);
  for (std::size_t i = 0; i < f.csid_count; ++i) f.csids[i] = load16(&v[pos + 2 * i]);
  return f;
}

std::size_t FqCsid::encodedSize() const noexcept {
  const std::size_t node = node_id_type == 1 ? 16 : 4;
  return 1 + node + 2u * std::min<std::size_t>(csid_count, kMaxCsids);
}

void FqCsid::encode(uint8_t* out) const noexcept {
  const uint8_t count = static_cast<uint8_t>(std::min<std::size_t>(csid_count, kMaxCsids));
  out[0] = static_cast<uint8_t>((node_id_type << 4) | count);
  uint8_t* p = out + 1;
  if (node_id_type == 1) {
    if (ipv6) std::memcpy(p, ipv6->octets.data(), 16);
    else std::memset(p, 0, 16);
    p += 16;
  } else if (node_id_type == 0) {
    if (ipv4) std::memcpy(p, ipv4->octets.data(), 4);
    else std::memset(p, 0, 4);
    p += 4;
  } else {
    store32(p, node_id);
    p += 4;
  }
  for (std::size_t i = 0; i < count; ++i) store16(p + 2 * i, csids[i]);
}

}  // namespace gtpcp::gtp::v2
