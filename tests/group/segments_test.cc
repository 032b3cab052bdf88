// Segments and their owners (common/group/segments.h): a reader never
// creates a segment; it waits for the owner to make it, or fails with a
// message naming the segment and its owner.
#include "common/group/segments.h"

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/group/rings.h"
#include "common/ring/segment.h"

namespace gtpcp::group {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kKind = 0x54535431;  // "TST1"

class SegmentsTest : public ::testing::Test {
 protected:
  SegmentsTest()
      : name_(ring::shmName("segtest" + std::to_string(::getpid()),
                            ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    ring::SharedSegment::remove(name_);
  }
  ~SegmentsTest() override { ring::SharedSegment::remove(name_); }
  std::string name_;
};

TEST_F(SegmentsTest, AMissingSegmentIsNamedWithItsOwnerAndNotCreated) {
  const auto start = std::chrono::steady_clock::now();
  auto seg = attachOwned(name_, kKind, 64, workerOwner(3), 50ms);
  ASSERT_FALSE(seg);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms) << "it waited for the owner";
  EXPECT_EQ(seg.error().code, ring::Errc::kNotFound);
  EXPECT_EQ(seg.error().message, "shared memory " + name_ +
                                     " does not exist: it is made by gtpcp-worker --index 3, which has not made it "
                                     "within 50 ms");
  EXPECT_FALSE(ring::SharedSegment::attach(name_, kKind)) << "the reader made nothing";
}

TEST_F(SegmentsTest, AReaderWaitsForTheOwnerToMakeIt) {
  std::thread owner([&] {
    std::this_thread::sleep_for(100ms);
    auto made = ring::SharedSegment::createOrAttach(name_, 128, kKind);
    ASSERT_TRUE(made) << made.error().message;
  });
  auto seg = attachOwned(name_, kKind, 128, kForwarderOwner, 5000ms);
  owner.join();
  ASSERT_TRUE(seg) << seg.error().message;
  EXPECT_FALSE(seg->created());
  EXPECT_EQ(seg->payloadSize(), 128u);
}

TEST_F(SegmentsTest, ASegmentSmallerThanTheLayoutIsRefused) {
  auto made = ring::SharedSegment::createOrAttach(name_, 64, kKind);
  ASSERT_TRUE(made);
  auto seg = attachOwned(name_, kKind, 128, kPersisterOwner, 0ms);
  ASSERT_FALSE(seg);
  EXPECT_EQ(seg.error().code, ring::Errc::kMismatch);
  EXPECT_NE(seg.error().message.find("at least 128"), std::string::npos) << seg.error().message;
}

TEST_F(SegmentsTest, ARingOfAnotherSizeIsRefusedNamingTheFix) {
  auto made = createRingSegment(name_, 8192);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(attachRingSegment(name_, 8192, workerOwner(0), 0ms));
  auto other = attachRingSegment(name_, 4096, workerOwner(0), 0ms);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("gtpcp stop"), std::string::npos) << other.error().message;
}

TEST(GroupSegments, EveryNameOfAGroupIsListedForItsStop) {
  const Paths paths("g", "/run/g", "a");
  const auto names = groupSegments(paths, 2);
  EXPECT_EQ(names.size(), 8u + 2u * 8u);
  for (const std::string& n : {paths.forwarderSegment(), paths.gatewayTableSegment(), paths.persisterSegment(),
                               paths.watchdogSegment(), paths.controlSegment(), paths.bgpWatchdogSegment(),
                               paths.bridgeSegment(), paths.consoleSegment(), paths.workerDoorbell(1), paths.ring(1, RingKind::kRestore)})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

}  // namespace
}  // namespace gtpcp::group
