#include "tests/gtp/tshark/pcap_writer.h"

#include <fstream>

namespace gtpcp::gtp::testing {

namespace {

void put16be(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

// pcap headers are in the writer's byte order; the magic number tells the
// reader which. Little-endian here, written octet by octet.
void put16le(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

void put32le(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

constexpr std::size_t kEthernetHeader = 14, kIpv4Header = 20, kUdpHeader = 8;

}  // namespace

uint16_t internetChecksum(std::span<const uint8_t> data) {
  uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < data.size(); i += 2)
    sum += (uint32_t{data[i]} << 8) | data[i + 1];
  if (data.size() % 2 != 0) sum += uint32_t{data.back()} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void PcapWriter::addUdp(std::span<const uint8_t> payload, uint16_t src_port, uint16_t dst_port) {
  std::vector<uint8_t> f;
  f.reserve(kEthernetHeader + kIpv4Header + kUdpHeader + payload.size());
  // Ethernet II: destination, source (locally administered), EtherType IPv4.
  for (uint8_t b : {0x02, 0x00, 0x00, 0x00, 0x00, 0x02}) f.push_back(b);
  for (uint8_t b : {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}) f.push_back(b);
  put16be(f, 0x0800);
  // IPv4 (RFC 791): version 4, IHL 5, total length, DF, TTL 64, UDP.
  const std::size_t ip_start = f.size();
  const auto total = static_cast<uint16_t>(kIpv4Header + kUdpHeader + payload.size());
  f.push_back(0x45);
  f.push_back(0x00);
  put16be(f, total);
  put16be(f, static_cast<uint16_t>(frames_.size() + 1));  // identification
  put16be(f, 0x4000);
  f.push_back(64);
  f.push_back(17);
  put16be(f, 0);  // checksum, filled below
  for (uint8_t b : {192, 0, 2, 1, 192, 0, 2, 2}) f.push_back(b);
  const uint16_t sum = internetChecksum(std::span(f).subspan(ip_start, kIpv4Header));
  f[ip_start + 10] = static_cast<uint8_t>(sum >> 8);
  f[ip_start + 11] = static_cast<uint8_t>(sum);
  // UDP (RFC 768): ports, length, checksum 0 = not computed.
  put16be(f, src_port);
  put16be(f, dst_port);
  put16be(f, static_cast<uint16_t>(kUdpHeader + payload.size()));
  put16be(f, 0);
  f.insert(f.end(), payload.begin(), payload.end());
  frames_.push_back(std::move(f));
}

std::vector<uint8_t> PcapWriter::bytes() const {
  std::vector<uint8_t> out;
  put32le(out, 0xa1b2c3d4);  // magic: microsecond timestamps
  put16le(out, 2);           // version 2.4
  put16le(out, 4);
  put32le(out, 0);      // thiszone
  put32le(out, 0);      // sigfigs
  put32le(out, 65535);  // snaplen
  put32le(out, 1);      // LINKTYPE_ETHERNET
  uint32_t second = 1700000000;
  for (const auto& f : frames_) {
    put32le(out, second++);                         // ts_sec
    put32le(out, 0);                                // ts_usec
    put32le(out, static_cast<uint32_t>(f.size()));  // incl_len
    put32le(out, static_cast<uint32_t>(f.size()));  // orig_len
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

bool PcapWriter::write(const std::string& path) const {
  const auto data = bytes();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

}  // namespace gtpcp::gtp::testing
