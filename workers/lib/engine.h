// The worker's session engine: what every procedure of either GTP version
// does with the session and transaction tables. It numbers the proxy's
// requests (seq % W == index, so that a response without a TEID still
// reaches this worker), opens and answers transactions, replays cached
// answers to retransmissions, sends, writes the sessions' changes to the
// persist ring and ends sessions; it expires transactions whose lifetime is
// over. It knows no message format: the procedures (procedures.h and the
// files of each version) decode, decide and translate, and come here for the
// state they share.
//
// Single-threaded: the worker's main loop is the only caller. Nothing here
// allocates after construction, throws or blocks.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/config/gateway_picker.h"
#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"
#include "gtp_constants.h"
#include "common/net/address.h"
#include "arrival.h"
#include "egress.h"
#include "persist.h"
#include "session_table.h"
#include "transaction_table.h"
#include "worker_layout.h"
#include "worker_metrics.h"

namespace gtpcp::worker {

class Restorer;

struct ProxySettings {
  uint32_t workers = 1;
  uint32_t index = 0;
  group::SocketPlan sockets;
  uint64_t transaction_timeout_ns = 9'000'000'000;  // T3 x (N3 + 1)
  // The proxy's own requests (Delete Bearer after a PGW restart, Delete
  // Session of an orphan) are sent again every T3, N3 times.
  uint64_t t3_ns = 3'000'000'000;
  uint32_t n3 = 2;
  // The group's Recovery when no forwarder segment tells it (tests).
  uint8_t recovery = 1;
};

// A number the proxy gives a request it sends, and the response key its
// answer is found by (transaction_table.h).
struct Numbered {
  uint32_t sequence;
  uint64_t key;
};

class Engine {
 public:
  Engine(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
         TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress);

  // -- what the engine holds for the procedures
  const ProxySettings& settings() const noexcept { return settings_; }
  WorkerCounters& counters() noexcept { return counters_; }
  WorkerMetrics& metrics() noexcept { return metrics_; }
  SessionTable& sessions() noexcept { return sessions_; }
  TransactionTable& transactions() noexcept { return transactions_; }
  const config::RoutingTable& routing() const noexcept { return *routing_; }
  config::GatewayPicker& picker() noexcept { return picker_; }
  Restorer* restorer() noexcept { return restorer_; }
  // Scratch for a message written anew (an edit changed a length): one
  // message at a time, sent before the next is written.
  std::span<uint8_t> rewriteBuffer() noexcept { return rewritten_; }
  // Scratch for a kept request copied to be patched and sent elsewhere.
  std::span<uint8_t> resendBuffer() noexcept { return resend_; }

  // A new routing document: live sessions' pools, gateways and rules are
  // found again by name (kNoSelection: no longer in it), and so are the
  // metrics' gateway and rule entries.
  void setRouting(const config::RoutingTable& routing);
  // A session read back from the storage: its pool, gateway and rule by the
  // names its record keeps, in the document in force.
  void resolveSelection(SessionShm& s, const session::RoutingNames& names) noexcept;
  void setPersist(PersistSink* sink) noexcept;
  void setRestorer(Restorer* restorer) noexcept { restorer_ = restorer; }

  // -- time: the latest CLOCK_MONOTONIC reading seen, and the CLOCK_REALTIME
  // of the datagram or turn being handled (session records carry it).
  // What is sent until the next of these calls goes with the datagram's
  // reception time (Arrival::receive_ns); after advance(), the timers'
  // turn, with none.
  void arrived(const Arrival& arrival) noexcept {
    now_ns_ = std::max(now_ns_, arrival.now_ns);
    now_wall_ns_ = arrival.wall_ns;
    receive_ns_ = arrival.receive_ns;
  }
  void advance(uint64_t now_ns) noexcept;
  uint64_t now() const noexcept { return now_ns_; }

  // -- numbering. GTPv2: 24 bits, below the command bit (set on a number for
  // a command-triggered request, kept so). GTPv1: 16 bits, counted per leg;
  // a number still pending on that leg (a request unanswered for a whole
  // lap) is skipped.
  uint32_t nextV2Sequence(bool command) noexcept {
    const uint64_t per_worker = kCommandBit / settings_.workers;
    const uint64_t n = header_.sequence_counter++;
    const auto sequence = static_cast<uint32_t>(settings_.index + settings_.workers * (n % per_worker));
    return command ? (sequence | kCommandBit) : sequence;
  }
  uint16_t nextV1Sequence(Leg toward) noexcept;

  // -- transactions
  // A pending transaction for a request from `from`, numbered
  // `requester_sequence` by it, sent toward `toward` (socket, destination)
  // with `response_key`. nullptr, counted, when the table has no room.
  TransactionShm* open(const Arrival& from, uint32_t requester_sequence, uint8_t message_type, uint8_t flags,
                       uint64_t response_key, const SessionShm& session, Leg toward, uint8_t socket,
                       const net::Address& destination) noexcept;
  // A retransmission of the request `t`, from `from`, answered: the answer
  // it got, again (nothing when another worker answers it, or the cache
  // lost it); true when it was sent again.
  bool replay(const TransactionShm& t, const Arrival& retransmission, Leg from) noexcept;
  // Sends the answer of `t` to its requester and keeps it for retransmissions.
  void reply(TransactionShm& t, std::span<const uint8_t> bytes) noexcept;
  // Closes `t`, which will get no answer worth relaying.
  void close(TransactionShm& t) noexcept;
  // Hands `bytes` to the egress toward a peer on `leg`, counted; what the
  // datagram being handled caused (or a timer, between datagrams).
  bool send(Leg leg, uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept {
    return push(leg, socket, to, bytes, receive_ns_);
  }
  // The same for the proxy's own requests (own_requests.h): they answer no
  // datagram, whatever is being handled.
  bool sendOwn(Leg leg, uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes) noexcept {
    return push(leg, socket, to, bytes, 0);
  }
  // The leg of a peer a datagram came from when nothing in it tells: a
  // gateway of the routing document's host, else the access side. A walk
  // over the gateways: for the rare messages without a TEID of the proxy.
  Leg legOf(const net::Address& peer) const noexcept;

  // Expires transactions older than the lifetime, calling expired(t) for
  // each pending one first. Call it every loop turn: the work it does is
  // proportional to the time since the last call.
  template <class F>
  void expireTransactions(uint64_t now_ns, F&& expired) noexcept;

  // -- sessions
  // The session's state as of now to the persist ring; with the attributes
  // `m` (from `from`) carries when given; GTPv1: those of PDP context `nsapi`.
  void persist(const SessionShm& session) noexcept;
  void persist(const SessionShm& session, const gtp::v2::Message& m, Leg from) noexcept;
  void persist(const SessionShm& session, const gtp::v1::Message& m, Leg from, uint8_t nsapi) noexcept;
  // The session no longer has the bearers (PDP contexts) of `ebis`.
  void removeBearers(const SessionShm& session, uint16_t ebis) noexcept;
  // The session is over: its record goes, its slot is freed.
  void endSession(SessionShm& session) noexcept;
  // worker.sessions_active, after sessions came or went.
  void countSessions() noexcept { counters_.sessions_active.set(sessions_.active()); }

  // -- the proxy's addresses
  // The proxy's address on `leg` in `family`, invalid when it has none.
  net::Address proxyAddress(Leg leg, uint8_t family) const noexcept;
  uint8_t socketFamily(uint8_t socket) const noexcept {
    return socket < settings_.sockets.sockets.size() ? settings_.sockets.sockets[socket].family : 0;
  }
  // A session's peer on `leg`, and the socket the proxy reaches it from.
  static Endpoint& peer(SessionShm& session, Leg leg) noexcept {
    return leg == Leg::kGateway ? session.pgw : session.sgw;
  }
  static const Endpoint& peer(const SessionShm& session, Leg leg) noexcept {
    return leg == Leg::kGateway ? session.pgw : session.sgw;
  }
  static uint8_t socketToward(const SessionShm& session, Leg leg) noexcept {
    return leg == Leg::kGateway ? session.gateway_socket : session.access_socket;
  }

 private:
  // `written`: what a ChangeWriter said, counted.
  void counted(bool written) noexcept;
  bool push(Leg leg, uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
            uint64_t receive_ns) noexcept;
  // The kRouting attribute of `s` (names in the routing document in force).
  std::span<const uint8_t> routingNames(const SessionShm& s) noexcept;

  ProxySettings settings_;
  WorkerShmHeader& header_;
  WorkerCounters& counters_;
  WorkerMetrics metrics_;
  SessionTable& sessions_;
  TransactionTable& transactions_;
  const config::RoutingTable* routing_;
  config::GatewayPicker picker_;
  Egress& egress_;
  std::optional<ChangeWriter> changes_;
  Restorer* restorer_ = nullptr;
  uint64_t now_ns_ = 0;
  uint64_t now_wall_ns_ = 0;
  uint64_t receive_ns_ = 0;  // of the datagram being handled; 0 in the timers' turn
  uint64_t last_sweep_ns_ = 0;
  uint64_t sweep_credit_ = 0;  // table slots the sweep owes
  std::vector<uint8_t> resend_;
  std::vector<uint8_t> rewritten_;
  std::array<uint8_t, 3 * session::kRoutingNameSize> routing_names_{};
};

template <class F>
void Engine::expireTransactions(uint64_t now_ns, F&& expired) noexcept {
  if (now_ns < settings_.transaction_timeout_ns) return;
  // Look at the whole table once per quarter of a transaction's lifetime,
  // whether the worker turns every microsecond or sleeps between turns: an
  // unanswered request is noticed within 1.25 lifetimes.
  const uint64_t elapsed = last_sweep_ns_ == 0 ? 0 : now_ns - last_sweep_ns_;
  last_sweep_ns_ = now_ns;
  const uint64_t quarter = settings_.transaction_timeout_ns / 4 + 1;
  const uint64_t due = uint64_t{transactions_.capacity()} * elapsed / quarter + 1;
  sweep_credit_ = std::min<uint64_t>(sweep_credit_ + due, transactions_.capacity());
  if (sweep_credit_ < 64 && elapsed < quarter / 16) return;  // batch the work of busy turns
  const auto budget = static_cast<uint32_t>(sweep_credit_);
  sweep_credit_ = 0;
  transactions_.sweep(now_ns - settings_.transaction_timeout_ns, budget, [&](TransactionShm& t) {
    if (t.state != static_cast<uint8_t>(TransactionState::kPending)) return;  // answered: retransmissions are over
    counters_.transactions_expired.add();
    // Forwarded to a gateway and never answered (the proxy's own requests
    // are not the gateways' transactions).
    if (t.toward == static_cast<uint8_t>(Leg::kGateway) && t.requester_socket != kProxyOrigin)
      metrics_.timedOut(t.flags & kGtpv1 ? gtp::v1::kVersion : gtp::v2::kVersion, t.message_type);
    expired(t);
  });
  counters_.transactions_live.set(transactions_.live());
}

}  // namespace gtpcp::worker
