// Codec benchmarks: what the worker does per datagram.
//
//   decode      the IE index of one message (Datagram::decode)
//   full decode decode + mandatory-IE check + every typed view the proxy reads
//   patch       header TEID + sequence number + one control F-TEID (TEID and
//               address), in place
//
// Inputs are a Create Session Request captured from a real S8 network (Magma
// inbound roaming trace) and S5/S8 Modify Bearer Requests built as an SGW
// sends them on a handover (ULI, Serving Network, RAT Type, Indication, sender
// F-TEID, one bearer context). Run: ./gtpcp bench (or build/release/bin/
// gtpcp-bench-codec --benchmark_repetitions=5).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/gtp/v1/message.h"
#include "common/gtp/v1/patch.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/patch.h"
#include "common/gtp/v2/validate.h"

using namespace gtpcp::gtp;

namespace {

std::vector<uint8_t> fromHex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::strtoul(std::string(hex.substr(i, 2)).c_str(), nullptr, 16)));
  return out;
}

// Magma inbound_roaming_01 capture, frame 39: Create Session Request on S8.
constexpr std::string_view kCreateSessionRequest =
    "482000f10000000000000b000100080000010200000060f44c000400002100f04b000800044971357367000056"
    "000d00180011000001001100000000015300030000f11052000100064d00070000000000000000570009008600"
    "000001ac10010c4700050004726f616d800001000063000100014f00050001000000007f000100004800080002"
    "cd29c005c81a404e0027008080211001010010810600000000830600000000000a00000d00000500001100001000"
    "001a01055d002c004900010005570009028400000001ac10140450001600650900000000000000000000000000"
    "000000000000007200020000005f0002000000";

// GTPv1 Create PDP Context Request (zeek/zeek gtp_create_pdp_ctx.pcap, frame 2).
constexpr std::string_view kCreatePdpContextRequest =
    "3210008900000000130b00000264004001000001f10364f060fffeff0eb00ffd1032f02bf91132f02bf9140580"
    "0002f1218300070665657465737484001a8080211601010016030600000000810600000000830600000000850004"
    "c0a96401850004c0a9640186000891685122010001f187000c021b421f738c4040744b4040970001029900022320"
    "ff00052aab020103";

std::vector<uint8_t> modifyBearerRequest() {
  using namespace gtpcp::gtp::v2;
  std::vector<uint8_t> buf(512);
  Builder b(buf);
  b.begin(MessageType::kModifyBearerRequest, 0x8000a1b2, 0x1234);
  Indication ind;
  ind.size = 3;
  b.add(ind);
  Uli uli;
  Plmn plmn = *makePlmn("001", "01");
  uli.tai = Uli::Tai{plmn, 0x0001};
  uli.ecgi = Uli::Ecgi{plmn, 0x0000101};
  b.add(uli);
  b.add(ServingNetwork{plmn});
  b.add(RatType{6});
  FTeid sender;
  sender.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpC);
  sender.teid = 0x0000abcd;
  sender.ipv4 = Ipv4{{10, 0, 0, 1}};
  b.add(sender);
  b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{5});
  b.endGrouped();
  b.add(UeTimeZone{0x40, 0});
  auto out = b.finish();
  if (!out) std::abort();
  buf.resize(out->size());
  return buf;
}

template <class T>
void readIf(const v2::Message& m, const v2::Ie& ie) {
  auto r = v2::read<T>(m, ie);
  benchmark::DoNotOptimize(r);
}

// What a worker reads of a message: every IE that has a typed view.
void readTyped(const v2::Message& m) {
  using namespace gtpcp::gtp::v2;
  for (const Ie& ie : m.ies()) {
    switch (ie.ieType()) {
      case IeType::kImsi: readIf<Imsi>(m, ie); break;
      case IeType::kMsisdn: readIf<Msisdn>(m, ie); break;
      case IeType::kMei: readIf<Mei>(m, ie); break;
      case IeType::kApn: readIf<Apn>(m, ie); break;
      case IeType::kUli: readIf<Uli>(m, ie); break;
      case IeType::kServingNetwork: readIf<ServingNetwork>(m, ie); break;
      case IeType::kRatType: readIf<RatType>(m, ie); break;
      case IeType::kFTeid: readIf<FTeid>(m, ie); break;
      case IeType::kEbi: readIf<Ebi>(m, ie); break;
      case IeType::kAmbr: readIf<Ambr>(m, ie); break;
      case IeType::kPaa: readIf<Paa>(m, ie); break;
      case IeType::kBearerQos: readIf<BearerQos>(m, ie); break;
      case IeType::kIndication: readIf<Indication>(m, ie); break;
      case IeType::kUeTimeZone: readIf<UeTimeZone>(m, ie); break;
      default: break;
    }
  }
}

void BM_V2DecodeCreateSessionRequest(benchmark::State& state) {
  const auto bytes = fromHex(kCreateSessionRequest);
  static v2::Datagram d;
  for (auto _ : state) {
    auto r = d.decode(bytes);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_V2DecodeCreateSessionRequest);

void BM_V2FullDecodeCreateSessionRequest(benchmark::State& state) {
  const auto bytes = fromHex(kCreateSessionRequest);
  static v2::Datagram d;
  for (auto _ : state) {
    auto r = d.decode(bytes);
    auto ok = v2::checkMandatory(d.message);
    readTyped(d.message);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_V2FullDecodeCreateSessionRequest);

void BM_V2DecodeModifyBearerRequest(benchmark::State& state) {
  const auto bytes = modifyBearerRequest();
  static v2::Datagram d;
  for (auto _ : state) {
    auto r = d.decode(bytes);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_V2DecodeModifyBearerRequest);

void BM_V2FullDecodeModifyBearerRequest(benchmark::State& state) {
  const auto bytes = modifyBearerRequest();
  static v2::Datagram d;
  for (auto _ : state) {
    auto r = d.decode(bytes);
    auto ok = v2::checkMandatory(d.message);
    readTyped(d.message);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_V2FullDecodeModifyBearerRequest);

// Header TEID + sequence number + sender F-TEID (TEID and IPv4), located by a
// decode done outside the loop, as the worker has it.
void BM_V2PatchTeidSequenceFTeid(benchmark::State& state) {
  auto bytes = modifyBearerRequest();
  static v2::Message m;
  if (!m.decode(bytes)) std::abort();
  const v2::Ie* fteid = m.find(v2::IeType::kFTeid);
  if (fteid == nullptr) std::abort();
  const Ipv4 proxy{{192, 0, 2, 1}};
  uint32_t n = 1;
  std::span<uint8_t> span(bytes);
  for (auto _ : state) {
    v2::patchTeid(span, n);
    v2::patchSequenceNumber(span, n);
    bool ok = v2::patchFTeid(span, *fteid, n, proxy);
    benchmark::DoNotOptimize(ok);
    benchmark::ClobberMemory();
    ++n;
  }
}
BENCHMARK(BM_V2PatchTeidSequenceFTeid);

void BM_V1DecodeCreatePdpContextRequest(benchmark::State& state) {
  const auto bytes = fromHex(kCreatePdpContextRequest);
  static v1::Message m;
  for (auto _ : state) {
    auto r = m.decode(bytes);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_V1DecodeCreatePdpContextRequest);

void BM_V1PatchTeidSequenceTeidCp(benchmark::State& state) {
  auto bytes = fromHex(kCreatePdpContextRequest);
  static v1::Message m;
  if (!m.decode(bytes)) std::abort();
  const v1::Ie* teid_cp = m.find(v1::IeType::kTeidControlPlane);
  const v1::Ie* gsn = m.find(v1::IeType::kGsnAddress);
  if (teid_cp == nullptr || gsn == nullptr) std::abort();
  const Ipv4 proxy{{192, 0, 2, 1}};
  uint32_t n = 1;
  std::span<uint8_t> span(bytes);
  for (auto _ : state) {
    v1::patchTeid(span, n);
    (void)v1::patchSequenceNumber(span, static_cast<uint16_t>(n));
    v1::patchTeidIe(span, *teid_cp, n);
    bool ok = v1::patchGsnAddress(span, *gsn, proxy);
    benchmark::DoNotOptimize(ok);
    benchmark::ClobberMemory();
    ++n;
  }
}
BENCHMARK(BM_V1PatchTeidSequenceTeidCp);

}  // namespace

BENCHMARK_MAIN();
