// A third party's view of the proxy's traffic: tshark captures a short
// attach / modify / detach run on the loopback interface, then decodes the
// capture. No frame may be malformed or carry a warning or error, and every
// GTPv2 message the proxy sent must name the proxy in its control-plane
// F-TEIDs (S5/S8 SGW and PGW GTP-C, interface types 6 and 7) while the
// user-plane ones (types 4 and 5) keep the emulator's addresses.
//
// tshark is part of what the suite installs (tools/setup.sh): without it the
// test fails, it does not skip.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/fixture.h"
#include "tests/integration/raw_gtp.h"
#include "tests/support/udp.h"

namespace gtpcp::integration {
namespace {

using namespace std::chrono_literals;
using testing::TestGroup;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, separator);) out.push_back(item);
  return out;
}

TEST_F(DataPathTest, TsharkFindsNoMalformedFrameAndProxyAddressOnlyInControlPlaneFteids) {
  const std::string tshark = testing::findOnPath("tshark");
  ASSERT_FALSE(tshark.empty()) << "tshark is not installed: the integration suite needs it (Debian package "
                                  "tshark, installed by tools/setup.sh --test)";

  testing::GroupOptions o;
  o.workers = 2;
  o.routing_yaml = "version: 1\npools:\n  internet:\n    gateways:\n      - {name: a, address: " + ip(21) +
                   "}\n      - {name: b, address: " + ip(22) + "}\nrules:\n  - {name: default, pool: internet}\n"
                   // Echo stays in the capture, but the gateways, which only exist
                   // while the emulator runs, are not marked down while tshark
                   // starts (its first start on a fresh machine takes seconds).
                   "health_check: {interval_ms: 1000, misses: 100}\n";
  TestGroup& g = startGroup(o);
  ASSERT_FALSE(HasFailure());
  const std::string pcap = g.dir().file("capture.pcapng");
  const std::string capture_log = g.dir().file("tshark.log");

  // The capture, bounded in time, of everything to or from the proxy, with
  // a kernel buffer large enough for the whole run.
  testing::Child capture = testing::Child::spawn(
      {tshark, "-i", "lo", "-f", "udp and host " + proxy(), "-B", "32", "-w", pcap, "-a", "duration:120", "-q"},
      capture_log);

  // The tshark decode of the capture so far, `fields` of the frames matching
  // `filter` (stdout only: tshark warns on stderr when run as root); nullopt
  // when tshark fails. `live`: the file is still being written, so its last
  // packet may be cut short, which tshark reports with a failing status after
  // it printed every whole frame: those are taken.
  auto read = [&](const std::string& filter, const std::vector<std::string>& fields,
                  bool live = false) -> std::optional<std::string> {
    std::vector<std::string> argv{tshark, "-r", pcap, "-Y", filter, "-T", "fields", "-E", "separator=/t", "-E",
                                  "occurrence=a", "-E", "aggregator=,"};
    for (const auto& f : fields) {
      argv.push_back("-e");
      argv.push_back(f);
    }
    auto out = testing::runSeparately(argv, 60s);
    if (!out || (out->status != 0 && !live)) return std::nullopt;
    return out->text;
  };

  // Markers: Echo exchanges of the test's own socket with the proxy. The
  // capture is live once one of them is in the file (tshark says "Capturing
  // on" a little before it is), and complete up to the run's end once the
  // last one is.
  testing::UdpSocket marker(net_.addr(30), 0);
  uint32_t marker_sequence = 0x0a0000;
  auto echo = [&] {
    const uint32_t sequence = ++marker_sequence;
    return marker.sendTo(net_.addr(kProxyHost), 2123, echoRequest(sequence)) && marker.receive(5s).has_value();
  };
  auto markerSeen = [&](uint32_t sequence) {
    return !read("gtpv2.seq == " + std::to_string(sequence) + " && ip.src == " + proxy(), {"frame.number"}, true)
                .value_or("")
                .empty();
  };
  const bool live = testing::waitUntil(
      [&] {
        if (!capture.running()) return false;
        if (!echo()) return false;
        return testing::readFile(capture_log).find("Capturing on") != std::string::npos &&
               markerSeen(marker_sequence);
      },
      30s, 50ms);
  note("---- tshark capture log\n" + testing::readFile(capture_log));
  ASSERT_TRUE(live) << "tshark did not start capturing";

  constexpr unsigned kSubscribers = 300;
  const auto r = runPeer({"--proxy", proxy(), "--sgw", net_.list({11, 12}), "--pgw", net_.list({21, 22}),
                          "--subscribers", std::to_string(kSubscribers), "--modify", "1", "--rate", "1000",
                          "--duration", "30", "--cycles", "1"},
                         60s);
  ASSERT_TRUE(r.ok()) << "the emulator's run failed";

  ASSERT_TRUE(echo()) << "no Echo Response to the end marker";
  const uint32_t last = marker_sequence;
  ASSERT_TRUE(testing::waitUntil([&] { return markerSeen(last); }, 20s, 200ms))
      << "tshark did not write the end marker";
  capture.kill(SIGINT);
  EXPECT_TRUE(capture.wait(10s).has_value()) << "tshark did not stop on SIGINT";
  capture.stop();
  note("---- tshark capture log at the end\n" + testing::readFile(capture_log));

  // No malformed frame, no expert warning or error.
  const auto bad = read("_ws.malformed || _ws.expert.severity >= 6291456",
                        {"frame.number", "ip.src", "ip.dst", "gtpv2.message_type", "_ws.expert.message"});
  ASSERT_TRUE(bad) << "tshark -r " << pcap << " failed";
  EXPECT_TRUE(bad->empty()) << "frames tshark flags:\n" << *bad;

  // Every GTPv2 message the proxy sent: control-plane F-TEIDs name it,
  // user-plane ones the emulator's nodes.
  const std::set<std::string> sgws{ip(11), ip(12)}, pgws{ip(21), ip(22)};
  // Echo aside: the end marker's answers and the proxy's health checks.
  const auto sent = read("gtpv2 && gtpv2.message_type > 2 && ip.src == " + proxy(),
                         {"frame.number", "ip.dst", "gtpv2.message_type", "gtpv2.f_teid_interface_type",
                          "gtpv2.f_teid_ipv4"});
  ASSERT_TRUE(sent) << "tshark -r " << pcap << " failed";
  std::size_t messages = 0, by_type[8] = {};
  for (const auto& line : split(*sent, '\n')) {
    if (line.empty()) continue;
    ++messages;
    const auto cols = split(line, '\t');
    ASSERT_GE(cols.size(), 3u) << line;
    const std::vector<std::string> types = cols.size() > 3 ? split(cols[3], ',') : std::vector<std::string>{};
    const std::vector<std::string> addrs = cols.size() > 4 ? split(cols[4], ',') : std::vector<std::string>{};
    ASSERT_EQ(types.size(), addrs.size()) << "an F-TEID without IPv4 address in frame " << line;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const int type = std::stoi(types[i]);
      ASSERT_TRUE(type >= 4 && type <= 7) << "unexpected F-TEID interface type in frame " << line;
      ++by_type[type];
      if (type == 6 || type == 7) {
        EXPECT_EQ(addrs[i], proxy()) << "control-plane F-TEID (type " << type << ") not the proxy's in frame " << line;
      } else if (type == 4) {
        EXPECT_TRUE(sgws.count(addrs[i])) << "S5/S8-U SGW F-TEID not an SGW's in frame " << line;
      } else {
        EXPECT_TRUE(pgws.count(addrs[i])) << "S5/S8-U PGW F-TEID not a PGW's in frame " << line;
      }
    }
  }
  // Each subscriber's transactions (create, modify, delete) cross the proxy
  // once each way: the proxy sent two messages for each.
  if (r.value("/retransmissions") == 0) {
    EXPECT_EQ(messages, 2 * 3 * kSubscribers) << "frames missing from the capture?";
  }
  EXPECT_EQ(by_type[6], kSubscribers) << "Create Session Requests toward the PGWs";
  EXPECT_EQ(by_type[7], kSubscribers) << "Create Session Responses toward the SGWs";
  EXPECT_EQ(by_type[5], kSubscribers);
  EXPECT_EQ(by_type[4], 2 * kSubscribers) << "Create Session and Modify Bearer Requests";
}

}  // namespace
}  // namespace gtpcp::integration
