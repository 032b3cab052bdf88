#include "supervisor.h"

#include <algorithm>

namespace gtpcp::watchdog {

void Supervisor::watch(const std::string& name, uint64_t now_ns) {
  Watched& w = watched_[name];
  w.last_beat_ns = now_ns;
  w.grace_until_ns = now_ns + settings_.start_grace_ns;
}

void Supervisor::heartbeat(const std::string& name, uint32_t pid, uint64_t now_ns) {
  auto it = watched_.find(name);
  if (it == watched_.end()) return;
  Watched& w = it->second;
  w.last_beat_ns = now_ns;
  w.pid = pid;
  // A beat ends the grace period: from now on silence counts.
  w.grace_until_ns = std::min(w.grace_until_ns, now_ns);
  w.detected_ns = 0;
  if (w.consecutive != 0 && now_ns - w.last_restart_ns > settings_.stable_ns) w.consecutive = 0;
}

std::vector<Supervisor::Replacement> Supervisor::due(uint64_t now_ns,
                                                      const std::function<bool(const std::string&)>& alive) {
  std::vector<Replacement> out;
  for (auto& [name, w] : watched_) {
    if (!w.gave_up.empty()) continue;
    std::string reason;
    if (!alive(name)) {
      reason = "exited";
    } else if (now_ns > w.grace_until_ns && now_ns - w.last_beat_ns > settings_.timeout_ns) {
      reason = "silent for " + std::to_string((now_ns - w.last_beat_ns) / 1'000'000) + " ms";
    }
    if (reason.empty()) {  // beating, or within its grace period after a start
      w.detected_ns = 0;
      continue;
    }
    if (w.detected_ns == 0) w.detected_ns = now_ns;
    w.reason = reason;
    if (now_ns < w.next_allowed_ns) continue;
    while (!w.recent.empty() && now_ns - w.recent.front() > settings_.window_ns) w.recent.pop_front();
    if (w.recent.size() >= settings_.max_restarts) {
      w.gave_up = reason + " after " + std::to_string(w.recent.size()) + " restarts within " +
                  std::to_string(settings_.window_ns / 1'000'000'000) + " s; not restarted again";
      continue;
    }
    out.push_back(Replacement{name, reason, w.detected_ns});
  }
  return out;
}

void Supervisor::replaced(const std::string& name, bool, uint64_t now_ns, uint64_t took_ns) {
  auto it = watched_.find(name);
  if (it == watched_.end()) return;
  Watched& w = it->second;
  ++restarts_;
  ++w.total;
  w.took_ns = took_ns;
  w.recent.push_back(now_ns);
  w.last_restart_ns = now_ns;
  w.detected_ns = 0;
  // Each failure in a row waits twice as long before the next attempt.
  const uint32_t shift = std::min<uint32_t>(w.consecutive, 20);
  w.next_allowed_ns = now_ns + std::min(settings_.backoff_max_ns, settings_.backoff_min_ns << shift);
  ++w.consecutive;
  w.last_beat_ns = now_ns;
  w.grace_until_ns = now_ns + settings_.start_grace_ns;
}

void Supervisor::failedWith(const std::string& name, const std::string& error) {
  auto it = watched_.find(name);
  if (it != watched_.end()) it->second.error = error;
}

void Supervisor::restartedElsewhere(const std::string& name, uint64_t now_ns) {
  auto it = watched_.find(name);
  if (it == watched_.end()) return;
  it->second.detected_ns = 0;
  it->second.last_beat_ns = now_ns;
  it->second.grace_until_ns = now_ns + settings_.start_grace_ns;
}

bool Supervisor::givenUp(const std::string& name) const {
  auto it = watched_.find(name);
  return it != watched_.end() && !it->second.gave_up.empty();
}

nlohmann::json Supervisor::status(uint64_t now_ns) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, w] : watched_) {
    nlohmann::json p;
    p["state"] = !w.gave_up.empty() ? "given up" : w.detected_ns != 0 ? "failing" : "watched";
    p["restarts"] = w.total;
    p["last_beat_ms_ago"] = (now_ns - std::min(now_ns, w.last_beat_ns)) / 1'000'000;
    if (!w.reason.empty()) p["last_failure"] = w.reason;
    if (w.total != 0) p["last_replacement_ms"] = w.took_ns / 1'000'000;
    if (!w.gave_up.empty()) p["why"] = w.gave_up;
    if (!w.error.empty()) p["last_error"] = w.error;
    out[name] = std::move(p);
  }
  return out;
}

}  // namespace gtpcp::watchdog
