// What gtpc-decode does once its flags are parsed: read hex messages or a
// capture, decode each message, print JSON or summary lines, and compute the
// exit status. main.cc only fills RunOptions; tests call run() directly with
// string streams as well as running the binary.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "tools/gtpc_decode/json.h"
#include "tools/gtpc_decode/pcap_source.h"

namespace gtpcp::gtpc_decode {

// Exit statuses: every message decoded / some message or frame failed (the
// others are still printed) / bad flags or an unreadable file.
inline constexpr int kExitOk = 0;
inline constexpr int kExitDecodeFailed = 1;
inline constexpr int kExitUsage = 2;

struct RunOptions {
  std::vector<std::string> hex;     // one message per element; when empty, --pcap or stdin
  std::optional<std::string> pcap;  // capture file
  bool pretty = false;              // indented JSON instead of one object per line
  bool summary = false;             // one text line per message instead of JSON
  std::optional<uint64_t> frame;    // only this frame of the capture
  uint16_t port = kGtpcPort;
  Options decode;
};

// Runs the tool. Reads `in` (one hex message per line) only when there are no
// hex arguments and no capture. Output goes to `out`; `err` gets only fatal
// problems (an unreadable capture, naming the file) and warnings about what
// the capture held but could not be decoded (IP fragments, a missing frame).
int run(const RunOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

struct HexError {
  std::string detail;
  std::size_t position = 0;  // of the offending character in the text
};

// Parses one message written as hex: upper or lower case, an optional leading
// "0x", spaces, tabs and ':' ignored anywhere.
tl::expected<std::vector<uint8_t>, HexError> parseHex(std::string_view text);

// decodeDatagram() of parseHex(text), or {"error":"invalid_hex",...}.
Json decodeHexText(std::string_view text, const Options& options);

// A datagram from a capture: the frame keys ("frame", "time", "src", "dst")
// first, then decodeDatagram()'s object.
Json frameJson(const UdpDatagram& datagram, const Options& options);

// A frame the reader could not take a datagram from.
Json frameErrorJson(const FrameError& error);

// The --summary rendering of an object made by any of the functions above:
// one line per message (a piggybacked message gets its own), no trailing
// newline. `label` starts the line when the object has no "frame" key (the
// argument or line number of hex input).
std::string summaryLines(const Json& object, std::string_view label);

}  // namespace gtpcp::gtpc_decode
