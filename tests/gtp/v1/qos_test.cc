// Capping the maximum bit rates of a GTPv1 QoS Profile value in place
// (v1/qos.h), against values written out by hand from TS 24.008 §10.5.6.5:
// the base octets, the extended and extended-2 octets, values too short to
// carry a rate, "subscribed" rates, and the largest-rate-not-above-the-cap
// rule over the whole range.
#include "common/gtp/v1/qos.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::fromHex;
using testing::toHex;

// Value octets (index: 24.008 octet):
//   0 ARP | 1..5: octets 3-7 | 6 max UL (8) | 7 max DL (9) | 8..11: octets 10-13 |
//   12: octet 14 | 13 max DL ext (15) | 14 | 15 max UL ext (17) | 16 |
//   17 max DL ext-2 (19) | 18 | 19 max UL ext-2 (21) | 20
// A R99 profile of 2048 kbps up, 8640 kbps down, octets 3..13.
constexpr const char* kBase = "02 23 92 1f 73 96 97 fe 74 4b ff ff";
// Up to octet 17: 5760 kbps up, 42 Mbps down (octet 15 = 0x64).
constexpr const char* kExtended = "02 23 92 1f 73 96 d1 fe 74 4b ff ff 00 64 00 00";
// Every octet (up to 22): 500 Mbps up (octet 21 = 0x3d), 1 Gbps down (octet 19 = 0x6f).
constexpr const char* kExtended2 = "02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 6f 00 3d 00";

struct Capped {
  bool changed;
  std::string hex;
};

Capped cap(const char* value, std::optional<uint32_t> uplink, std::optional<uint32_t> downlink) {
  std::vector<uint8_t> v = fromHex(value);
  const std::size_t size = v.size();
  const bool changed = capMaxBitrate(v, uplink, downlink);
  EXPECT_EQ(v.size(), size);
  return Capped{changed, toHex(v)};
}

std::string hex(const char* spaced) { return toHex(fromHex(spaced)); }

MaxBitrate read(const char* value) { return readMaxBitrate(fromHex(value)); }

TEST(V1QosCap, ReadsTheRatesOfEachEncoding) {
  EXPECT_EQ(read(kBase).uplink_kbps, 2048u);
  EXPECT_EQ(read(kBase).downlink_kbps, 8640u);
  EXPECT_EQ(read(kExtended).uplink_kbps, 5760u);
  EXPECT_EQ(read(kExtended).downlink_kbps, 42'000u);
  EXPECT_EQ(read(kExtended2).uplink_kbps, 500'000u);
  EXPECT_EQ(read(kExtended2).downlink_kbps, 1'000'000u);
  EXPECT_EQ(read("02 23 92 1f 73 96 3f 40").uplink_kbps, 63u);
  EXPECT_EQ(read("02 23 92 1f 73 96 3f 40").downlink_kbps, 64u);
  EXPECT_EQ(read("02 23 92 1f 73 96 7f 80").uplink_kbps, 568u);
  EXPECT_EQ(read("02 23 92 1f 73 96 7f 80").downlink_kbps, 576u);
  EXPECT_EQ(read("02 23 92 1f 73 96 ff 01").uplink_kbps, 0u);  // 0xff: 0 kbps
  EXPECT_EQ(read("02 23 92 1f 73 96 ff 01").downlink_kbps, 1u);
}

TEST(V1QosCap, LowersTheBaseOctetsToTheLargestRateNotAboveTheCap) {
  // 1000 kbps: 576 + 6 * 64 = 960 (0x86); 4000 kbps: 576 + 53 * 64 = 3968 (0xb5).
  const Capped c = cap(kBase, 1000, 4000);
  EXPECT_TRUE(c.changed);
  EXPECT_EQ(c.hex, hex("02 23 92 1f 73 96 86 b5 74 4b ff ff"));
  // One direction only.
  EXPECT_EQ(cap(kBase, std::nullopt, 4000).hex, hex("02 23 92 1f 73 96 97 b5 74 4b ff ff"));
  EXPECT_EQ(cap(kBase, 1000, std::nullopt).hex, hex("02 23 92 1f 73 96 86 fe 74 4b ff ff"));
}

TEST(V1QosCap, LeavesARateAtOrBelowItsCapAlone) {
  for (const auto& [up, down] : {std::pair<std::optional<uint32_t>, std::optional<uint32_t>>{2048, 8640},
                                 {2049, 10'000'000},
                                 {std::nullopt, std::nullopt},
                                 {std::nullopt, 8640}}) {
    const Capped c = cap(kBase, up, down);
    EXPECT_FALSE(c.changed);
    EXPECT_EQ(c.hex, hex(kBase));
  }
}

TEST(V1QosCap, EncodesEachStepOfTheBaseOctet) {
  // The uplink octet starts at 8640 kbps (0xfe); cap -> code.
  const std::pair<uint32_t, uint8_t> steps[] = {
      {0, 0xff},   {1, 0x01},   {63, 0x3f},  {64, 0x40},  {71, 0x40},  {72, 0x41},   {100, 0x44},
      {568, 0x7f}, {575, 0x7f}, {576, 0x80}, {639, 0x80}, {640, 0x81}, {8639, 0xfd},
  };
  for (const auto& [kbps, code] : steps) {
    std::vector<uint8_t> v = fromHex("02 23 92 1f 73 96 fe fe");
    EXPECT_TRUE(capMaxBitrate(v, kbps, std::nullopt)) << kbps;
    EXPECT_EQ(v[6], code) << kbps;
    EXPECT_EQ(v[7], 0xfe) << kbps;
  }
}

TEST(V1QosCap, UsesTheExtendedOctetsWhenTheValueHasThem) {
  // 42 Mbps down: 21 Mbps is 16 + 5 Mbps (0x4f), 12 Mbps is 8600 + 34 * 100 kbps (0x22).
  EXPECT_EQ(cap(kExtended, std::nullopt, 21'000).hex, hex("02 23 92 1f 73 96 d1 fe 74 4b ff ff 00 4f 00 00"));
  EXPECT_EQ(cap(kExtended, std::nullopt, 16'500).hex, hex("02 23 92 1f 73 96 d1 fe 74 4b ff ff 00 4a 00 00"));
  EXPECT_EQ(cap(kExtended, std::nullopt, 12'000).hex, hex("02 23 92 1f 73 96 d1 fe 74 4b ff ff 00 22 00 00"));
  // Below 8700 kbps the base octet carries it and the extended octet says so (0).
  EXPECT_EQ(cap(kExtended, std::nullopt, 8650).hex, hex("02 23 92 1f 73 96 d1 fe 74 4b ff ff 00 00 00 00"));
  EXPECT_EQ(cap(kExtended, std::nullopt, 5000).hex, hex("02 23 92 1f 73 96 d1 c5 74 4b ff ff 00 00 00 00"));
  // 5760 kbps up: within 9000, above 5000 (0xc5: 4992).
  EXPECT_FALSE(cap(kExtended, 9000, std::nullopt).changed);
  EXPECT_EQ(cap(kExtended, 5000, std::nullopt).hex, hex("02 23 92 1f 73 96 c5 fe 74 4b ff ff 00 64 00 00"));
}

TEST(V1QosCap, UsesTheExtended2OctetsWhenTheValueHasThem) {
  // 1 Gbps down: 300 Mbps is 256 + 11 * 4 (0x0b); 258 Mbps is 256 Mbps,
  // extended 0xfa with extended-2 0; 200 Mbps is 128 + 36 * 2 (extended 0xde).
  EXPECT_EQ(cap(kExtended2, std::nullopt, 300'000).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 0b 00 3d 00"));
  EXPECT_EQ(cap(kExtended2, std::nullopt, 258'000).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 00 00 3d 00"));
  EXPECT_EQ(cap(kExtended2, std::nullopt, 200'000).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 de 00 fa 00 00 00 3d 00"));
  EXPECT_FALSE(cap(kExtended2, std::nullopt, 2'345'678).changed);
  // 500 Mbps up: 100 Mbps (extended 16 + 84: 0x9e), 10 Mbps (extended 0x0e),
  // 1000 kbps (base 0x86): the octets after the one in use are zeroed.
  EXPECT_EQ(cap(kExtended2, 100'000, std::nullopt).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 9e 00 6f 00 00 00"));
  EXPECT_EQ(cap(kExtended2, 10'000, std::nullopt).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 0e 00 6f 00 00 00"));
  EXPECT_EQ(cap(kExtended2, 1000, 2'345'678).hex,
            hex("02 23 92 1f 73 96 86 fe 74 4b ff ff 00 fa 00 00 00 6f 00 00 00"));
  // 10 Gbps (0xf6) under 9,999,999 kbps: 1500 + 84 * 100 Mbps (0xf5).
  EXPECT_EQ(cap("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 f6 00 3d 00", std::nullopt, 9'999'999).hex,
            hex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 f5 00 3d 00"));
}

TEST(V1QosCap, LeavesAValueTooShortForARateAlone) {
  // A R97/98 profile (octets 3-5) has no bit rates.
  const Capped r97 = cap("02 23 92 1f", 1, 1);
  EXPECT_FALSE(r97.changed);
  EXPECT_EQ(r97.hex, hex("02 23 92 1f"));
  EXPECT_FALSE(read("02 23 92 1f").uplink_kbps);
  EXPECT_FALSE(cap("", 1, 1).changed);
  // A value that ends after the uplink octet: the uplink is capped, the downlink absent.
  const Capped half = cap("02 23 92 1f 73 96 97", 1000, 1000);
  EXPECT_TRUE(half.changed);
  EXPECT_EQ(half.hex, hex("02 23 92 1f 73 96 86"));
  EXPECT_FALSE(read("02 23 92 1f 73 96 97").downlink_kbps);
  // Extended downlink (octet 15) but no extended uplink (octet 17): 8640 kbps at most up.
  EXPECT_FALSE(cap("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 64", 9000, std::nullopt).changed);
}

TEST(V1QosCap, LeavesSubscribedAndZeroRatesAlone) {
  const Capped subscribed = cap("02 23 92 1f 73 96 00 00 74 4b ff ff", 1, 1);
  EXPECT_FALSE(subscribed.changed);
  EXPECT_FALSE(read("02 23 92 1f 73 96 00 00").uplink_kbps);
  EXPECT_FALSE(cap("02 23 92 1f 73 96 ff ff", 0, 0).changed);
}

// Every rate 24.008 can state, from its formulas (kbps).
std::vector<uint32_t> representableRates() {
  std::vector<uint32_t> out = {0};
  for (uint32_t v = 1; v <= 0x3f; ++v) out.push_back(v);
  for (uint32_t v = 0x40; v <= 0x7f; ++v) out.push_back(64 + (v - 0x40) * 8);
  for (uint32_t v = 0x80; v <= 0xfe; ++v) out.push_back(576 + (v - 0x80) * 64);
  for (uint32_t v = 0x01; v <= 0x4a; ++v) out.push_back(8600 + v * 100);
  for (uint32_t v = 0x4b; v <= 0xba; ++v) out.push_back(16'000 + (v - 0x4a) * 1000);
  for (uint32_t v = 0xbb; v <= 0xfa; ++v) out.push_back(128'000 + (v - 0xba) * 2000);
  for (uint32_t v = 0x01; v <= 0x3d; ++v) out.push_back((256 + v * 4) * 1000);
  for (uint32_t v = 0x3e; v <= 0xa1; ++v) out.push_back((500 + (v - 0x3d) * 10) * 1000);
  for (uint32_t v = 0xa2; v <= 0xf6; ++v) out.push_back((1500 + (v - 0xa1) * 100) * 1000);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(V1QosCap, EveryCapGivesTheLargestRepresentableRateNotAboveIt) {
  const std::vector<uint32_t> rates = representableRates();
  // Every representable rate, and the rates on either side of it.
  std::vector<uint32_t> caps;
  for (uint32_t r : rates)
    for (uint32_t c : {r == 0 ? 0 : r - 1, r, r + 1}) caps.push_back(c);
  for (uint32_t c : caps) {
    if (c >= 10'000'000) continue;  // the starting rate: nothing to lower
    std::vector<uint8_t> v = fromHex("02 23 92 1f 73 96 fe fe 74 4b ff ff 00 fa 00 fa 00 f6 00 f6 00");
    ASSERT_TRUE(capMaxBitrate(v, c, c)) << c;
    const uint32_t expected = *(std::upper_bound(rates.begin(), rates.end(), c) - 1);
    const MaxBitrate got = readMaxBitrate(v);
    EXPECT_EQ(got.uplink_kbps, expected) << c;
    EXPECT_EQ(got.downlink_kbps, expected) << c;
  }
}

}  // namespace
}  // namespace gtpcp::gtp::v1
