#include "connection_set_deletions.h"

#include <cstring>

#include "restore.h"
#include "versions.h"

namespace gtpcp::worker {

namespace {

// Delete PDN Connection Set Requests carried out at once: a handful of
// partial failures in the same seconds.
constexpr std::size_t kMaxDeletions = 16;
// Session slots looked at per deletion and loop turn: a million-session
// table is walked in a few hundred turns while traffic flows in between.
constexpr uint32_t kSlotsPerTurn = 4096;

}  // namespace

ConnectionSetDeletions::ConnectionSetDeletions(Engine& engine, OwnRequests& own)
    : engine_(engine), own_(own), deletions_(kMaxDeletions) {}

bool ConnectionSetDeletions::hasRoom(std::size_t request_size) const noexcept {
  if (request_size > Deletion::kMaxRequest) return false;
  for (const Deletion& d : deletions_)
    if (!d.active) return true;
  return false;
}

void ConnectionSetDeletions::start(const CsidSet& csids, const net::Address& requester,
                                   std::span<const uint8_t> request) noexcept {
  for (Deletion& d : deletions_) {
    if (d.active) continue;
    d.active = true;
    d.csids = csids;
    d.requester = requester;
    d.cursor = SessionTable::Cursor{};
    d.request_length = static_cast<uint16_t>(request.size());
    std::memcpy(d.request.data(), request.data(), request.size());
    d.request[0] &= static_cast<uint8_t>(~gtp::v2::kFlagPiggyback);
    d.peer_count = 0;
    d.completions_seen = 0;
    if (Restorer* r = engine_.restorer()) {
      d.completions_seen = r->completions();
      r->complete();
    }
    return;
  }
}

void ConnectionSetDeletions::walk() noexcept {
  SessionTable& sessions = engine_.sessions();
  bool deleted = false;
  for (Deletion& d : deletions_) {
    if (!d.active) continue;
    sessions.scan(d.cursor, kSlotsPerTurn, [&](SessionShm& s) {
      if (!d.csids.matches(s)) return true;
      // A node clears only the sets it is a party to: the session must have
      // the requester as its peer on one leg. The other leg hears of it.
      const bool from_access = s.sgw.address.sameHost(d.requester);
      const bool from_gateway = s.pgw.address.sameHost(d.requester) || s.gateway_address.sameHost(d.requester);
      if (!from_access && !from_gateway) return true;
      net::Address peer;
      uint8_t socket;
      if (from_access) {
        // Before its Create Session Response the PGW is only the address asked.
        peer = s.state == static_cast<uint8_t>(SessionState::kActive) ? s.pgw.address.withPort(kGtpcPort)
                                                                      : s.gateway_address;
        socket = s.gateway_socket;
      } else {
        peer = s.sgw.address.withPort(kGtpcPort);
        socket = s.access_socket;
      }
      relay(d, from_access ? Leg::kGateway : Leg::kAccess, socket, peer);
      engine_.endSession(s);
      engine_.counters().connection_set_sessions_deleted.add();
      deleted = true;
      return true;
    });
    if (!d.cursor.done(sessions)) continue;
    if (Restorer* r = engine_.restorer()) {
      if (r->completing()) continue;
      if (r->completions() != d.completions_seen) {
        d.completions_seen = r->completions();
        d.cursor = SessionTable::Cursor{};
        continue;
      }
    }
    d.active = false;
  }
  if (deleted) engine_.countSessions();
}

void ConnectionSetDeletions::relay(Deletion& d, Leg toward, uint8_t socket, const net::Address& peer) noexcept {
  if (!peer.valid()) return;
  for (uint8_t i = 0; i < d.peer_count; ++i)
    if (d.peers[i] == peer) return;
  if (d.peer_count == Deletion::kMaxPeers) {
    engine_.counters().connection_set_overflow.add();
    return;
  }
  d.peers[d.peer_count++] = peer;
  const Numbered n = V2Traits::next(engine_, toward);
  const std::span<uint8_t> bytes = engine_.resendBuffer().first(d.request_length);
  std::memcpy(bytes.data(), d.request.data(), d.request_length);
  V2Traits::patchSequenceNumber(bytes, n.sequence);
  engine_.counters().connection_set_requests_sent.add();
  own_.send<V2Traits>(n, static_cast<uint8_t>(gtp::v2::MessageType::kDeletePdnConnectionSetRequest), toward, socket,
                      peer, 0, bytes);
}

}  // namespace gtpcp::worker
