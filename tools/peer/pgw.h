// The emulated PGWs: answer Create Session, Modify Bearer, Delete Session and
// Echo requests per TS 29.274, check what the proxy made of the SGW's
// requests, and misbehave on demand (reject with a cause, answer late, drop a
// fraction of requests).
//
// On request the PGWs start procedures of their own: with --dedicated-bearer
// each accepted session gets a dedicated bearer, created (Create Bearer
// Request, piggybacked on the Create Session Response with --piggyback),
// updated and deleted, each step once the previous one was answered; with
// --commands a Modify Bearer Command is answered by an Update Bearer Request
// numbered like it (TS 29.274 §7.6), every second one of a session by a
// Modify Bearer Failure Indication, cause 72. The PGW's own requests go to
// the address the session's requests come from, port 2123, and are sent
// again after T3, N3 times.
//
// A retransmitted request (same source address and port, same sequence
// number, same message type, within 60 s) gets the cached answer again, not a
// second session. The session table, delays, drops and the PGW's own
// requests are GatewayCore's, shared with the GGSNs.
//
// PgwEngine is pure logic driven by the runner: no allocation, exception or
// log line per datagram. One thread only.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tools/peer/gateway_core.h"
#include "tools/peer/messages.h"
#include "tools/peer/outbox.h"
#include "tools/peer/stats.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

using PgwNodeConfig = GatewayNodeConfig;

struct PgwConfig : GatewayConfig {
  bool dedicated_bearer = false;  // a dedicated bearer per session: created, updated, deleted
  bool piggyback = false;         // its Create Bearer Request rides on the Create Session Response
  bool commands = false;          // Modify Bearer Commands are expected and answered
};

struct PgwSession : GatewaySession<192> {
  uint8_t ebi = 0;
  uint8_t commands = 0;  // Modify Bearer Commands received, first copies
};

class PgwEngine final : public GatewayCore<PgwEngine, PgwSession, PgwNodeStats> {
  friend class GatewayCore<PgwEngine, PgwSession, PgwNodeStats>;

 public:
  // `stats` has one entry per node.
  PgwEngine(PgwConfig config, Outbox& outbox, std::vector<PgwNodeStats>& stats,
            MismatchCounters& mismatches, MalformedCounters& malformed);

  void onDatagram(uint32_t node, const Endpoint& from, std::span<const uint8_t> bytes,
                  int64_t now) noexcept override;

 private:
  void respondCauseOnly(uint32_t node, const Endpoint& to, gtp::v2::MessageType type,
                        uint32_t seq, uint32_t teid, uint8_t cause, int64_t now) noexcept;
  bool duplicate(const Session& s, const Endpoint& from, uint32_t seq, uint8_t type,
                 int64_t now) const noexcept {
    return GatewayCore::duplicate(s, from, seq, type, 0, now);
  }
  // The answer of `length` octets just built in s.response answers `message_`
  // (of `type`, from `from`): a repeat of it within the window gets it again.
  void keepAnswer(Session& s, uint8_t type, const Endpoint& from, std::size_t length,
                  int64_t now) noexcept {
    GatewayCore::keepAnswer(s, type, message_.header().sequence_number, 0, from, length, now);
  }
  void onCreate(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  void onModifyOrDelete(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` is a Modify Bearer Command (TS 29.274 §7.2.14.1).
  void onCommand(uint32_t node, const Endpoint& from, int64_t now) noexcept;
  // `message_` answers one of the PGW's own requests.
  void onResponse(uint32_t node, int64_t now) noexcept;
  // Takes a free Outgoing record for request `p` of session `slot` numbered
  // `seq`, to the address the session's requests come from (the proxy) at the
  // GTP-C port.
  template <class Build>
  uint32_t prepare(uint32_t slot, Procedure p, uint32_t seq, uint8_t ebi, Build&& build) noexcept {
    const Endpoint to{sessions_[slot].last_src.addr, kGtpcPort};
    return GatewayCore::prepare(slot, to, p, seq, ebi, std::forward<Build>(build));
  }
  // Opens and sends the dedicated bearer's next request: `p` of session `slot`.
  void startDedicated(uint32_t slot, Procedure p, int64_t now) noexcept;

  void endSession(uint32_t slot, int64_t now) noexcept { release(slot, now); }

  PgwConfig config_;
  gtp::v2::Message message_;
};

}  // namespace gtpcp::peer
