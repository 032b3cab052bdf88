// The operator's monitoring kit in deploy/, proven against real programs:
// every query of every panel of the Grafana dashboards (deploy/grafana/*.json)
// run through a real Prometheus (Debian's prometheus) that scrapes the
// gtpcp-console of a group under emulator load, and the scrape example
// (deploy/prometheus/prometheus.yml) checked by promtool. Grafana itself is
// not packaged here: a third test checks the dashboards' structure (data
// source inputs and variables, a target on every panel) as Grafana's import
// needs it.
//
// The load makes every panel's series exist: GTPv2 and GTPv1 sessions
// created, modified and deleted, a PGW rejecting every creation (cause 94),
// a PGW losing a fifth of its requests (timeouts), a pool whose only gateway
// never answers (down, and the proxy's own refusals), Redis through the
// embedded storage.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/fixture.h"
#include "tests/support/http.h"
#include "tests/support/peer.h"
#include "tests/support/process.h"
#include "tests/support/redis.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string kSourceDir = GTPCP_SOURCE_DIR;
const std::string kDashboardDir = kSourceDir + "/deploy/grafana";
const std::string kScrapeExample = kSourceDir + "/deploy/prometheus/prometheus.yml";
// The dashboards shipped; the test fails when one is missing or another
// appears unchecked.
const std::vector<std::string> kDashboards = {"gtpcp-gateways.json", "gtpcp-overview.json", "gtpcp-storage.json",
                                              "gtpcp-supervision.json"};

struct Dashboard {
  std::string file;  // name in deploy/grafana
  json doc;
};

// Every *.json of deploy/grafana, parsed (a file that does not parse fails
// the test and is left out), sorted by name.
std::vector<Dashboard> loadDashboards() {
  std::vector<Dashboard> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kDashboardDir, ec)) {
    if (e.path().extension() != ".json") continue;
    Dashboard d{e.path().filename().string(), json::parse(testing::readFile(e.path().string()), nullptr, false)};
    if (d.doc.is_discarded() || !d.doc.is_object()) {
      ADD_FAILURE() << e.path() << " is not a JSON object";
      continue;
    }
    out.push_back(std::move(d));
  }
  EXPECT_FALSE(ec) << kDashboardDir << ": " << ec.message();
  std::sort(out.begin(), out.end(), [](const Dashboard& a, const Dashboard& b) { return a.file < b.file; });
  return out;
}

// The panels that query (rows left out, the panels of collapsed rows in).
std::vector<json> queryPanels(const json& dashboard) {
  std::vector<json> out;
  for (const json& p : dashboard.value("panels", json::array())) {
    if (p.value("type", "") == "row") {
      for (const json& inner : p.value("panels", json::array())) out.push_back(inner);
    } else {
      out.push_back(p);
    }
  }
  return out;
}

// The names of the dashboard's template variables.
std::set<std::string> variableNames(const json& dashboard) {
  std::set<std::string> names;
  for (const json& v : dashboard.at("templating").value("list", json::array())) names.insert(v.value("name", ""));
  return names;
}

// `expr` as Grafana would send it with every variable on "All": the range
// variables get windows holding several of the test's 1 s scrapes, the
// template variables (used with =~) match anything. A name that is neither
// is left as it is ($name or ${name}), for the caller to report.
std::string forPrometheus(const std::string& expr, const std::set<std::string>& variables) {
  static const std::regex kVariable(R"(\$\{(\w+)(?::\w+)?\}|\$(\w+))");
  static const std::map<std::string, std::string> kBuiltIn = {
      {"__rate_interval", "1m"}, {"__interval", "15s"}, {"__range", "1m"}};
  std::string out;
  auto at = expr.cbegin();
  for (std::sregex_iterator m(expr.begin(), expr.end(), kVariable), end; m != end; ++m) {
    const std::string name = (*m)[1].matched ? (*m)[1].str() : (*m)[2].str();
    out.append(at, (*m)[0].first);
    if (const auto b = kBuiltIn.find(name); b != kBuiltIn.end()) {
      out += b->second;
    } else if (variables.count(name)) {
      out += ".*";
    } else {
      out += (*m)[0].str();
    }
    at = (*m)[0].second;
  }
  out.append(at, expr.cend());
  return out;
}

// Whether a Prometheus sample value is a number a panel can show.
bool finite(const json& value_pair) {
  if (!value_pair.is_array() || value_pair.size() != 2 || !value_pair[1].is_string()) return false;
  const double v = std::strtod(value_pair[1].get<std::string>().c_str(), nullptr);
  return std::isfinite(v);
}

// A Prometheus server of the test's own: its configuration, data and log in
// `dir`, listening on a free port of 127.0.0.1, stopped by its PID when the
// object goes away.
class Prometheus {
 public:
  Prometheus(const std::string& dir, const std::string& config_yaml) : port_(testing::freeTcpPort()) {
    std::filesystem::create_directories(dir + "/data");
    const std::string config = dir + "/prometheus.yml";
    testing::writeFile(config, config_yaml);
    log_ = dir + "/prometheus.log";
    child_ = testing::Child::spawn({testing::findOnPath("prometheus"), "--config.file=" + config,
                                    "--storage.tsdb.path=" + dir + "/data",
                                    "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
                                   log_);
  }
  ~Prometheus() { stop(); }

  // SIGTERM (SIGKILL after 5 s); the exit status.
  int stop() { return child_.pid() > 0 && child_.running() ? child_.stop(5000ms) : 0; }
  bool running() { return child_.running(); }
  std::string log() const { return testing::tailFile(log_, 30); }

  // An instant query at now: the API's JSON answer, or {"status": "error",
  // "error": why} when there is none.
  json query(const std::string& expr) {
    std::string error;
    const auto r = testing::httpGet(
        "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/query?query=" + testing::urlEncode(expr), 10s, &error);
    if (!r) return {{"status", "error"}, {"error", "no answer: " + error}};
    json answer = json::parse(r->body, nullptr, false);
    if (answer.is_discarded() || !answer.is_object())
      return {{"status", "error"}, {"error", "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200)}};
    return answer;
  }
  // The series of an instant query that succeeded; empty otherwise (`error`
  // says why when the query failed).
  json series(const std::string& expr, std::string* error = nullptr) {
    const json a = query(expr);
    if (a.value("status", "") != "success") {
      if (error) *error = a.value("errorType", "") + ": " + a.value("error", a.dump());
      return json::array();
    }
    const json& data = a.at("data");
    if (data.value("resultType", "") == "scalar")
      return json::array({{{"metric", json::object()}, {"value", data.at("result")}}});
    return data.value("result", json::array());
  }

 private:
  uint16_t port_;
  std::string log_;
  testing::Child child_;
};

// Dashboard JSON as Grafana's import takes it: a data source input and
// variable, a query on every panel, units, unique ids.
TEST(DashboardsTest, EveryDashboardImportsWithADataSourceInputAndEveryPanelHasATarget) {
  const std::vector<Dashboard> dashboards = loadDashboards();
  std::vector<std::string> files;
  for (const auto& d : dashboards) files.push_back(d.file);
  EXPECT_EQ(files, kDashboards) << "the dashboards of " << kDashboardDir;

  std::set<std::string> uids;
  for (const Dashboard& d : dashboards) {
    SCOPED_TRACE(d.file);
    const json& doc = d.doc;
    EXPECT_GE(doc.value("schemaVersion", 0), 37);
    EXPECT_FALSE(doc.value("title", "").empty());
    EXPECT_TRUE(uids.insert(doc.value("uid", "")).second) << "uid " << doc.value("uid", "") << " taken twice";
    EXPECT_TRUE(doc.contains("id") && doc.at("id").is_null()) << "an imported dashboard gets its id from Grafana";

    // Import asks for DS_PROMETHEUS; it becomes the datasource variable's
    // default, which every panel uses.
    ASSERT_TRUE(doc.contains("__inputs") && doc.at("__inputs").is_array());
    bool input = false;
    for (const json& i : doc.at("__inputs"))
      input = input || (i.value("name", "") == "DS_PROMETHEUS" && i.value("type", "") == "datasource" &&
                        i.value("pluginId", "") == "prometheus");
    EXPECT_TRUE(input) << "an __inputs entry DS_PROMETHEUS of plugin prometheus";
    ASSERT_TRUE(doc.contains("templating") && doc.at("templating").contains("list"));
    bool datasource_variable = false;
    std::set<std::string> variables;
    for (const json& v : doc.at("templating").at("list")) {
      EXPECT_TRUE(variables.insert(v.value("name", "")).second) << "variable " << v.value("name", "") << " twice";
      if (v.value("type", "") == "datasource") {
        datasource_variable = v.value("name", "") == "datasource" && v.value("query", "") == "prometheus";
        EXPECT_EQ(v.at("current").value("value", ""), "${DS_PROMETHEUS}") << "import sets the default";
      }
      if (v.value("type", "") == "query") {
        EXPECT_EQ(v.value("datasource", json::object()).value("uid", ""), "${datasource}") << v.value("name", "");
        EXPECT_EQ(v.value("allValue", ""), ".*") << v.value("name", "") << ": All matches a missing label too";
      }
    }
    EXPECT_TRUE(datasource_variable) << "a variable `datasource` of type datasource, query prometheus";
    for (const char* name : {"job", "group", "instance"}) EXPECT_TRUE(variables.count(name)) << "variable " << name;

    std::set<int> ids;
    std::set<std::string> titles;  // failures name panels by title
    const std::vector<json> panels = queryPanels(doc);
    EXPECT_GE(panels.size(), 5u);
    for (const json& row : doc.at("panels")) {
      if (row.value("type", "") == "row") {
        EXPECT_TRUE(ids.insert(row.value("id", -1)).second) << row.dump();
      }
    }
    for (const json& p : panels) {
      const std::string title = p.value("title", "");
      SCOPED_TRACE("panel \"" + title + "\"");
      EXPECT_FALSE(title.empty());
      EXPECT_TRUE(titles.insert(title).second) << "title taken twice";
      EXPECT_TRUE(ids.insert(p.value("id", -1)).second) << "id taken twice";
      EXPECT_TRUE(p.contains("gridPos"));
      const json ds = p.value("datasource", json::object());
      EXPECT_EQ(ds.value("type", ""), "prometheus");
      EXPECT_EQ(ds.value("uid", ""), "${datasource}");
      const std::string type = p.value("type", "");
      if (type != "table" && type != "state-timeline") {
        EXPECT_FALSE(p.value("fieldConfig", json::object()).value("defaults", json::object()).value("unit", "").empty())
            << "a unit";
      }
      const json targets = p.value("targets", json::array());
      EXPECT_FALSE(targets.empty()) << "no target";
      std::set<std::string> refs;
      for (const json& t : targets) {
        EXPECT_FALSE(t.value("expr", "").empty()) << t.dump();
        EXPECT_TRUE(refs.insert(t.value("refId", "")).second) << "refId " << t.value("refId", "") << " twice";
        EXPECT_EQ(t.value("datasource", ds), ds) << "the target's data source is the panel's";
      }
    }
  }
}

TEST(DashboardsTest, PromtoolAcceptsTheScrapeExample) {
  const std::string promtool = testing::findOnPath("promtool");
  ASSERT_FALSE(promtool.empty()) << "promtool is not installed (tools/setup.sh --test installs prometheus)";
  const auto out = testing::run({promtool, "check", "config", kScrapeExample}, 30s);
  ASSERT_TRUE(out.has_value()) << "promtool did not finish";
  EXPECT_EQ(out->status, 0) << out->text;
}

class DashboardsUnderLoadTest : public DataPathTest {};

// SGW .11, SGSN .12; pools internet (pgw1 .21 accepts, weight 3; pgw2 .22
// rejects every creation; pgw3 .23 loses a fifth of its requests), spare (.25,
// nothing behind it: down, its creations refused by the proxy), gn (GTPv1,
// GGSN .24).
TEST_F(DashboardsUnderLoadTest, EveryPanelQueryHasSeriesInARealPrometheusScrapingAGroupUnderLoad) {
  const std::string prometheus_path = testing::findOnPath("prometheus");
  ASSERT_FALSE(prometheus_path.empty()) << "prometheus is not installed (tools/setup.sh --test installs it)";
  const std::vector<Dashboard> dashboards = loadDashboards();
  ASSERT_FALSE(dashboards.empty());

  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = "version: 1\npools:\n  internet:\n    gateways:\n"
                   "      - {name: pgw1, address: " + ip(21) + ", weight: 3}\n"
                   "      - {name: pgw2, address: " + ip(22) + "}\n"
                   "      - {name: pgw3, address: " + ip(23) + "}\n"
                   "  spare:\n    gateways:\n      - {name: dead, address: " + ip(25) + "}\n"
                   "  gn:\n    gtp_version: 1\n    gateways:\n      - {name: ggsn1, address: " + ip(24) + "}\n"
                   "rules:\n  - {name: gn, pool: gn}\n  - {name: spare, match: {apn: [spare]}, pool: spare}\n"
                   "  - {name: s5, pool: internet}\n"
                   "health_check: {interval_ms: 200, misses: 3}\n"
                   // Rejections and timeouts reach the SGW as they are.
                   "failover: {response_timeout_ms: 0, attempts: 1}\n";
  o.t3_ms = 300;
  o.n3 = 1;
  o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(testing::freeTcpPort()) + "\n";
  testing::TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());

  // Load for longer than the test needs; stopped (SIGTERM) once the queries ran.
  const std::string dir = g.dir().path();
  testing::PeerRun v2({"--sgw", ip(11), "--pgw", net_.list({21, 22, 23}), "--proxy", proxy(), "--subscribers", "400",
                       "--rate", "400", "--duration", "60", "--apn", "internet", "--apn", "internet", "--apn",
                       "internet", "--apn", "spare", "--pgw-cause", ip(22) + "=94", "--pgw-drop", ip(23) + "=0.2",
                       "--expect-cause", "73", "--expect-cause", "100", "--t3-ms", "300", "--n3", "1"},
                      dir, "v2");
  testing::PeerRun v1({"--sgsn", ip(12), "--ggsn", ip(24), "--proxy", proxy(), "--subscribers", "200",
                       "--rate", "200", "--duration", "60"},
                      dir, "v1");

  const std::string console = g.managementUrl().substr(std::string("http://").size());
  Prometheus prom(dir + "/prometheus",
                  "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
                  "scrape_configs:\n"
                  "  - job_name: gtpcp\n"
                  "    static_configs:\n"
                  "      - targets: [\"" + console + "\"]\n"
                  "        labels: {group: " + g.group() + ", instance: a}\n");

  // The first scrape lands about 6 s after the start; rate() wants two
  // samples in its window: wait for three.
  json up;
  const bool scraped = testing::waitUntil(
      [&] {
        up = prom.series("count_over_time(up{job=\"gtpcp\"}[1m]) >= 3 and on () up{job=\"gtpcp\"} == 1");
        return !up.empty() || !prom.running();
      },
      20s, 200ms);
  ASSERT_TRUE(scraped && prom.running()) << "Prometheus has not scraped " << console
                                         << " three times in 20 s; its log:\n" << prom.log();
  EXPECT_TRUE(v2.running() && v1.running()) << "the load stopped before the queries";

  unsigned queries = 0;
  for (const Dashboard& d : dashboards) {
    const std::set<std::string> variables = variableNames(d.doc);
    // The panels, then the query variables: label_values(SELECTOR, LABEL)
    // runs as count by (LABEL) (SELECTOR) and must give the label a value.
    std::vector<std::tuple<std::string, std::string, std::string>> checks;  // where, expression, label
    for (const json& p : queryPanels(d.doc))
      for (const json& t : p.value("targets", json::array()))
        checks.emplace_back("panel \"" + p.value("title", "") + "\" target " + t.value("refId", ""),
                            t.value("expr", ""), "");
    static const std::regex kLabelValues(R"(^label_values\((.+),\s*(\w+)\)$)");
    for (const json& v : d.doc.at("templating").value("list", json::array())) {
      if (v.value("type", "") != "query") continue;
      const std::string q = v.value("query", json::object()).value("query", v.value("definition", ""));
      std::smatch m;
      if (!std::regex_match(q, m, kLabelValues)) {
        ADD_FAILURE() << d.file << ": variable " << v.value("name", "") << ": not label_values(...): " << q;
        continue;
      }
      checks.emplace_back("variable " + v.value("name", ""), "count by (" + m[2].str() + ") (" + m[1].str() + ")",
                          m[2].str());
    }
    for (const auto& [where, expr, label] : checks) {
      ++queries;
      const std::string sent = forPrometheus(expr, variables);
      if (sent.find('$') != std::string::npos) {
        ADD_FAILURE() << d.file << ", " << where << ": a variable the dashboard does not define: " << expr;
        continue;
      }
      std::string error;
      const json series = prom.series(sent, &error);
      const bool shown = std::any_of(series.begin(), series.end(), [&](const json& s) {
        return finite(s.value("value", json())) &&
               (label.empty() || !s.value("metric", json::object()).value(label, "").empty());
      });
      if (!error.empty()) {
        ADD_FAILURE() << d.file << ", " << where << ": the query fails: " << error << "\n  " << sent;
      } else if (series.empty()) {
        ADD_FAILURE() << d.file << ", " << where << ": no series\n  " << sent;
      } else if (!shown) {
        ADD_FAILURE() << d.file << ", " << where << ": no series with a number"
                      << (label.empty() ? "" : " and label " + label) << ": " << series.dump() << "\n  " << sent;
      }
    }
  }
  EXPECT_GT(queries, 90u) << "queries run";
  note("queries run: " + std::to_string(queries));

  EXPECT_EQ(prom.stop(), 0) << "Prometheus ends cleanly on SIGTERM; its log:\n" << prom.log();
  ::kill(v2.pid(), SIGTERM);
  ::kill(v1.pid(), SIGTERM);
  const testing::PeerResult r2 = v2.wait(15s), r1 = v1.wait(15s);
  note(r2.describe());
  note(r1.describe());
  EXPECT_TRUE(r2.status.has_value() && r1.status.has_value()) << "the emulators end on SIGTERM";
  EXPECT_GT(r2.value("/pgw/" + ip(22) + "/sessions_rejected"), 0u) << "pgw2 rejected creations";
  EXPECT_GT(r2.value("/transactions/create_session/timeouts"), 0u) << "pgw3 lost creations";
}

}  // namespace
}  // namespace gtpcp::integration
