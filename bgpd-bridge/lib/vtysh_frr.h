// FrrControl through vtysh, the only interface Debian's FRR 8.4 offers bgpd.
// Each call runs vtysh once (about 40 ms here), bounded in time: a vtysh
// that does not answer within the timeout is killed and the call fails.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "frr_control.h"

namespace gtpcp::bridge {

struct VtyshSettings {
  std::string vtysh = "/usr/bin/vtysh";
  std::string vty_socket_dir;  // empty: FRR's default (/var/run/frr)
  std::chrono::milliseconds timeout{5000};
};

class VtyshFrr final : public FrrControl {
 public:
  explicit VtyshFrr(VtyshSettings settings) : settings_(std::move(settings)) {}
  FrrResult<std::string> runningConfig(const std::string& daemon) override;
  FrrResult<void> configure(const std::vector<std::string>& commands) override;
  FrrResult<nlohmann::json> showJson(const std::string& command) override;
  FrrDaemons daemons() override;

 private:
  // `look`: a call that reads only, which gives way when asked to.
  FrrResult<std::string> run(const std::vector<std::string>& commands, bool look);
  VtyshSettings settings_;
};

}  // namespace gtpcp::bridge
