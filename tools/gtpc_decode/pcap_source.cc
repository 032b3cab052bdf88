#include "tools/gtpc_decode/pcap_source.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/gtp/bytes.h"
#include "common/gtp/values.h"

namespace gtpcp::gtpc_decode {

namespace {

using gtp::load16;
using gtp::load32;

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
// 802.1Q, 802.1ad, and the pre-standard 0x9100 that QinQ gear still sends.
constexpr uint16_t kEtherTypeVlan = 0x8100;
constexpr uint16_t kEtherTypeQinQ = 0x88a8;
constexpr uint16_t kEtherTypeQinQOld = 0x9100;

constexpr uint8_t kIpProtoHopByHop = 0;
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint8_t kIpProtoRouting = 43;
constexpr uint8_t kIpProtoFragment = 44;
constexpr uint8_t kIpProtoAh = 51;
constexpr uint8_t kIpProtoDestinationOptions = 60;

// Address families in DLT_NULL / DLT_LOOP headers: AF_INET is 2 everywhere,
// AF_INET6 depends on the system that wrote the capture.
constexpr uint32_t kBsdAfInet = 2;
constexpr uint32_t kBsdAfInet6[] = {10 /* Linux */, 24 /* NetBSD, OpenBSD */, 28 /* FreeBSD */,
                                    30 /* macOS */};

// One frame's walk from the link header to the UDP payload. Every read is
// preceded by a bounds check against `size_`, the captured length.
class FrameParser {
 public:
  FrameParser(std::span<const uint8_t> captured, uint32_t wire_length, uint16_t port) noexcept
      : p_(captured.data()), size_(captured.size()), wire_length_(wire_length), port_(port) {}

  ParsedFrame run(int link_type) noexcept {
    switch (link_type) {
      case kLinkEthernet:
        if (size_ < 14) return cutHeader("Ethernet header");
        return etherType(load16(p_ + 12), 14);
      case kLinkLinuxSll:
        if (size_ < 16) return cutHeader("Linux cooked (SLL) header");
        return etherType(load16(p_ + 14), 16);
      case kLinkLinuxSll2:
        if (size_ < 20) return cutHeader("Linux cooked v2 (SLL2) header");
        return etherType(load16(p_), 20);
      case kLinkRaw:
      case kLinkRawOpenBsd:
      case kLinkRawFile:
        if (size_ < 1) return cutHeader("IP header");
        if ((p_[0] >> 4) == 4) return ipv4(0);
        if ((p_[0] >> 4) == 6) return ipv6(0);
        return invalid("raw IP frame with IP version " + std::to_string(p_[0] >> 4));
      case kLinkIpv4:
        return ipv4(0);
      case kLinkIpv6:
        return ipv6(0);
      case kLinkNull:
      case kLinkLoop: {
        if (size_ < 4) return cutHeader("loopback header");
        // DLT_NULL holds the family in the writer's byte order, DLT_LOOP in
        // network order; accept either, a family is a small number.
        uint32_t family = load32(p_);
        if (link_type == kLinkNull && family > 0xffff) family = __builtin_bswap32(family);
        if (family == kBsdAfInet) return ipv4(4);
        for (uint32_t af6 : kBsdAfInet6) {
          if (family == af6) return ipv6(4);
        }
        return other();
      }
      default:
        return invalid("unsupported link type " + std::to_string(link_type));
    }
  }

 private:
  ParsedFrame etherType(uint16_t type, std::size_t pos) noexcept {
    // Each tag is TCI (2 octets) then the next EtherType.
    while (type == kEtherTypeVlan || type == kEtherTypeQinQ || type == kEtherTypeQinQOld) {
      if (size_ < pos + 4) return cutHeader("VLAN tag");
      type = load16(p_ + pos + 2);
      pos += 4;
    }
    if (type == kEtherTypeIpv4) return ipv4(pos);
    if (type == kEtherTypeIpv6) return ipv6(pos);
    return other();
  }

  ParsedFrame ipv4(std::size_t pos) noexcept {
    if (size_ < pos + 20) return cutHeader("IPv4 header");
    const uint8_t* ip = p_ + pos;
    if ((ip[0] >> 4) != 4) return invalid("IPv4 header with version " + std::to_string(ip[0] >> 4));
    // Only UDP can be GTP-C: odd headers of other traffic (a total length of 0
    // from TCP segmentation offload) are none of this tool's business.
    if (ip[9] != kIpProtoUdp) return other();
    const std::size_t ihl = 4u * (ip[0] & 0x0f);
    if (ihl < 20) return invalid("IPv4 header length " + std::to_string(ihl) + " below 20");
    if (size_ < pos + ihl) return cutHeader("IPv4 options");
    const std::size_t total = load16(ip + 2);
    if (total < ihl) {
      return invalid("IPv4 total length " + std::to_string(total) + " below the header length");
    }
    IpAddress src, dst;
    std::memcpy(src.octets.data(), ip + 12, 4);
    std::memcpy(dst.octets.data(), ip + 16, 4);
    // MF set or a non-zero offset: a piece of a datagram. Reassembly is not
    // worth it for GTP-C, whose messages fit one datagram in practice.
    if ((load16(ip + 6) & 0x3fff) != 0) {
      ParsedFrame f;
      f.kind = ParsedFrame::Kind::kFragment;
      return f;
    }
    return udp(pos + ihl, pos + total, src, dst);
  }

  ParsedFrame ipv6(std::size_t pos) noexcept {
    if (size_ < pos + 40) return cutHeader("IPv6 header");
    const uint8_t* ip = p_ + pos;
    if ((ip[0] >> 4) != 6) return invalid("IPv6 header with version " + std::to_string(ip[0] >> 4));
    IpAddress src, dst;
    src.is_ipv6 = dst.is_ipv6 = true;
    std::memcpy(src.octets.data(), ip + 8, 16);
    std::memcpy(dst.octets.data(), ip + 24, 16);
    const std::size_t end = pos + 40 + load16(ip + 4);
    uint8_t next = ip[6];
    pos += 40;
    // Every extension header is at least 8 octets long, so this ends.
    for (;;) {
      switch (next) {
        case kIpProtoHopByHop:
        case kIpProtoRouting:
        case kIpProtoDestinationOptions:
        case kIpProtoAh: {
          if (auto bad = need(pos, 2, end, "IPv6 extension header")) return *bad;
          // AH counts 4-octet units minus 2, the others 8-octet units minus 1.
          const std::size_t length =
              next == kIpProtoAh ? 4u * (p_[pos + 1] + 2u) : 8u * (p_[pos + 1] + 1u);
          if (auto bad = need(pos, length, end, "IPv6 extension header")) return *bad;
          next = p_[pos];
          pos += length;
          break;
        }
        case kIpProtoFragment: {
          if (auto bad = need(pos, 8, end, "IPv6 fragment header")) return *bad;
          const bool whole = (load16(p_ + pos + 2) & 0xfff9) == 0;  // offset 0, M 0
          if (!whole) {
            ParsedFrame f;
            f.kind = p_[pos] == kIpProtoUdp ? ParsedFrame::Kind::kFragment : ParsedFrame::Kind::kOther;
            return f;
          }
          // An atomic fragment (RFC 6946) carries the whole datagram.
          next = p_[pos];
          pos += 8;
          break;
        }
        case kIpProtoUdp:
          return udp(pos, end, src, dst);
        default:
          return other();
      }
    }
  }

  // `end` is where the IP header says the datagram ends; it may lie past the
  // captured octets.
  ParsedFrame udp(std::size_t pos, std::size_t end, const IpAddress& src, const IpAddress& dst) noexcept {
    if (auto bad = need(pos, 8, end, "UDP header")) return *bad;
    const uint8_t* u = p_ + pos;
    ParsedFrame f;
    f.endpoints = Endpoints{src, load16(u), dst, load16(u + 2)};
    f.has_endpoints = true;
    if (f.endpoints.src_port != port_ && f.endpoints.dst_port != port_) return other();
    const std::size_t length = load16(u + 4);
    if (length < 8) return invalid("UDP length " + std::to_string(length) + " below 8", &f);
    if (pos + length > end) {
      return invalid("UDP length " + std::to_string(length) + " exceeds the IP payload (" +
                         std::to_string(end - pos) + " octets)",
                     &f);
    }
    if (pos + length > size_) {
      if (size_ < wire_length_) return captureCut("UDP payload", pos + length, &f);
      return error(FrameErrc::kDatagramTruncated,
                   "the UDP datagram needs " + std::to_string(pos + length) +
                       " octets of the frame, which has " + std::to_string(size_),
                   &f);
    }
    f.kind = ParsedFrame::Kind::kDatagram;
    f.payload = {u + 8, length - 8};
    return f;
  }

  // Checks that [pos, pos + n) lies inside both the IP datagram (`end`) and
  // the captured octets; the error when it does not.
  std::optional<ParsedFrame> need(std::size_t pos, std::size_t n, std::size_t end, const char* what) {
    if (pos + n <= end && pos + n <= size_) return std::nullopt;
    if (pos + n > end) return invalid(std::string(what) + " runs past the IP payload length");
    return cutHeader(what);
  }

  ParsedFrame cutHeader(const char* what) {
    if (size_ < wire_length_) return captureCut(what, 0, nullptr);
    return error(FrameErrc::kHeaderTruncated,
                 std::string(what) + " runs past the end of the frame (" + std::to_string(size_) +
                     " octets)",
                 nullptr);
  }

  ParsedFrame captureCut(const char* what, std::size_t needed, const ParsedFrame* with) {
    std::string detail = "frame captured " + std::to_string(size_) + " of " +
                         std::to_string(wire_length_) + " octets: the " + what + " is cut";
    if (needed != 0) detail += " (needs " + std::to_string(needed) + ")";
    return error(FrameErrc::kCaptureTruncated, std::move(detail), with);
  }

  ParsedFrame invalid(std::string detail, const ParsedFrame* with = nullptr) {
    return error(FrameErrc::kInvalidHeader, std::move(detail), with);
  }

  static ParsedFrame error(FrameErrc code, std::string detail, const ParsedFrame* with) {
    ParsedFrame f;
    if (with != nullptr) {
      f.endpoints = with->endpoints;
      f.has_endpoints = with->has_endpoints;
    }
    f.kind = ParsedFrame::Kind::kError;
    f.error = code;
    f.detail = std::move(detail);
    return f;
  }

  static ParsedFrame other() noexcept { return ParsedFrame{}; }

  const uint8_t* p_;
  std::size_t size_;
  std::size_t wire_length_;
  uint16_t port_;
};

}  // namespace

bool isSupportedLinkType(int link_type) noexcept {
  switch (link_type) {
    case kLinkNull:
    case kLinkEthernet:
    case kLinkRaw:
    case kLinkRawOpenBsd:
    case kLinkRawFile:
    case kLinkLoop:
    case kLinkLinuxSll:
    case kLinkIpv4:
    case kLinkIpv6:
    case kLinkLinuxSll2:
      return true;
    default:
      return false;
  }
}

std::string formatEndpoint(const IpAddress& address, uint16_t port) {
  if (address.is_ipv6) {
    gtp::Ipv6 a;
    std::copy(address.octets.begin(), address.octets.end(), a.octets.begin());
    return "[" + gtp::toString(a) + "]:" + std::to_string(port);
  }
  gtp::Ipv4 a;
  std::copy_n(address.octets.begin(), 4, a.octets.begin());
  return gtp::toString(a) + ":" + std::to_string(port);
}

std::string formatTimestamp(const Timestamp& time) {
  const std::time_t seconds = static_cast<std::time_t>(time.seconds);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return std::to_string(time.seconds);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%06uZ", date, time.nanoseconds / 1000);
  return out;
}

std::string_view frameErrcName(FrameErrc code) noexcept {
  switch (code) {
    case FrameErrc::kCaptureTruncated: return "capture_truncated";
    case FrameErrc::kHeaderTruncated: return "header_truncated";
    case FrameErrc::kDatagramTruncated: return "datagram_truncated";
    case FrameErrc::kInvalidHeader: return "invalid_header";
    case FrameErrc::kReadError: return "pcap_read_error";
  }
  return "unknown";
}

ParsedFrame parseFrame(int link_type, std::span<const uint8_t> captured, uint32_t wire_length,
                       uint16_t port) noexcept {
  return FrameParser(captured, wire_length, port).run(link_type);
}

void PcapSource::Closer::operator()(pcap_t* p) const noexcept { pcap_close(p); }

PcapSource::~PcapSource() = default;

tl::expected<PcapSource, std::string> PcapSource::open(const std::string& path, uint16_t port) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* raw = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (raw == nullptr) {
    // libpcap's message sometimes starts with the file name already.
    std::string why = errbuf;
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    return tl::unexpected(path + ": " + why);
  }
  std::unique_ptr<pcap_t, Closer> handle(raw);
  const int link_type = pcap_datalink(raw);
  if (!isSupportedLinkType(link_type)) {
    const char* name = pcap_datalink_val_to_name(link_type);
    return tl::unexpected(path + ": unsupported link type " + std::to_string(link_type) + " (" +
                          (name != nullptr ? name : "unknown") + ")");
  }
  return PcapSource(std::move(handle), link_type, port);
}

std::optional<tl::expected<UdpDatagram, FrameError>> PcapSource::next() {
  while (!done_) {
    pcap_pkthdr* header = nullptr;
    const u_char* data = nullptr;
    const int rc = pcap_next_ex(handle_.get(), &header, &data);
    if (rc == PCAP_ERROR_BREAK) break;
    if (rc != 1) {
      // 0 only happens on live captures; anything else is a damaged file.
      done_ = true;
      ++stats_.errors;
      FrameError e;
      e.frame = stats_.frames + 1;
      e.code = FrameErrc::kReadError;
      e.detail = rc == 0 ? "no packet" : pcap_geterr(handle_.get());
      return tl::unexpected(std::move(e));
    }
    ++stats_.frames;
    // With nanosecond precision requested, tv_usec holds nanoseconds.
    const Timestamp time{static_cast<int64_t>(header->ts.tv_sec), static_cast<uint32_t>(header->ts.tv_usec)};
    ParsedFrame f = parseFrame(link_type_, {data, header->caplen}, header->len, port_);
    switch (f.kind) {
      case ParsedFrame::Kind::kDatagram:
        ++stats_.datagrams;
        return UdpDatagram{stats_.frames, time, f.endpoints, f.payload};
      case ParsedFrame::Kind::kFragment:
        ++stats_.fragments_skipped;
        break;
      case ParsedFrame::Kind::kOther:
        break;
      case ParsedFrame::Kind::kError: {
        ++stats_.errors;
        FrameError e;
        e.frame = stats_.frames;
        e.time = time;
        e.code = f.error;
        e.detail = std::move(f.detail);
        if (f.has_endpoints) e.endpoints = f.endpoints;
        return tl::unexpected(std::move(e));
      }
    }
  }
  done_ = true;
  return std::nullopt;
}

}  // namespace gtpcp::gtpc_decode
