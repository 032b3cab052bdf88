#include "own_requests.h"

#include <algorithm>
#include <array>

#include "versions.h"

namespace gtpcp::worker {

OwnRequests::OwnRequests(Engine& engine)
    : engine_(engine), retries_(std::max<uint32_t>(1024, engine.transactions().capacity() / 8)) {}

void OwnRequests::send(uint64_t response_key, uint32_t sequence, uint8_t message_type, uint8_t flags, Leg toward,
                       uint8_t socket, const net::Address& to, uint32_t session_teid,
                       std::span<const uint8_t> bytes) noexcept {
  engine_.sendOwn(toward, socket, to, bytes);
  TransactionTable& transactions = engine_.transactions();
  TransactionShm* t = transactions.open(response_key, net::Address{}, sequence, engine_.now());
  if (t == nullptr) return;  // sent once, not followed
  t->toward = static_cast<uint8_t>(toward);
  t->message_type = message_type;
  t->flags = flags;
  t->requester_socket = kProxyOrigin;
  t->destination_socket = socket;
  t->destination = to;
  t->session_teid = session_teid;
  engine_.counters().transactions_started.add();
  const ProxySettings& settings = engine_.settings();
  if (settings.n3 == 0 || count_ == retries_.size() || !transactions.keepRequest(*t, bytes)) return;
  const auto tail = static_cast<uint32_t>((head_ + count_) % retries_.size());
  retries_[tail] = Retry{transactions.indexOf(*t), t->response_key, engine_.now() + settings.t3_ns, 1};
  ++count_;
}

template <class V>
void OwnRequests::tellRestart(const SessionShm& s) noexcept {
  const Numbered n = V::next(engine_, Leg::kAccess);
  std::array<uint8_t, 64> buffer;
  if (auto out = V::restartNotification(buffer, s, n.sequence)) {
    engine_.counters().restart_notifications_sent.add();
    send<V>(n, V::kRestartNotification, Leg::kAccess, s.access_socket, s.sgw.address.withPort(kGtpcPort),
            engine_.sessions().teid(s, Leg::kAccess), *out);
  }
}

template <class V>
void OwnRequests::deleteOrphan(const Context<V>& c) noexcept {
  const typename V::Message& m = c.message;
  const auto cause = V::cause(m);
  const uint32_t gateway_teid = V::gatewayTeid(m);
  if (!cause || !V::accepted(*cause) || gateway_teid == 0) return;
  const uint32_t teid = V::teid(m.header());
  const SessionShm* s = teid != 0 ? engine_.sessions().find(teid) : nullptr;
  // Still this session's gateway: the answer is just late, not an orphan.
  if (s != nullptr && s->gateway_address.sameHost(c.arrival.peer)) return;
  const Numbered n = V::next(engine_, Leg::kGateway);
  std::array<uint8_t, 64> buffer;
  if (auto out = V::orphanDeletion(buffer, m, s, gateway_teid, n.sequence)) {
    engine_.counters().orphans_deleted.add();
    send<V>(n, V::kOrphanDeletion, Leg::kGateway, c.arrival.socket, c.arrival.peer, 0, *out);
  }
}

template void OwnRequests::tellRestart<V2Traits>(const SessionShm&) noexcept;
template void OwnRequests::tellRestart<V1Traits>(const SessionShm&) noexcept;
template void OwnRequests::deleteOrphan<V2Traits>(const Context<V2Traits>&) noexcept;
template void OwnRequests::deleteOrphan<V1Traits>(const Context<V1Traits>&) noexcept;

void OwnRequests::answered(TransactionShm& t) noexcept {
  engine_.counters().own_requests_answered.add();
  engine_.counters().transactions_completed.add();
  engine_.transactions().answered(t, {});
}

void OwnRequests::retransmit(uint64_t now_ns) noexcept {
  TransactionTable& transactions = engine_.transactions();
  const ProxySettings& settings = engine_.settings();
  while (count_ != 0 && retries_[head_].deadline_ns <= now_ns) {
    Retry r = retries_[head_];
    head_ = static_cast<uint32_t>((head_ + 1) % retries_.size());
    --count_;
    TransactionShm& t = transactions.record(r.record);
    if (t.state != static_cast<uint8_t>(TransactionState::kPending) || t.response_key != r.response_key)
      continue;  // answered, or gone
    if (r.sent > settings.n3) {
      engine_.counters().own_requests_unanswered.add();
      continue;  // the transaction expires with its lifetime
    }
    const auto bytes = transactions.requestOf(t);
    if (bytes.empty()) continue;
    engine_.counters().own_requests_retransmitted.add();
    engine_.sendOwn(static_cast<Leg>(t.toward), t.destination_socket, t.destination, bytes);
    ++r.sent;
    r.deadline_ns = now_ns + settings.t3_ns;
    const auto tail = static_cast<uint32_t>((head_ + count_) % retries_.size());
    retries_[tail] = r;
    ++count_;
  }
}

}  // namespace gtpcp::worker
