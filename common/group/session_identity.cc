#include "common/group/session_identity.h"

#include <cstring>
#include <string_view>

#include "common/gtp/v1/ies.h"
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

uint16_t partitionOfCreatePdpContext(const gtp::v1::Message& request) noexcept {
  using namespace gtp::v1;
  if (auto imsi = readNth<Imsi>(request)) return partitionOf(imsi->digits.view());
  if (auto imei = readNth<ImeiSv>(request); imei && imei->digits.size != 0) return partitionOf(imei->digits.view());
  // TEID Control Plane (4 octets) and an IPv4 or IPv6 address (4 or 16).
  char key[4 + 16];
  std::size_t size = 0;
  if (const Ie* teid = request.find(IeType::kTeidControlPlane)) {
    auto v = request.value(*teid);
    std::memcpy(key, v.data(), v.size());
    size = v.size();
  }
  if (const Ie* address = request.find(IeType::kGsnAddress); address != nullptr && address->length <= 16) {
    auto v = request.value(*address);
    std::memcpy(key + size, v.data(), v.size());
    size += v.size();
  }
  return size == 0 ? 0 : partitionOf(std::string_view(key, size));
}

}  // namespace gtpcp::group
