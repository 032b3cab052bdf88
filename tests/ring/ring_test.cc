// The SPSC ring in one thread: layout checks, empty and full edges, records of
// every interesting size, wrap-around with padding at every offset, batch
// visibility, reserve/commit, slot accounting, restart semantics and the
// handling of a corrupt record.
#include "common/ring/ring.h"

#include <array>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ring/ring_test_util.h"

namespace gtpcp::ring {
namespace {

using test::AlignedBuffer;

constexpr uint32_t kCapacity = kMinCapacitySlots;

RingHeaderShm* headerOf(AlignedBuffer& buffer) {
  return reinterpret_cast<RingHeaderShm*>(buffer.data());
}

std::vector<uint8_t> bytes(std::size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

DatagramMeta metaFor(uint32_t aux) {
  DatagramMeta meta{};
  meta.receive_ns = 1000 + aux;
  meta.peer_address[0] = 192;
  meta.peer_address[1] = 0;
  meta.peer_address[2] = 2;
  meta.peer_address[3] = static_cast<uint8_t>(aux);
  meta.peer_port = 2123;
  meta.peer_family = AF_INET;
  meta.local_socket = 1;
  meta.flags = 0x0102;
  meta.aux = aux;
  meta.length = 9999;  // push() and commit() must overwrite it
  return meta;
}

class RingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(initRing(buffer_.data(), buffer_.size(), kCapacity));
    attachBoth();
  }
  void attachBoth() {
    auto p = Producer::attach(buffer_.data(), buffer_.size());
    ASSERT_TRUE(p) << p.error().message;
    auto c = Consumer::attach(buffer_.data(), buffer_.size());
    ASSERT_TRUE(c) << c.error().message;
    producer_.emplace(std::move(*p));
    consumer_.emplace(std::move(*c));
  }
  // Pushes `count` one-slot records (16 octets of payload at most) and
  // consumes them, moving both indices `count` slots on.
  void advance(uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_TRUE(producer_->push(metaFor(0), {}));
      producer_->publish();
      ASSERT_TRUE(consumer_->peek());
      consumer_->pop();
      consumer_->release();
    }
  }

  AlignedBuffer buffer_{ringBytes(kCapacity)};
  std::optional<Producer> producer_;
  std::optional<Consumer> consumer_;
};

TEST(RingLayout, RecordSlots) {
  // 8 octets of record header and 40 of DatagramMeta share the first slot
  // with up to 16 octets of payload.
  EXPECT_EQ(kRecordPayloadOffset, 48u);
  EXPECT_EQ(recordSlots(0), 1u);
  EXPECT_EQ(recordSlots(1), 1u);
  EXPECT_EQ(recordSlots(16), 1u);
  EXPECT_EQ(recordSlots(17), 2u);
  EXPECT_EQ(recordSlots(63), 2u);
  EXPECT_EQ(recordSlots(64), 2u);
  EXPECT_EQ(recordSlots(65), 2u);
  EXPECT_EQ(recordSlots(80), 2u);
  EXPECT_EQ(recordSlots(81), 3u);
  EXPECT_EQ(recordSlots(1500), 25u);
  EXPECT_EQ(recordSlots(65535), 1025u);
  EXPECT_EQ(kMaxRecordSlots, 1025u);
}

TEST(RingLayout, RingBytes) {
  EXPECT_EQ(kRingHeaderBytes, 384u);
  EXPECT_EQ(ringBytes(4096), 384u + 4096u * 64u);
  EXPECT_EQ(ringBytes(16384), 384u + 1048576u);
}

TEST(RingLayout, InitRefusesBadCapacity) {
  AlignedBuffer buffer(ringBytes(kMaxCapacitySlots / 64));
  const std::string rule =
      " slots is not a power of two from 4096 to 16777216 (the largest record, 1025 slots, "
      "must fit at any position)";
  for (uint32_t bad : {0u, 1u, 1024u, 2048u, 4095u, 4097u, 6144u, kMaxCapacitySlots * 2}) {
    auto r = initRing(buffer.data(), buffer.size(), bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(r.error().message, "ring: capacity " + std::to_string(bad) + rule);
  }
  EXPECT_TRUE(initRing(buffer.data(), buffer.size(), 4096));
  EXPECT_TRUE(initRing(buffer.data(), buffer.size(), 8192));
}

TEST(RingLayout, InitRefusesBadMemory) {
  AlignedBuffer buffer(ringBytes(kCapacity) + 64);
  auto small = initRing(buffer.data(), ringBytes(kCapacity) - 1, kCapacity);
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message, "ring: 262527 octets cannot hold a ring of 4096 slots (262528)");
  auto tiny = initRing(buffer.data(), 100, kCapacity);
  ASSERT_FALSE(tiny);
  EXPECT_EQ(tiny.error().message, "ring: 100 octets cannot hold the ring header (384)");
  auto misaligned = initRing(buffer.data() + 8, ringBytes(kCapacity), kCapacity);
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().message, "ring: memory is not 64-octet aligned");
  auto null = initRing(nullptr, ringBytes(kCapacity), kCapacity);
  ASSERT_FALSE(null);
  EXPECT_EQ(null.error().message, "ring: memory is null");
}

TEST(RingLayout, AttachRefusesWhatItDoesNotUnderstand) {
  AlignedBuffer buffer(ringBytes(kCapacity));
  auto* header = reinterpret_cast<RingHeaderShm*>(buffer.data());

  auto uninitialised = Consumer::attach(buffer.data(), buffer.size());
  ASSERT_FALSE(uninitialised);
  EXPECT_EQ(uninitialised.error().code, Errc::kNotInitialised);
  EXPECT_EQ(uninitialised.error().message, "ring: not initialised (magic is 0)");

  ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
  header->magic.store(0x1122334455667788ULL);
  auto magic = Producer::attach(buffer.data(), buffer.size());
  ASSERT_FALSE(magic);
  EXPECT_EQ(magic.error().code, Errc::kMismatch);
  EXPECT_EQ(magic.error().message,
            "ring: magic 0x1122334455667788, expected 0x31474e5243505447");

  ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
  header->layout_version = 7;
  auto version = Consumer::attach(buffer.data(), buffer.size());
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().message, "ring: layout version 7, this build understands 1");

  ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
  header->capacity_slots = 5000;
  auto capacity = Producer::attach(buffer.data(), buffer.size());
  ASSERT_FALSE(capacity);
  EXPECT_EQ(capacity.error().message.substr(0, 40), "ring: capacity 5000 slots is not a power");

  ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
  auto size = Consumer::attach(buffer.data(), buffer.size() - 64);
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().message, "ring: 262464 octets cannot hold a ring of 4096 slots (262528)");

  ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
  header->head.store(5000);
  auto apart = Producer::attach(buffer.data(), buffer.size());
  ASSERT_FALSE(apart);
  EXPECT_EQ(apart.error().message,
            "ring: head 5000 and tail 0 are more than 4096 slots apart (corrupt header)");
  header->head.store(10);
  header->tail.store(11);  // tail ahead of head
  EXPECT_FALSE(Consumer::attach(buffer.data(), buffer.size()));
}

TEST_F(RingTest, EmptyRing) {
  EXPECT_TRUE(consumer_->empty());
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(consumer_->depthSlots(), 0u);
  EXPECT_EQ(producer_->freeSlots(), kCapacity);
  EXPECT_EQ(producer_->capacitySlots(), kCapacity);
  EXPECT_EQ(consumer_->capacitySlots(), kCapacity);
  consumer_->pop();      // nothing peeked: no-op
  consumer_->release();  // nothing popped: no store
  producer_->publish();  // nothing pushed: no store
  EXPECT_EQ(headerOf(buffer_)->head.load(), 0u);
  EXPECT_EQ(headerOf(buffer_)->tail.load(), 0u);
  EXPECT_FALSE(consumer_->peek());
}

TEST_F(RingTest, RoundTripOfEverySize) {
  uint32_t aux = 0;
  for (std::size_t size : {0u, 1u, 16u, 17u, 63u, 64u, 65u, 1500u, 65535u}) {
    SCOPED_TRACE(size);
    const auto payload = bytes(size, static_cast<uint8_t>(size));
    const DatagramMeta meta = metaFor(++aux);
    ASSERT_TRUE(producer_->fits(size));
    ASSERT_TRUE(producer_->push(meta, payload));
    EXPECT_EQ(producer_->unpublishedSlots(), recordSlots(size));
    producer_->publish();
    EXPECT_EQ(consumer_->depthSlots(), recordSlots(size));
    auto view = consumer_->peek();
    ASSERT_TRUE(view);
    EXPECT_EQ(view->meta->length, size);
    EXPECT_EQ(view->meta->receive_ns, meta.receive_ns);
    EXPECT_EQ(view->meta->aux, aux);
    EXPECT_EQ(view->meta->flags, meta.flags);
    EXPECT_EQ(view->meta->peer_port, 2123);
    EXPECT_EQ(view->meta->peer_family, AF_INET);
    EXPECT_EQ(view->meta->local_socket, 1);
    EXPECT_EQ(0, std::memcmp(view->meta->peer_address, meta.peer_address, 16));
    ASSERT_EQ(view->payload.size(), size);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), view->payload.begin()));
    // The record starts on a slot, the payload 48 octets into it.
    EXPECT_EQ((reinterpret_cast<uintptr_t>(view->payload.data()) - 48) % 64, 0u);
    // peek() again without pop(): the same record.
    auto again = consumer_->peek();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->meta, view->meta);
    consumer_->pop();
    EXPECT_FALSE(consumer_->peek());
    EXPECT_TRUE(consumer_->empty());
    consumer_->release();
    EXPECT_EQ(producer_->freeSlots(), kCapacity);
  }
}

TEST_F(RingTest, RefusesPayloadsLargerThanADatagram) {
  std::vector<uint8_t> big(kMaxPayload + 1);
  EXPECT_FALSE(producer_->fits(big.size()));
  EXPECT_FALSE(producer_->push(metaFor(1), big));
  EXPECT_EQ(producer_->reserve(metaFor(1), big.size()), nullptr);
  EXPECT_EQ(producer_->unpublishedSlots(), 0u);
  EXPECT_EQ(producer_->freeSlots(), kCapacity);
}

TEST_F(RingTest, FullAndEmptyEdges) {
  // One-slot records fill the ring exactly.
  for (uint32_t i = 0; i < kCapacity; ++i) {
    ASSERT_TRUE(producer_->push(metaFor(i), bytes(16, 1))) << i;
  }
  EXPECT_EQ(producer_->freeSlots(), 0u);
  EXPECT_FALSE(producer_->fits(0));
  EXPECT_FALSE(producer_->push(metaFor(0), {}));
  EXPECT_EQ(producer_->reserve(metaFor(0), 0), nullptr);
  // Full, yet nothing is visible before publish().
  EXPECT_TRUE(consumer_->empty());
  EXPECT_FALSE(consumer_->peek());
  producer_->publish();
  EXPECT_EQ(consumer_->depthSlots(), kCapacity);

  // Popped but not released: still full for the producer.
  for (uint32_t i = 0; i < 10; ++i) {
    auto view = consumer_->peek();
    ASSERT_TRUE(view);
    EXPECT_EQ(view->meta->aux, i);
    consumer_->pop();
  }
  EXPECT_EQ(producer_->freeSlots(), 0u);
  EXPECT_FALSE(producer_->push(metaFor(0), {}));
  consumer_->release();
  EXPECT_EQ(producer_->freeSlots(), 10u);
  EXPECT_TRUE(producer_->fits(16));
  EXPECT_TRUE(producer_->fits(16 + 9 * 64));    // 10 slots
  EXPECT_FALSE(producer_->fits(17 + 9 * 64));   // 11 slots
  for (uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(producer_->push(metaFor(kCapacity + i), {}));
  EXPECT_FALSE(producer_->push(metaFor(0), {}));
  producer_->publish();

  // Drain: the order survives the wrap.
  for (uint32_t i = 10; i < kCapacity + 10; ++i) {
    auto view = consumer_->peek();
    ASSERT_TRUE(view) << i;
    ASSERT_EQ(view->meta->aux, i);
    consumer_->pop();
  }
  EXPECT_FALSE(consumer_->peek());
  EXPECT_TRUE(consumer_->empty());
  EXPECT_EQ(consumer_->depthSlots(), 0u);
  consumer_->release();
  EXPECT_EQ(producer_->freeSlots(), kCapacity);
}

TEST_F(RingTest, LargestRecordsFillTheRing) {
  const auto payload = bytes(kMaxPayload, 3);
  int pushed = 0;
  while (pushed < 10 && producer_->push(metaFor(pushed), payload)) ++pushed;
  // 4096 / 1025 = 3 records, and 1021 slots left that cannot hold a fourth.
  EXPECT_EQ(pushed, 3);
  EXPECT_EQ(producer_->freeSlots(), kCapacity - 3 * 1025u);
  EXPECT_TRUE(producer_->fits(1500));
  producer_->publish();
  auto view = consumer_->peek();
  ASSERT_TRUE(view);
  consumer_->pop();
  consumer_->release();
  // 1021 slots to the end, 1025 freed at the start: padding then a record at 0.
  EXPECT_TRUE(producer_->fits(kMaxPayload));
  ASSERT_TRUE(producer_->push(metaFor(3), payload));
  EXPECT_EQ(producer_->freeSlots(), 0u);
  producer_->publish();
  for (uint32_t i = 1; i < 4; ++i) {
    auto v = consumer_->peek();
    ASSERT_TRUE(v);
    EXPECT_EQ(v->meta->aux, i);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), v->payload.begin()));
    consumer_->pop();
  }
  EXPECT_FALSE(consumer_->peek());
}

// A record of every interesting size, starting at every slot of the ring, with
// indices that also cross 2^64: padding is written exactly when the record
// would cross the end, and the accounting counts it.
TEST(RingWrap, PaddingAtEveryOffset) {
  AlignedBuffer buffer(ringBytes(kCapacity));
  auto* header = reinterpret_cast<RingHeaderShm*>(buffer.data());
  for (std::size_t size : {0u, 1u, 17u, 63u, 64u, 65u, 1500u, 65535u}) {
    const auto payload = bytes(size, 9);
    const auto follower = bytes(16, 5);
    const uint32_t n = recordSlots(size);
    for (uint64_t base : {uint64_t{0}, ~uint64_t{0} - 3000}) {
      // Single-threaded: ThreadSanitizer has nothing to check here and makes
      // each 64 KiB copy slow, so its build samples every 7th offset.
      constexpr uint32_t kStep = GTPCP_UNDER_TSAN ? 7 : 1;
      for (uint32_t offset = 0; offset < kCapacity; offset += kStep) {
        SCOPED_TRACE(testing::Message() << "size " << size << " base " << base << " offset "
                                        << offset);
        ASSERT_TRUE(initRing(buffer.data(), buffer.size(), kCapacity));
        const uint64_t start = base + offset;
        header->head.store(start);
        header->tail.store(start);
        auto producer = Producer::attach(buffer.data(), buffer.size());
        auto consumer = Consumer::attach(buffer.data(), buffer.size());
        ASSERT_TRUE(producer && consumer);

        const uint64_t index = start & (kCapacity - 1);
        const uint32_t pad = (kCapacity - index < n) ? static_cast<uint32_t>(kCapacity - index) : 0;
        ASSERT_TRUE(producer->push(metaFor(1), payload));
        ASSERT_TRUE(producer->push(metaFor(2), follower));
        EXPECT_EQ(producer->freeSlots(), kCapacity - pad - n - 1);
        producer->publish();
        EXPECT_EQ(consumer->depthSlots(), pad + n + 1u);

        auto first = consumer->peek();
        ASSERT_TRUE(first);
        ASSERT_EQ(first->meta->aux, 1u);
        ASSERT_EQ(first->payload.size(), size);
        ASSERT_TRUE(std::equal(payload.begin(), payload.end(), first->payload.begin()));
        const auto* slot0 = buffer.data() + kRingHeaderBytes;
        const auto* expected_at = slot0 + (pad != 0 ? 0 : index) * 64 + kRecordPayloadOffset;
        ASSERT_EQ(first->payload.data(), expected_at);
        consumer->pop();
        auto second = consumer->peek();
        ASSERT_TRUE(second);
        ASSERT_EQ(second->meta->aux, 2u);
        ASSERT_TRUE(std::equal(follower.begin(), follower.end(), second->payload.begin()));
        consumer->pop();
        ASSERT_FALSE(consumer->peek());
        consumer->release();
        ASSERT_EQ(producer->freeSlots(), kCapacity);
        ASSERT_EQ(header->tail.load(), start + pad + n + 1);
      }
    }
  }
}

TEST_F(RingTest, NothingVisibleBeforePublishEverythingAfter) {
  for (uint32_t i = 0; i < 50; ++i) ASSERT_TRUE(producer_->push(metaFor(i), bytes(i * 40, 2)));
  EXPECT_TRUE(consumer_->empty());
  EXPECT_EQ(consumer_->depthSlots(), 0u);
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(headerOf(buffer_)->head.load(), 0u);
  const std::size_t pushed = producer_->unpublishedSlots();
  producer_->publish();
  EXPECT_EQ(producer_->unpublishedSlots(), 0u);
  EXPECT_EQ(headerOf(buffer_)->head.load(), pushed);
  EXPECT_FALSE(consumer_->empty());
  EXPECT_EQ(consumer_->depthSlots(), pushed);
  for (uint32_t i = 0; i < 50; ++i) {
    auto view = consumer_->peek();
    ASSERT_TRUE(view) << i;
    EXPECT_EQ(view->meta->aux, i);
    const auto want = bytes(i * 40, 2);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), view->payload.begin(), view->payload.end()));
    consumer_->pop();
  }
  EXPECT_FALSE(consumer_->peek());
  // The tail moves only on release(), once for the whole batch.
  EXPECT_EQ(headerOf(buffer_)->tail.load(), 0u);
  consumer_->release();
  EXPECT_EQ(headerOf(buffer_)->tail.load(), pushed);
}

TEST_F(RingTest, FreeSlotAccounting) {
  std::size_t used = 0;
  for (std::size_t size : {0u, 100u, 1500u, 65535u, 17u}) {
    ASSERT_TRUE(producer_->push(metaFor(1), bytes(size, 1)));
    used += recordSlots(size);
    EXPECT_EQ(producer_->freeSlots(), kCapacity - used);
  }
  EXPECT_EQ(consumer_->depthSlots(), 0u);  // unpublished
  producer_->publish();
  EXPECT_EQ(consumer_->depthSlots(), used);
  EXPECT_EQ(producer_->freeSlots() + consumer_->depthSlots(), kCapacity);
  ASSERT_TRUE(consumer_->peek());
  consumer_->pop();
  EXPECT_EQ(consumer_->depthSlots(), used - 1);
  EXPECT_EQ(producer_->freeSlots(), kCapacity - used);  // not released yet
  consumer_->release();
  EXPECT_EQ(producer_->freeSlots(), kCapacity - used + 1);
  EXPECT_EQ(producer_->freeSlots() + consumer_->depthSlots(), kCapacity);
}

TEST_F(RingTest, ReserveCommit) {
  const DatagramMeta meta = metaFor(7);
  uint8_t* out = producer_->reserve(meta, 1500);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(producer_->unpublishedSlots(), 0u);  // nothing counted until commit()
  const auto payload = bytes(100, 4);
  std::memcpy(out, payload.data(), payload.size());
  producer_->commit(payload.size());
  // Committed at its real size, not the reserved one.
  EXPECT_EQ(producer_->unpublishedSlots(), recordSlots(100));
  EXPECT_EQ(producer_->freeSlots(), kCapacity - recordSlots(100));
  producer_->publish();
  auto view = consumer_->peek();
  ASSERT_TRUE(view);
  EXPECT_EQ(view->meta->length, 100u);
  EXPECT_EQ(view->meta->aux, 7u);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), view->payload.begin(), view->payload.end()));
  consumer_->pop();
  consumer_->release();

  // Zero octets committed, and the full 65535.
  ASSERT_NE(producer_->reserve(meta, 0), nullptr);
  producer_->commit(0);
  uint8_t* big = producer_->reserve(metaFor(8), kMaxPayload);
  ASSERT_NE(big, nullptr);
  const auto max = bytes(kMaxPayload, 6);
  std::memcpy(big, max.data(), max.size());
  producer_->commit(max.size());
  producer_->publish();
  auto zero = consumer_->peek();
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->payload.size(), 0u);
  consumer_->pop();
  auto full = consumer_->peek();
  ASSERT_TRUE(full);
  EXPECT_EQ(full->meta->aux, 8u);
  EXPECT_TRUE(std::equal(max.begin(), max.end(), full->payload.begin(), full->payload.end()));
  consumer_->pop();
  consumer_->release();
}

TEST_F(RingTest, AbandonedReserveIsNeverPublished) {
  uint8_t* out = producer_->reserve(metaFor(1), 500);
  ASSERT_NE(out, nullptr);
  std::memset(out, 0xee, 500);
  // A push (or another reserve) abandons it: its slots are reused.
  ASSERT_TRUE(producer_->push(metaFor(2), bytes(10, 1)));
  ASSERT_NE(producer_->reserve(metaFor(3), 50), nullptr);
  ASSERT_NE(producer_->reserve(metaFor(4), 20), nullptr);
  producer_->commit(20);
  producer_->publish();
  auto a = consumer_->peek();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->meta->aux, 2u);
  consumer_->pop();
  auto b = consumer_->peek();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->meta->aux, 4u);
  EXPECT_EQ(b->payload.size(), 20u);
  consumer_->pop();
  EXPECT_FALSE(consumer_->peek());
}

TEST_F(RingTest, ReserveAcrossTheEndPads) {
  advance(kCapacity - 10);  // 10 slots before the end
  uint8_t* out = producer_->reserve(metaFor(1), 1500);  // 25 slots: padding, then slot 0
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out, buffer_.data() + kRingHeaderBytes + kRecordPayloadOffset);
  producer_->commit(10);  // would have fitted before the end: the padding stays anyway
  EXPECT_EQ(producer_->freeSlots(), kCapacity - 10 - 1);
  producer_->publish();
  EXPECT_EQ(consumer_->depthSlots(), 11u);
  auto view = consumer_->peek();
  ASSERT_TRUE(view);
  EXPECT_EQ(view->payload.size(), 10u);
  consumer_->pop();
  consumer_->release();
  EXPECT_EQ(producer_->freeSlots(), kCapacity);
}

TEST_F(RingTest, ReserveWhenFullReturnsNull) {
  for (uint32_t i = 0; i < kCapacity - 1; ++i) ASSERT_TRUE(producer_->push(metaFor(i), {}));
  EXPECT_EQ(producer_->reserve(metaFor(0), 17), nullptr);  // 2 slots, 1 free
  uint8_t* out = producer_->reserve(metaFor(0), 16);
  ASSERT_NE(out, nullptr);
  producer_->commit(16);
  EXPECT_EQ(producer_->freeSlots(), 0u);
}

using RingDeathTest = RingTest;

TEST_F(RingDeathTest, CommitWithoutReserveAborts) {
  EXPECT_DEATH(producer_->commit(0), "commit\\(\\) without a successful reserve\\(\\)");
}

TEST_F(RingDeathTest, CommitBeyondReserveAborts) {
  ASSERT_NE(producer_->reserve(metaFor(0), 100), nullptr);
  EXPECT_DEATH(producer_->commit(101), "more octets than reserve\\(\\) allowed");
}

// A producer that dies between push() and publish() leaves nothing visible;
// its successor starts at the published head and overwrites those slots.
TEST_F(RingTest, ProducerRestartDropsUnpublished) {
  ASSERT_TRUE(producer_->push(metaFor(1), bytes(100, 1)));
  ASSERT_TRUE(producer_->push(metaFor(2), bytes(100, 2)));
  producer_->publish();
  ASSERT_TRUE(producer_->push(metaFor(3), bytes(3000, 3)));  // never published
  producer_.reset();                                            // "dies"

  auto successor = Producer::attach(buffer_.data(), buffer_.size());
  ASSERT_TRUE(successor);
  EXPECT_EQ(successor->unpublishedSlots(), 0u);
  EXPECT_EQ(successor->freeSlots(), kCapacity - 2 * recordSlots(100));
  ASSERT_TRUE(successor->push(metaFor(4), bytes(20, 4)));
  successor->publish();

  for (uint32_t want : {1u, 2u, 4u}) {
    auto view = consumer_->peek();
    ASSERT_TRUE(view);
    EXPECT_EQ(view->meta->aux, want);
    consumer_->pop();
  }
  EXPECT_FALSE(consumer_->peek());
}

// A consumer that dies before release() makes its successor see the records
// it had popped again: delivery is at least once.
TEST_F(RingTest, ConsumerRestartSeesUnreleasedAgain) {
  for (uint32_t i = 1; i <= 5; ++i) ASSERT_TRUE(producer_->push(metaFor(i), bytes(i * 30, 1)));
  producer_->publish();
  for (uint32_t i = 1; i <= 2; ++i) {
    ASSERT_TRUE(consumer_->peek());
    consumer_->pop();
  }
  consumer_->release();  // 1 and 2 are done
  for (uint32_t i = 3; i <= 4; ++i) {
    ASSERT_TRUE(consumer_->peek());
    consumer_->pop();
  }
  consumer_.reset();  // "dies" with 3 and 4 popped, not released

  auto successor = Consumer::attach(buffer_.data(), buffer_.size());
  ASSERT_TRUE(successor);
  EXPECT_EQ(successor->depthSlots(), recordSlots(90) + recordSlots(120) + recordSlots(150));
  for (uint32_t want = 3; want <= 5; ++want) {
    auto view = successor->peek();
    ASSERT_TRUE(view);
    EXPECT_EQ(view->meta->aux, want);
    EXPECT_EQ(view->payload.size(), want * 30u);
    successor->pop();
  }
  EXPECT_FALSE(successor->peek());
  successor->release();
  EXPECT_EQ(producer_->freeSlots(), kCapacity);
}

// Re-attaching both sides mid-stream, many times, across the end of the ring.
TEST_F(RingTest, ReattachMidStream) {
  uint64_t next_push = 0;
  uint64_t next_pop = 0;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 7 && producer_->push(metaFor(static_cast<uint32_t>(next_push)),
                                             bytes(test::patternLength(next_push) % 3000, 1));
         ++i) {
      ++next_push;
    }
    producer_->publish();
    for (int i = 0; i < 5; ++i) {
      auto view = consumer_->peek();
      if (!view) break;
      ASSERT_EQ(view->meta->aux, static_cast<uint32_t>(next_pop));
      consumer_->pop();
      ++next_pop;
    }
    consumer_->release();
    attachBoth();
  }
  while (auto view = consumer_->peek()) {
    ASSERT_EQ(view->meta->aux, static_cast<uint32_t>(next_pop));
    consumer_->pop();
    ++next_pop;
  }
  EXPECT_EQ(next_pop, next_push);
  EXPECT_GT(headerOf(buffer_)->head.load(), uint64_t{kCapacity});  // it wrapped
}

// A head further ahead than the ring holds (or behind the consumer) is a
// corrupt header: the consumer discards, counts, and never serves the ring's
// earlier laps, whose records still look whole, as new ones.
TEST_F(RingTest, AHeadBeyondWhatTheRingHoldsIsDiscardedNotReadAsOldLaps) {
  for (uint16_t i = 1; i <= 3; ++i) ASSERT_TRUE(producer_->push(metaFor(i), bytes(10, 1)));
  producer_->publish();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(consumer_->peek());
    consumer_->pop();
  }
  consumer_->release();
  RingHeaderShm* header = headerOf(buffer_);
  const uint64_t head = header->head.load();
  header->head.store(head + 2 * uint64_t{kCapacity});
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(consumer_->corruptions(), 1u);
  header->head.store(head);  // behind the consumer now
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(consumer_->corruptions(), 2u);
  consumer_->release();
  ASSERT_TRUE(producer_->push(metaFor(7), bytes(10, 1)));
  producer_->publish();
  auto view = consumer_->peek();
  ASSERT_TRUE(view);
  EXPECT_EQ(view->meta->aux, 7u);
}

// A record header that breaks the invariants: the consumer discards what is
// published, counts it, and the ring carries on.
TEST_F(RingTest, CorruptRecordIsDiscardedAndCounted) {
  ASSERT_TRUE(producer_->push(metaFor(1), bytes(10, 1)));
  ASSERT_TRUE(producer_->push(metaFor(2), bytes(10, 1)));
  producer_->publish();
  auto* first = reinterpret_cast<RecordHeaderShm*>(buffer_.data() + kRingHeaderBytes);
  for (uint32_t bad_slots : {0u, 3u, 5000u}) {
    first->slots = bad_slots;
    EXPECT_FALSE(consumer_->peek());
  }
  EXPECT_EQ(consumer_->corruptions(), 1u);  // the first discard emptied the ring
  EXPECT_TRUE(consumer_->empty());
  consumer_->release();
  EXPECT_EQ(producer_->freeSlots(), kCapacity);

  ASSERT_TRUE(producer_->push(metaFor(3), bytes(40, 1)));
  producer_->publish();
  auto* third = reinterpret_cast<RecordHeaderShm*>(buffer_.data() + kRingHeaderBytes + 2 * 64);
  third->type = 0;  // neither data nor padding
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(consumer_->corruptions(), 2u);

  ASSERT_TRUE(producer_->push(metaFor(4), bytes(40, 1)));
  producer_->publish();
  auto* meta = reinterpret_cast<DatagramMeta*>(buffer_.data() + kRingHeaderBytes + 4 * 64 + 8);
  meta->length = 1000;  // disagrees with the record's slot count
  EXPECT_FALSE(consumer_->peek());
  EXPECT_EQ(consumer_->corruptions(), 3u);

  ASSERT_TRUE(producer_->push(metaFor(5), bytes(40, 1)));
  producer_->publish();
  auto view = consumer_->peek();
  ASSERT_TRUE(view);
  EXPECT_EQ(view->meta->aux, 5u);
}

}  // namespace
}  // namespace gtpcp::ring
