#include "common/group/status.h"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "common/config/routing.h"
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
#include "common/time/clock.h"

namespace gtpcp::group {

void writeStatusFile(const std::string& path, const nlohmann::json& status) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << status.dump(1) << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

nlohmann::json groupStatus(const ProcessControl& processes) {
  const config::InstanceConfig& config_ = processes.config();
  const Paths& paths_ = processes.paths();
  auto runningPid = [&processes](const std::string& name) { return processes.runningPid(name); };
  nlohmann::json j;
  j["group"] = config_.group;
  j["run_dir"] = paths_.runDir();
  if (std::ifstream in(paths_.runDir() + "/start_ms"); in) {
    double ms = -1;
    if (in >> ms && ms >= 0) j["start_seconds"] = ms / 1000.0;
  }
  const uint64_t now = monotonicNs();
  auto process = [&](const std::string& name, const ProcessStatusShm* s) {
    nlohmann::json p;
    p["name"] = name;
    auto pid = runningPid(name);
    p["pid"] = pid ? nlohmann::json(*pid) : nlohmann::json(nullptr);
    if (s == nullptr) {
      p["state"] = "absent";
      return p;
    }
    // PROC-A1 (an observer's): pairs with PROC-R1 in the process.
    auto state = static_cast<ProcessState>(s->state.load(std::memory_order_acquire));
    // A process that died does not say so itself.
    if (!pid && state == ProcessState::kServing) state = ProcessState::kAbsent;
    p["state"] = pid ? toString(state) : (state == ProcessState::kStopped ? "stopped" : "dead");
    const uint64_t beat = s->heartbeat_ns.load(std::memory_order_relaxed);
    if (beat != 0 && now >= beat) p["heartbeat_age_ms"] = (now - beat) / 1'000'000;
    p["starts"] = s->starts.load(std::memory_order_relaxed);
    return p;
  };
  auto fwd = attachAs<forwarder::ForwarderShm>(paths_.forwarderSegment(), forwarder::kForwarderSegmentKind);
  j["processes"].push_back(process("forwarder", fwd.shm ? &fwd.shm->status : nullptr));
  nlohmann::json counters = nlohmann::json::object();
  if (fwd.shm) counters = countersJson(forwarder::kForwarderCounterInfo, &fwd.shm->counters);
  uint64_t sessions = 0;
  for (uint32_t w = 0; w < config_.workers; ++w) {
    const std::string name = Paths::workerName(w);
    auto a = attachAs<worker::WorkerShmHeader>(paths_.workerSegment(w), worker::kWorkerSegmentKind);
    nlohmann::json p = process(name, a.shm ? &a.shm->status : nullptr);
    if (a.shm) {
      p["sessions"] = a.shm->counters.sessions_active.load();
      sessions += a.shm->counters.sessions_active.load();
      p["counters"] = countersJson(worker::kWorkerCounterInfo, &a.shm->counters);
    }
    if (fwd.shm) {
      p["ring_depth_slots"] = {{"priority", fwd.shm->priority_depth[w].load()},
                               {"new", fwd.shm->new_depth[w].load()},
                               {"egress", fwd.shm->egress_depth[w].load()}};
    }
    j["processes"].push_back(p);
  }
  if (persists(config_)) {
    auto per = attachAs<persister::PersisterShm>(paths_.persisterSegment(), persister::kPersisterSegmentKind);
    nlohmann::json p = process("persister", per.shm ? &per.shm->status : nullptr);
    if (per.shm) {
      nlohmann::json pc = countersJson(persister::kPersisterCounterInfo, &per.shm->counters);
      // The channels' Redis counters, summed (gauges too: "connected" counts channels).
      for (std::size_t i = 0; i < std::size(persister::kRedisCounterInfo); ++i) {
        uint64_t sum = 0;
        for (uint32_t w = 0; w < config_.workers && w < persister::kMaxChannels; ++w)
          sum += reinterpret_cast<const metrics::Counter*>(&per.shm->redis[w])[i].load();
        pc[std::string(persister::kRedisCounterInfo[i].name)] = sum;
      }
      p["counters"] = pc;
    }
    j["processes"].push_back(p);
  }
  {
    auto wd = attachAs<watchdog::WatchdogShm>(paths_.watchdogSegment(), watchdog::kWatchdogSegmentKind);
    nlohmann::json p = process("watchdog", wd.shm ? &wd.shm->status : nullptr);
    if (wd.shm) p["counters"] = countersJson(watchdog::kWatchdogCounterInfo, &wd.shm->counters);
    j["processes"].push_back(p);
    // What it did to each process (restarts, last failure, why it gave up).
    if (std::ifstream in(paths_.watchdogStatusFile()); in) {
      auto watched = nlohmann::json::parse(in, nullptr, false);
      if (!watched.is_discarded()) j["watchdog"] = watched;
    }
  }
  if (config_.bgp.mode == config::InstanceConfig::Bgp::Mode::kFrr) {
    nlohmann::json bgp;
    auto w = attachAs<BgpWatchdogShm>(paths_.bgpWatchdogSegment(), kBgpWatchdogSegmentKind);
    nlohmann::json wp = process("bgp-watchdog", w.shm ? &w.shm->status : nullptr);
    if (w.shm) {
      wp["counters"] = countersJson(kBgpWatchdogCounterInfo, &w.shm->counters);
      BgpDecision d;
      if (read(w.shm->decision, d)) {
        bgp["decision"] = {{"intent", toString(d.intent)}, {"preference", toString(d.preference)},
                           {"health", toString(d.health)}, {"reason", d.reason}, {"since_ns", d.since_ns},
                           {"generation", d.generation}};
        if (d.announce_at_ns) bgp["decision"]["announce_at_ns"] = d.announce_at_ns;
        if (d.withdraw_at_ns) bgp["decision"]["withdraw_at_ns"] = d.withdraw_at_ns;
      }
      const uint64_t renewed = w.shm->decision.renewed_ns.load(std::memory_order_relaxed);
      if (renewed != 0 && now >= renewed) bgp["decision_age_ms"] = (now - renewed) / 1'000'000;
    }
    j["processes"].push_back(wp);
    auto b = attachAs<BridgeShm>(paths_.bridgeSegment(), kBridgeSegmentKind);
    nlohmann::json bp = process("bgpd-bridge", b.shm ? &b.shm->status : nullptr);
    if (b.shm) bp["counters"] = countersJson(kBridgeCounterInfo, &b.shm->counters);
    j["processes"].push_back(bp);
    if (std::ifstream in(paths_.bridgeStatusFile()); in) {
      auto frr = nlohmann::json::parse(in, nullptr, false);
      if (!frr.is_discarded()) bgp["frr"] = frr;
    }
    if (std::ifstream in(paths_.bgpWatchdogStatusFile()); in) {
      auto h = nlohmann::json::parse(in, nullptr, false);
      if (!h.is_discarded() && h.contains("history")) bgp["history"] = h["history"];
    }
    bgp["service_addresses"] = serviceAddresses(config_);
    bgp["role"] = config_.bgp.role == config::InstanceConfig::Bgp::Role::kStandby ? "standby" : "active";
    j["bgp"] = bgp;
  }
  if (!config_.management.listen.empty()) {
    auto c = attachAs<console::ConsoleShm>(paths_.consoleSegment(), console::kConsoleSegmentKind);
    nlohmann::json p = process("console", c.shm ? &c.shm->status : nullptr);
    if (c.shm) p["counters"] = countersJson(console::kConsoleCounterInfo, &c.shm->counters);
    nlohmann::json listen = nlohmann::json::array();
    for (const auto& l : config_.management.listen)
      listen.push_back(l.address.find(':') != std::string::npos ? "[" + l.address + "]:" + std::to_string(l.port)
                                                                 : l.address + ":" + std::to_string(l.port));
    p["listen"] = listen;
    j["processes"].push_back(p);
  }
  if (config_.storage.mode == config::InstanceConfig::Storage::Mode::kEmbedded) {
    nlohmann::json r;
    r["name"] = "redis";
    auto pid = runningPid("redis");
    r["pid"] = pid ? nlohmann::json(*pid) : nlohmann::json(nullptr);
    r["state"] = pid ? "serving" : "absent";
    j["processes"].push_back(r);
  }
  j["sessions"] = sessions;
  j["counters"] = counters;
  // The forwarder's health checks, entry i being the routing document's gateway i.
  nlohmann::json gateways = nlohmann::json::array();
  auto table = attachAs<forwarder::GatewayTableShm>(paths_.gatewayTableSegment(), forwarder::kGatewayTableSegmentKind);
  if (table.shm) {
    auto routing = config::loadRoutingDocument(config_.routing.resolved);
    // GWT-A1 (an observer's): pairs with GWT-R1 in the forwarder's GatewayHealth constructor.
    const uint32_t published = table.shm->published.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < published && i < forwarder::kMaxHealthChecked; ++i) {
      const forwarder::GatewayStatusShm& g = table.shm->gateways[i];
      nlohmann::json e;
      if (routing && i < routing->gateways().size()) {
        e["name"] = routing->gateways()[i].name;
        e["pool"] = routing->pool(routing->gateways()[i].pool).name;
      }
      e["address"] = g.address.toString();
      e["health_checked"] = !routing || routing->healthCheck().interval_ms != 0;
      e["up"] = g.up.load(std::memory_order_relaxed) != 0;
      const uint32_t recovery = g.recovery.load(std::memory_order_relaxed);
      e["recovery"] = recovery == forwarder::kRecoveryUnknown ? nlohmann::json(nullptr) : nlohmann::json(recovery);
      e["restarts"] = g.restarts.load(std::memory_order_relaxed);
      e["echo_sent"] = g.echo_sent.load();
      e["echo_answered"] = g.echo_answered.load();
      e["misses"] = g.misses.load();
      gateways.push_back(e);
    }
  }
  j["gateways"] = gateways;
  // The control server's commands in force: drain, and the routing document.
  j["draining"] = false;
  {
    nlohmann::json routing;
    routing["path"] = config_.routing.resolved;
    routing["generation"] = 0;
    if (auto seg = ring::SharedSegment::attach(paths_.controlSegment(), kControlSegmentKind)) {
      const auto& c = *static_cast<const GroupControlShm*>(seg->payload());
      j["draining"] = c.draining.load(std::memory_order_relaxed) != 0;
      if (c.closing.load(std::memory_order_relaxed) != 0) j["stopping"] = true;
      if (auto in_force = routingInForce(c)) {
        routing["path"] = in_force->path;
        routing["generation"] = in_force->generation;
      }
      auto version = [](const ControlAckShm& ack) {
        nlohmann::json v;
        // Acquire: pairs with CTL-R2 in the process.
        v["generation"] = ack.routing_generation.load(std::memory_order_acquire);
        std::ostringstream hex;
        hex << std::hex << std::setw(16) << std::setfill('0') << ack.routing_hash.load(std::memory_order_relaxed);
        v["version"] = hex.str();
        if (ack.routing_failed.load(std::memory_order_relaxed) != 0) v["failed"] = true;
        return v;
      };
      routing["processes"]["forwarder"] = version(c.forwarder);
      for (uint32_t w = 0; w < config_.workers && w < kControlMaxWorkers; ++w)
        routing["processes"][Paths::workerName(w)] = version(c.workers[w]);
    }
    j["routing"] = routing;
  }
  return j;
}

namespace {

std::string ago(uint64_t realtime_ns) {
  const uint64_t now = realtimeNs();
  if (realtime_ns == 0 || realtime_ns > now) return "";
  char text[48];
  std::snprintf(text, sizeof text, "%.1f s ago", double(now - realtime_ns) / 1e9);
  return text;
}

std::string fromNow(uint64_t realtime_ns) {
  const uint64_t now = realtimeNs();
  char text[48];
  std::snprintf(text, sizeof text, "in %.1f s", realtime_ns > now ? double(realtime_ns - now) / 1e9 : 0.0);
  return text;
}

void printBgp(const nlohmann::json& b, std::ostream& out) {
  std::string addresses;
  for (const auto& a : b["service_addresses"]) addresses += (addresses.empty() ? "" : ", ") + a.get<std::string>();
  out << "bgp: " << addresses << ", role " << b["role"].get<std::string>() << "\n";
  if (b.contains("decision")) {
    const auto& d = b["decision"];
    out << "  decision: " << (d["intent"] == "announce" ? "ANNOUNCE" : "WITHDRAW") << " ("
        << d["preference"].get<std::string>() << ") since " << ago(d["since_ns"].get<uint64_t>()) << ": "
        << d["reason"].get<std::string>() << "\n";
    if (d.contains("announce_at_ns")) out << "  announced " << fromNow(d["announce_at_ns"].get<uint64_t>()) << " if healthy until then\n";
    if (d.contains("withdraw_at_ns")) out << "  withdrawn " << fromNow(d["withdraw_at_ns"].get<uint64_t>()) << " unless it recovers\n";
  } else {
    out << "  decision: none (gtpcp-bgp-watchdog not running)\n";
  }
  if (b.contains("frr")) {
    const auto& f = b["frr"];
    out << "  FRR: " << (f.value("announced", false) ? "announced" : "withdrawn");
    if (f.value("lease_expired", false)) out << " (the decision's lease ran out)";
    if (!f.value("frr_reachable", false)) out << ", FRR NOT REACHABLE";
    if (f.contains("last_apply_us")) out << ", last change took " << f["last_apply_us"].get<uint64_t>() / 1000 << " ms";
    out << "\n";
    for (const auto& n : f["neighbors"]) {
      out << "  neighbour " << n["address"].get<std::string>() << " AS " << n["remote_as"].get<uint32_t>() << ": "
          << n["state"].get<std::string>();
      if (n.contains("bfd")) out << ", BFD " << n["bfd"].get<std::string>();
      out << "\n";
    }
    for (const auto& p : f["problems"]) out << "  PROBLEM: " << p.get<std::string>() << "\n";
    if (f.contains("last_error")) out << "  last FRR error: " << f["last_error"].get<std::string>() << "\n";
  }
}

}  // namespace

void printStatus(const nlohmann::json& s, std::ostream& out) {
  out << "group " << s["group"].get<std::string>() << " (" << s["run_dir"].get<std::string>() << ")\n";
  out << std::left << std::setw(12) << "process" << std::setw(9) << "pid" << std::setw(10) << "state"
      << std::setw(11) << "heartbeat" << std::setw(8) << "starts" << "sessions\n";
  for (const auto& p : s["processes"]) {
    out << std::left << std::setw(12) << p["name"].get<std::string>() << std::setw(9)
        << (p["pid"].is_null() ? std::string("-") : std::to_string(p["pid"].get<int>())) << std::setw(10)
        << p["state"].get<std::string>() << std::setw(11)
        << (p.contains("heartbeat_age_ms") ? std::to_string(p["heartbeat_age_ms"].get<uint64_t>()) + " ms" : "-")
        << std::setw(8) << (p.contains("starts") ? std::to_string(p["starts"].get<uint64_t>()) : "-")
        << (p.contains("sessions") ? std::to_string(p["sessions"].get<uint64_t>()) : "") << "\n";
  }
  out << "sessions: " << s["sessions"].get<uint64_t>() << "\n";
  for (const auto& p : s["processes"]) {
    if (!p.contains("listen")) continue;
    std::string urls;
    for (const auto& l : p["listen"]) urls += (urls.empty() ? "http://" : ", http://") + l.get<std::string>();
    out << "management: " << urls << " (/metrics, /healthz, /readyz, /api/status)\n";
  }
  if (s.value("stopping", false)) {
    out << "STOPPING: requests dropped, open transactions finishing\n";
  } else if (s.value("draining", false)) {
    out << "DRAINING: session creations refused with cause 73 (gtpcp drain --off ends it)\n";
  }
  if (s.contains("routing")) {
    const auto& r = s["routing"];
    out << "routing: " << r["path"].get<std::string>() << " (generation " << r["generation"].get<uint64_t>() << ")";
    if (r.contains("processes")) {
      std::string version;
      bool same = true;
      for (const auto& [name, v] : r["processes"].items()) {
        if (v["version"].get<std::string>() == "0000000000000000") continue;  // never started
        if (version.empty()) version = v["version"].get<std::string>();
        same = same && v["version"].get<std::string>() == version && !v.contains("failed");
      }
      out << (same ? " version " + version : " versions differ between processes");
    }
    out << "\n";
  }
  if (s.contains("bgp")) printBgp(s["bgp"], out);
  if (s.contains("start_seconds")) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", s["start_seconds"].get<double>());
    out << "last start: every process serving " << seconds << " s after gtpcp start\n";
  }
  if (s.contains("watchdog")) {
    for (const auto& [name, w] : s["watchdog"].items()) {
      if (w.value("restarts", 0) == 0 && !w.contains("why")) continue;
      out << "watchdog: " << name << " restarted " << w.value("restarts", 0) << " times";
      if (w.contains("last_failure")) out << ", last: " << w["last_failure"].get<std::string>();
      if (w.contains("why")) out << "; GIVEN UP: " << w["why"].get<std::string>();
      out << "\n";
      if (w.contains("last_error")) out << "  its last start failed with: " << w["last_error"].get<std::string>() << "\n";
    }
  }
  if (s.contains("gateways") && !s["gateways"].empty()) {
    out << std::left << std::setw(16) << "gateway" << std::setw(12) << "pool" << std::setw(26) << "address"
        << std::setw(6) << "up" << std::setw(10) << "recovery" << std::setw(10) << "restarts" << "echo sent/answered\n";
    for (const auto& g : s["gateways"]) {
      out << std::left << std::setw(16) << g.value("name", std::string("-")) << std::setw(12)
          << g.value("pool", std::string("-")) << std::setw(26) << g["address"].get<std::string>() << std::setw(6)
          << (!g["health_checked"].get<bool>() ? "-" : g["up"].get<bool>() ? "yes" : "NO") << std::setw(10)
          << (g["recovery"].is_null() ? std::string("-") : std::to_string(g["recovery"].get<uint32_t>()))
          << std::setw(10) << g["restarts"].get<uint32_t>() << g["echo_sent"].get<uint64_t>() << "/"
          << g["echo_answered"].get<uint64_t>() << "\n";
    }
  }
  auto print = [&](const nlohmann::json& counters) {
    for (const auto& [name, value] : counters.items()) {
      if (value.get<uint64_t>() != 0) out << "  " << std::left << std::setw(52) << name << " " << value.get<uint64_t>() << "\n";
    }
  };
  out << "counters (non-zero):\n";
  print(s["counters"]);
  for (const auto& p : s["processes"]) {
    if (!p.contains("counters")) continue;
    out << " " << p["name"].get<std::string>() << ":\n";
    print(p["counters"]);
  }
}

}  // namespace gtpcp::group
