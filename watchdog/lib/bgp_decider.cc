#include "bgp_decider.h"

#include <fmt/format.h>

namespace gtpcp::watchdog {

using group::BgpHealth;
using group::BgpIntent;

namespace {

constexpr std::size_t kHistory = 32;

std::string seconds(uint64_t ns) { return fmt::format("{:.1f} s", double(ns) / 1e9); }

}  // namespace

BgpDecider::BgpDecider(const BgpDeciderSettings& settings, uint64_t mono_ns, uint64_t real_ns)
    : settings_(settings) {
  decision_.intent = BgpIntent::kWithdraw;
  decision_.preference = settings.preference;
  decision_.health = BgpHealth::kHealthy;
  decision_.since_ns = real_ns;
  decision_.reason = "starting: announced once healthy for " + seconds(settings.return_hold_ns);
  (void)mono_ns;
}

void BgpDecider::adopt(const group::BgpDecision& previous, uint64_t mono_ns) {
  decision_.intent = previous.intent;
  decision_.since_ns = previous.since_ns;
  decision_.generation = previous.generation;
  decision_.reason = previous.reason;
  if (previous.intent == BgpIntent::kAnnounce) {
    was_healthy_ = true;
    healthy_since_ns_ = mono_ns;
  }
}

uint64_t BgpDecider::returnHold(uint64_t mono_ns) {
  while (!spells_.empty() && mono_ns - spells_.front() > settings_.damping_window_ns) spells_.pop_front();
  const bool damp = settings_.damping_flaps > 0 && spells_.size() >= settings_.damping_flaps;
  damped_ = damp;
  return damp ? std::max(settings_.damping_hold_ns, settings_.return_hold_ns) : settings_.return_hold_ns;
}

void BgpDecider::change(BgpIntent intent, const std::string& reason, uint64_t real_ns) {
  decision_.intent = intent;
  decision_.since_ns = real_ns;
  decision_.reason = reason;
  ++decision_.generation;
  history_.push_back({{"at_ns", real_ns}, {"intent", group::toString(intent)}, {"reason", reason}});
  if (history_.size() > kHistory) history_.pop_front();
}

bool BgpDecider::check(const BgpHealthReport& report, uint64_t mono_ns, uint64_t real_ns) {
  const auto before = decision_;
  decision_.health = report.health;
  decision_.announce_at_ns = 0;
  decision_.withdraw_at_ns = 0;
  const auto realAt = [&](uint64_t mono_at) { return real_ns + (mono_at > mono_ns ? mono_at - mono_ns : 0); };

  if (report.health == BgpHealth::kHealthy) {
    if (!was_healthy_) healthy_since_ns_ = mono_ns;
    was_healthy_ = true;
    unhealthy_since_ns_ = 0;
    if (decision_.intent == BgpIntent::kWithdraw) {
      const uint64_t hold = returnHold(mono_ns);
      const uint64_t healthy_for = mono_ns - healthy_since_ns_;
      if (healthy_for >= hold) {
        change(BgpIntent::kAnnounce, "healthy for " + seconds(healthy_for), real_ns);
      } else {
        decision_.announce_at_ns = realAt(healthy_since_ns_ + hold);
        const std::string why = last_fault_.empty() ? "starting" : "withdrawn after: " + last_fault_;
        decision_.reason = why + "; healthy again, announced after " + seconds(hold) + " of health" +
                           (damped_ ? " (damped: " + std::to_string(spells_.size()) + " unhealthy spells within " +
                                          seconds(settings_.damping_window_ns) + ")"
                                    : "");
      }
    }
  } else {
    if (was_healthy_ || unhealthy_since_ns_ == 0) {
      unhealthy_since_ns_ = mono_ns;
      ++spells_total_;
      // A flap is health lost: neither the start (not healthy yet) nor an
      // operator's switchover or stop is one, so a planned switchover and
      // return is never damped.
      if (was_healthy_ && report.health != BgpHealth::kAdministrative) spells_.push_back(mono_ns);
    }
    was_healthy_ = false;
    last_fault_ = report.reason;
    if (decision_.intent == BgpIntent::kAnnounce) {
      const bool at_once = report.health != BgpHealth::kRecoverable;
      const uint64_t ill_for = mono_ns - unhealthy_since_ns_;
      if (at_once || ill_for >= settings_.withdraw_hold_ns) {
        change(BgpIntent::kWithdraw,
               std::string(group::toString(report.health)) + ": " + report.reason +
                   (at_once ? "" : " (for " + seconds(ill_for) + ")"),
               real_ns);
      } else {
        decision_.withdraw_at_ns = realAt(unhealthy_since_ns_ + settings_.withdraw_hold_ns);
        decision_.reason = "announced; recoverable fault for " + seconds(ill_for) + ", withdrawn after " +
                           seconds(settings_.withdraw_hold_ns) + ": " + report.reason;
      }
    } else {
      decision_.reason = std::string("withdrawn: ") + group::toString(report.health) + ": " + report.reason;
    }
  }
  return decision_.intent != before.intent || decision_.preference != before.preference;
}

nlohmann::json BgpDecider::history() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : history_) out.push_back(h);
  return out;
}

}  // namespace gtpcp::watchdog
