// GTPv1-C on Gn/Gp with real osmocom peers (Debian's osmo-ggsn and sgsnemu,
// ../shared/PEERS.md): sgsnemu -> gtpcp -> two osmo-ggsn in one pool. The
// test writes each GGSN's configuration in its own directory, on the test's
// /24, with a tun device of its own (osmo-ggsn has no tun-less mode: root
// and /dev/net/tun are needed), starts and stops every process by PID.
//
// What it proves: 1,000 PDP contexts created and deleted through the proxy
// in bursts (sgsnemu sends all of its contexts at once), split over the two
// GGSNs, which see the proxy as their SGSN while the user plane names
// sgsnemu; Echo both ways; the contexts in Redis with their v1 parameters;
// a GGSN restart (new Recovery) detected and its contexts removed, with the
// SGSN told; and the Create PDP Context Request that crashes osmo-ggsn
// 1.9.0 refused by the proxy and never forwarded.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "common/gtp/v1/message.h"
#include "common/gtp/v1/ies.h"
#include "tests/integration/fixture.h"
#include "tests/support/redis.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using testing::Child;

constexpr uint8_t kGgsnHosts[] = {41, 42};
constexpr uint8_t kSgsnHosts[] = {31, 32, 33, 34};
constexpr int kContextsPerSgsn = 250;

bool fileExists(const char* path) { return ::access(path, X_OK) == 0; }

// Lines of `text` containing `needle`.
int countLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// One osmo-ggsn on host `host` of the test's /24: GTP-C and GTP-U there,
// its VTY (telnet, no login) there on 4260.
class OsmoGgsn {
 public:
  OsmoGgsn(const testing::Subnet& net, uint8_t host, int index, const std::string& dir)
      : ip_(net.ip(host)), dir_(dir), name_("ggsn" + std::to_string(index)) {
    // A tun device name of its own (15 characters at most), and an address
    // pool of its own.
    tun_ = "gt" + std::to_string(net.x) + "x" + std::to_string(net.y) + "x" + std::to_string(index);
    const std::string pool = "100." + std::to_string(64 + (net.y % 60)) + "." + std::to_string(index * 16) + ".0/20";
    std::ofstream cfg(dir_ + "/ggsn.cfg");
    cfg << "log stderr\n logging filter all 1\n logging color 0\n logging print category 1\n logging timestamp 1\n"
           " logging level ggsn notice\n logging level lgtp notice\n"
        << "line vty\n no login\n bind " << ip_ << "\nctrl\n bind " << ip_ << "\n"
        << "ggsn " << name_ << "\n gtp state-dir " << dir_ << "\n gtp bind-ip " << ip_ << "\n"
        // Echo Requests to its peers (the proxy) every second: below the
        // 60 s TS 29.060 asks for, which osmo-ggsn allows for tests.
        << " echo-interval 1\n"
        << " apn internet\n  gtpu-mode tun\n  tun-device " << tun_ << "\n  type-support v4\n"
        << "  ip prefix dynamic " << pool << "\n  ip dns 0 192.0.2.53\n  ip ifconfig " << pool
        << "\n  no shutdown\n default-apn internet\n no shutdown ggsn\n";
  }
  ~OsmoGgsn() { stop(); }

  // Starts it (its Recovery: one more than the last run in this directory)
  // and waits until its GTP-C socket is bound.
  bool start() {
    child_ = Child::spawn({"/usr/bin/osmo-ggsn", "-c", dir_ + "/ggsn.cfg"}, dir_ + "/ggsn.log");
    return testing::waitUntil([&] { return udpPortTaken(ip_, 2123); }, 5s);
  }
  void stop() {
    if (child_.pid() > 0 && child_.running()) child_.stop(5s);
    child_ = Child();
    run({"/usr/sbin/ip", "link", "del", tun_});
  }
  bool running() { return child_.pid() > 0 && child_.running(); }
  // Dies without a word to its peers.
  void crash() {
    child_.kill(SIGKILL);
    (void)child_.wait(5s);
    child_ = Child();
    run({"/usr/sbin/ip", "link", "del", tun_});
  }

  // A VTY command's output.
  std::string vty(const std::string& command) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(4260);
    ::inet_pton(AF_INET, ip_.c_str(), &a.sin_addr);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      timeval tv{0, 300'000};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      auto drain = [&](std::string* keep) {
        char buf[65536];
        for (;;) {
          const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n <= 0) break;
          if (keep != nullptr) keep->append(buf, static_cast<std::size_t>(n));
        }
      };
      drain(nullptr);
      const std::string text = "enable\r\n" + command + "\r\n";
      (void)::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
      drain(&out);
    }
    ::close(fd);
    return out;
  }
  std::string contextsText() const { return vty("show pdp-context ggsn " + name_); }
  int contexts() const { return countLines(contextsText(), "IMSI: "); }

  const std::string& ip() const { return ip_; }
  std::string log() const { return testing::tailFile(dir_ + "/ggsn.log", 30); }

 private:
  static void run(const std::vector<std::string>& argv) { (void)testing::run(argv, 5s); }
  std::string ip_, dir_, name_, tun_;
  Child child_;
};

// One sgsnemu: `contexts` Create PDP Context Requests in one burst, IMSIs
// imsi + 10 n; SIGTERM deletes them all, then it exits.
class Sgsnemu {
 public:
  Sgsnemu(const std::string& local, const std::string& remote, int contexts, const std::string& imsi,
          const std::string& dir)
      : dir_(dir) {
    child_ = Child::spawn({"/usr/bin/stdbuf", "-oL", "/usr/bin/sgsnemu", "-l", local, "-r", remote, "--contexts",
                           std::to_string(contexts), "--imsi", imsi, "--statedir", dir_, "--timelimit", "120"},
                          dir_ + "/sgsnemu.log");
  }
  ~Sgsnemu() {
    if (child_.pid() > 0 && child_.running()) child_.stop(1s);
  }
  std::string log() const { return testing::readFile(dir_ + "/sgsnemu.log"); }
  int created() const { return countLines(log(), "Received create PDP context response"); }
  int deleted() const { return countLines(log(), "Received delete PDP context response. Cause value: 128"); }
  // SIGTERM: sgsnemu sends a Delete PDP Context Request for every context
  // it holds. It exits some 20 s later (its select() timeout), so once the
  // deletions are answered it is stopped. False when fewer than `expected`
  // (default: every context created) were answered within 15 s.
  bool terminate(std::optional<int> expected_deletions = std::nullopt) {
    const int expected = expected_deletions.value_or(created());
    child_.kill(SIGTERM);
    const bool answered = testing::waitUntil([&] { return deleted() >= expected; }, 15s);
    child_.stop(100ms);
    return answered;
  }

 private:
  std::string dir_;
  Child child_;
};

class OsmoInteropTest : public DataPathTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "osmo-ggsn needs root for its tun device";
    ASSERT_TRUE(fileExists("/usr/bin/osmo-ggsn") && fileExists("/usr/bin/sgsnemu"))
        << "osmo-ggsn and sgsnemu are missing: tools/setup.sh --test installs them";
    net_ = testing::freeSubnet({kProxyHost, 31, 32, 33, 34, 41, 42});
  }

  void TearDown() override {
    if (HasFailure()) {
      for (auto& g : ggsns_) note("osmo-ggsn " + g->ip() + " log:\n" + g->log());
      for (std::size_t i = 0; i < sgsn_dirs_.size(); ++i)
        note("sgsnemu " + std::to_string(i) + " log tail:\n" + testing::tailFile(sgsn_dirs_[i]->file("sgsnemu.log"), 15));
    }
    sgsns_.clear();
    ggsns_.clear();
    DataPathTest::TearDown();
  }

  void startGgsns(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      ggsn_dirs_.push_back(std::make_unique<testing::TempDir>());
      ggsns_.push_back(std::make_unique<OsmoGgsn>(net_, kGgsnHosts[i], static_cast<int>(i + 1), ggsn_dirs_.back()->path()));
      ASSERT_TRUE(ggsns_.back()->start()) << "osmo-ggsn on " << ggsns_.back()->ip() << " did not start:\n"
                                          << ggsns_.back()->log();
    }
  }

  // The group: one GTPv1 pool of the GGSNs, health checks every second,
  // sessions in an embedded Redis.
  testing::TestGroup& startProxy(std::size_t ggsns) {
    std::string routing = "version: 1\npools:\n  gn:\n    gtp_version: 1\n    gateways:\n";
    for (std::size_t i = 0; i < ggsns; ++i)
      routing += "      - {name: ggsn" + std::to_string(i + 1) + ", address: " + ip(kGgsnHosts[i]) + "}\n";
    routing += "rules:\n  - {name: gn, pool: gn}\nhealth_check: {interval_ms: 1000, misses: 3}\n";
    testing::GroupOptions o;
    o.workers = 2;
    o.routing_yaml = routing;
    o.storage_yaml = "  mode: embedded\n  embedded_port: " + std::to_string(testing::freeTcpPort()) + "\n";
    return startGroup(o);
  }

  Sgsnemu& startSgsn(std::size_t i, int contexts, const std::string& imsi) {
    sgsn_dirs_.push_back(std::make_unique<testing::TempDir>());
    sgsns_.push_back(std::make_unique<Sgsnemu>(ip(kSgsnHosts[i]), proxy(), contexts, imsi, sgsn_dirs_.back()->path()));
    return *sgsns_.back();
  }

  std::vector<std::unique_ptr<testing::TempDir>> ggsn_dirs_, sgsn_dirs_;
  std::vector<std::unique_ptr<OsmoGgsn>> ggsns_;
  std::vector<std::unique_ptr<Sgsnemu>> sgsns_;
};

TEST_F(OsmoInteropTest, AThousandContextsInBurstsThroughTwoGgsnsAreCreatedAndDeleted) {
  startGgsns(2);
  ASSERT_FALSE(HasFailure());
  testing::TestGroup& g = startProxy(2);
  ASSERT_FALSE(HasFailure());

  // Four SGSNs, 250 contexts each, all sent at once.
  for (std::size_t i = 0; i < std::size(kSgsnHosts); ++i)
    startSgsn(i, kContextsPerSgsn, "9017" + std::to_string(i + 1) + "0000000001");
  const int total = kContextsPerSgsn * static_cast<int>(std::size(kSgsnHosts));
  const bool all_created = testing::waitUntil(
      [&] {
        int n = 0;
        for (auto& s : sgsns_) n += s->created();
        return n == total;
      },
      30s);
  int created = 0;
  for (auto& s : sgsns_) created += s->created();
  EXPECT_TRUE(all_created) << created << " of " << total << " contexts created";
  EXPECT_EQ(created, total);

  // The GGSNs hold them all between them, each its share, each with the
  // proxy as its SGSN for signalling and sgsnemu for user traffic.
  const int on_first = ggsns_[0]->contexts(), on_second = ggsns_[1]->contexts();
  EXPECT_EQ(on_first + on_second, total);
  EXPECT_GT(on_first, total / 4);
  EXPECT_GT(on_second, total / 4);
  const std::regex control(R"( Control: [0-9.]+:[0-9a-f]+ <-> ([0-9.]+):[0-9a-f]+)");
  const std::regex data(R"( Data: [0-9.]+:[0-9a-f]+ <-> ([0-9.]+):[0-9a-f]+)");
  for (auto& ggsn : ggsns_) {
    const std::string text = ggsn->contextsText();
    int controls = 0, datas = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), control); it != std::sregex_iterator(); ++it) {
      ++controls;
      EXPECT_EQ((*it)[1].str(), proxy()) << "the GGSN's SGSN for signalling is the proxy";
      if (HasFailure()) break;
    }
    for (auto it = std::sregex_iterator(text.begin(), text.end(), data); it != std::sregex_iterator(); ++it) {
      ++datas;
      EXPECT_NE((*it)[1].str(), proxy()) << "user traffic goes straight to sgsnemu";
      if (HasFailure()) break;
    }
    EXPECT_GT(controls, 0);
    EXPECT_EQ(controls, datas);
  }
  nlohmann::json status = g.status();
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.sessions_created"), static_cast<uint64_t>(total));
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.rejections_sent"), 0u);

  // Echo both ways: the GGSNs' Echo Requests answered by the forwarder, the
  // proxy's GTPv1 health checks answered by the GGSNs.
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        status = g.status();
        bool answered = !status["gateways"].empty();
        for (const auto& gw : status["gateways"]) answered &= gw["echo_answered"].get<uint64_t>() > 0 && gw["up"].get<bool>();
        return answered && g.counter("forwarder", "forwarder.echo_answered") > 0;
      },
      5s))
      << status["gateways"].dump();

  // A context as kept in Redis, with its GTPv1 parameters.
  auto found = g.gtpcp({"session", "901710000000001"});
  ASSERT_EQ(found.status, 0) << found.text;
  const nlohmann::json records = nlohmann::json::parse(found.text, nullptr, false);
  ASSERT_TRUE(records.is_array() && records.size() == 1) << found.text;
  EXPECT_EQ(records[0]["gtp_version"], 1);
  EXPECT_TRUE(records[0].contains("end_user_address") && records[0]["end_user_address"].contains("ipv4")) << found.text;
  EXPECT_EQ(records[0]["apn"], "internet");

  // sgsnemu deletes them all on SIGTERM.
  for (auto& s : sgsns_) EXPECT_TRUE(s->terminate()) << "deletions unanswered";
  int deleted = 0;
  for (auto& s : sgsns_) deleted += s->deleted();
  EXPECT_EQ(deleted, total);
  EXPECT_EQ(ggsns_[0]->contexts() + ggsns_[1]->contexts(), 0);
  status = g.status();
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.sessions_deleted"), static_cast<uint64_t>(total));
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.sessions_active"), 0u);
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.transactions_expired"), 0u);
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.responses_unmatched"), 0u);
  for (auto& ggsn : ggsns_) EXPECT_TRUE(ggsn->running()) << "osmo-ggsn " << ggsn->ip() << " died";
}

TEST_F(OsmoInteropTest, AGgsnRestartRemovesItsContextsAndTellsTheSgsn) {
  startGgsns(2);
  ASSERT_FALSE(HasFailure());
  testing::TestGroup& g = startProxy(2);
  ASSERT_FALSE(HasFailure());
  Sgsnemu& sgsn = startSgsn(0, 100, "901750000000001");
  ASSERT_TRUE(testing::waitUntil([&] { return sgsn.created() == 100; }, 20s)) << sgsn.created() << " of 100";
  const int on_first = ggsns_[0]->contexts();
  ASSERT_GT(on_first, 0);
  // Known up with its Recovery before the restart.
  ASSERT_TRUE(testing::waitUntil([&] { return !g.status()["gateways"][0]["recovery"].is_null(); }, 5s));

  // The GGSN crashes (SIGKILL: a SIGTERM would have it delete its contexts
  // first) and starts again from its state directory: Recovery + 1, no
  // contexts.
  ggsns_[0]->crash();
  ASSERT_TRUE(ggsns_[0]->start()) << ggsns_[0]->log();
  const bool removed = testing::waitUntil(
      [&] {
        return testing::TestGroup::workerSum(g.status(), "worker.restart_sessions_removed") ==
               static_cast<uint64_t>(on_first);
      },
      10s);
  nlohmann::json status = g.status();
  EXPECT_TRUE(removed) << testing::TestGroup::workerSum(status, "worker.restart_sessions_removed") << " of "
                       << on_first;
  EXPECT_EQ(status["gateways"][0]["restarts"], 1);
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.sessions_active"), static_cast<uint64_t>(100 - on_first));
  // The SGSN was told (Delete PDP Context Request, Teardown) and answered.
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return testing::TestGroup::workerSum(g.status(), "worker.own_requests_answered") ==
               static_cast<uint64_t>(on_first);
      },
      5s))
      << testing::TestGroup::workerSum(g.status(), "worker.own_requests_answered");
  EXPECT_EQ(ggsns_[1]->contexts(), 100 - on_first) << "the other GGSN keeps its own";
  // What it still holds is on the other GGSN (the proxy's Delete PDP Context
  // Requests ended the rest).
  EXPECT_TRUE(sgsn.terminate(100 - on_first));
  EXPECT_EQ(sgsn.deleted(), 100 - on_first);
  EXPECT_EQ(ggsns_[1]->contexts(), 0);
}

TEST_F(OsmoInteropTest, TheCreationThatCrashesOsmoGgsnIsRefusedAndNeverForwarded) {
  startGgsns(1);
  ASSERT_FALSE(HasFailure());
  testing::TestGroup& g = startProxy(1);
  ASSERT_FALSE(HasFailure());
  // ../shared/peers/gtpv1/ggsn_crash_gsnaddr_len0.hex: both GSN Addresses of length 0.
  const std::string hex =
      "3210004500000000000200000200010100000070f70e010ffd100000111111000022221405800002f121830009086"
      "96e7465726e6574850000850000860007913316325476f887000401000000";
  std::vector<uint8_t> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  testing::UdpSocket sock(net_.addr(31), 2123);
  ASSERT_TRUE(sock.sendTo(net_.addr(kProxyHost), 2123, bytes));
  auto r = sock.receive(3s);
  ASSERT_TRUE(r.has_value()) << "no answer";
  gtp::v1::Message m;
  ASSERT_TRUE(m.decode(r->bytes));
  EXPECT_EQ(m.messageType(), gtp::v1::MessageType::kCreatePdpContextResponse);
  auto cause = gtp::v1::readNth<gtp::v1::CauseIe>(m);
  ASSERT_TRUE(cause);
  EXPECT_EQ(cause->value, 201) << "Mandatory IE incorrect";
  EXPECT_EQ(m.header().sequence_number, 2);
  // Never forwarded: the worker sent one datagram (the answer) and opened
  // no transaction toward the GGSN.
  const nlohmann::json status = g.status();
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.v1_gsn_address_invalid"), 1u);
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.datagrams_sent"), 1u);
  EXPECT_EQ(testing::TestGroup::workerSum(status, "worker.transactions_started"), 0u);
  // osmo-ggsn lives, holds nothing, and still serves a real SGSN.
  EXPECT_TRUE(ggsns_[0]->running());
  EXPECT_EQ(ggsns_[0]->contexts(), 0);
  Sgsnemu& sgsn = startSgsn(1, 3, "901760000000001");
  EXPECT_TRUE(testing::waitUntil([&] { return sgsn.created() == 3; }, 10s)) << sgsn.log();
  EXPECT_TRUE(sgsn.terminate());
  EXPECT_EQ(sgsn.deleted(), 3);
}

}  // namespace
}  // namespace gtpcp::integration
