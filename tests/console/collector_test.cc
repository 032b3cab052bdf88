// The metrics collector (console/lib/collector.h) against segments this test
// makes and fills itself, as the processes would: names, labels, values,
// cumulative histogram buckets in seconds, per-gateway figures only while
// every worker counts by the routing document the collector names them by,
// and the text prometheus-cpp makes of it passing `promtool check metrics`.
#include "console/lib/collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include <prometheus/text_serializer.h>

#include "common/config/instance.h"
#include "common/group/console_shm.h"
#include "common/group/control_shm.h"
#include "common/group/forwarder_shm.h"
#include "common/group/from_config.h"
#include "common/group/gateway_table_shm.h"
#include "common/group/persister_shm.h"
#include "common/group/segments.h"
#include "common/group/worker_shm.h"
#include "tests/support/process.h"

namespace gtpcp::console {
namespace {

constexpr const char* kRouting = R"(version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21, weight: 3}
      - {name: pgw2, address: 127.0.0.22}
  ggsns:
    gtp_version: 1
    gateways:
      - {name: ggsn1, address: 127.0.0.23}
rules:
  - name: default
    pool: internet
health_check:
  interval_ms: 1000
  misses: 3
)";

// One segment made by this test and removed after it.
template <class T>
struct Owned {
  std::optional<ring::SharedSegment> segment;
  T* shm = nullptr;
  std::string name;
  Owned(const std::string& n, uint32_t kind) : name(n) {
    auto s = group::createOwned<T>(n, kind);
    EXPECT_TRUE(s) << n;
    if (!s) return;
    segment.emplace(std::move(*s));
    shm = static_cast<T*>(segment->payload());
  }
  ~Owned() {
    segment.reset();
    ring::SharedSegment::remove(name);
  }
};

struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir.file("routing.yaml")) << kRouting;
    const std::string yaml = "group: col" + std::to_string(::getpid()) +
                             "\nrouting: routing.yaml\nworkers: 2\ngtpc:\n  access:\n    ipv4: 127.0.0.1\n"
                             "storage:\n  mode: single\n  servers: [\"127.0.0.1:6379\"]\nrun_dir: " +
                             dir.path() + "\n";
    auto c = config::parseInstanceConfig(yaml, dir.file("gtpcp.yaml"), dir.path());
    ASSERT_TRUE(c) << c.error().toString();
    config = std::move(*c);
    auto doc = config::loadRoutingDocument(config.routing.resolved);
    ASSERT_TRUE(doc);
    hash = doc->contentHash();
  }

  std::vector<prometheus::MetricFamily> collect() {
    GroupCollector collector(config, group::pathsOf(config), {"forwarder", "worker-0", "worker-1", "console"},
                             {"1.2.3", "abc"});
    return collector.Collect();
  }

  static const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& f, const std::string& name) {
    for (const auto& x : f)
      if (x.name == name) return &x;
    return nullptr;
  }
  // The value of the series of `name` with every label of `labels`.
  static std::optional<double> value(const std::vector<prometheus::MetricFamily>& f, const std::string& name,
                                     const std::map<std::string, std::string>& labels = {}) {
    const auto* family = find(f, name);
    if (!family) return std::nullopt;
    for (const auto& m : family->metric) {
      bool all = true;
      for (const auto& [k, v] : labels) {
        bool found = false;
        for (const auto& l : m.label) found |= l.name == k && l.value == v;
        all &= found;
      }
      if (!all) continue;
      switch (family->type) {
        case prometheus::MetricType::Counter: return m.counter.value;
        case prometheus::MetricType::Gauge: return m.gauge.value;
        case prometheus::MetricType::Histogram: return double(m.histogram.sample_count);
        default: return std::nullopt;
      }
    }
    return std::nullopt;
  }

  testing::TempDir dir;
  config::InstanceConfig config;
  uint64_t hash = 0;
};

TEST(SnakeCase, MessageAndCauseNames) {
  EXPECT_EQ(snakeCase("CreateSessionRequest"), "create_session_request");
  EXPECT_EQ(snakeCase("Request accepted"), "request_accepted");
  EXPECT_EQ(snakeCase("Missing or unknown APN"), "missing_or_unknown_apn");
  EXPECT_EQ(snakeCase("PDP context without TFT already activated"), "pdp_context_without_tft_already_activated");
  EXPECT_EQ(snakeCase("Context Not Found"), "context_not_found");
}

TEST_F(CollectorTest, CountersMessagesGatewaysAndHistogramsFromTheSegments) {
  const group::Paths paths = group::pathsOf(config);
  Owned<forwarder::ForwarderShm> fwd(paths.forwarderSegment(), forwarder::kForwarderSegmentKind);
  Owned<forwarder::GatewayTableShm> table(paths.gatewayTableSegment(), forwarder::kGatewayTableSegmentKind);
  Owned<worker::WorkerShmHeader> w0(paths.workerSegment(0), worker::kWorkerSegmentKind);
  Owned<worker::WorkerShmHeader> w1(paths.workerSegment(1), worker::kWorkerSegmentKind);
  Owned<persister::PersisterShm> per(paths.persisterSegment(), persister::kPersisterSegmentKind);
  Owned<group::GroupControlShm> control(paths.controlSegment(), group::kControlSegmentKind);
  ASSERT_TRUE(fwd.shm && table.shm && w0.shm && w1.shm && per.shm && control.shm);

  fwd.shm->counters.datagrams_received.add(1000);
  fwd.shm->counters.dropped_not_gtp.add(7);
  fwd.shm->priority_depth[1].set(5);
  fwd.shm->priority_high_water[1].set(40);
  fwd.shm->proxy_latency[1].observe(20'000);   // 20 µs: the 25 µs bucket
  fwd.shm->proxy_latency[1].observe(300'000);  // 300 µs: the 500 µs bucket
  w0.shm->counters.sessions_created.add(3);
  w1.shm->counters.sessions_created.add(4);
  w0.shm->counters.sessions_active.set(3);
  w0.shm->answer_bytes = 1 << 20;
  w0.shm->answer_head = 3 << 20;
  w0.shm->metrics.received[1][0][32].add(10);  // v2, access, Create Session Request
  w1.shm->metrics.received[1][0][32].add(5);
  w0.shm->metrics.sent[1][1][32].add(10);
  w0.shm->metrics.answers[1][33][0].add(9);     // accepted Create Session Responses
  w0.shm->metrics.answers[1][33][1].add(1);
  w1.shm->metrics.requests_timed_out[1][34].add(2);  // Modify Bearer Requests
  w1.shm->metrics.retransmissions[1][34][0].add(3);
  w0.shm->metrics.retransmissions[1][34][1].add(1);
  w0.shm->metrics.refusal_causes[1][64].add(6);      // Context Not Found
  w0.shm->metrics.creation_causes[1][16].add(9);
  w0.shm->metrics.sessions_by_version[1].set(3);
  w1.shm->metrics.sessions_by_version[0].set(4);
  // pgw2 (gateway 1) in both workers.
  w0.shm->metrics.gateways[1].sessions_active.set(2);
  w1.shm->metrics.gateways[1].sessions_active.set(3);
  w0.shm->metrics.gateways[1].creations_sent.add(11);
  w0.shm->metrics.gateways[1].creations_rejected.add(1);
  w0.shm->metrics.gateways[1].creation_rejections[worker::rejectionSlot(2, 73)].add(1);
  w0.shm->metrics.gateways[1].response_time.observe(1'500'000);
  w1.shm->metrics.gateways[1].response_time.observe(2'000'000);
  w0.shm->metrics.rule_sessions[0].add(7);
  w0.shm->metrics.routing_hash.store(hash, std::memory_order_release);
  w1.shm->metrics.routing_hash.store(hash, std::memory_order_release);
  per.shm->counters.storage_up.set(1);
  per.shm->counters.lag_ms.set(250);
  per.shm->lag.observe(3'000'000);
  persister::publishPrimaries(per.shm->primaries, "127.0.0.1:7001,[::1]:7002");
  // The forwarder's health checks, published for this document.
  table.shm->gateways[0].up.store(1);
  table.shm->gateways[1].up.store(0);
  table.shm->gateways[1].recovery.store(17);
  table.shm->gateways[1].restarts.store(2);
  table.shm->gateways[1].echo_rtt_ns.set(400'000);
  table.shm->published.store(3, std::memory_order_release);
  control.shm->forwarder.routing_hash.store(hash);
  control.shm->forwarder.routing_generation.store(1, std::memory_order_release);

  const auto f = collect();
  EXPECT_EQ(value(f, "gtpcp_build_info", {{"version", "1.2.3"}, {"commit", "abc"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_forwarder_datagrams_received_total"), 1000);
  EXPECT_EQ(value(f, "gtpcp_worker_sessions_created_total", {{"worker", "1"}}), 4);
  EXPECT_EQ(find(f, "gtpcp_worker_sessions_active")->type, prometheus::MetricType::Gauge);
  EXPECT_EQ(value(f, "gtpcp_persister_lag_seconds"), 0.25) << "ms gauges in seconds";
  EXPECT_EQ(value(f, "gtpcp_datagrams_dropped_total", {{"reason", "not_gtp"}}), 7);
  EXPECT_EQ(value(f, "gtpcp_messages_received_total",
                  {{"version", "2"}, {"leg", "access"}, {"type", "create_session_request"}}),
            15)
      << "summed over the workers";
  EXPECT_EQ(value(f, "gtpcp_messages_sent_total", {{"leg", "gateway"}, {"type", "create_session_request"}}), 10);
  EXPECT_EQ(value(f, "gtpcp_transactions_total", {{"procedure", "create_session"}, {"outcome", "accepted"}}), 9);
  EXPECT_EQ(value(f, "gtpcp_transactions_total", {{"procedure", "create_session"}, {"outcome", "rejected"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_transactions_total", {{"procedure", "modify_bearer"}, {"outcome", "timed_out"}}), 2);
  EXPECT_EQ(value(f, "gtpcp_retransmissions_total", {{"procedure", "modify_bearer"}, {"handling", "sent_on"}}), 3);
  EXPECT_EQ(value(f, "gtpcp_retransmissions_total", {{"procedure", "modify_bearer"}, {"handling", "replayed"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_refusals_total", {{"cause", "context_not_found"}}), 6);
  EXPECT_EQ(value(f, "gtpcp_creation_causes_total", {{"cause", "request_accepted"}}), 9);
  EXPECT_EQ(value(f, "gtpcp_sessions", {{"version", "2"}}), 3);
  EXPECT_EQ(value(f, "gtpcp_sessions", {{"version", "1"}}), 4);
  EXPECT_EQ(value(f, "gtpcp_answer_cache_bytes", {{"worker", "0"}}), 1 << 20);
  EXPECT_EQ(value(f, "gtpcp_answer_cache_written_bytes_total", {{"worker", "0"}}), 3 << 20);
  EXPECT_EQ(value(f, "gtpcp_ring_depth", {{"worker", "1"}, {"ring", "priority"}}), 5);
  EXPECT_EQ(value(f, "gtpcp_ring_high_water", {{"worker", "1"}, {"ring", "priority"}}), 40);
  EXPECT_EQ(value(f, "gtpcp_gateway_sessions", {{"pool", "internet"}, {"gateway", "pgw2"}}), 5);
  EXPECT_EQ(value(f, "gtpcp_pool_sessions", {{"pool", "internet"}}), 5);
  EXPECT_EQ(value(f, "gtpcp_gateway_creations_sent_total", {{"gateway", "pgw2"}}), 11);
  EXPECT_EQ(value(f, "gtpcp_gateway_creation_rejections_total", {{"gateway", "pgw2"}, {"cause", "no_resources_available"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_gateway_response_time_seconds", {{"gateway", "pgw2"}}), 2) << "observations of both workers";
  EXPECT_EQ(value(f, "gtpcp_gateway_weight", {{"gateway", "pgw1"}}), 3);
  EXPECT_EQ(value(f, "gtpcp_rule_sessions_total", {{"rule", "default"}, {"pool", "internet"}}), 7);
  EXPECT_EQ(value(f, "gtpcp_gateway_up", {{"gateway", "pgw1"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_gateway_up", {{"gateway", "pgw2"}}), 0);
  EXPECT_EQ(value(f, "gtpcp_gateway_up", {{"pool", "ggsns"}, {"gateway", "ggsn1"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_gateway_recovery", {{"gateway", "pgw2"}}), 17);
  EXPECT_FALSE(value(f, "gtpcp_gateway_recovery", {{"gateway", "pgw1"}})) << "no Echo Response yet: no value";
  EXPECT_EQ(value(f, "gtpcp_gateway_restarts_total", {{"gateway", "pgw2"}}), 2);
  EXPECT_DOUBLE_EQ(*value(f, "gtpcp_gateway_echo_rtt_seconds", {{"gateway", "pgw2"}}), 0.0004);
  EXPECT_EQ(value(f, "gtpcp_pool_gateways_up", {{"pool", "internet"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_pool_gateways", {{"pool", "internet"}}), 2);
  EXPECT_EQ(value(f, "gtpcp_storage_writable"), 1);
  EXPECT_EQ(value(f, "gtpcp_storage_info", {{"mode", "single"}, {"persist", "async"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_storage_lag_seconds"), 1);
  EXPECT_EQ(value(f, "gtpcp_storage_primary", {{"address", "127.0.0.1:7001"}}), 1);
  EXPECT_EQ(value(f, "gtpcp_storage_primary", {{"address", "[::1]:7002"}}), 1);
  EXPECT_EQ(find(f, "gtpcp_storage_primary")->metric.size(), 2u);
  EXPECT_EQ(value(f, "gtpcp_process_up", {{"process", "forwarder"}}), 0) << "a segment nobody beats in";

  // The proxy-latency histogram: cumulative buckets, in seconds, +Inf last.
  const auto* latency = find(f, "gtpcp_proxy_latency_seconds");
  ASSERT_NE(latency, nullptr);
  const prometheus::ClientMetric* v2 = nullptr;
  for (const auto& m : latency->metric)
    if (m.label.size() == 1 && m.label[0].value == "2") v2 = &m;
  ASSERT_NE(v2, nullptr);
  ASSERT_EQ(v2->histogram.bucket.size(), metrics::kLatencyBuckets);
  EXPECT_DOUBLE_EQ(v2->histogram.bucket[0].upper_bound, 10e-6);
  EXPECT_EQ(v2->histogram.bucket[0].cumulative_count, 0u);
  EXPECT_EQ(v2->histogram.bucket[1].cumulative_count, 1u);  // le 25 µs
  EXPECT_EQ(v2->histogram.bucket[4].cumulative_count, 1u);  // le 250 µs
  EXPECT_EQ(v2->histogram.bucket[5].cumulative_count, 2u);  // le 500 µs
  EXPECT_TRUE(std::isinf(v2->histogram.bucket.back().upper_bound));
  EXPECT_EQ(v2->histogram.bucket.back().cumulative_count, 2u);
  EXPECT_EQ(v2->histogram.sample_count, 2u);
  EXPECT_DOUBLE_EQ(v2->histogram.sample_sum, 320e-6);
}

TEST_F(CollectorTest, NoPerGatewayFiguresWhileAWorkerCountsByAnotherDocument) {
  const group::Paths paths = group::pathsOf(config);
  Owned<worker::WorkerShmHeader> w0(paths.workerSegment(0), worker::kWorkerSegmentKind);
  Owned<worker::WorkerShmHeader> w1(paths.workerSegment(1), worker::kWorkerSegmentKind);
  ASSERT_TRUE(w0.shm && w1.shm);
  w0.shm->metrics.gateways[0].sessions_active.set(4);
  w0.shm->metrics.routing_hash.store(hash, std::memory_order_release);
  w1.shm->metrics.routing_hash.store(0, std::memory_order_release);  // carrying its figures over
  auto f = collect();
  EXPECT_EQ(find(f, "gtpcp_gateway_sessions"), nullptr);
  EXPECT_EQ(value(f, "gtpcp_gateway_weight", {{"gateway", "pgw1"}}), 3) << "the document's own figures stay";
  EXPECT_EQ(find(f, "gtpcp_gateway_up"), nullptr) << "no forwarder acknowledged this document";

  w1.shm->metrics.routing_hash.store(hash, std::memory_order_release);
  f = collect();
  EXPECT_EQ(value(f, "gtpcp_gateway_sessions", {{"gateway", "pgw1"}}), 4);
}

TEST_F(CollectorTest, TheTextPassesPromtool) {
  const group::Paths paths = group::pathsOf(config);
  Owned<forwarder::ForwarderShm> fwd(paths.forwarderSegment(), forwarder::kForwarderSegmentKind);
  Owned<worker::WorkerShmHeader> w0(paths.workerSegment(0), worker::kWorkerSegmentKind);
  Owned<persister::PersisterShm> per(paths.persisterSegment(), persister::kPersisterSegmentKind);
  Owned<ConsoleShm> self(paths.consoleSegment(), kConsoleSegmentKind);
  ASSERT_TRUE(fwd.shm && w0.shm && per.shm && self.shm);
  w0.shm->metrics.received[0][1][16].add(1);
  w0.shm->metrics.routing_hash.store(hash, std::memory_order_release);
  const std::string text = prometheus::TextSerializer().Serialize(collect());
  const std::string file = dir.file("metrics.txt");
  std::ofstream(file) << text;
  ASSERT_EQ(::access("/usr/bin/promtool", X_OK), 0) << "promtool (Debian's prometheus) is installed by tools/setup.sh --test";
  FILE* p = ::popen(("/usr/bin/promtool check metrics < " + file + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string lint;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) lint += buf;
  const int status = ::pclose(p);
  EXPECT_EQ(status, 0) << lint;
  EXPECT_EQ(lint, "") << lint;
  EXPECT_NE(text.find("gtpcp_messages_received_total{version=\"1\",leg=\"gateway\",type=\"create_pdp_context_request\"} 1"),
            std::string::npos)
      << text.substr(0, 2000);
}

}  // namespace
}  // namespace gtpcp::console
