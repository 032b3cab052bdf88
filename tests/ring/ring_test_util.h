// Helpers shared by the ring tests: shared-memory names that are unique per
// test run and removed at the end even when the test fails, a 64-octet
// aligned buffer for rings that need no sharing, and the pseudo-random record
// pattern that the threaded and two-process tests write and check.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/ring/doorbell.h"
#include "common/ring/ring.h"
#include "common/ring/segment.h"

#if defined(__SANITIZE_THREAD__)
#define GTPCP_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GTPCP_UNDER_TSAN 1
#endif
#endif
#ifndef GTPCP_UNDER_TSAN
#define GTPCP_UNDER_TSAN 0
#endif

namespace gtpcp::ring::test {

// A segment kind that no application uses: "TEST".
inline constexpr uint32_t kTestKind = 0x54534554;

// Base of tests that create shared-memory objects. newName() gives
// "/gtpcp.t<pid>.<suite>-<test>-<n>"; TearDown() removes every name it gave,
// also after a failed assertion (gtest runs TearDown either way).
class ShmTest : public ::testing::Test {
 protected:
  std::string newName(std::string_view tag = "seg") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string object = std::string(info->test_suite_name()) + "-" + info->name() + "-" +
                         std::string(tag) + "-" + std::to_string(names_.size());
    for (char& c : object) {
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
      if (!ok) c = '_';
    }
    names_.push_back(shmName("t" + std::to_string(::getpid()), object));
    return names_.back();
  }
  void TearDown() override { removeAll(); }
  ~ShmTest() override { removeAll(); }

 private:
  void removeAll() {
    // Only the process that made the names removes them: a forked child
    // leaves through _exit() and never gets here.
    if (::getpid() != owner_) return;
    for (const auto& name : names_) SharedSegment::remove(name);
    names_.clear();
  }
  pid_t owner_ = ::getpid();
  std::vector<std::string> names_;
};

// Heap memory for a ring that needs no sharing across processes.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t size)
      : size_(size), data_(static_cast<uint8_t*>(std::aligned_alloc(64, roundUp(size)))) {
    std::memset(data_.get(), 0, size_);
  }
  uint8_t* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  static std::size_t roundUp(std::size_t n) { return (n + 63) / 64 * 64; }
  std::size_t size_;
  std::unique_ptr<uint8_t, Free> data_;
};

// The layout the tests give a segment that carries one ring and its doorbell,
// as an application would: the doorbell first, then the ring.
inline constexpr std::size_t kDoorbellOffset = 0;
inline constexpr std::size_t kRingOffset = sizeof(DoorbellShm);

inline std::size_t ringSegmentBytes(uint32_t capacity_slots) {
  return kRingOffset + ringBytes(capacity_slots);
}

inline SharedSegment::Initializer ringSegmentInit(uint32_t capacity_slots) {
  return [capacity_slots](void* payload, std::size_t size) -> Result<void> {
    auto* base = static_cast<uint8_t*>(payload);
    initDoorbell(reinterpret_cast<DoorbellShm*>(base + kDoorbellOffset));
    return initRing(base + kRingOffset, size - kRingOffset, capacity_slots);
  };
}

inline DoorbellShm* doorbellOf(const SharedSegment& segment) {
  return reinterpret_cast<DoorbellShm*>(static_cast<uint8_t*>(segment.payload()) + kDoorbellOffset);
}
inline void* ringOf(const SharedSegment& segment) {
  return static_cast<uint8_t*>(segment.payload()) + kRingOffset;
}
inline std::size_t ringSizeOf(const SharedSegment& segment) {
  return segment.payloadSize() - kRingOffset;
}

// Sets `stop` and joins `thread` when the scope ends, also when an ASSERT
// returns early: a joinable std::thread must never be destroyed.
class StopAndJoin {
 public:
  StopAndJoin(std::atomic<bool>& stop, std::thread& thread) : stop_(stop), thread_(thread) {}
  ~StopAndJoin() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  StopAndJoin(const StopAndJoin&) = delete;
  StopAndJoin& operator=(const StopAndJoin&) = delete;

 private:
  std::atomic<bool>& stop_;
  std::thread& thread_;
};

// ---- the record pattern -----------------------------------------------------
// Record `seq` has a length and payload octets derived from seq alone, so the
// reader can check every octet and the order without any shared state.

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 0..2000 octets, and one record in 512 of 65535.
inline std::size_t patternLength(uint64_t seq) {
  const uint64_t h = mix64(seq ^ 0xa5a5a5a5a5a5a5a5ULL);
  return (h % 512 == 0) ? kMaxPayload : static_cast<std::size_t>((h >> 9) % 2001);
}

class PatternStream {
 public:
  explicit PatternStream(uint64_t seq) : state_(mix64(seq)) {}
  uint64_t next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ ^ (state_ >> 29);
  }

 private:
  uint64_t state_;
};

inline void fillPattern(uint64_t seq, uint8_t* out, std::size_t length) {
  PatternStream stream(seq);
  std::size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    const uint64_t v = stream.next();
    std::memcpy(out + i, &v, 8);
  }
  if (i < length) {
    const uint64_t v = stream.next();
    std::memcpy(out + i, &v, length - i);
  }
}

// Offset of the first octet that differs from the pattern, or -1.
inline long firstMismatch(uint64_t seq, const uint8_t* in, std::size_t length) {
  PatternStream stream(seq);
  for (std::size_t i = 0; i < length; i += 8) {
    const uint64_t v = stream.next();
    const std::size_t n = length - i < 8 ? length - i : 8;
    if (std::memcmp(in + i, &v, n) != 0) {
      const auto* expected = reinterpret_cast<const uint8_t*>(&v);
      for (std::size_t k = 0; k < n; ++k) {
        if (in[i + k] != expected[k]) return static_cast<long>(i + k);
      }
    }
  }
  return -1;
}

inline DatagramMeta patternMeta(uint64_t seq) {
  DatagramMeta meta{};
  meta.receive_ns = seq;
  const uint64_t h = mix64(seq);
  std::memcpy(meta.peer_address, &h, 8);
  std::memcpy(meta.peer_address + 8, &seq, 8);
  meta.peer_port = static_cast<uint16_t>(seq);
  meta.peer_family = (seq & 1) ? AF_INET6 : AF_INET;
  meta.local_socket = static_cast<uint8_t>(seq % 4);
  meta.flags = static_cast<uint16_t>(seq & 0x7fff);
  meta.aux = static_cast<uint32_t>(seq >> 3);
  return meta;
}

// Empty when `view` is record `seq` of the pattern, else what differs.
inline std::string checkRecord(uint64_t seq, const RecordView& view) {
  const DatagramMeta want = patternMeta(seq);
  const DatagramMeta& got = *view.meta;
  const std::size_t length = patternLength(seq);
  std::string prefix = "record " + std::to_string(seq) + ": ";
  if (got.receive_ns != want.receive_ns) {
    return prefix + "sequence " + std::to_string(got.receive_ns) + " (out of order or lost)";
  }
  if (std::memcmp(got.peer_address, want.peer_address, 16) != 0 ||
      got.peer_port != want.peer_port || got.peer_family != want.peer_family ||
      got.local_socket != want.local_socket || got.flags != want.flags || got.aux != want.aux) {
    return prefix + "meta differs";
  }
  if (got.length != length || view.payload.size() != length) {
    return prefix + "length " + std::to_string(got.length) + ", expected " + std::to_string(length);
  }
  if (long at = firstMismatch(seq, view.payload.data(), length); at >= 0) {
    return prefix + "payload differs at octet " + std::to_string(at);
  }
  return {};
}

}  // namespace gtpcp::ring::test
