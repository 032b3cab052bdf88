#include "tests/forwarder/test_messages.h"

#include <utility>

#include "common/gtp/bytes.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"

namespace gtpcp::forwarder::testing {

namespace {
template <class Ie>
Ie digitsIe(const std::string& digits) {
  Ie ie;
  for (char c : digits) ie.digits.push(c);
  return ie;
}
}  // namespace

Subscriber withImsi(std::string imsi, uint32_t teid_c) {
  Subscriber s;
  s.imsi = std::move(imsi);
  s.teid_c = teid_c;
  return s;
}

std::vector<uint8_t> v1Message(gtp::v1::MessageType type, uint32_t teid, uint16_t seq, const Subscriber* subscriber) {
  using namespace gtp::v1;
  std::vector<uint8_t> buf(256);
  Builder b(buf);
  b.begin(type, teid, seq);
  if (subscriber != nullptr) {
    // In ascending type order (TS 29.060 §7.7.0): 2, 17, 133, 154.
    if (!subscriber->imsi.empty()) b.add(digitsIe<Imsi>(subscriber->imsi));
    if (type == MessageType::kCreatePdpContextRequest || type == MessageType::kPduNotificationRequest) {
      b.add(TeidControlPlane{subscriber->teid_c});
      GsnAddress address;
      address.ipv4 = subscriber->sgsn;
      b.add(address);
    }
    if (!subscriber->imeisv.empty()) b.add(digitsIe<ImeiSv>(subscriber->imeisv));
  }
  buf.resize(b.finish()->size());
  return buf;
}

std::vector<uint8_t> createPdpContextRequest(const Subscriber& subscriber, uint32_t teid, uint16_t seq) {
  return v1Message(gtp::v1::MessageType::kCreatePdpContextRequest, teid, seq, &subscriber);
}

std::vector<uint8_t> createSessionRequest(const std::string& imsi, uint32_t sgw_teid, uint32_t seq) {
  using namespace gtp::v2;
  std::vector<uint8_t> buf(256);
  Builder b(buf);
  b.begin(MessageType::kCreateSessionRequest, 0, seq);
  b.add(digitsIe<Imsi>(imsi));
  FTeid f;
  f.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpC);
  f.teid = sgw_teid;
  f.ipv4 = gtp::Ipv4{{127, 0, 0, 11}};
  b.add(f);
  buf.resize(b.finish()->size());
  return buf;
}

void breakIes(std::vector<uint8_t>& message) {
  message.push_back(0x7b);  // TV type 123: assigned to nothing
  gtp::store16(message.data() + 2, static_cast<uint16_t>(gtp::load16(message.data() + 2) + 1));
}

}  // namespace gtpcp::forwarder::testing
