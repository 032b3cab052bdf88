// The forwarder's Echo health checks of the routing document's gateways
// (forwarder/lib/health.h), driven with explicit times, the fixture recording
// what they send: what is published, when each Echo Request goes out and what
// it holds, when a gateway is down or up again, which answers count,
// restarts, counters; GTPv1 Echo for the gateways of GTPv1 pools.
#include "forwarder/lib/health.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/config/routing.h"
#include "common/group/meta.h"
#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "forwarder/lib/dispatcher.h"
#include "forwarder/lib/sender.h"
#include "common/time/clock.h"
#include "tests/support/udp.h"

namespace gtpcp::forwarder {
namespace {

using namespace gtp;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kT0 = 7'000'000 * kMs;  // any start time but 0
constexpr uint8_t kGroupRecovery = 42;

// Three IPv4 gateways, then an IPv6 one that no socket of the plan reaches.
constexpr const char* kGateways =
    "version: 1\n"
    "pools:\n"
    "  internet:\n"
    "    gateways:\n"
    "      - {name: pgw1, address: 127.0.0.21}\n"
    "      - {name: pgw2, address: 127.0.0.22, port: 2124}\n"
    "      - {name: pgw3, address: 127.0.0.23}\n"
    "  v6:\n"
    "    gateways: [{name: pgw6, address: \"2001:db8::6\"}]\n"
    "rules: [{name: default, pool: internet}]\n";

Ipv6 v6(std::string_view text) {
  Ipv6 a;
  EXPECT_TRUE(parseIpv6(text, a)) << text;
  return a;
}

const net::Address kPgw1 = net::Address::v4(Ipv4{{127, 0, 0, 21}}, 2123);
const net::Address kPgw2 = net::Address::v4(Ipv4{{127, 0, 0, 22}}, 2124);
const net::Address kPgw3 = net::Address::v4(Ipv4{{127, 0, 0, 23}}, 2123);
const net::Address kPgw6 = net::Address::v6(v6("2001:db8::6"), 2123);

// One datagram handed to the sink, with the time of the tick that sent it.
struct Sent {
  uint64_t at_ns;
  uint8_t socket;
  net::Address to;
  std::vector<uint8_t> bytes;
};

uint32_t sequenceOf(const Sent& s) {
  if (!s.bytes.empty() && (s.bytes[0] >> 5) == 1) {
    v1::Message m;
    EXPECT_TRUE(m.decode(s.bytes));
    return m.header().sequence_number;
  }
  v2::Message m;
  EXPECT_TRUE(m.decode(s.bytes));
  return m.header().sequence_number;
}

// An Echo Response with `sequence`, and a Recovery IE unless nullopt.
std::vector<uint8_t> echoResponse(uint32_t sequence, std::optional<uint8_t> recovery) {
  std::vector<uint8_t> buf(32);
  v2::Builder b(buf);
  b.begin(v2::MessageType::kEchoResponse, std::nullopt, sequence);
  if (recovery) b.add(v2::Recovery{*recovery});
  buf.resize(b.finish()->size());
  return buf;
}

// A GTPv1 Echo Response with `sequence`, and a Recovery IE unless nullopt.
std::vector<uint8_t> echoResponseV1(uint16_t sequence, std::optional<uint8_t> recovery) {
  std::vector<uint8_t> buf(32);
  v1::Builder b(buf);
  b.begin(v1::MessageType::kEchoResponse, 0, sequence);
  if (recovery) b.add(v1::Recovery{*recovery});
  buf.resize(b.finish()->size());
  return buf;
}

// A PGW, then two GGSNs of a GTPv1 pool.
constexpr const char* kMixedGateways =
    "version: 1\n"
    "pools:\n"
    "  internet:\n"
    "    gateways: [{name: pgw1, address: 127.0.0.21}]\n"
    "  gn:\n"
    "    gtp_version: 1\n"
    "    gateways:\n"
    "      - {name: ggsn1, address: 127.0.0.31}\n"
    "      - {name: ggsn2, address: 127.0.0.32, port: 3386}\n"
    "rules: [{name: default, pool: internet}, {name: gn, pool: gn}]\n";

const net::Address kGgsn1 = net::Address::v4(Ipv4{{127, 0, 0, 31}}, 2123);
const net::Address kGgsn2 = net::Address::v4(Ipv4{{127, 0, 0, 32}}, 3386);

// The fixture is the checks' ReplySink: it records what they send.
class GatewayHealthTest : public ::testing::Test, public ReplySink {
 protected:
  // The socket plan has IPv4 on both legs but IPv6 on the access leg only.
  GatewayHealthTest()
      : shm_(std::make_unique<ForwarderShm>()),
        table_shm_(std::make_unique<GatewayTableShm>()),
        plan_(group::SocketPlan::make(Ipv4{{127, 0, 0, 1}}, v6("2001:db8::1"), Ipv4{{127, 0, 0, 2}},
                                      std::nullopt, 2123)) {
    table_shm_->recovery.store(kGroupRecovery);
  }

  // Loads `gateways` with `health_check: {<settings>}` and starts the checks at kT0.
  void start(const std::string& settings, const char* gateways = kGateways) {
    auto r = config::parseRoutingDocument(std::string(gateways) + "health_check: {" + settings + "}\n",
                                          "routing.yaml");
    EXPECT_TRUE(r) << r.error().toString();
    table_ = r ? std::move(*r) : config::RoutingTable{};  // none: the test fails, not crashes
    health_ = std::make_unique<GatewayHealth>(table_, plan_, *shm_, *table_shm_, kT0);
  }

  bool reply(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
             uint64_t receive_ns) noexcept override {
    EXPECT_EQ(receive_ns, 0u) << "an Echo Request answers no datagram";
    sent_.push_back(Sent{now_ns_, socket, to, {bytes.begin(), bytes.end()}});
    return true;
  }

  // An Echo Response from `from`, received at the time of the last tick.
  bool answerWith(const net::Address& from, std::span<const uint8_t> bytes) {
    return health_->onEchoResponse(from, bytes, now_ns_);
  }

  uint64_t tick(uint64_t now_ns) {
    now_ns_ = now_ns;
    return health_->tick(now_ns, *this);
  }
  // Ticks at every due time before `end_ns`, as the forwarder's loop does.
  void runUntil(uint64_t end_ns) {
    while (health_->nextDue() < end_ns) tick(health_->nextDue());
  }

  // The last Echo Request sent to `to`.
  const Sent& lastTo(const net::Address& to) {
    for (auto it = sent_.rbegin(); it != sent_.rend(); ++it)
      if (it->to == to) return *it;
    ADD_FAILURE() << "nothing sent to " << to.toString();
    static const Sent kNone{};
    return kNone;
  }
  // Answers the last Echo Request sent to `to`, from its address and `port`.
  // In the version of that request.
  bool answer(const net::Address& to, std::optional<uint8_t> recovery = 5, uint16_t port = 2123) {
    const Sent& request = lastTo(to);
    const uint32_t seq = sequenceOf(request);
    const bool v1 = !request.bytes.empty() && (request.bytes[0] >> 5) == 1;
    return answerWith(to.withPort(port), v1 ? echoResponseV1(static_cast<uint16_t>(seq), recovery)
                                                         : echoResponse(seq, recovery));
  }

  // Answers gateway `index` (at `address`) once an interval, from its first
  // interval on, with Recovery 17, 17, 18, 18, none, 17: a change of value
  // is a restart, the first value and a missing IE are not.
  void expectRecoveryChangesAreRestarts(std::size_t index, const net::Address& address) {
    uint64_t k = 0;
    auto answerNext = [&](std::optional<uint8_t> recovery) {
      runUntil(kT0 + ++k * 1000 * kMs);
      return answer(address, recovery, 40000);
    };
    EXPECT_TRUE(answerNext(17));  // the first value seen: no restart
    EXPECT_EQ(status(index).recovery.load(), 17u);
    EXPECT_EQ(status(index).restarts.load(), 0u);
    EXPECT_TRUE(answerNext(17));
    EXPECT_EQ(status(index).restarts.load(), 0u);
    EXPECT_TRUE(answerNext(18));
    EXPECT_EQ(status(index).recovery.load(), 18u);
    EXPECT_EQ(status(index).restarts.load(), 1u);
    EXPECT_TRUE(answerNext(18));
    EXPECT_EQ(status(index).restarts.load(), 1u);
    EXPECT_TRUE(answerNext(std::nullopt));  // no Recovery IE: alive, nothing learnt
    EXPECT_EQ(status(index).recovery.load(), 18u);
    EXPECT_EQ(status(index).restarts.load(), 1u);
    EXPECT_TRUE(answerNext(17));  // back to an earlier value is a change too
    EXPECT_EQ(status(index).recovery.load(), 17u);
    EXPECT_EQ(status(index).restarts.load(), 2u);
    EXPECT_EQ(status(index).echo_answered.load(), 6u);
  }

  // Echo Requests sent, by destination ("127.0.0.21:2123").
  std::map<std::string, int> countsByGateway() const {
    std::map<std::string, int> out;
    for (const Sent& s : sent_) ++out[s.to.toString()];
    return out;
  }

  const GatewayStatusShm& status(std::size_t i) const { return table_shm_->gateways[i]; }
  bool up(std::size_t i) const { return status(i).up.load() == 1; }

  std::unique_ptr<ForwarderShm> shm_;
  std::unique_ptr<GatewayTableShm> table_shm_;
  group::SocketPlan plan_;
  config::RoutingTable table_;
  uint64_t now_ns_ = 0;     // of the tick in progress
  std::vector<Sent> sent_;  // by the checks, in order
  std::unique_ptr<GatewayHealth> health_;
};

TEST_F(GatewayHealthTest, PublishesEveryGatewayAtConstruction) {
  start("interval_ms: 1000");
  EXPECT_EQ(table_shm_->published.load(), 4u);
  EXPECT_EQ(status(0).address, kPgw1);
  EXPECT_EQ(status(1).address, kPgw2);
  EXPECT_EQ(status(2).address, kPgw3);
  EXPECT_EQ(status(3).address, kPgw6);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(up(i)) << i;
    EXPECT_EQ(status(i).recovery.load(), kRecoveryUnknown) << i;
    EXPECT_EQ(status(i).restarts.load(), 0u) << i;
    EXPECT_EQ(status(i).echo_sent.load(), 0u) << i;
  }
  EXPECT_TRUE(table_shm_->gateways[4].address == net::Address{});
  EXPECT_TRUE(sent_.empty());
  EXPECT_EQ(health_->nextDue(), kT0);
}

TEST_F(GatewayHealthTest, KeepsWhatIsKnownOfTheSameGatewayOnly) {
  // What an earlier forwarder left: entry 0 is another gateway, entry 1 the same.
  table_shm_->gateways[0].address = net::Address::v4(Ipv4{{10, 0, 0, 9}}, 2123);
  table_shm_->gateways[0].up.store(0);
  table_shm_->gateways[0].recovery.store(7);
  table_shm_->gateways[1].address = kPgw2;
  table_shm_->gateways[1].up.store(0);
  table_shm_->gateways[1].recovery.store(9);
  start("interval_ms: 1000");
  EXPECT_EQ(status(0).address, kPgw1);
  EXPECT_TRUE(up(0));
  EXPECT_EQ(status(0).recovery.load(), kRecoveryUnknown);
  EXPECT_FALSE(up(1));
  EXPECT_EQ(status(1).recovery.load(), 9u);
}

TEST_F(GatewayHealthTest, ZeroIntervalSendsNothingAndEveryGatewayIsUp) {
  table_shm_->gateways[1].address = kPgw2;  // left down by an earlier forwarder
  table_shm_->gateways[1].up.store(0);
  start("interval_ms: 0, misses: 1");
  EXPECT_EQ(table_shm_->published.load(), 4u);
  EXPECT_EQ(health_->nextDue(), UINT64_MAX);
  for (uint64_t now : {kT0, kT0 + 1000 * kMs, kT0 + 3'600'000 * kMs, UINT64_MAX - 1})
    EXPECT_EQ(tick(now), UINT64_MAX) << now;
  EXPECT_TRUE(sent_.empty());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(up(i)) << i;
  EXPECT_EQ(shm_->counters.echo_requests_sent.load(), 0u);
}

TEST_F(GatewayHealthTest, FirstRequestsAreSpreadOverTheFirstInterval) {
  start("interval_ms: 1000");
  // Four gateways: a quarter of the interval apart. The IPv6 one's turn
  // (750 ms) sends nothing and is not waited for.
  EXPECT_EQ(tick(kT0), kT0 + 250 * kMs);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].to, kPgw1);
  EXPECT_EQ(tick(kT0 + 249 * kMs), kT0 + 250 * kMs);
  EXPECT_EQ(sent_.size(), 1u);
  EXPECT_EQ(tick(kT0 + 250 * kMs), kT0 + 500 * kMs);
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[1].to, kPgw2);
  EXPECT_EQ(tick(kT0 + 500 * kMs), kT0 + 1000 * kMs);
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_[2].to, kPgw3);
  EXPECT_EQ(health_->nextDue(), kT0 + 1000 * kMs);
  EXPECT_EQ(tick(kT0 + 999 * kMs), kT0 + 1000 * kMs);
  EXPECT_EQ(tick(kT0 + 1000 * kMs), kT0 + 1250 * kMs);
  ASSERT_EQ(sent_.size(), 4u);
  EXPECT_EQ(sent_[3].to, kPgw1);
}

TEST_F(GatewayHealthTest, EachGatewayGetsOneRequestPerInterval) {
  start("interval_ms: 1000");
  runUntil(kT0 + 10'000 * kMs);
  EXPECT_EQ(countsByGateway(), (std::map<std::string, int>{
                                   {"127.0.0.21:2123", 10}, {"127.0.0.22:2124", 10}, {"127.0.0.23:2123", 10}}));
  // Exactly an interval apart, each gateway on its own phase.
  std::map<std::string, uint64_t> last;
  const std::map<std::string, uint64_t> phase = {
      {"127.0.0.21:2123", 0}, {"127.0.0.22:2124", 250 * kMs}, {"127.0.0.23:2123", 500 * kMs}};
  for (const Sent& s : sent_) {
    const std::string to = s.to.toString();
    if (auto it = last.find(to); it != last.end())
      EXPECT_EQ(s.at_ns - it->second, 1000 * kMs) << to;
    else
      EXPECT_EQ(s.at_ns, kT0 + phase.at(to)) << to;
    last[to] = s.at_ns;
  }
  EXPECT_EQ(health_->nextDue(), kT0 + 10'000 * kMs);
}

TEST_F(GatewayHealthTest, ALateTurnKeepsTheSchedule) {
  start("interval_ms: 1000");
  tick(kT0);
  // 100 ms late for pgw1's second request; pgw2 and pgw3 are sent too.
  EXPECT_EQ(tick(kT0 + 1100 * kMs), kT0 + 1250 * kMs);
  EXPECT_EQ(sent_.size(), 4u);
  EXPECT_EQ(tick(kT0 + 1250 * kMs), kT0 + 1500 * kMs);  // pgw2 on its own schedule
  EXPECT_EQ(sent_.size(), 5u);
  EXPECT_EQ(tick(kT0 + 1500 * kMs), kT0 + 2000 * kMs);  // pgw1 still at 2000, not 2100
  // Several intervals late: one request each, and each gateway's next one
  // on its own phase (pgw1 at 10000, pgw2 at 10250, pgw3 at 10500), not
  // all of them together.
  const std::size_t before = sent_.size();
  EXPECT_EQ(tick(kT0 + 9700 * kMs), kT0 + 10'000 * kMs);
  EXPECT_EQ(sent_.size(), before + 3);
  EXPECT_EQ(tick(kT0 + 10'000 * kMs), kT0 + 10'250 * kMs);
  EXPECT_EQ(sent_.size(), before + 4);
}

TEST_F(GatewayHealthTest, AnIpv6GatewayIsCheckedFromAnIpv6GatewayAddress) {
  plan_ = group::SocketPlan::make(Ipv4{{127, 0, 0, 1}}, v6("2001:db8::1"), Ipv4{{127, 0, 0, 2}},
                                  v6("2001:db8::2"), 2123);
  start("interval_ms: 1000, misses: 1");
  EXPECT_EQ(tick(kT0 + 750 * kMs), kT0 + 1000 * kMs);  // late: all four at once
  ASSERT_EQ(sent_.size(), 4u);
  EXPECT_EQ(sent_[3].to, kPgw6);
  EXPECT_EQ(sent_[3].socket, plan_.gateway_v6);
  EXPECT_NE(plan_.gateway_v6, plan_.gateway_v4);
  EXPECT_TRUE(answer(kPgw6, 5, 30000));
  EXPECT_EQ(status(3).echo_answered.load(), 1u);
  tick(kT0 + 1750 * kMs);
  EXPECT_TRUE(up(3));
  EXPECT_FALSE(up(0));
}

TEST_F(GatewayHealthTest, EchoRequestsAreWellFormed) {
  start("interval_ms: 1000");
  runUntil(kT0 + 1000 * kMs);
  table_shm_->recovery.store(200);  // a restarted group answers with its new value
  runUntil(kT0 + 2000 * kMs);
  ASSERT_EQ(sent_.size(), 6u);
  std::vector<uint32_t> sequences;
  for (std::size_t i = 0; i < sent_.size(); ++i) {
    const Sent& s = sent_[i];
    EXPECT_EQ(s.socket, plan_.gateway_v4) << i;
    EXPECT_NE(s.socket, plan_.access_v4) << i;
    v2::Message m;
    ASSERT_TRUE(m.decode(s.bytes)) << i;
    EXPECT_EQ(m.messageType(), v2::MessageType::kEchoRequest) << i;
    EXPECT_EQ(m.header().message_type, 1) << i;
    EXPECT_FALSE(m.header().teidPresent()) << i;
    EXPECT_EQ(s.bytes.size(), 13u) << i;  // 8 octets of header, Recovery
    EXPECT_EQ(m.ieCount(), 1u) << i;
    const auto recovery = v2::readFirst<v2::Recovery>(m);
    ASSERT_TRUE(recovery) << i;
    EXPECT_EQ(recovery->value, i < 3 ? kGroupRecovery : 200) << i;
    // Not a Command's sequence number (its top bit set), and each its own.
    EXPECT_LT(m.header().sequence_number, v2::kCommandBit) << i;
    for (uint32_t earlier : sequences) EXPECT_NE(m.header().sequence_number, earlier) << i;
    sequences.push_back(m.header().sequence_number);
  }
  EXPECT_EQ(sent_[0].to, kPgw1);
  EXPECT_EQ(sent_[1].to, kPgw2);  // its own port
  EXPECT_EQ(sent_[2].to, kPgw3);
  // The bytes of pgw1's first request: version 2 without TEID, length 9,
  // sequence, spare; Recovery (type 3, length 1) 42.
  const uint32_t seq = sequences[0];
  EXPECT_EQ(sent_[0].bytes,
            (std::vector<uint8_t>{0x40, 0x01, 0x00, 0x09, static_cast<uint8_t>(seq >> 16),
                                  static_cast<uint8_t>(seq >> 8), static_cast<uint8_t>(seq), 0x00, 0x03,
                                  0x00, 0x01, 0x00, kGroupRecovery}));
}

TEST_F(GatewayHealthTest, AGatewayThatNeverAnswersIsDownAfterExactlyMissesIntervals) {
  start("interval_ms: 1000, misses: 3");
  // pgw2 and pgw3 answer every request; pgw1 none.
  auto interval = [&](uint64_t k) {
    runUntil(kT0 + (k + 1) * 1000 * kMs);
    EXPECT_TRUE(answer(kPgw2));
    EXPECT_TRUE(answer(kPgw3));
  };
  // Runs the intervals from `k` on; after each, pgw1 is up or not and has
  // missed so many in all.
  auto expect = [&](uint64_t k, std::initializer_list<std::pair<bool, uint64_t>> after) {
    for (const auto& [is_up, misses] : after) {
      interval(k);
      EXPECT_EQ(up(0), is_up) << "interval " << k;
      EXPECT_EQ(status(0).misses.load(), misses) << "interval " << k;
      ++k;
    }
  };
  // Interval 1 ends the first request's interval unanswered.
  expect(0, {{true, 0}, {true, 1}, {true, 2}, {false, 3}, {false, 4}});
  EXPECT_TRUE(up(1));
  EXPECT_TRUE(up(2));
  EXPECT_EQ(status(1).misses.load(), 0u);

  // One answer brings it back, and the count of misses in a row starts over.
  EXPECT_TRUE(answer(kPgw1));
  EXPECT_TRUE(up(0));
  EXPECT_EQ(status(0).echo_answered.load(), 1u);
  expect(5, {{true, 4}, {true, 5}, {true, 6}, {false, 7}});
}

TEST_F(GatewayHealthTest, OneMissIsEnoughWhenMissesIsOne) {
  start("interval_ms: 1000, misses: 1");
  runUntil(kT0 + 1000 * kMs);
  EXPECT_TRUE(up(0));
  tick(kT0 + 1000 * kMs);
  EXPECT_FALSE(up(0));
  EXPECT_TRUE(up(1));  // its first interval has not ended
}

TEST_F(GatewayHealthTest, OnlyTheAnswerToTheCurrentRequestCounts) {
  start("interval_ms: 1000");
  runUntil(kT0 + 1000 * kMs);
  const uint32_t seq = sequenceOf(lastTo(kPgw1));
  // A wrong sequence number, another host, another gateway of ours.
  EXPECT_FALSE(answerWith(kPgw1, echoResponse((seq + 1000) & 0x7fffff, 5)));
  EXPECT_FALSE(answerWith(net::Address::v4(Ipv4{{127, 0, 0, 99}}, 2123), echoResponse(seq, 5)));
  EXPECT_FALSE(answerWith(kPgw3, echoResponse(seq, 5)));
  EXPECT_FALSE(answerWith(kPgw6, echoResponse(seq, 5)));
  EXPECT_FALSE(answerWith(kPgw1, std::vector<uint8_t>{0x40, 0x02, 0x00}));
  EXPECT_EQ(status(0).echo_answered.load(), 0u);
  EXPECT_EQ(status(0).recovery.load(), kRecoveryUnknown);

  // The source port does not matter.
  EXPECT_TRUE(answerWith(kPgw1.withPort(40000), echoResponse(seq, 5)));
  EXPECT_EQ(status(0).echo_answered.load(), 1u);
  EXPECT_EQ(status(0).recovery.load(), 5u);
  // Answered already.
  EXPECT_FALSE(answerWith(kPgw1, echoResponse(seq, 5)));
  EXPECT_EQ(status(0).echo_answered.load(), 1u);

  // pgw2's first request is superseded by its second: the late answer to
  // the first does not count, and that interval stays a miss.
  const uint32_t first = sequenceOf(lastTo(kPgw2));
  runUntil(kT0 + 2000 * kMs);
  const uint32_t second = sequenceOf(lastTo(kPgw2));
  ASSERT_NE(first, second);
  EXPECT_FALSE(answerWith(kPgw2, echoResponse(first, 5)));
  EXPECT_EQ(status(1).echo_answered.load(), 0u);
  EXPECT_EQ(status(1).misses.load(), 1u);
  EXPECT_EQ(status(1).recovery.load(), kRecoveryUnknown);
  EXPECT_TRUE(answerWith(kPgw2, echoResponse(second, 5)));
  EXPECT_EQ(status(1).echo_answered.load(), 1u);
}

TEST_F(GatewayHealthTest, AChangedRecoveryIsARestart) {
  start("interval_ms: 1000");
  expectRecoveryChangesAreRestarts(0, kPgw1);
  // Recovery 0 first seen on another gateway is no restart either.
  EXPECT_TRUE(answer(kPgw2, 0));
  EXPECT_EQ(status(1).recovery.load(), 0u);
  EXPECT_EQ(status(1).restarts.load(), 0u);
}

TEST_F(GatewayHealthTest, CountersAgreeWithWhatWasSentAndAnswered) {
  start("interval_ms: 1000, misses: 3");
  // pgw1 answers every request, pgw2 every other one, pgw3 none.
  for (uint64_t k = 0; k < 10; ++k) {
    runUntil(kT0 + (k + 1) * 1000 * kMs);
    EXPECT_TRUE(answer(kPgw1));
    if (k % 2 == 0) {
      EXPECT_TRUE(answer(kPgw2));
    }
  }
  EXPECT_EQ(sent_.size(), 30u);
  EXPECT_EQ(shm_->counters.echo_requests_sent.load(), 30u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(status(i).echo_sent.load(), 10u) << i;
  EXPECT_EQ(status(3).echo_sent.load(), 0u);
  EXPECT_EQ(status(0).echo_answered.load(), 10u);
  EXPECT_EQ(status(1).echo_answered.load(), 5u);
  EXPECT_EQ(status(2).echo_answered.load(), 0u);
  // The tenth request's interval has not ended: nine judged.
  EXPECT_EQ(status(0).misses.load(), 0u);
  EXPECT_EQ(status(1).misses.load(), 4u);
  EXPECT_EQ(status(2).misses.load(), 9u);
  EXPECT_TRUE(up(0));
  EXPECT_TRUE(up(1));
  EXPECT_FALSE(up(2));
  EXPECT_TRUE(up(3));  // never checked
}

TEST_F(GatewayHealthTest, EchoResponsesReachTheChecksThroughTheDispatcher) {
  start("interval_ms: 1000");
  tick(kT0);
  Dispatcher dispatcher({}, *shm_, *table_shm_, *this);
  dispatcher.setHealth(health_.get());
  auto dispatch = [&](const net::Address& from, const std::vector<uint8_t>& bytes) {
    ring::DatagramMeta meta{};
    meta.local_socket = plan_.gateway_v4;
    group::setPeer(meta, from);
    dispatcher.dispatch(meta, bytes);
  };
  const uint32_t seq = sequenceOf(lastTo(kPgw1));
  dispatch(kPgw1, echoResponse(seq, 5));
  dispatch(kPgw1, echoResponse(seq, 5));
  EXPECT_EQ(status(0).echo_answered.load(), 1u);
  EXPECT_EQ(shm_->counters.echo_responses.load(), 2u);
  EXPECT_EQ(shm_->counters.echo_responses_unmatched.load(), 1u);
  EXPECT_EQ(sent_.size(), 1u);  // an Echo Response gets no answer
}

TEST_F(GatewayHealthTest, ChecksTheFirstMaxHealthCheckedGatewaysOnly) {
  std::string text = "version: 1\npools:\n  p:\n    gateways:\n";
  for (unsigned i = 0; i < kMaxHealthChecked + 2; ++i)
    text += "      - {name: g" + std::to_string(i) + ", address: 10.0." + std::to_string(i / 250) + "." +
            std::to_string(i % 250 + 1) + "}\n";
  text += "rules: [{name: r, pool: p}]\nhealth_check: {interval_ms: 1000}\n";
  auto r = config::parseRoutingDocument(text, "routing.yaml");
  ASSERT_TRUE(r) << r.error().toString();
  table_ = std::move(*r);
  health_ = std::make_unique<GatewayHealth>(table_, plan_, *shm_, *table_shm_, kT0);
  EXPECT_EQ(table_shm_->published.load(), kMaxHealthChecked);
  EXPECT_EQ(table_shm_->gateways[kMaxHealthChecked - 1].address,
            net::Address::v4(Ipv4{{10, 0, 4, 24}}, 2123));  // gateway 1023
  runUntil(kT0 + 1000 * kMs);
  EXPECT_EQ(sent_.size(), kMaxHealthChecked);
  EXPECT_EQ(countsByGateway().size(), kMaxHealthChecked);
}


// -- GTPv1 gateways ----------------------------------------------------------------------

TEST_F(GatewayHealthTest, AGtpv1GatewayGetsGtpv1EchoRequests) {
  start("interval_ms: 900", kMixedGateways);
  EXPECT_EQ(status(1).address, kGgsn1);
  EXPECT_EQ(status(1).gtp_version, 1u);
  EXPECT_EQ(status(0).gtp_version, 2u);
  runUntil(kT0 + 1800 * kMs);
  ASSERT_EQ(sent_.size(), 6u);
  EXPECT_EQ(countsByGateway(), (std::map<std::string, int>{
                                   {"127.0.0.21:2123", 2}, {"127.0.0.31:2123", 2}, {"127.0.0.32:3386", 2}}));
  std::vector<uint32_t> sequences;
  for (const Sent& s : sent_) {
    EXPECT_EQ(s.socket, plan_.gateway_v4);
    if (s.to == kPgw1) {
      EXPECT_EQ(s.bytes[0] >> 5, 2);
      EXPECT_EQ(s.bytes.size(), 13u);  // as before: GTPv2 with the group's Recovery
      continue;
    }
    v1::Message m;
    ASSERT_TRUE(m.decode(s.bytes)) << s.to.toString();
    EXPECT_EQ(m.messageType(), v1::MessageType::kEchoRequest);
    EXPECT_EQ(m.header().teid, 0u);
    EXPECT_TRUE(m.header().hasSequenceNumber());
    EXPECT_EQ(m.ieCount(), 0u) << "TS 29.060 Table 2: no Recovery in an Echo Request";
    const uint16_t seq = m.header().sequence_number;
    // Version 1, PT, S; type 1; length 4; TEID 0; sequence; N-PDU 0; no extension header.
    EXPECT_EQ(s.bytes, (std::vector<uint8_t>{0x32, 0x01, 0x00, 0x04, 0, 0, 0, 0, static_cast<uint8_t>(seq >> 8),
                                             static_cast<uint8_t>(seq), 0, 0}));
    for (uint32_t earlier : sequences) EXPECT_NE(seq, earlier);
    sequences.push_back(seq);
  }
  EXPECT_EQ(status(1).echo_sent.load(), 2u);
  EXPECT_EQ(status(2).echo_sent.load(), 2u);
  EXPECT_EQ(shm_->counters.echo_requests_sent.load(), 6u);
}

TEST_F(GatewayHealthTest, AGtpv1EchoResponseWithANewRecoveryIsARestart) {
  start("interval_ms: 1000, misses: 1", kMixedGateways);
  expectRecoveryChangesAreRestarts(1, kGgsn1);
  EXPECT_TRUE(up(1));
  EXPECT_FALSE(up(2)) << "ggsn2 never answered";
  EXPECT_EQ(status(0).restarts.load(), 0u);
}

TEST_F(GatewayHealthTest, AnAnswerOfTheOtherVersionDoesNotCount) {
  start("interval_ms: 1000", kMixedGateways);
  runUntil(kT0 + 1000 * kMs);
  const uint32_t ggsn_seq = sequenceOf(lastTo(kGgsn1));
  const uint32_t pgw_seq = sequenceOf(lastTo(kPgw1));
  EXPECT_LE(ggsn_seq, 0xffffu);
  // The right number and host, the wrong version.
  EXPECT_FALSE(answerWith(kGgsn1, echoResponse(ggsn_seq, 5)));
  EXPECT_FALSE(answerWith(kPgw1, echoResponseV1(static_cast<uint16_t>(pgw_seq), 5)));
  // A GTPv1 Echo Response without sequence number, or that does not decode.
  std::vector<uint8_t> no_seq = {0x30, 0x02, 0x00, 0x00, 0, 0, 0, 0};
  EXPECT_FALSE(answerWith(kGgsn1, no_seq));
  EXPECT_FALSE(answerWith(kGgsn1, std::vector<uint8_t>{0x32, 0x02, 0x00}));
  EXPECT_EQ(status(1).echo_answered.load(), 0u);
  EXPECT_EQ(status(0).echo_answered.load(), 0u);
  EXPECT_TRUE(answerWith(kGgsn1, echoResponseV1(static_cast<uint16_t>(ggsn_seq), 5)));
  EXPECT_TRUE(answerWith(kPgw1, echoResponse(pgw_seq, 5)));
  EXPECT_EQ(status(1).echo_answered.load(), 1u);
  EXPECT_EQ(status(0).echo_answered.load(), 1u);
}

TEST_F(GatewayHealthTest, Gtpv1EchoResponsesReachTheChecksThroughTheDispatcher) {
  start("interval_ms: 1000", kMixedGateways);
  runUntil(kT0 + 1000 * kMs);
  Dispatcher dispatcher({}, *shm_, *table_shm_, *this);
  dispatcher.setHealth(health_.get());
  ring::DatagramMeta meta{};
  meta.local_socket = plan_.gateway_v4;
  group::setPeer(meta, kGgsn2.withPort(2123));
  const auto answer = echoResponseV1(static_cast<uint16_t>(sequenceOf(lastTo(kGgsn2))), 9);
  const std::size_t sent = sent_.size();
  dispatcher.dispatch(meta, answer);
  dispatcher.dispatch(meta, answer);
  EXPECT_EQ(status(2).echo_answered.load(), 1u);
  EXPECT_EQ(status(2).recovery.load(), 9u);
  EXPECT_EQ(shm_->counters.echo_responses.load(), 2u);
  EXPECT_EQ(shm_->counters.echo_responses_unmatched.load(), 1u);
  EXPECT_EQ(shm_->received_v1[2].load(), 2u);
  EXPECT_EQ(sent_.size(), sent) << "an Echo Response gets no answer";
}

TEST_F(GatewayHealthTest, AGatewayThatChangesVersionStartsOver) {
  // What an earlier forwarder knew of 127.0.0.31 when it was a PGW.
  table_shm_->gateways[1].address = kGgsn1;
  table_shm_->gateways[1].gtp_version = 2;
  table_shm_->gateways[1].up.store(0);
  table_shm_->gateways[1].recovery.store(9);
  start("interval_ms: 1000", kMixedGateways);
  EXPECT_TRUE(up(1));
  EXPECT_EQ(status(1).recovery.load(), kRecoveryUnknown);
  EXPECT_EQ(status(1).gtp_version, 1u);
}

// -- Round trip -------------------------------------------------------------------------

TEST_F(GatewayHealthTest, AnAnswerReceivedLaterIsItsRequestsRoundTrip) {
  start("interval_ms: 1000");
  tick(kT0);
  EXPECT_EQ(status(0).echo_rtt_ns.load(), 0u) << "none before the first answer";
  const uint32_t seq = sequenceOf(lastTo(kPgw1));
  EXPECT_TRUE(health_->onEchoResponse(kPgw1, echoResponse(seq, 5), kT0 + 3 * kMs));
  EXPECT_EQ(status(0).echo_rtt_ns.load(), 3 * kMs);
  EXPECT_EQ(status(0).echo_rtt.count(), 1u);
  EXPECT_EQ(status(0).echo_rtt.sumNs(), 3 * kMs);
  // pgw2's request went at kT0 + 250 ms; an answer of unknown time counts
  // as an answer, not as a round trip.
  tick(kT0 + 250 * kMs);
  EXPECT_TRUE(health_->onEchoResponse(kPgw2, echoResponse(sequenceOf(lastTo(kPgw2)), 5), 0));
  EXPECT_EQ(status(1).echo_answered.load(), 1u);
  EXPECT_EQ(status(1).echo_rtt.count(), 0u);
  // The next interval: the last answer's round trip, and both in the histogram.
  runUntil(kT0 + 1001 * kMs);
  EXPECT_TRUE(health_->onEchoResponse(kPgw1, echoResponse(sequenceOf(lastTo(kPgw1)), 5), kT0 + 1000 * kMs + 40'000));
  EXPECT_EQ(status(0).echo_rtt_ns.load(), 40'000u);
  EXPECT_EQ(status(0).echo_rtt.count(), 2u);
  EXPECT_EQ(status(0).echo_rtt.sumNs(), 3 * kMs + 40'000);
  // An answer that does not match measures nothing.
  EXPECT_FALSE(health_->onEchoResponse(kPgw1, echoResponse(seq, 5), kT0 + 1500 * kMs));
  EXPECT_EQ(status(0).echo_rtt.count(), 2u);
}

// A fake PGW on a loopback socket answers the Echo Request the checks send
// through the forwarder's Sender; the answer comes back through the
// Dispatcher with the time it was read, as in the forwarder's loop.
TEST(GatewayHealthLoopback, AnEchoExchangeWithARealSocketGivesItsRoundTrip) {
  const Ipv4 loopback{{127, 0, 0, 1}};
  testing::UdpSocket forwarder_socket(loopback, 0);
  testing::UdpSocket pgw(loopback, 0);
  const std::string document = "version: 1\npools:\n  p:\n    gateways: [{name: pgw, address: 127.0.0.1, port: " +
                               std::to_string(pgw.port()) +
                               "}]\nrules: [{name: r, pool: p}]\nhealth_check: {interval_ms: 1000}\n";
  auto routing = config::parseRoutingDocument(document, "routing.yaml");
  ASSERT_TRUE(routing) << routing.error().toString();
  const auto plan = group::SocketPlan::make(loopback, std::nullopt, loopback, std::nullopt, forwarder_socket.port());
  ASSERT_EQ(plan.gateway_v4, 0);
  auto shm = std::make_unique<ForwarderShm>();
  auto table = std::make_unique<GatewayTableShm>();
  table->recovery.store(kGroupRecovery);
  const std::vector<int> fds(plan.sockets.size(), forwarder_socket.fd());
  Sender sender(fds, 8, *shm);
  GatewayHealth health(*routing, plan, *shm, *table, monotonicNs());
  Dispatcher dispatcher({}, *shm, *table, sender);
  dispatcher.setHealth(&health);
  const GatewayStatusShm& status = table->gateways[0];

  const uint64_t sent_ns = monotonicNs();
  health.tick(sent_ns, sender);
  sender.flushAll();
  // The PGW answers.
  auto request = pgw.receive(std::chrono::seconds(2));
  ASSERT_TRUE(request) << "no Echo Request reached the PGW";
  v2::Message m;
  ASSERT_TRUE(m.decode(request->bytes));
  ASSERT_EQ(m.messageType(), v2::MessageType::kEchoRequest);
  ASSERT_TRUE(pgw.sendTo(loopback, forwarder_socket.port(), echoResponse(m.header().sequence_number, 7)));
  // The forwarder reads the answer.
  auto response = forwarder_socket.receive(std::chrono::seconds(2));
  ASSERT_TRUE(response);
  ring::DatagramMeta meta{};
  meta.receive_ns = monotonicNs();
  meta.local_socket = plan.gateway_v4;
  group::setPeer(meta, net::Address::v4(response->from, response->port));
  dispatcher.dispatch(meta, response->bytes);

  EXPECT_EQ(status.echo_answered.load(), 1u);
  EXPECT_EQ(status.recovery.load(), 7u);
  ASSERT_EQ(status.echo_rtt.count(), 1u);
  ASSERT_GE(meta.receive_ns, sent_ns);
  EXPECT_EQ(status.echo_rtt_ns.load(), meta.receive_ns - sent_ns);
  EXPECT_GT(status.echo_rtt_ns.load(), 0u);
  EXPECT_EQ(status.echo_rtt.sumNs(), meta.receive_ns - sent_ns);
  EXPECT_EQ(shm->counters.echo_responses_unmatched.load(), 0u);
  EXPECT_EQ(shm->proxy_latency[0].count() + shm->proxy_latency[1].count(), 0u)
      << "the proxy's own Echo Requests answer no datagram";
}

}  // namespace
}  // namespace gtpcp::forwarder
