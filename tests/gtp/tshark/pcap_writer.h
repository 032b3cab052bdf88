// A minimal writer of classic pcap files (the libpcap format: a global header,
// then per packet a record header and the frame), framing each payload as
// Ethernet / IPv4 / UDP so that tshark dissects it as it would a capture.
//
// Written by hand rather than through libpcap so the test controls every
// octet; checksums: the IPv4 header one is computed, the UDP one is 0
// ("none", RFC 768), which tshark accepts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gtpcp::gtp::testing {

class PcapWriter {
 public:
  // Appends one Ethernet frame carrying `payload` in UDP from `src_port` to
  // `dst_port` (2123, GTP-C, unless told otherwise) between two fixed
  // documentation addresses (192.0.2.1 -> 192.0.2.2).
  void addUdp(std::span<const uint8_t> payload, uint16_t src_port = 2123, uint16_t dst_port = 2123);

  // The whole file: global header (magic a1b2c3d4 in host order, version 2.4,
  // snaplen 65535, link type 1 = Ethernet) and every frame added so far.
  std::vector<uint8_t> bytes() const;

  // Writes bytes() to `path`; false on any I/O error.
  bool write(const std::string& path) const;

  std::size_t frameCount() const { return frames_.size(); }

 private:
  std::vector<std::vector<uint8_t>> frames_;
};

// The standard Internet checksum (RFC 1071) of `data`.
uint16_t internetChecksum(std::span<const uint8_t> data);

}  // namespace gtpcp::gtp::testing
