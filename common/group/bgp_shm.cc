#include "common/group/bgp_shm.h"

namespace gtpcp::group {

const char* toString(BgpIntent v) noexcept { return v == BgpIntent::kAnnounce ? "announce" : "withdraw"; }

const char* toString(BgpPreference v) noexcept { return v == BgpPreference::kStandby ? "standby" : "active"; }

const char* toString(BgpHealth v) noexcept {
  switch (v) {
    case BgpHealth::kHealthy: return "healthy";
    case BgpHealth::kRecoverable: return "recoverable";
    case BgpHealth::kUnrecoverable: return "unrecoverable";
    case BgpHealth::kAdministrative: return "administrative";
  }
  return "unknown";
}

}  // namespace gtpcp::group
