#include "worker_metrics.h"

#include <type_traits>

namespace gtpcp::worker {

namespace {

// An entry of a per-gateway or per-rule table seen as the Counters it is
// made of (a Histogram is its buckets and its sum, histogram.h), so that it
// can be saved, moved and zeroed counter by counter, each with an atomic
// store a concurrent reader never sees torn.
template <class Entry>
constexpr std::size_t kCountersPer = sizeof(Entry) / sizeof(metrics::Counter);
static_assert(sizeof(GatewayMetricsShm) == kCountersPer<GatewayMetricsShm> * sizeof(metrics::Counter));
static_assert(std::is_standard_layout_v<GatewayMetricsShm> && alignof(GatewayMetricsShm) == alignof(metrics::Counter));

template <class Entry>
metrics::Counter* countersOf(Entry& e) noexcept {
  return reinterpret_cast<metrics::Counter*>(&e);
}

template <class Entry>
void zero(std::span<Entry> entries) noexcept {
  for (Entry& e : entries) {
    metrics::Counter* c = countersOf(e);
    for (std::size_t k = 0; k < kCountersPer<Entry>; ++k) c[k].set(0);
  }
}

// Whether entry `i` of a table of `capacity` holds item `i` of `count` alone
// (not the last entry shared by every item past the table).
bool alone(std::size_t i, std::size_t count, std::size_t capacity) { return i + 1 < capacity || count <= capacity; }

// Entries of `table` move from the old items' indexes to the new items'
// (old_index(j): item j's index among the old, by name); the rest goes to 0.
// Entries past both documents' items are 0 already and stay so.
template <class Entry, class OldIndex>
void carry(std::span<Entry> table, std::size_t old_count, std::size_t new_count, OldIndex&& old_index) {
  constexpr std::size_t per = kCountersPer<Entry>;
  const std::size_t capacity = table.size();
  const std::size_t old_used = std::min(old_count, capacity);
  const std::size_t new_used = std::min(new_count, capacity);
  std::vector<uint64_t> saved(old_used * per);
  for (std::size_t i = 0; i < old_used; ++i) {
    const metrics::Counter* c = countersOf(table[i]);
    for (std::size_t k = 0; k < per; ++k) saved[i * per + k] = c[k].load();
  }
  for (std::size_t j = 0; j < std::max(old_used, new_used); ++j) {
    std::optional<std::size_t> from;
    if (j < new_used && alone(j, new_count, capacity)) {
      if (const std::optional<uint16_t> i = old_index(j); i && *i < old_used && alone(*i, old_count, capacity))
        from = *i;
    }
    metrics::Counter* c = countersOf(table[j]);
    for (std::size_t k = 0; k < per; ++k) c[k].set(from ? saved[*from * per + k] : 0);
  }
}

}  // namespace

void WorkerMetrics::beginChange() noexcept {
  m_.routing_hash.store(0, std::memory_order_release);
  // Opens WKM-R1's change: the entry stores below are ordered after the 0
  // (a reader's acquire fence after reading an entry, WKM-A1's second load,
  // then sees it).
  std::atomic_thread_fence(std::memory_order_release);
}

void WorkerMetrics::open(const config::RoutingTable& routing) noexcept {
  // Relaxed: this process is the only writer.
  const uint64_t kept = m_.routing_hash.load(std::memory_order_relaxed);
  beginChange();
  // Another document's (or a change cut short): nothing says which gateway
  // an entry was.
  if (kept != routing.contentHash()) {
    zero(std::span<GatewayMetricsShm>(m_.gateways));
    zero(std::span<metrics::Counter>(m_.rule_sessions));
  }
}

void WorkerMetrics::carryOver(const config::RoutingTable& before, const config::RoutingTable& after) {
  beginChange();
  carry(std::span<GatewayMetricsShm>(m_.gateways), before.gateways().size(), after.gateways().size(),
        [&](std::size_t j) { return before.findGateway(after.gateways()[j].name); });
  carry(std::span<metrics::Counter>(m_.rule_sessions), before.rules().size(), after.rules().size(),
        [&](std::size_t j) { return before.findRule(after.rules()[j].name); });
}

}  // namespace gtpcp::worker
