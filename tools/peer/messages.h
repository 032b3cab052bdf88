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

// F-TEID interface types (TS 29.274 Table 8.22-1).
inline constexpr uint8_t kIfS5S8SgwGtpU = 4;
inline constexpr uint8_t kIfS5S8PgwGtpU = 5;
inline constexpr uint8_t kIfS5S8SgwGtpC = 6;
inline constexpr uint8_t kIfS5S8PgwGtpC = 7;
inline constexpr uint8_t kRatEutran = 6;
inline constexpr uint8_t kDefaultEbi = 5;
inline constexpr uint8_t kCauseAccepted = 16;
inline constexpr uint8_t kCauseContextNotFound = 64;
inline constexpr uint8_t kCauseNoResources = 73;
// A request repeated from the same source address and port with the same
// sequence number within this long is a retransmission (TS 29.274 §7.6): it
// gets the first answer again, on both sides.
inline constexpr int64_t kDuplicateWindowNs = 60'000'000'000;
// Octets enough for any message this file builds.
inline constexpr std::size_t kMaxBuiltMessage = 512;

inline bool causeAccepted(uint8_t cause) noexcept { return cause >= 16 && cause < 64; }

// A set of Mismatch kinds.
class MismatchSet {
 public:
  void add(Mismatch m) noexcept { bits_ |= 1u << static_cast<unsigned>(m); }
  bool has(Mismatch m) const noexcept { return bits_ & (1u << static_cast<unsigned>(m)); }
  bool empty() const noexcept { return bits_ == 0; }
  void countInto(MismatchCounters& c) const noexcept {
    for (std::size_t i = 0; i < kMismatchCount; ++i)
      if (bits_ & (1u << i)) c.count(static_cast<Mismatch>(i));
  }

 private:
  static_assert(kMismatchCount <= 32);
  uint32_t bits_ = 0;
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
enum class PlaneSide : uint8_t { kSgw = 1, kPgw = 2 };
uint32_t userPlaneTeid(PlaneSide side, uint64_t imsi, const IpAddress& addr) noexcept;

gtp::Ipv4 toIpv4(uint32_t addr) noexcept;
uint32_t fromIpv4(const gtp::Ipv4& a) noexcept;

// F-TEID addresses and the emulator's, both ways; inline, as every message
// built or checked goes through them.
//
// An F-TEID naming `addr`: its IPv4 or its IPv6 address field, by the
// address's family (TS 29.274 §8.22: flags V4, V6).
inline gtp::v2::FTeid makeFTeid(uint8_t interface_type, uint32_t teid,
                                const IpAddress& addr) noexcept {
  gtp::v2::FTeid f;
  f.interface_type = interface_type;
  f.teid = teid;
  if (addr.isV4()) {
    f.ipv4.emplace();
    std::memcpy(f.ipv4->octets.data(), addr.octets.data() + 12, 4);
  } else {
    f.ipv6 = gtp::Ipv6{addr.octets};
  }
  return f;
}
// The address `f` carries in `family` (AF_INET, AF_INET6); false when it has
// none of that family.
inline bool fteidAddress(const gtp::v2::FTeid& f, int family, IpAddress& out) noexcept {
  if (family == AF_INET && f.ipv4) {
    out = IpAddress();
    std::memcpy(out.octets.data() + 12, f.ipv4->octets.data(), 4);
    return true;
  }
  if (family == AF_INET6 && f.ipv6) {
    out = IpAddress::ipv6(f.ipv6->octets);
    return true;
  }
  return false;
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
};
gtp::Result<std::size_t> buildModifyBearerRequest(const ModifyBearerRequestArgs& a,
                                                  std::span<uint8_t> out) noexcept;

gtp::Result<std::size_t> buildDeleteSessionRequest(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t lbi, std::span<uint8_t> out) noexcept;

gtp::Result<std::size_t> buildEchoRequest(uint32_t sequence, uint8_t recovery,
                                          std::span<uint8_t> out) noexcept;
gtp::Result<std::size_t> buildEchoResponse(uint32_t sequence, uint8_t recovery,
                                           std::span<uint8_t> out) noexcept;

// ---- Responses (SGW side) ----

// Delete Bearer Response (TS 29.274 §7.2.10.2, Table 7.2.10.2-1) to a request
// that deleted a PDN connection by its LBI: Cause, and when accepted the
// Linked EPS Bearer ID (`lbi`, EBI instance 0; 0: none). Bearer Contexts are
// for requests that name dedicated bearers (EBIs), which this emulator never
// has.
gtp::Result<std::size_t> buildDeleteBearerResponse(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t cause, uint8_t lbi,
                                                   std::span<uint8_t> out) noexcept;

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
gtp::Result<std::size_t> buildModifyBearerResponse(uint32_t sequence, uint32_t header_teid,
                                                   uint8_t cause, uint8_t ebi,
                                                   std::span<uint8_t> out) noexcept;
gtp::Result<std::size_t> buildDeleteSessionResponse(uint32_t sequence, uint32_t header_teid,
                                                    uint8_t cause, std::span<uint8_t> out) noexcept;
// A response of `type` carrying only a Cause (rejections of malformed or
// unknown-session requests).
gtp::Result<std::size_t> buildCauseOnlyResponse(gtp::v2::MessageType type, uint32_t sequence,
                                                uint32_t header_teid, uint8_t cause,
                                                std::span<uint8_t> out) noexcept;

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

// A Delete Bearer Request (TS 29.274 §7.2.9.2) as the SGW reads it.
struct DeleteBearerRequestView {
  std::optional<uint8_t> lbi;    // Linked EPS Bearer ID: EBI instance 0
  std::optional<uint8_t> cause;  // why the network deletes (8: reactivation requested)
};
gtp::Result<DeleteBearerRequestView> viewDeleteBearerRequest(const gtp::v2::Message& m) noexcept;

}  // namespace gtpcp::peer
