#include "common/group/session_identity.h"

#include <string_view>

#include "common/gtp/v2/ies.h"
#include "common/partition.h"

namespace gtpcp::group {

uint16_t partitionOfCreateSession(const gtp::v2::Message& request) noexcept {
  using namespace gtp::v2;
  if (auto imsi = readFirst<Imsi>(request)) return partitionOf(imsi->digits.view());
  if (auto mei = readFirst<Mei>(request)) return partitionOf(mei->digits.view());
  if (const Ie* f = request.find(IeType::kFTeid, 0)) {
    auto raw = request.value(*f);
    return partitionOf(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
  }
  return 0;
}

}  // namespace gtpcp::group
