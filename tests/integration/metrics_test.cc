// gtpcp-console's endpoints on a real group under emulator load: what
// /metrics says after a run agrees with the emulator's summary and with the
// workers' counters (`gtpcp status --json`): creations, the split over a
// pool's gateways, sessions, latency histograms, timeouts and rejection
// causes; /healthz, /readyz and /api/status follow the group (a drain makes
// it not ready, the thread watchdog replaces a killed console); and no label
// of a scrape names a subscriber or a TEID. Every run is bounded in count
// and time; nothing here asserts on speed.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/fixture.h"
#include "tests/support/http.h"
#include "tests/support/peer.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestGroup;

constexpr auto kPeerBound = 90s;  // every emulator run below needs well under 10 s
using Labels = std::map<std::string, std::string>;

// One sample line of the Prometheus text format: `name{labels} value`.
struct Series {
  std::string name;
  Labels labels;
  double value = 0;
};

// A parsed /metrics body.
struct Scrape {
  std::string text;
  std::vector<Series> series;
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram...
  std::vector<std::string> errors;           // lines that did not parse

  // The series of `name` whose labels include every pair of `match`.
  std::vector<const Series*> find(const std::string& name, const Labels& match = {}) const {
    std::vector<const Series*> out;
    for (const Series& s : series) {
      if (s.name != name) continue;
      bool all = true;
      for (const auto& [k, v] : match) {
        const auto it = s.labels.find(k);
        all = all && it != s.labels.end() && it->second == v;
      }
      if (all) out.push_back(&s);
    }
    return out;
  }
  // Their sum (0 when there is none).
  double sum(const std::string& name, const Labels& match = {}) const {
    double total = 0;
    for (const Series* s : find(name, match)) total += s->value;
    return total;
  }
  uint64_t count(const std::string& name, const Labels& match = {}) const {
    return static_cast<uint64_t>(std::llround(sum(name, match)));
  }
  // The value of the only series of `name` matching; nullopt when there is
  // none or more than one.
  std::optional<double> one(const std::string& name, const Labels& match = {}) const {
    const auto found = find(name, match);
    if (found.size() != 1) return std::nullopt;
    return found[0]->value;
  }
};

// Parses `text` as the Prometheus text exposition format 0.0.4: `# HELP` and
// `# TYPE` lines, then `name{l="v",...} value [timestamp]`, label values
// with \\, \" and \n escaped.
Scrape parseScrape(const std::string& text) {
  Scrape out;
  out.text = text;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, eol - at);
    at = eol + 1;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# TYPE ", 0) == 0) {
        const std::string rest = line.substr(7);
        const std::size_t space = rest.find(' ');
        if (space != std::string::npos) out.types[rest.substr(0, space)] = rest.substr(space + 1);
      }
      continue;
    }
    Series s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    bool ok = !s.name.empty();
    if (ok && i < line.size() && line[i] == '{') {
      ++i;
      while (ok && i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          ok = false;
          break;
        }
        const std::string key = line.substr(i, eq - i);
        std::string value;
        std::size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            ++j;
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        if (j >= line.size() || key.empty() || s.labels.count(key)) {
          ok = false;
          break;
        }
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') ok = false;
      ++i;
    }
    if (ok) {
      while (i < line.size() && line[i] == ' ') ++i;
      const std::size_t end = line.find(' ', i);
      const std::string value = line.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (value == "+Inf") {
        s.value = std::numeric_limits<double>::infinity();
      } else if (value == "-Inf") {
        s.value = -std::numeric_limits<double>::infinity();
      } else if (value == "NaN") {
        s.value = std::numeric_limits<double>::quiet_NaN();
      } else {
        char* stop = nullptr;
        s.value = std::strtod(value.c_str(), &stop);
        ok = !value.empty() && stop != nullptr && *stop == '\0';
      }
    }
    if (ok) {
      out.series.push_back(std::move(s));
    } else {
      out.errors.push_back(line);
    }
  }
  return out;
}

// The label names console/README.md documents ("le" is the histograms'
// bucket bound, Prometheus's own).
const std::set<std::string> kDocumentedLabels = {
    "version", "leg",   "type", "reason", "cause", "procedure", "outcome", "pool",    "gateway", "rule",
    "hash",    "worker", "ring", "mode",  "persist", "address", "result",  "process", "commit", "handling", "le"};

// What a bounded label never is: an IMSI (15 digits in a row, anywhere in the
// value), a TEID (8 hex digits, or a number past what a small index is), an
// address of the test's peers, or one of the APNs the emulator asked for
// (APNs reach labels only through a rule's or pool's name).
void expectBoundedLabels(const Scrape& scrape, const std::vector<std::string>& never_in_a_value) {
  static const std::regex kImsi(R"(\d{15})");
  static const std::regex kTeid(R"((0[xX])?[0-9a-fA-F]{8}|\d{6,})");
  std::set<std::string> unknown_names;
  uint64_t bad_values = 0;
  for (const Series& s : scrape.series) {
    EXPECT_EQ(s.name.rfind("gtpcp_", 0), 0u) << s.name << ": every name has the gtpcp_ prefix";
    for (const auto& [name, value] : s.labels) {
      if (!kDocumentedLabels.count(name)) unknown_names.insert(s.name + "{" + name + "}");
      bool bad = std::regex_search(value, kImsi);
      // The routing document's hash, the build's commit and bucket bounds
      // are long numbers by nature.
      if (name != "hash" && name != "commit" && name != "le") bad = bad || std::regex_match(value, kTeid);
      for (const std::string& word : never_in_a_value) bad = bad || value.find(word) != std::string::npos;
      if (bad && ++bad_values <= 20)
        ADD_FAILURE() << s.name << "{" << name << "=\"" << value << "\"}: an unbounded value";
    }
  }
  EXPECT_TRUE(unknown_names.empty()) << "label names console/README.md does not document: "
                                     << ::testing::PrintToString(unknown_names);
  EXPECT_EQ(bad_values, 0u);
}

// Checks histogram `name` (the one series matching `match`): buckets
// cumulative (non-decreasing as `le` grows), the last one +Inf and equal to
// _count, a _sum beside it. Returns _count (0 when it is missing).
uint64_t expectHistogram(const Scrape& scrape, const std::string& name, const Labels& match) {
  SCOPED_TRACE(name + " " + ::testing::PrintToString(match));
  const std::optional<double> count = scrape.one(name + "_count", match);
  EXPECT_TRUE(count.has_value()) << "no single " << name << "_count";
  EXPECT_TRUE(scrape.one(name + "_sum", match).has_value()) << "no single " << name << "_sum";
  EXPECT_EQ(scrape.types.count(name) ? scrape.types.at(name) : "", "histogram");
  std::vector<std::pair<double, double>> buckets;  // le, value
  for (const Series* s : scrape.find(name + "_bucket", match)) {
    const auto le = s->labels.find("le");
    if (le == s->labels.end()) {
      ADD_FAILURE() << "a bucket without le";
      continue;
    }
    const double bound = le->second == "+Inf" ? std::numeric_limits<double>::infinity()
                                              : std::strtod(le->second.c_str(), nullptr);
    buckets.emplace_back(bound, s->value);
  }
  std::sort(buckets.begin(), buckets.end());
  EXPECT_GE(buckets.size(), 2u);
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_LT(buckets[i - 1].first, buckets[i].first) << "two buckets with le " << buckets[i].first;
    EXPECT_LE(buckets[i - 1].second, buckets[i].second)
        << "le " << buckets[i - 1].first << " > le " << buckets[i].first;
  }
  if (!buckets.empty()) {
    EXPECT_TRUE(std::isinf(buckets.back().first)) << "the last bucket is le=\"+Inf\"";
    if (count) {
      EXPECT_EQ(buckets.back().second, *count) << "+Inf bucket = _count";
    }
  }
  return count ? static_cast<uint64_t>(std::llround(*count)) : 0;
}

class MetricsTest : public DataPathTest {
 protected:
  // GET `path` of the group's console: nullopt when it did not answer
  // (why in `error` when given).
  std::optional<testing::HttpResponse> get(const std::string& path, std::string* error = nullptr) {
    return testing::httpGet(group_->managementUrl() + path, 5s, error);
  }
  // /metrics parsed, its labels checked (expectBoundedLabels), the text
  // kept for a failure report.
  Scrape scrape() {
    std::string error;
    const auto r = get("/metrics", &error);
    EXPECT_TRUE(r.has_value()) << error;
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_NE(r->header("Content-Type").find("text/plain"), std::string::npos) << r->headers;
    Scrape s = parseScrape(r->body);
    EXPECT_TRUE(s.errors.empty()) << "lines that are not the text format: " << ::testing::PrintToString(s.errors);
    EXPECT_FALSE(s.series.empty());
    // Counters end in _total (a histogram's series have their suffixes).
    for (const auto& [family, type] : s.types) {
      if (type == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family << " is a counter";
      }
    }
    std::vector<std::string> never{"127." + std::to_string(net_.x) + "." + std::to_string(net_.y) + "."};
    never.insert(never.end(), apns_.begin(), apns_.end());
    expectBoundedLabels(s, never);
    last_scrape_ = s.text;
    return s;
  }
  void TearDown() override {
    if (HasFailure() && !last_scrape_.empty()) note("---- the last scrape of /metrics\n" + last_scrape_);
    DataPathTest::TearDown();
  }

  std::vector<std::string> apns_;  // the APNs the emulator runs ask for
  std::string last_scrape_;
};

// The emulator's verdict on a run that should be clean.
void expectClean(const testing::PeerResult& r) {
  EXPECT_EQ(r.status, std::optional<int>(0)) << "gtpcp-peer failed (see its summary below)";
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  EXPECT_EQ(r.value("/timeouts"), 0u);
  EXPECT_EQ(r.value("/malformed/total"), 0u);
  EXPECT_EQ(r.value("/outstanding_at_end"), 0u);
}

Labels gw(const std::string& pool, const std::string& gateway) { return {{"pool", pool}, {"gateway", gateway}}; }

// The group's status once no session is left, no transaction pending and the
// forwarder has sent whatever the workers handed it: settledStatus() for runs
// in which a request may be sent on more than once (a failover).
json quietStatus(TestGroup& g) {
  json s;
  testing::waitUntil(
      [&] {
        s = g.status();
        return s.value("sessions", 1ull) == 0 && workers(s, "worker.transactions_pending") == 0 &&
               s.at("counters").value("forwarder.datagrams_sent", 0ull) == workers(s, "worker.datagrams_sent");
      },
      5s, 20ms);
  return s;
}

TEST_F(MetricsTest, CountersOfAGroupUnderLoadMoveAsTheEmulatorSays) {
  // One pool of three PGWs with weights 3:2:1, one rule.
  const std::vector<std::tuple<std::string, uint8_t, unsigned>> pgws = {{"p1", 21, 3}, {"p2", 22, 2}, {"p3", 23, 1}};
  std::string routing = "version: 1\npools:\n  internet:\n    gateways:\n";
  for (const auto& [name, host, weight] : pgws)
    routing += "      - {name: " + name + ", address: " + ip(host) + ", weight: " + std::to_string(weight) + "}\n";
  routing += "rules:\n  - {name: default, pool: internet}\n";
  routing += kNoHealthChecks;
  TestGroup& g = startGroup(2, routing);
  ASSERT_FALSE(HasFailure());
  apns_ = {"apn-one", "apn-two"};

  constexpr uint64_t kSubscribers = 2000;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22, 23}),
                          "--subscribers", std::to_string(kSubscribers), "--apn", "apn-one,apn-two", "--modify", "1",
                          "--rate", "3000", "--duration", "20", "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  const uint64_t created = r.value("/sessions/created");
  EXPECT_EQ(created, kSubscribers);
  const json status = settledStatus(g);
  const Scrape m = scrape();

  // Transactions and messages.
  const Labels v2{{"version", "2"}};
  auto transactions = [&](const std::string& procedure, const std::string& outcome) {
    return m.count("gtpcp_transactions_total", {{"version", "2"}, {"procedure", procedure}, {"outcome", outcome}});
  };
  EXPECT_EQ(transactions("create_session", "accepted"), created);
  EXPECT_EQ(transactions("modify_bearer", "accepted"), r.value("/transactions/modify_bearer/completed"));
  EXPECT_EQ(transactions("delete_session", "accepted"), r.value("/sessions/deleted"));
  EXPECT_EQ(m.find("gtpcp_transactions_total", {{"outcome", "rejected"}}).size(), 0u);
  EXPECT_EQ(m.find("gtpcp_transactions_total", {{"outcome", "timed_out"}}).size(), 0u);
  for (const std::string procedure : {"create_session", "modify_bearer", "delete_session"}) {
    SCOPED_TRACE(procedure);
    const uint64_t attempted = r.value("/transactions/" + procedure + "/attempted");
    const uint64_t retransmitted = r.value("/transactions/" + procedure + "/retransmissions");
    const Labels access{{"version", "2"}, {"leg", "access"}, {"type", procedure + "_request"}};
    const uint64_t received = m.count("gtpcp_messages_received_total", access);
    EXPECT_GE(received, attempted) << "every request the SGWs sent (retransmissions may add)";
    EXPECT_LE(received, attempted + retransmitted);
    // Forwarded to the PGWs, answered by them, answered to the SGWs.
    const Labels gateway{{"version", "2"}, {"leg", "gateway"}, {"type", procedure + "_request"}};
    EXPECT_GE(m.count("gtpcp_messages_sent_total", gateway), attempted);
    EXPECT_GE(m.count("gtpcp_messages_received_total",
                      {{"version", "2"}, {"leg", "gateway"}, {"type", procedure + "_response"}}),
              attempted);
    EXPECT_GE(m.count("gtpcp_messages_sent_total",
                      {{"version", "2"}, {"leg", "access"}, {"type", procedure + "_response"}}),
              attempted);
  }
  EXPECT_EQ(m.count("gtpcp_creation_causes_total", {{"version", "2"}, {"cause", "request_accepted"}}), created);
  // The workers' own tables, exported as they are, say the same as status.
  EXPECT_EQ(m.count("gtpcp_worker_sessions_created_total"), workers(status, "worker.sessions_created"));
  EXPECT_EQ(m.find("gtpcp_worker_sessions_created_total").size(), 2u) << "one series per worker";
  EXPECT_EQ(m.count("gtpcp_worker_sessions_created_total"), created);

  // Per gateway: the emulator's PGWs saw what the proxy counted.
  uint64_t accepted_sum = 0;
  for (const auto& [name, host, weight] : pgws) {
    SCOPED_TRACE("gateway " + name);
    const Labels l = gw("internet", name);
    const uint64_t at_pgw = r.summary.at("pgw").at(ip(host)).value("sessions_created", 0ull);
    const uint64_t accepted = m.count("gtpcp_gateway_creations_accepted_total", l);
    EXPECT_EQ(m.find("gtpcp_gateway_creations_accepted_total", l).size(), 1u);
    EXPECT_EQ(accepted, at_pgw);
    EXPECT_EQ(m.count("gtpcp_gateway_creations_sent_total", l), at_pgw);
    EXPECT_EQ(m.count("gtpcp_gateway_creations_rejected_total", l), 0u);
    EXPECT_EQ(m.count("gtpcp_gateway_creations_timed_out_total", l), 0u);
    EXPECT_EQ(m.one("gtpcp_gateway_sessions", l), std::optional<double>(0)) << "every session deleted";
    EXPECT_EQ(m.one("gtpcp_gateway_weight", l), std::optional<double>(weight));
    // Create, modify and delete of each of its sessions went to it.
    EXPECT_GE(m.count("gtpcp_gateway_requests_sent_total", l), 3 * at_pgw);
    EXPECT_GT(expectHistogram(m, "gtpcp_gateway_response_time_seconds", l), 0u);
    // The per-gateway split of creations, within 1 % of the emulator's.
    const double proxy_share = created ? double(accepted) / double(created) : 0;
    const double peer_share = created ? double(r.value("/split/" + ip(host))) / double(created) : 0;
    EXPECT_NEAR(proxy_share, peer_share, 0.01) << accepted << " accepted, the emulator's split says "
                                               << r.value("/split/" + ip(host));
    accepted_sum += accepted;
  }
  EXPECT_EQ(accepted_sum, created);
  std::cout << "FIGURE: " << created << " creations over weights 3:2:1: "
            << m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "p1")) << " / "
            << m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "p2")) << " / "
            << m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "p3")) << "; emulator run "
            << r.summary.value("elapsed_s", 0.0) << " s; scrape of " << m.series.size() << " series, " << m.text.size()
            << " bytes" << std::endl;
  EXPECT_EQ(m.count("gtpcp_rule_sessions_total", {{"rule", "default"}, {"pool", "internet"}}), created);
  EXPECT_EQ(m.one("gtpcp_pool_gateways", {{"pool", "internet"}}), std::optional<double>(3));

  // Sessions and the proxy's own latency.
  EXPECT_EQ(m.one("gtpcp_sessions", v2), std::optional<double>(0));
  EXPECT_EQ(m.one("gtpcp_sessions", {{"version", "1"}}), std::optional<double>(0));
  const uint64_t latencies = expectHistogram(m, "gtpcp_proxy_latency_seconds", v2);
  EXPECT_GT(latencies, 0u);
  expectHistogram(m, "gtpcp_proxy_latency_seconds", {{"version", "1"}});
  EXPECT_EQ(m.count("gtpcp_transactions_open"), 0u);
  EXPECT_EQ(m.one("gtpcp_routing_info").value_or(0), 1.0);

  // A second run holds its sessions while the SGWs modify them: the gauges
  // show them, then nothing once they detached.
  constexpr uint64_t kHeld = 600;
  testing::PeerRun held({"--proxy", proxy(), "--sgw", ip(11), "--pgw", net_.list({21, 22, 23}), "--subscribers",
                         std::to_string(kHeld), "--imsi-start", "001010000500001", "--apn", "apn-one", "--mode",
                         "modify-only", "--setup-rate", "2000", "--rate", "200", "--duration", "3"},
                        g.dir().path(), "held");
  Scrape during;
  const bool seen = testing::waitUntil(
      [&] {
        during = scrape();
        return during.count("gtpcp_sessions", v2) == kHeld;
      },
      15s, 50ms);
  EXPECT_TRUE(seen) << "gtpcp_sessions{version=\"2\"} while " << kHeld
                    << " sessions are up: " << during.sum("gtpcp_sessions", v2);
  if (seen) {
    EXPECT_EQ(during.count("gtpcp_gateway_sessions"), kHeld);
    for (const auto& [name, host, weight] : pgws)
      EXPECT_GT(during.count("gtpcp_gateway_sessions", gw("internet", name)), 0u) << name;
    EXPECT_EQ(during.count("gtpcp_worker_sessions_active"), kHeld);
  }
  const testing::PeerResult h = held.wait(kPeerBound);
  note(h.describe());
  expectClean(h);
  EXPECT_EQ(h.value("/sessions/created"), kHeld);
  settledStatus(g);
  const Scrape after = scrape();
  EXPECT_EQ(after.one("gtpcp_sessions", v2), std::optional<double>(0));
  EXPECT_EQ(after.count("gtpcp_gateway_sessions"), 0u);
  EXPECT_EQ(after.count("gtpcp_rule_sessions_total", {{"rule", "default"}}), created + kHeld);
  EXPECT_GE(after.count("gtpcp_proxy_latency_seconds_count", v2), latencies);
}

// Pool internet of gateways a (the emulator's PGW) and b (nothing listens),
// equal weights, no health checks, and `failover`.
std::string silentB(const std::string& a, const std::string& b, const std::string& failover) {
  return "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: " + a +
         "}\n      - {name: b, address: " + b + "}\nrules:\n  - {name: default, pool: internet}\n" + kNoHealthChecks +
         failover;
}

TEST_F(MetricsTest, AGatewaySilentPastTheFailoverTimeoutCountsItsCreationsTimedOut) {
  TestGroup& g = startGroup(2, silentB(ip(21), ip(22), "failover: {response_timeout_ms: 200, attempts: 2}\n"));
  ASSERT_FALSE(HasFailure());

  // Half the creations go to b first, time out there after 200 ms and go to
  // a, well within the SGWs' T3: the SGWs see no timeout.
  constexpr uint64_t kSubscribers = 200;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--pgw", ip(21), "--subscribers",
                          std::to_string(kSubscribers), "--modify", "1", "--rate", "500", "--duration", "20",
                          "--cycles", "1", "--t3-ms", "2000", "--n3", "2"},
                         kPeerBound);
  expectClean(r);
  EXPECT_EQ(r.value("/sessions/created"), kSubscribers);
  const json s = quietStatus(g);
  const Scrape m = scrape();

  const uint64_t timed_out = workers(s, "worker.creations_timed_out");
  EXPECT_GT(timed_out, 0u) << "weights 1:1: about half went to b first";
  std::cout << "FIGURE: " << timed_out << " of " << kSubscribers
            << " creations timed out at b and failed over; emulator run " << r.summary.value("elapsed_s", 0.0) << " s"
            << std::endl;
  EXPECT_EQ(workers(s, "worker.creations_failed_over"), timed_out);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_timed_out_total", gw("internet", "b")), timed_out);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_sent_total", gw("internet", "b")), timed_out);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "b")), 0u);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_timed_out_total", gw("internet", "a")), 0u);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "a")), kSubscribers);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "a")),
            r.summary.at("pgw").at(ip(21)).value("sessions_created", 0ull));
  // Sent to a: its own share and every failover.
  EXPECT_EQ(m.count("gtpcp_gateway_creations_sent_total", gw("internet", "a")), kSubscribers);
  // b never answered anything: no response time; a answered every creation.
  EXPECT_EQ(expectHistogram(m, "gtpcp_gateway_response_time_seconds", gw("internet", "b")), 0u);
  EXPECT_GT(expectHistogram(m, "gtpcp_gateway_response_time_seconds", gw("internet", "a")), 0u);
  // The transactions themselves were answered (by a): none timed out.
  EXPECT_EQ(m.count("gtpcp_transactions_total", {{"outcome", "timed_out"}}), 0u);
  EXPECT_EQ(workers(s, "worker.transactions_expired"), 0u);
  EXPECT_EQ(m.count("gtpcp_transactions_total", {{"procedure", "create_session"}, {"outcome", "accepted"}}),
            kSubscribers);
  EXPECT_EQ(m.count("gtpcp_worker_creations_timed_out_total"), timed_out);
  EXPECT_EQ(m.count("gtpcp_worker_creations_failed_over_total"), timed_out);
}

TEST_F(MetricsTest, CreationsNoGatewayAnswersAreTimedOutTransactions) {
  // No failover on silence: a creation sent to b waits out the proxy's
  // transaction lifetime (T3 x (N3 + 1) = 1.2 s), longer than the SGWs wait
  // for it (T3 200 ms, one retransmission), so each such subscriber times out
  // once on both sides and its retransmission joins the pending transaction.
  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = silentB(ip(21), ip(22), "failover: {response_timeout_ms: 0}\n");
  o.t3_ms = 600;
  o.n3 = 1;
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());

  constexpr uint64_t kSubscribers = 200;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", ip(11), "--pgw", ip(21), "--subscribers",
                          std::to_string(kSubscribers), "--modify", "1", "--rate", "500", "--duration", "4",
                          "--cycles", "1", "--t3-ms", "200", "--n3", "1"},
                         kPeerBound);
  EXPECT_EQ(r.status, std::optional<int>(1)) << "timeouts make the emulator's status 1";
  EXPECT_EQ(r.value("/mismatches/total"), 0u);
  const uint64_t peer_timeouts = r.value("/transactions/create_session/timeouts");
  EXPECT_GT(peer_timeouts, 0u) << "about half the creations went to b";
  std::cout << "FIGURE: " << peer_timeouts << " of " << kSubscribers << " creations timed out; emulator run "
            << r.summary.value("elapsed_s", 0.0) << " s" << std::endl;
  EXPECT_EQ(r.value("/timeouts"), peer_timeouts) << "only creations timed out";
  EXPECT_EQ(r.value("/sessions/created") + peer_timeouts, kSubscribers);

  // Every transaction to b expires in the proxy too (noticed within 1.25
  // lifetimes), its session with it.
  json s;
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        s = g.status();
        return workers(s, "worker.transactions_expired") >= peer_timeouts && s.value("sessions", 1ull) == 0;
      },
      10s, 50ms))
      << s.dump(1);
  s = settledStatus(g);
  const Scrape m = scrape();
  EXPECT_EQ(workers(s, "worker.transactions_expired"), peer_timeouts);
  EXPECT_EQ(workers(s, "worker.sessions_expired"), peer_timeouts);
  EXPECT_EQ(m.count("gtpcp_transactions_total",
                    {{"version", "2"}, {"procedure", "create_session"}, {"outcome", "timed_out"}}),
            peer_timeouts);
  EXPECT_EQ(m.count("gtpcp_transactions_total", {{"outcome", "timed_out"}}), peer_timeouts) << "no other procedure";
  EXPECT_EQ(m.count("gtpcp_gateway_creations_timed_out_total", gw("internet", "b")), peer_timeouts);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_sent_total", gw("internet", "b")), peer_timeouts);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_timed_out_total", gw("internet", "a")), 0u);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", gw("internet", "a")), r.value("/sessions/created"));
  EXPECT_EQ(m.count("gtpcp_transactions_total", {{"procedure", "create_session"}, {"outcome", "accepted"}}),
            r.value("/sessions/created"));
  EXPECT_EQ(m.count("gtpcp_worker_transactions_expired_total"), peer_timeouts);
  EXPECT_EQ(m.count("gtpcp_gateway_sessions"), 0u);
  EXPECT_EQ(m.one("gtpcp_sessions", {{"version", "2"}}), std::optional<double>(0));
  // The SGWs' retransmissions of those creations reached the proxy and were
  // sent on to b while pending.
  EXPECT_EQ(m.count("gtpcp_transactions_retransmitted_total"), workers(s, "worker.requests_retransmitted"));
  EXPECT_GE(m.count("gtpcp_transactions_retransmitted_total"), peer_timeouts);
  // By procedure: every one a creation, sent on.
  EXPECT_EQ(m.count("gtpcp_retransmissions_total",
                    {{"version", "2"}, {"procedure", "create_session"}, {"handling", "sent_on"}}),
            workers(s, "worker.requests_retransmitted"));
  EXPECT_EQ(m.count("gtpcp_retransmissions_total", {{"handling", "replayed"}}), 0u);
}

TEST_F(MetricsTest, RejectionsOfAPgwAreCountedByCause) {
  TestGroup& g = startGroup(2, "version: 1\npools:\n  internet:\n    gateways:\n      - {name: open, address: " +
                                   ip(21) + "}\n  barred:\n    gateways:\n      - {name: closed, address: " + ip(22) +
                                   "}\nrules:\n  - {name: barred, match: {apn: [barred]}, pool: barred}\n"
                                   "  - {name: default, pool: internet}\n" + kNoHealthChecks);
  ASSERT_FALSE(HasFailure());
  // "barred" is the rule's and pool's name too: it may be a label value.
  apns_ = {"apn-open"};

  // Every second subscriber asks for APN "barred", whose PGW rejects every
  // creation with 94 (Request rejected, reason not specified).
  constexpr uint64_t kSubscribers = 600;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22}),
                          "--subscribers", std::to_string(kSubscribers), "--apn", "apn-open,barred", "--modify", "1",
                          "--pgw-cause", ip(22) + "=94", "--rate", "2000", "--duration", "20", "--cycles", "1"},
                         kPeerBound);
  expectClean(r);
  const uint64_t rejected = r.value("/causes/94");
  EXPECT_EQ(rejected, kSubscribers / 2);
  EXPECT_EQ(r.summary.at("pgw").at(ip(22)).value("sessions_rejected", 0ull), rejected);
  const json s = settledStatus(g);
  const Scrape m = scrape();

  const std::string cause = "request_rejected_reason_not_specified";  // 94, named as TS 29.274 Table 8.4-1 does
  const Labels closed = gw("barred", "closed"), open = gw("internet", "open");
  EXPECT_EQ(m.count("gtpcp_gateway_creation_rejections_total",
                    {{"pool", "barred"}, {"gateway", "closed"}, {"cause", cause}}),
            rejected);
  EXPECT_EQ(m.find("gtpcp_gateway_creation_rejections_total").size(), 1u) << "one cause of one gateway";
  EXPECT_EQ(m.count("gtpcp_gateway_creations_rejected_total", closed), rejected);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_sent_total", closed), rejected);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", closed), 0u);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_rejected_total", open), 0u);
  EXPECT_EQ(m.count("gtpcp_gateway_creations_accepted_total", open), kSubscribers - rejected);
  EXPECT_GT(expectHistogram(m, "gtpcp_gateway_response_time_seconds", closed), 0u) << "rejections are answers";
  EXPECT_EQ(m.count("gtpcp_creation_causes_total", {{"version", "2"}, {"cause", cause}}), rejected);
  EXPECT_EQ(m.count("gtpcp_creation_causes_total", {{"version", "2"}, {"cause", "request_accepted"}}),
            kSubscribers - rejected);
  EXPECT_EQ(m.find("gtpcp_creation_causes_total").size(), 2u);
  const Labels creations{{"version", "2"}, {"procedure", "create_session"}};
  auto outcome = [&](const std::string& o) {
    Labels l = creations;
    l["outcome"] = o;
    return m.count("gtpcp_transactions_total", l);
  };
  EXPECT_EQ(outcome("rejected"), rejected);
  EXPECT_EQ(outcome("accepted"), kSubscribers - rejected);
  // Sessions created through a rule: the barred rule created none.
  EXPECT_EQ(m.count("gtpcp_rule_sessions_total", {{"rule", "barred"}, {"pool", "barred"}}), 0u);
  EXPECT_EQ(m.count("gtpcp_rule_sessions_total", {{"rule", "default"}, {"pool", "internet"}}), kSubscribers - rejected);
  EXPECT_EQ(m.count("gtpcp_worker_sessions_rejected_total"), workers(s, "worker.sessions_rejected"));
  EXPECT_EQ(workers(s, "worker.sessions_rejected"), rejected);
  // The proxy refused nothing itself.
  EXPECT_EQ(m.find("gtpcp_refusals_total").size(), 0u) << "causes the proxy answered with itself";
}

// The names of the processes in a status JSON, with their pids.
std::map<std::string, int> processesOf(const json& status) {
  std::map<std::string, int> out;
  for (const json& p : status.at("processes"))
    out[p.at("name").get<std::string>()] = p.contains("pid") && p.at("pid").is_number() ? p.at("pid").get<int>() : 0;
  return out;
}

TEST_F(MetricsTest, ProbesFollowTheGroupAndTheWatchdogReplacesAKilledConsole) {
  TestGroup& g = startGroup(2, onlyGateway(ip(21), kNoHealthChecks));
  ASSERT_FALSE(HasFailure());
  std::string error;

  // Liveness, readiness, an unknown path.
  auto health = get("/healthz", &error);
  ASSERT_TRUE(health.has_value()) << error;
  EXPECT_EQ(health->status, 200) << health->body;
  std::optional<testing::HttpResponse> ready;
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        ready = get("/readyz");
        return ready && ready->status == 200;
      },
      5s, 50ms))
      << (ready ? std::to_string(ready->status) + " " + ready->body : "no answer");
  const auto missing = get("/no-such-page");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);

  // /api/status is what `gtpcp status --json` prints: the same processes,
  // by the same pids, the console among them.
  const json status = g.status();
  const auto api = get("/api/status", &error);
  ASSERT_TRUE(api.has_value()) << error;
  EXPECT_EQ(api->status, 200);
  EXPECT_NE(api->header("Content-Type").find("application/json"), std::string::npos) << api->headers;
  const json api_status = json::parse(api->body, nullptr, false);
  ASSERT_FALSE(api_status.is_discarded()) << api->body;
  ASSERT_TRUE(api_status.contains("processes")) << api->body;
  const std::map<std::string, int> processes = processesOf(status);
  EXPECT_EQ(processesOf(api_status), processes)
      << "/api/status:\n" << api->body << "\ngtpcp status --json:\n" << status.dump(1);
  ASSERT_TRUE(processes.count("console")) << status.dump(1);
  EXPECT_EQ(TestGroup::process(status, "console").value("state", ""), "serving");
  const auto text = g.gtpcp({"status"});
  EXPECT_NE(text.text.find("console"), std::string::npos) << text.text;

  // Every process up in the metrics too, by the same names.
  const Scrape m = scrape();
  std::set<std::string> up;
  for (const Series* s : m.find("gtpcp_process_up")) {
    EXPECT_EQ(s->value, 1) << s->labels.at("process");
    up.insert(s->labels.at("process"));
  }
  std::set<std::string> names;
  for (const auto& [name, pid] : processes) names.insert(name);
  EXPECT_EQ(up, names);
  EXPECT_EQ(m.count("gtpcp_process_restarts_total"), 0u);
  EXPECT_EQ(m.find("gtpcp_build_info").size(), 1u);

  // Draining: not ready, and saying why; ready again once it is off.
  const auto drain = g.gtpcp({"drain"});
  note(drain.text);
  EXPECT_EQ(drain.status, 0) << drain.text;
  ready = get("/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 503) << ready->body;
  EXPECT_NE(ready->body.find("draining"), std::string::npos) << ready->body;
  EXPECT_EQ(get("/healthz").value_or(testing::HttpResponse{}).status, 200) << "alive while not ready";
  EXPECT_EQ(g.gtpcp({"drain", "--off"}).status, 0);
  ready = get("/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;

  // The console killed: the thread watchdog starts another, which serves.
  const int before = processes.at("console");
  ASSERT_GT(before, 0);
  const uint64_t starts = TestGroup::process(status, "console").value("starts", 0ull);
  ASSERT_EQ(::kill(before, SIGKILL), 0);
  json s;
  std::optional<testing::HttpResponse> replaced;
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        s = g.status();
        const json p = TestGroup::process(s, "console");
        if (p.value("state", "") != "serving" || p.value("starts", 0ull) <= starts || !p.contains("pid") ||
            !p["pid"].is_number() || p["pid"].get<int>() == before)
          return false;
        replaced = get("/healthz");
        return replaced && replaced->status == 200 && s.contains("watchdog") &&
               s["watchdog"]["console"].value("restarts", 0ull) >= 1;
      },
      15s, 20ms))
      << s.dump(1);
  note("console " + std::to_string(before) + " replaced by " + std::to_string(g.pidOf("console")));
  EXPECT_EQ(s["watchdog"]["console"].value("last_failure", ""), "exited");
  // The new one counts the replacement, and the group is ready again.
  const Scrape after = scrape();
  EXPECT_EQ(after.count("gtpcp_process_restarts_total", {{"process", "console"}}), 1u);
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        ready = get("/readyz");
        return ready && ready->status == 200;
      },
      5s, 50ms))
      << (ready ? ready->body : "no answer");
}

}  // namespace
}  // namespace gtpcp::integration
