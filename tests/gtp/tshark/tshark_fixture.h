// What the tshark cross-checks share: finding and running the installed
// tshark, the frames of a capture with the fields tshark must show for each,
// and a gtest fixture that writes the capture and runs the checks every
// suite makes (each expected field, no malformed or warned frame, every frame
// dissected as GTP).
//
// tshark is required: when it is missing the tests fail (the suite's setup
// installs it), they do not skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>


namespace gtpcp::gtp::testing {

// The tshark to run: $GTPCP_TSHARK when set (and then only it), else
// /usr/bin/tshark, else the PATH.
std::optional<std::string> findTshark();

extern const char* const kNoTshark;

struct RunResult {
  int exit_code = -1;
  std::string out;
};

// Runs `command` through the shell under `timeout` (coreutils), collecting
// stdout; stderr goes to `stderr_path`.
RunResult run(const std::string& command, const std::string& stderr_path);

// The whole file at `path`, "" when it cannot be read.
std::string slurp(const std::string& path);

// How tshark prints values: decimal, BASE_HEX zero-padded to the field's
// width, several occurrences joined with ','.
std::string dec(uint64_t v);
std::string hexN(uint32_t v, int digits);
std::string hex32(uint32_t v);
std::string join(const std::vector<std::string>& items);

// One frame of the capture and the fields tshark must show for it.
struct Frame {
  std::string name;
  std::vector<uint8_t> bytes;
  std::map<std::string, std::string> expect;
};

// A GTPv2-C frame: `expect` plus what the codec decodes from `bytes` (message
// types, sequence numbers, and every IE's type, instance and length in wire
// order, piggybacked message included).
Frame v2Frame(std::string name, std::span<const uint8_t> bytes,
              std::map<std::string, std::string> expect);

class TsharkCaptureTest : public ::testing::Test {
 protected:
  // Writes `frames` as a pcap in a fresh directory; call from SetUp().
  // GTPCP_KEEP_PCAP=1 keeps the capture for a look with tshark or Wireshark.
  void capture(std::vector<Frame> frames);
  void TearDown() override;

  // Runs tshark on the capture with `args`; a non-zero exit is a failure.
  RunResult tshark(const std::string& args);

  // Every field of every frame's `expect` is what tshark shows.
  void expectEveryField();
  // No frame malformed, none with an expert warning or error.
  void expectNoFrameFlagged();
  // One GTP message (or two, piggybacked) per frame, none left as UDP data.
  void expectEveryFrameIsGtp();

  std::optional<std::string> tshark_;
  std::string dir_, pcap_;
  std::vector<Frame> frames_;
};

}  // namespace gtpcp::gtp::testing
