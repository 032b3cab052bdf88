#include "common/ring/errors.h"

namespace gtpcp::ring {

std::string_view errcName(Errc code) noexcept {
  switch (code) {
    case Errc::kInvalidArgument: return "invalid_argument";
    case Errc::kNotFound: return "not_found";
    case Errc::kMismatch: return "mismatch";
    case Errc::kNotInitialised: return "not_initialised";
    case Errc::kSystem: return "system";
  }
  return "unknown";
}

}  // namespace gtpcp::ring
