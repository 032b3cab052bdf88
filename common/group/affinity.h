// Pinning a process to a CPU (gtpcp.yaml cpu.forwarder, cpu.workers).
#pragma once

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace gtpcp::group {

// Pins the calling process to `cpu`; nullopt when not pinned on purpose.
// Returns an error sentence, or "" on success.
inline std::string pinToCpu(std::optional<int> cpu) {
  if (!cpu || *cpu < 0) return "";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(*cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "cannot pin to CPU " + std::to_string(*cpu) + ": " + std::strerror(errno);
  return "";
}

}  // namespace gtpcp::group
