// What `gtpcp status` shows and the control channel's status reply
// carries: every process of the group (from its own segment and pid file),
// sessions per worker, ring depths, the gateways' health, the drain and
// routing document in force, and every counter table, as JSON; and the same
// printed for the operator.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/group/process_control.h"

namespace gtpcp::group {

nlohmann::json groupStatus(const ProcessControl& processes);
// Writes what a process did for gtpcp status to `path` whole, through a
// rename: a reader never sees half a file.
void writeStatusFile(const std::string& path, const nlohmann::json& status);
void printStatus(const nlohmann::json& status, std::ostream& out);

}  // namespace gtpcp::group
