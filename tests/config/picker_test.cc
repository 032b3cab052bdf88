// GatewayPicker: smooth weighted round-robin inside a pool, skipping the
// gateways that are down (common/config/gateway_picker.h).
#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config/gateway_picker.h"
#include "common/config/routing.h"

namespace gtpcp::config {
namespace {

// Pool "a" holds gateways with `weights`; pool "b" holds one gateway, so
// that pool a's indices start at 0 and pool b's after them.
RoutingTable tableWithWeights(const std::vector<int>& weights) {
  std::string text = "version: 1\npools:\n  a:\n    gateways:\n";
  for (std::size_t i = 0; i < weights.size(); ++i)
    text += "      - {name: g" + std::to_string(i) + ", address: 10.0.0." + std::to_string(i + 1) +
            ", weight: " + std::to_string(weights[i]) + "}\n";
  text += "  b:\n    gateways: [{name: solo, address: 10.0.1.1}]\n";
  text += "rules: [{name: r, pool: a}]\n";
  auto r = parseRoutingDocument(text, "routing.yaml");
  EXPECT_TRUE(r) << (r ? "" : r.error().toString());
  return std::move(*r);
}

std::vector<int> counts(GatewayPicker& picker, const RoutingTable& t, uint16_t pool, int picks) {
  std::vector<int> out(t.gateways().size(), 0);
  for (int i = 0; i < picks; ++i) {
    const auto g = picker.pick(pool);
    EXPECT_TRUE(g.has_value());
    if (g) ++out[*g];
  }
  return out;
}

static_assert(noexcept(std::declval<GatewayPicker&>().pick(uint16_t{0})));
static_assert(noexcept(std::declval<GatewayPicker&>().pick(uint16_t{0}, [](uint16_t) noexcept {
  return true;
})));

TEST(GatewayPicker, ThreeToOneIsExactOverEveryWindowOfFour) {
  const RoutingTable t = tableWithWeights({3, 1});
  GatewayPicker picker(t);
  std::vector<uint16_t> sequence;
  for (int i = 0; i < 4000; ++i) sequence.push_back(*picker.pick(0));
  std::array<int, 2> total{};
  for (uint16_t g : sequence) ++total[g];
  EXPECT_EQ(total[0], 3000);
  EXPECT_EQ(total[1], 1000);
  // Not in bursts: every 4 consecutive picks (at any offset) hold 3 and 1.
  for (std::size_t start = 0; start + 4 <= sequence.size(); ++start) {
    int ones = 0;
    for (std::size_t i = start; i < start + 4; ++i) ones += sequence[i];
    ASSERT_EQ(ones, 1) << "window at " << start;
  }
  // Smooth: pgw2's picks are spread, not back to back with pgw1's run of three.
  EXPECT_EQ((std::vector<uint16_t>(sequence.begin(), sequence.begin() + 8)),
            (std::vector<uint16_t>{0, 0, 1, 0, 0, 0, 1, 0}));
}

TEST(GatewayPicker, FiveThreeTwoOverTenThousand) {
  const RoutingTable t = tableWithWeights({5, 3, 2});
  GatewayPicker picker(t);
  const std::vector<int> c = counts(picker, t, 0, 10000);
  const int expected[] = {5000, 3000, 2000};
  for (int g = 0; g < 3; ++g) {
    EXPECT_LE(std::abs(c[g] - expected[g]), 10) << "gateway " << g;  // 0.1% of 10000
    EXPECT_EQ(c[g], expected[g]) << "gateway " << g;                  // in fact exact
  }
  EXPECT_EQ(c[3], 0);  // pool b's gateway is never picked for pool a
}

TEST(GatewayPicker, ExactOverAnyWindowOfTheWeightSum) {
  const std::vector<int> weights = {7, 1, 4, 1000, 3};
  const RoutingTable t = tableWithWeights(weights);
  GatewayPicker picker(t);
  int sum = 0;
  for (int w : weights) sum += w;
  std::vector<uint16_t> sequence;
  for (int i = 0; i < 3 * sum; ++i) sequence.push_back(*picker.pick(0));
  for (int start : {0, 1, 17, sum - 1, sum, 2 * sum - 5}) {
    std::vector<int> c(weights.size(), 0);
    for (int i = start; i < start + sum; ++i) ++c[sequence[i]];
    for (std::size_t g = 0; g < weights.size(); ++g) EXPECT_EQ(c[g], weights[g]) << start;
  }
}

TEST(GatewayPicker, EqualWeightsTakeTurns) {
  const RoutingTable t = tableWithWeights({1, 1, 1});
  GatewayPicker picker(t);
  for (int round = 0; round < 5; ++round)
    for (uint16_t g = 0; g < 3; ++g) EXPECT_EQ(picker.pick(0), g);
}

TEST(GatewayPicker, ReturnsIndicesOfTheWholeTable) {
  const RoutingTable t = tableWithWeights({2, 2});
  GatewayPicker picker(t);
  EXPECT_EQ(picker.pick(1), 2);
  EXPECT_EQ(t.gateway(*picker.pick(1)).name, "solo");
}

TEST(GatewayPicker, SkipsGatewaysThatAreDown) {
  const RoutingTable t = tableWithWeights({5, 3, 2});
  GatewayPicker picker(t);
  const auto up = [](uint16_t g) noexcept { return g != 1; };
  std::array<int, 3> c{};
  for (int i = 0; i < 7000; ++i) {
    const auto g = picker.pick(0, up);
    ASSERT_TRUE(g.has_value());
    ++c[*g];
  }
  EXPECT_EQ(c[0], 5000);
  EXPECT_EQ(c[1], 0);
  EXPECT_EQ(c[2], 2000);
}

TEST(GatewayPicker, AskesOnlyAboutTheGatewaysOfThePool) {
  const RoutingTable t = tableWithWeights({1, 1});
  GatewayPicker picker(t);
  std::vector<uint16_t> asked;
  (void)picker.pick(1, [&](uint16_t g) noexcept {
    asked.push_back(g);
    return true;
  });
  EXPECT_EQ(asked, std::vector<uint16_t>{2});
}

TEST(GatewayPicker, NoneUpGivesNothing) {
  const RoutingTable t = tableWithWeights({3, 1});
  GatewayPicker picker(t);
  EXPECT_EQ(picker.pick(0, [](uint16_t) noexcept { return false; }), std::nullopt);
  EXPECT_EQ(picker.pick(1, [](uint16_t) noexcept { return false; }), std::nullopt);
  // A pool that does not exist.
  EXPECT_EQ(picker.pick(2), std::nullopt);
  EXPECT_EQ(picker.pick(65535), std::nullopt);
  // Nothing was disturbed: the sequence starts as from new.
  EXPECT_EQ(picker.pick(0), 0);
  EXPECT_EQ(picker.pick(0), 0);
  EXPECT_EQ(picker.pick(0), 1);
}

TEST(GatewayPicker, AGatewayBackUpGetsItsShareAgain) {
  const RoutingTable t = tableWithWeights({3, 1});
  GatewayPicker picker(t);
  bool second_up = true;
  const auto up = [&](uint16_t g) noexcept { return g == 0 || second_up; };
  for (int i = 0; i < 6; ++i) (void)picker.pick(0, up);
  second_up = false;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(picker.pick(0, up), 0);
  second_up = true;
  std::array<int, 2> c{};
  for (int i = 0; i < 4000; ++i) ++c[*picker.pick(0, up)];
  // Back to 3:1, give or take the one period of catching up.
  EXPECT_NEAR(c[0], 3000, 4);
  EXPECT_NEAR(c[1], 1000, 4);
}

TEST(GatewayPicker, ResetStartsTheSequenceAgain) {
  const RoutingTable t = tableWithWeights({5, 3, 2});
  GatewayPicker picker(t);
  std::vector<uint16_t> first;
  for (int i = 0; i < 10; ++i) first.push_back(*picker.pick(0));
  (void)picker.pick(0);
  picker.reset();
  std::vector<uint16_t> again;
  for (int i = 0; i < 10; ++i) again.push_back(*picker.pick(0));
  EXPECT_EQ(first, again);
}

}  // namespace
}  // namespace gtpcp::config
