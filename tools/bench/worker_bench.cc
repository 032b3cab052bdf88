// gtpcp-bench-worker: what the worker's procedures cost per transaction,
// alone: no socket, no ring, no other process. A worker's tables on the
// heap, 1,000 attached sessions, then Modify Bearer transactions (the SGW's
// request, the PGW's response) handed to Proxy::handle() as the worker's
// loop hands them ring slots. The figure is the worker's share of the data
// path's CPU per transaction; under `valgrind --tool=callgrind` it is an
// instruction count that repeats exactly, whatever else the machine does,
// so that two builds of the procedures compare on a noisy machine.
//
//   gtpcp-bench-worker [--benchmark_repetitions=5 ...]
//   valgrind --tool=callgrind gtpcp-bench-worker --iterations=20000   (and 40000: the difference)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "common/config/routing.h"
#include "common/group/socket_plan.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/patch.h"
#include "tools/peer/messages.h"
#include "workers/lib/proxy.h"

namespace {

using namespace gtpcp;
using namespace gtpcp::worker;

constexpr uint32_t kSessions = 1000;
const gtp::Ipv4 kProxy{{127, 0, 0, 1}};
const gtp::Ipv4 kSgw{{127, 0, 0, 11}};
const gtp::Ipv4 kPgw{{127, 0, 0, 21}};

constexpr const char* kRouting = R"(
version: 1
pools:
  internet:
    gateways:
      - {name: pgw1, address: 127.0.0.21}
rules:
  - name: default
    pool: internet
)";

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "gtpcp-bench-worker: %s\n", what);
  std::abort();
}

// Keeps the last datagram the proxy sent: the benchmark answers it.
class LastEgress final : public Egress {
 public:
  bool send(uint8_t, const net::Address& to, std::span<const uint8_t> bytes) noexcept override {
    std::memcpy(last.data(), bytes.data(), bytes.size());
    length = bytes.size();
    destination = to;
    ++count;
    return true;
  }
  std::span<uint8_t> bytes() noexcept { return {last.data(), length}; }
  std::array<uint8_t, 4096> last{};
  std::size_t length = 0;
  net::Address destination;
  uint64_t count = 0;
};

struct Worker {
  Worker()
      : layout(WorkerLayout::compute(1, 0, 64, 65536, 16 << 20)),
        memory(layout.total / 8 + 1),
        header(new (memory.data()) WorkerShmHeader()),
        sessions(layout, reinterpret_cast<PartitionShm*>(base() + layout.partitions_offset),
                 reinterpret_cast<SessionShm*>(base() + layout.sessions_offset)),
        transactions(layout.transactionMemory(base(), *header)) {
    transactions.rebuild(true);
    sessions.rebuild();
    auto parsed = config::parseRoutingDocument(kRouting, "routing.yaml");
    if (!parsed) die("routing document");
    routing = std::make_unique<config::RoutingTable>(std::move(*parsed));
    ProxySettings settings;
    settings.sockets = group::SocketPlan::make(kProxy, std::nullopt, kProxy, std::nullopt, 2123);
    proxy = std::make_unique<Proxy>(settings, *header, sessions, transactions, *routing, egress);
  }
  uint8_t* base() { return reinterpret_cast<uint8_t*>(memory.data()); }

  void feed(std::span<uint8_t> bytes, const gtp::Ipv4& from, uint64_t now) {
    Arrival a;
    a.peer = net::Address::v4(from, 2123);
    a.now_ns = now;
    a.wall_ns = now;
    proxy->handle(a, bytes);
  }

  WorkerLayout layout;
  std::vector<uint64_t> memory;
  WorkerShmHeader* header;
  SessionTable sessions;
  TransactionTable transactions;
  std::unique_ptr<config::RoutingTable> routing;
  LastEgress egress;
  std::unique_ptr<Proxy> proxy;
};

void ModifyBearerTransaction(benchmark::State& state) {
  Worker w;
  peer::Identities ids;
  ids.imsi_start = 1010000000000ull;
  ids.msisdn_start = 4915100000000ull;
  ids.count = kSessions;
  ids.plmn = *gtp::makePlmn("001", "01");
  gtp::v2::Apn apn;
  for (char c : std::string_view("internet")) apn.text.push(c);
  std::array<uint8_t, 2048> buf{};
  // The proxy's TEIDs of each session: the one the SGW addresses, the one the PGW addresses.
  std::vector<uint32_t> access_teid(kSessions), gateway_teid(kSessions);
  uint64_t now = 1'000'000'000;
  // Attach every subscriber: the Create Session Request and its answer.
  for (uint32_t i = 0; i < kSessions; ++i) {
    peer::CreateSessionRequestArgs csr;
    csr.sequence = i + 1;
    csr.index = i;
    csr.ids = &ids;
    csr.apn = &apn;
    csr.sgw_addr = peer::IpAddress(0x7f00000b);
    csr.sgw_teid = 0x1000 + i;
    auto n = peer::buildCreateSessionRequest(csr, buf);
    if (!n) die("Create Session Request");
    w.feed({buf.data(), *n}, kSgw, now);
    gtp::v2::Message to_pgw;
    if (!to_pgw.decode(w.egress.bytes())) die("forwarded creation");
    auto sender = gtp::v2::readFirst<gtp::v2::FTeid>(to_pgw, 0);
    if (!sender) die("the proxy's SGW F-TEID");
    gateway_teid[i] = sender->teid;
    peer::CreateSessionResponseArgs r;
    r.sequence = to_pgw.header().sequence_number;
    r.header_teid = sender->teid;
    r.pgw_addr = peer::IpAddress(0x7f000015);
    r.pgw_teid = 0x900000 + i;
    r.ue_ipv4 = 0x0a000000 + i;
    r.pgw_u_teid = 0xa00000 + i;
    r.charging_id = i + 1;
    n = peer::buildCreateSessionResponse(r, buf);
    if (!n) die("Create Session Response");
    w.feed({buf.data(), *n}, kPgw, now);
    gtp::v2::Message to_sgw;
    if (!to_sgw.decode(w.egress.bytes())) die("relayed creation answer");
    auto pgw_fteid = gtp::v2::readFirst<gtp::v2::FTeid>(to_sgw, 1);
    if (!pgw_fteid) die("the proxy's PGW F-TEID");
    access_teid[i] = pgw_fteid->teid;
  }
  if (w.sessions.active() != kSessions) die("sessions not all created");

  // The templates, patched per transaction (the proxy patches in place).
  std::vector<std::vector<uint8_t>> requests(kSessions), responses(kSessions);
  for (uint32_t i = 0; i < kSessions; ++i) {
    peer::ModifyBearerRequestArgs m;
    m.header_teid = access_teid[i];
    m.index = i;
    m.ids = &ids;
    m.sgw_addr = peer::IpAddress(0x7f00000b);
    auto n = peer::buildModifyBearerRequest(m, buf);
    if (!n) die("Modify Bearer Request");
    requests[i].assign(buf.data(), buf.data() + *n);
    n = peer::buildModifyBearerResponse(0, gateway_teid[i], peer::kCauseAccepted, peer::kDefaultEbi, buf);
    if (!n) die("Modify Bearer Response");
    responses[i].assign(buf.data(), buf.data() + *n);
  }
  std::array<uint8_t, 2048> slot{};
  uint32_t sequence = 1'000'000;
  uint64_t i = 0;
  for (auto _ : state) {
    const uint32_t s = static_cast<uint32_t>(i++ % kSessions);
    // 300 µs apart: the answers kept for retransmissions (T3 x (N3 + 1), 9 s)
    // stay within the transaction table, as at the rate a worker is sized for.
    now += 300'000;
    const auto& rq = requests[s];
    std::memcpy(slot.data(), rq.data(), rq.size());
    gtp::v2::patchSequenceNumber({slot.data(), rq.size()}, (sequence++) & 0x7fffff);
    w.feed({slot.data(), rq.size()}, kSgw, now);
    // The PGW answers the translated request with the proxy's number.
    const auto out = w.egress.bytes();
    const uint32_t proxy_sequence = (uint32_t{out[8]} << 16) | (uint32_t{out[9]} << 8) | out[10];
    const auto& rs = responses[s];
    std::memcpy(slot.data(), rs.data(), rs.size());
    gtp::v2::patchSequenceNumber({slot.data(), rs.size()}, proxy_sequence);
    w.feed({slot.data(), rs.size()}, kPgw, now);
    if ((i & 0xff) == 0) w.proxy->tick(now);
  }
  const auto completed = w.header->counters.transactions_completed.load();
  if (completed < kSessions + static_cast<uint64_t>(state.iterations())) {
    std::fprintf(stderr, "completed %llu, unmatched %llu, ctx nf %llu, rejections %llu, started %llu\n",
                 (unsigned long long)completed, (unsigned long long)w.header->counters.responses_unmatched.load(),
                 (unsigned long long)w.header->counters.context_not_found.load(),
                 (unsigned long long)w.header->counters.rejections_sent.load(),
                 (unsigned long long)w.header->counters.transactions_started.load());
    die("transactions were not all completed");
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["sessions"] = static_cast<double>(w.sessions.active());
}
}  // namespace

// --iterations=N runs exactly N transactions (for callgrind: the difference
// of two counts over the difference of their N is the cost of one, the
// attach phase and the process's start subtracted).
int main(int argc, char** argv) {
  long iterations = 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--iterations=", 13) == 0) {
      iterations = std::atol(argv[i] + 13);
    } else {
      args.push_back(argv[i]);
    }
  }
  auto* b = benchmark::RegisterBenchmark("ModifyBearerTransaction", ModifyBearerTransaction);
  if (iterations > 0) b->Iterations(iterations);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
