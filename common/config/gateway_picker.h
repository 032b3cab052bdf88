// GatewayPicker: the weighted choice of a gateway inside the pool that
// RoutingTable::select() chose. Its own file because only the worker keeps
// one (per thread, with per-gateway state), while routing.h is read by every
// process that loads a routing document. pick() runs on the data path for
// every session-creating request and for every failover attempt: noexcept,
// no allocation; only construction allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/config/routing.h"

namespace gtpcp::config {

// Weighted choice of a gateway inside a pool: smooth weighted round-robin
// (as nginx does it). While the set of gateways that are up does not change,
// any sum(weights) consecutive picks of a pool give each gateway exactly its
// weight, interleaved (3:1 gives a a b a, a a b a, ...). Gateways that are
// down are skipped and the others share their traffic by weight.
//
// One picker per worker thread; it keeps one counter per gateway of `table`,
// which must outlive it (a new routing table gets a new picker).
class GatewayPicker {
 public:
  explicit GatewayPicker(const RoutingTable& table);

  // The index (in table.gateways()) of the next gateway of pool `pool` for
  // which `up(index)` is true; nullopt when none is up or `pool` is out of
  // range. `up` is called once per gateway of the pool; it must not throw.
  template <class Up>
  std::optional<uint16_t> pick(uint16_t pool, Up&& up) noexcept;
  // Every gateway up.
  std::optional<uint16_t> pick(uint16_t pool) noexcept {
    return pick(pool, [](uint16_t) noexcept { return true; });
  }
  // Back to the initial state.
  void reset() noexcept;

 private:
  const RoutingTable* table_;
  std::vector<int64_t> current_;  // smooth-WRR current weight, per gateway
};

template <class Up>
std::optional<uint16_t> GatewayPicker::pick(uint16_t pool, Up&& up) noexcept {
  static_assert(std::is_invocable_r_v<bool, Up&, uint16_t>, "up(uint16_t gateway) -> bool");
  if (pool >= table_->pools().size()) return std::nullopt;
  const Pool& p = table_->pool(pool);
  const uint32_t end = uint32_t{p.first_gateway} + p.gateway_count;
  int64_t total = 0;
  uint32_t best = end;
  for (uint32_t i = p.first_gateway; i < end; ++i) {
    if (!up(static_cast<uint16_t>(i))) continue;
    const int64_t weight = table_->gateway(static_cast<uint16_t>(i)).weight;
    current_[i] += weight;
    total += weight;
    if (best == end || current_[i] > current_[best]) best = i;
  }
  if (best == end) return std::nullopt;
  current_[best] -= total;
  return static_cast<uint16_t>(best);
}

}  // namespace gtpcp::config
