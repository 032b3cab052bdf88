// Shared-memory segments and their names: creation and attachment, the
// initialiser, refusal of segments this build does not understand (with the
// exact messages an operator reads), waiting for a creator that is still
// initialising, and a creation race between processes.
#include "common/ring/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "tests/ring/ring_test_util.h"

namespace gtpcp::ring {
namespace {

using test::kTestKind;
using test::ShmTest;

SegmentHeaderShm* writableHeader(const SharedSegment& segment) {
  return reinterpret_cast<SegmentHeaderShm*>(static_cast<uint8_t*>(segment.payload()) -
                                             kSegmentPayloadOffset);
}

// ---- names ------------------------------------------------------------------

TEST(ShmName, Builds) {
  EXPECT_EQ(shmName("demo", "w0.prio"), "/gtpcp.demo.w0.prio");
  EXPECT_EQ(shmName("Group_1-a", "x"), "/gtpcp.Group_1-a.x");
  auto r = makeShmName("g", "o");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "/gtpcp.g.o");
}

TEST(ShmName, RefusesBadParts) {
  struct Case {
    std::string_view group, object, message;
  };
  const Case cases[] = {
      {"", "o", "shared memory name: group is empty"},
      {"g", "", "shared memory name: object is empty"},
      {"a/b", "o",
       "shared memory name: group 'a/b' has '/' at offset 1; allowed are A-Z a-z 0-9 _ . -"},
      {"g", "w0 prio",
       "shared memory name: object 'w0 prio' has 0x20 at offset 2; allowed are A-Z a-z 0-9 _ . -"},
      {"g", "caf\xc3\xa9",
       "shared memory name: object 'caf\xc3\xa9' has 0xc3 at offset 3; allowed are A-Z a-z 0-9 _ . "
       "-"},
      {"g:1", "o",
       "shared memory name: group 'g:1' has ':' at offset 1; allowed are A-Z a-z 0-9 _ . -"},
  };
  for (const auto& c : cases) {
    auto r = makeShmName(c.group, c.object);
    ASSERT_FALSE(r) << c.message;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(r.error().message, c.message);
  }
}

TEST(ShmName, LengthLimit) {
  // "/gtpcp." + group + "." + object: 8 octets around the parts.
  const std::string group(100, 'g');
  EXPECT_TRUE(makeShmName(group, std::string(92, 'o')));  // exactly 200
  auto r = makeShmName(group, std::string(93, 'o'));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "shared memory name '/gtpcp." + group + "." + std::string(93, 'o') +
                                   "' is 201 octets, longer than 200");
}

TEST(ShmNameDeathTest, AbortsOnMisuse) {
  EXPECT_DEATH(shmName("a/b", "o"), "group 'a/b' has '/' at offset 1");
  EXPECT_DEATH(shmName("g", ""), "object is empty");
}

// ---- create and attach ------------------------------------------------------

using SegmentTest = ShmTest;

TEST_F(SegmentTest, CreateThenAttach) {
  const std::string name = newName();
  auto created = SharedSegment::createOrAttach(name, 10000, kTestKind);
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_TRUE(created->created());
  EXPECT_EQ(created->name(), name);
  EXPECT_EQ(created->payloadSize(), 10000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(created->payload()) % 64, 0u);
  const auto& header = created->header();
  EXPECT_EQ(header.magic.load(), kSegmentMagic);
  EXPECT_EQ(header.layout_version, kSegmentLayoutVersion);
  EXPECT_EQ(header.kind, kTestKind);
  EXPECT_EQ(header.payload_size, 10000u);
  EXPECT_EQ(header.creator_pid, ::getpid());
  const auto* p = static_cast<const uint8_t*>(created->payload());
  EXPECT_TRUE(std::all_of(p, p + 10000, [](uint8_t b) { return b == 0; }));
  // "GTPCSHM1" is what a hex dump of /dev/shm shows.
  EXPECT_EQ(0, std::memcmp(&header.magic, "GTPCSHM1", 8));

  auto again = SharedSegment::createOrAttach(name, 10000, kTestKind);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->created());
  auto attached = SharedSegment::attach(name, kTestKind);
  ASSERT_TRUE(attached) << attached.error().message;
  EXPECT_FALSE(attached->created());
  EXPECT_EQ(attached->payloadSize(), 10000u);

  // Three mappings of the same memory.
  static_cast<uint8_t*>(created->payload())[9999] = 0x5a;
  EXPECT_EQ(static_cast<uint8_t*>(again->payload())[9999], 0x5a);
  EXPECT_EQ(static_cast<uint8_t*>(attached->payload())[9999], 0x5a);
}

TEST_F(SegmentTest, MoveKeepsTheMapping) {
  const std::string name = newName();
  auto created = SharedSegment::createOrAttach(name, 4096, kTestKind);
  ASSERT_TRUE(created);
  void* payload = created->payload();
  SharedSegment moved = std::move(*created);
  EXPECT_EQ(moved.payload(), payload);
  EXPECT_EQ(created->payload(), nullptr);
  static_cast<uint8_t*>(moved.payload())[0] = 1;
  auto other = SharedSegment::attach(name, kTestKind);
  ASSERT_TRUE(other);
  moved = std::move(*other);
  EXPECT_EQ(static_cast<uint8_t*>(moved.payload())[0], 1);
}

TEST_F(SegmentTest, InitializerRunsOnlyInTheCreator) {
  const std::string name = newName();
  int runs = 0;
  auto init = [&runs](void* payload, std::size_t size) -> Result<void> {
    ++runs;
    std::memset(payload, 0xab, size);
    return {};
  };
  auto created = SharedSegment::createOrAttach(name, 256, kTestKind, init);
  ASSERT_TRUE(created);
  auto attached = SharedSegment::createOrAttach(name, 256, kTestKind, init);
  ASSERT_TRUE(attached);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(static_cast<uint8_t*>(attached->payload())[255], 0xab);
}

TEST_F(SegmentTest, FailedInitializerRemovesTheObject) {
  const std::string name = newName();
  auto init = [](void*, std::size_t) -> Result<void> {
    return fail(Errc::kInvalidArgument, "ring: capacity 3 slots is not good");
  };
  auto r = SharedSegment::createOrAttach(name, 256, kTestKind, init);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "ring: capacity 3 slots is not good");
  auto attached = SharedSegment::attach(name, kTestKind);
  ASSERT_FALSE(attached);
  EXPECT_EQ(attached.error().code, Errc::kNotFound);
}

TEST_F(SegmentTest, AttachToMissing) {
  const std::string name = newName();
  auto r = SharedSegment::attach(name, kTestKind);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kNotFound);
  EXPECT_EQ(r.error().message, "shared memory " + name + ": does not exist");
}

TEST_F(SegmentTest, Remove) {
  const std::string name = newName();
  ASSERT_TRUE(SharedSegment::createOrAttach(name, 64, kTestKind));
  EXPECT_TRUE(SharedSegment::remove(name));
  EXPECT_FALSE(SharedSegment::remove(name));
  EXPECT_FALSE(SharedSegment::attach(name, kTestKind));
}

TEST_F(SegmentTest, MappingOutlivesRemove) {
  const std::string name = newName();
  auto segment = SharedSegment::createOrAttach(name, 64, kTestKind);
  ASSERT_TRUE(segment);
  ASSERT_TRUE(SharedSegment::remove(name));
  static_cast<uint8_t*>(segment->payload())[63] = 7;
  EXPECT_EQ(static_cast<uint8_t*>(segment->payload())[63], 7);
}

TEST_F(SegmentTest, RefusesBadSizes) {
  auto zero = SharedSegment::createOrAttach(newName(), 0, kTestKind);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, Errc::kInvalidArgument);
  auto huge = SharedSegment::createOrAttach(newName(), std::size_t{1} << 41, kTestKind);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, Errc::kInvalidArgument);
}

// ---- refusal ----------------------------------------------------------------

// Both ways in refuse the segment with `message`.
void expectRefusal(const std::string& name, uint32_t kind, std::size_t size,
                   const std::string& message) {
  auto attached = SharedSegment::attach(name, kind);
  ASSERT_FALSE(attached);
  EXPECT_EQ(attached.error().code, Errc::kMismatch);
  EXPECT_EQ(attached.error().message, message);
  auto created = SharedSegment::createOrAttach(name, size, kind);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code, Errc::kMismatch);
  EXPECT_EQ(created.error().message, message);
}

TEST_F(SegmentTest, RefusesWrongMagic) {
  const std::string name = newName();
  auto segment = SharedSegment::createOrAttach(name, 4096, kTestKind);
  ASSERT_TRUE(segment);
  writableHeader(*segment)->magic.store(0x0102030405060708ULL);
  expectRefusal(name, kTestKind, 4096,
                "shared memory " + name +
                    ": magic 0x0102030405060708, expected 0x314d485343505447 (not a gtpcp segment)");
}

TEST_F(SegmentTest, RefusesWrongLayoutVersion) {
  const std::string name = newName();
  auto segment = SharedSegment::createOrAttach(name, 4096, kTestKind);
  ASSERT_TRUE(segment);
  writableHeader(*segment)->layout_version = 7;
  writableHeader(*segment)->kind = 99;  // not looked at: the version comes first
  expectRefusal(name, kTestKind, 4096,
                "shared memory " + name + ": layout version 7, this build understands 1");
}

TEST_F(SegmentTest, RefusesWrongKind) {
  const std::string name = newName();
  ASSERT_TRUE(SharedSegment::createOrAttach(name, 4096, kTestKind));
  expectRefusal(name, 3, 4096,
                "shared memory " + name + ": kind " + std::to_string(kTestKind) +
                    ", this process expects 3");
}

TEST_F(SegmentTest, RefusesWrongSize) {
  const std::string name = newName();
  auto segment = SharedSegment::createOrAttach(name, 4096, kTestKind);
  ASSERT_TRUE(segment);
  auto r = SharedSegment::createOrAttach(name, 8192, kTestKind);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kMismatch);
  EXPECT_EQ(r.error().message,
            "shared memory " + name + ": payload size 4096, this process expects 8192");
  // A header that claims more than the object holds.
  writableHeader(*segment)->payload_size = 1 << 20;
  auto lying = SharedSegment::attach(name, kTestKind);
  ASSERT_FALSE(lying);
  EXPECT_EQ(lying.error().message,
            "shared memory " + name +
                ": object of 4160 octets cannot hold the 1048576-octet payload its header declares");
}

TEST_F(SegmentTest, RefusesObjectSmallerThanAHeader) {
  const std::string name = newName();
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 10), 0);
  ::close(fd);
  auto r = SharedSegment::attach(name, kTestKind);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kMismatch);
  EXPECT_EQ(r.error().message,
            "shared memory " + name + ": size 10 octets, smaller than a segment header (64)");
}

// ---- a creator still initialising -------------------------------------------

// The creator's initialiser blocks until the test lets it go; an attacher
// meanwhile sees magic 0 and must wait for it.
class BlockedCreator {
 public:
  explicit BlockedCreator(const std::string& name) {
    thread_ = std::thread([this, name] {
      auto init = [this](void* payload, std::size_t) -> Result<void> {
        std::unique_lock lock(mutex_);
        entered_ = true;
        cv_.notify_all();
        // Bounded: the test releases it, or it gives up after 10 s.
        cv_.wait_for(lock, std::chrono::seconds(10), [this] { return released_; });
        static_cast<uint8_t*>(payload)[0] = 42;
        return {};
      };
      result_ = SharedSegment::createOrAttach(name, 128, kTestKind, init).has_value();
    });
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return entered_; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }
  bool join() {
    release();
    if (thread_.joinable()) thread_.join();
    return result_;
  }
  ~BlockedCreator() { join(); }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
  bool result_ = false;
  std::thread thread_;
};

TEST_F(SegmentTest, AttacherWaitsForTheCreator) {
  const std::string name = newName();
  BlockedCreator creator(name);
  std::thread releaser([&creator] {
    // The outcome does not depend on this delay: an attacher that comes after
    // the release simply finds the segment ready.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    creator.release();
  });
  auto r = SharedSegment::attach(name, kTestKind);
  releaser.join();
  ASSERT_TRUE(r) << r.error().message;
  // Waiting for the magic means seeing what the initialiser wrote before it.
  EXPECT_EQ(static_cast<uint8_t*>(r->payload())[0], 42);
  EXPECT_TRUE(creator.join());
}

TEST_F(SegmentTest, AttacherGivesUpOnAStuckCreator) {
  const std::string name = newName();
  BlockedCreator creator(name);
  const auto start = std::chrono::steady_clock::now();
  auto r = SharedSegment::attach(name, kTestKind);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kNotInitialised);
  EXPECT_EQ(r.error().message, "shared memory " + name +
                                   ": still not initialised after 2000 ms (its creator may have "
                                   "died while creating it; remove it and retry)");
  EXPECT_GE(waited, SharedSegment::kInitWait);
  EXPECT_TRUE(creator.join());
}

TEST_F(SegmentTest, AttacherGivesUpOnAnEmptyObject) {
  // A creator that died between shm_open and ftruncate.
  const std::string name = newName();
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto r = SharedSegment::createOrAttach(name, 128, kTestKind);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kNotInitialised);
  EXPECT_EQ(r.error().message, "shared memory " + name +
                                   ": still empty after 2000 ms (its creator may have died while "
                                   "creating it; remove it and retry)");
}

// Processes racing to create one segment: exactly one creates and
// initialises it, every other one attaches to the initialised segment.
TEST_F(SegmentTest, ProcessesRaceToCreate) {
  const std::string name = newName();
  constexpr int kProcesses = 6;
  // Exit status: 10 = created, 11 = attached and saw the initialiser's mark,
  // anything else = failure.
  pid_t pids[kProcesses];
  for (int i = 0; i < kProcesses; ++i) {
    pids[i] = ::fork();
    ASSERT_GE(pids[i], 0);
    if (pids[i] == 0) {
      auto init = [](void* payload, std::size_t size) -> Result<void> {
        std::memset(payload, 0x77, size);
        return {};
      };
      auto r = SharedSegment::createOrAttach(name, 1 << 16, kTestKind, init);
      if (!r) ::_exit(1);
      const auto* p = static_cast<const uint8_t*>(r->payload());
      if (!std::all_of(p, p + (1 << 16), [](uint8_t b) { return b == 0x77; })) ::_exit(2);
      ::_exit(r->created() ? 10 : 11);
    }
  }
  int created = 0;
  int attached = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    const int code = WEXITSTATUS(status);
    EXPECT_TRUE(code == 10 || code == 11) << code;
    created += code == 10;
    attached += code == 11;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(attached, kProcesses - 1);
}

}  // namespace
}  // namespace gtpcp::ring
