// The group's Recovery value (TS 23.007 §18): one per group, kept in Redis,
// so that every instance of the group and every restart of a process
// announces the same value to peers. It changes only when the peers'
// sessions are really gone: when the group starts on storage that holds
// none of its sessions while no other instance of it runs.
#pragma once

#include <ostream>

#include "common/config/instance.h"
#include "common/group/paths.h"

namespace gtpcp::launcher {

// Decides this start's Recovery, stores it in Redis (when the group
// persists) and in the run directory (Paths::recoveryFile(), which the
// forwarder reads), and says why on `out`. False when the storage cannot
// be read: the Recovery would be unknown.
bool settleRecovery(const config::InstanceConfig& config, const group::Paths& paths, std::ostream& out);

}  // namespace gtpcp::launcher
