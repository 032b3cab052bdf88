#include "tools/gtpc_decode/cli.h"

#include <cstdio>
#include <istream>
#include <ostream>

namespace gtpcp::gtpc_decode {

namespace {

int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool isSeparator(char c) noexcept { return c == ' ' || c == '\t' || c == ':' || c == '\r' || c == '\n'; }

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", u);
  return buf;
}

std::string dump(const Json& object, bool pretty) {
  // Packet-derived strings are ASCII by construction; "replace" keeps a
  // surprise from turning into an exception.
  return object.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
}

// The value of the first top-level IE of `type` with instance 0, or nullptr.
const Json* ieValue(const Json& message, int type) {
  auto ies = message.find("ies");
  if (ies == message.end() || !ies->is_array()) return nullptr;
  for (const Json& ie : *ies) {
    if (ie.value("type", -1) != type || ie.value("instance", 0) != 0) continue;
    auto value = ie.find("value");
    return value == ie.end() ? nullptr : &*value;
  }
  return nullptr;
}

void appendMessage(std::string& line, const Json& m, bool piggybacked) {
  if (m.contains("version")) line += "  GTPv" + std::to_string(m["version"].get<int>());
  if (m.contains("message_name")) line += " " + m["message_name"].get<std::string>();
  if (piggybacked) line += " (piggybacked)";
  line += " ";
  if (m.contains("teid")) line += " teid=" + m["teid"].get<std::string>();
  if (m.contains("sequence_number")) line += " seq=" + std::to_string(m["sequence_number"].get<uint32_t>());
  if (m.contains("error")) {
    line += " error=" + m["error"].get<std::string>();
    if (m.contains("detail")) line += " (" + m["detail"].get<std::string>() + ")";
    return;
  }
  const int version = m.value("version", 0);
  const int cause_type = version == 2 ? 2 : 1;
  const int imsi_type = version == 2 ? 1 : 2;
  const int apn_type = version == 2 ? 71 : 131;
  if (const Json* cause = ieValue(m, cause_type); cause != nullptr && cause->is_object()) {
    line += " cause=" + std::to_string(cause->value("cause", 0)) + " (" +
            cause->value("name", std::string()) + ")";
  }
  if (const Json* imsi = ieValue(m, imsi_type); imsi != nullptr && imsi->is_string())
    line += " imsi=" + imsi->get<std::string>();
  if (const Json* apn = ieValue(m, apn_type); apn != nullptr && apn->is_string())
    line += " apn=" + apn->get<std::string>();
}

}  // namespace

tl::expected<std::vector<uint8_t>, HexError> parseHex(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && isSeparator(text[i])) ++i;
  if (text.size() - i >= 2 && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) i += 2;
  std::vector<uint8_t> out;
  out.reserve(text.size() / 2);
  int high = -1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (isSeparator(c)) continue;
    const int v = hexValue(c);
    if (v < 0) return tl::unexpected(HexError{"not a hex digit: " + printable(c), i});
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>((high << 4) | v));
      high = -1;
    }
  }
  if (high >= 0) return tl::unexpected(HexError{"odd number of hex digits", text.size()});
  if (out.empty()) return tl::unexpected(HexError{"no hex digits", 0});
  return out;
}

Json decodeHexText(std::string_view text, const Options& options) {
  auto bytes = parseHex(text);
  if (!bytes) {
    return Json{{"error", "invalid_hex"},
                {"detail", bytes.error().detail},
                {"position", bytes.error().position}};
  }
  return decodeDatagram(*bytes, options);
}

Json frameJson(const UdpDatagram& datagram, const Options& options) {
  Json j{{"frame", datagram.frame},
         {"time", formatTimestamp(datagram.time)},
         {"src", formatEndpoint(datagram.endpoints.src, datagram.endpoints.src_port)},
         {"dst", formatEndpoint(datagram.endpoints.dst, datagram.endpoints.dst_port)}};
  Json body = decodeDatagram(datagram.payload, options);
  for (auto it = body.begin(); it != body.end(); ++it) j[it.key()] = std::move(it.value());
  return j;
}

Json frameErrorJson(const FrameError& error) {
  Json j{{"frame", error.frame}};
  // A read error comes before the record's header is known.
  if (error.code != FrameErrc::kReadError) j["time"] = formatTimestamp(error.time);
  if (error.endpoints) {
    j["src"] = formatEndpoint(error.endpoints->src, error.endpoints->src_port);
    j["dst"] = formatEndpoint(error.endpoints->dst, error.endpoints->dst_port);
  }
  j["error"] = std::string(frameErrcName(error.code));
  j["detail"] = error.detail;
  return j;
}

std::string summaryLines(const Json& object, std::string_view label) {
  std::string prefix =
      object.contains("frame") ? std::to_string(object["frame"].get<uint64_t>()) : std::string(label);
  if (object.contains("src") && object.contains("dst")) {
    prefix += "  " + object["src"].get<std::string>() + " -> " + object["dst"].get<std::string>();
  }
  std::string line = prefix;
  appendMessage(line, object, false);
  if (auto p = object.find("piggybacked"); p != object.end()) {
    line += "\n" + prefix;
    appendMessage(line, *p, true);
  }
  return line;
}

int run(const RunOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  if (!options.hex.empty() && options.pcap) {
    err << "gtpc-decode: give hex messages or --pcap, not both\n";
    return kExitUsage;
  }
  bool failed = false;
  auto emit = [&](const Json& object, std::string_view label) {
    failed = failed || isError(object) ||
             (object.contains("piggybacked") && isError(object["piggybacked"]));
    out << (options.summary ? summaryLines(object, label) : dump(object, options.pretty)) << '\n';
  };

  if (!options.hex.empty()) {
    for (std::size_t i = 0; i < options.hex.size(); ++i) {
      emit(decodeHexText(options.hex[i], options.decode), std::to_string(i + 1));
    }
    return failed ? kExitDecodeFailed : kExitOk;
  }

  if (!options.pcap) {
    std::string line;
    for (uint64_t number = 1; std::getline(in, line); ++number) {
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      emit(decodeHexText(line, options.decode), std::to_string(number));
    }
    return failed ? kExitDecodeFailed : kExitOk;
  }

  auto source = PcapSource::open(*options.pcap, options.port);
  if (!source) {
    err << "gtpc-decode: cannot read capture " << source.error() << '\n';
    return kExitUsage;
  }
  bool frame_seen = false;
  while (auto next = source->next()) {
    const uint64_t frame = *next ? (*next)->frame : next->error().frame;
    if (options.frame && frame != *options.frame) {
      if (frame > *options.frame) break;
      continue;
    }
    frame_seen = true;
    emit(*next ? frameJson(**next, options.decode) : frameErrorJson(next->error()), "");
  }
  const PcapSource::Stats& stats = source->stats();
  if (stats.fragments_skipped != 0) {
    err << "gtpc-decode: " << *options.pcap << ": skipped " << stats.fragments_skipped
        << " IP fragment(s) of UDP datagrams (not reassembled)\n";
  }
  if (options.frame && !frame_seen) {
    err << "gtpc-decode: " << *options.pcap << ": frame " << *options.frame
        << " holds no UDP datagram on port " << options.port << '\n';
    failed = true;
  }
  return failed ? kExitDecodeFailed : kExitOk;
}

}  // namespace gtpcp::gtpc_decode
