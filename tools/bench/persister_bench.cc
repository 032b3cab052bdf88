// Persister benchmarks: what gtpcp-persister does per change record, from its
// ring to the Redis client (persister/lib/persister.h).
//
//   modify   per session a Modify Bearer Request (ULI, Serving Network, RAT
//            Type, a Bearer Context) and its Response (a Bearer Context with
//            Cause and Charging ID): the steady state, one HSET per session
//   create   per session a Create Session Request (state Creating) and its
//            Response: MULTI, HSET, two SADDs, EXEC per session
//
// Each batch goes through the whole path: the records, written by
// worker::ChangeWriter from real GTPv2 messages, are pushed into an in-memory
// persist ring (not timed), then Channel::turn reads and coalesces them,
// builds the commands and submits them to a fake RedisClient that answers
// each at once (as an event loop would, after the submission); a second turn
// releases the ring. Counters: ns_per_change (CPU time per change record),
// allocs_per_change (operator new calls in this binary, a warm-up batch
// excluded) and bytes_per_change (argument octets submitted: the same records
// must give the same figure whatever the implementation). The argument is the
// batch size in records (batch_records).
// Run: build/release/bin/gtpcp_persister_bench --benchmark_repetitions=5.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/partition.h"
#include "common/ring/ring.h"
#include "persister/lib/persister.h"
#include "common/group/persister_shm.h"
#include "persister/lib/batch.h"
#include "persister/lib/redis_client.h"
#include "workers/lib/persist.h"
#include "common/session/teid.h"

// Allocation counting: every operator new in this binary goes through these.
// Out of line, so that the compiler does not pair an inlined free() with a
// new expression it sees (-Wmismatched-new-delete).
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

[[gnu::noinline]] void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, std::align_val_t a) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace gtpcp;
using namespace gtpcp::gtp;
using namespace gtpcp::gtp::v2;

namespace {

// Change records in memory, back to back, each 8-aligned as in a ring.
class RecordingSink final : public worker::PersistSink {
 public:
  struct Record {
    worker::ChangeKind kind;
    uint16_t partition;
    std::size_t offset;  // octets into words_
    std::size_t length;
  };
  std::span<uint8_t> reserve(worker::ChangeKind kind, uint16_t partition, std::size_t max) noexcept override {
    pending_ = Record{kind, partition, words_.size() * 8, 0};
    words_.resize(words_.size() + (max + 7) / 8);
    return {bytes() + pending_.offset, max};
  }
  void commit(std::size_t length) noexcept override {
    pending_.length = length;
    words_.resize(pending_.offset / 8 + (length + 7) / 8);
    records.push_back(pending_);
  }
  std::span<const uint8_t> bytesOf(const Record& r) { return {bytes() + r.offset, r.length}; }
  std::vector<Record> records;

 private:
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words_.data()); }
  Record pending_{};
  std::vector<uint64_t> words_;
};

// A RedisClient whose every command succeeds: completions are queued at
// submission and run by answer(), as the event loop would run them later.
class InstantRedis final : public persister::RedisClient {
 public:
  InstantRedis() { reply_.type = REDIS_REPLY_ARRAY; }
  persister::RedisErrc submit(uint16_t, persister::RedisArgv, persister::RedisCompletion done,
                              uint8_t) noexcept override {
    pending_.push_back(done);
    return persister::RedisErrc::kOk;
  }
  persister::RedisErrc submitGroup(uint16_t, std::span<const persister::RedisArgv> commands,
                                   persister::RedisCompletion done, uint8_t) noexcept override {
    for (const persister::RedisArgv& c : commands)
      for (std::string_view a : c) bytes_ += a.size();
    pending_.push_back(done);
    return persister::RedisErrc::kOk;
  }
  const persister::RedisCounters& counters() const noexcept override { return counters_; }
  void answer() {
    persister::RedisResult r;
    r.reply = &reply_;
    for (const persister::RedisCompletion& c : pending_) c.fn(c.user, r);
    pending_.clear();
  }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<persister::RedisCompletion> pending_;
  redisReply reply_{};
  persister::RedisCounters counters_;
  uint64_t bytes_ = 0;
};

template <class Fill>
std::vector<uint8_t> build(MessageType type, uint32_t teid, uint32_t sequence, Fill&& fill) {
  std::vector<uint8_t> buf(1024);
  Builder b(buf);
  b.begin(type, teid, sequence);
  fill(b);
  auto out = b.finish();
  if (!out) std::abort();
  buf.resize(out->size());
  return buf;
}

void digits(std::string_view text, auto& out) {
  for (char c : text) out.push(c);
}

FTeid ipv4FTeid(uint8_t type, uint32_t teid, Ipv4 address) { return FTeid{type, teid, address, std::nullopt}; }

// A default bearer's: QCI 9, ARP priority level 15, pre-emption allowed.
BearerQos defaultBearerQos() {
  BearerQos q;
  q.pl = 15;
  q.qci = 9;
  return q;
}

// ULI (TAI and ECGI), Serving Network and RAT Type (EUTRAN), as an SGW
// reports the UE's location.
void addLocation(Builder& b, uint16_t tac, uint32_t eci) {
  const Plmn plmn = *makePlmn("001", "01");
  Uli uli;
  uli.tai = Uli::Tai{plmn, tac};
  uli.ecgi = Uli::Ecgi{plmn, eci};
  b.add(uli);
  b.add(ServingNetwork{plmn});
  b.add(RatType{6});
}

std::string imsiOf(uint32_t n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "00101%010u", n);
  return buf;
}

std::vector<uint8_t> createSessionRequest(const std::string& imsi_digits, uint32_t n) {
  return build(MessageType::kCreateSessionRequest, 0, n, [&](Builder& b) {
    Imsi imsi;
    digits(imsi_digits, imsi.digits);
    b.add(imsi);
    Msisdn msisdn;
    digits("336" + imsi_digits.substr(7), msisdn.digits);
    b.add(msisdn);
    Mei mei;
    digits("3568540512345670", mei.digits);
    b.add(mei);
    addLocation(b, 0x0001, 0x0000100 + (n & 0xff));
    b.add(ipv4FTeid(6, 0x10000 + n, Ipv4{{10, 0, 0, 11}}), 0);
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    b.add(defaultBearerQos());
    b.add(ipv4FTeid(4, 0x20000 + n, Ipv4{{10, 1, 1, 1}}), 2);
    b.endGrouped();
  });
}

std::vector<uint8_t> createSessionResponse(uint32_t n) {
  return build(MessageType::kCreateSessionResponse, 0x10000 + n, n, [&](Builder& b) {
    CauseIe ok;
    ok.value = 16;
    b.add(ok);
    Paa paa;
    paa.pdn_type = 1;
    paa.ipv4 = Ipv4{{100, 64, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)}};
    b.add(paa);
    b.add(Ambr{50000, 100000});
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    b.add(ok);
    b.add(ipv4FTeid(5, 0x30000 + n, Ipv4{{10, 2, 2, 2}}), 2);
    b.add(ChargingId{0x7000 + n});
    b.endGrouped();
  });
}

// As an SGW sends it on a handover (tools/bench/codec_bench.cc).
std::vector<uint8_t> modifyBearerRequest(uint32_t n) {
  return build(MessageType::kModifyBearerRequest, 0x8000a1b2, n, [&](Builder& b) {
    Indication ind;
    ind.size = 3;
    b.add(ind);
    addLocation(b, 0x0002, 0x0000200 + (n & 0xff));
    b.add(ipv4FTeid(6, 0x10000 + n, Ipv4{{10, 0, 0, 12}}));
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    b.endGrouped();
    b.add(UeTimeZone{0x40, 0});
  });
}

std::vector<uint8_t> modifyBearerResponse(uint32_t n) {
  return build(MessageType::kModifyBearerResponse, 0x10000 + n, n, [&](Builder& b) {
    CauseIe ok;
    ok.value = 16;
    b.add(ok);
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    b.add(ok);
    b.add(ChargingId{0x7000 + n});
    b.endGrouped();
  });
}

// A session slot as the worker has it once the session is up.
worker::SessionShm sessionOf(const std::string& imsi, uint32_t n) {
  worker::SessionShm s{};
  s.state = static_cast<uint8_t>(worker::SessionState::kActive);
  s.generation = 1;
  s.gtp_version = 2;
  s.default_ebi = 5;
  s.ebis = 1 << 5;
  s.pool = 1;
  s.gateway = 2;
  s.access_socket = 1;
  s.gateway_socket = 2;
  std::memcpy(s.imsi, imsi.data(), imsi.size());
  s.imsi_length = static_cast<uint8_t>(imsi.size());
  // "internet.mnc001.mcc001.gprs", label encoded.
  static constexpr char kApn[] = "\x08internet\x06mnc001\x06mcc001\x04gprs";
  std::memcpy(s.apn, kApn, sizeof kApn - 1);
  s.apn_length = sizeof kApn - 1;
  s.sgw.teid = 0x10000 + n;
  s.sgw.address = net::Address::v4(Ipv4{{10, 0, 0, 11}}, 2123);
  s.pgw.teid = 0x40000 + n;
  s.pgw.address = net::Address::v4(Ipv4{{10, 0, 0, 21}}, 2123);
  s.gateway_address = net::Address::v4(Ipv4{{10, 0, 0, 21}}, 2123);
  s.csids[0].node_id_type = 1;
  s.csids[0].csid = 7;
  std::memcpy(s.csids[0].node_id, "\x0a\x00\x00\x0b", 4);
  s.created_ns = 1'700'000'000'000'000'000 + n;
  s.updated_ns = s.created_ns;
  return s;
}

enum class Mix { kModify, kCreate };

// `records` change records of `mix`, two per session, into `sink`.
void changes(Mix mix, uint32_t records, RecordingSink& sink) {
  worker::ChangeWriter writer(sink);
  for (uint32_t n = 0; n < records / 2; ++n) {
    const std::string imsi = imsiOf(n);
    const uint16_t partition = partitionOf(imsi);
    const uint32_t teid = worker::makeTeid(partition, static_cast<uint16_t>(n % worker::kMaxSlotsPerPartition),
                                           worker::Leg::kAccess, 1);
    worker::SessionShm s = sessionOf(imsi, n);
    const uint64_t wall = s.created_ns + 1000;
    Message request, response;
    std::vector<uint8_t> req, resp;
    if (mix == Mix::kCreate) {
      req = createSessionRequest(imsi, n);
      resp = createSessionResponse(n);
    } else {
      req = modifyBearerRequest(n);
      resp = modifyBearerResponse(n);
    }
    if (!request.decode(req) || !response.decode(resp)) std::abort();
    worker::SessionShm before = s;
    if (mix == Mix::kCreate) {
      before.state = static_cast<uint8_t>(worker::SessionState::kCreating);
      before.pgw = {};
    }
    if (!writer.upsert(before, teid, partition, wall, &request, worker::Leg::kAccess)) std::abort();
    s.updated_ns = wall + 500;
    if (!writer.upsert(s, teid, partition, wall + 500, &response, worker::Leg::kGateway)) std::abort();
  }
}

struct Ring {
  explicit Ring(uint32_t slots) : size(ring::ringBytes(slots)), memory(std::aligned_alloc(64, size)) {
    std::memset(memory, 0, size);
    if (!ring::initRing(memory, size, slots)) std::abort();
    auto p = ring::Producer::attach(memory, size);
    auto c = ring::Consumer::attach(memory, size);
    if (!p || !c) std::abort();
    producer.emplace(std::move(*p));
    consumer.emplace(std::move(*c));
  }
  ~Ring() { std::free(memory); }
  void push(RecordingSink& sink) {
    for (const RecordingSink::Record& r : sink.records) {
      ring::DatagramMeta meta{};
      meta.flags = static_cast<uint16_t>(r.kind);
      meta.aux = r.partition;
      if (!producer->push(meta, sink.bytesOf(r))) std::abort();
    }
    producer->publish();
  }
  std::size_t size;
  void* memory;
  std::optional<ring::Producer> producer;
  std::optional<ring::Consumer> consumer;
};

void runChannel(benchmark::State& state, Mix mix) {
  const auto records = static_cast<uint32_t>(state.range(0));
  RecordingSink batch;
  changes(mix, records, batch);
  Ring ring(1u << 17);
  InstantRedis redis;
  group::KeyNames keys("g1");
  persister::PersisterCounters counters;
  persister::Channel channel(*ring.consumer, redis, keys, counters, records);
  const auto one = [&] {
    if (!channel.turn(1)) std::abort();
    redis.answer();
    if (!channel.turn(2) || channel.inFlight()) std::abort();
  };
  // A warm-up batch: the persister runs for days, its first batch is not the point.
  ring.push(batch);
  one();
  const uint64_t allocations = g_allocations.load(std::memory_order_relaxed);
  for (auto _ : state) {
    state.PauseTiming();
    ring.push(batch);
    state.ResumeTiming();
    one();
  }
  const double changes_done = static_cast<double>(state.iterations()) * records;
  state.SetItemsProcessed(static_cast<int64_t>(changes_done));
  state.counters["ns_per_change"] =
      benchmark::Counter(records * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["allocs_per_change"] =
      static_cast<double>(g_allocations.load(std::memory_order_relaxed) - allocations) / changes_done;
  state.counters["bytes_per_change"] = static_cast<double>(redis.bytes()) / (changes_done + records);
  if (counters.write_failures.load() != 0) state.SkipWithError("a write failed");
}

void BM_ChannelModifyBearer(benchmark::State& state) { runChannel(state, Mix::kModify); }
BENCHMARK(BM_ChannelModifyBearer)->Arg(256)->Arg(4096);

void BM_ChannelCreateSession(benchmark::State& state) { runChannel(state, Mix::kCreate); }
BENCHMARK(BM_ChannelCreateSession)->Arg(256)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
