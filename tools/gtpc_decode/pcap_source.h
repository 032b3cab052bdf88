// Reading GTP-C datagrams out of pcap and pcapng captures.
//
// libpcap reads the file (pcap_open_offline() takes both formats); this file
// owns everything between a captured frame and its UDP payload: link layers
// (Ethernet with any number of 802.1Q/802.1ad tags, Linux cooked v1 and v2,
// raw IP, BSD loopback), IPv4 with options, IPv6 with extension headers, and
// UDP. Frame numbers are 1-based and count every record of the file, so they
// match tshark's and Wireshark's "No." column.
//
// Packet data never throws and is never read past the captured octets: a
// frame that is cut (caplen < len) or whose headers run past the capture is a
// FrameError value for that frame, and reading goes on with the next one.
// IP fragments are skipped and counted, not reassembled.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "common/gtp/constants.h"

// libpcap's handle, declared as <pcap/pcap.h> does so that users of this
// header do not get libpcap's macros.
typedef struct pcap pcap_t;

namespace gtpcp::gtpc_decode {

// The port whose datagrams are read as GTP-C unless told otherwise.
using gtp::kGtpcPort;

// Link types as pcap_datalink() reports them. Raw IP has three numbers: 12 is
// DLT_RAW almost everywhere, 14 is DLT_RAW on OpenBSD, 101 is LINKTYPE_RAW in
// files (libpcap maps it to 12, but tools writing files by hand use it).
inline constexpr int kLinkNull = 0;
inline constexpr int kLinkEthernet = 1;
inline constexpr int kLinkRaw = 12;
inline constexpr int kLinkRawOpenBsd = 14;
inline constexpr int kLinkRawFile = 101;
inline constexpr int kLinkLoop = 108;
inline constexpr int kLinkLinuxSll = 113;
inline constexpr int kLinkIpv4 = 228;
inline constexpr int kLinkIpv6 = 229;
inline constexpr int kLinkLinuxSll2 = 276;

bool isSupportedLinkType(int link_type) noexcept;

struct IpAddress {
  bool is_ipv6 = false;
  std::array<uint8_t, 16> octets{};  // IPv4 in the first 4
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

struct Endpoints {
  IpAddress src;
  uint16_t src_port = 0;
  IpAddress dst;
  uint16_t dst_port = 0;
};

// "10.0.0.1:2123", "[2001:db8::1]:2123".
std::string formatEndpoint(const IpAddress& address, uint16_t port);

struct Timestamp {
  int64_t seconds = 0;  // since the Unix epoch, UTC
  uint32_t nanoseconds = 0;
};

// RFC 3339 in UTC with microseconds: "2021-05-05T13:08:28.123456Z".
std::string formatTimestamp(const Timestamp& time);

struct UdpDatagram {
  uint64_t frame = 0;
  Timestamp time;
  Endpoints endpoints;
  // The UDP payload; points into the reader's buffer and stays valid until
  // the next call to PcapSource::next() (or into the span given to
  // parseFrame()).
  std::span<const uint8_t> payload;
};

enum class FrameErrc : uint8_t {
  kCaptureTruncated,   // caplen < len, and the cut falls in what was needed
  kHeaderTruncated,    // a link, IP or UDP header runs past the frame
  kDatagramTruncated,  // the IP or UDP length claims more octets than the frame has
  kInvalidHeader,      // an IP or UDP header field that cannot be (IHL < 5, UDP length < 8...)
  kReadError,          // libpcap could not read the next record (file cut short...)
};

// Stable snake_case name for JSON ("capture_truncated", ...).
std::string_view frameErrcName(FrameErrc code) noexcept;

struct FrameError {
  uint64_t frame = 0;
  Timestamp time;
  FrameErrc code = FrameErrc::kReadError;
  std::string detail;
  std::optional<Endpoints> endpoints;  // when the IP and UDP headers were read
};

// What one frame holds for the decoder.
struct ParsedFrame {
  enum class Kind : uint8_t {
    kDatagram,  // a UDP datagram to or from the port: `endpoints` and `payload` are set
    kOther,     // not IP, not UDP, or another port
    kFragment,  // an IP fragment of a UDP datagram, not the whole datagram
    kError,     // `error` and `detail` are set, `endpoints` when known
  };
  Kind kind = Kind::kOther;
  Endpoints endpoints;
  bool has_endpoints = false;
  std::span<const uint8_t> payload;
  FrameErrc error = FrameErrc::kHeaderTruncated;
  std::string detail;
};

// Parses one captured frame. `captured` is what the capture holds (caplen
// octets), `wire_length` the frame's length on the wire (len); `port` selects
// datagrams whose source or destination port it is. Never reads outside
// `captured`; the payload points into it.
ParsedFrame parseFrame(int link_type, std::span<const uint8_t> captured, uint32_t wire_length,
                       uint16_t port) noexcept;

// Pulls GTP-C datagrams out of a capture file, one frame at a time.
class PcapSource {
 public:
  struct Stats {
    uint64_t frames = 0;             // records read
    uint64_t datagrams = 0;          // UDP datagrams on the port
    uint64_t fragments_skipped = 0;  // IP fragments of UDP datagrams, not reassembled
    uint64_t errors = 0;             // FrameErrors returned
  };

  // Opens `path` (pcap or pcapng). The error text names the file and says
  // why: missing, unreadable, not a capture, unsupported link type.
  static tl::expected<PcapSource, std::string> open(const std::string& path, uint16_t port = kGtpcPort);

  PcapSource(PcapSource&&) noexcept = default;
  PcapSource& operator=(PcapSource&&) noexcept = default;
  ~PcapSource();

  // The next datagram on the port, or the problem of the next frame that
  // might have held one; nullopt at the end of the file. After a kReadError
  // the source is at its end.
  std::optional<tl::expected<UdpDatagram, FrameError>> next();

  const Stats& stats() const noexcept { return stats_; }
  int linkType() const noexcept { return link_type_; }

 private:
  struct Closer {
    void operator()(pcap_t* p) const noexcept;
  };
  PcapSource(std::unique_ptr<pcap_t, Closer> handle, int link_type, uint16_t port) noexcept
      : handle_(std::move(handle)), link_type_(link_type), port_(port) {}

  std::unique_ptr<pcap_t, Closer> handle_;
  int link_type_ = 0;
  uint16_t port_ = kGtpcPort;
  bool done_ = false;
  Stats stats_;
};

}  // namespace gtpcp::gtpc_decode
