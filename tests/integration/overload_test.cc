// New-session overload: a worker stops taking from its rings (SIGSTOP) while
// a burst of Create Session Requests for its partitions arrives. The forwarder
// must refuse what does not fit in the worker's new-session ring itself (cause
// 73, with the SGW's TEID and sequence number) while the priority ring keeps
// the established sessions' Modify Bearer Requests, which are all answered
// once the worker runs again. The test plays the SGW and the PGW with raw
// UDP sockets, so that it knows exactly what it sent and what came back.
#include <signal.h>

#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "common/config/instance.h"
#include "common/group/from_config.h"
#include "common/gtp/v2/message.h"
#include "common/partition.h"
#include "common/ring/ring.h"
#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using gtp::v2::MessageType;
using nlohmann::json;
using testing::TestGroup;
using testing::UdpSocket;

constexpr uint8_t kCreateSessionResponse = static_cast<uint8_t>(MessageType::kCreateSessionResponse);
constexpr uint8_t kModifyBearerResponse = static_cast<uint8_t>(MessageType::kModifyBearerResponse);

// The state letter of /proc/<pid>/stat ('T' when stopped).
char processState(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// Sends SIGCONT when it goes away, whatever happened in between.
struct Continue {
  int pid;
  ~Continue() {
    if (pid > 0) kill(pid, SIGCONT);
  }
};

// The SGW and the PGW of the test, on two sockets. The PGW answers every
// request the proxy forwards (PgwResponder); what reaches the SGW is kept by
// sequence number, in arrival order.
class Peers {
 public:
  Peers(const gtp::Ipv4& sgw, const gtp::Ipv4& pgw) : sgw_(sgw, 2123), pgw_(pgw, 2123), responder_(pgw) {}

  UdpSocket& sgw() { return sgw_; }
  const std::vector<Decoded>& atSgw() const { return at_sgw_; }
  // Message type and subscriber (IMSI) of each request the proxy forwarded
  // to the PGW, in arrival order.
  const std::vector<std::pair<uint8_t, uint64_t>>& atPgw() const { return at_pgw_; }

  // Serves both sockets until `done` holds or `timeout` passes.
  bool pumpUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      pollfd fds[2] = {{sgw_.fd(), POLLIN, 0}, {pgw_.fd(), POLLIN, 0}};
      poll(fds, 2, 10);
      serve();
    }
    return true;
  }

  // Serves what both sockets hold now, without waiting.
  void serve() {
    while (auto r = pgw_.receive(0ms)) {
      const Decoded d = decode(r->bytes);
      uint64_t imsi = d.imsi.value_or(0);
      if (!d.imsi) {
        auto it = responder_.sessions().find(d.teid);
        if (it != responder_.sessions().end()) imsi = it->second.imsi;
      }
      at_pgw_.emplace_back(d.type, imsi);
      const Bytes answer = responder_.answer(r->bytes);
      if (!answer.empty()) pgw_.sendTo(r->from, r->port, answer);
    }
    while (auto r = sgw_.receive(0ms)) at_sgw_.push_back(decode(r->bytes));
  }

  // Responses at the SGW with sequence number `seq`.
  std::vector<Decoded> responsesTo(uint32_t seq) const {
    std::vector<Decoded> out;
    for (const auto& d : at_sgw_) {
      if (d.sequence == seq) out.push_back(d);
    }
    return out;
  }

 private:
  UdpSocket sgw_;
  UdpSocket pgw_;
  PgwResponder responder_;
  std::vector<Decoded> at_sgw_;
  std::vector<std::pair<uint8_t, uint64_t>> at_pgw_;
};

struct Established {
  uint64_t imsi;
  uint32_t sgw_teid;
  uint32_t proxy_teid;  // the proxy's access-leg TEID, from the PGW S5/S8-C F-TEID the SGW got
};

TEST_F(DataPathTest, FullNewRingIsRejectedByForwarderWhilePriorityRingKeepsEstablishedSessions) {
  testing::GroupOptions o;
  o.workers = 2;
  // The smallest new ring the configuration allows.
  const config::KeyInfo* new_slots = config::findInstanceKey("rings.new_slots");
  ASSERT_NE(new_slots, nullptr);
  o.new_slots = static_cast<unsigned>(new_slots->min);
  o.routing_yaml = onlyGateway(ip(21));
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost);
  const gtp::Ipv4 sgw_addr = net_.addr(11);
  Peers peers(sgw_addr, net_.addr(21));

  // How many creations the stopped worker's new ring holds.
  auto config = config::loadInstanceConfig(g.configPath());
  ASSERT_TRUE(config) << config.error().toString();
  const uint32_t ring_slots = group::ringSizesOf(*config).fresh;
  const std::size_t csr_size = createSessionRequest(1, 1010000000001ull, sgw_addr, 1).size();
  const uint32_t fit = ring_slots / ring::recordSlots(csr_size);
  constexpr std::size_t kEstablished0 = 50, kEstablished1 = 10;
  const std::size_t burst = fit + 400;

  const auto imsis0 = imsisOfWorker(1010000500000ull, kEstablished0 + burst, 0, 2);
  const auto imsis1 = imsisOfWorker(1010000900000ull, kEstablished1, 1, 2);

  // 1. Established sessions on both workers.
  uint32_t seq = 1;
  std::vector<Established> on0, on1;
  std::vector<std::pair<Established, uint32_t>> all;
  auto attach = [&](uint64_t imsi) {
    const uint32_t sgw_teid = 0x10000 + seq;
    ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, createSessionRequest(seq, imsi, sgw_addr, sgw_teid)));
    all.push_back({Established{imsi, sgw_teid, 0}, seq});
    ++seq;
  };
  for (std::size_t i = 0; i < kEstablished0; ++i) attach(imsis0[i]);
  for (std::size_t i = 0; i < kEstablished1; ++i) attach(imsis1[i]);
  ASSERT_TRUE(peers.pumpUntil([&] { return peers.atSgw().size() >= all.size(); }, 10s))
      << peers.atSgw().size() << " of " << all.size() << " creations answered";
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto [e, s] = all[i];
    const auto answers = peers.responsesTo(s);
    ASSERT_EQ(answers.size(), 1u) << "creation seq " << s;
    const Decoded& d = answers[0];
    ASSERT_EQ(d.cause, std::optional<uint8_t>(kCauseAccepted)) << d.describe();
    auto pgw_c = d.fteid(kIfPgwGtpC);
    ASSERT_TRUE(pgw_c) << d.describe();
    e.proxy_teid = pgw_c->teid;
    ASSERT_EQ(workerOf(partitionOf(e.proxy_teid), 2), i < kEstablished0 ? 0 : 1) << d.describe();
    (i < kEstablished0 ? on0 : on1).push_back(e);
  }

  // 2. Worker 0 stops taking from its rings.
  const int pid0 = g.pidOf("worker-0");
  ASSERT_GT(pid0, 0);
  Continue resume{pid0};
  ASSERT_EQ(kill(pid0, SIGSTOP), 0);
  ASSERT_TRUE(testing::waitUntil([&] { return processState(pid0) == 'T'; }, 5s)) << "worker-0 did not stop";
  const nlohmann::json before = g.status();
  const uint64_t to_new_before = before.at("counters").value("forwarder.datagrams_to_new_ring", 0ull);

  // 3. The burst of creations for worker 0, with the established sessions'
  // Modify Bearer Requests spread through it (the later ones arrive when the
  // new ring is already full), and some for worker 1, which still runs.
  std::map<uint32_t, uint32_t> burst_teid;  // seq -> the SGW's TEID in that creation
  std::map<uint32_t, std::size_t> modify0, modify1;  // seq -> index in on0 / on1
  const std::size_t every = burst / kEstablished0;
  std::size_t next_modify = 0;
  for (std::size_t i = 0; i < burst; ++i) {
    const uint32_t sgw_teid = 0x200000 + seq;
    ASSERT_TRUE(
        peers.sgw().sendTo(proxy_addr, 2123, createSessionRequest(seq, imsis0[kEstablished0 + i], sgw_addr, sgw_teid)));
    burst_teid[seq++] = sgw_teid;
    if (i % 64 == 63) peers.serve();  // keep the SGW's receive queue short
    if (i % every == every - 1 && next_modify < on0.size()) {
      const Established& e = on0[next_modify];
      ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, modifyBearerRequest(seq, e.proxy_teid, e.imsi, sgw_addr)));
      modify0[seq++] = next_modify++;
    }
  }
  while (next_modify < on0.size()) {
    const Established& e = on0[next_modify];
    ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, modifyBearerRequest(seq, e.proxy_teid, e.imsi, sgw_addr)));
    modify0[seq++] = next_modify++;
  }
  for (std::size_t i = 0; i < on1.size(); ++i) {
    ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, modifyBearerRequest(seq, on1[i].proxy_teid, on1[i].imsi, sgw_addr)));
    modify1[seq++] = i;
  }

  // 4. While worker 0 is stopped: the forwarder has put what fits on its new
  // ring and refused the rest itself; worker 1 answered its sessions.
  nlohmann::json during;
  uint64_t rejected = 0;
  auto rejections = [&] {
    std::size_t n = 0;
    for (const auto& d : peers.atSgw()) {
      n += burst_teid.count(d.sequence) != 0 && d.cause == std::optional<uint8_t>(kCauseNoResources);
    }
    return n;
  };
  auto answeredOn1 = [&] {
    std::size_t n = 0;
    for (const auto& [s, i] : modify1) n += !peers.responsesTo(s).empty();
    return n;
  };
  const bool refused = peers.pumpUntil(
      [&] {
        during = g.status();
        const auto& c = during.at("counters");
        rejected = c.value("forwarder.rejected_overload", 0ull);
        const uint64_t queued = c.value("forwarder.datagrams_to_new_ring", 0ull) - to_new_before;
        return queued + rejected == burst && rejections() == rejected && answeredOn1() == modify1.size();
      },
      20s);
  ASSERT_EQ(processState(pid0), 'T') << "worker-0 ran during the burst";
  SCOPED_TRACE("gtpcp status --json while worker-0 was stopped:\n" + during.dump(1));
  ASSERT_TRUE(refused) << rejections() << " rejections seen at the SGW, counter " << rejected << "; "
                       << answeredOn1() << " of " << modify1.size() << " worker-1 modifications answered";
  EXPECT_GT(rejected, 0u);
  EXPECT_LE(rejected, burst - fit + 64) << "about " << fit << " creations fit in the new ring";
  EXPECT_EQ(during.at("counters").value("forwarder.dropped_overload", 1ull), 0u);
  EXPECT_EQ(during.at("counters").value("forwarder.dropped_priority_ring_full", 1ull), 0u);
  std::size_t burst_answers = 0;
  for (const auto& d : peers.atSgw()) {
    auto it = burst_teid.find(d.sequence);
    if (it == burst_teid.end()) continue;
    ++burst_answers;
    // The forwarder's own answer: Create Session Response, No resources
    // available, to the SGW's TEID, with its sequence number.
    EXPECT_EQ(d.type, kCreateSessionResponse) << d.describe();
    EXPECT_EQ(d.cause, std::optional<uint8_t>(kCauseNoResources)) << d.describe();
    EXPECT_TRUE(d.teid_present) << d.describe();
    EXPECT_EQ(d.teid, it->second) << d.describe();
  }
  EXPECT_EQ(burst_answers, rejected) << "only the forwarder's rejections come back while worker-0 is stopped";
  for (const auto& [s, i] : modify0) {
    EXPECT_TRUE(peers.responsesTo(s).empty()) << "worker-0 is stopped, yet its session " << i << " was answered";
  }
  for (const auto& [s, i] : modify1) {
    const auto answers = peers.responsesTo(s);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].type, kModifyBearerResponse) << answers[0].describe();
    EXPECT_EQ(answers[0].cause, std::optional<uint8_t>(kCauseAccepted)) << answers[0].describe();
    EXPECT_EQ(answers[0].teid, on1[i].sgw_teid) << answers[0].describe();
  }

  // 5. Worker 0 runs again: every established session's modification is
  // answered, and so is every queued creation.
  const std::size_t pgw_seen_before = peers.atPgw().size();
  ASSERT_EQ(kill(pid0, SIGCONT), 0);
  resume.pid = 0;
  auto answered = [&](const std::map<uint32_t, std::size_t>& m) {
    std::size_t n = 0;
    for (const auto& [s, i] : m) n += !peers.responsesTo(s).empty();
    return n;
  };
  auto acceptedCreations = [&] {
    std::size_t n = 0;
    for (const auto& d : peers.atSgw()) {
      n += burst_teid.count(d.sequence) != 0 && d.cause == std::optional<uint8_t>(kCauseAccepted);
    }
    return n;
  };
  const std::size_t queued = burst - rejected;
  ASSERT_TRUE(peers.pumpUntil([&] { return answered(modify0) == modify0.size() && acceptedCreations() == queued; },
                              30s))
      << answered(modify0) << " of " << modify0.size() << " modifications and " << acceptedCreations() << " of "
      << queued << " queued creations answered after SIGCONT";
  for (const auto& [s, i] : modify0) {
    const auto answers = peers.responsesTo(s);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].type, kModifyBearerResponse) << answers[0].describe();
    EXPECT_EQ(answers[0].cause, std::optional<uint8_t>(kCauseAccepted)) << answers[0].describe();
    EXPECT_EQ(answers[0].teid, on0[i].sgw_teid) << answers[0].describe();
  }
  // The worker took its priority ring first: at the PGW, every modification
  // of worker 0 came before the first queued creation.
  std::size_t last_modify = 0, first_create = SIZE_MAX;
  for (std::size_t i = pgw_seen_before; i < peers.atPgw().size(); ++i) {
    const auto& [type, imsi] = peers.atPgw()[i];
    if (type == static_cast<uint8_t>(MessageType::kModifyBearerRequest)) last_modify = i;
    if (type == static_cast<uint8_t>(MessageType::kCreateSessionRequest) && first_create == SIZE_MAX) first_create = i;
  }
  EXPECT_LT(last_modify, first_create) << "a queued creation was served before an established session";

  const nlohmann::json after = g.status();
  SCOPED_TRACE("gtpcp status --json at the end:\n" + after.dump(1));
  EXPECT_EQ(after.at("counters").value("forwarder.rejected_overload", 0ull), rejections())
      << "forwarder.rejected_overload and the rejections the SGW saw";
  EXPECT_EQ(after.at("counters").value("forwarder.dropped_priority_ring_full", 1ull), 0u);
  EXPECT_EQ(TestGroup::process(after, "worker-0").value("sessions", 0ull), kEstablished0 + queued);
  EXPECT_EQ(TestGroup::process(after, "worker-1").value("sessions", 0ull), kEstablished1);
  EXPECT_EQ(after.value("sessions", 0ull), kEstablished0 + kEstablished1 + queued);
}

TEST_F(DataPathTest, CreationsThatWaitedTooLongAreRefusedAndNeverQueueBeforeEstablishedSessions) {
  TestGroup& g = startGroup(1, onlyGateway(ip(21), kNoHealthChecks), "overload:\n  max_creation_wait_ms: 100\n");
  ASSERT_FALSE(HasFailure());
  const gtp::Ipv4 proxy_addr = net_.addr(kProxyHost);
  const gtp::Ipv4 sgw_addr = net_.addr(11);
  Peers peers(sgw_addr, net_.addr(21));

  // One established session.
  ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, createSessionRequest(1, 1010000000700ull, sgw_addr, 0x700)));
  ASSERT_TRUE(peers.pumpUntil([&] { return peers.responsesTo(1).size() == 1; }, 5s));
  const auto fteid = peers.responsesTo(1)[0].fteid(kIfPgwGtpC);
  ASSERT_TRUE(fteid);

  // The forwarder stops reading for 300 ms while creations and one Modify
  // Bearer Request arrive: the creations are then older than 100 ms.
  const int forwarder = g.pidOf("forwarder");
  ASSERT_GT(forwarder, 0);
  {
    Continue resume{forwarder};
    ASSERT_EQ(kill(forwarder, SIGSTOP), 0);
    ASSERT_TRUE(testing::waitUntil([&] { return processState(forwarder) == 'T'; }, 2s, 5ms));
    for (uint32_t i = 0; i < 20; ++i)
      ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123,
                                     createSessionRequest(100 + i, 1010000000710ull + i, sgw_addr, 0x710 + i)));
    ASSERT_TRUE(peers.sgw().sendTo(proxy_addr, 2123, modifyBearerRequest(200, fteid->teid, 1010000000700ull, sgw_addr)));
    std::this_thread::sleep_for(300ms);
  }
  ASSERT_TRUE(peers.pumpUntil(
      [&] {
        std::size_t answered = peers.responsesTo(200).size();
        for (uint32_t i = 0; i < 20; ++i) answered += peers.responsesTo(100 + i).size();
        return answered == 21;
      },
      5s));
  for (uint32_t i = 0; i < 20; ++i) {
    const Decoded d = peers.responsesTo(100 + i)[0];
    EXPECT_EQ(d.type, kCreateSessionResponse);
    EXPECT_EQ(d.cause, std::optional<uint8_t>(kCauseNoResources)) << d.describe();
    EXPECT_EQ(d.teid, 0x710 + i) << "the SGW's TEID";
  }
  EXPECT_EQ(peers.responsesTo(200)[0].type, kModifyBearerResponse);
  EXPECT_EQ(peers.responsesTo(200)[0].cause, std::optional<uint8_t>(kCauseAccepted)) << "the established session is served";
  // Only the first creation and the Modify Bearer Request reached the PGW.
  ASSERT_EQ(peers.atPgw().size(), 2u);
  EXPECT_EQ(peers.atPgw()[1].first, static_cast<uint8_t>(MessageType::kModifyBearerRequest));
  const json s = g.status();
  const json& c = s.at("counters");
  EXPECT_EQ(c.value("forwarder.rejected_stale", 0ull), 20u) << s.dump(1);
  EXPECT_EQ(c.value("forwarder.datagrams_from_new_session_sockets", 0ull), 21u)
      << "every Create Session Request, and nothing else, came through the new-session socket";
}

}  // namespace
}  // namespace gtpcp::integration
