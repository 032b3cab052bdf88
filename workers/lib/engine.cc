#include "engine.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "common/time/clock.h"
#include "gtp_constants.h"

namespace gtpcp::worker {

namespace {

constexpr std::size_t kMaxDatagram = 65535;
// GTPv1 numbers are 16 bits (TS 29.060 §9.1).
constexpr uint32_t kV1SequenceSpace = 0x10000;

}  // namespace

Engine::Engine(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
               TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress)
    : settings_(settings),
      header_(header),
      counters_(header.counters),
      metrics_(header.metrics),
      sessions_(sessions),
      transactions_(transactions),
      routing_(&routing),
      picker_(routing),
      egress_(egress),
      resend_(kMaxDatagram),
      rewritten_(kMaxDatagram) {
  // The metrics' entries are this document's from now on: zeroed (or kept,
  // a predecessor's segment for the same document), the session gauges
  // counted from the sessions held, then published.
  metrics_.open(routing);
  sessions_.publishTo(&counters_.sessions_active, &header.metrics);
  metrics_.publish(routing);
}

void Engine::setRouting(const config::RoutingTable& routing) {
  const config::RoutingTable* before = routing_;
  routing_ = &routing;
  picker_ = config::GatewayPicker(routing);
  if (before == nullptr || before == &routing) return;
  metrics_.carryOver(*before, routing);
  // Live sessions keep their pool, gateway and rule by name: their indexes
  // are the old document's positions. Once per reload, so it may allocate.
  auto remap = [](auto old_items, auto find) {
    std::vector<uint16_t> to(old_items.size(), kNoSelection);
    for (std::size_t i = 0; i < old_items.size(); ++i) to[i] = find(old_items[i].name).value_or(kNoSelection);
    return to;
  };
  const auto pools = remap(before->pools(), [&](const std::string& n) { return routing.findPool(n); });
  const auto gateways = remap(before->gateways(), [&](const std::string& n) { return routing.findGateway(n); });
  const auto rules = remap(before->rules(), [&](const std::string& n) { return routing.findRule(n); });
  auto moved = [](const std::vector<uint16_t>& to, uint16_t& index) {
    index = index < to.size() ? to[index] : kNoSelection;
  };
  uint64_t gone = 0;
  sessions_.forEach([&](SessionShm& s) {
    moved(pools, s.pool);
    moved(gateways, s.gateway);
    moved(rules, s.rule);
    gone += s.pool == kNoSelection || s.gateway == kNoSelection || s.rule == kNoSelection;
  });
  counters_.sessions_unrouted.set(gone);
  sessions_.recount();  // the gateways' gauges, by their new indexes
  metrics_.publish(routing);
}

void Engine::resolveSelection(SessionShm& s, const session::RoutingNames& names) noexcept {
  // A record written before names keeps its indexes.
  if (names.pool[0] == '\0' && names.gateway[0] == '\0' && names.rule[0] == '\0') return;
  s.pool = routing_->findPool(names.pool).value_or(kNoSelection);
  sessions_.setGateway(s, routing_->findGateway(names.gateway).value_or(kNoSelection));
  s.rule = routing_->findRule(names.rule).value_or(kNoSelection);
  if (s.pool == kNoSelection || s.gateway == kNoSelection || s.rule == kNoSelection)
    counters_.restore_unrouted.add();
}

void Engine::setPersist(PersistSink* sink) noexcept {
  if (sink == nullptr) {
    changes_.reset();
  } else {
    changes_.emplace(*sink);
  }
}


void Engine::advance(uint64_t now_ns) noexcept {
  now_ns_ = std::max(now_ns_, now_ns);
  receive_ns_ = 0;
  if (changes_) now_wall_ns_ = realtimeNs();
}

uint16_t Engine::nextV1Sequence(Leg toward) noexcept {
  const uint32_t share = kV1SequenceSpace / settings_.workers;
  uint16_t& counter = header_.v1_sequence_counter[static_cast<uint8_t>(toward)];
  uint16_t sequence = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint32_t k = counter++ % share;
    sequence = static_cast<uint16_t>(settings_.index + settings_.workers * k);
    if (transactions_.findByResponse(v1Numbered(static_cast<uint8_t>(toward), sequence)) == nullptr) break;
  }
  return sequence;
}

TransactionShm* Engine::open(const Arrival& from, uint32_t requester_sequence, uint8_t message_type, uint8_t flags,
                             uint64_t response_key, const SessionShm& session, Leg toward, uint8_t socket,
                             const net::Address& destination) noexcept {
  TransactionShm* t = transactions_.open(response_key, from.peer, requester_sequence, from.now_ns);
  if (t == nullptr) {
    counters_.transactions_full.add();
    return nullptr;
  }
  t->toward = static_cast<uint8_t>(toward);
  t->message_type = message_type;
  t->flags = flags;
  t->requester_socket = from.socket;
  t->destination_socket = socket;
  t->destination = destination;
  t->session_teid = sessions_.teid(session, Leg::kAccess);
  counters_.transactions_started.add();
  if (toward == Leg::kGateway) {
    if (GatewayMetricsShm* g = metrics_.gateway(session.gateway)) g->requests_sent.add();
  }
  counters_.transactions_live.set(transactions_.live());
  return t;
}

bool Engine::replay(const TransactionShm& t, const Arrival& retransmission, Leg from) noexcept {
  if (t.flags & kAnsweredElsewhere) return false;
  const auto answer = transactions_.answerOf(t);
  if (answer.empty()) {
    counters_.answers_lost.add();
    return false;
  }
  counters_.answers_replayed.add();
  send(from, retransmission.socket, retransmission.peer, answer);
  return true;
}

void Engine::reply(TransactionShm& t, std::span<const uint8_t> bytes) noexcept {
  send(other(static_cast<Leg>(t.toward)), t.requester_socket, t.requester, bytes);
  counters_.transactions_completed.add();
  transactions_.answered(t, bytes);
}

void Engine::close(TransactionShm& t) noexcept {
  transactions_.close(t);
  counters_.transactions_live.set(transactions_.live());
}

bool Engine::push(Leg leg, uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
                  uint64_t receive_ns) noexcept {
  if (!egress_.send(socket, to, bytes, receive_ns)) {
    counters_.egress_full.add();
    return false;
  }
  counters_.datagrams_sent.add();
  metrics_.sent(leg, bytes);
  return true;
}

Leg Engine::legOf(const net::Address& peer) const noexcept {
  for (const config::Gateway& g : routing_->gateways()) {
    const net::Address a = g.isIpv6() ? net::Address::v6(std::get<gtp::Ipv6>(g.address), g.port)
                                      : net::Address::v4(std::get<gtp::Ipv4>(g.address), g.port);
    if (a.sameHost(peer)) return Leg::kGateway;
  }
  return Leg::kAccess;
}

void Engine::counted(bool written) noexcept {
  if (written) {
    counters_.persist_changes.add();
  } else {
    counters_.persist_ring_full.add();
  }
}

void Engine::persist(const SessionShm& s) noexcept {
  if (changes_) {
    counted(changes_->upsert(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, nullptr,
                             Leg::kAccess));
  }
}

void Engine::persist(const SessionShm& s, const gtp::v2::Message& m, Leg from) noexcept {
  if (!changes_) return;
  const auto type = static_cast<gtp::v2::MessageType>(m.header().message_type);
  const bool creation =
      type == gtp::v2::MessageType::kCreateSessionRequest || type == gtp::v2::MessageType::kCreateSessionResponse;
  counted(changes_->upsert(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, &m, from,
                           creation ? routingNames(s) : std::span<const uint8_t>{}));
}

void Engine::persist(const SessionShm& s, const gtp::v1::Message& m, Leg from, uint8_t nsapi) noexcept {
  if (!changes_) return;
  const auto type = static_cast<gtp::v1::MessageType>(m.header().message_type);
  // The primary context's creation: a secondary one keeps the selection.
  const bool creation = nsapi == s.default_ebi && (type == gtp::v1::MessageType::kCreatePdpContextRequest ||
                                                   type == gtp::v1::MessageType::kCreatePdpContextResponse);
  counted(changes_->upsertV1(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, m, from,
                             nsapi, creation ? routingNames(s) : std::span<const uint8_t>{}));
}

std::span<const uint8_t> Engine::routingNames(const SessionShm& s) noexcept {
  const config::RoutingTable& r = *routing_;
  std::size_t n = 0;
  auto put = [&](std::string_view name) {
    name = name.substr(0, session::kRoutingNameSize - 1);
    std::memcpy(routing_names_.data() + n, name.data(), name.size());
    n += name.size();
    routing_names_[n++] = 0;
  };
  put(s.pool < r.pools().size() ? std::string_view(r.pool(s.pool).name) : std::string_view{});
  put(s.gateway < r.gateways().size() ? std::string_view(r.gateway(s.gateway).name) : std::string_view{});
  put(s.rule < r.rules().size() ? std::string_view(r.rule(s.rule).name) : std::string_view{});
  return {routing_names_.data(), n};
}

void Engine::removeBearers(const SessionShm& s, uint16_t ebis) noexcept {
  // Only a ring without room is counted: the change that removed them was.
  if (changes_ &&
      !changes_->removeBearers(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_, ebis))
    counters_.persist_ring_full.add();
}

void Engine::endSession(SessionShm& s) noexcept {
  if (changes_) counted(changes_->erase(s, sessions_.teid(s, Leg::kAccess), sessions_.partitionOf(s), now_wall_ns_));
  sessions_.release(s);
}

net::Address Engine::proxyAddress(Leg leg, uint8_t family) const noexcept {
  const uint8_t socket = leg == Leg::kAccess ? settings_.sockets.access(family) : settings_.sockets.gateway(family);
  return socket == group::kNoSocket ? net::Address{} : settings_.sockets.sockets[socket];
}


}  // namespace gtpcp::worker
