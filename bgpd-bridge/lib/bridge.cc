#include "bridge.h"

#include <spdlog/spdlog.h>

#include "common/time/clock.h"

namespace gtpcp::bridge {

using group::BgpIntent;

bool Bridge::apply(const std::vector<std::string>& commands, uint64_t real_ns) {
  if (commands.empty()) return true;
  const uint64_t t0 = monotonicNs();
  counters_.vtysh_calls.add();
  auto r = frr_.configure(commands);
  const uint64_t took_us = (monotonicNs() - t0) / 1000;
  if (!r) {
    counters_.vtysh_failures.add();
    state_.last_error = r.error();
    state_.frr_reachable = false;
    spdlog::error("FRR: {}", r.error());
    return false;
  }
  counters_.changes_applied.add();
  counters_.last_apply_us.set(took_us);
  state_.last_apply_us = took_us;
  state_.applied_realtime_ns = real_ns;
  state_.frr_reachable = true;
  return true;
}

bool Bridge::reconcile(const FrrIntent& want, uint64_t real_ns) {
  counters_.reconciles.add();
  const auto desired = desiredLines(settings_.frr, want);
  std::vector<std::string> commands;
  state_.problems.clear();
  for (const char* daemon : kFrrDaemons) {
    if (std::string(daemon) == "bfdd" && !settings_.frr.bfd) continue;
    counters_.vtysh_calls.add();
    auto text = frr_.runningConfig(daemon);
    if (!text) {
      if (lookFailed(text.error())) {
        state_.frr_reachable = false;
        state_.last_error = text.error();
      }
      return false;
    }
    const auto running = linesOf(parseRunningConfig(*text), daemon);
    if (std::string(daemon) == "bgpd") state_.problems = conflicts(settings_.frr, running);
    const auto more = reconcileCommands(settings_.frr, running, linesOf(desired, daemon));
    commands.insert(commands.end(), more.begin(), more.end());
  }
  state_.frr_reachable = true;
  if (!state_.problems.empty()) {
    for (const auto& p : state_.problems) spdlog::error("FRR: {}", p);
    return false;
  }
  if (!commands.empty()) {
    spdlog::info("FRR: {} command{} to make it hold the group's objects ({})", commands.size(),
                 commands.size() == 1 ? "" : "s", group::toString(want.intent));
    if (!apply(commands, real_ns)) return false;
  }
  state_.applied = want;
  state_.known = true;
  return true;
}

bool Bridge::lookFailed(const std::string& error) {
  if (FrrControl::gaveWay(error)) {
    counters_.looks_given_way.add();
    gave_way_ = true;
    return false;
  }
  counters_.vtysh_failures.add();
  return true;
}

FrrIntent Bridge::wanted(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns,
                         uint64_t mono_ns) const {
  FrrIntent want;  // withdraw, unless a decision with a running lease says otherwise
  const bool fresh = decision && renewed_ns != 0 && mono_ns >= renewed_ns && mono_ns - renewed_ns <= settings_.lease_ns;
  if (decision) {
    want.preference = decision->preference;
    if (fresh) want.intent = decision->intent;
  }
  return want;
}

bool Bridge::wouldChange(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns,
                         uint64_t mono_ns) const {
  return !(wanted(decision, renewed_ns, mono_ns) == working_for_);
}

void Bridge::step(const std::optional<group::BgpDecision>& decision, uint64_t renewed_ns, uint64_t mono_ns,
                  uint64_t real_ns) {
  const FrrIntent want = wanted(decision, renewed_ns, mono_ns);
  const uint64_t generation = decision ? decision->generation : 0;
  working_for_ = want;
  gave_way_ = false;
  const bool expired = decision && want.intent != decision->intent && decision->intent == BgpIntent::kAnnounce;
  if (expired && !state_.lease_expired) {
    counters_.lease_expiries.add();
    spdlog::warn("the bgp-watchdog's decision is {} ms old (lease {} ms): withdrawing", (mono_ns - renewed_ns) / 1'000'000,
                 settings_.lease_ns / 1'000'000);
  }
  state_.lease_expired = expired;

  // FRR's daemons, looked at every daemons_interval (files in /proc), and
  // at every turn while a restart is in progress.
  if (mono_ns >= next_daemons_ns_ || state_.settling || !state_.known) {
    next_daemons_ns_ = mono_ns + settings_.daemons_interval_ns;
    FrrDaemons now = frr_.daemons();
    if (!daemons_.identity.empty() && now.identity != daemons_.identity) {
      counters_.frr_restarts.add();
      spdlog::warn("FRR restarted: reconciling");
      reconcile_due_ = true;
      state_.known = false;
    }
    daemons_ = std::move(now);
  }
  const auto& youngest = daemons_.youngest_ms;
  const bool settled = !youngest || *youngest * 1'000'000 >= settings_.frr_settle_ns;
  if (!settled && !state_.settling) spdlog::info("FRR daemons started {} ms ago: configuring them once they settle", *youngest);
  state_.settling = !settled;

  if (settled && state_.known && !(want == state_.applied)) {
    // The fast path: a decision changes only network statements.
    const auto from = state_.applied;
    if (apply(intentCommands(settings_.frr, from, want), real_ns)) {
      spdlog::info("{} ({}) applied in {} us", group::toString(want.intent), group::toString(want.preference),
                   state_.last_apply_us);
      state_.applied = want;
      state_.applied_generation = generation;
      if (on_applied_) on_applied_();
    }
    reconcile_due_ = true;  // and then check everything
  }
  if (settled && (reconcile_due_ || mono_ns >= next_reconcile_ns_)) {
    if (reconcile(want, real_ns)) reconcile_due_ = false;
    next_reconcile_ns_ = mono_ns + settings_.reconcile_interval_ns;
  }
  if (state_.known && state_.applied == want) state_.applied_generation = generation;
  if (gave_way_) return;  // the next turn has the new decision
  if (mono_ns >= next_state_ns_) readState(mono_ns, real_ns);
}

void Bridge::withdraw(uint64_t real_ns) {
  FrrIntent none;
  none.preference = state_.applied.preference;
  if (state_.known && state_.applied.intent == BgpIntent::kAnnounce) {
    if (apply(intentCommands(settings_.frr, state_.applied, none), real_ns)) state_.applied = none;
  } else if (!state_.known) {
    reconcile(none, real_ns);
  }
}

bool Bridge::announcedInTable() {
  for (const bool v6 : {false, true}) {
    bool any = false;
    for (const auto& a : settings_.frr.service_addresses) any |= isV6(a) == v6;
    if (!any) continue;
    counters_.vtysh_calls.add();
    auto t = frr_.showJson(v6 ? "show bgp ipv6 unicast json" : "show bgp ipv4 unicast json");
    if (!t) {
      lookFailed(t.error());
      return true;  // unknown: no kick on a failed look
    }
    const auto routes = t->value("routes", nlohmann::json::object());
    for (const auto& a : settings_.frr.service_addresses) {
      if (isV6(a) != v6) continue;
      const std::string prefix = prefixOf(a);
      bool valid = false;
      if (routes.contains(prefix) && routes[prefix].is_array()) {
        for (const auto& path : routes[prefix]) valid |= path.value("valid", false);
      }
      if (!valid) return false;
    }
  }
  return true;
}

void Bridge::readState(uint64_t mono_ns, uint64_t real_ns) {
  // Every look first, so that one that gives way leaves the last state
  // whole rather than half read.
  const bool announced = state_.known && state_.applied.intent == BgpIntent::kAnnounce;
  const bool in_table = announced && announcedInTable();
  if (gave_way_) return;
  counters_.vtysh_calls.add();
  auto n = frr_.showJson("show bgp neighbors json");
  if (!n && !lookFailed(n.error())) return;
  FrrResult<nlohmann::json> b = nlohmann::json::array();
  if (settings_.frr.bfd) {
    counters_.vtysh_calls.add();
    b = frr_.showJson("show bfd peers json");
    if (!b && !lookFailed(b.error())) return;
  }
  next_state_ns_ = mono_ns + settings_.state_interval_ns;

  if (announced) {
    state_.in_bgp_table = in_table;
    if (state_.in_bgp_table) {
      missing_since_ns_ = 0;
    } else if (missing_since_ns_ == 0) {
      missing_since_ns_ = mono_ns;
    } else if (mono_ns - missing_since_ns_ >= settings_.kick_after_ns) {
      spdlog::warn("bgpd does not hold the announcement it is configured with: giving it again");
      FrrIntent none;
      none.preference = state_.applied.preference;
      auto commands = intentCommands(settings_.frr, state_.applied, none);
      const auto again = intentCommands(settings_.frr, none, state_.applied);
      commands.insert(commands.end(), again.begin(), again.end());
      if (apply(commands, real_ns)) counters_.announcements_given_again.add();
      missing_since_ns_ = mono_ns;
    }
  } else {
    state_.in_bgp_table = false;
    missing_since_ns_ = 0;
  }
  state_.neighbors = static_cast<uint32_t>(settings_.frr.neighbors.size());
  state_.neighbors_up = 0;
  state_.neighbor_state = nlohmann::json::array();
  for (const auto& want : settings_.frr.neighbors) {
    nlohmann::json e = {{"address", want.address}, {"remote_as", want.remote_as}, {"state", "unknown"}};
    if (n && n->contains(want.address)) {
      const auto& j = (*n)[want.address];
      e["state"] = j.value("bgpState", "unknown");
      if (j.contains("bgpTimerUpMsec")) e["up_ms"] = j["bgpTimerUpMsec"];
      if (j.contains("peerBfdInfo")) e["bfd"] = j["peerBfdInfo"].value("status", "unknown");
      if (e["state"] == "Established") ++state_.neighbors_up;
    }
    state_.neighbor_state.push_back(std::move(e));
  }
  state_.bfd_peers = settings_.frr.bfd ? state_.neighbors : 0;
  state_.bfd_up = 0;
  state_.bfd_state = nlohmann::json::array();
  if (settings_.frr.bfd) {
    if (b && b->is_array()) {
      for (const auto& p : *b) {
        const std::string peer = p.value("peer", "");
        bool ours = false;
        for (const auto& want : settings_.frr.neighbors) ours |= want.address == peer;
        if (!ours) continue;
        nlohmann::json e = {{"peer", peer}, {"status", p.value("status", "unknown")}};
        if (p.contains("uptime")) e["uptime_s"] = p["uptime"];
        if (p.value("status", "") == "up") ++state_.bfd_up;
        state_.bfd_state.push_back(std::move(e));
      }
    }
  }
}

nlohmann::json Bridge::status() const {
  nlohmann::json j = {{"announced", state_.applied.intent == BgpIntent::kAnnounce},
                      {"intent", group::toString(state_.applied.intent)},
                      {"preference", group::toString(state_.applied.preference)},
                      {"known", state_.known},
                      {"in_bgp_table", state_.in_bgp_table},
                      {"lease_expired", state_.lease_expired},
                      {"frr_reachable", state_.frr_reachable},
                      {"applied_ns", state_.applied_realtime_ns},
                      {"last_apply_us", state_.last_apply_us},
                      {"neighbors", state_.neighbor_state},
                      {"bfd_peers", state_.bfd_state},
                      {"problems", state_.problems}};
  if (!state_.last_error.empty()) j["last_error"] = state_.last_error;
  return j;
}

}  // namespace gtpcp::bridge
