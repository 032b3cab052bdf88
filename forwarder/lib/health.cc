#include "health.h"

#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/log/log.h"
#include "common/time/clock.h"

namespace gtpcp::forwarder {

namespace {
constexpr uint32_t kSequenceMask = gtp::v2::kCommandBit - 1;  // 23 bits: not a command's number
constexpr uint32_t kSequenceMaskV1 = 0xffff;  // GTPv1 sequence numbers have 16 bits
}

GatewayHealth::GatewayHealth(const config::RoutingTable& routing, const group::SocketPlan& sockets,
                             ForwarderShm& shm, GatewayTableShm& table, uint64_t now_ns)
    : shm_(shm), table_(table), settings_(routing.healthCheck()) {
  // A random first number: answers to an earlier forwarder's requests do
  // not count for this one's.
  uint32_t start = 0;
  if (getrandom(&start, sizeof start, 0) != sizeof start) start = static_cast<uint32_t>(now_ns);
  next_sequence_ = start & kSequenceMask;
  const std::size_t n = std::min<std::size_t>(routing.gateways().size(), kMaxHealthChecked);
  targets_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const config::Gateway& g = routing.gateways()[i];
    Target& t = targets_[i];
    t.address = g.isIpv6() ? net::Address::v6(std::get<gtp::Ipv6>(g.address), g.port)
                           : net::Address::v4(std::get<gtp::Ipv4>(g.address), g.port);
    t.socket = sockets.gateway(t.address.family);
    t.version = g.gtp_version;
    t.name = g.name;
    // Spread the first requests over the first interval, so that a large
    // document does not send them all in one burst.
    t.due_ns = now_ns + (settings_.interval_ms == 0 ? 0 : uint64_t{settings_.interval_ms} * 1'000'000 * i / n);
    GatewayStatusShm& s = table_.gateways[i];
    // An entry describing another gateway (a restart with a changed
    // document) starts over; the same gateway keeps what is known of it.
    if (!(s.address == t.address) || s.gtp_version != t.version) {
      s.address = t.address;
      s.gtp_version = t.version;
      s.up.store(1, std::memory_order_relaxed);
      s.recovery.store(kRecoveryUnknown, std::memory_order_relaxed);
    }
    if (settings_.interval_ms == 0) s.up.store(1, std::memory_order_relaxed);
  }
  // GWT-R1, GWT-R3: pair with GWT-A1 and GWT-A3 in the workers' mapping of
  // their gateways (GatewayWatch::map()): the addresses above are
  // visible to whoever sees the count, or the new version.
  table_.published.store(static_cast<uint32_t>(n), std::memory_order_release);
  table_.version.fetch_add(1, std::memory_order_release);
  next_due_ = settings_.interval_ms == 0 || n == 0 ? UINT64_MAX : now_ns;
}

uint64_t GatewayHealth::tick(uint64_t now_ns, ReplySink& out) noexcept {
  if (now_ns < next_due_) return next_due_;
  const uint64_t interval = uint64_t{settings_.interval_ms} * 1'000'000;
  const uint8_t recovery = static_cast<uint8_t>(table_.recovery.load(std::memory_order_relaxed));
  uint64_t next = UINT64_MAX;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    Target& t = targets_[i];
    if (t.socket == group::kNoSocket) continue;  // no address of its family to send from
    if (t.due_ns <= now_ns) {
      GatewayStatusShm& s = table_.gateways[i];
      if (t.awaiting) {
        s.misses.add();
        if (++t.missed >= settings_.misses && s.up.load(std::memory_order_relaxed) != 0) {
          s.up.store(0, std::memory_order_relaxed);
          t.down_ns = now_ns;
          // A state change, at most once per health-check interval: not a per-datagram log.
          log::event(spdlog::level::warn,
                     fmt::format("gateway {} ({}) down: {} Echo Requests in a row unanswered; no new session goes "
                                 "to it",
                                 t.name, t.address.toString(), t.missed),
                     {{"gateway_event", "down"}, {"gateway", t.name}, log::field("address", t.address.toString()),
                      log::field("misses", t.missed)});
        }
      }
      std::array<uint8_t, 32> buffer;
      t.sequence = t.version == gtp::v1::kVersion ? next_sequence_ & kSequenceMaskV1 : next_sequence_;
      next_sequence_ = (next_sequence_ + 1) & kSequenceMask;
      if (auto bytes = echoRequest(t, recovery, buffer); !bytes.empty()) {
        out.reply(t.socket, t.address, bytes, 0);  // no datagram before it: not in proxy_latency
        s.echo_sent.add();
        shm_.counters.echo_requests_sent.add();
      }
      t.awaiting = true;
      t.sent_ns = now_ns;
      // On the schedule, not on now: a late turn does not stretch intervals,
      // and a long stall skips whole intervals but keeps each gateway's
      // phase, so the requests stay spread over the interval.
      t.due_ns += interval;
      if (t.due_ns <= now_ns) t.due_ns += ((now_ns - t.due_ns) / interval + 1) * interval;
    }
    next = std::min(next, t.due_ns);
  }
  next_due_ = next;
  return next_due_;
}

std::span<const uint8_t> GatewayHealth::echoRequest(const Target& t, uint8_t recovery,
                                                     std::span<uint8_t> buffer) noexcept {
  if (t.version == gtp::v1::kVersion) {
    gtp::v1::Builder b(buffer);
    b.begin(gtp::v1::MessageType::kEchoRequest, 0, static_cast<uint16_t>(t.sequence));
    auto bytes = b.finish();
    return bytes ? std::span<const uint8_t>(*bytes) : std::span<const uint8_t>();
  }
  gtp::v2::Builder b(buffer);
  b.begin(gtp::v2::MessageType::kEchoRequest, std::nullopt, t.sequence);
  b.add(gtp::v2::Recovery{recovery});
  auto bytes = b.finish();
  return bytes ? std::span<const uint8_t>(*bytes) : std::span<const uint8_t>();
}

bool GatewayHealth::onEchoResponse(const net::Address& from, std::span<const uint8_t> bytes,
                                   uint64_t now_ns) noexcept {
  if (bytes.empty()) return false;
  const uint8_t version = bytes[0] >> 5;
  uint32_t sequence = 0;
  std::optional<uint8_t> recovery;
  if (version == gtp::v2::kVersion) {
    gtp::v2::Message m;
    if (!m.decode(bytes)) return false;
    sequence = m.header().sequence_number;
    if (auto r = gtp::v2::readFirst<gtp::v2::Recovery>(m)) recovery = r->value;
  } else if (version == gtp::v1::kVersion) {
    gtp::v1::Message m;
    if (!m.decode(bytes) || !m.header().hasSequenceNumber()) return false;
    sequence = m.header().sequence_number;
    if (auto r = gtp::v1::readNth<gtp::v1::Recovery>(m)) recovery = r->value;
  } else {
    return false;
  }
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    const Target& t = targets_[i];
    // The answer comes from the address asked; its port may differ (TS
    // 29.274 §4.2.2.2 sends responses to the request's source port, not from
    // any particular one).
    if (!t.awaiting || t.version != version || t.sequence != sequence || !t.address.sameHost(from)) continue;
    answered(i, recovery, now_ns);
    return true;
  }
  return false;
}

void GatewayHealth::answered(std::size_t index, std::optional<uint8_t> recovery, uint64_t now_ns) noexcept {
  Target& t = targets_[index];
  t.awaiting = false;
  t.missed = 0;
  GatewayStatusShm& s = table_.gateways[index];
  s.echo_answered.add();
  // The request went out in the turn of t.sent_ns; an answer read before
  // that (a time from another clock) says nothing of the round trip.
  if (now_ns != 0 && now_ns >= t.sent_ns) {
    const uint64_t rtt = now_ns - t.sent_ns;
    s.echo_rtt_ns.set(rtt);
    s.echo_rtt.observe(rtt);
  }
  if (s.up.load(std::memory_order_relaxed) == 0) {
    s.up.store(1, std::memory_order_relaxed);
    const double down_s = t.down_ns != 0 ? static_cast<double>(monotonicNs() - t.down_ns) / 1e9 : 0;
    t.down_ns = 0;
    log::event(spdlog::level::info,
               fmt::format("gateway {} ({}) up again after {:.1f} s down: it answers Echo", t.name,
                           t.address.toString(), down_s),
               {{"gateway_event", "up"}, {"gateway", t.name}, log::field("address", t.address.toString()),
                log::field("down_ms", static_cast<uint64_t>(down_s * 1000))});
  }
  if (!recovery) return;  // alive, nothing learnt
  const uint32_t before = s.recovery.load(std::memory_order_relaxed);
  if (before == *recovery) return;
  s.recovery.store(*recovery, std::memory_order_relaxed);
  // GWT-R2: pairs with GWT-A2 in the workers' GatewayWatch::watch(): they
  // read the new Recovery value after seeing the count change.
  if (before != kRecoveryUnknown) {
    s.restarts.store(s.restarts.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    log::event(spdlog::level::warn,
               fmt::format("gateway {} ({}) restarted: Recovery {} -> {}; the workers remove its older sessions and "
                           "tell their SGWs",
                           t.name, t.address.toString(), before, *recovery),
               {{"gateway_event", "restart"}, {"gateway", t.name}, log::field("address", t.address.toString()),
                log::field("recovery_before", before), log::field("recovery", uint32_t{*recovery})});
  }
}

}  // namespace gtpcp::forwarder
