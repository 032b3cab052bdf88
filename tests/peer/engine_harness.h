// The SGW and PGW engines wired together in memory for the unit tests: a
// fake Outbox that keeps what the engines send, and a fake network that
// behaves like gtpcp-relay. The tests drive the clock themselves.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "common/gtp/v2/message.h"
#include "tools/peer/pgw.h"
#include "tools/peer/sgw.h"

namespace gtpcp::peer::testing {

constexpr uint32_t kProxy = 0x7f000001;
constexpr uint32_t kSgw0 = 0x7f00000b;
constexpr uint32_t kPgw0 = 0x7f000015;
constexpr int64_t kMs = 1'000'000;
constexpr uint16_t kPairPortBase = 40000;

// fd00::N, the IPv6 addresses of the tests.
inline IpAddress ula(uint8_t n) {
  std::array<uint8_t, 16> a{0xfd, 0x00};
  a[15] = n;
  return IpAddress::ipv6(a);
}
// `a` with `k` added to its last octet: node k of a run.
inline IpAddress plus(IpAddress a, uint32_t k) {
  a.octets[15] = static_cast<uint8_t>(a.octets[15] + k);
  return a;
}

// Where the harness's nodes and its relay live; IPv4 unless a test says
// otherwise. The relay has one address toward the SGWs and one toward the
// PGW, of the families of each.
struct Addresses {
  IpAddress access = kProxy;   // the relay's, toward the SGWs
  IpAddress sgw0 = kSgw0;      // SGW node k is sgw0 + k
  IpAddress gateway = kProxy;  // the relay's, toward the PGW
  IpAddress pgw0 = kPgw0;
};

struct Sent {
  uint32_t socket;
  Endpoint to;
  std::vector<uint8_t> bytes;
};

class FakeOutbox : public Outbox {
 public:
  std::span<uint8_t> reserve(uint32_t) noexcept override { return buf_; }
  void commit(uint32_t socket, const Endpoint& to, std::size_t length) noexcept override {
    sent.push_back(Sent{socket, to, std::vector<uint8_t>(buf_.begin(), buf_.begin() + length)});
  }
  std::deque<Sent> sent;

 private:
  std::array<uint8_t, 2048> buf_{};
};

// Delivers everything `out` holds, and what that causes, with
// `deliver(sent)`.
template <class Deliver>
void pumpAll(FakeOutbox& out, Deliver&& deliver) {
  while (!out.sent.empty()) {
    Sent d = std::move(out.sent.front());
    out.sent.pop_front();
    deliver(d);
  }
}

// The gateway side of a harness: behind a relay, for `subscribers` with the
// access side's timers.
inline void relayGateway(GatewayConfig& g, const AccessConfig& a, uint32_t subscribers) {
  g.relay = true;
  g.ids = a.ids;
  g.capacity = subscribers * 2 + 16;
  g.t3_ns = a.t3_ns;
  g.n3 = a.n3;
}

inline Identities ids(uint32_t count) {
  Identities i;
  i.imsi_start = 1010000000001;
  i.imsi_digits = 15;
  i.msisdn_start = 15550000001;
  i.msisdn_digits = 11;
  i.count = count;
  i.plmn = *gtp::makePlmn("001", "01");
  return i;
}

// SGW nodes on sockets 0..S-1, PGW nodes after them. The network relays like
// gtpcp-relay: SGW node k's datagrams reach PGW 0 from (gateway, 40000 + k),
// and the PGW's answers to that endpoint come back to SGW node k from
// (access, 2123). The PGW's own requests (to port 2123) reach the SGW node of
// the subscriber whose TEID they carry, from (access, 2123).
class Harness {
 public:
  // `tweak` and `pgw_tweak`, when given, adjust the SGW and PGW
  // configurations before the engines are built.
  Harness(uint32_t subscribers, uint32_t sgws, bool sgw_relay_mode, uint8_t reject = 0,
          bool same_sequence = false, const std::function<void(SgwConfig&)>& tweak = {},
          const Addresses& at = {}, const std::function<void(PgwConfig&)>& pgw_tweak = {})
      : at_(at) {
    SgwConfig s;
    for (uint32_t k = 0; k < sgws; ++k)
      s.nodes.push_back(SgwNodeConfig{plus(at.sgw0, k), k, Endpoint{at.access, kGtpcPort}, {}});
    s.relay = sgw_relay_mode;
    s.ids = ids(subscribers);
    s.modifies = 2;
    s.cycles = 1;
    s.t3_ns = 100 * kMs;
    s.n3 = 2;
    s.same_sequence = same_sequence;
    s.sequence_seed = 1000;
    if (reject) s.expected_rejections.set(reject);
    s.local_pgws = {at.pgw0};
    s.local_pgw_causes = {reject};
    if (tweak) tweak(s);
    sgw_nodes_ = sgws;
    PgwConfig p;
    PgwNodeConfig n;
    n.addr = at.pgw0;
    n.proxy_gateway = at.gateway;
    n.socket = sgws;
    n.reject_cause = reject;
    p.nodes.push_back(n);
    relayGateway(p, s, subscribers);  // the network is a relay
    if (pgw_tweak) pgw_tweak(p);
    sgw = std::make_unique<SgwEngine>(s, out, sgw_stats, mismatches, malformed);
    pgw = std::make_unique<PgwEngine>(p, out, pgw_stats, mismatches, malformed);
  }

  // Delivers everything in flight (and what it causes) at `now`.
  void pump(int64_t now) {
    pumpAll(out, [&](const Sent& d) { deliver(d, now); });
  }
  void deliver(const Sent& d, int64_t now) {
    if (d.socket < sgw_nodes_) {
      const Endpoint from{at_.gateway, static_cast<uint16_t>(kPairPortBase + d.socket)};
      pgw->onDatagram(0, from, d.bytes, now);
    } else {
      const uint32_t node = d.to.port == kGtpcPort ? nodeOfRequest(d.bytes) : d.to.port - kPairPortBase;
      sgw->onDatagram(node, Endpoint{at_.access, kGtpcPort}, d.bytes, now);
    }
  }
  // The SGW node of the subscriber whose TEID the request's header carries.
  uint32_t nodeOfRequest(const std::vector<uint8_t>& bytes) const {
    auto h = gtp::v2::decodeHeader(bytes);
    uint32_t index = 0;
    if (!h || !sgw->indexOfTeid(h->teid, index)) return 0;
    return index % sgw_nodes_;
  }

  FakeOutbox out;
  SgwStats sgw_stats;
  std::vector<PgwNodeStats> pgw_stats;
  MismatchCounters mismatches;
  MalformedCounters malformed;
  std::unique_ptr<SgwEngine> sgw;
  std::unique_ptr<PgwEngine> pgw;

 private:
  Addresses at_;
  uint32_t sgw_nodes_ = 1;
};

}  // namespace gtpcp::peer::testing
