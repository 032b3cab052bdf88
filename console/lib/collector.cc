#include "collector.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/group/bgp_shm.h"
#include "common/group/console_shm.h"
#include "common/group/control_shm.h"
#include "common/group/forwarder_shm.h"
#include "common/group/from_config.h"
#include "common/group/gateway_table_shm.h"
#include "common/group/persister_shm.h"
#include "common/group/segment_view.h"
#include "common/group/watchdog_shm.h"
#include "common/group/worker_shm.h"
#include "common/gtp/v1_tables.gen.h"
#include "common/gtp/v2_tables.gen.h"
#include "common/metrics/histogram.h"
#include "common/time/clock.h"

namespace gtpcp::console {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string snakeCase(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 8);
  bool gap = false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = c >= 'A' && c <= 'Z';
    const bool alnum = upper || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum) {
      gap = !out.empty();
      continue;
    }
    // A capital after a small letter or digit starts a word
    // ("CreateSession"); one inside a run of capitals does not ("IMSI").
    const bool word = upper && i > 0 &&
                      ((name[i - 1] >= 'a' && name[i - 1] <= 'z') || (name[i - 1] >= '0' && name[i - 1] <= '9'));
    if ((gap || word) && !out.empty()) out += '_';
    gap = false;
    out += upper ? char(c - 'A' + 'a') : c;
  }
  return out;
}

namespace {

constexpr double kNsPerSecond = 1e9;

// Cumulative `le` buckets in seconds, of histograms added together.
struct HistogramSum {
  uint64_t buckets[metrics::kLatencyBuckets] = {};
  uint64_t sum_ns = 0;

  void add(const metrics::Histogram& h) noexcept {
    for (std::size_t i = 0; i < metrics::kLatencyBuckets; ++i) buckets[i] += h.bucket(i);
    sum_ns += h.sumNs();
  }
  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (uint64_t b : buckets) n += b;
    return n;
  }
};

// The families of one scrape, by name.
class Families {
 public:
  MetricFamily& family(const std::string& name, std::string_view help, MetricType type) {
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back(MetricFamily{name, std::string(help), type, {}});
    return families_[it->second];
  }
  void counter(const std::string& name, std::string_view help, std::vector<prometheus::ClientMetric::Label> labels,
               double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }
  void gauge(const std::string& name, std::string_view help, std::vector<prometheus::ClientMetric::Label> labels,
             double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }
  void histogram(const std::string& name, std::string_view help, std::vector<prometheus::ClientMetric::Label> labels,
                 const HistogramSum& h) {
    ClientMetric m;
    m.label = std::move(labels);
    uint64_t cumulative = 0;
    m.histogram.bucket.reserve(metrics::kLatencyBuckets);
    for (std::size_t i = 0; i < metrics::kLatencyBuckets; ++i) {
      cumulative += h.buckets[i];
      const double bound = i < std::size(metrics::kLatencyBoundsNs) ? double(metrics::kLatencyBoundsNs[i]) / kNsPerSecond
                                                                    : std::numeric_limits<double>::infinity();
      m.histogram.bucket.push_back({cumulative, bound});
    }
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = double(h.sum_ns) / kNsPerSecond;
    family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> take() { return std::move(families_); }

 private:
  std::vector<MetricFamily> families_;
  std::unordered_map<std::string, std::size_t> index_;
};

using Labels = std::vector<prometheus::ClientMetric::Label>;

// One entry of a counter table as a metric: "worker.sessions_active" ->
// gtpcp_worker_sessions_active (a gauge: its help says so), a counter gets
// `_total`, and a time in ms or µs becomes seconds.
void exportEntry(Families& out, const metrics::CounterInfo& info, uint64_t value, const Labels& labels) {
  std::string name = "gtpcp_";
  for (char c : info.name) name += c == '.' ? '_' : c;
  double v = double(value);
  auto endsWith = [&name](std::string_view s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  if (endsWith("_ms")) {
    name.resize(name.size() - 3);
    name += "_seconds";
    v /= 1e3;
  } else if (endsWith("_us")) {
    name.resize(name.size() - 3);
    name += "_seconds";
    v /= 1e6;
  }
  if (info.help.find("(gauge") != std::string_view::npos) {
    out.gauge(name, info.help, labels, v);
  } else {
    out.counter(name + "_total", info.help, labels, v);
  }
}

template <std::size_t N>
void exportTable(Families& out, const metrics::CounterInfo (&info)[N], const void* table, const Labels& labels = {}) {
  const auto* c = static_cast<const metrics::Counter*>(table);
  for (std::size_t i = 0; i < N; ++i) exportEntry(out, info[i], c[i].load(), labels);
}

std::string versionLabel(unsigned metric_version) { return metric_version == 0 ? "1" : "2"; }

std::string messageLabel(unsigned metric_version, unsigned type) {
  const std::string_view ident = metric_version == 0 ? gtp::v1::messageTypeInfo(uint8_t(type)).ident
                                                     : gtp::v2::messageTypeInfo(uint8_t(type)).ident;
  return ident.empty() ? "type_" + std::to_string(type) : snakeCase(ident);
}

std::string causeLabel(unsigned metric_version, int cause) {
  if (cause < 0) return "other";
  const std::string_view name =
      metric_version == 0 ? gtp::v1::causeName(uint8_t(cause)) : gtp::v2::causeName(uint8_t(cause));
  return name.empty() ? "cause_" + std::to_string(cause) : snakeCase(name);
}

// "create_session_request" -> "create_session"
std::string procedureOf(std::string message) {
  for (std::string_view suffix : {"_request", "_response", "_acknowledge", "_notification"}) {
    if (message.size() > suffix.size() && message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0) {
      message.resize(message.size() - suffix.size());
      break;
    }
  }
  return message;
}

std::string storageMode(config::InstanceConfig::Storage::Mode m) {
  using Mode = config::InstanceConfig::Storage::Mode;
  switch (m) {
    case Mode::kEmbedded: return "embedded";
    case Mode::kSingle: return "single";
    case Mode::kCluster: return "cluster";
    case Mode::kSentinel: return "sentinel";
    case Mode::kOff: return "off";
  }
  return "off";
}

std::string hex16(uint64_t v) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// What one scrape found: the segments there, and the configuration.
struct View {
  const config::InstanceConfig& config;
  const group::Paths& paths;
  const forwarder::ForwarderShm* forwarder = nullptr;
  const forwarder::GatewayTableShm* gateways = nullptr;
  const group::GroupControlShm* control = nullptr;
  const persister::PersisterShm* persister = nullptr;
  std::vector<const worker::WorkerShmHeader*> workers;  // nullptr: not there
};

// Messages, causes and transactions, summed over the workers.
void exportTraffic(Families& out, const View& scrape) {
  const auto& w = scrape.workers;
  const auto* per = scrape.persister;
  using worker::kMetricLegs;
  using worker::kMetricVersions;
  const char* const kLegs[kMetricLegs] = {"access", "gateway"};
  for (unsigned v = 0; v < kMetricVersions; ++v) {
    for (unsigned leg = 0; leg < kMetricLegs; ++leg) {
      for (unsigned t = 0; t < 256; ++t) {
        uint64_t received = 0, sent = 0;
        for (const auto* h : w) {
          if (!h) continue;
          received += h->metrics.received[v][leg][t].load();
          sent += h->metrics.sent[v][leg][t].load();
        }
        if (received == 0 && sent == 0) continue;
        const Labels labels{{"version", versionLabel(v)}, {"leg", kLegs[leg]}, {"type", messageLabel(v, t)}};
        out.counter("gtpcp_messages_received_total", "GTP-C messages the workers received, by version, leg and type",
                    labels, double(received));
        out.counter("gtpcp_messages_sent_total", "GTP-C messages the workers sent, by version, leg and type", labels,
                    double(sent));
      }
    }
    for (unsigned c = 0; c < 256; ++c) {
      uint64_t refused = 0, creation = 0;
      for (const auto* h : w) {
        if (!h) continue;
        refused += h->metrics.refusal_causes[v][c].load();
        creation += h->metrics.creation_causes[v][c].load();
      }
      if (refused)
        out.counter("gtpcp_refusals_total", "requests the proxy answered itself with an error cause, by cause",
                    {{"version", versionLabel(v)}, {"cause", causeLabel(v, int(c))}}, double(refused));
      if (creation)
        out.counter("gtpcp_creation_causes_total", "gateways' answers to session creations, by cause",
                    {{"version", versionLabel(v)}, {"cause", causeLabel(v, int(c))}}, double(creation));
    }
    for (unsigned t = 0; t < 256; ++t) {
      uint64_t accepted = 0, rejected = 0, timed_out = 0;
      for (const auto* h : w) {
        if (!h) continue;
        accepted += h->metrics.answers[v][t][0].load();
        rejected += h->metrics.answers[v][t][1].load();
        timed_out += h->metrics.requests_timed_out[v][t].load();
      }
      const std::string procedure = procedureOf(messageLabel(v, t));
      constexpr std::string_view kHelp =
          "transactions through the proxy by procedure and outcome (accepted, rejected: the cause class of the "
          "gateway's answer; timed_out: never answered)";
      if (accepted)
        out.counter("gtpcp_transactions_total", kHelp,
                    {{"version", versionLabel(v)}, {"procedure", procedure}, {"outcome", "accepted"}}, double(accepted));
      if (rejected)
        out.counter("gtpcp_transactions_total", kHelp,
                    {{"version", versionLabel(v)}, {"procedure", procedure}, {"outcome", "rejected"}}, double(rejected));
      if (timed_out)
        out.counter("gtpcp_transactions_total", kHelp,
                    {{"version", versionLabel(v)}, {"procedure", procedure}, {"outcome", "timed_out"}},
                    double(timed_out));
      uint64_t sent_on = 0, replayed = 0;
      for (const auto* h : w) {
        if (!h) continue;
        sent_on += h->metrics.retransmissions[v][t][0].load();
        replayed += h->metrics.retransmissions[v][t][1].load();
      }
      constexpr std::string_view kRetransmitted =
          "retransmitted requests by procedure: sent on while pending, or answered from the answer cache";
      if (sent_on)
        out.counter("gtpcp_retransmissions_total", kRetransmitted,
                    {{"version", versionLabel(v)}, {"procedure", procedure}, {"handling", "sent_on"}}, double(sent_on));
      if (replayed)
        out.counter("gtpcp_retransmissions_total", kRetransmitted,
                    {{"version", versionLabel(v)}, {"procedure", procedure}, {"handling", "replayed"}},
                    double(replayed));
    }
    uint64_t sessions = 0;
    for (const auto* h : w)
      if (h) sessions += h->metrics.sessions_by_version[v].load();
    out.gauge("gtpcp_sessions", "sessions held by the workers now, by GTP version", {{"version", versionLabel(v)}},
              double(sessions));
  }
  {
    uint64_t retransmitted = 0, replayed = 0, open = 0, cached = 0, held = 0;
    uint64_t found = 0, timeouts = 0;
    for (const auto* h : w) {
      if (!h) continue;
      retransmitted += h->counters.requests_retransmitted.load();
      replayed += h->counters.answers_replayed.load();
      open += h->counters.transactions_pending.load();
      cached += h->counters.transactions_live.load();
      held += h->counters.sync_holding.load();
      found += h->counters.restore_found.load();
      timeouts += h->counters.restore_timeouts.load();
    }
    out.counter("gtpcp_transactions_retransmitted_total", "retransmitted requests sent on while pending", {},
                double(retransmitted));
    out.counter("gtpcp_transactions_replayed_total", "retransmitted requests answered from the answer cache", {},
                double(replayed));
    out.gauge("gtpcp_transactions_open", "requests forwarded and not yet answered", {}, double(open));
    out.gauge("gtpcp_answer_cache_entries", "transactions held for retransmissions, pending or answered", {},
              double(cached));
    if (group::persists(scrape.config)) {
      out.gauge("gtpcp_sync_answers_held", "answers waiting for Redis to acknowledge the changes before them", {},
                double(held));
      constexpr std::string_view kHelp = "sessions the workers asked the storage for, by result";
      out.counter("gtpcp_restore_lookups_total", kHelp, {{"result", "found"}}, double(found));
      out.counter("gtpcp_restore_lookups_total", kHelp, {{"result", "timed_out"}}, double(timeouts));
      if (per) {
        out.counter("gtpcp_restore_lookups_total", kHelp, {{"result", "absent"}},
                    double(per->counters.lookups_absent.load()));
        out.counter("gtpcp_restore_lookups_total", kHelp, {{"result", "failed"}},
                    double(per->counters.lookups_failed.load()));
      }
    }
  }
}

// Datagrams dropped, by reason, wherever it happened.
void exportDrops(Families& out, const View& scrape) {
  const auto& w = scrape.workers;
  const auto* fwd = scrape.forwarder;
  constexpr std::string_view kHelp = "datagrams dropped, by reason";
  auto drop = [&](const char* reason, uint64_t n) { out.counter("gtpcp_datagrams_dropped_total", kHelp, {{"reason", reason}}, double(n)); };
  if (fwd) {
    drop("not_gtp", fwd->counters.dropped_not_gtp.load());
    drop("priority_ring_full", fwd->counters.dropped_priority_full.load());
    drop("overload", fwd->counters.dropped_overload.load());
    drop("closing", fwd->counters.dropped_closing.load());
    drop("socket_overflow", fwd->counters.socket_overflows.load());
    constexpr std::string_view kOverload = "session creations the forwarder rejected with No resources, by reason";
    out.counter("gtpcp_overload_rejections_total", kOverload, {{"reason", "new_ring_full"}},
                double(fwd->counters.rejected_overload.load()));
    out.counter("gtpcp_overload_rejections_total", kOverload, {{"reason", "peer_rate"}},
                double(fwd->counters.rejected_peer_rate.load()));
    out.counter("gtpcp_overload_rejections_total", kOverload, {{"reason", "stale"}},
                double(fwd->counters.rejected_stale.load()));
    out.counter("gtpcp_overload_rejections_total", kOverload, {{"reason", "draining"}},
                double(fwd->counters.rejected_draining.load()));
  }
  uint64_t egress = 0, decode = 0, overflow = 0, persist_full = 0, restore_failed = 0;
  for (const auto* h : w) {
    if (!h) continue;
    egress += h->counters.egress_full.load();
    decode += h->counters.decode_errors.load();
    overflow += h->counters.restore_overflow.load();
    persist_full += h->counters.persist_ring_full.load();
    restore_failed += h->counters.restore_failed.load();
  }
  drop("egress_ring_full", egress);
  drop("decode_error", decode);
  drop("restore_overflow", overflow);
  drop("restore_failed", restore_failed);
  if (group::persists(scrape.config))
    out.counter("gtpcp_session_changes_lost_total", "session changes lost because a persist ring was full", {},
                double(persist_full));
}

// Rings and the proxy's own latency, from the forwarder.
void exportRings(Families& out, const View& scrape) {
  if (!scrape.forwarder) return;
  const auto* fwd = scrape.forwarder;
  const uint32_t workers = scrape.config.workers;
  for (uint32_t i = 0; i < workers && i < forwarder::kMaxWorkers; ++i) {
    const std::string wi = std::to_string(i);
    constexpr std::string_view kDepth = "records queued in a worker's ring (slots), by ring";
    constexpr std::string_view kHigh = "the most records a worker's ring held since the forwarder started";
    out.gauge("gtpcp_ring_depth", kDepth, {{"worker", wi}, {"ring", "priority"}}, double(fwd->priority_depth[i].load()));
    out.gauge("gtpcp_ring_depth", kDepth, {{"worker", wi}, {"ring", "new"}}, double(fwd->new_depth[i].load()));
    out.gauge("gtpcp_ring_depth", kDepth, {{"worker", wi}, {"ring", "egress"}}, double(fwd->egress_depth[i].load()));
    out.gauge("gtpcp_ring_high_water", kHigh, {{"worker", wi}, {"ring", "priority"}},
              double(fwd->priority_high_water[i].load()));
    out.gauge("gtpcp_ring_high_water", kHigh, {{"worker", wi}, {"ring", "new"}}, double(fwd->new_high_water[i].load()));
    out.gauge("gtpcp_ring_high_water", kHigh, {{"worker", wi}, {"ring", "egress"}},
              double(fwd->egress_high_water[i].load()));
  }
  for (unsigned v = 0; v < 2; ++v) {
    HistogramSum h;
    h.add(fwd->proxy_latency[v]);
    out.histogram("gtpcp_proxy_latency_seconds",
                  "what the proxy adds to a message: its reception to the send of what the proxy made of it",
                  {{"version", versionLabel(v)}}, h);
  }
}

// Gateways, pools and rules, by name in the routing document in force.
void exportRouting(Families& out, const View& scrape, const config::RoutingTable& doc) {
  const auto& w = scrape.workers;
  out.gauge("gtpcp_routing_info", "the routing document in force, by content hash (1)",
            {{"hash", hex16(doc.contentHash())}}, 1);
  const auto gateways = doc.gateways();
  const std::size_t n = std::min<std::size_t>(gateways.size(), worker::kMetricGateways);
  auto gatewayLabels = [&](std::size_t i) -> Labels {
    if (i == worker::kMetricGateways - 1 && gateways.size() > worker::kMetricGateways)
      return {{"pool", "other"}, {"gateway", "other"}};
    return {{"pool", doc.pool(gateways[i].pool).name}, {"gateway", gateways[i].name}};
  };
  for (std::size_t i = 0; i < n; ++i)
    out.gauge("gtpcp_gateway_weight", "the gateway's weight in its pool", gatewayLabels(i), gateways[i].weight);

  // The workers' figures name gateways by index in their own document: a
  // worker that has not taken up this one yet (or is carrying its figures
  // over) is not added, and then nothing per gateway is shown this time
  // rather than a sum that would step down.
  bool workers_agree = true;
  for (const auto* h : w) {
    if (!h) continue;
    // WKM-A1: pairs with WKM-R1 in the worker.
    if (h->metrics.routing_hash.load(std::memory_order_acquire) != doc.contentHash()) workers_agree = false;
  }
  if (workers_agree) {
    struct Sum {
      uint64_t sessions = 0, sent = 0, accepted = 0, rejected = 0, timed_out = 0, requests = 0;
      uint64_t rejections[worker::kRejectionSlots] = {};
      HistogramSum response;
    };
    std::vector<Sum> sums(n);
    std::vector<uint64_t> rules(std::min<std::size_t>(doc.rules().size(), worker::kMetricRules));
    for (const auto* h : w) {
      if (!h) continue;
      for (std::size_t i = 0; i < n; ++i) {
        const worker::GatewayMetricsShm& g = h->metrics.gateways[i];
        Sum& s = sums[i];
        s.sessions += g.sessions_active.load();
        s.sent += g.creations_sent.load();
        s.accepted += g.creations_accepted.load();
        s.rejected += g.creations_rejected.load();
        s.timed_out += g.creations_timed_out.load();
        s.requests += g.requests_sent.load();
        for (unsigned k = 0; k < worker::kRejectionSlots; ++k) s.rejections[k] += g.creation_rejections[k].load();
        s.response.add(g.response_time);
      }
      for (std::size_t r = 0; r < rules.size(); ++r) rules[r] += h->metrics.rule_sessions[r].load();
    }
    // WKM-A1 again: a reload that began while the entries were read makes
    // them another document's; they are left out then.
    std::atomic_thread_fence(std::memory_order_acquire);
    for (const auto* h : w) {
      if (h && h->metrics.routing_hash.load(std::memory_order_relaxed) != doc.contentHash()) workers_agree = false;
    }
    if (workers_agree) {
      std::vector<uint64_t> pool_sessions(doc.pools().size());
      for (std::size_t i = 0; i < n; ++i) {
        const Labels labels = gatewayLabels(i);
        const Sum& s = sums[i];
        pool_sessions[gateways[i].pool] += s.sessions;
        out.gauge("gtpcp_gateway_sessions", "sessions the workers hold whose gateway it is", labels, double(s.sessions));
        out.counter("gtpcp_gateway_creations_sent_total", "session creations sent to the gateway (failovers included)",
                    labels, double(s.sent));
        out.counter("gtpcp_gateway_creations_accepted_total", "session creations the gateway accepted", labels,
                    double(s.accepted));
        out.counter("gtpcp_gateway_creations_rejected_total", "session creations the gateway rejected", labels,
                    double(s.rejected));
        out.counter("gtpcp_gateway_creations_timed_out_total", "session creations the gateway did not answer in time",
                    labels, double(s.timed_out));
        out.counter("gtpcp_gateway_requests_sent_total", "requests forwarded to the gateway", labels,
                    double(s.requests));
        out.histogram("gtpcp_gateway_response_time_seconds",
                      "from forwarding a request to the gateway to the receipt of its answer", labels, s.response);
        const uint8_t version = gateways[i].gtp_version;
        for (unsigned k = 0; k < worker::kRejectionSlots; ++k) {
          if (s.rejections[k] == 0) continue;
          Labels with_cause = labels;
          with_cause.push_back({"cause", causeLabel(version == 1 ? 0 : 1, worker::rejectionCauseOfSlot(version, k))});
          out.counter("gtpcp_gateway_creation_rejections_total", "the gateway's rejections of creations, by cause",
                      std::move(with_cause), double(s.rejections[k]));
        }
      }
      for (std::size_t p = 0; p < doc.pools().size(); ++p)
        out.gauge("gtpcp_pool_sessions", "sessions the workers hold on the pool's gateways",
                  {{"pool", doc.pool(uint16_t(p)).name}}, double(pool_sessions[p]));
      for (std::size_t r = 0; r < rules.size(); ++r) {
        const config::Rule& rule = doc.rule(uint16_t(r));
        const bool other = r == worker::kMetricRules - 1 && doc.rules().size() > worker::kMetricRules;
        out.counter("gtpcp_rule_sessions_total", "sessions created through the rule",
                    {{"rule", other ? "other" : rule.name}, {"pool", other ? "other" : doc.pool(rule.pool).name}},
                    double(rules[r]));
      }
    }
  }

  // The forwarder's health checks, when its document is this one.
  const auto* control = scrape.control;
  const auto* table = scrape.gateways;
  // CTL-A2 (an observer's): pairs with CTL-R2 in the forwarder, which
  // stores the hash before the generation (0 until its first reload).
  bool forwarder_agrees = false;
  if (control) {
    (void)control->forwarder.routing_generation.load(std::memory_order_acquire);
    forwarder_agrees = control->forwarder.routing_hash.load(std::memory_order_relaxed) == doc.contentHash();
  }
  if (table && forwarder_agrees) {
    // GWT-A1 (an observer's): pairs with GWT-R1 in the forwarder.
    const uint32_t published = table->published.load(std::memory_order_acquire);
    const std::size_t m = std::min<std::size_t>({published, gateways.size(), forwarder::kMaxHealthChecked});
    std::vector<uint64_t> pool_up(doc.pools().size());
    const bool checked = doc.healthCheck().interval_ms != 0;
    for (std::size_t i = 0; i < m; ++i) {
      const forwarder::GatewayStatusShm& g = table->gateways[i];
      const Labels labels = gatewayLabels(i);
      const bool up = g.up.load(std::memory_order_relaxed) != 0;
      pool_up[gateways[i].pool] += up ? 1 : 0;
      out.gauge("gtpcp_gateway_up", "1 while the gateway answers Echo Requests (always 1 without health checks)",
                labels, up ? 1 : 0);
      const uint32_t recovery = g.recovery.load(std::memory_order_relaxed);
      if (recovery != forwarder::kRecoveryUnknown)
        out.gauge("gtpcp_gateway_recovery", "the Recovery value of the gateway's last Echo Response", labels,
                  double(recovery));
      out.counter("gtpcp_gateway_restarts_total", "gateway restarts seen (a changed Recovery value)", labels,
                  double(g.restarts.load(std::memory_order_relaxed)));
      if (!checked) continue;
      out.counter("gtpcp_gateway_echo_requests_total", "Echo Requests sent to the gateway", labels,
                  double(g.echo_sent.load()));
      out.counter("gtpcp_gateway_echo_misses_total", "Echo intervals that ended without an answer", labels,
                  double(g.misses.load()));
      out.gauge("gtpcp_gateway_echo_rtt_seconds", "round trip of the last answered Echo Request", labels,
                double(g.echo_rtt_ns.load()) / kNsPerSecond);
      HistogramSum h;
      h.add(g.echo_rtt);
      out.histogram("gtpcp_gateway_echo_rtt_histogram_seconds", "round trips of answered Echo Requests", labels, h);
    }
    for (std::size_t p = 0; p < doc.pools().size(); ++p) {
      const config::Pool& pool = doc.pool(uint16_t(p));
      out.gauge("gtpcp_pool_gateways", "gateways of the pool", {{"pool", pool.name}}, pool.gateway_count);
      out.gauge("gtpcp_pool_gateways_up", "gateways of the pool that are up", {{"pool", pool.name}},
                double(pool_up[p]));
    }
  }
}

void exportStorage(Families& out, const View& scrape) {
  const auto* per = scrape.persister;
  using Persist = config::InstanceConfig::Storage::Persist;
  out.gauge("gtpcp_storage_info", "where sessions are stored (1)",
            {{"mode", storageMode(scrape.config.storage.mode)},
             {"persist", scrape.config.storage.persist == Persist::kSync ? "sync" : "async"}},
            1);
  if (per) {
    if (auto text = persister::readPrimaries(per->primaries)) {
      std::size_t begin = 0;
      while (begin < text->size()) {
        const std::size_t end = std::min(text->find(',', begin), text->size());
        out.gauge("gtpcp_storage_primary", "a Redis primary the persister writes to (1)",
                  {{"address", text->substr(begin, end - begin)}}, 1);
        begin = end + 1;
      }
    }
    out.gauge("gtpcp_storage_writable", "1 when every channel reaches a primary for every slot", {},
              double(per->counters.storage_up.load()));
    HistogramSum h;
    h.add(per->lag);
    out.histogram("gtpcp_storage_lag_seconds",
                  "per batch Redis acknowledged, the age of its oldest change", {}, h);
  }
}

// Supervision: each process's liveness from its segment, what the thread
// watchdog did to it from its status file.
void exportSupervision(Families& out, const View& scrape, const std::vector<std::string>& processes) {
  nlohmann::json watched;
  if (std::ifstream in(scrape.paths.watchdogStatusFile()); in) {
    watched = nlohmann::json::parse(in, nullptr, false);
    if (watched.is_discarded()) watched = nlohmann::json();
  }
  const uint64_t now = monotonicNs();
  const uint64_t deadline_ns = uint64_t(scrape.config.watchdog.timeout_ms ? scrape.config.watchdog.timeout_ms : 1000) * 1'000'000;
  for (const std::string& name : processes) {
    std::optional<ring::SharedSegment> holder;
    const group::ProcessStatusShm* s = group::processStatusOf(name, scrape.paths, holder);
    bool up = false;
    if (s) {
      const auto state = static_cast<group::ProcessState>(s->state.load(std::memory_order_relaxed));
      const uint64_t beat = s->heartbeat_ns.load(std::memory_order_relaxed);
      up = state == group::ProcessState::kServing && beat != 0 && (beat >= now || now - beat <= deadline_ns);
      const uint64_t started = s->started_ns.load(std::memory_order_relaxed);
      if (started)
        out.gauge("gtpcp_process_start_time_seconds", "when the process started, Unix time", {{"process", name}},
                  double(started) / kNsPerSecond);
    }
    out.gauge("gtpcp_process_up", "1 while the process serves and beats within watchdog.timeout_ms",
              {{"process", name}}, up ? 1 : 0);
    uint64_t restarts = 0;
    bool given_up = false;
    if (watched.is_object() && watched.contains(name)) {
      restarts = watched[name].value("restarts", uint64_t{0});
      given_up = watched[name].contains("why");
    }
    out.counter("gtpcp_process_restarts_total", "times the thread watchdog replaced the process", {{"process", name}},
                double(restarts));
    out.gauge("gtpcp_process_given_up", "1 when the thread watchdog stopped replacing the process",
              {{"process", name}}, given_up ? 1 : 0);
  }
}

}  // namespace

// Segments stay attached between scrapes: a restarted owner adopts its
// segment, so a mapping stays the live one; one not there yet is looked for
// again at the next scrape.
struct GroupCollector::Segments {
  template <class Shm>
  struct Slot {
    std::optional<ring::SharedSegment> segment;
    const Shm* get(const std::string& name, uint32_t kind) {
      if (!segment) {
        auto a = group::attachAs<Shm>(name, kind);
        if (!a.shm) return nullptr;
        segment = std::move(a.segment);
      }
      return static_cast<const Shm*>(segment->payload());
    }
  };
  Slot<forwarder::ForwarderShm> forwarder;
  Slot<forwarder::GatewayTableShm> gateways;
  Slot<persister::PersisterShm> persister;
  Slot<watchdog::WatchdogShm> watchdog;
  Slot<group::BgpWatchdogShm> bgp_watchdog;
  Slot<group::BridgeShm> bridge;
  Slot<ConsoleShm> console;
  Slot<group::GroupControlShm> control;
  std::vector<Slot<worker::WorkerShmHeader>> workers;
};

GroupCollector::GroupCollector(config::InstanceConfig config, group::Paths paths, std::vector<std::string> processes,
                               BuildInfo build)
    : config_(std::move(config)), paths_(std::move(paths)), process_names_(std::move(processes)),
      build_(std::move(build)),
      segments_(std::make_unique<Segments>()) {
  segments_->workers.resize(config_.workers);
}

GroupCollector::~GroupCollector() = default;

const config::RoutingTable* GroupCollector::routing() const {
  group::RoutingInForce in_force{0, config_.routing.resolved};
  if (const auto* c = segments_->control.get(paths_.controlSegment(), group::kControlSegmentKind)) {
    if (auto f = group::routingInForce(*c)) in_force = *f;
  }
  if (in_force.generation != routing_generation_ || in_force.path != routing_path_) {
    routing_generation_ = in_force.generation;
    routing_path_ = in_force.path;
    auto loaded = config::loadRoutingDocument(in_force.path);
    if (loaded) {
      routing_.emplace(std::move(*loaded));
    } else {
      routing_.reset();
    }
  }
  return routing_ ? &*routing_ : nullptr;
}

std::vector<MetricFamily> GroupCollector::Collect() const {
  std::lock_guard lock(mutex_);
  Families out;
  Segments& seg = *segments_;
  const uint32_t workers = config_.workers;

  out.gauge("gtpcp_build_info", "version and commit of the running gtpcp-console (1)",
            {{"version", build_.version}, {"commit", build_.commit}}, 1);

  // Counter tables as they are.
  const auto* fwd = seg.forwarder.get(paths_.forwarderSegment(), forwarder::kForwarderSegmentKind);
  if (fwd) exportTable(out, forwarder::kForwarderCounterInfo, &fwd->counters);
  std::vector<const worker::WorkerShmHeader*> w(workers, nullptr);
  for (uint32_t i = 0; i < workers; ++i) {
    w[i] = seg.workers[i].get(paths_.workerSegment(i), worker::kWorkerSegmentKind);
    if (!w[i]) continue;
    const Labels labels{{"worker", std::to_string(i)}};
    exportTable(out, worker::kWorkerCounterInfo, &w[i]->counters, labels);
    // The answer cache is a ring of answer_bytes: an answer is there for
    // retransmissions until that many bytes were written after it, so the
    // size over the write rate is how long answers last.
    out.gauge("gtpcp_answer_cache_bytes", "size of the worker's answer cache (sessions.answer_cache_bytes)", labels,
              double(w[i]->answer_bytes));
    out.counter("gtpcp_answer_cache_written_bytes_total", "bytes of answers written to the worker's answer cache",
                labels,
                // WKH-H1 (common/group/worker_shm.h): relaxed, a statistic.
                double(std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w[i]->answer_head))
                           .load(std::memory_order_relaxed)));
  }
  const auto* per = seg.persister.get(paths_.persisterSegment(), persister::kPersisterSegmentKind);
  if (per) {
    exportTable(out, persister::kPersisterCounterInfo, &per->counters);
    for (uint32_t i = 0; i < workers && i < persister::kMaxChannels; ++i)
      exportTable(out, persister::kRedisCounterInfo, &per->redis[i], {{"worker", std::to_string(i)}});
  }
  const auto* wd = seg.watchdog.get(paths_.watchdogSegment(), watchdog::kWatchdogSegmentKind);
  if (wd) exportTable(out, watchdog::kWatchdogCounterInfo, &wd->counters);
  if (config_.bgp.mode == config::InstanceConfig::Bgp::Mode::kFrr) {
    if (const auto* b = seg.bgp_watchdog.get(paths_.bgpWatchdogSegment(), group::kBgpWatchdogSegmentKind))
      exportTable(out, group::kBgpWatchdogCounterInfo, &b->counters);
    if (const auto* b = seg.bridge.get(paths_.bridgeSegment(), group::kBridgeSegmentKind))
      exportTable(out, group::kBridgeCounterInfo, &b->counters);
  }
  const auto* self = seg.console.get(paths_.consoleSegment(), kConsoleSegmentKind);
  if (self) exportTable(out, kConsoleCounterInfo, &self->counters);

  const View view{config_,
                  paths_,
                  fwd,
                  seg.gateways.get(paths_.gatewayTableSegment(), forwarder::kGatewayTableSegmentKind),
                  seg.control.get(paths_.controlSegment(), group::kControlSegmentKind),
                  per,
                  std::move(w)};
  exportTraffic(out, view);
  exportDrops(out, view);
  exportRings(out, view);
  if (const config::RoutingTable* doc = routing()) exportRouting(out, view, *doc);
  exportStorage(out, view);
  exportSupervision(out, view, process_names_);
  return out.take();
}

}  // namespace gtpcp::console
