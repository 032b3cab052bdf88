#include "common/group/segment_view.h"

#include "common/group/bgp_shm.h"
#include "common/group/console_shm.h"
#include "common/group/forwarder_shm.h"
#include "common/group/persister_shm.h"
#include "common/group/watchdog_shm.h"
#include "common/group/worker_shm.h"

namespace gtpcp::group {

const ProcessStatusShm* processStatusOf(const std::string& name, const group::Paths& paths,
                                        std::optional<ring::SharedSegment>& holder) {
  if (name == "forwarder") {
    auto a = attachAs<forwarder::ForwarderShm>(paths.forwarderSegment(), forwarder::kForwarderSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "persister") {
    auto a = attachAs<persister::PersisterShm>(paths.persisterSegment(), persister::kPersisterSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "watchdog") {
    auto a = attachAs<watchdog::WatchdogShm>(paths.watchdogSegment(), watchdog::kWatchdogSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "bgp-watchdog") {
    auto a = attachAs<BgpWatchdogShm>(paths.bgpWatchdogSegment(), kBgpWatchdogSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "bgpd-bridge") {
    auto a = attachAs<BridgeShm>(paths.bridgeSegment(), kBridgeSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  if (name == "console") {
    auto a = attachAs<console::ConsoleShm>(paths.consoleSegment(), console::kConsoleSegmentKind);
    holder = std::move(a.segment);
    return a.shm ? &a.shm->status : nullptr;
  }
  const unsigned index = static_cast<unsigned>(std::stoul(name.substr(std::string("worker-").size())));
  auto a = attachAs<worker::WorkerShmHeader>(paths.workerSegment(index), worker::kWorkerSegmentKind);
  holder = std::move(a.segment);
  return a.shm ? &a.shm->status : nullptr;
}

}  // namespace gtpcp::group
