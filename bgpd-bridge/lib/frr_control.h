// The bridge's seam toward FRR. Debian's FRR 8.4 has no management API for
// bgpd, so the real implementation (vtysh_frr.h) runs vtysh; the unit tests
// of the bridge's logic use a fake.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

namespace gtpcp::bridge {

template <class T>
using FrrResult = tl::expected<T, std::string>;

struct FrrDaemons {
  // "zebra" -> "pid:start time": a change means FRR restarted and lost what
  // it was told.
  std::map<std::string, std::string> identity;
  std::optional<uint64_t> youngest_ms;  // nullopt: unknown
};

class FrrControl {
 public:
  virtual ~FrrControl() = default;
  // `show running-config DAEMON` ("bgpd", "staticd", "bfdd"): one daemon's
  // own configuration. vtysh's combined `show running-config` shows an
  // object once if any daemon has it, which hides a daemon that lost it
  // (one that was down when the object was given).
  virtual FrrResult<std::string> runningConfig(const std::string& daemon) = 0;
  // `configure terminal`, the commands in order, `end`, in one session: FRR
  // applies each line as it reads it, so nothing is reloaded and no BGP
  // session is reset by what the bridge does not touch.
  virtual FrrResult<void> configure(const std::vector<std::string>& commands) = 0;
  // A `show ... json` command's answer.
  virtual FrrResult<nlohmann::json> showJson(const std::string& command) = 0;
  // Who the daemons are, and how long the youngest has run.
  virtual FrrDaemons daemons() = 0;

  // Called at least every kWaitingPeriodMs while a call waits on FRR: a slow
  // vtysh (seconds on a loaded host, bounded by its timeout) must not look
  // like a hung bridge to the thread watchdog, so the caller beats from here.
  // Its answer true asks a look (runningConfig, showJson) to give way: it
  // ends at once with kGaveWay, because a withdraw waiting behind a slow
  // look at FRR's state would reach peers seconds late. A change
  // (configure) never gives way: FRR would hold half of it.
  static constexpr int kWaitingPeriodMs = 100;
  static constexpr const char* kGaveWay = "gave way to a new decision";
  void onWaiting(std::function<bool()> f) { waiting_ = std::move(f); }
  static bool gaveWay(const std::string& error) { return error == kGaveWay; }

 protected:
  // Whether the call should give way.
  bool waiting() { return waiting_ ? waiting_() : false; }

 private:
  std::function<bool()> waiting_;
};

}  // namespace gtpcp::bridge
