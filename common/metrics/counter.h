// Counters that live in shared memory: one writer each, read by anyone.
//
// Each process owns its counter table (in its own segment, on its own cache
// lines) and is the only writer of every counter in it; `gtpcp status` and the
// metrics exporter read them from other processes. Because there is a single
// writer, an increment is a relaxed load and a relaxed store (a plain move on
// x86), not a locked read-modify-write. Readers use relaxed loads: a counter
// is a statistic, nothing else is published through it, so no ordering with
// other memory is needed and a value that is a few increments old is fine.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace gtpcp::metrics {

class Counter {
 public:
  // Only the owning process calls this.
  void add(uint64_t n = 1) noexcept { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  // A gauge: the owner sets the current value.
  void set(uint64_t n) noexcept { v_.store(n, std::memory_order_relaxed); }
  uint64_t load() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(sizeof(Counter) == 8);

// Name and help text of one counter of a table, for status and export.
struct CounterInfo {
  std::string_view name;  // "component.noun_verb"
  std::string_view help;
};

}  // namespace gtpcp::metrics

// Declares a counter table from an X-list: `X(field, "name", "help")`.
//   struct FooCounters { GTPCP_COUNTER_FIELDS(FOO_COUNTERS) };
//   inline constexpr CounterInfo kFooCounterInfo[] = { GTPCP_COUNTER_INFO(FOO_COUNTERS) };
#define GTPCP_COUNTER_FIELD_(field, name, help) ::gtpcp::metrics::Counter field;
#define GTPCP_COUNTER_INFO_(field, name, help) ::gtpcp::metrics::CounterInfo{name, help},
#define GTPCP_COUNTER_FIELDS(LIST) LIST(GTPCP_COUNTER_FIELD_)
#define GTPCP_COUNTER_INFO(LIST) LIST(GTPCP_COUNTER_INFO_)
