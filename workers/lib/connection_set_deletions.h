// The Delete PDN Connection Set Requests being carried out (TS 29.274
// §7.9.1, TS 23.007 §16): a partially failed node named the connections it
// lost by FQ-CSID, and the proxy deletes its own copies of those whose
// sessions the requester is a peer of, sending the request on, with its own
// sequence numbers, once to each peer on the other leg that held one. The
// FQ-CSIDs go unchanged: the proxy passed them through when the sessions were
// made, so the other leg knows them as they are. The walk over the sessions
// is spread across loop turns, and covers the sessions held only in Redis
// when this instance acts for them (Restorer::complete(), read in first and
// walked again). The request itself (answering it, its
// transaction) is a GTPv2 procedure (procedures_v2.cc).
//
// Single-threaded: the worker's main loop is the only caller. The deletion
// slots are made at construction.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/net/address.h"
#include "connection_set.h"
#include "engine.h"
#include "own_requests.h"

namespace gtpcp::worker {

class ConnectionSetDeletions {
 public:
  ConnectionSetDeletions(Engine& engine, OwnRequests& own);

  // Whether a deletion for a request of `request_size` octets can start now.
  bool hasRoom(std::size_t request_size) const noexcept;
  // Starts deleting the sessions `csids` names that `requester` is a peer
  // of; `request` (as received) goes on to their peers on the other leg.
  // Only after hasRoom(request.size()).
  void start(const CsidSet& csids, const net::Address& requester, std::span<const uint8_t> request) noexcept;
  // Walks the sessions for the deletions under way, a bounded number of
  // slots per deletion and turn. Every loop turn.
  void walk() noexcept;

 private:
  struct Deletion {
    static constexpr std::size_t kMaxRequest = 1024;
    static constexpr std::size_t kMaxPeers = 64;
    bool active = false;
    CsidSet csids;
    net::Address requester;  // only the sessions it is a peer of go
    SessionTable::Cursor cursor;
    uint64_t completions_seen = 0;  // as GatewayWatch's: walk again once the stored sessions are in
    uint16_t request_length = 0;
    std::array<uint8_t, kMaxRequest> request{};  // as received, sent on with the proxy's numbers
    uint8_t peer_count = 0;
    std::array<net::Address, kMaxPeers> peers{};  // on the other leg, already sent the request
  };
  // Sends the request of `d` to `peer`, on the leg `toward`, unless it had it.
  void relay(Deletion& d, Leg toward, uint8_t socket, const net::Address& peer) noexcept;

  Engine& engine_;
  OwnRequests& own_;
  std::vector<Deletion> deletions_;  // a fixed number, made once
};

}  // namespace gtpcp::worker
