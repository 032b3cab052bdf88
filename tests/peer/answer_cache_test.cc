// HashIndex (the SGW's lookups by sequence number and by request) against a
// std::map, and AnswerCache's window and eviction.
#include "tools/peer/answer_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "tools/peer/hash_index.h"

namespace gtpcp::peer {
namespace {

TEST(HashIndex, AgreesWithAMapThroughInsertsAndErases) {
  HashIndex<uint32_t> index;
  index.init(1000);
  std::map<uint32_t, uint32_t> reference;
  uint64_t x = 42;
  for (int step = 0; step < 200000; ++step) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // Keys from a small range, so that probe runs collide and wrap.
    const auto key = static_cast<uint32_t>((x >> 33) % 1500);
    if ((x >> 20) % 3 != 0 && reference.size() < 1000) {
      ASSERT_TRUE(index.insert(key, static_cast<uint32_t>(step)));
      reference[key] = static_cast<uint32_t>(step);
    } else {
      index.erase(key);
      reference.erase(key);
    }
    if (step % 997 == 0) {
      for (uint32_t k = 0; k < 1500; ++k) {
        uint32_t v = 0;
        const auto it = reference.find(k);
        ASSERT_EQ(index.find(k, v), it != reference.end()) << "key " << k << " step " << step;
        if (it != reference.end()) {
          EXPECT_EQ(v, it->second);
        }
      }
    }
  }
}

constexpr int64_t kWindow = 1000;

TEST(AnswerCache, FindsAnAnswerWithinTheWindowOnly) {
  AnswerCache c;
  c.init(16, kWindow);
  const RequestKey k{Endpoint{0x7f000001, 2123}, 0, 7};
  EXPECT_EQ(c.find(k, 0), nullptr);
  EXPECT_FALSE(c.insert(k, 100, AnswerCache::Answer{0xabc, 16, 5}));
  const AnswerCache::Answer* a = c.find(k, 100 + kWindow - 1);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->header_teid, 0xabcu);
  EXPECT_EQ(a->cause, 16);
  EXPECT_EQ(a->ebi, 5);
  EXPECT_EQ(c.find(k, 100 + kWindow), nullptr);
  // Another port, another node, another sequence number: other requests.
  EXPECT_EQ(c.find(RequestKey{Endpoint{0x7f000001, 2124}, 0, 7}, 101), nullptr);
  EXPECT_EQ(c.find(RequestKey{Endpoint{0x7f000001, 2123}, 1, 7}, 101), nullptr);
  EXPECT_EQ(c.find(RequestKey{Endpoint{0x7f000001, 2123}, 0, 8}, 101), nullptr);
  // Seen again after the window: the new answer replaces the old.
  EXPECT_FALSE(c.insert(k, 5000, AnswerCache::Answer{0, 64, 0}));
  a = c.find(k, 5001);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->cause, 64);
}

TEST(AnswerCache, TheOldestGivesWayAndAnEvictionWithinTheWindowIsReported) {
  AnswerCache c;
  c.init(16, kWindow);
  for (uint32_t s = 0; s < 16; ++s) EXPECT_FALSE(c.insert(RequestKey{Endpoint{1, 1}, 0, s}, 0, {}));
  EXPECT_TRUE(c.insert(RequestKey{Endpoint{1, 1}, 0, 16}, 10, {}));  // evicts sequence 0
  EXPECT_EQ(c.find(RequestKey{Endpoint{1, 1}, 0, 0}, 10), nullptr);
  EXPECT_NE(c.find(RequestKey{Endpoint{1, 1}, 0, 1}, 10), nullptr);
  EXPECT_NE(c.find(RequestKey{Endpoint{1, 1}, 0, 16}, 10), nullptr);
  // Past the window, giving way is no loss.
  EXPECT_FALSE(c.insert(RequestKey{Endpoint{1, 1}, 0, 17}, 10 + kWindow, {}));
}

}  // namespace
}  // namespace gtpcp::peer
