// Hand-built GTPv2-C messages and a minimal PGW, for the integration tests
// that drive gtpcp with raw UDP datagrams or ring records instead of the peer
// emulator (overload, each process alone).
//
// The messages are the peer emulator's (tools/peer/messages.h), so they are
// the ones the proxy sees in the emulator's runs; decode() reads back what the
// tests check: header, Cause, Recovery, IMSI and every F-TEID.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/values.h"

namespace gtpcp::integration {

using Bytes = std::vector<uint8_t>;

inline constexpr uint8_t kCauseAccepted = 16;
inline constexpr uint8_t kCauseContextNotFound = 64;
inline constexpr uint8_t kCauseNoResources = 73;
inline constexpr uint8_t kIfSgwGtpU = 4;  // S5/S8 SGW GTP-U
inline constexpr uint8_t kIfPgwGtpU = 5;  // S5/S8 PGW GTP-U
inline constexpr uint8_t kIfSgwGtpC = 6;  // S5/S8 SGW GTP-C
inline constexpr uint8_t kIfPgwGtpC = 7;  // S5/S8 PGW GTP-C

// The SGW side.
Bytes createSessionRequest(uint32_t sequence, uint64_t imsi, const gtp::Ipv4& sgw, uint32_t sgw_teid,
                           std::string_view apn = "internet");
// `sender_teid` non-zero: with a Sender F-TEID for Control Plane (the SGW moved).
Bytes modifyBearerRequest(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& sgw,
                          uint32_t modify_count = 0, uint32_t sender_teid = 0);
Bytes deleteSessionRequest(uint32_t sequence, uint32_t header_teid);
Bytes echoRequest(uint32_t sequence, uint8_t recovery = 1);

// The PGW side.
Bytes createSessionResponse(uint32_t sequence, uint32_t header_teid, const gtp::Ipv4& pgw, uint32_t pgw_teid,
                            uint64_t imsi, uint8_t cause = kCauseAccepted);
Bytes modifyBearerResponse(uint32_t sequence, uint32_t header_teid, uint8_t cause = kCauseAccepted);
Bytes deleteSessionResponse(uint32_t sequence, uint32_t header_teid, uint8_t cause = kCauseAccepted);
// A dedicated bearer (EBI 6) of the default bearer 5: asked for and removed
// by the PGW, answered by the SGW.
Bytes createBearerRequest(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& pgw);
Bytes createBearerResponse(uint32_t sequence, uint32_t header_teid, uint64_t imsi, const gtp::Ipv4& sgw,
                           const gtp::Ipv4& pgw);
Bytes deleteBearerRequest(uint32_t sequence, uint32_t header_teid, uint8_t ebi = 6);
Bytes deleteBearerResponse(uint32_t sequence, uint32_t header_teid, uint8_t ebi = 6);

// What the tests read back from a GTPv2-C message.
struct Decoded {
  bool ok = false;
  std::string error;  // why it did not decode
  uint8_t type = 0;
  bool teid_present = false;
  uint32_t teid = 0;
  uint32_t sequence = 0;
  std::optional<uint8_t> cause;     // top-level
  std::optional<uint8_t> recovery;
  std::optional<uint64_t> imsi;
  std::vector<gtp::v2::FTeid> fteids;  // every F-TEID, nested ones too, in wire order

  // The first F-TEID of `interface_type`, if any.
  std::optional<gtp::v2::FTeid> fteid(uint8_t interface_type) const;
  std::string describe() const;
};
Decoded decode(std::span<const uint8_t> bytes);

// The partition the forwarder computes for a Create Session Request of
// `imsi` (group::partitionOfCreateSession on the decoded message).
uint16_t partitionOfImsi(uint64_t imsi);
// `count` IMSIs from `start` upwards whose creations land on `worker`.
std::vector<uint64_t> imsisOfWorker(uint64_t start, std::size_t count, uint16_t worker, uint16_t workers);

// A PGW that accepts every creation and answers Modify Bearer and Delete
// Session for the sessions it holds (Context Not Found otherwise).
class PgwResponder {
 public:
  explicit PgwResponder(const gtp::Ipv4& self) : self_(self) {}

  struct Session {
    uint64_t imsi = 0;
    uint32_t proxy_teid = 0;  // the sender F-TEID TEID of the Create Session Request
  };
  // The answer to `request`; empty for something a PGW does not answer.
  Bytes answer(std::span<const uint8_t> request);

  const std::map<uint32_t, Session>& sessions() const noexcept { return sessions_; }
  std::size_t creates = 0, modifies = 0, deletes = 0, unknown = 0;

 private:
  gtp::Ipv4 self_;
  uint32_t next_teid_ = 0x50000001;
  std::map<uint32_t, Session> sessions_;  // by the PGW's own control TEID
};

}  // namespace gtpcp::integration
