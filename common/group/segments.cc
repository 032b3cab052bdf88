#include "common/group/segments.h"

#include <thread>

#include "common/time/clock.h"

namespace gtpcp::group {

std::string workerOwner(uint32_t index) { return "gtpcp-worker --index " + std::to_string(index); }

ring::Result<ring::SharedSegment> attachOwned(const std::string& name, uint32_t kind, std::size_t min_size,
                                              std::string_view owner, std::chrono::milliseconds wait) {
  const uint64_t deadline = monotonicNs() + static_cast<uint64_t>(wait.count()) * 1'000'000;
  for (;;) {
    // Missing (the usual answer of a look with no wait): said without going
    // through the attach, which reports it by an exception inside.
    if (!ring::SharedSegment::exists(name)) {
      if (monotonicNs() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    auto segment = ring::SharedSegment::attach(name, kind);
    if (segment) {
      if (segment->payloadSize() < min_size)
        return ring::fail(ring::Errc::kMismatch, "shared memory " + name + ": " +
                                                     std::to_string(segment->payloadSize()) +
                                                     " octets, this build needs at least " +
                                                     std::to_string(min_size) + " (made by " + std::string(owner) +
                                                     " of another build?)");
      return segment;
    }
    if (segment.error().code != ring::Errc::kNotFound) return tl::unexpected(segment.error());
    if (monotonicNs() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ring::fail(ring::Errc::kNotFound,
                    "shared memory " + name + " does not exist: it is made by " + std::string(owner) +
                        (wait.count() > 0 ? ", which has not made it within " + std::to_string(wait.count()) + " ms"
                                          : ", which has not made it yet"));
}

std::vector<std::string> groupSegments(const Paths& paths, uint32_t workers) {
  std::vector<std::string> names{paths.forwarderSegment(), paths.gatewayTableSegment(), paths.persisterSegment(),
                                 paths.watchdogSegment(), paths.controlSegment(), paths.bgpWatchdogSegment(),
                                 paths.bridgeSegment(), paths.consoleSegment()};
  for (uint32_t w = 0; w < workers; ++w) {
    names.push_back(paths.workerSegment(w));
    names.push_back(paths.workerDoorbell(w));
    for (auto k : {RingKind::kPriority, RingKind::kNew, RingKind::kEgress, RingKind::kPersist, RingKind::kLookup,
                   RingKind::kRestore})
      names.push_back(paths.ring(w, k));
  }
  return names;
}

}  // namespace gtpcp::group
