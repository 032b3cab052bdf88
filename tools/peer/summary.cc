#include "tools/peer/summary.h"

#include <cstdio>
#include <numeric>
#include <sstream>
#include <utility>

namespace gtpcp::peer {

namespace {

template <std::size_t N>
uint64_t sum(const std::array<uint64_t, N>& a) {
  return std::accumulate(a.begin(), a.end(), uint64_t{0});
}

double ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// The names of a version's transaction kinds: Txn (SGWs, PGWs), V1Txn
// (SGSNs, GGSNs).
std::string txnLabel(const SgwStats&, std::size_t t) {
  return std::string(txnName(static_cast<Txn>(t)));
}
std::string txnLabel(const SgsnStats&, std::size_t t) {
  return std::string(txnName(static_cast<V1Txn>(t)));
}
std::string requestLabel(const PgwNodeStats&, std::size_t t) {
  return std::string(txnName(static_cast<Txn>(t)));
}
std::string requestLabel(const GgsnNodeStats&, std::size_t t) {
  return std::string(txnName(static_cast<V1Txn>(t)));
}

nlohmann::json latencyJson(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"p50", ms(h.percentile(0.50))},
          {"p99", ms(h.percentile(0.99))},
          {"p99_9", ms(h.percentile(0.999))},
          {"max", ms(h.max())},
          {"mean", h.mean() / 1e6}};
}

template <std::size_t N>
LatencyHistogram allLatency(const TransactionStats<N>& s) {
  LatencyHistogram all;
  for (const auto& h : s.latency) all.merge(h);
  return all;
}

// {"cause value": count} for the values seen.
nlohmann::json byCause(const std::array<uint64_t, 256>& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0) j[std::to_string(i)] = counts[i];
  return j;
}

// The gateways' procedure counters, all gateways together.
template <class NodeStats>
ProcedureTable gatewayProcedures(const std::vector<NodeStats>& nodes) {
  ProcedureTable t{};
  for (const NodeStats& p : nodes) {
    for (std::size_t i = 0; i < kProcedureCount; ++i) {
      t[i].started += p.procedures[i].started;
      t[i].completed += p.procedures[i].completed;
      t[i].retransmissions += p.procedures[i].retransmissions;
      t[i].timeouts += p.procedures[i].timeouts;
      t[i].mismatches += p.procedures[i].mismatches;
    }
  }
  return t;
}

// The SGWs' procedure counters; those they start are transactions, counted
// as such.
ProcedureTable accessProcedures(const SgwStats& s) {
  ProcedureTable t = s.procedures;
  const std::pair<Procedure, Txn> started[] = {
      {Procedure::kModifyBearerCommand, Txn::kModifyBearerCommand},
      {Procedure::kUnknownTeid, Txn::kUnknownTeid}};
  for (const auto& [p, txn] : started) {
    ProcedureCounters& c = t[static_cast<std::size_t>(p)];
    const auto i = static_cast<std::size_t>(txn);
    c.started = s.attempted[i];
    c.completed = s.completed[i];
    c.retransmissions = s.retransmissions[i];
    c.timeouts = s.timeouts[i];
  }
  return t;
}
// The SGSNs start none of the procedures: they answer them all.
ProcedureTable accessProcedures(const SgsnStats& s) { return s.procedures; }

nlohmann::json proceduresJson(const ProcedureTable& t, int version) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < kProcedureCount; ++i) {
    if (procedureVersion(static_cast<Procedure>(i)) != version) continue;
    j[std::string(procedureName(static_cast<Procedure>(i)))] = {
        {"started", t[i].started},
        {"completed", t[i].completed},
        {"retransmissions", t[i].retransmissions},
        {"timeouts", t[i].timeouts},
        {"mismatches", t[i].mismatches}};
  }
  return j;
}

void printProcedures(const char* role, const ProcedureTable& t, std::ostream& out) {
  for (std::size_t i = 0; i < kProcedureCount; ++i) {
    const ProcedureCounters& c = t[i];
    if (c.started == 0 && c.mismatches == 0) continue;
    char line[200];
    std::snprintf(line, sizeof line, "    %-4s %-24s %10llu %10llu %8llu %9llu %10llu\n", role,
                  std::string(procedureName(static_cast<Procedure>(i))).c_str(),
                  static_cast<unsigned long long>(c.started),
                  static_cast<unsigned long long>(c.completed),
                  static_cast<unsigned long long>(c.retransmissions),
                  static_cast<unsigned long long>(c.timeouts),
                  static_cast<unsigned long long>(c.mismatches));
    out << line;
  }
}

template <class Stats>
uint64_t accessTimeouts(const Stats* s) {
  return s != nullptr ? sum(s->timeouts) : 0;
}
template <class NodeStats>
uint64_t gatewayTimeouts(const std::vector<NodeStats>* nodes) {
  uint64_t n = 0;
  if (nodes != nullptr)
    for (const ProcedureCounters& c : gatewayProcedures(*nodes)) n += c.timeouts;
  return n;
}

uint64_t totalTimeouts(const RunReport& r) {
  return accessTimeouts(r.sgw) + accessTimeouts(r.sgsn) + gatewayTimeouts(r.pgw) +
         gatewayTimeouts(r.ggsn);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

nlohmann::json failoverJson(const RunReport& r) {
  using nlohmann::json;
  const Failover& f = *r.failover;
  json proxy = json::array();
  for (const IpAddress& a : f.addresses()) proxy.push_back(addressToString(a));
  return {{"to", failoverTargets(f.config())},
          {"after_s", f.config().after_s >= 0 ? json(f.config().after_s) : json(nullptr)},
          {"switched", f.active()},
          {"at_s", f.active() ? json(r.failover_at_s) : json(nullptr)},
          {"trigger", triggerName(f.trigger())},
          {"redirected", f.redirected()},
          {"proxy_addresses", proxy},
          {"addresses_untracked", f.untracked()}};
}

// What the access side (SGWs or SGSNs) writes, whatever the version.
template <class Stats>
void accessJson(const Stats& s, const RunReport& r, const char* role, nlohmann::json& j) {
  using nlohmann::json;
  const RunConfig& c = *r.config;
  json tx = json::object();
  for (std::size_t t = 0; t < s.attempted.size(); ++t)
    tx[txnLabel(s, t)] = {{"attempted", s.attempted[t]},
                          {"completed", s.completed[t]},
                          {"retransmissions", s.retransmissions[t]},
                          {"timeouts", s.timeouts[t]}};
  tx["total"] = {{"attempted", sum(s.attempted)},
                 {"completed", sum(s.completed)},
                 {"retransmissions", sum(s.retransmissions)},
                 {"timeouts", sum(s.timeouts)}};
  j["transactions"] = tx;
  j["measured"] = {{"attempted", s.measured_attempted},
                   {"completed_in_window", s.completed_in_window}};
  j["tps_target"] = c.rate;
  j["tps_achieved"] = r.window_s > 0 ? static_cast<double>(s.completed_in_window) / r.window_s : 0.0;
  json lat = json::object();
  lat["all"] = latencyJson(allLatency(s));
  for (std::size_t t = 0; t < s.latency.size(); ++t) lat[txnLabel(s, t)] = latencyJson(s.latency[t]);
  j["latency_ms"] = lat;
  j["retransmissions"] = sum(s.retransmissions);
  j["timeouts"] = sum(s.timeouts);
  j["duplicate_responses"] = s.duplicate_responses;
  j["late_responses"] = s.late_responses;
  j["outstanding_at_end"] = r.outstanding;
  j["sessions"] = {{"created", s.sessions_created},
                   {"rejected", s.sessions_rejected},
                   {"deleted", s.sessions_deleted},
                   {"up_at_end", r.sgw_sessions_up},
                   {"waiting_at_end", r.sgw_waiting}};
  j["causes"] = byCause(s.causes);
  json split = json::object();
  for (std::size_t i = 0; i < s.split.size; ++i)
    split[addressToString(s.split.addr[i])] = s.split.count[i];
  if (s.split.other != 0) split["other"] = s.split.other;
  j["split"] = split;
  j["schedule"] = {{"starved", s.starved}, {"lagged", r.schedule_lagged}};
  j[std::string("echo_requests_answered_by_") + role] = s.echo_requests_answered;
  j["internal_errors"] = s.internal_errors;
}

void roleJson(const SgwStats& s, nlohmann::json& j) {
  j["network_initiated"] = {{"delete_bearer_requests", s.delete_bearer_requests},
                            {"sessions_deleted_by_network", s.sessions_deleted_by_network},
                            {"delete_bearer_unknown", s.delete_bearer_unknown},
                            {"delete_bearer_duplicates", s.delete_bearer_duplicates},
                            {"transactions_cancelled", s.transactions_cancelled},
                            {"answers_evicted", s.answers_evicted},
                            {"piggybacked", s.piggybacked},
                            {"request_causes", byCause(s.delete_bearer_causes)}};
}

void roleJson(const SgsnStats& s, nlohmann::json& j) {
  j["network_initiated"] = {{"sessions_deleted_by_network", s.sessions_deleted_by_network},
                            {"unknown", s.network_unknown},
                            {"early", s.network_early},
                            {"transactions_cancelled", s.transactions_cancelled},
                            {"answers_evicted", s.answers_evicted}};
  j["secondaries"] = {{"created", s.secondaries_created}, {"deleted", s.secondaries_deleted}};
  j["version_not_supported"] = s.version_not_supported;
  j["error_indications"] = s.error_indications;
}

// What a gateway (PGW or GGSN) writes, whatever the version.
template <class NodeStats>
nlohmann::json gatewayJson(const NodeStats& p) {
  nlohmann::json requests = nlohmann::json::object();
  for (std::size_t t = 0; t < p.requests.size(); ++t) requests[requestLabel(p, t)] = p.requests[t];
  requests["echo"] = p.echo_requests;
  return {{"requests", requests},
          {"sessions_created", p.sessions_created},
          {"sessions_rejected", p.sessions_rejected},
          {"sessions_deleted", p.sessions_deleted},
          {"sessions_replaced", p.sessions_replaced},
          {"sessions_up", p.sessions_up},
          {"duplicates_answered", p.duplicates},
          {"dropped", p.dropped},
          {"delayed", p.delayed},
          {"delay_queue_full", p.delay_queue_full},
          {"context_not_found", p.context_not_found},
          {"no_resources", p.no_resources},
          {"dup_window_evictions", p.dup_window_evictions},
          {"duplicate_responses", p.duplicate_responses},
          {"late_responses", p.late_responses},
          {"requests_refused", p.requests_refused},
          {"internal_errors", p.internal_errors}};
}
nlohmann::json nodeJson(const PgwNodeStats& p) {
  nlohmann::json j = gatewayJson(p);
  j["requests"].erase(std::string(txnName(Txn::kUnknownTeid)));  // never sent to a gateway
  j["piggybacked"] = p.piggybacked;
  return j;
}
nlohmann::json nodeJson(const GgsnNodeStats& p) {
  nlohmann::json j = gatewayJson(p);
  j["secondaries_created"] = p.secondaries_created;
  j["contexts_up"] = p.contexts_up;
  j["version_not_supported"] = p.version_not_supported;
  j["error_indications"] = p.error_indications;
  return j;
}

template <class NodeStats>
nlohmann::json gatewaysJson(const std::vector<NodeStats>& nodes,
                            const std::vector<GatewayNodeConfig>& configs) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < nodes.size(); ++i)
    j[addressToString(configs[i].addr)] = nodeJson(nodes[i]);
  return j;
}

// The access side's lines of the summary.
template <class Stats>
void printAccess(const Stats& s, const RunReport& r, std::ostream& out) {
  const RunConfig& c = *r.config;
  out << "  transactions              attempted  completed  retrans  timeouts\n";
  for (std::size_t t = 0; t < s.attempted.size(); ++t) {
    char line[160];
    std::snprintf(line, sizeof line, "    %-22s %10llu %10llu %8llu %9llu\n",
                  txnLabel(s, t).c_str(), static_cast<unsigned long long>(s.attempted[t]),
                  static_cast<unsigned long long>(s.completed[t]),
                  static_cast<unsigned long long>(s.retransmissions[t]),
                  static_cast<unsigned long long>(s.timeouts[t]));
    out << line;
  }
  const double tps = r.window_s > 0 ? static_cast<double>(s.completed_in_window) / r.window_s : 0;
  out << "  throughput          " << fixed(tps, 1) << " tx/s achieved (target "
      << fixed(c.rate, 1) << "), " << s.completed_in_window << " measured completions\n";
  const LatencyHistogram all = allLatency(s);
  out << "  latency ms          p50 " << fixed(ms(all.percentile(0.5)), 3) << "  p99 "
      << fixed(ms(all.percentile(0.99)), 3) << "  p99.9 " << fixed(ms(all.percentile(0.999)), 3)
      << "  max " << fixed(ms(all.max()), 3) << "  (n=" << all.count() << ")\n";
  for (std::size_t t = 0; t < s.latency.size(); ++t) {
    const auto& h = s.latency[t];
    if (h.count() == 0) continue;
    out << "    " << txnLabel(s, t) << ": p50 " << fixed(ms(h.percentile(0.5)), 3) << "  p99 "
        << fixed(ms(h.percentile(0.99)), 3) << "  p99.9 " << fixed(ms(h.percentile(0.999)), 3)
        << "  max " << fixed(ms(h.max()), 3) << "\n";
  }
  out << "  sessions            created " << s.sessions_created << ", rejected "
      << s.sessions_rejected << ", deleted " << s.sessions_deleted << ", up at end "
      << r.sgw_sessions_up << ", waiting for the network at end " << r.sgw_waiting << "\n";
  out << "  split by " << (c.version == 1 ? "GGSN" : "PGW ") << "       ";
  for (std::size_t i = 0; i < s.split.size; ++i)
    out << (i ? ", " : "") << addressToString(s.split.addr[i]) << " " << s.split.count[i];
  if (s.split.size == 0) out << "-";
  out << "\n  causes received     ";
  bool any = false;
  for (std::size_t i = 0; i < s.causes.size(); ++i)
    if (s.causes[i] != 0) {
      out << (any ? ", " : "") << i << ": " << s.causes[i];
      any = true;
    }
  if (!any) out << "-";
  out << "\n  responses           duplicate " << s.duplicate_responses << ", late "
      << s.late_responses << ", outstanding at end " << r.outstanding << "\n";
  out << "  schedule            starved " << s.starved << ", lagged " << r.schedule_lagged << "\n";
}

void printRole(const SgwStats& s, std::ostream& out) {
  out << "  network-initiated   delete bearer requests " << s.delete_bearer_requests
      << " (sessions deleted " << s.sessions_deleted_by_network << ", unknown "
      << s.delete_bearer_unknown << "), duplicates " << s.delete_bearer_duplicates
      << ", transactions cancelled " << s.transactions_cancelled << ", answers evicted "
      << s.answers_evicted << "\n";
}

void printRole(const SgsnStats& s, std::ostream& out) {
  out << "  secondaries         created " << s.secondaries_created << ", deleted "
      << s.secondaries_deleted << "\n";
  out << "  network-initiated   sessions deleted " << s.sessions_deleted_by_network
      << ", unknown " << s.network_unknown << ", early " << s.network_early
      << ", transactions cancelled "
      << s.transactions_cancelled << ", answers evicted " << s.answers_evicted
      << "; version not supported " << s.version_not_supported << ", error indications "
      << s.error_indications << "\n";
}

template <class NodeStats>
void printGateways(const char* role, const std::vector<NodeStats>& nodes,
                   const std::vector<GatewayNodeConfig>& configs, std::ostream& out) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeStats& p = nodes[i];
    out << "  " << role << " " << addressToString(configs[i].addr) << "  created "
        << p.sessions_created << ", rejected " << p.sessions_rejected << ", deleted "
        << p.sessions_deleted << ", up " << p.sessions_up << ", duplicates " << p.duplicates
        << ", dropped " << p.dropped << ", delayed " << p.delayed << ", not found "
        << p.context_not_found << "\n";
  }
}

}  // namespace

ErrorCounts errorCounts(const RunReport& r) noexcept {
  ErrorCounts e;
  e.timeouts = totalTimeouts(r);
  e.unexpected_causes = r.mismatches[Mismatch::kSgwUnexpectedCause] +
                        r.mismatches[Mismatch::kSgsnUnexpectedCause];
  e.malformed = r.malformed.total;
  if (r.sgw != nullptr) e.internal_errors += r.sgw->internal_errors;
  if (r.sgsn != nullptr) {
    e.internal_errors += r.sgsn->internal_errors;
    e.version_not_supported += r.sgsn->version_not_supported;
    e.error_indications += r.sgsn->error_indications;
  }
  if (r.pgw != nullptr)
    for (const PgwNodeStats& p : *r.pgw) e.internal_errors += p.internal_errors;
  if (r.ggsn != nullptr) {
    for (const GgsnNodeStats& g : *r.ggsn) {
      e.internal_errors += g.internal_errors;
      e.version_not_supported += g.version_not_supported;
      e.error_indications += g.error_indications;
    }
  }
  return e;
}

int exitStatusOf(const RunReport& r) noexcept {
  return (totalTimeouts(r) == 0 && r.mismatches.total == 0 && r.malformed.total == 0 &&
          r.sgw_waiting == 0)
             ? 0
             : 1;
}

nlohmann::json toJson(const RunReport& r) {
  using nlohmann::json;
  const RunConfig& c = *r.config;
  json j;
  j["version"] = c.version;
  j["roles"] = {{"sgw", c.sgw_role}, {"pgw", c.pgw_role}, {"sgsn", c.sgsn_role},
                {"ggsn", c.ggsn_role}};
  j["mode"] = modeName(c.mode);
  j["config"] = {{"proxy", c.options.proxy},
                 {"proxy_gateway", c.options.proxy_gateway},
                 {"relay", c.options.relay},
                 {"sgw", c.options.sgw},
                 {"pgw", c.options.pgw},
                 {"subscribers", c.options.subscribers},
                 {"modify", c.options.modify},
                 {"cycles", c.options.cycles},
                 {"rate", c.rate},
                 {"setup_rate", c.setup_rate},
                 {"duration_s", c.duration_s},
                 {"t3_ms", c.options.t3_ms},
                 {"n3", c.options.n3},
                 {"same_sequence", c.options.same_sequence},
                 {"dedicated_bearer", c.options.dedicated_bearer},
                 {"piggyback", c.options.piggyback},
                 {"commands", c.options.commands},
                 {"unknown_teid", c.options.unknown_teid}};
  if (c.version == 1) {
    j["config"]["sgsn"] = c.options.sgsn;
    j["config"]["ggsn"] = c.options.ggsn;
    j["config"]["secondary"] = c.options.secondary;
    j["config"]["network_initiated"] = c.options.network_initiated;
    j["config"]["user_plane_proxied"] = c.options.user_plane_proxied;
  }
  j["elapsed_s"] = r.elapsed_s;
  j["window_s"] = r.window_s;
  j["interrupted"] = r.interrupted;

  json mismatches = json::object();
  for (std::size_t i = 0; i < kMismatchCount; ++i)
    if (mismatchVersion(static_cast<Mismatch>(i)) == c.version)
      mismatches[std::string(mismatchName(static_cast<Mismatch>(i)))] = r.mismatches.by_kind[i];
  j["mismatches"] = {{"total", r.mismatches.total}, {"by_kind", mismatches}};
  j["checks_failed"] = r.mismatches.total;
  json malformed = json::object();
  for (std::size_t i = 1; i < MalformedCounters::kErrcCount; ++i)
    if (r.malformed.by_errc[i] != 0)
      malformed[std::string(gtp::errcName(static_cast<gtp::Errc>(i)))] = r.malformed.by_errc[i];
  j["malformed"] = {{"total", r.malformed.total}, {"by_error", malformed}};
  const ErrorCounts e = errorCounts(r);
  j["errors"] = {{"total", e.total()},
                 {"timeouts", e.timeouts},
                 {"unexpected_causes", e.unexpected_causes},
                 {"malformed", e.malformed},
                 {"version_not_supported", e.version_not_supported},
                 {"error_indications", e.error_indications},
                 {"internal_errors", e.internal_errors}};

  if (r.sgw != nullptr) {
    accessJson(*r.sgw, r, "sgw", j);
    roleJson(*r.sgw, j);
  }
  if (r.sgsn != nullptr) {
    accessJson(*r.sgsn, r, "sgsn", j);
    roleJson(*r.sgsn, j);
  }
  if (r.pgw != nullptr) {
    j["pgw"] = gatewaysJson(*r.pgw, c.pgw.nodes);
    j["pgw_outstanding_at_end"] = r.pgw_outstanding;
  }
  if (r.ggsn != nullptr) {
    j["ggsn"] = gatewaysJson(*r.ggsn, c.ggsn.nodes);
    j["ggsn_outstanding_at_end"] = r.pgw_outstanding;
  }
  json procedures = json::object();
  if (r.sgw != nullptr) procedures["sgw"] = proceduresJson(accessProcedures(*r.sgw), 2);
  if (r.pgw != nullptr) procedures["pgw"] = proceduresJson(gatewayProcedures(*r.pgw), 2);
  if (r.sgsn != nullptr) procedures["sgsn"] = proceduresJson(accessProcedures(*r.sgsn), 1);
  if (r.ggsn != nullptr) procedures["ggsn"] = proceduresJson(gatewayProcedures(*r.ggsn), 1);
  j["procedures"] = procedures;
  uint64_t drops = 0;
  json sockets = json::array();
  for (const auto& s : r.sockets) {
    drops += s.drops;
    sockets.push_back({{"role", s.role},
                       {"local", toString(s.local)},
                       {"drops", s.drops},
                       {"rcvbuf", s.rcvbuf},
                       {"sndbuf", s.sndbuf}});
  }
  j["socket"] = {{"drops", drops},
                 {"send_full", r.send_full},
                 {"send_errors", r.send_errors},
                 {"snmp_rcvbuf_errors_delta", r.snmp_rcvbuf_errors_delta},
                 {"sockets", sockets}};
  if (r.failover != nullptr) j["failover"] = failoverJson(r);
  j["exit_status"] = r.exit_status;
  return j;
}

void printSummary(const RunReport& r, std::ostream& out) {
  const RunConfig& c = *r.config;
  const std::string access = c.version == 1 ? "sgsn" : "sgw";
  const std::string gateway = c.version == 1 ? "ggsn" : "pgw";
  const bool has_access = c.accessRole(), has_gateway = c.gatewayRole();
  out << "gtpcp-peer summary (" << (has_access ? access : "")
      << (has_access && has_gateway ? "+" : "") << (has_gateway ? gateway : "")
      << (has_access ? std::string(", ") + modeName(c.mode) : std::string())
      << (c.options.relay ? ", through a relay" : "") << ")"
      << (r.interrupted ? " [interrupted]" : "") << "\n";
  out << "  elapsed " << fixed(r.elapsed_s, 2) << " s, measured window " << fixed(r.window_s, 2)
      << " s\n";
  if (r.sgw != nullptr) {
    printAccess(*r.sgw, r, out);
    printRole(*r.sgw, out);
  }
  if (r.sgsn != nullptr) {
    printAccess(*r.sgsn, r, out);
    printRole(*r.sgsn, out);
  }
  if (r.pgw != nullptr) printGateways("pgw", *r.pgw, c.pgw.nodes, out);
  if (r.ggsn != nullptr) printGateways("ggsn", *r.ggsn, c.ggsn.nodes, out);
  const ProcedureTable none{};
  std::ostringstream rows;
  printProcedures("sgw", r.sgw ? accessProcedures(*r.sgw) : none, rows);
  printProcedures("pgw", r.pgw ? gatewayProcedures(*r.pgw) : none, rows);
  printProcedures("sgsn", r.sgsn ? accessProcedures(*r.sgsn) : none, rows);
  printProcedures("ggsn", r.ggsn ? gatewayProcedures(*r.ggsn) : none, rows);
  if (!rows.str().empty())
    out << "  procedures" << std::string(25, ' ') << "started  completed  retrans  timeouts "
           "mismatches\n"
        << rows.str();
  out << "  mismatches          " << r.mismatches.total;
  for (std::size_t i = 0; i < kMismatchCount; ++i)
    if (r.mismatches.by_kind[i] != 0)
      out << "  " << mismatchName(static_cast<Mismatch>(i)) << "=" << r.mismatches.by_kind[i];
  out << "\n  malformed           " << r.malformed.total;
  for (std::size_t i = 1; i < MalformedCounters::kErrcCount; ++i)
    if (r.malformed.by_errc[i] != 0)
      out << "  " << gtp::errcName(static_cast<gtp::Errc>(i)) << "=" << r.malformed.by_errc[i];
  const ErrorCounts e = errorCounts(r);
  out << "\n  errors              " << e.total() << " (timeouts " << e.timeouts
      << ", unexpected causes " << e.unexpected_causes << ", malformed " << e.malformed
      << ", version not supported " << e.version_not_supported << ", error indications "
      << e.error_indications << ", internal " << e.internal_errors << ")";
  uint64_t drops = 0;
  for (const auto& s : r.sockets) drops += s.drops;
  out << "\n  socket              drops " << drops << " (SO_RXQ_OVFL), send refused "
      << r.send_full << ", send errors " << r.send_errors << ", system UDP RcvbufErrors delta "
      << r.snmp_rcvbuf_errors_delta << "\n";
  if (r.failover != nullptr) {
    const Failover& f = *r.failover;
    std::string to;
    for (const auto& a : failoverTargets(f.config())) to += (to.empty() ? "" : ", ") + a;
    out << "  failover            to " << to << ": ";
    if (f.active())
      out << "switched at " << fixed(r.failover_at_s, 3) << " s (" << triggerName(f.trigger())
          << "), " << f.redirected() << " datagrams redirected\n";
    else
      out << "not switched\n";
  }
  out << "  result              "
      << (r.exit_status == 0 ? "OK" : "FAILED (timeouts, mismatches or malformed datagrams)")
      << "\n";
}

}  // namespace gtpcp::peer
