// The bgp-watchdog's judgement, apart from what it observes: given the
// instance's health at each check, whether the group's service addresses
// are announced from this host, with which preference, and why.
//
//   unrecoverable or administrative   withdraw at this check
//   recoverable                       withdraw once it lasted withdraw_hold
//   healthy                           announce once it lasted return_hold,
//                                     continuously; damping_hold instead
//                                     when the instance fell ill
//                                     damping_flaps times within
//                                     damping_window (a fall is health
//                                     lost: not the start, not an
//                                     administrative withdrawal)
//
// A start is a return: the route is first announced after return_hold of
// health, so an instance that dies at start never takes traffic.
//
// Single-threaded; both clocks are passed in (CLOCK_MONOTONIC for the
// logic, CLOCK_REALTIME for what the operator reads), so tests drive it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "common/group/bgp_shm.h"

namespace gtpcp::watchdog {

struct BgpDeciderSettings {
  group::BgpPreference preference = group::BgpPreference::kActive;
  uint64_t withdraw_hold_ns = 10'000'000'000;
  uint64_t return_hold_ns = 30'000'000'000;
  uint32_t damping_flaps = 3;
  uint64_t damping_window_ns = 300'000'000'000;
  uint64_t damping_hold_ns = 300'000'000'000;
};

// One check's finding.
struct BgpHealthReport {
  group::BgpHealth health = group::BgpHealth::kHealthy;
  std::string reason;  // empty when healthy
};

class BgpDecider {
 public:
  BgpDecider(const BgpDeciderSettings& settings, uint64_t mono_ns, uint64_t real_ns);

  // A predecessor's decision whose lease still ran when this one started:
  // carried on, so that replacing the bgp-watchdog does not move traffic.
  void adopt(const group::BgpDecision& previous, uint64_t mono_ns);

  // One check. True when the intent or the preference changed.
  bool check(const BgpHealthReport& report, uint64_t mono_ns, uint64_t real_ns);

  const group::BgpDecision& decision() const noexcept { return decision_; }
  uint64_t unhealthySpells() const noexcept { return spells_total_; }
  bool damped() const noexcept { return damped_; }
  // The last decisions, newest last: time, intent, reason.
  nlohmann::json history() const;

 private:
  void change(group::BgpIntent intent, const std::string& reason, uint64_t real_ns);
  uint64_t returnHold(uint64_t mono_ns);

  BgpDeciderSettings settings_;
  group::BgpDecision decision_;
  bool was_healthy_ = false;       // the previous check's finding
  uint64_t healthy_since_ns_ = 0;  // CLOCK_MONOTONIC; meaningful while was_healthy_
  uint64_t unhealthy_since_ns_ = 0;
  std::string last_fault_;         // the reason of the last unhealthy spell
  std::deque<uint64_t> spells_;    // starts of unhealthy spells within the damping window
  uint64_t spells_total_ = 0;
  bool damped_ = false;
  std::deque<nlohmann::json> history_;
};

}  // namespace gtpcp::watchdog
