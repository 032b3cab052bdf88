// The GTPv2-C messages the peer emulator sends (S5/S8, TS 29.274 §7.2) and the
// checks it makes on what it receives.
//
// Builders write into a caller's buffer with the codec's Builder and are
// deterministic: the same arguments give the same octets, which is how an
// emulated SGW retransmits "the same bytes" without keeping them.
//
// Views read the IEs the checks need from a decoded message; check functions
// compare a view with what the emulator knows and return the set of Mismatch
// kinds found (empty: all good). Nothing here allocates or throws.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "common/gtp/errors.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/values.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

// The F-TEID interface types the emulator sends and expects (TS 29.274
// Table 8.22-1), as the octet values F-TEIDs hold.
inline constexpr uint8_t kIfS5S8SgwGtpU = static_cast<uint8_t>(gtp::v2::FTeidInterfaceType::kS5S8SgwGtpU);
inline constexpr uint8_t kIfS5S8PgwGtpU = static_cast<uint8_t>(gtp::v2::FTeidInterfaceType::kS5S8PgwGtpU);
inline constexpr uint8_t kIfS5S8SgwGtpC = static_cast<uint8_t>(gtp::v2::FTeidInterfaceType::kS5S8SgwGtpC);
inline constexpr uint8_t kIfS5S8PgwGtpC = static_cast<uint8_t>(gtp::v2::FTeidInterfaceType::kS5S8PgwGtpC);
inline constexpr uint8_t kRatEutran = 6;
inline constexpr uint8_t kDefaultEbi = 5;
// The one dedicated bearer a session gets with --dedicated-bearer: the SGW
// side assigns it (the PGW's Create Bearer Request offers EBI 0).
inline constexpr uint8_t kDedicatedEbi = 6;
// The causes the emulator sends (TS 29.274 Table 8.4-1).
inline constexpr uint8_t kCauseAccepted = static_cast<uint8_t>(gtp::v2::Cause::kRequestAccepted);
inline constexpr uint8_t kCauseContextNotFound = static_cast<uint8_t>(gtp::v2::Cause::kContextNotFound);
inline constexpr uint8_t kCauseSystemFailure = static_cast<uint8_t>(gtp::v2::Cause::kSystemFailure);
inline constexpr uint8_t kCauseNoResources = static_cast<uint8_t>(gtp::v2::Cause::kNoResourcesAvailable);
// The sequence number bit of command-triggered procedures (TS 29.274 §7.6).
using gtp::v2::kCommandBit;
// A request repeated from the same source address and port with the same
// sequence number within this long is a retransmission (TS 29.274 §7.6): it
// gets the first answer again, on both sides.
inline constexpr int64_t kDuplicateWindowNs = 60'000'000'000;
// Octets enough for any message this file builds.
inline constexpr std::size_t kMaxBuiltMessage = 512;

// A set of Mismatch kinds.
class MismatchSet {
 public:
  void add(Mismatch m) noexcept { bits_ |= uint64_t{1} << static_cast<unsigned>(m); }
  bool has(Mismatch m) const noexcept { return bits_ & (uint64_t{1} << static_cast<unsigned>(m)); }
  bool empty() const noexcept { return bits_ == 0; }
  void countInto(MismatchCounters& c) const noexcept {
    for (std::size_t i = 0; i < kMismatchCount; ++i)
      if (bits_ & (uint64_t{1} << i)) c.count(static_cast<Mismatch>(i));
  }

 private:
  static_assert(kMismatchCount <= 64);
  uint64_t bits_ = 0;
};

// The configured subscriber range: subscriber i has IMSI imsi_start + i and
// MSISDN msisdn_start + i, written with as many digits as the start values.
struct Identities {
  uint64_t imsi_start = 0;
  uint8_t imsi_digits = 15;
  uint64_t msisdn_start = 0;
  uint8_t msisdn_digits = 11;
  uint32_t count = 0;
  gtp::Plmn plmn{};

  uint64_t imsi(uint32_t i) const noexcept { return imsi_start + i; }
  uint64_t msisdn(uint32_t i) const noexcept { return msisdn_start + i; }
  // False when `imsi` is not in the range.
  bool indexOfImsi(uint64_t imsi, uint32_t& index) const noexcept {
    if (imsi < imsi_start || imsi - imsi_start >= count) return false;
    index = static_cast<uint32_t>(imsi - imsi_start);
    return true;
  }
};

// `value` as exactly `width` decimal digits (leading zeros); empty if it does
// not fit.
gtp::Digits toDigits(uint64_t value, uint8_t width) noexcept;
// The value of a string of 1 to 19 decimal digits.
bool digitsValue(std::string_view digits, uint64_t& out) noexcept;

// The TEID a side puts in its user-plane F-TEID for the subscriber `imsi` on
// the node `addr`. Both sides compute it, so each can check that the other's
// user-plane F-TEID crossed the proxy unchanged, even in separate processes.
// The dedicated bearer's endpoints are sides of their own, so that its
// F-TEIDs differ from the default bearer's.
// GTPv1's SGSNs and GGSNs are sides of their own too (v1_messages.h).
enum class PlaneSide : uint8_t {
  kSgw = 1, kPgw = 2, kSgwDedicated = 3, kPgwDedicated = 4, kSgsn = 5, kGgsn = 6
};
uint32_t userPlaneTeid(PlaneSide side, uint64_t imsi, const IpAddress& addr) noexcept;

// The control-plane TEIDs an access node (SGW, SGSN) gives its subscribers:
// subscriber i gets (i + 1) * multiplier mod 2^32, unique, never 0 nor
// 0xffffffff for i < count, and reversible without a table. It depends on
// the subscriber count only, so a gateway in another process knows the TEID
// the access node gave (a GGSN checks that a proxy replaced it).
class ControlTeids {
 public:
  explicit ControlTeids(uint32_t count = 0) noexcept;
  uint32_t teid(uint32_t index) const noexcept { return (index + 1) * multiplier_; }
  // The subscriber of `teid`; false when it is none of the `count`.
  bool indexOf(uint32_t teid, uint32_t& index) const noexcept {
    const uint32_t v = teid * inverse_;
    if (v == 0 || v > count_) return false;
    index = v - 1;
    return true;
  }

 private:
  uint32_t count_ = 0;
  uint32_t multiplier_ = 0x9e3779b1u;
  uint32_t inverse_ = 0;
};

gtp::Ipv4 toIpv4(uint32_t addr) noexcept;
uint32_t fromIpv4(const gtp::Ipv4& a) noexcept;

// The IMEISV of subscriber `index`: a type allocation code, a serial number
// from the index, software version 01.
gtp::Digits imeisvDigits(uint32_t index) noexcept;

// A TFT creating one bidirectional packet filter for UDP (TS 24.008
// §10.5.6.12): operation "create new TFT", one filter, precedence 0,
// protocol identifier 17.
inline constexpr uint8_t kUdpTft[] = {0x21, 0x31, 0x00, 0x02, 0x30, 0x11};

// The GTP codecs' addresses and the emulator's, both ways; inline, as every
// message built or checked goes through them.
//
// `addr` in the IPv4 or the IPv6 field of a codec value (an F-TEID, a GSN
// Address), by its family.
inline void toGtpAddress(const IpAddress& addr, std::optional<gtp::Ipv4>& ipv4,
                         std::optional<gtp::Ipv6>& ipv6) noexcept {
  if (addr.isV4()) {
    ipv4.emplace();
    std::memcpy(ipv4->octets.data(), addr.octets.data() + 12, 4);
  } else {
    ipv6 = gtp::Ipv6{addr.octets};
  }
}
// The address of `family` (AF_INET, AF_INET6) among a codec value's fields;
// false when it has none of that family.
inline bool fromGtpAddress(const std::optional<gtp::Ipv4>& ipv4, int family,
                           IpAddress& out) noexcept {
  if (family != AF_INET || !ipv4) return false;
  out = IpAddress();
  std::memcpy(out.octets.data() + 12, ipv4->octets.data(), 4);
  return true;
}
inline bool fromGtpAddress(const std::optional<gtp::Ipv6>& ipv6, int family,
                           IpAddress& out) noexcept {
  if (family != AF_INET6 || !ipv6) return false;
  out = IpAddress::ipv6(ipv6->octets);
  return true;
}

// An F-TEID naming `addr`: its IPv4 or its IPv6 address field, by the
// address's family (TS 29.274 §8.22: flags V4, V6).
inline gtp::v2::FTeid makeFTeid(uint8_t interface_type, uint32_t teid,
                                const IpAddress& addr) noexcept {
  gtp::v2::FTeid f;
  f.interface_type = interface_type;
  f.teid = teid;
  toGtpAddress(addr, f.ipv4, f.ipv6);
  return f;
}
// The address `f` carries in `family` (AF_INET, AF_INET6); false when it has
// none of that family.
inline bool fteidAddress(const gtp::v2::FTeid& f, int family, IpAddress& out) noexcept {
  return fromGtpAddress(f.ipv4, family, out) || fromGtpAddress(f.ipv6, family, out);
}
// The one address of an F-TEID that carries a single family, as the
// emulator's nodes send them; false when it carries none or both.
inline bool fteidSoleAddress(const gtp::v2::FTeid& f, IpAddress& out) noexcept {
  if (f.ipv4.has_value() == f.ipv6.has_value()) return false;
  return fteidAddress(f, f.ipv4 ? AF_INET : AF_INET6, out);
}

// ---- Requests (SGW side) ----

struct CreateSessionRequestArgs {
  uint32_t sequence = 0;
  uint32_t index = 0;  // subscriber index: MEI, ULI derive from it
  const Identities* ids = nullptr;
  const gtp::v2::Apn* apn = nullptr;
  IpAddress sgw_addr{};   // its family is the F-TEIDs' (control and user plane)
  uint32_t sgw_teid = 0;  // the SGW's control-plane TEID for the session
  uint8_t ebi = kDefaultEbi;
  uint8_t recovery = 0;
};
gtp::Result<std::size_t> buildCreateSessionRequest(const CreateSessionRequestArgs& a,
                                                   std::span<uint8_t> out) noexcept;

struct ModifyBearerRequestArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the PGW-side control TEID the SGW was given
  uint32_t index = 0;
  const Identities* ids = nullptr;
  IpAddress sgw_addr{};
  uint8_t ebi = kDefaultEbi;
  uint32_t modify_count = 0;  // varies the ULI from one modification to the next
  // Non-zero: a Sender F-TEID for Control Plane with this TEID at sgw_addr
  // (the session's SGW changed: TS 29.274 Table 7.2.7-1).
  uint32_t sender_teid = 0;
};
gtp::Result<std::size_t> buildModifyBearerRequest(const ModifyBearerRequestArgs& a,
                                                  std::span<uint8_t> out) noexcept;

gtp::Result<std::size_t> buildDeleteSessionRequest(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t lbi, std::span<uint8_t> out) noexcept;

gtp::Result<std::size_t> buildEchoRequest(uint32_t sequence, uint8_t recovery,
                                          std::span<uint8_t> out) noexcept;
gtp::Result<std::size_t> buildEchoResponse(uint32_t sequence, uint8_t recovery,
                                           std::span<uint8_t> out) noexcept;

// What a Modify Bearer Command of subscriber `index` asks for: both sides
// derive it, so the SGW can tell that the triggered Update Bearer Request
// carries what it commanded.
gtp::v2::Ambr commandedAmbr(uint32_t index) noexcept;
// Bearer QoS of the default bearer as a command asks for it, and of the
// dedicated bearer when created and when updated (GBR, QCI 1).
gtp::v2::BearerQos commandedQos() noexcept;
gtp::v2::BearerQos dedicatedQos(bool updated) noexcept;

// Modify Bearer Command (TS 29.274 §7.2.14.1, from the SGW; its sequence
// number carries the command bit) and Update Bearer Request (§7.2.15, from
// the PGW): the bearer with its QoS, and the APN-AMBR, in their tables' order.
struct BearerModificationArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the control TEID the other side gave
  uint8_t ebi = kDefaultEbi;
  gtp::v2::BearerQos qos{};
  gtp::v2::Ambr apn_ambr{};
};
gtp::Result<std::size_t> buildBearerModification(gtp::v2::MessageType type,
                                                 const BearerModificationArgs& a,
                                                 std::span<uint8_t> out) noexcept;

// ---- Responses (SGW side) ----

// Delete Bearer Response (TS 29.274 §7.2.10.2, Table 7.2.10.2-1) to a request
// that deleted a PDN connection by its LBI: Cause, and when accepted the
// Linked EPS Bearer ID (`lbi`, EBI instance 0; 0: none). A request naming a
// dedicated bearer is answered with buildBearerResponse().
gtp::Result<std::size_t> buildDeleteBearerResponse(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t cause, uint8_t lbi,
                                                   std::span<uint8_t> out) noexcept;

// Create Bearer Response (TS 29.274 §7.2.4, Table 7.2.4-2): the bearer the
// SGW side assigned (`ebi`), its S5/S8-U SGW F-TEID (instance 2) and the
// PGW's S5/S8-U F-TEID given back (instance 3), both of the dedicated bearer.
struct CreateBearerResponseArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the control TEID the SGW sends its own requests to
  uint8_t cause = kCauseAccepted;
  uint8_t ebi = kDedicatedEbi;
  uint64_t imsi = 0;
  IpAddress sgw_addr{};     // the SGW node's: its F-TEID names it
  IpAddress pgw_u_addr{};   // the address of the PGW's F-TEID in the request
};
gtp::Result<std::size_t> buildCreateBearerResponse(const CreateBearerResponseArgs& a,
                                                   std::span<uint8_t> out) noexcept;
// A response of `type` naming one bearer: Cause and, when accepted, a Bearer
// Context with `ebi` and Cause accepted (Modify Bearer, Update Bearer, and
// Delete Bearer of a dedicated bearer: Tables 7.2.8-2, 7.2.16-2, 7.2.10.2-2).
gtp::Result<std::size_t> buildBearerResponse(gtp::v2::MessageType type, uint32_t sequence,
                                             uint32_t header_teid, uint8_t cause, uint8_t ebi,
                                             std::span<uint8_t> out) noexcept;

// ---- Requests (PGW side) ----

// Create Bearer Request (TS 29.274 §7.2.3) for a dedicated bearer: LBI, and
// a Bearer Context with EBI 0, a TFT, the PGW's S5/S8-U F-TEID (instance 1),
// Bearer QoS and Charging ID.
struct CreateBearerRequestArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the SGW-side control TEID: the CSR's sender F-TEID TEID
  uint8_t lbi = kDefaultEbi;
  uint64_t imsi = 0;
  IpAddress pgw_addr{};  // the PGW node's: its F-TEID names it
  uint32_t charging_id = 0;
};
gtp::Result<std::size_t> buildCreateBearerRequest(const CreateBearerRequestArgs& a,
                                                  std::span<uint8_t> out) noexcept;
// Delete Bearer Request (TS 29.274 §7.2.9.2) of one dedicated bearer: EBI
// instance 1.
gtp::Result<std::size_t> buildDeleteBearerRequest(uint32_t sequence, uint32_t header_teid,
                                                  uint8_t ebi, std::span<uint8_t> out) noexcept;

// ---- Responses (PGW side) ----

struct CreateSessionResponseArgs {
  uint32_t sequence = 0;
  uint32_t header_teid = 0;  // the sender F-TEID TEID of the request
  uint8_t cause = kCauseAccepted;
  // The rest only for an accepted creation.
  IpAddress pgw_addr{};  // its family is the F-TEIDs' (control and user plane)
  uint32_t pgw_teid = 0;
  uint32_t ue_ipv4 = 0;
  uint8_t ebi = kDefaultEbi;
  uint32_t pgw_u_teid = 0;
  uint32_t charging_id = 0;
  gtp::v2::Ambr apn_ambr{};
  uint8_t recovery = 0;
};
gtp::Result<std::size_t> buildCreateSessionResponse(const CreateSessionResponseArgs& a,
                                                    std::span<uint8_t> out) noexcept;
inline gtp::Result<std::size_t> buildModifyBearerResponse(uint32_t sequence,
                                                          uint32_t header_teid, uint8_t cause,
                                                          uint8_t ebi,
                                                          std::span<uint8_t> out) noexcept {
  return buildBearerResponse(gtp::v2::MessageType::kModifyBearerResponse, sequence, header_teid,
                             cause, ebi, out);
}
gtp::Result<std::size_t> buildDeleteSessionResponse(uint32_t sequence, uint32_t header_teid,
                                                    uint8_t cause, std::span<uint8_t> out) noexcept;
// A response of `type` carrying only a Cause (rejections of malformed or
// unknown-session requests).
gtp::Result<std::size_t> buildCauseOnlyResponse(gtp::v2::MessageType type, uint32_t sequence,
                                                uint32_t header_teid, uint8_t cause,
                                                std::span<uint8_t> out) noexcept;

// The first Bearer Context (instance 0) of a message.
struct BearerContextView {
  bool present = false;
  std::optional<uint8_t> ebi;
  std::optional<uint8_t> cause;
  bool tft = false;
  std::optional<gtp::v2::BearerQos> qos;
  std::array<std::optional<gtp::v2::FTeid>, 4> fteid{};  // by instance
};

// ---- Views and checks at the PGW ----

struct CreateSessionRequestView {
  std::optional<uint64_t> imsi;  // absent, or not all digits
  std::optional<gtp::v2::FTeid> sender;  // instance 0
  bool has_bearer = false;
  std::optional<uint8_t> ebi;             // in the first bearer context
  std::optional<gtp::v2::FTeid> sgw_u;    // S5/S8-U SGW F-TEID, instance 2
  std::optional<gtp::v2::Ambr> apn_ambr;
};
gtp::Result<CreateSessionRequestView> viewCreateSessionRequest(
    const gtp::v2::Message& m) noexcept;

struct PgwCheckContext {
  bool relay = false;  // no proxy: F-TEIDs name the SGW
  // The proxy's gateway-side address in the family of the PGW's leg: the
  // sender F-TEID must carry it in that family.
  IpAddress proxy_gateway{};
  const Identities* ids = nullptr;
  // The instance the proxy group fails over to (--failover-to of that
  // family): F-TEIDs naming it name the proxy too.
  std::optional<IpAddress> failover_gateway;
};
MismatchSet checkCreateSessionRequest(const CreateSessionRequestView& v,
                                      const PgwCheckContext& c) noexcept;

struct ModifyBearerRequestView {
  bool has_bearer = false;
  std::optional<uint8_t> ebi;
  std::optional<gtp::v2::FTeid> sgw_u;  // S5/S8-U SGW F-TEID, instance 1
};
gtp::Result<ModifyBearerRequestView> viewModifyBearerRequest(const gtp::v2::Message& m) noexcept;
// `imsi` and `ebi` of the session the request's TEID names.
MismatchSet checkModifyBearerRequest(const ModifyBearerRequestView& v, const PgwCheckContext& c,
                                     uint64_t imsi, uint8_t ebi) noexcept;

struct DeleteSessionRequestView {
  std::optional<uint8_t> lbi;  // Linked EPS Bearer ID
};
gtp::Result<DeleteSessionRequestView> viewDeleteSessionRequest(const gtp::v2::Message& m) noexcept;

// A Create/Update/Delete Bearer Response (TS 29.274 §7.2.4, 7.2.16, 7.2.10.2)
// as the PGW reads it.
struct BearerResponseView {
  std::optional<uint8_t> cause;
  BearerContextView bearer;  // F-TEIDs: S5/S8-U SGW (2) and PGW (3) of a creation
};
gtp::Result<BearerResponseView> viewBearerResponse(const gtp::v2::Message& m) noexcept;
// A Create Bearer Response of the dedicated bearer of subscriber `imsi`:
// accepted, bearer `ebi` accepted, the SGW's S5/S8-U F-TEID as the SGW made
// it and the PGW's given back as the PGW made it.
MismatchSet checkCreateBearerResponse(const BearerResponseView& v, const PgwCheckContext& c,
                                      uint64_t imsi, uint8_t ebi) noexcept;
// An Update or Delete Bearer Response: accepted, bearer `ebi` accepted.
MismatchSet checkBearerResponse(const BearerResponseView& v, uint8_t ebi) noexcept;

// ---- Views and checks at the SGW ----

struct ResponseView {
  std::optional<uint8_t> cause;
  std::optional<gtp::v2::FTeid> pgw_c;  // PGW S5/S8 F-TEID for control plane, instance 1
  bool has_bearer = false;
  std::optional<uint8_t> ebi;
  std::optional<uint8_t> bearer_cause;
  std::optional<gtp::v2::FTeid> pgw_u;  // S5/S8-U PGW F-TEID, instance 2
};
gtp::Result<ResponseView> viewResponse(const gtp::v2::Message& m) noexcept;

struct SgwCheckContext {
  bool relay = false;
  // The proxy's access-side address in the family of the SGW's leg: the PGW
  // control F-TEID must carry it in that family.
  IpAddress proxy_access{};
  // The instance the proxy group fails over to (--failover-to of that
  // family): F-TEIDs naming it name the proxy too.
  std::optional<IpAddress> failover_access;
  uint64_t imsi = 0;
  uint8_t ebi = kDefaultEbi;
  // Rejection causes this run expects (from --pgw-cause and --expect-cause).
  const std::bitset<256>* expected_rejections = nullptr;
  // Addresses of the PGWs of this process with the cause each rejects with (0:
  // accepts), to tell whether an acceptance was expected. May be empty.
  std::span<const IpAddress> local_pgws{};
  std::span<const uint8_t> local_pgw_causes{};
};
MismatchSet checkCreateSessionResponse(const ResponseView& v, const SgwCheckContext& c) noexcept;
// Modify Bearer and Delete Session responses: Cause accepted, and the
// bearer context (when present) for the right EBI, accepted.
MismatchSet checkSimpleResponse(const ResponseView& v, const SgwCheckContext& c) noexcept;

// A request naming bearers as its receiver reads it: Create, Update and
// Delete Bearer Requests at the SGW (TS 29.274 §7.2.3, 7.2.15, 7.2.9.2), a
// Modify Bearer Command at the PGW (§7.2.14.1).
struct BearerRequestView {
  std::optional<uint8_t> lbi;    // Linked EPS Bearer ID: EBI instance 0
  std::optional<uint8_t> ebi;    // EPS Bearer ID instance 1 (the bearers a deletion names)
  std::optional<uint8_t> cause;  // why the network deletes (8: reactivation requested)
  std::optional<gtp::v2::Ambr> apn_ambr;
  BearerContextView bearer;  // F-TEID instance 1: the S5/S8-U PGW F-TEID of a creation
};
gtp::Result<BearerRequestView> viewBearerRequest(const gtp::v2::Message& m) noexcept;
// A Create Bearer Request of a new dedicated bearer of the session of
// subscriber c.imsi: LBI the default bearer, a Bearer Context offering EBI 0
// with TFT and QoS, and the PGW's S5/S8-U F-TEID as the PGW made it.
MismatchSet checkCreateBearerRequest(const BearerRequestView& v, const SgwCheckContext& c) noexcept;
// An Update Bearer Request of bearer `ebi`: its QoS and the APN-AMBR.
MismatchSet checkUpdateBearerRequest(const BearerRequestView& v, uint8_t ebi) noexcept;

}  // namespace gtpcp::peer
