#include "failover.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "versions.h"

namespace gtpcp::worker {

namespace {

constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kCreating = static_cast<uint8_t>(SessionState::kCreating);

}  // namespace

Failover::Failover(Engine& engine, GatewayWatch& gateways)
    : engine_(engine),
      gateways_(gateways),
      // Creations in flight at once, with room: a burst of a second's worth
      // at the highest rate a worker takes.
      timers_(std::max<uint32_t>(1024, engine.transactions().capacity() / 8)) {}

void Failover::sent(TransactionShm& t, std::span<const uint8_t> request, uint64_t now_ns) noexcept {
  const config::Failover& failover = engine_.routing().failover();
  if (failover.attempts <= 1) return;
  engine_.transactions().keepRequest(t, request);
  if (failover.response_timeout_ms != 0) startTimer(t, now_ns);
}

template <class V>
bool Failover::failOver(TransactionShm& t, SessionShm& s) noexcept {
  const config::Failover& failover = engine_.routing().failover();
  TransactionTable& transactions = engine_.transactions();
  auto tried = [&t](uint16_t g) {
    for (uint8_t i = 0; i < t.attempts && i < 4; ++i)
      if (t.tried[i] == g) return true;
    return false;
  };
  std::optional<uint16_t> next;
  if (t.attempts < failover.attempts)
    next = engine_.picker().pick(s.pool, [&](uint16_t g) { return gateways_.up(g) && !tried(g); });
  const auto request = transactions.requestOf(t);
  net::Address address;
  uint8_t socket = group::kNoSocket;
  if (next) {
    address = gateways_.address(*next);
    socket = engine_.settings().sockets.gateway(address.family);
  }
  const Numbered n = V::next(engine_, Leg::kGateway);
  if (!next || request.empty() || socket == group::kNoSocket || !transactions.rekey(t, n.key)) {
    engine_.counters().creations_exhausted.add();
    engine_.counters().sessions_rejected.add();
    answer<V>(engine_, t, V::kCreateResponse, s.sgw.teid, V::exhaustedCause(failover));
    engine_.endSession(s);
    engine_.countSessions();
    return false;
  }
  const bool family_changes = address.family != s.gateway_address.family;
  engine_.sessions().setGateway(s, *next);
  s.gateway_address = address;
  s.gateway_socket = socket;
  t.tried[t.attempts++] = *next;
  t.destination = address;
  t.destination_socket = socket;
  const std::span<uint8_t> copy = engine_.resendBuffer().first(request.size());
  std::memcpy(copy.data(), request.data(), request.size());
  // A pool may mix IPv4 and IPv6 gateways: the proxy's control endpoint must
  // name it in the family of the gateway the request now goes to.
  const std::span<uint8_t> bytes = family_changes ? V::controlAddressIn(engine_, copy, address.family) : copy;
  V::patchSequenceNumber(bytes, n.sequence);
  // The copy kept is the one with the new number (a later failover starts from it).
  transactions.keepRequest(t, bytes);
  engine_.counters().creations_failed_over.add();
  if (uint64_t held = 0; log_limit_.allow(engine_.now(), held)) {
    const std::string& from = engine_.routing().gateway(t.tried[t.attempts - 2]).name;
    const std::string& to = engine_.routing().gateway(*next).name;
    log::event(spdlog::level::info,
               fmt::format("a creation failed over from gateway {} to {}{}", from, to,
                           held != 0 ? fmt::format(" ({} more since the last such line)", held) : std::string()),
               {{"gateway_event", "failover"}, {"gateway", from}, {"to", to}, log::field("held_back", held)});
  }
  engine_.persist(s);
  if (failover.response_timeout_ms != 0) startTimer(t, engine_.now());
  // The new gateway's response time runs from now (µs, saturated: a
  // transaction's lifetime is seconds).
  const uint64_t since_us = engine_.now() > t.received_ns ? (engine_.now() - t.received_ns) / 1000 : 0;
  t.forwarded_us = static_cast<uint32_t>(std::min<uint64_t>(since_us, UINT32_MAX));
  if (GatewayMetricsShm* g = engine_.metrics().gateway(*next)) {
    g->creations_sent.add();
    g->requests_sent.add();
  }
  engine_.send(Leg::kGateway, socket, address, bytes);
  return true;
}

template bool Failover::failOver<V2Traits>(TransactionShm&, SessionShm&) noexcept;
template bool Failover::failOver<V1Traits>(TransactionShm&, SessionShm&) noexcept;

void Failover::startTimer(const TransactionShm& t, uint64_t now_ns) noexcept {
  if (count_ == timers_.size()) {
    engine_.counters().creation_timers_full.add();
    return;
  }
  const uint64_t timeout = uint64_t{engine_.routing().failover().response_timeout_ms} * 1'000'000;
  const auto tail = static_cast<uint32_t>((head_ + count_) % timers_.size());
  timers_[tail] = Timer{engine_.transactions().indexOf(t), t.response_key, now_ns + timeout};
  ++count_;
}

void Failover::expire(uint64_t now_ns) noexcept {
  while (count_ != 0 && timers_[head_].deadline_ns <= now_ns) {
    const Timer timer = timers_[head_];
    head_ = static_cast<uint32_t>((head_ + 1) % timers_.size());
    --count_;
    TransactionShm& t = engine_.transactions().record(timer.record);
    // Answered, expired, or sent elsewhere since: the timer is stale.
    if (t.state != kPending || t.response_key != timer.response_key) continue;
    SessionShm* s = engine_.sessions().find(t.session_teid);
    if (s == nullptr || s->state != kCreating) continue;
    engine_.counters().creations_timed_out.add();
    if (GatewayMetricsShm* g = engine_.metrics().gateway(s->gateway)) g->creations_timed_out.add();
    if (V1Traits::ofVersion(t)) {
      failOver<V1Traits>(t, *s);
    } else {
      failOver<V2Traits>(t, *s);
    }
  }
}

void Failover::expired(const TransactionShm& t) noexcept {
  if (!V2Traits::isCreation(t) && !V1Traits::isCreation(t)) return;
  SessionShm* s = engine_.sessions().find(t.session_teid);
  if (s != nullptr && s->state == kCreating) {
    // Its last gateway never answered, within T3 x N3 at least.
    if (GatewayMetricsShm* g = engine_.metrics().gateway(s->gateway)) g->creations_timed_out.add();
    engine_.endSession(*s);
    engine_.counters().sessions_expired.add();
    engine_.countSessions();
  }
}

}  // namespace gtpcp::worker
