// The requests the proxy sends on its own behalf, in either version: the
// SGW or SGSN told that its gateway restarted, a gateway asked to delete a
// session it made for a creation the proxy had given up on it, a Delete PDN
// Connection Set Request sent on. Each is held in a transaction like any
// request, so that its answer (and a second copy of it) is recognised, and
// sent again every T3 until answered, N3 times; the answer goes nowhere.
//
// Single-threaded: the worker's main loop is the only caller. The retry ring
// is made at construction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine.h"

namespace gtpcp::worker {

template <class V>
struct Context;

class OwnRequests {
 public:
  explicit OwnRequests(Engine& engine);

  // Sends `bytes`, the proxy's own request of version V numbered `n`, toward
  // `toward` (socket, to), and follows it until answered.
  template <class V>
  void send(const Numbered& n, uint8_t message_type, Leg toward, uint8_t socket, const net::Address& to,
            uint32_t session_teid, std::span<const uint8_t> bytes) noexcept {
    send(n.key, V::requesterSequence(n.sequence), message_type, V::kFlags, toward, socket, to, session_teid, bytes);
  }
  // Tells the SGW or SGSN of `s` that the session's gateway restarted (V:
  // the session's version), so that it has the UE connect again elsewhere.
  template <class V>
  void tellRestart(const SessionShm& s) noexcept;
  // An accepted answer to a creation that matches no transaction: when its
  // session went elsewhere, the gateway that sent it is asked to delete what
  // it made, or it would stay there until that gateway's own clean-up.
  template <class V>
  void deleteOrphan(const Context<V>& c) noexcept;
  // A peer answered one of the proxy's own requests (`t`): nobody waits for it.
  void answered(TransactionShm& t) noexcept;
  // Sends again what is due. Every loop turn.
  void retransmit(uint64_t now_ns) noexcept;

 private:
  void send(uint64_t response_key, uint32_t sequence, uint8_t message_type, uint8_t flags, Leg toward, uint8_t socket,
            const net::Address& to, uint32_t session_teid, std::span<const uint8_t> bytes) noexcept;

  Engine& engine_;
  struct Retry {
    uint32_t record;
    uint64_t response_key;
    uint64_t deadline_ns;
    uint32_t sent;  // times sent so far
  };
  std::vector<Retry> retries_;  // a ring; deadlines come in order (all T3 apart)
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace gtpcp::worker
