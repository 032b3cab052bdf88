// The forwarder's decisions (forwarder/lib/dispatcher.h, classify.h) with
// in-memory rings and a recording reply sink: which ring each datagram lands
// on, what the forwarder answers itself, what it drops and counts, for GTPv2
// and GTPv1.
#include "forwarder/lib/dispatcher.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "common/group/meta.h"
#include "common/group/session_identity.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/partition.h"
#include "forwarder/lib/classify.h"
#include "forwarder/lib/peer_rate_limit.h"
#include "tests/forwarder/test_messages.h"

namespace gtpcp::forwarder {
namespace {

using namespace gtp;
using testing::createSessionRequest;
using testing::withImsi;

constexpr uint32_t kSlots = ring::kMinCapacitySlots;

struct Reply {
  uint8_t socket;
  net::Address to;
  std::vector<uint8_t> bytes;
  uint64_t receive_ns;
};

class RecordingSink final : public ReplySink {
 public:
  bool reply(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
             uint64_t receive_ns) noexcept override {
    replies.push_back(Reply{socket, to, {bytes.begin(), bytes.end()}, receive_ns});
    return true;
  }
  std::vector<Reply> replies;
};

// Ring memory must be 64-octet aligned, as a shared mapping is.
struct Aligned {
  explicit Aligned(std::size_t n) : bytes(static_cast<uint8_t*>(::operator new(n, std::align_val_t{64}))) {
    std::memset(bytes, 0, n);
  }
  ~Aligned() { ::operator delete(bytes, std::align_val_t{64}); }
  uint8_t* data() const { return bytes; }
  uint8_t* bytes;
};

// One worker's rings in process memory, both ends.
struct Rings {
  Rings() : priority_memory(ring::ringBytes(kSlots)), fresh_memory(ring::ringBytes(kSlots)) {
    ring::initDoorbell(&bell);
    EXPECT_TRUE(ring::initRing(priority_memory.data(), ring::ringBytes(kSlots), kSlots));
    EXPECT_TRUE(ring::initRing(fresh_memory.data(), ring::ringBytes(kSlots), kSlots));
    priority.emplace(*ring::Consumer::attach(priority_memory.data(), ring::ringBytes(kSlots)));
    fresh.emplace(*ring::Consumer::attach(fresh_memory.data(), ring::ringBytes(kSlots)));
  }
  WorkerPorts ports() {
    return WorkerPorts{*ring::Producer::attach(priority_memory.data(), ring::ringBytes(kSlots)),
                       *ring::Producer::attach(fresh_memory.data(), ring::ringBytes(kSlots)),
                       ring::Doorbell(&bell), false};
  }
  Aligned priority_memory;
  Aligned fresh_memory;
  ring::DoorbellShm bell;
  std::optional<ring::Consumer> priority;
  std::optional<ring::Consumer> fresh;
};

class DispatcherTest : public ::testing::Test {
 protected:
  static constexpr uint16_t kWorkers = 3;

  DispatcherTest() : shm_(std::make_unique<ForwarderShm>()), table_(std::make_unique<GatewayTableShm>()) {
    table_->recovery.store(42);
    for (int i = 0; i < kWorkers; ++i) rings_.push_back(std::make_unique<Rings>());
    for (auto& r : rings_) ports_.push_back(r->ports());
    dispatcher_ = std::make_unique<Dispatcher>(ports_, *shm_, *table_, sink_);
  }

  void dispatch(const std::vector<uint8_t>& bytes, uint64_t receive_ns = 0) {
    ring::DatagramMeta meta{};
    meta.receive_ns = receive_ns;
    meta.local_socket = 1;
    group::setPeer(meta, peer_);
    dispatcher_->dispatch(meta, bytes);
  }

  // The records on ring `kind` ("priority"/"new") of worker `w`, consumed.
  std::vector<std::vector<uint8_t>> take(int w, bool fresh) {
    std::vector<std::vector<uint8_t>> out;
    ring::Consumer& c = fresh ? *rings_[w]->fresh : *rings_[w]->priority;
    while (auto r = c.peek()) {
      EXPECT_EQ(group::peerOf(*r->meta), peer_);
      EXPECT_EQ(r->meta->local_socket, 1);
      out.emplace_back(r->payload.begin(), r->payload.end());
      c.pop();
    }
    c.release();
    return out;
  }

  static std::vector<uint8_t> message(v2::MessageType type, std::optional<uint32_t> teid, uint32_t seq) {
    std::vector<uint8_t> buf(64);
    v2::Builder b(buf);
    b.begin(type, teid, seq);
    if (type == v2::MessageType::kEchoRequest) b.add(v2::Recovery{3});
    buf.resize(b.finish()->size());
    return buf;
  }

  // A GTPv1 Create PDP Context Request: IMSI, the SGSN's TEID Control Plane
  // and its address for signalling.
  static std::vector<uint8_t> createPdpContextRequest(const std::string& imsi, uint32_t sgsn_teid, uint16_t seq) {
    return testing::createPdpContextRequest(withImsi(imsi, sgsn_teid), 0, seq);
  }

  static std::vector<uint8_t> v1Message(v1::MessageType type, uint32_t teid, uint16_t seq,
                                        const testing::Subscriber* subscriber = nullptr) {
    return testing::v1Message(type, teid, seq, subscriber);
  }

  // The reply `i`, decoded as a GTPv1 Create PDP Context Response refusing
  // with No resources available: its header TEID and sequence number.
  void expectNoResourcesV1(std::size_t i, uint32_t teid, uint16_t seq) {
    ASSERT_GT(sink_.replies.size(), i);
    EXPECT_EQ(sink_.replies[i].to, peer_);
    v1::Message m;
    ASSERT_TRUE(m.decode(sink_.replies[i].bytes));
    EXPECT_EQ(m.messageType(), v1::MessageType::kCreatePdpContextResponse);
    EXPECT_EQ(m.header().teid, teid) << "the SGSN's TEID Control Plane";
    EXPECT_EQ(m.header().sequence_number, seq);
    EXPECT_EQ(v1::readNth<v1::CauseIe>(m)->value, 199);
    EXPECT_EQ(v1::readNth<v1::Recovery>(m)->value, 42) << "the group's Recovery";
    EXPECT_EQ(m.ieCount(), 2u);
  }

  // Fills worker `w`'s new ring with make(0), make(1), ... (flushed; no
  // reply yet); returns how many it took.
  template <class Make>
  uint32_t fillNewRing(int w, Make make) {
    uint32_t pushed = 0;
    while (ports_[w].fresh.fits(make(pushed).size())) dispatch(make(pushed++));
    dispatcher_->flush();
    EXPECT_TRUE(sink_.replies.empty());
    return pushed;
  }

  // While the group closes: `datagrams` are two requests, a response for
  // worker 1, one for worker 2, an Echo Request and a creation. The requests
  // are dropped, the responses relayed, Echo answered (reply 0), the
  // creation refused (reply 1).
  void expectClosingDropsRequestsOnly(const std::vector<std::vector<uint8_t>>& datagrams) {
    group::GroupControlShm control;
    dispatcher_->setControl(&control);
    control.draining.store(1);
    control.closing.store(1);
    ASSERT_EQ(datagrams.size(), 6u);
    for (std::size_t i = 0; i < 5; ++i) dispatch(datagrams[i]);
    dispatcher_->flush();
    EXPECT_EQ(take(1, false).size(), 1u) << "the response to worker 1";
    EXPECT_EQ(take(2, false).size(), 1u) << "the response to worker 2";
    EXPECT_TRUE(take(0, false).empty());
    EXPECT_EQ(shm_->counters.dropped_closing.load(), 2u);
    ASSERT_EQ(sink_.replies.size(), 1u) << "Echo is still answered";
    dispatch(datagrams[5]);
    ASSERT_EQ(sink_.replies.size(), 2u);
    EXPECT_EQ(shm_->counters.rejected_draining.load(), 1u);
    dispatcher_->setControl(nullptr);
  }

  static int workerOfImsi(const std::string& imsi) {
    v2::Message m;
    auto bytes = createSessionRequest(imsi, 1, 1);
    EXPECT_TRUE(m.decode(bytes));
    return workerOf(group::partitionOfCreateSession(m), kWorkers);
  }

  net::Address peer_ = net::Address::v4(Ipv4{{127, 0, 0, 11}}, 40000);
  std::unique_ptr<ForwarderShm> shm_;
  std::unique_ptr<GatewayTableShm> table_;
  std::vector<std::unique_ptr<Rings>> rings_;
  std::vector<WorkerPorts> ports_;
  RecordingSink sink_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_F(DispatcherTest, CreateSessionRequestGoesToTheNewRingOfTheImsisWorker) {
  const std::string imsi = "001010123456789";
  const int w = workerOfImsi(imsi);
  dispatch(createSessionRequest(imsi, 0x77, 10));
  // Nothing is visible before the batch is flushed...
  EXPECT_TRUE(rings_[w]->fresh->empty());
  dispatcher_->flush();
  // ...and then exactly on that worker's new ring.
  for (int i = 0; i < kWorkers; ++i) {
    EXPECT_EQ(take(i, true).size(), i == w ? 1u : 0u) << "worker " << i;
    EXPECT_TRUE(take(i, false).empty());
  }
  EXPECT_EQ(shm_->counters.to_new.load(), 1u);
  EXPECT_EQ(shm_->received_v2[32].load(), 1u);
}

TEST_F(DispatcherTest, AMessageWithAProxyTeidGoesToThePriorityRingOfItsPartition) {
  // Partition 1000 belongs to worker 1000 % 3 = 1.
  const uint32_t teid = (uint32_t{1000} << 22) | 0x1234;
  dispatch(message(v2::MessageType::kModifyBearerRequest, teid, 5));
  dispatcher_->flush();
  EXPECT_EQ(take(1, false).size(), 1u);
  EXPECT_TRUE(take(0, false).empty());
  EXPECT_TRUE(take(2, false).empty());
}

TEST_F(DispatcherTest, AResponseWithoutTeidGoesToTheWorkerItsSequenceNumberNames) {
  // A rejection with TEID 0 to the proxy's request number 3 * 7 + 2: worker 2.
  dispatch(message(v2::MessageType::kCreateSessionResponse, 0, 3 * 7 + 2));
  // The command bit does not change the worker.
  dispatch(message(v2::MessageType::kDeleteBearerFailureIndication, 0, v2::kCommandBit | (3 * 9 + 2)));
  dispatcher_->flush();
  EXPECT_EQ(take(2, false).size(), 2u);
}

TEST_F(DispatcherTest, EchoRequestsAreAnsweredWithTheGroupRecovery) {
  dispatch(message(v2::MessageType::kEchoRequest, std::nullopt, 0x123456));
  ASSERT_EQ(sink_.replies.size(), 1u);
  EXPECT_EQ(sink_.replies[0].to, peer_);
  EXPECT_EQ(sink_.replies[0].socket, 1);
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v2::MessageType::kEchoResponse);
  EXPECT_EQ(m.header().sequence_number, 0x123456u);
  EXPECT_EQ(v2::readFirst<v2::Recovery>(m)->value, 42);

  // GTPv1 Echo too, in GTPv1.
  std::vector<uint8_t> buf(64);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kEchoRequest, 0, 777);
  buf.resize(b.finish()->size());
  dispatch(buf);
  ASSERT_EQ(sink_.replies.size(), 2u);
  v1::Message m1;
  ASSERT_TRUE(m1.decode(sink_.replies[1].bytes));
  EXPECT_EQ(m1.messageType(), v1::MessageType::kEchoResponse);
  EXPECT_EQ(m1.header().sequence_number, 777);
  EXPECT_EQ(v1::readNth<v1::Recovery>(m1)->value, 42);
  dispatcher_->flush();
  for (int i = 0; i < kWorkers; ++i) EXPECT_TRUE(take(i, false).empty());
  EXPECT_EQ(shm_->counters.echo_answered.load(), 2u);
}

TEST_F(DispatcherTest, OtherVersionsGetVersionNotSupportedAndGarbageIsCounted) {
  std::vector<uint8_t> v3 = message(v2::MessageType::kModifyBearerRequest, 1, 1);
  v3[0] = static_cast<uint8_t>((3 << 5) | (v3[0] & 0x1f));
  dispatch(v3);
  ASSERT_EQ(sink_.replies.size(), 1u);
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v2::MessageType::kVersionNotSupportedIndication);
  dispatch({0x48, 0x01});  // a GTPv2 header cut short
  dispatch({});
  EXPECT_EQ(shm_->counters.dropped_not_gtp.load(), 2u);
  EXPECT_EQ(shm_->counters.version_not_supported.load(), 1u);
}

TEST_F(DispatcherTest, AFullNewRingIsAnsweredNoResourcesWhileThePriorityRingFlows) {
  const std::string imsi = "001010000000042";
  const int w = workerOfImsi(imsi);
  const uint32_t pushed = fillNewRing(w, [&](uint32_t seq) { return createSessionRequest(imsi, 1, seq); });
  dispatch(createSessionRequest(imsi, 0xcafe, 999));
  ASSERT_EQ(sink_.replies.size(), 1u);
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v2::MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0xcafeu) << "the SGW's TEID from its sender F-TEID";
  EXPECT_EQ(m.header().sequence_number, 999u);
  EXPECT_EQ(v2::readFirst<v2::CauseIe>(m)->value, static_cast<uint8_t>(v2::Cause::kNoResourcesAvailable));
  EXPECT_EQ(shm_->counters.rejected_overload.load(), 1u);
  // Established sessions of the same worker still get through.
  const uint32_t teid = (uint32_t{static_cast<uint16_t>(w)} << 22) | 1;  // partition w: worker w
  dispatch(message(v2::MessageType::kModifyBearerRequest, teid, 1));
  dispatcher_->flush();
  EXPECT_EQ(take(w, false).size(), 1u);
  EXPECT_EQ(take(w, true).size(), pushed);
}

TEST_F(DispatcherTest, WhileDrainingCreationsAreAnsweredNoResourcesAndTheRestFlows) {
  group::GroupControlShm control;
  dispatcher_->setControl(&control);
  control.draining.store(1);
  const std::string imsi = "001010000000043";
  const int w = workerOfImsi(imsi);
  dispatch(createSessionRequest(imsi, 0xbeef, 7));
  ASSERT_EQ(sink_.replies.size(), 1u);
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v2::MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0xbeefu);
  EXPECT_EQ(v2::readFirst<v2::CauseIe>(m)->value, static_cast<uint8_t>(v2::Cause::kNoResourcesAvailable));
  EXPECT_EQ(shm_->counters.rejected_draining.load(), 1u);
  const uint32_t teid = (uint32_t{static_cast<uint16_t>(w)} << 22) | 1;
  dispatch(message(v2::MessageType::kModifyBearerRequest, teid, 1));
  dispatcher_->flush();
  EXPECT_EQ(take(w, false).size(), 1u) << "established sessions are not drained";
  EXPECT_TRUE(take(w, true).empty());
  // Over: creations queue again.
  control.draining.store(0);
  dispatch(createSessionRequest(imsi, 0xbeef, 8));
  dispatcher_->flush();
  EXPECT_EQ(take(w, true).size(), 1u);
}

// The group stops: two requests, then a response to worker 1 (the TEID
// of kClosingTeid) and one to worker 2 (TEID 0, the proxy's number 3 * 7 + 2),
// then an Echo Request, then a creation.
constexpr uint32_t kClosingTeid = (uint32_t{1000} << 22) | 0x1234;

TEST_F(DispatcherTest, WhileClosingRequestsAreDroppedAndResponsesStillRelayed) {
  expectClosingDropsRequestsOnly({message(v2::MessageType::kModifyBearerRequest, kClosingTeid, 5),
                                  message(v2::MessageType::kDeletePdnConnectionSetRequest, 0, 6),
                                  message(v2::MessageType::kModifyBearerResponse, kClosingTeid, 5),
                                  message(v2::MessageType::kCreateSessionResponse, 0, 3 * 7 + 2),
                                  message(v2::MessageType::kEchoRequest, std::nullopt, 9),
                                  createSessionRequest("001010000000044", 0xbeef, 10)});
  // Creations still get cause 73, not silence.
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[1].bytes));
  EXPECT_EQ(v2::readFirst<v2::CauseIe>(m)->value, static_cast<uint8_t>(v2::Cause::kNoResourcesAvailable));
}

TEST_F(DispatcherTest, FlushWakesOnlyTheWorkersThatGotSomething) {
  const uint32_t teid = (uint32_t{1} << 22) | 5;  // worker 1
  dispatch(message(v2::MessageType::kModifyBearerRequest, teid, 1));
  const uint32_t before[3] = {rings_[0]->bell.sequence.load(), rings_[1]->bell.sequence.load(),
                              rings_[2]->bell.sequence.load()};
  // Worker 1 announces it sleeps: the flush must wake it.
  rings_[1]->bell.sleeping.store(1);
  dispatcher_->flush();
  EXPECT_NE(rings_[1]->bell.sequence.load(), before[1]);
  EXPECT_EQ(rings_[0]->bell.sequence.load(), before[0]);
  EXPECT_EQ(rings_[2]->bell.sequence.load(), before[2]);
}

TEST_F(DispatcherTest, RingHighWaterMarksKeepTheDeepestBurst) {
  const std::string imsi = "001010000000042";
  const int w = workerOfImsi(imsi);
  const uint32_t teid = (uint32_t{static_cast<uint16_t>(w)} << 22) | 1;  // partition w: worker w
  for (uint32_t i = 0; i < 20; ++i) dispatch(message(v2::MessageType::kModifyBearerRequest, teid, i));
  for (uint32_t i = 0; i < 10; ++i) dispatch(createSessionRequest(imsi, 1, 100 + i));
  dispatcher_->flush();
  const uint64_t priority_burst = shm_->priority_depth[w].load();
  const uint64_t new_burst = shm_->new_depth[w].load();
  EXPECT_GE(priority_burst, 20u);
  EXPECT_GE(new_burst, 10u);
  EXPECT_EQ(shm_->priority_high_water[w].load(), priority_burst);
  EXPECT_EQ(shm_->new_high_water[w].load(), new_burst);

  // The worker catches up; a datagram or two later the gauges are low and
  // the marks still say how deep the burst went.
  EXPECT_EQ(take(w, false).size(), 20u);
  EXPECT_EQ(take(w, true).size(), 10u);
  dispatch(message(v2::MessageType::kModifyBearerRequest, teid, 50));
  dispatch(createSessionRequest(imsi, 1, 200));
  dispatcher_->flush();
  EXPECT_GT(shm_->priority_depth[w].load(), 0u);
  EXPECT_GT(shm_->new_depth[w].load(), 0u);
  EXPECT_GT(shm_->priority_high_water[w].load(), shm_->priority_depth[w].load());
  EXPECT_GT(shm_->new_high_water[w].load(), shm_->new_depth[w].load());
  EXPECT_EQ(shm_->priority_high_water[w].load(), priority_burst);
  EXPECT_EQ(shm_->new_high_water[w].load(), new_burst);
  for (int i = 0; i < kWorkers; ++i) {
    if (i == w) continue;
    EXPECT_EQ(shm_->priority_high_water[i].load(), 0u) << "worker " << i;
    EXPECT_EQ(shm_->new_high_water[i].load(), 0u) << "worker " << i;
  }
}

TEST_F(DispatcherTest, TheForwardersOwnAnswersCarryTheReceiveTimeOfWhatTheyAnswer) {
  dispatch(message(v2::MessageType::kEchoRequest, std::nullopt, 1), 1111);
  std::vector<uint8_t> v3 = message(v2::MessageType::kModifyBearerRequest, 1, 1);
  v3[0] = static_cast<uint8_t>((3 << 5) | (v3[0] & 0x1f));
  dispatch(v3, 2222);
  group::GroupControlShm control;
  control.draining.store(1);
  dispatcher_->setControl(&control);
  dispatch(createSessionRequest("001010000000042", 1, 7), 3333);
  dispatcher_->setControl(nullptr);
  dispatch(message(v2::MessageType::kEchoRequest, std::nullopt, 2));  // received at an unknown time
  ASSERT_EQ(sink_.replies.size(), 4u);
  EXPECT_EQ(sink_.replies[0].receive_ns, 1111u) << "Echo Response";
  EXPECT_EQ(sink_.replies[1].receive_ns, 2222u) << "Version Not Supported";
  EXPECT_EQ(sink_.replies[2].receive_ns, 3333u) << "No resources available";
  EXPECT_EQ(sink_.replies[3].receive_ns, 0u);
}

TEST_F(DispatcherTest, CreationsOverThePeersRateAreRejectedByTheForwarder) {
  PeerRateLimiter limit(2, 2);
  dispatcher_->setPeerRateLimit(&limit);
  for (uint32_t i = 0; i < 3; ++i) dispatch(createSessionRequest("00101012345678" + std::to_string(i), 0x90 + i, 90 + i));
  dispatcher_->flush();
  std::size_t queued = 0;
  for (int w = 0; w < kWorkers; ++w) queued += take(w, true).size();
  EXPECT_EQ(queued, 2u);
  ASSERT_EQ(sink_.replies.size(), 1u);
  v2::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v2::MessageType::kCreateSessionResponse);
  EXPECT_EQ(m.header().teid, 0x92u);
  EXPECT_EQ(m.header().sequence_number, 92u);
  EXPECT_EQ(v2::readFirst<v2::CauseIe>(m)->value, static_cast<uint8_t>(v2::Cause::kNoResourcesAvailable));
  EXPECT_EQ(shm_->counters.rejected_peer_rate.load(), 1u);
  // Established sessions are not limited.
  dispatch(message(v2::MessageType::kModifyBearerRequest, 0x12345678, 5));
  EXPECT_EQ(shm_->counters.to_priority.load(), 1u);
}

TEST_F(DispatcherTest, PgwDownlinkTriggeringGoesToThePriorityRingOfTheImsisWorker) {
  const std::string imsi = "001010123456790";
  std::vector<uint8_t> buf(128);
  v2::Builder b(buf);
  b.begin(v2::MessageType::kPgwDownlinkTriggeringNotification, 0u, 77);
  v2::Imsi i;
  for (char c : imsi) i.digits.push(c);
  b.add(i);
  buf.resize(b.finish()->size());
  dispatch(buf);
  dispatcher_->flush();
  const int w = workerOfImsi(imsi);
  for (int k = 0; k < kWorkers; ++k) {
    EXPECT_EQ(take(k, false).size(), k == w ? 1u : 0u) << "worker " << k;
    EXPECT_TRUE(take(k, true).empty()) << "not a creation";
  }
}

TEST_F(DispatcherTest, DeletePdnConnectionSetGoesToEveryWorkerAndItsAnswerToOne) {
  // The sets it names hold sessions of every partition.
  std::vector<uint8_t> buf(128);
  v2::Builder b(buf);
  b.begin(v2::MessageType::kDeletePdnConnectionSetRequest, 0u, 78);
  v2::FqCsid fq;
  fq.ipv4 = Ipv4{{10, 0, 0, 1}};
  fq.csids[fq.csid_count++] = 1;
  b.add(fq, 1);
  buf.resize(b.finish()->size());
  dispatch(buf);
  dispatcher_->flush();
  for (int k = 0; k < kWorkers; ++k) {
    auto got = take(k, false);
    ASSERT_EQ(got.size(), 1u) << "worker " << k;
    EXPECT_EQ(got[0], buf);
    EXPECT_TRUE(take(k, true).empty());
  }
  // A peer's answer to the proxy's own request goes where its number says.
  std::vector<uint8_t> rbuf(64);
  v2::Builder rb(rbuf);
  rb.begin(v2::MessageType::kDeletePdnConnectionSetResponse, 0u, 2 * kWorkers + 1);
  v2::CauseIe ok;
  ok.value = 16;
  rb.add(ok);
  rbuf.resize(rb.finish()->size());
  dispatch(rbuf);
  dispatcher_->flush();
  for (int k = 0; k < kWorkers; ++k) EXPECT_EQ(take(k, false).size(), k == 1 ? 1u : 0u) << "worker " << k;
}


// -- GTPv1 ------------------------------------------------------------------------------

TEST_F(DispatcherTest, CreatePdpContextRequestGoesToTheNewRingOfTheImsisWorker) {
  const std::string imsi = "001010123456789";
  const int w = workerOfImsi(imsi);  // the worker of the same subscriber in GTPv2
  const auto bytes = createPdpContextRequest(imsi, 0x77, 10);
  dispatch(bytes);
  dispatcher_->flush();
  for (int i = 0; i < kWorkers; ++i) {
    auto got = take(i, true);
    ASSERT_EQ(got.size(), i == w ? 1u : 0u) << "worker " << i;
    if (i == w) {
      EXPECT_EQ(got[0], bytes);
    }
    EXPECT_TRUE(take(i, false).empty());
  }
  EXPECT_EQ(shm_->counters.to_new.load(), 1u);
  EXPECT_EQ(shm_->received_v1[16].load(), 1u);
  EXPECT_EQ(shm_->received_v2[16].load(), 0u);
  EXPECT_TRUE(sink_.replies.empty());
}

TEST_F(DispatcherTest, Gtpv1MessagesGoWhereTheirTeidImsiOrSequenceNumberSays) {
  // A TEID of the proxy's: partition 1000, worker 1.
  dispatch(v1Message(v1::MessageType::kUpdatePdpContextRequest, (uint32_t{1000} << 22) | 0x1234, 5));
  // TEID 0: the proxy's number 3 * 7 + 2, worker 2.
  dispatch(v1Message(v1::MessageType::kCreatePdpContextResponse, 0, 3 * 7 + 2));
  // PDU Notification Request: the IMSI's worker.
  const std::string imsi = "001010123456790";
  const testing::Subscriber subscriber = withImsi(imsi);
  dispatch(v1Message(v1::MessageType::kPduNotificationRequest, 0, 1, &subscriber));
  dispatcher_->flush();
  std::vector<std::size_t> got(kWorkers);
  for (int k = 0; k < kWorkers; ++k) {
    got[k] = take(k, false).size();
    EXPECT_TRUE(take(k, true).empty());
  }
  std::vector<std::size_t> expected(kWorkers);
  ++expected[1];
  ++expected[2];
  ++expected[workerOfImsi(imsi)];
  EXPECT_EQ(got, expected);
  EXPECT_EQ(shm_->counters.to_priority.load(), 3u);
  EXPECT_EQ(shm_->received_v1[18].load(), 1u);
  EXPECT_EQ(shm_->received_v1[17].load(), 1u);
  EXPECT_EQ(shm_->received_v1[27].load(), 1u);
}

TEST_F(DispatcherTest, WhileDrainingGtpv1CreationsAreAnsweredNoResources) {
  group::GroupControlShm control;
  dispatcher_->setControl(&control);
  control.draining.store(1);
  const std::string imsi = "001010000000043";
  dispatch(createPdpContextRequest(imsi, 0xbeef0001, 7));
  ASSERT_EQ(sink_.replies.size(), 1u);
  expectNoResourcesV1(0, 0xbeef0001, 7);
  // The bytes: version 1, PT, S; type 17; length 8; TEID; sequence; Cause 199; Recovery 42.
  EXPECT_EQ(sink_.replies[0].bytes, (std::vector<uint8_t>{0x32, 17, 0, 8, 0xbe, 0xef, 0x00, 0x01, 0, 7, 0, 0,
                                                          1, 199, 14, 42}));
  EXPECT_EQ(shm_->counters.rejected_draining.load(), 1u);
  dispatcher_->flush();
  for (int k = 0; k < kWorkers; ++k) EXPECT_TRUE(take(k, true).empty());
  // One that does not decode cannot be answered: its SGSN's TEID is unknown.
  std::vector<uint8_t> broken = createPdpContextRequest(imsi, 0xbeef0002, 8);
  testing::breakIes(broken);
  dispatch(broken);
  EXPECT_EQ(sink_.replies.size(), 1u);
  EXPECT_EQ(shm_->counters.dropped_overload.load(), 1u);
  EXPECT_EQ(shm_->counters.rejected_draining.load(), 1u);
}

TEST_F(DispatcherTest, AFullNewRingAnswersGtpv1CreationsNoResources) {
  const std::string imsi = "001010000000042";
  const int w = workerOfImsi(imsi);
  const uint32_t pushed =
      fillNewRing(w, [&](uint32_t seq) { return createPdpContextRequest(imsi, 1, static_cast<uint16_t>(seq)); });
  dispatch(createPdpContextRequest(imsi, 0xcafe, 999));
  ASSERT_EQ(sink_.replies.size(), 1u);
  expectNoResourcesV1(0, 0xcafe, 999);
  EXPECT_EQ(shm_->counters.rejected_overload.load(), 1u);
  EXPECT_EQ(take(w, true).size(), pushed);
}

TEST_F(DispatcherTest, Gtpv1CreationsOverThePeersRateOrStaleAreRefused) {
  PeerRateLimiter limit(1, 1);
  dispatcher_->setPeerRateLimit(&limit);
  dispatch(createPdpContextRequest("001010000000050", 0x90, 90));
  dispatch(createPdpContextRequest("001010000000051", 0x91, 91));
  ASSERT_EQ(sink_.replies.size(), 1u);
  expectNoResourcesV1(0, 0x91, 91);
  EXPECT_EQ(shm_->counters.rejected_peer_rate.load(), 1u);
  // One that waited too long in the kernel.
  ring::DatagramMeta meta{};
  meta.local_socket = 1;
  group::setPeer(meta, peer_);
  dispatcher_->refuseStaleCreation(meta, createPdpContextRequest("001010000000052", 0x92, 92));
  ASSERT_EQ(sink_.replies.size(), 2u);
  expectNoResourcesV1(1, 0x92, 92);
  EXPECT_EQ(shm_->counters.rejected_stale.load(), 1u);
  EXPECT_EQ(shm_->received_v1[16].load(), 3u);
}

TEST_F(DispatcherTest, WhileClosingGtpv1RequestsAreDroppedAndResponsesStillRelayed) {
  expectClosingDropsRequestsOnly({v1Message(v1::MessageType::kUpdatePdpContextRequest, kClosingTeid, 5),
                                  v1Message(v1::MessageType::kDeletePdpContextRequest, kClosingTeid, 6),
                                  v1Message(v1::MessageType::kUpdatePdpContextResponse, kClosingTeid, 5),
                                  v1Message(v1::MessageType::kCreatePdpContextResponse, 0, 3 * 7 + 2),
                                  v1Message(v1::MessageType::kEchoRequest, 0, 9),
                                  createPdpContextRequest("001010000000044", 0xbeef, 10)});
  // Creations still get cause 199, not silence.
  expectNoResourcesV1(1, 0xbeef, 10);
}

TEST_F(DispatcherTest, Gtpv0GetsAGtpv1VersionNotSupported) {
  // A GTPv0 (TS 09.60) header: version 0, type 16, length, sequence 0x1234, ...
  std::vector<uint8_t> v0(20, 0);
  v0[0] = 0x1e;
  v0[1] = 16;
  v0[3] = 0;
  v0[4] = 0x12;
  v0[5] = 0x34;
  dispatch(v0);
  ASSERT_EQ(sink_.replies.size(), 1u);
  EXPECT_EQ(sink_.replies[0].to, peer_);
  v1::Message m;
  ASSERT_TRUE(m.decode(sink_.replies[0].bytes));
  EXPECT_EQ(m.messageType(), v1::MessageType::kVersionNotSupported);
  EXPECT_EQ(m.header().teid, 0u);
  EXPECT_EQ(m.header().sequence_number, 0x1234);
  EXPECT_EQ(m.ieCount(), 0u);
  EXPECT_EQ(sink_.replies[0].bytes, (std::vector<uint8_t>{0x32, 3, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0}));
  EXPECT_EQ(shm_->counters.version_not_supported.load(), 1u);
  dispatcher_->flush();
  for (int k = 0; k < kWorkers; ++k) EXPECT_TRUE(take(k, false).empty() && take(k, true).empty());
}

TEST_F(DispatcherTest, Gtpv1HeadersThatDoNotDecodeAreDroppedAndCounted) {
  dispatch({0x32, 0x10, 0x00});  // cut short
  std::vector<uint8_t> gtp_prime = v1Message(v1::MessageType::kEchoRequest, 0, 1);
  gtp_prime[0] = 0x22;  // PT 0: GTP'
  dispatch(gtp_prime);
  EXPECT_TRUE(sink_.replies.empty());
  EXPECT_EQ(shm_->counters.dropped_not_gtp.load(), 2u);
  EXPECT_EQ(shm_->counters.echo_answered.load(), 0u);
  EXPECT_EQ(shm_->received_v1[16].load() + shm_->received_v1[1].load(), 0u);
}

TEST_F(DispatcherTest, Gtpv1EchoResponsesGoToTheHealthChecks) {
  dispatch(v1Message(v1::MessageType::kEchoResponse, 0, 3));
  EXPECT_EQ(shm_->counters.echo_responses.load(), 1u);
  EXPECT_EQ(shm_->counters.echo_responses_unmatched.load(), 1u) << "no health checks here";
  EXPECT_TRUE(sink_.replies.empty());
  EXPECT_EQ(shm_->received_v1[2].load(), 1u);
}

}  // namespace
}  // namespace gtpcp::forwarder
