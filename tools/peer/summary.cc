#include "tools/peer/summary.h"

#include <cstdio>
#include <numeric>
#include <sstream>
#include <utility>

namespace gtpcp::peer {

namespace {

uint64_t sum(const std::array<uint64_t, kTxnCount>& a) {
  return std::accumulate(a.begin(), a.end(), uint64_t{0});
}

double ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

nlohmann::json latencyJson(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"p50", ms(h.percentile(0.50))},
          {"p99", ms(h.percentile(0.99))},
          {"p99_9", ms(h.percentile(0.999))},
          {"max", ms(h.max())},
          {"mean", h.mean() / 1e6}};
}

LatencyHistogram allLatency(const SgwStats& s) {
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

// The PGWs' procedure counters, all PGWs together.
ProcedureTable pgwProcedures(const std::vector<PgwNodeStats>& pgws) {
  ProcedureTable t{};
  for (const PgwNodeStats& p : pgws) {
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
ProcedureTable sgwProcedures(const SgwStats& s) {
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

nlohmann::json proceduresJson(const ProcedureTable& t) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < kProcedureCount; ++i)
    j[std::string(procedureName(static_cast<Procedure>(i)))] = {
        {"started", t[i].started},
        {"completed", t[i].completed},
        {"retransmissions", t[i].retransmissions},
        {"timeouts", t[i].timeouts},
        {"mismatches", t[i].mismatches}};
  return j;
}

void printProcedures(const char* role, const ProcedureTable& t, std::ostream& out) {
  for (std::size_t i = 0; i < kProcedureCount; ++i) {
    const ProcedureCounters& c = t[i];
    if (c.started == 0 && c.mismatches == 0) continue;
    char line[200];
    std::snprintf(line, sizeof line, "    %s %-24s %10llu %10llu %8llu %9llu %10llu\n", role,
                  std::string(procedureName(static_cast<Procedure>(i))).c_str(),
                  static_cast<unsigned long long>(c.started),
                  static_cast<unsigned long long>(c.completed),
                  static_cast<unsigned long long>(c.retransmissions),
                  static_cast<unsigned long long>(c.timeouts),
                  static_cast<unsigned long long>(c.mismatches));
    out << line;
  }
}

uint64_t totalTimeouts(const RunReport& r) {
  uint64_t n = r.sgw ? sum(r.sgw->timeouts) : 0;
  if (r.pgw)
    for (const ProcedureCounters& c : pgwProcedures(*r.pgw)) n += c.timeouts;
  return n;
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

}  // namespace

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
  j["roles"] = {{"sgw", c.sgw_role}, {"pgw", c.pgw_role}};
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
  j["elapsed_s"] = r.elapsed_s;
  j["window_s"] = r.window_s;
  j["interrupted"] = r.interrupted;

  json mismatches = json::object();
  for (std::size_t i = 0; i < kMismatchCount; ++i)
    mismatches[std::string(mismatchName(static_cast<Mismatch>(i)))] = r.mismatches.by_kind[i];
  j["mismatches"] = {{"total", r.mismatches.total}, {"by_kind", mismatches}};
  json malformed = json::object();
  for (std::size_t i = 1; i < MalformedCounters::kErrcCount; ++i)
    if (r.malformed.by_errc[i] != 0)
      malformed[std::string(gtp::errcName(static_cast<gtp::Errc>(i)))] = r.malformed.by_errc[i];
  j["malformed"] = {{"total", r.malformed.total}, {"by_error", malformed}};

  if (r.sgw != nullptr) {
    const SgwStats& s = *r.sgw;
    json tx = json::object();
    for (std::size_t t = 0; t < kTxnCount; ++t)
      tx[std::string(txnName(static_cast<Txn>(t)))] = {{"attempted", s.attempted[t]},
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
    for (std::size_t t = 0; t < kTxnCount; ++t)
      lat[std::string(txnName(static_cast<Txn>(t)))] = latencyJson(s.latency[t]);
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
    j["network_initiated"] = {{"delete_bearer_requests", s.delete_bearer_requests},
                              {"sessions_deleted_by_network", s.sessions_deleted_by_network},
                              {"delete_bearer_unknown", s.delete_bearer_unknown},
                              {"delete_bearer_duplicates", s.delete_bearer_duplicates},
                              {"transactions_cancelled", s.transactions_cancelled},
                              {"answers_evicted", s.answers_evicted},
                              {"piggybacked", s.piggybacked},
                              {"request_causes", byCause(s.delete_bearer_causes)}};
    j["echo_requests_answered_by_sgw"] = s.echo_requests_answered;
    j["internal_errors"] = s.internal_errors;
  }
  if (r.pgw != nullptr) {
    json pgws = json::object();
    for (std::size_t i = 0; i < r.pgw->size(); ++i) {
      const PgwNodeStats& p = (*r.pgw)[i];
      pgws[addressToString(c.pgw.nodes[i].addr)] = {
          {"requests",
           {{"create_session", p.requests[static_cast<std::size_t>(Txn::kCreate)]},
            {"modify_bearer", p.requests[static_cast<std::size_t>(Txn::kModify)]},
            {"delete_session", p.requests[static_cast<std::size_t>(Txn::kDelete)]},
            {"modify_bearer_command", p.requests[static_cast<std::size_t>(Txn::kModifyBearerCommand)]},
            {"echo", p.echo_requests}}},
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
          {"piggybacked", p.piggybacked},
          {"internal_errors", p.internal_errors}};
    }
    j["pgw"] = pgws;
    j["pgw_outstanding_at_end"] = r.pgw_outstanding;
  }
  json procedures = json::object();
  if (r.sgw != nullptr) procedures["sgw"] = proceduresJson(sgwProcedures(*r.sgw));
  if (r.pgw != nullptr) procedures["pgw"] = proceduresJson(pgwProcedures(*r.pgw));
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
  out << "gtpcp-peer summary (" << (c.sgw_role ? "sgw" : "") << (c.sgw_role && c.pgw_role ? "+" : "")
      << (c.pgw_role ? "pgw" : "")
      << (c.sgw_role ? std::string(", ") + modeName(c.mode) : std::string())
      << (c.options.relay ? ", through a relay" : "") << ")"
      << (r.interrupted ? " [interrupted]" : "") << "\n";
  out << "  elapsed " << fixed(r.elapsed_s, 2) << " s, measured window " << fixed(r.window_s, 2)
      << " s\n";
  if (r.sgw != nullptr) {
    const SgwStats& s = *r.sgw;
    out << "  transactions              attempted  completed  retrans  timeouts\n";
    for (std::size_t t = 0; t < kTxnCount; ++t) {
      char line[160];
      std::snprintf(line, sizeof line, "    %-22s %10llu %10llu %8llu %9llu\n",
                    std::string(txnName(static_cast<Txn>(t))).c_str(),
                    static_cast<unsigned long long>(s.attempted[t]),
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
    for (std::size_t t = 0; t < kTxnCount; ++t) {
      const auto& h = s.latency[t];
      if (h.count() == 0) continue;
      out << "    " << txnName(static_cast<Txn>(t)) << ": p50 " << fixed(ms(h.percentile(0.5)), 3)
          << "  p99 " << fixed(ms(h.percentile(0.99)), 3) << "  p99.9 "
          << fixed(ms(h.percentile(0.999)), 3) << "  max " << fixed(ms(h.max()), 3) << "\n";
    }
    out << "  sessions            created " << s.sessions_created << ", rejected "
        << s.sessions_rejected << ", deleted " << s.sessions_deleted << ", up at end "
        << r.sgw_sessions_up << ", waiting for the network at end " << r.sgw_waiting << "\n";
    out << "  split by PGW        ";
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
    out << "  network-initiated   delete bearer requests " << s.delete_bearer_requests
        << " (sessions deleted " << s.sessions_deleted_by_network << ", unknown "
        << s.delete_bearer_unknown << "), duplicates " << s.delete_bearer_duplicates
        << ", transactions cancelled " << s.transactions_cancelled << ", answers evicted "
        << s.answers_evicted << "\n";
  }
  if (r.pgw != nullptr) {
    for (std::size_t i = 0; i < r.pgw->size(); ++i) {
      const PgwNodeStats& p = (*r.pgw)[i];
      out << "  pgw " << addressToString(c.pgw.nodes[i].addr) << "  created " << p.sessions_created
          << ", rejected " << p.sessions_rejected << ", deleted " << p.sessions_deleted
          << ", up " << p.sessions_up << ", duplicates " << p.duplicates << ", dropped "
          << p.dropped << ", delayed " << p.delayed << ", not found " << p.context_not_found
          << "\n";
    }
  }
  const ProcedureTable none{};
  const ProcedureTable sgw_procedures = r.sgw ? sgwProcedures(*r.sgw) : none;
  const ProcedureTable pgw_procedures = r.pgw ? pgwProcedures(*r.pgw) : none;
  std::ostringstream rows;
  printProcedures("sgw", sgw_procedures, rows);
  printProcedures("pgw", pgw_procedures, rows);
  if (!rows.str().empty())
    out << "  procedures" << std::string(24, ' ') << "started  completed  retrans  timeouts "
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
