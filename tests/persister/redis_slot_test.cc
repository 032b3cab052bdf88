// Hash slots as Redis Cluster computes them: the expected values are what
// redis-server 7.0 answers to CLUSTER KEYSLOT, and the CRC check value of the
// specification (CRC16/XMODEM of "123456789" is 0x31C3).
#include "persister/lib/redis_slot.h"

#include <gtest/gtest.h>

namespace gtpcp::persister {
namespace {

TEST(RedisSlot, Crc16MatchesTheSpecificationCheckValue) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
}

TEST(RedisSlot, KeySlotsAndHashTagsMatchRedis) {
  struct Case {
    std::string_view key, hashed;
    uint16_t slot;
  };
  const Case cases[] = {
      {"123456789", "123456789", 12739},
      {"foo", "foo", 12182},
      {"bar", "bar", 5061},
      {"somekey", "somekey", 11058},
      {"hello", "hello", 866},
      {"", "", 0},
      // The tag alone is hashed: keys sharing it share a slot.
      {"foo{hash_tag}", "hash_tag", 2515},
      {"bar{hash_tag}", "hash_tag", 2515},
      {"{user1000}.following", "user1000", 3443},
      {"{user1000}.followers", "user1000", 3443},
      // An empty first tag: the whole key is hashed, later braces ignored.
      {"foo{}{bar}", "foo{}{bar}", 8363},
      {"{}", "{}", 15257},
      // The first '{' and the first '}' after it.
      {"foo{{bar}}zap", "{bar", 4015},
      {"foo{bar}{zap}", "bar", 5061},
      // A '}' before the first '{' closes nothing.
      {"}{a}", "a", 15495},
      // No closing brace: the whole key.
      {"a{b", "a{b", 13340},
      {"{", "{", 4092},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(hashTag(c.key), c.hashed) << c.key;
    EXPECT_EQ(keySlot(c.key), c.slot) << c.key;
  }
}

TEST(RedisSlot, EverySlotIsReachable) {
  // The integration tests write one key per slot; make sure keys spread.
  std::vector<bool> seen(kSlotCount);
  std::size_t distinct = 0;
  for (int i = 0; distinct < kSlotCount && i < 1'000'000; ++i) {
    const uint16_t s = keySlot("k" + std::to_string(i));
    ASSERT_LT(s, kSlotCount);
    if (!seen[s]) {
      seen[s] = true;
      ++distinct;
    }
  }
  EXPECT_EQ(distinct, kSlotCount);
}

}  // namespace
}  // namespace gtpcp::persister
