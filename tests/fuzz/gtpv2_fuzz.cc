// libFuzzer target for the GTPv2-C codec.
//
// Beyond "does not crash", it checks the codec's promises on every input that
// decodes: re-encoding gives the same bytes, every typed view and the
// mandatory-IE check return (value or error) without touching memory outside
// the datagram, and the in-place patches keep the message decodable.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/patch.h"
#include "common/gtp/v2/validate.h"

using namespace gtpcp::gtp;
using namespace gtpcp::gtp::v2;

namespace {

void readAll(const Message& m) {
  for (const Ie& ie : m.ies()) {
    (void)checkIeValue(ie.type, m.value(ie));
    switch (ie.ieType()) {
      case IeType::kImsi: (void)read<Imsi>(m, ie); break;
      case IeType::kMsisdn: (void)read<Msisdn>(m, ie); break;
      case IeType::kMei: (void)read<Mei>(m, ie); break;
      case IeType::kApn: (void)read<Apn>(m, ie); break;
      case IeType::kRecovery: (void)read<Recovery>(m, ie); break;
      case IeType::kEbi: (void)read<Ebi>(m, ie); break;
      case IeType::kUli: (void)read<Uli>(m, ie); break;
      case IeType::kFTeid: (void)read<FTeid>(m, ie); break;
      case IeType::kCause: (void)read<CauseIe>(m, ie); break;
      case IeType::kPaa: (void)read<Paa>(m, ie); break;
      case IeType::kIndication: (void)read<Indication>(m, ie); break;
      case IeType::kBearerQos: (void)read<BearerQos>(m, ie); break;
      case IeType::kFqCsid: (void)read<FqCsid>(m, ie); break;
      case IeType::kPrivateExtension: (void)read<PrivateExtension>(m, ie); break;
      case IeType::kServingNetwork: (void)read<ServingNetwork>(m, ie); break;
      case IeType::kIpAddress: (void)read<IpAddress>(m, ie); break;
      default: break;
    }
  }
  (void)checkMandatory(m);
}

void roundTrip(const Message& m) {
  static std::vector<uint8_t> out(70000);
  auto again = reencode(m, out);
  if (!again || again->size() != m.bytes().size() ||
      std::memcmp(again->data(), m.bytes().data(), again->size()) != 0) {
    std::abort();  // the decoder lost or invented octets
  }
}

// Patches the first message of the datagram in a copy; the datagram must
// still decode to the same structure.
void patchAll(const Datagram& d, const uint8_t* data, size_t size) {
  static std::vector<uint8_t> copy;
  copy.assign(data, data + size);
  const Message& m = d.message;
  std::span<uint8_t> bytes = std::span<uint8_t>(copy).first(m.bytes().size());
  (void)patchTeid(bytes, 0x11223344);
  patchSequenceNumber(bytes, 0xabcdef);
  for (const Ie& ie : m.ies()) {
    if (ie.ieType() == IeType::kFTeid && FTeid::decode(m.value(ie))) {
      patchFTeidTeid(bytes, ie, 0x55667788);
      (void)patchFTeid(bytes, ie, 1, Ipv4{{127, 0, 0, 1}});
      (void)patchFTeidIpv6(bytes, ie, Ipv6{});
    }
  }
  static Datagram again;
  if (!again.decode(copy) || again.message.ieCount() != m.ieCount()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Datagram d;
  (void)decodeHeader({data, size});
  if (!d.decode({data, size})) return 0;
  readAll(d.message);
  patchAll(d, data, size);
  if (!d.has_piggybacked) roundTrip(d.message);
  else readAll(d.piggybacked);
  return 0;
}
