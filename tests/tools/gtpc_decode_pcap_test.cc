// gtpc-decode's capture reader: the bundled third-party captures (frame
// counts from tests/data/pcap/SOURCES.md, payloads from the vectors), and
// hand-made captures for every link layer, IP variant and damaged frame.
#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/gtpc_decode_support.h"
#include "tools/gtpc_decode/cli.h"
#include "tools/gtpc_decode/json.h"
#include "tools/gtpc_decode/pcap_source.h"

namespace gtpcp::gtpc_decode {
namespace {

using ::testing::HasSubstr;
using testing::bytesOf;
using testing::dataPath;
using testing::PcapWriter;
using testing::readJsonLines;
using testing::TempDir;
using Bytes = std::vector<uint8_t>;

// What the reader yielded, copied out (payload spans die with the next call).
struct Item {
  bool ok = false;
  uint64_t frame = 0;
  Endpoints endpoints;
  Bytes payload;
  FrameError error;
  std::string src() const { return formatEndpoint(endpoints.src, endpoints.src_port); }
  std::string dst() const { return formatEndpoint(endpoints.dst, endpoints.dst_port); }
};

struct Capture {
  std::vector<Item> items;
  PcapSource::Stats stats;
};

Capture readAll(const std::string& path, uint16_t port = kGtpcPort) {
  Capture c;
  auto source = PcapSource::open(path, port);
  EXPECT_TRUE(source.has_value()) << (source ? "" : source.error());
  if (!source) return c;
  while (auto next = source->next()) {
    Item item;
    if (*next) {
      item.ok = true;
      item.frame = (*next)->frame;
      item.endpoints = (*next)->endpoints;
      item.payload.assign((*next)->payload.begin(), (*next)->payload.end());
    } else {
      item.frame = next->error().frame;
      item.error = next->error();
    }
    c.items.push_back(std::move(item));
  }
  c.stats = source->stats();
  return c;
}

std::vector<std::string> bundledCaptures() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dataPath("pcap"))) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".pcap") || name.ends_with(".pcapng")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The SOURCES.md table: file -> (packets, {"v2 create session request" -> count}).
struct SourceRow {
  uint64_t packets = 0;
  std::map<std::string, int> messages;
};
std::map<std::string, SourceRow> sourcesTable() {
  std::map<std::string, SourceRow> rows;
  std::ifstream in(dataPath("pcap/SOURCES.md"));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| ") || line.find(".pcap") == std::string::npos) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
    if (cells.size() < 7) continue;
    SourceRow row;
    row.packets = std::stoull(cells[5]);
    std::stringstream frames(cells[6]);
    for (std::string entry; std::getline(frames, entry, ';');) {
      entry = trim(entry);
      const auto x = entry.rfind(" x");
      row.messages[lower(entry.substr(0, x))] += std::stoi(entry.substr(x + 2));
    }
    rows[cells[0]] = row;
  }
  return rows;
}

TEST(GtpcDecodePcap, BundledCapturesMatchTheSourcesTable) {
  const auto table = sourcesTable();
  const auto files = bundledCaptures();
  ASSERT_EQ(files.size(), 7u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    ASSERT_TRUE(table.count(file)) << "no row in SOURCES.md";
    const SourceRow& row = table.at(file);
    const Capture c = readAll(dataPath("pcap/" + file));
    EXPECT_EQ(c.stats.frames, row.packets);
    EXPECT_EQ(c.stats.errors, 0u);
    EXPECT_EQ(c.stats.fragments_skipped, 0u);
    std::map<std::string, int> seen;
    int total = 0;
    for (const Item& item : c.items) {
      ASSERT_TRUE(item.ok) << "frame " << item.frame << ": " << item.error.detail;
      const Json j = decodeDatagram(item.payload);
      ASSERT_FALSE(isError(j)) << "frame " << item.frame << ": " << j.dump();
      EXPECT_THAT(j.dump(), ::testing::Not(HasSubstr("value_error"))) << "frame " << item.frame;
      ++seen[lower("v" + std::to_string(j["version"].get<int>()) + " " + j["message_name"].get<std::string>())];
      ++total;
    }
    int expected_total = 0;
    for (const auto& [name, count] : row.messages) expected_total += count;
    EXPECT_EQ(total, expected_total);
    EXPECT_EQ(seen, row.messages);
  }
}

TEST(GtpcDecodePcap, PayloadsEqualTheVectorsCutFromTheSameFrames) {
  const auto files = bundledCaptures();
  int checked = 0;
  for (const char* vectors : {"vectors/gtpv2.jsonl", "vectors/gtpv1.jsonl"}) {
    for (const auto& record : readJsonLines(dataPath(vectors))) {
      if (!record.contains("origin") || !record["origin"].is_object() ||
          !record["origin"].contains("pcap_frame"))
        continue;
      const std::string source = record["source"];
      const auto file = std::find_if(files.begin(), files.end(), [&](const std::string& f) {
        return source.ends_with("/" + f);
      });
      if (file == files.end()) continue;
      const uint64_t frame = record["origin"]["pcap_frame"];
      SCOPED_TRACE(*file + " frame " + std::to_string(frame));
      const Capture c = readAll(dataPath("pcap/" + *file));
      const auto item = std::find_if(c.items.begin(), c.items.end(), [&](const Item& i) { return i.frame == frame; });
      ASSERT_NE(item, c.items.end());
      ASSERT_TRUE(item->ok);
      EXPECT_EQ(toHex(item->payload), record["hex"].get<std::string>());
      EXPECT_EQ(item->endpoints.src_port, record["ports"][0]);
      EXPECT_EQ(item->endpoints.dst_port, record["ports"][1]);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 21);
}

TEST(GtpcDecodePcap, TimestampsAndAddressesAsTsharkShowsThem) {
  const Capture c = readAll(dataPath("pcap/gtp_c.pcap"));
  ASSERT_EQ(c.items.size(), 4u);
  EXPECT_EQ(c.items[0].src(), "10.101.0.2:1024");
  EXPECT_EQ(c.items[0].dst(), "10.102.0.2:2123");
  // tshark: frame.time_epoch 1614767558.813421000
  auto source = PcapSource::open(dataPath("pcap/gtp_c.pcap"));
  ASSERT_TRUE(source.has_value());
  auto first = source->next();
  ASSERT_TRUE(first && *first);
  EXPECT_EQ(formatTimestamp((*first)->time), "2021-03-03T10:32:38.813421Z");
  EXPECT_EQ(formatTimestamp(Timestamp{0, 999999999}), "1970-01-01T00:00:00.999999Z");
}

// ---------------------------------------------------------------------------
// Hand-made frames.

// A GTPv2 Echo Request, Recovery 5.
const Bytes kEcho = bytesOf("40010009000001000300010005");

void put16(Bytes& b, std::size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

Bytes udp(uint16_t src_port, uint16_t dst_port, const Bytes& payload) {
  Bytes b(8);
  put16(b, 0, src_port);
  put16(b, 2, dst_port);
  put16(b, 4, static_cast<uint16_t>(8 + payload.size()));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

struct V4 {
  std::array<uint8_t, 4> src{192, 0, 2, 1};
  std::array<uint8_t, 4> dst{192, 0, 2, 2};
  uint8_t protocol = 17;
  uint16_t fragment = 0;    // flags and offset field
  std::size_t options = 0;  // 4-octet words of options
};
Bytes ipv4(const Bytes& payload, const V4& v = {}) {
  const std::size_t header = 20 + 4 * v.options;
  Bytes b(header, 0);
  b[0] = static_cast<uint8_t>(0x40 | (header / 4));
  put16(b, 2, static_cast<uint16_t>(header + payload.size()));
  put16(b, 6, v.fragment);
  b[8] = 64;
  b[9] = v.protocol;
  std::copy(v.src.begin(), v.src.end(), b.begin() + 12);
  std::copy(v.dst.begin(), v.dst.end(), b.begin() + 16);
  for (std::size_t i = 20; i < header; ++i) b[i] = 0x01;  // NOP options
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// `extensions`: (next-header value of the extension, its octets) in order.
Bytes ipv6(const Bytes& payload, const std::vector<std::pair<uint8_t, Bytes>>& extensions = {}) {
  Bytes b(40, 0);
  b[0] = 0x60;
  b[6] = extensions.empty() ? 17 : extensions[0].first;
  b[7] = 64;
  b[8] = 0x20, b[9] = 0x01, b[10] = 0x0d, b[11] = 0xb8, b[23] = 0x01;  // 2001:db8::1
  b[24] = 0x20, b[25] = 0x01, b[26] = 0x0d, b[27] = 0xb8, b[39] = 0x02;  // 2001:db8::2
  Bytes rest;
  for (std::size_t i = 0; i < extensions.size(); ++i) {
    Bytes e = extensions[i].second;
    e[0] = i + 1 < extensions.size() ? extensions[i + 1].first : 17;
    rest.insert(rest.end(), e.begin(), e.end());
  }
  rest.insert(rest.end(), payload.begin(), payload.end());
  put16(b, 4, static_cast<uint16_t>(rest.size()));
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

Bytes ethernet(uint16_t type, const Bytes& payload, const std::vector<uint16_t>& tags = {}) {
  Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
  for (uint16_t tpid : tags) {
    b.push_back(static_cast<uint8_t>(tpid >> 8));
    b.push_back(static_cast<uint8_t>(tpid));
    b.push_back(0x00);
    b.push_back(0x64);  // VLAN 100
  }
  b.push_back(static_cast<uint8_t>(type >> 8));
  b.push_back(static_cast<uint8_t>(type));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Capture readFrames(uint32_t link_type, const std::vector<Bytes>& frames, uint16_t port = kGtpcPort) {
  TempDir dir;
  PcapWriter w(link_type);
  for (const Bytes& f : frames) w.add(f);
  w.write(dir.file("t.pcap"));
  return readAll(dir.file("t.pcap"), port);
}

void expectEcho(const Capture& c, uint64_t frame, const std::string& src, const std::string& dst) {
  ASSERT_EQ(c.items.size(), 1u);
  const Item& item = c.items[0];
  ASSERT_TRUE(item.ok) << item.error.detail;
  EXPECT_EQ(item.frame, frame);
  EXPECT_EQ(item.payload, kEcho);
  EXPECT_EQ(item.src(), src);
  EXPECT_EQ(item.dst(), dst);
}

TEST(GtpcDecodePcapLinks, EthernetWithAnyNumberOfVlanTags) {
  const Bytes ip = ipv4(udp(40000, 2123, kEcho));
  expectEcho(readFrames(kLinkEthernet, {ethernet(0x0800, ip)}), 1, "192.0.2.1:40000", "192.0.2.2:2123");
  expectEcho(readFrames(kLinkEthernet, {ethernet(0x0800, ip, {0x8100})}), 1, "192.0.2.1:40000",
             "192.0.2.2:2123");
  expectEcho(readFrames(kLinkEthernet, {ethernet(0x0800, ip, {0x88a8, 0x8100})}), 1, "192.0.2.1:40000",
             "192.0.2.2:2123");
  expectEcho(readFrames(kLinkEthernet, {ethernet(0x0800, ip, {0x9100, 0x88a8, 0x8100})}), 1,
             "192.0.2.1:40000", "192.0.2.2:2123");
}

TEST(GtpcDecodePcapLinks, EthernetPaddingIsNotPayload) {
  Bytes frame = ethernet(0x0800, ipv4(udp(2123, 2123, kEcho)));
  frame.resize(frame.size() + 12, 0);  // trailer / padding after the IP datagram
  expectEcho(readFrames(kLinkEthernet, {frame}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
}

TEST(GtpcDecodePcapLinks, LinuxCookedV1AndV2) {
  const Bytes ip = ipv4(udp(2123, 2124, kEcho));
  Bytes sll(16, 0);
  sll[1] = 4;                    // sent by us
  sll[14] = 0x08, sll[15] = 0x00;  // protocol IPv4
  expectEcho(readFrames(kLinkLinuxSll, {concat(sll, ip)}), 1, "192.0.2.1:2123", "192.0.2.2:2124");

  Bytes sll2(20, 0);
  sll2[0] = 0x86, sll2[1] = 0xdd;  // protocol IPv6
  const Bytes ip6 = ipv6(udp(2123, 2123, kEcho));
  expectEcho(readFrames(kLinkLinuxSll2, {concat(sll2, ip6)}), 1, "[2001:db8::1]:2123", "[2001:db8::2]:2123");
}

TEST(GtpcDecodePcapLinks, RawIpUnderEveryLinkTypeNumber) {
  const Bytes ip4 = ipv4(udp(2123, 2123, kEcho));
  const Bytes ip6 = ipv6(udp(2123, 2123, kEcho));
  for (uint32_t link : {12u, 14u, 101u}) {
    SCOPED_TRACE(link);
    expectEcho(readFrames(link, {ip4}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
    expectEcho(readFrames(link, {ip6}), 1, "[2001:db8::1]:2123", "[2001:db8::2]:2123");
  }
  expectEcho(readFrames(228, {ip4}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
  expectEcho(readFrames(229, {ip6}), 1, "[2001:db8::1]:2123", "[2001:db8::2]:2123");
}

TEST(GtpcDecodePcapLinks, BsdLoopbackInBothByteOrders) {
  const Bytes ip4 = ipv4(udp(2123, 2123, kEcho));
  const Bytes ip6 = ipv6(udp(2123, 2123, kEcho));
  // DLT_NULL: the writer's byte order (little-endian here, big-endian there).
  expectEcho(readFrames(kLinkNull, {concat({2, 0, 0, 0}, ip4)}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
  expectEcho(readFrames(kLinkNull, {concat({0, 0, 0, 2}, ip4)}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
  expectEcho(readFrames(kLinkNull, {concat({30, 0, 0, 0}, ip6)}), 1, "[2001:db8::1]:2123",
             "[2001:db8::2]:2123");
  // DLT_LOOP: network byte order.
  expectEcho(readFrames(kLinkLoop, {concat({0, 0, 0, 2}, ip4)}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
  expectEcho(readFrames(kLinkLoop, {concat({0, 0, 0, 24}, ip6)}), 1, "[2001:db8::1]:2123",
             "[2001:db8::2]:2123");
}

TEST(GtpcDecodePcapIp, Ipv4OptionsAreSkippedByIhl) {
  V4 v;
  v.options = 3;
  expectEcho(readFrames(kLinkRaw, {ipv4(udp(2123, 2123, kEcho), v)}), 1, "192.0.2.1:2123", "192.0.2.2:2123");
}

TEST(GtpcDecodePcapIp, Ipv6ExtensionHeadersAreWalked) {
  const Bytes hop_by_hop = {0, 0, 1, 4, 0, 0, 0, 0};                            // PadN
  const Bytes routing = {0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 24 octets
  const Bytes destination = {0, 0, 1, 4, 0, 0, 0, 0};
  const Bytes atomic_fragment = {0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78};  // offset 0, M 0
  const Bytes ip6 = ipv6(udp(2123, 2123, kEcho),
                         {{0, hop_by_hop}, {43, routing}, {60, destination}, {44, atomic_fragment}});
  expectEcho(readFrames(kLinkIpv6, {ip6}), 1, "[2001:db8::1]:2123", "[2001:db8::2]:2123");
}

TEST(GtpcDecodePcapIp, FragmentsAreSkippedAndCounted) {
  const Bytes datagram = udp(2123, 2123, kEcho);
  V4 first;
  first.fragment = 0x2000;  // MF
  V4 second;
  second.fragment = 0x0003;  // offset 24 octets
  Bytes frag6 = {0, 0, 0, 1, 0, 0, 0, 1};  // offset 0, M 1
  const Capture c = readFrames(kLinkRaw, {ipv4(datagram, first), ipv4(Bytes(8, 0), second),
                                          ipv6(datagram, {{44, frag6}}), ipv4(datagram)});
  ASSERT_EQ(c.items.size(), 1u);
  EXPECT_EQ(c.items[0].frame, 4u);
  EXPECT_EQ(c.stats.fragments_skipped, 3u);
  EXPECT_EQ(c.stats.frames, 4u);
}

TEST(GtpcDecodePcapIp, OtherTrafficIsIgnoredAndFramesStillCount) {
  V4 tcp;
  tcp.protocol = 6;
  const Capture c = readFrames(kLinkEthernet, {
      ethernet(0x0806, Bytes(28, 0)),                       // ARP
      ethernet(0x0800, ipv4(Bytes(20, 0), tcp)),            // TCP
      ethernet(0x0800, ipv4(udp(3386, 3386, kEcho))),       // GTP' port
      ethernet(0x0800, ipv4(udp(2152, 2152, kEcho))),       // GTP-U
      ethernet(0x0800, ipv4(udp(2123, 50000, kEcho))),
  });
  ASSERT_EQ(c.items.size(), 1u);
  EXPECT_EQ(c.items[0].frame, 5u);
  EXPECT_EQ(c.stats.frames, 5u);
  EXPECT_EQ(c.stats.errors, 0u);
}

TEST(GtpcDecodePcapIp, PortIsConfigurable) {
  const Capture c = readFrames(kLinkRaw, {ipv4(udp(3386, 1000, kEcho)), ipv4(udp(2123, 2123, kEcho))}, 3386);
  ASSERT_EQ(c.items.size(), 1u);
  EXPECT_EQ(c.items[0].frame, 1u);
}

// ---------------------------------------------------------------------------
// Damaged frames: reported per frame, never read past the buffer.

TEST(GtpcDecodePcapDamage, TruncatedCaptureIsReportedAndReadingGoesOn) {
  const Bytes whole = ethernet(0x0800, ipv4(udp(2123, 2123, kEcho)));
  const Bytes cut(whole.begin(), whole.end() - 5);
  TempDir dir;
  PcapWriter w(kLinkEthernet);
  w.add(cut, static_cast<uint32_t>(whole.size())).add(Bytes(whole.begin(), whole.begin() + 10),
                                                      static_cast<uint32_t>(whole.size()))
      .add(whole);
  w.write(dir.file("cut.pcap"));
  const Capture c = readAll(dir.file("cut.pcap"));
  ASSERT_EQ(c.items.size(), 3u);
  EXPECT_FALSE(c.items[0].ok);
  EXPECT_EQ(c.items[0].error.code, FrameErrc::kCaptureTruncated);
  EXPECT_EQ(c.items[0].error.frame, 1u);
  ASSERT_TRUE(c.items[0].error.endpoints.has_value());
  EXPECT_EQ(formatEndpoint(c.items[0].error.endpoints->src, c.items[0].error.endpoints->src_port),
            "192.0.2.1:2123");
  EXPECT_THAT(c.items[0].error.detail, HasSubstr("captured 50 of 55 octets"));
  EXPECT_FALSE(c.items[1].ok);
  EXPECT_EQ(c.items[1].error.code, FrameErrc::kCaptureTruncated);
  EXPECT_FALSE(c.items[1].error.endpoints.has_value());
  EXPECT_TRUE(c.items[2].ok);
  EXPECT_EQ(c.items[2].frame, 3u);
  EXPECT_EQ(c.stats.errors, 2u);

  const Json j = frameErrorJson(c.items[0].error);
  EXPECT_EQ(j["frame"], 1);
  EXPECT_EQ(j["error"], "capture_truncated");
  EXPECT_EQ(j["src"], "192.0.2.1:2123");
  EXPECT_EQ(j["time"], "2021-05-05T13:08:28.123456Z");
}

TEST(GtpcDecodePcapDamage, LengthsClaimingMoreThanTheFrame) {
  Bytes ip = ipv4(udp(2123, 2123, kEcho));
  Bytes short_frame(ip.begin(), ip.end() - 3);  // captured whole, but IP says 3 more
  Bytes bad_udp = ip;
  put16(bad_udp, 20 + 4, 4);  // UDP length 4
  Bytes long_udp = ip;
  put16(long_udp, 20 + 4, 200);  // UDP length beyond the IP payload
  Bytes bad_ihl = ip;
  bad_ihl[0] = 0x44;
  const Capture c = readFrames(kLinkRaw, {short_frame, bad_udp, long_udp, bad_ihl, Bytes{0x45, 0, 0}});
  ASSERT_EQ(c.items.size(), 5u);
  EXPECT_EQ(c.items[0].error.code, FrameErrc::kDatagramTruncated);
  EXPECT_EQ(c.items[1].error.code, FrameErrc::kInvalidHeader);
  EXPECT_EQ(c.items[2].error.code, FrameErrc::kInvalidHeader);
  EXPECT_EQ(c.items[3].error.code, FrameErrc::kInvalidHeader);
  EXPECT_EQ(c.items[4].error.code, FrameErrc::kHeaderTruncated);
  for (const Item& item : c.items) EXPECT_FALSE(item.ok);
}

TEST(GtpcDecodePcapDamage, EveryPrefixOfEveryLinkLayerIsSafe) {
  const Bytes ip4 = ipv4(udp(2123, 2123, kEcho));
  Bytes sll(16, 0);
  sll[14] = 0x08;
  Bytes sll2(20, 0);
  sll2[0] = 0x86, sll2[1] = 0xdd;
  const std::vector<std::pair<int, Bytes>> frames = {
      {kLinkEthernet, ethernet(0x0800, ip4, {0x88a8, 0x8100})},
      {kLinkLinuxSll, concat(sll, ip4)},
      {kLinkLinuxSll2, concat(sll2, ipv6(udp(2123, 2123, kEcho), {{0, Bytes{0, 0, 1, 4, 0, 0, 0, 0}}}))},
      {kLinkNull, concat({2, 0, 0, 0}, ip4)},
      {kLinkIpv6, ipv6(udp(2123, 2123, kEcho), {{44, Bytes{0, 0, 0, 0, 0, 0, 0, 1}}})},
  };
  for (const auto& [link, frame] : frames) {
    ASSERT_EQ(parseFrame(link, frame, static_cast<uint32_t>(frame.size()), kGtpcPort).kind,
              ParsedFrame::Kind::kDatagram);
    for (std::size_t n = 0; n < frame.size(); ++n) {
      // Its own allocation of exactly n octets: ASan catches any read past it.
      const Bytes prefix(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
      const ParsedFrame f = parseFrame(link, prefix, static_cast<uint32_t>(frame.size()), kGtpcPort);
      EXPECT_EQ(f.kind, ParsedFrame::Kind::kError) << "link " << link << " prefix " << n;
      EXPECT_EQ(f.error, FrameErrc::kCaptureTruncated) << "link " << link << " prefix " << n;
    }
  }
}

TEST(GtpcDecodePcapFiles, OpenErrorsNameTheFile) {
  TempDir dir;
  auto missing = PcapSource::open(dir.file("nope.pcap"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error(), HasSubstr(dir.file("nope.pcap")));

  std::ofstream(dir.file("text.pcap")) << "this is not a capture\n";
  auto text = PcapSource::open(dir.file("text.pcap"));
  ASSERT_FALSE(text.has_value());
  EXPECT_THAT(text.error(), HasSubstr(dir.file("text.pcap")));

  PcapWriter(147).add(Bytes(10, 0)).write(dir.file("user0.pcap"));  // LINKTYPE_USER0
  auto user = PcapSource::open(dir.file("user0.pcap"));
  ASSERT_FALSE(user.has_value());
  EXPECT_THAT(user.error(), HasSubstr(dir.file("user0.pcap")));
  EXPECT_THAT(user.error(), HasSubstr("unsupported link type 147"));
}

TEST(GtpcDecodePcapFiles, FileCutInTheMiddleOfARecord) {
  TempDir dir;
  const Bytes frame = ipv4(udp(2123, 2123, kEcho));
  PcapWriter w(kLinkRaw);
  w.add(frame).add(frame);
  const Bytes& whole = w.bytes();
  const Bytes file(whole.begin(), whole.end() - 7);  // the second record loses its last 7 octets
  std::ofstream(dir.file("cut.pcap"), std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  const Capture c = readAll(dir.file("cut.pcap"));
  ASSERT_EQ(c.items.size(), 2u);
  EXPECT_TRUE(c.items[0].ok);
  EXPECT_FALSE(c.items[1].ok);
  EXPECT_EQ(c.items[1].error.code, FrameErrc::kReadError);
  EXPECT_EQ(c.items[1].error.frame, 2u);
  EXPECT_FALSE(c.items[1].error.detail.empty());
}

}  // namespace
}  // namespace gtpcp::gtpc_decode
