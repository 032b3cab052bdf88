// The worker's transaction table (workers/lib/transaction_table.h) over heap
// memory laid out as in a worker's segment: the two keys a transaction is
// found by, capacity and the reuse of freed records, the answer cache's byte
// ring, backward-shift deletion under random closes, rekeying and kept
// requests, the sweep, and the rebuild a restarted worker does over indexes
// its predecessor left half-written.
#include "workers/lib/transaction_table.h"

#include "common/gtp/constants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace gtpcp::worker {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint16_t kPort = gtp::kGtpcPort;
constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kAnswered = static_cast<uint8_t>(TransactionState::kAnswered);

// A worker's segment (worker 0 of 1) on the heap, zeroed as a new segment is.
class Segment {
 public:
  Segment(uint32_t transactions, uint64_t answer_bytes)
      : layout_(WorkerLayout::compute(1, 0, 1, transactions, answer_bytes)),
        words_(layout_.total / 8 + 1),
        header_(new (words_.data()) WorkerShmHeader()) {}

  TransactionMemory memory() { return layout_.transactionMemory(base(), *header_); }
  WorkerShmHeader& header() { return *header_; }

  // What a worker killed in the middle of an index update may leave behind.
  void scribbleOverIndexes() {
    const TransactionMemory m = memory();
    const std::size_t bytes = std::size_t{m.capacity} * 2 * sizeof(TransactionIndexShm);
    std::memset(static_cast<void*>(m.by_response), 0xAB, bytes);
    std::memset(static_cast<void*>(m.by_requester), 0xAB, bytes);
  }

 private:
  uint8_t* base() { return reinterpret_cast<uint8_t*>(words_.data()); }

  WorkerLayout layout_;
  std::vector<uint64_t> words_;
  WorkerShmHeader* header_;
};

// What a test opened a transaction with.
struct Request {
  uint64_t response_key;
  net::Address requester;
  uint32_t sequence;
};

net::Address v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port = kPort) {
  return net::Address::v4(gtp::Ipv4{{a, b, c, d}}, port);
}

std::vector<uint8_t> pattern(std::size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7 + (i >> 8));
  return v;
}

std::vector<uint8_t> bytesOf(std::span<const uint8_t> s) { return {s.begin(), s.end()}; }

// `n` requests with distinct response keys (proxy- and command-numbered at
// random) and distinct requesters (IPv4 and IPv6 at random), from `seed`.
std::vector<Request> randomRequests(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<uint64_t> keys;
  std::set<std::string> requesters;
  std::vector<Request> out;
  while (out.size() < n) {
    Request r;
    r.sequence = static_cast<uint32_t>(rng()) & 0xffffff;
    r.response_key = (rng() & 1) != 0 ? proxyNumbered(static_cast<uint32_t>(rng()))
                                      : commandNumbered(static_cast<uint32_t>(rng()) | 1, r.sequence);
    if ((rng() & 1) != 0) {
      gtp::Ipv4 a;
      for (auto& o : a.octets) o = static_cast<uint8_t>(rng());
      r.requester = net::Address::v4(a, static_cast<uint16_t>(rng()));
    } else {
      gtp::Ipv6 a;
      for (auto& o : a.octets) o = static_cast<uint8_t>(rng());
      r.requester = net::Address::v6(a, static_cast<uint16_t>(rng()));
    }
    std::string requester(reinterpret_cast<const char*>(&r.requester), sizeof r.requester);
    requester.append(reinterpret_cast<const char*>(&r.sequence), sizeof r.sequence);
    if (!keys.insert(r.response_key).second || !requesters.insert(requester).second) continue;
    out.push_back(r);
  }
  return out;
}

TransactionShm* openRequest(TransactionTable& table, const Request& r, uint64_t now_ns = kSecond) {
  return table.open(r.response_key, r.requester, r.sequence, now_ns);
}

// Opens each of `requests` at `now_ns`; the records, nullptr where refused.
std::vector<TransactionShm*> openAll(TransactionTable& table, std::span<const Request> requests,
                                     uint64_t now_ns = kSecond) {
  std::vector<TransactionShm*> records;
  for (const Request& r : requests) records.push_back(openRequest(table, r, now_ns));
  return records;
}

std::size_t refused(const std::vector<TransactionShm*>& records) {
  return static_cast<std::size_t>(std::count(records.begin(), records.end(), nullptr));
}

// 0 .. n - 1 in an order drawn from `rng`.
std::vector<uint32_t> shuffled(uint32_t n, std::mt19937& rng) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// How many of the live requests (records[i] != nullptr) either key no longer
// finds at their own record.
std::size_t lost(TransactionTable& table, const std::vector<Request>& requests,
                 const std::vector<TransactionShm*>& records) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (records[i] == nullptr) continue;
    n += table.findByResponse(requests[i].response_key) != records[i];
    n += table.findByRequester(requests[i].requester, requests[i].sequence) != records[i];
  }
  return n;
}

// Closes requests[i]'s transaction; a failure when either of its keys still
// finds a record or another live one is no longer found by both of its own.
::testing::AssertionResult closeAndCheck(TransactionTable& table, const std::vector<Request>& requests,
                                         std::vector<TransactionShm*>& records, std::size_t i) {
  table.close(*records[i]);
  records[i] = nullptr;
  if (table.findByResponse(requests[i].response_key) != nullptr) {
    return ::testing::AssertionFailure() << "closed transaction " << i << " still found by its response key";
  }
  if (table.findByRequester(requests[i].requester, requests[i].sequence) != nullptr) {
    return ::testing::AssertionFailure() << "closed transaction " << i << " still found by its requester";
  }
  if (const std::size_t n = lost(table, requests, records); n != 0) {
    return ::testing::AssertionFailure() << n << " look-ups of live transactions failed after closing " << i;
  }
  return ::testing::AssertionSuccess();
}

// True when record `record`'s entry in `index` (2 x capacity slots) lies in a
// run that goes on across the end of the array: erasing it shifts entries
// from the start of the array to its end.
bool inRunCrossingTheEnd(const TransactionIndexShm* index, uint32_t capacity, uint32_t record) {
  const uint32_t slots = 2 * capacity;
  uint32_t s = 0;
  while (s < slots && index[s].record != record + 1) ++s;
  if (s == slots || index[0].record == 0) return false;
  for (; s < slots; ++s) {
    if (index[s].record == 0) return false;
  }
  return true;
}

class TransactionTableTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kCapacity = 1024;
  static constexpr uint64_t kAnswerBytes = 4096;

  TransactionTableTest() : segment_(kCapacity, kAnswerBytes), table_(segment_.memory()) { table_.rebuild(true); }

  // Opens a transaction that must be accepted.
  TransactionShm& open(uint64_t response_key, const net::Address& requester, uint32_t sequence,
                       uint64_t now_ns = kSecond) {
    TransactionShm* t = table_.open(response_key, requester, sequence, now_ns);
    EXPECT_NE(t, nullptr) << "response key " << response_key;
    return t != nullptr ? *t : dummy_;
  }

  uint32_t highWater() { return segment_.header().transactions_high_water; }
  uint64_t answerHead() { return segment_.header().answer_head; }

  Segment segment_;
  TransactionTable table_;
  TransactionShm dummy_{};
};

// --- The two keys -----------------------------------------------------------

TEST_F(TransactionTableTest, FreshTableIsEmpty) {
  EXPECT_EQ(table_.capacity(), kCapacity);
  EXPECT_EQ(table_.live(), 0u);
  EXPECT_EQ(table_.pending(), 0u);
  EXPECT_EQ(highWater(), 0u);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), nullptr);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), nullptr);
}

TEST_F(TransactionTableTest, OpenedTransactionIsFoundByBothKeys) {
  const net::Address sgw = v4(10, 0, 0, 1);
  TransactionShm* t = table_.open(proxyNumbered(0x10), sgw, 0x123456, 5 * kSecond);
  ASSERT_NE(t, nullptr);

  EXPECT_EQ(t->state, kPending);
  EXPECT_EQ(t->response_key, proxyNumbered(0x10));
  EXPECT_EQ(t->requester, sgw);
  EXPECT_EQ(t->requester_sequence, 0x123456u);
  EXPECT_EQ(t->received_ns, 5 * kSecond);
  EXPECT_EQ(t->answer_length, 0u);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(0x10)), t);
  EXPECT_EQ(table_.findByRequester(sgw, 0x123456), t);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);
  EXPECT_EQ(highWater(), 1u);
}

TEST_F(TransactionTableTest, FindByRequesterNeedsSameAddressPortFamilyAndSequence) {
  const net::Address sgw = v4(10, 0, 0, 1);
  TransactionShm& t = open(proxyNumbered(1), sgw, 0x123456);

  const net::Address other_host = v4(10, 0, 0, 2);
  const net::Address other_port = sgw.withPort(kPort + 1);
  // The same 16 octets as the IPv4 address (10.0.0.1 then zeros): only the
  // family differs.
  const net::Address ipv6 = net::Address::v6(gtp::Ipv6{{10, 0, 0, 1}}, kPort);
  ASSERT_EQ(std::memcmp(ipv6.bytes, sgw.bytes, sizeof sgw.bytes), 0);

  EXPECT_EQ(table_.findByRequester(sgw, 0x123456), &t);
  EXPECT_EQ(table_.findByRequester(other_host, 0x123456), nullptr);
  EXPECT_EQ(table_.findByRequester(other_port, 0x123456), nullptr);
  EXPECT_EQ(table_.findByRequester(ipv6, 0x123456), nullptr);
  EXPECT_EQ(table_.findByRequester(sgw, 0x123457), nullptr);

  // Each of them opened: each key finds its own record.
  TransactionShm& by_host = open(proxyNumbered(2), other_host, 0x123456);
  TransactionShm& by_port = open(proxyNumbered(3), other_port, 0x123456);
  TransactionShm& by_family = open(proxyNumbered(4), ipv6, 0x123456);
  TransactionShm& by_sequence = open(proxyNumbered(5), sgw, 0x123457);
  EXPECT_EQ(table_.findByRequester(sgw, 0x123456), &t);
  EXPECT_EQ(table_.findByRequester(other_host, 0x123456), &by_host);
  EXPECT_EQ(table_.findByRequester(other_port, 0x123456), &by_port);
  EXPECT_EQ(table_.findByRequester(ipv6, 0x123456), &by_family);
  EXPECT_EQ(table_.findByRequester(sgw, 0x123457), &by_sequence);
  EXPECT_EQ(table_.live(), 5u);
}

TEST_F(TransactionTableTest, OpenRefusesAResponseKeyAlreadyLive) {
  TransactionShm& first = open(proxyNumbered(9), v4(10, 0, 0, 1), 1);

  EXPECT_EQ(table_.open(proxyNumbered(9), v4(10, 0, 0, 2), 2, kSecond), nullptr);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);
  EXPECT_EQ(highWater(), 1u);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(9)), &first);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 2), 2), nullptr);

  // Still refused once answered: the transaction lives on.
  ASSERT_TRUE(table_.answered(first, pattern(10, 1)));
  EXPECT_EQ(table_.open(proxyNumbered(9), v4(10, 0, 0, 2), 2, kSecond), nullptr);

  // Free again once closed.
  table_.close(first);
  TransactionShm* again = table_.open(proxyNumbered(9), v4(10, 0, 0, 2), 2, kSecond);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(9)), again);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 2), 2), again);
}

TEST_F(TransactionTableTest, ProxyNumberedAndCommandNumberedKeysDoNotCollide) {
  EXPECT_NE(commandNumbered(0x0a000001, 7), proxyNumbered(7));
  EXPECT_NE(commandNumbered(0x0a000001, 7), commandNumbered(0x0a000002, 7));
  EXPECT_NE(commandNumbered(0x0a000001, 7), proxyNumbered(0x0a000001));

  TransactionShm& proxy = open(proxyNumbered(7), v4(10, 0, 0, 1), 7);
  TransactionShm& command1 = open(commandNumbered(0x0a000001, 7), v4(10, 0, 0, 2), 7);
  TransactionShm& command2 = open(commandNumbered(0x0a000002, 7), v4(10, 0, 0, 3), 7);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(7)), &proxy);
  EXPECT_EQ(table_.findByResponse(commandNumbered(0x0a000001, 7)), &command1);
  EXPECT_EQ(table_.findByResponse(commandNumbered(0x0a000002, 7)), &command2);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(0x0a000001)), nullptr);

  table_.close(proxy);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(7)), nullptr);
  EXPECT_EQ(table_.findByResponse(commandNumbered(0x0a000001, 7)), &command1);
  EXPECT_EQ(table_.findByResponse(commandNumbered(0x0a000002, 7)), &command2);
}

// --- Capacity and reuse -----------------------------------------------------

TEST_F(TransactionTableTest, OpenFailsExactlyOnceTheTableHoldsCapacityTransactions) {
  const auto requests = randomRequests(kCapacity + 1, 1);
  const auto records = openAll(table_, std::span(requests).first(kCapacity));
  ASSERT_EQ(refused(records), 0u);
  EXPECT_EQ(std::set<TransactionShm*>(records.begin(), records.end()).size(), kCapacity);
  EXPECT_EQ(table_.live(), kCapacity);
  EXPECT_EQ(table_.pending(), kCapacity);
  EXPECT_EQ(highWater(), kCapacity);

  EXPECT_EQ(openRequest(table_, requests[kCapacity]), nullptr);
  EXPECT_EQ(table_.live(), kCapacity);
  EXPECT_EQ(highWater(), kCapacity);
  EXPECT_EQ(table_.findByResponse(requests[kCapacity].response_key), nullptr);
  EXPECT_EQ(table_.findByRequester(requests[kCapacity].requester, requests[kCapacity].sequence), nullptr);
}

TEST_F(TransactionTableTest, ClosedRecordIsReusedWhenTheTableIsFull) {
  const auto requests = randomRequests(kCapacity + 2, 2);
  const auto records = openAll(table_, std::span(requests).first(kCapacity));
  ASSERT_EQ(refused(records), 0u);

  table_.close(*records[500]);
  EXPECT_EQ(table_.live(), kCapacity - 1);
  TransactionShm* reused = openRequest(table_, requests[kCapacity]);
  EXPECT_EQ(reused, records[500]);
  EXPECT_EQ(highWater(), kCapacity);
  EXPECT_EQ(table_.findByResponse(requests[kCapacity].response_key), reused);
  EXPECT_EQ(table_.findByResponse(requests[500].response_key), nullptr);
  EXPECT_EQ(openRequest(table_, requests[kCapacity + 1]), nullptr);
}

TEST_F(TransactionTableTest, HighWaterGrowsOnlyWhenNoFreedRecordExists) {
  TransactionShm& a = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  TransactionShm& b = open(proxyNumbered(2), v4(10, 0, 0, 1), 2);
  TransactionShm& c = open(proxyNumbered(3), v4(10, 0, 0, 1), 3);
  EXPECT_EQ(highWater(), 3u);
  EXPECT_EQ(&b, &a + 1);
  EXPECT_EQ(&c, &a + 2);

  table_.close(b);
  EXPECT_EQ(highWater(), 3u);
  EXPECT_EQ(&open(proxyNumbered(4), v4(10, 0, 0, 1), 4), &b);
  EXPECT_EQ(highWater(), 3u);

  EXPECT_EQ(&open(proxyNumbered(5), v4(10, 0, 0, 1), 5), &a + 3);
  EXPECT_EQ(highWater(), 4u);
}

TEST_F(TransactionTableTest, ReusedRecordCarriesNothingOfItsPreviousTransaction) {
  TransactionShm& old = open(proxyNumbered(1), v4(10, 0, 0, 1), 1, kSecond);
  old.message_type = 34;
  old.session_teid = 0x1234;
  ASSERT_TRUE(table_.answered(old, pattern(64, 1)));
  table_.close(old);

  TransactionShm& now = open(proxyNumbered(2), v4(10, 0, 0, 2), 2, 7 * kSecond);
  ASSERT_EQ(&now, &old);
  EXPECT_EQ(now.state, kPending);
  EXPECT_EQ(now.message_type, 0);
  EXPECT_EQ(now.session_teid, 0u);
  EXPECT_EQ(now.answer_length, 0u);
  EXPECT_EQ(now.received_ns, 7 * kSecond);
  EXPECT_TRUE(table_.answerOf(now).empty());
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), nullptr);
}

// --- Answers ----------------------------------------------------------------

TEST_F(TransactionTableTest, AnsweredTransactionStaysLiveButNoLongerPending) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  open(proxyNumbered(2), v4(10, 0, 0, 1), 2);
  ASSERT_EQ(table_.pending(), 2u);

  EXPECT_TRUE(table_.answered(t, pattern(40, 1)));
  EXPECT_EQ(t.state, kAnswered);
  EXPECT_EQ(table_.pending(), 1u);
  EXPECT_EQ(table_.live(), 2u);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), &t);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), &t);

  // A second copy of the response counts once.
  EXPECT_TRUE(table_.answered(t, pattern(40, 1)));
  EXPECT_EQ(table_.pending(), 1u);
  EXPECT_EQ(table_.live(), 2u);
}

TEST_F(TransactionTableTest, AnswerOfReturnsTheExactBytes) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  EXPECT_TRUE(table_.answerOf(t).empty());  // pending: nothing yet

  const auto answer = pattern(37, 5);
  ASSERT_TRUE(table_.answered(t, answer));
  EXPECT_EQ(t.answer_length, 37u);
  EXPECT_EQ(bytesOf(table_.answerOf(t)), answer);
}

TEST_F(TransactionTableTest, LaterAnswerReplacesTheCachedOne) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  ASSERT_TRUE(table_.answered(t, pattern(30, 1)));

  ASSERT_TRUE(table_.answered(t, pattern(20, 2)));
  EXPECT_EQ(bytesOf(table_.answerOf(t)), pattern(20, 2));
  ASSERT_TRUE(table_.answered(t, {}));
  EXPECT_TRUE(table_.answerOf(t).empty());
  ASSERT_TRUE(table_.answered(t, pattern(20, 3)));
  ASSERT_FALSE(table_.answered(t, pattern(kAnswerBytes / 4 + 1, 4)));
  EXPECT_TRUE(table_.answerOf(t).empty());
}

TEST_F(TransactionTableTest, EmptyAnswerIsAcceptedAndGivesNoCachedAnswer) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);

  EXPECT_TRUE(table_.answered(t, {}));
  EXPECT_EQ(t.state, kAnswered);
  EXPECT_EQ(table_.pending(), 0u);
  EXPECT_TRUE(table_.answerOf(t).empty());
  EXPECT_EQ(answerHead(), 0u);
}

TEST_F(TransactionTableTest, AnswerLargerThanAQuarterOfTheCacheIsNotKept) {
  TransactionShm& big = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  TransactionShm& quarter = open(proxyNumbered(2), v4(10, 0, 0, 1), 2);

  EXPECT_FALSE(table_.answered(big, pattern(kAnswerBytes / 4 + 1, 1)));
  EXPECT_EQ(big.state, kAnswered);
  EXPECT_TRUE(table_.answerOf(big).empty());
  EXPECT_EQ(answerHead(), 0u);
  EXPECT_EQ(table_.pending(), 1u);

  const auto answer = pattern(kAnswerBytes / 4, 2);
  EXPECT_TRUE(table_.answered(quarter, answer));
  EXPECT_EQ(bytesOf(table_.answerOf(quarter)), answer);
}

TEST_F(TransactionTableTest, RingWrapsOverOldAnswersAndKeepsRecentOnesExact) {
  // 100 octets take 104 in the ring: 61 answers are more than its 4096.
  constexpr uint32_t kAnswers = 61;
  std::vector<TransactionShm*> records;
  for (uint32_t i = 0; i < kAnswers; ++i) {
    records.push_back(&open(proxyNumbered(i + 1), v4(10, 0, 0, 1), i + 1));
    ASSERT_TRUE(table_.answered(*records.back(), pattern(100, i)));
  }
  ASSERT_GT(answerHead(), kAnswerBytes);

  EXPECT_TRUE(table_.answerOf(*records[0]).empty());
  uint32_t kept = 0;
  for (uint32_t i = 0; i < kAnswers; ++i) {
    const auto answer = table_.answerOf(*records[i]);
    if (answer.empty()) {
      // Once one is kept, every later one is.
      EXPECT_EQ(kept, 0u) << "answer " << i << " lost after a kept one";
      continue;
    }
    ++kept;
    EXPECT_EQ(bytesOf(answer), pattern(100, i)) << "answer " << i;
  }
  // Everything written in the last ring's worth of octets is still there, and
  // no more than the ring can hold.
  EXPECT_GE(kept, (kAnswerBytes - 104) / 104);
  EXPECT_LE(kept, kAnswerBytes / 104);
}

TEST_F(TransactionTableTest, AnswersFillingTheRingExactlyAreAllKept) {
  std::vector<TransactionShm*> records;
  for (uint32_t i = 0; i < 4; ++i) {
    records.push_back(&open(proxyNumbered(i + 1), v4(10, 0, 0, 1), i + 1));
    ASSERT_TRUE(table_.answered(*records.back(), pattern(kAnswerBytes / 4, i)));
  }
  EXPECT_EQ(answerHead(), kAnswerBytes);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(bytesOf(table_.answerOf(*records[i])), pattern(kAnswerBytes / 4, i)) << "answer " << i;
  }

  // Eight more octets overwrite the start of the first answer only.
  TransactionShm& next = open(proxyNumbered(5), v4(10, 0, 0, 1), 5);
  ASSERT_TRUE(table_.answered(next, pattern(8, 9)));
  EXPECT_TRUE(table_.answerOf(*records[0]).empty());
  for (uint32_t i = 1; i < 4; ++i) {
    EXPECT_EQ(bytesOf(table_.answerOf(*records[i])), pattern(kAnswerBytes / 4, i)) << "answer " << i;
  }
  EXPECT_EQ(bytesOf(table_.answerOf(next)), pattern(8, 9));
}

TEST_F(TransactionTableTest, AnswerThatWouldStraddleTheEndOfTheRingIsStoredWhole) {
  std::vector<TransactionShm*> records;
  for (uint32_t i = 0; i < 4; ++i) {
    records.push_back(&open(proxyNumbered(i + 1), v4(10, 0, 0, 1), i + 1));
    ASSERT_TRUE(table_.answered(*records.back(), pattern(1000, i)));
  }
  ASSERT_EQ(answerHead(), 4000u);

  // 4000 + 200 > 4096: written at the start of the ring, the 96 octets
  // skipped counting as written.
  TransactionShm& straddling = open(proxyNumbered(5), v4(10, 0, 0, 1), 5);
  const auto answer = pattern(200, 7);
  ASSERT_TRUE(table_.answered(straddling, answer));
  const auto cached = table_.answerOf(straddling);
  EXPECT_EQ(bytesOf(cached), answer);
  EXPECT_EQ(cached.data(), segment_.memory().answers);
  EXPECT_EQ(answerHead(), kAnswerBytes + 200);

  // It overwrote the first answer's start, and nothing of the others.
  EXPECT_TRUE(table_.answerOf(*records[0]).empty());
  for (uint32_t i = 1; i < 4; ++i) {
    EXPECT_EQ(bytesOf(table_.answerOf(*records[i])), pattern(1000, i)) << "answer " << i;
  }
}

// --- Close ------------------------------------------------------------------

TEST_F(TransactionTableTest, CloseRemovesBothKeysAndKeepsTheOthers) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  TransactionShm& other = open(proxyNumbered(2), v4(10, 0, 0, 2), 1);

  table_.close(t);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), nullptr);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), nullptr);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(2)), &other);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 2), 1), &other);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);

  // Closing it again changes nothing.
  table_.close(t);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);
}

TEST_F(TransactionTableTest, ClosingAnAnsweredTransactionLeavesPendingAlone) {
  TransactionShm& answered = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  open(proxyNumbered(2), v4(10, 0, 0, 1), 2);
  ASSERT_TRUE(table_.answered(answered, pattern(20, 1)));
  ASSERT_EQ(table_.pending(), 1u);

  table_.close(answered);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);
}

TEST(TransactionTableChurnTest, ClosingInRandomOrderKeepsEveryOtherTransactionFindable) {
  constexpr uint32_t kCapacity = 2048;
  Segment segment(kCapacity, 4096);
  TransactionTable table(segment.memory());
  table.rebuild(true);
  const auto requests = randomRequests(kCapacity, 3);
  auto records = openAll(table, requests);
  ASSERT_EQ(refused(records), 0u);

  std::mt19937 rng(4);
  const auto order = shuffled(kCapacity, rng);
  for (uint32_t step = 0; step < kCapacity; ++step) {
    ASSERT_TRUE(closeAndCheck(table, requests, records, order[step])) << "step " << step;
    ASSERT_EQ(table.live(), kCapacity - step - 1);
  }
}

// One big table has one end of its index arrays, which few closes reach: many
// small full tables closed in random order give hundreds of closes inside a
// run that crosses the end.
TEST(TransactionTableChurnTest, ClosingInARunAcrossTheEndOfTheIndexKeepsTheOthersFindable) {
  constexpr uint32_t kCapacity = 64;
  constexpr uint32_t kRounds = 300;
  Segment segment(kCapacity, 4096);
  TransactionTable table(segment.memory());
  const TransactionMemory m = segment.memory();
  uint32_t across_response = 0;
  uint32_t across_requester = 0;
  std::mt19937 rng(9);
  for (uint32_t round = 0; round < kRounds; ++round) {
    table.rebuild(true);  // every round ends with the table empty again
    const auto requests = randomRequests(kCapacity, 100 + round);
    auto records = openAll(table, requests);
    ASSERT_EQ(refused(records), 0u) << "round " << round;
    for (const uint32_t i : shuffled(kCapacity, rng)) {
      const auto record = static_cast<uint32_t>(records[i] - m.records);
      across_response += inRunCrossingTheEnd(m.by_response, kCapacity, record);
      across_requester += inRunCrossingTheEnd(m.by_requester, kCapacity, record);
      ASSERT_TRUE(closeAndCheck(table, requests, records, i)) << "round " << round;
    }
  }
  // The rounds did what they are for.
  EXPECT_GE(across_response, 50u);
  EXPECT_GE(across_requester, 50u);
}

TEST(TransactionTableChurnTest, OpeningAndClosingAtFullLoadKeepsEveryTransactionFindable) {
  constexpr uint32_t kCapacity = 1024;
  constexpr uint32_t kSteps = 3000;
  Segment segment(kCapacity, 4096);
  TransactionTable table(segment.memory());
  table.rebuild(true);
  const auto requests = randomRequests(kCapacity + kSteps, 5);
  auto records = openAll(table, std::span(requests).first(kCapacity));
  ASSERT_EQ(refused(records), 0u);
  records.resize(requests.size(), nullptr);
  std::vector<uint32_t> live(kCapacity);
  std::iota(live.begin(), live.end(), 0u);
  std::mt19937 rng(6);
  for (uint32_t step = 0; step < kSteps; ++step) {
    const std::size_t victim = rng() % live.size();
    ASSERT_TRUE(closeAndCheck(table, requests, records, live[victim])) << "step " << step;
    const uint32_t fresh = kCapacity + step;
    records[fresh] = openRequest(table, requests[fresh]);
    ASSERT_NE(records[fresh], nullptr) << "step " << step;
    ASSERT_EQ(table.findByRequester(requests[fresh].requester, requests[fresh].sequence), records[fresh]);
    live[victim] = fresh;
  }
  EXPECT_EQ(lost(table, requests, records), 0u);
  EXPECT_EQ(table.live(), kCapacity);
  EXPECT_EQ(segment.header().transactions_high_water, kCapacity);
}

// --- Rekey and kept requests ------------------------------------------------

TEST_F(TransactionTableTest, RekeyMovesTheResponseKeyAndKeepsTheRequester) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);

  EXPECT_TRUE(table_.rekey(t, proxyNumbered(2)));
  EXPECT_EQ(t.response_key, proxyNumbered(2));
  EXPECT_EQ(table_.findByResponse(proxyNumbered(2)), &t);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), nullptr);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), &t);
  EXPECT_EQ(table_.live(), 1u);
  EXPECT_EQ(table_.pending(), 1u);

  // Closing removes the new key.
  table_.close(t);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(2)), nullptr);
  EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), 1), nullptr);
}

TEST_F(TransactionTableTest, RekeyIsRefusedForATakenKeyOrAnAnsweredTransaction) {
  TransactionShm& a = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  TransactionShm& b = open(proxyNumbered(2), v4(10, 0, 0, 1), 2);

  EXPECT_FALSE(table_.rekey(a, proxyNumbered(2)));
  EXPECT_EQ(a.response_key, proxyNumbered(1));
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), &a);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(2)), &b);

  ASSERT_TRUE(table_.answered(a, pattern(10, 1)));
  EXPECT_FALSE(table_.rekey(a, proxyNumbered(3)));
  EXPECT_EQ(table_.findByResponse(proxyNumbered(3)), nullptr);
  EXPECT_EQ(table_.findByResponse(proxyNumbered(1)), &a);
}

// The response index's slots in a table of 128 records (256 slots): where a
// key's entry goes in an empty index is its home.
class IndexProbe {
 public:
  static constexpr uint32_t kCapacity = 128;
  IndexProbe() : segment_(kCapacity, 4096), table_(segment_.memory()) { table_.rebuild(true); }
  uint32_t homeOf(uint64_t key) {
    TransactionShm* t = table_.open(key, v4(10, 0, 0, 1), 1, kSecond);
    const TransactionMemory m = segment_.memory();
    const auto record = static_cast<uint32_t>(t - m.records);
    uint32_t slot = 0;
    while (m.by_response[slot].record != record + 1) ++slot;
    table_.close(*t);
    return slot;
  }

 private:
  Segment segment_;
  TransactionTable table_;
};

TEST(TransactionTableRekeyTest, RekeyThatFailsLeavesTheTransactionFoundByItsOldKey) {
  // 65 keys whose home is slot 100 and one for each of slots 101..106.
  constexpr uint32_t kHome = 100;
  IndexProbe probe;
  std::vector<uint64_t> at_home;
  std::vector<uint64_t> after(6, 0);
  for (uint32_t n = 1; at_home.size() < 65 || std::count(after.begin(), after.end(), 0u) != 0; ++n) {
    ASSERT_LT(n, 200'000u);
    const uint32_t home = probe.homeOf(proxyNumbered(n));
    if (home == kHome && at_home.size() < 65) at_home.push_back(proxyNumbered(n));
    if (home > kHome && home <= kHome + 6 && after[home - kHome - 1] == 0) after[home - kHome - 1] = proxyNumbered(n);
  }

  // Slots 100..163 hold 64 keys homed at 100; 164..169 one homed at each of
  // 101..106, each at its 64th probe.
  std::vector<Request> requests;
  for (uint32_t i = 0; i < 64; ++i) requests.push_back({at_home[i], v4(10, 0, 1, static_cast<uint8_t>(i)), i});
  for (uint32_t i = 0; i < 6; ++i) requests.push_back({after[i], v4(10, 0, 2, static_cast<uint8_t>(i)), i});
  Segment segment(IndexProbe::kCapacity, 4096);
  TransactionTable table(segment.memory());
  table.rebuild(true);
  const auto records = openAll(table, requests);
  ASSERT_EQ(refused(records), 0u);

  // The new key, homed at 100 too, finds no free slot within its 64 probes
  // once the old key's entry is gone and the run shifted back by one.
  TransactionShm& t = *records[0];
  EXPECT_FALSE(table.rekey(t, at_home[64]));
  EXPECT_EQ(t.response_key, at_home[0]);
  EXPECT_EQ(table.findByResponse(at_home[64]), nullptr);
  // Refused, the transaction must still answer to its old key.
  EXPECT_EQ(table.findByResponse(at_home[0]), &t);
  EXPECT_EQ(lost(table, requests, records), 0u);
}

TEST_F(TransactionTableTest, KeptRequestIsReturnedExactlyBesideTheAnswer) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  EXPECT_TRUE(table_.requestOf(t).empty());

  const auto request = pattern(300, 1);
  ASSERT_TRUE(table_.keepRequest(t, request));
  EXPECT_EQ(bytesOf(table_.requestOf(t)), request);

  // Kept again (renumbered for another gateway): the new copy.
  const auto renumbered = pattern(300, 2);
  ASSERT_TRUE(table_.keepRequest(t, renumbered));
  EXPECT_EQ(bytesOf(table_.requestOf(t)), renumbered);

  const auto answer = pattern(50, 3);
  ASSERT_TRUE(table_.answered(t, answer));
  EXPECT_EQ(bytesOf(table_.answerOf(t)), answer);
  EXPECT_EQ(bytesOf(table_.requestOf(t)), renumbered);
}

TEST_F(TransactionTableTest, RequestLargerThanAQuarterOfTheCacheIsNotKept) {
  TransactionShm& t = open(proxyNumbered(1), v4(10, 0, 0, 1), 1);
  ASSERT_TRUE(table_.keepRequest(t, pattern(100, 1)));

  EXPECT_FALSE(table_.keepRequest(t, pattern(kAnswerBytes / 4 + 1, 2)));
  EXPECT_TRUE(table_.requestOf(t).empty());
}

// --- Sweep ------------------------------------------------------------------

TEST_F(TransactionTableTest, SweepClosesExactlyTheTransactionsReceivedBeforeTheDeadline) {
  // Received at 1 s .. 10 s; two of them answered.
  for (uint32_t i = 1; i <= 10; ++i) open(proxyNumbered(i), v4(10, 0, 0, 1), i, i * kSecond);
  ASSERT_TRUE(table_.answered(*table_.findByResponse(proxyNumbered(2)), pattern(10, 2)));
  ASSERT_TRUE(table_.answered(*table_.findByResponse(proxyNumbered(7)), pattern(10, 7)));
  ASSERT_EQ(table_.pending(), 8u);

  std::vector<uint64_t> expired;
  table_.sweep(6 * kSecond, kCapacity, [&](TransactionShm& t) {
    // Called before the record is closed.
    EXPECT_NE(t.state, static_cast<uint8_t>(TransactionState::kFree));
    EXPECT_EQ(table_.findByResponse(t.response_key), &t);
    expired.push_back(t.response_key);
  });

  std::sort(expired.begin(), expired.end());
  EXPECT_EQ(expired, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  for (uint32_t i = 1; i <= 5; ++i) {
    EXPECT_EQ(table_.findByResponse(proxyNumbered(i)), nullptr) << i;
    EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), i), nullptr) << i;
  }
  // Received at the deadline or later: kept.
  for (uint32_t i = 6; i <= 10; ++i) {
    TransactionShm* t = table_.findByResponse(proxyNumbered(i));
    ASSERT_NE(t, nullptr) << i;
    EXPECT_EQ(table_.findByRequester(v4(10, 0, 0, 1), i), t) << i;
    EXPECT_EQ(t->received_ns, i * kSecond);
  }
  EXPECT_EQ(table_.live(), 5u);
  EXPECT_EQ(table_.pending(), 4u);
}

TEST_F(TransactionTableTest, SweepWithASmallBudgetTakesSeveralCalls) {
  // 120 records: even ones old, odd ones young.
  for (uint32_t i = 0; i < 120; ++i) {
    open(proxyNumbered(i + 1), v4(10, 0, 0, 1), i + 1, i % 2 == 0 ? kSecond : 10 * kSecond);
  }
  std::set<uint64_t> expired;
  auto sweep = [&] {
    const std::size_t before = expired.size();
    table_.sweep(5 * kSecond, 40, [&](TransactionShm& t) { EXPECT_TRUE(expired.insert(t.response_key).second); });
    return expired.size() - before;
  };

  // 40 records examined per call, half of them old.
  EXPECT_EQ(sweep(), 20u);
  EXPECT_EQ(table_.live(), 100u);
  EXPECT_EQ(sweep(), 20u);
  EXPECT_EQ(sweep(), 20u);
  EXPECT_EQ(table_.live(), 60u);
  // The cursor went round: nothing old left.
  EXPECT_EQ(sweep(), 0u);
  EXPECT_EQ(table_.live(), 60u);
  for (uint32_t i = 0; i < 120; ++i) {
    const bool old = i % 2 == 0;
    EXPECT_EQ(expired.count(proxyNumbered(i + 1)), old ? 1u : 0u) << i;
    EXPECT_EQ(table_.findByResponse(proxyNumbered(i + 1)) == nullptr, old) << i;
  }
}

// --- Restart ----------------------------------------------------------------

TEST_F(TransactionTableTest, RebuildAfterARestartRestoresBothIndexesFromTheRecords) {
  constexpr uint32_t kOpened = 600;
  constexpr uint32_t kClosed = 150;
  const auto requests = randomRequests(kOpened + kClosed + 1, 7);
  auto records = openAll(table_, std::span(requests).first(kOpened));
  ASSERT_EQ(refused(records), 0u);
  for (uint32_t i = 0; i < kOpened; i += 3) {
    ASSERT_TRUE(table_.answered(*records[i], i % 9 == 0 ? std::vector<uint8_t>{} : pattern(16 + i % 40, i)));
  }
  std::mt19937 rng(8);
  const auto order = shuffled(kOpened, rng);
  std::set<TransactionShm*> freed;
  for (uint32_t k = 0; k < kClosed; ++k) {
    freed.insert(records[order[k]]);
    table_.close(*records[order[k]]);
    records[order[k]] = nullptr;
  }
  std::vector<std::vector<uint8_t>> answers(kOpened);
  for (uint32_t i = 0; i < kOpened; ++i) {
    if (records[i] != nullptr) answers[i] = bytesOf(table_.answerOf(*records[i]));
  }
  // Some answers are still in the cache (the older ones were wrapped over).
  ASSERT_GT(std::count_if(answers.begin(), answers.end(), [](const auto& a) { return !a.empty(); }), 20);
  const uint64_t live = table_.live();
  const uint64_t pending = table_.pending();
  ASSERT_EQ(live, kOpened - kClosed);

  // The worker dies in the middle of an index update; its successor attaches.
  segment_.scribbleOverIndexes();
  TransactionTable restarted(segment_.memory());
  restarted.rebuild(false);

  EXPECT_EQ(restarted.live(), live);
  EXPECT_EQ(restarted.pending(), pending);
  EXPECT_EQ(highWater(), kOpened);
  const std::vector<Request> opened(requests.begin(), requests.begin() + kOpened);
  EXPECT_EQ(lost(restarted, opened, records), 0u);
  for (uint32_t i = 0; i < kOpened; ++i) {
    if (records[i] == nullptr) {
      EXPECT_EQ(restarted.findByResponse(requests[i].response_key), nullptr) << i;
      EXPECT_EQ(restarted.findByRequester(requests[i].requester, requests[i].sequence), nullptr) << i;
    } else {
      EXPECT_EQ(bytesOf(restarted.answerOf(*records[i])), answers[i]) << i;
    }
  }

  // Freed records are used again before the high water grows.
  for (uint32_t k = 0; k < kClosed; ++k) {
    TransactionShm* t = openRequest(restarted, requests[kOpened + k]);
    ASSERT_NE(t, nullptr) << k;
    EXPECT_EQ(freed.erase(t), 1u) << "reopened record " << k << " was not a freed one";
    EXPECT_EQ(highWater(), kOpened);
  }
  EXPECT_NE(openRequest(restarted, requests[kOpened + kClosed]), nullptr);
  EXPECT_EQ(highWater(), kOpened + 1);
  EXPECT_EQ(restarted.live(), kOpened + 1);
}

}  // namespace
}  // namespace gtpcp::worker
