// The embedded redis-server of `storage.mode: embedded`: a local server on
// loopback with its data in the run directory, started by `gtpcp start`
// before the group's other processes need it and stopped last.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "common/group/process_control.h"

namespace gtpcp::launcher {

// Its process, when the configuration asks for one.
std::optional<group::ProcessSpec> embeddedRedis(const group::ProcessControl& processes);
// Starts it unless it runs, and waits until it answers PING; true when
// there is none to start.
bool startEmbeddedRedis(group::ProcessControl& processes, std::ostream& out, int timeout_ms);

}  // namespace gtpcp::launcher
