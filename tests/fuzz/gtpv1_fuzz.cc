// libFuzzer target for the GTPv1-C codec: same promises as gtpv2_fuzz.cc.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/patch.h"
#include "common/gtp/v1/validate.h"

using namespace gtpcp::gtp;
using namespace gtpcp::gtp::v1;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Message m;
  (void)decodeHeader({data, size});
  if (!m.decode({data, size})) return 0;
  for (const Ie& ie : m.ies()) {
    (void)checkIeValue(ie.type, m.value(ie));
    switch (ie.ieType()) {
      case IeType::kImsi: (void)read<Imsi>(m, ie); break;
      case IeType::kEndUserAddress: (void)read<EndUserAddress>(m, ie); break;
      case IeType::kGsnAddress: (void)read<GsnAddress>(m, ie); break;
      case IeType::kMsisdn: (void)read<Msisdn>(m, ie); break;
      case IeType::kQosProfile: (void)read<QosProfile>(m, ie); break;
      case IeType::kUli: (void)read<Uli>(m, ie); break;
      case IeType::kTeidDataII: (void)read<TeidDataII>(m, ie); break;
      default: break;
    }
  }
  for (Sender s : {Sender::kAny, Sender::kSgsn, Sender::kGgsn}) (void)checkMandatory(m, s);

  static std::vector<uint8_t> out(70000);
  auto again = reencode(m, out);
  if (!again || again->size() != size || std::memcmp(again->data(), data, size) != 0) std::abort();

  static std::vector<uint8_t> copy;
  copy.assign(data, data + size);
  std::span<uint8_t> bytes(copy);
  patchTeid(bytes, 1);
  (void)patchSequenceNumber(bytes, 2);
  for (const Ie& ie : m.ies()) {
    if (ie.ieType() == IeType::kTeidDataI || ie.ieType() == IeType::kTeidControlPlane)
      patchTeidIe(bytes, ie, 3);
    if (ie.ieType() == IeType::kGsnAddress) (void)patchGsnAddress(bytes, ie, Ipv4{{10, 0, 0, 1}});
  }
  static Message patched;
  if (!patched.decode(bytes) || patched.ieCount() != m.ieCount()) std::abort();
  return 0;
}
