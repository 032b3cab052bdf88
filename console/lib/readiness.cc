#include "readiness.h"

#include "common/group/control_shm.h"
#include "common/group/from_config.h"
#include "common/group/persister_shm.h"
#include "common/group/segment_view.h"
#include "common/time/clock.h"

namespace gtpcp::console {

Readiness readiness(const group::ProcessControl& processes, const std::string& self, uint64_t heartbeat_deadline_ns) {
  Readiness r;
  const group::Paths& paths = processes.paths();
  const uint64_t now = monotonicNs();
  for (const group::ProcessSpec& spec : processes.processes()) {
    if (spec.name == self) continue;
    std::optional<ring::SharedSegment> holder;
    const group::ProcessStatusShm* s = group::processStatusOf(spec.name, paths, holder);
    if (!s || !processes.runningPid(spec.name)) {
      r.reasons.push_back(spec.name + ": not running");
      continue;
    }
    // PROC-A1 (an observer's): pairs with PROC-R1 in the process.
    const auto state = static_cast<group::ProcessState>(s->state.load(std::memory_order_acquire));
    if (state != group::ProcessState::kServing) {
      r.reasons.push_back(spec.name + ": " + group::toString(state));
      continue;
    }
    const uint64_t beat = s->heartbeat_ns.load(std::memory_order_relaxed);
    if (beat == 0 || (beat < now && now - beat > heartbeat_deadline_ns))
      r.reasons.push_back(spec.name + ": no heartbeat for " + std::to_string(beat ? (now - beat) / 1'000'000 : 0) + " ms");
  }
  if (group::persists(processes.config())) {
    auto per = group::attachAs<persister::PersisterShm>(paths.persisterSegment(), persister::kPersisterSegmentKind);
    if (per.shm && per.shm->counters.storage_up.load() == 0)
      r.reasons.push_back("storage: not writable (a channel has no primary for every slot)");
  }
  if (auto seg = ring::SharedSegment::attach(paths.controlSegment(), group::kControlSegmentKind)) {
    const auto& c = *static_cast<const group::GroupControlShm*>(seg->payload());
    if (c.closing.load(std::memory_order_relaxed) != 0) {
      r.reasons.push_back("group: stopping");
    } else if (c.draining.load(std::memory_order_relaxed) != 0) {
      r.reasons.push_back("group: draining (session creations refused)");
    }
  }
  r.ready = r.reasons.empty();
  return r;
}

}  // namespace gtpcp::console
