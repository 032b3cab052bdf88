// Delete PDN Connection Set (TS 29.274 §7.9.1, TS 23.007 §16): a partially
// failed node names the connections it lost by FQ-CSID. The proxy is that
// node's peer: it answers, deletes its own copies of the connections the
// request names (those of sessions the requester is a peer of), and sends the
// request on, with its own sequence numbers, once to each peer on the other
// leg that held one of them. The FQ-CSIDs go unchanged: the proxy passed them
// through when the sessions were made, so the other leg knows them as they are.
//
// The forwarder gives every worker a copy (the sets name sessions of every
// partition); the worker that the requester's sequence number names answers,
// the others only delete and relay. Every copy opens a transaction for the
// requester's number, so a retransmission is answered again from the cache
// and walked only once.
#include <cstring>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/patch.h"
#include "proxy.h"
#include "proxy_context.h"

namespace gtpcp::worker {

using namespace gtp::v2;

namespace {

// Session slots looked at per deletion and loop turn: a million-session
// table is walked in a few hundred turns while traffic flows in between.
constexpr uint32_t kSlotsPerTurn = 4096;

}  // namespace

void Proxy::deletePdnConnectionSet(Context& c) noexcept {
  const Header& h = c.message.header();
  const bool answers = (h.sequence_number & ~kCommandBit) % settings_.workers == settings_.index;
  CsidSet csids;
  if (!csids.read(c.message)) {
    // Table 7.9.1-1: every FQ-CSID is conditional, but a request with none
    // names nothing to delete.
    if (answers) reject(c, static_cast<uint8_t>(Cause::kConditionalIeMissing), static_cast<uint8_t>(IeType::kFqCsid));
    return;
  }
  SetDeletion* d = nullptr;
  for (SetDeletion& e : set_deletions_) {
    if (!e.active) {
      d = &e;
      break;
    }
  }
  if (d == nullptr || c.message_bytes.size() > SetDeletion::kMaxRequest) {
    counters_.connection_set_overflow.add();
    if (answers) reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  TransactionShm* t = transactions_.open(proxyNumbered(allocateSequence(false)), c.arrival.peer,
                                         h.sequence_number, c.arrival.now_ns);
  if (t == nullptr) {
    counters_.transactions_full.add();
    if (answers) reject(c, static_cast<uint8_t>(Cause::kNoResourcesAvailable));
    return;
  }
  t->message_type = h.message_type;
  t->requester_socket = c.arrival.socket;
  counters_.transactions_started.add();

  d->active = true;
  d->csids = csids;
  d->requester = c.arrival.peer;
  d->cursor = SessionTable::Cursor{};
  d->request_length = static_cast<uint16_t>(c.message_bytes.size());
  std::memcpy(d->request.data(), c.message_bytes.data(), c.message_bytes.size());
  d->request[0] &= static_cast<uint8_t>(~kFlagPiggyback);
  d->peer_count = 0;
  counters_.connection_sets_deleted.add();

  if (answers) {
    // Accepted at once: what the proxy holds goes within a few loop turns,
    // and the other leg hears of it from the proxy's own requests.
    answer(c.arrival.socket, c.arrival.peer, static_cast<uint8_t>(MessageType::kDeletePdnConnectionSetResponse), 0,
           h.sequence_number, static_cast<uint8_t>(Cause::kRequestAccepted), 0, 0, t);
  } else {
    t->flags |= kAnsweredElsewhere;
    transactions_.answered(*t, {});
  }
  counters_.transactions_live.set(transactions_.live());
}

void Proxy::deleteConnectionSets() noexcept {
  bool deleted = false;
  for (SetDeletion& d : set_deletions_) {
    if (!d.active) continue;
    sessions_.scan(d.cursor, kSlotsPerTurn, [&](SessionShm& s) {
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
      relaySetDeletion(d, from_access ? Leg::kGateway : Leg::kAccess, socket, peer);
      endSession(s);
      counters_.connection_set_sessions_deleted.add();
      deleted = true;
      return true;
    });
    if (d.cursor.done(sessions_)) d.active = false;
  }
  if (deleted) counters_.sessions_active.set(sessions_.active());
}

void Proxy::relaySetDeletion(SetDeletion& d, Leg toward, uint8_t socket, const net::Address& peer) noexcept {
  if (!peer.valid()) return;
  for (uint8_t i = 0; i < d.peer_count; ++i)
    if (d.peers[i] == peer) return;
  if (d.peer_count == SetDeletion::kMaxPeers) {
    counters_.connection_set_overflow.add();
    return;
  }
  d.peers[d.peer_count++] = peer;
  const uint32_t sequence = allocateSequence(false);
  const std::span<uint8_t> bytes(resend_.data(), d.request_length);
  std::memcpy(bytes.data(), d.request.data(), d.request_length);
  patchSequenceNumber(bytes, sequence);
  counters_.connection_set_requests_sent.add();
  sendOwnRequest(sequence, MessageType::kDeletePdnConnectionSetRequest, toward, socket, peer, 0, bytes);
}

}  // namespace gtpcp::worker
