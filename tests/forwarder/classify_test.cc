// The forwarder's classification of GTPv1-C datagrams (forwarder/lib/
// classify.h) and the partition of a GTPv1 session creation (common/group/
// session_identity.h): Echo, TEIDs of the proxy's, Create PDP Context and PDU
// Notification Requests by IMSI, the rest by sequence number, headers that do
// not decode, GTPv0.
#include "forwarder/lib/classify.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/group/session_identity.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/ies.h"
#include "common/partition.h"
#include "tests/forwarder/test_messages.h"

namespace gtpcp::forwarder {
namespace {

using namespace gtp;
using testing::breakIes;
using testing::createPdpContextRequest;
using testing::Subscriber;
using testing::v1Message;
using testing::withImsi;

constexpr uint16_t kWorkers = 3;

class ClassifyV1Test : public ::testing::Test {
 protected:
  Classification classify(const std::vector<uint8_t>& bytes) {
    return forwarder::classify(bytes, kWorkers, *scratch_);
  }
  uint16_t partitionOfV1(const std::vector<uint8_t>& bytes) {
    v1::Message m;
    EXPECT_TRUE(m.decode(bytes));
    return group::partitionOfCreatePdpContext(m);
  }

  std::unique_ptr<ClassifyScratch> scratch_ = std::make_unique<ClassifyScratch>();
};

TEST_F(ClassifyV1Test, EchoRequestsAndResponsesAreTheForwardersOwn) {
  const Classification request = classify(v1Message(v1::MessageType::kEchoRequest, 0, 7));
  EXPECT_EQ(request.route, Route::kEchoRequest);
  EXPECT_EQ(request.version, 1);
  EXPECT_EQ(request.message_type, 1);
  const Classification response = classify(v1Message(v1::MessageType::kEchoResponse, 0, 7));
  EXPECT_EQ(response.route, Route::kEchoResponse);
  EXPECT_EQ(response.version, 1);
}

TEST_F(ClassifyV1Test, AProxyTeidNamesThePartitionOfItsWorker) {
  // Partition 1000 belongs to worker 1000 % 3 = 1; partition 2 to worker 2.
  const Classification update =
      classify(v1Message(v1::MessageType::kUpdatePdpContextRequest, (uint32_t{1000} << 22) | 0x1234, 5));
  EXPECT_EQ(update.route, Route::kPriority);
  EXPECT_EQ(update.worker, 1);
  EXPECT_EQ(update.message_type, 18);
  // A secondary PDP context's Create PDP Context Request names its primary by TEID.
  const Classification secondary =
      classify(createPdpContextRequest(withImsi("001010000000001"), (uint32_t{2} << 22) | 9));
  EXPECT_EQ(secondary.route, Route::kPriority);
  EXPECT_EQ(secondary.worker, 2);
  EXPECT_FALSE(secondary.decoded);
}

TEST_F(ClassifyV1Test, ACreatePdpContextRequestGoesToTheNewRingOfItsImsisWorker) {
  for (const std::string digits : {"001010123456789", "001010000000042", "26201987654321", "310150123456789"}) {
    const auto bytes = createPdpContextRequest(withImsi(digits), 0, 77);
    const Classification c = classify(bytes);
    EXPECT_EQ(c.route, Route::kNew) << digits;
    EXPECT_TRUE(c.decoded) << digits;
    EXPECT_EQ(c.version, 1);
    EXPECT_EQ(c.message_type, 16);
    EXPECT_EQ(c.worker, workerOf(partitionOf(std::string_view(digits)), kWorkers)) << digits;
    // The scratch message holds it for the overload path.
    EXPECT_EQ(scratch_->v1.header().sequence_number, 77);
    EXPECT_EQ(v1::readNth<v1::Imsi>(scratch_->v1)->digits.view(), digits);
  }
}

TEST_F(ClassifyV1Test, OneSubscriberHasOnePartitionInBothVersions) {
  for (const std::string digits : {"001010123456789", "00101", "262019876543210"}) {
    const auto create_session = testing::createSessionRequest(digits, 1, 1);
    v2::Message m;
    ASSERT_TRUE(m.decode(create_session));
    EXPECT_EQ(partitionOfV1(createPdpContextRequest(withImsi(digits))), group::partitionOfCreateSession(m))
        << digits;
  }
}

TEST_F(ClassifyV1Test, WithoutImsiTheImeisvThenTheSgsnsTeidAndAddressPlaceTheSession) {
  Subscriber device;
  device.imeisv = "3534900698733019";
  EXPECT_EQ(partitionOfV1(createPdpContextRequest(device)), partitionOf(std::string_view("3534900698733019")));
  // Neither: TEID Control Plane then the SGSN Address for signalling.
  Subscriber anonymous;
  anonymous.teid_c = 0x01020304;
  anonymous.sgsn = Ipv4{{10, 1, 0, 7}};
  const char octets[] = {1, 2, 3, 4, 10, 1, 0, 7};
  EXPECT_EQ(partitionOfV1(createPdpContextRequest(anonymous)), partitionOf(std::string_view(octets, sizeof octets)));
  // The IMSI comes first whatever else the request holds.
  Subscriber all = withImsi("001010000000005");
  all.imeisv = "3534900698733019";
  EXPECT_EQ(partitionOfV1(createPdpContextRequest(all)), partitionOf(std::string_view("001010000000005")));
}

TEST_F(ClassifyV1Test, ACreationThatDoesNotDecodeGoesToTheWorkerItsSequenceNumberNames) {
  std::vector<uint8_t> bytes = createPdpContextRequest(withImsi("001010123456789"), 0, 3 * 100 + 2);
  breakIes(bytes);
  const Classification c = classify(bytes);
  EXPECT_EQ(c.route, Route::kNew);
  EXPECT_FALSE(c.decoded);
  EXPECT_EQ(c.worker, 2);
}

TEST_F(ClassifyV1Test, APduNotificationRequestGoesToThePriorityRingOfItsImsisWorker) {
  for (const std::string digits : {"001010123456790", "001010123456791", "001010123456792"}) {
    const Subscriber subscriber = withImsi(digits);
    const Classification c = classify(v1Message(v1::MessageType::kPduNotificationRequest, 0, 4, &subscriber));
    EXPECT_EQ(c.route, Route::kPriority) << digits;
    EXPECT_EQ(c.worker, workerOf(partitionOf(std::string_view(digits)), kWorkers)) << digits;
    EXPECT_FALSE(c.decoded) << "not a creation";
  }
}

TEST_F(ClassifyV1Test, OtherMessagesWithoutTeidGoToTheWorkerTheirSequenceNumberNames) {
  // A GGSN's rejection with TEID 0 of the proxy's request 3 * 7 + 2: worker 2.
  const Classification rejected = classify(v1Message(v1::MessageType::kCreatePdpContextResponse, 0, 3 * 7 + 2));
  EXPECT_EQ(rejected.route, Route::kPriority);
  EXPECT_EQ(rejected.worker, 2);
  EXPECT_EQ(classify(v1Message(v1::MessageType::kDeletePdpContextResponse, 0, 3 * 9 + 1)).worker, 1);
  EXPECT_EQ(classify(v1Message(v1::MessageType::kErrorIndication, 0, 0xffff)).worker, 0xffff % 3);
  // A PDU Notification Request that does not decode: by its number too.
  const Subscriber subscriber = withImsi("00101");
  std::vector<uint8_t> broken = v1Message(v1::MessageType::kPduNotificationRequest, 0, 3 * 5 + 1, &subscriber);
  breakIes(broken);
  EXPECT_EQ(classify(broken).route, Route::kPriority);
  EXPECT_EQ(classify(broken).worker, 1);
}

TEST_F(ClassifyV1Test, AGtpv1HeaderThatDoesNotDecodeIsDropped) {
  const std::vector<uint8_t> echo = v1Message(v1::MessageType::kEchoRequest, 0, 7);
  std::vector<uint8_t> short_header(echo.begin(), echo.begin() + 6);
  EXPECT_EQ(classify(short_header).route, Route::kDrop);
  EXPECT_EQ(classify(short_header).version, 1);
  std::vector<uint8_t> gtp_prime = echo;
  gtp_prime[0] &= static_cast<uint8_t>(~v1::kFlagProtocolType);  // PT 0: GTP' (TS 32.295)
  EXPECT_EQ(classify(gtp_prime).route, Route::kDrop);
  std::vector<uint8_t> too_long = echo;
  too_long[3] = 40;  // more octets than the datagram has
  EXPECT_EQ(classify(too_long).route, Route::kDrop);
  std::vector<uint8_t> no_room = echo;
  no_room.resize(8);
  no_room[3] = 0;  // S set, yet no room for the optional fields
  EXPECT_EQ(classify(no_room).route, Route::kDrop);
}

TEST_F(ClassifyV1Test, Gtpv0IsNotSupported) {
  // A GTPv0 (TS 09.60) Create PDP Context Request header: 20 octets.
  std::vector<uint8_t> v0(20, 0);
  v0[0] = 0x1e;
  v0[1] = 16;
  v0[5] = 9;
  const Classification c = classify(v0);
  EXPECT_EQ(c.route, Route::kVersionNotSupported);
  EXPECT_EQ(c.version, 0);
  v0.resize(7);
  EXPECT_EQ(classify(v0).route, Route::kDrop) << "too short to be any GTP header";
}

}  // namespace
}  // namespace gtpcp::forwarder
