#include "proxy.h"

#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"
#include "restore.h"

namespace gtpcp::worker {

Proxy::Proxy(const ProxySettings& settings, WorkerShmHeader& header, SessionTable& sessions,
             TransactionTable& transactions, const config::RoutingTable& routing, Egress& egress)
    : engine_(settings, header, sessions, transactions, routing, egress),
      gateways_(engine_),
      own_(engine_),
      failover_(engine_, gateways_),
      set_deletions_(engine_, own_),
      v2_(engine_, gateways_, failover_, own_, set_deletions_),
      v1_(engine_, gateways_, failover_, own_) {}

void Proxy::setRestorer(Restorer* restorer) noexcept {
  engine_.setRestorer(restorer);
  if (restorer == nullptr) return;
  restorer->setInstalled(Restorer::Installed{
      [](void* engine, SessionShm& s, const session::RoutingNames& names) noexcept {
        static_cast<Engine*>(engine)->resolveSelection(s, names);
      },
      &engine_});
}

void Proxy::setRouting(const config::RoutingTable& routing) {
  const config::RoutingTable* before = &engine_.routing();
  engine_.setRouting(routing);
  gateways_.map(before == &routing ? nullptr : before);
}

void Proxy::setGatewayStatus(const forwarder::GatewayTableShm* table) { gateways_.setTable(table); }

void Proxy::handle(const Arrival& arrival, std::span<uint8_t> bytes) noexcept {
  engine_.arrived(arrival);
  engine_.counters().datagrams_received.add();
  const uint8_t version = bytes.empty() ? 0 : bytes[0] >> 5;
  if (version == gtp::v2::kVersion) {
    v2_.handle(arrival, bytes);
  } else if (version == gtp::v1::kVersion) {
    v1_.handle(arrival, bytes);
  } else {
    engine_.counters().messages_dropped.add();
  }
}

void Proxy::tick(uint64_t now_ns) noexcept {
  engine_.advance(now_ns);
  failover_.expire(now_ns);
  own_.retransmit(now_ns);
  gateways_.watch(now_ns);
  gateways_.cleanUpRestarts(now_ns, [this](const SessionShm& s) {
    if (s.gtp_version == gtp::v1::kVersion) {
      own_.tellRestart<V1Traits>(s);
    } else {
      own_.tellRestart<V2Traits>(s);
    }
  });
  set_deletions_.walk();
  engine_.expireTransactions(now_ns, [this](const TransactionShm& t) { failover_.expired(t); });
}

}  // namespace gtpcp::worker
