// What tshark makes of datagrams a test captured (the emulator's, or answers
// to it): each framed by the codec tests' pcap writer, then dissected; for
// the integration tests of tools/peer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gtpcp::peer::testing {

// What tshark flags in the frames (malformed, expert warnings or errors: one
// line per frame, its number and the expert messages), and the message types
// it decodes (one line per frame, field `type_field`); empty strings when it
// fails to run.
struct TsharkView {
  std::string flagged;
  std::string types;
};

// Writes `frames` (GTP-C payloads, UDP 2123 both ways) to `pcap` and runs
// /usr/bin/tshark on it, its stderr appended to `log`. `type_field`:
// "gtpv2.message_type" or, for GTPv1, "gtp.message".
TsharkView tsharkView(const std::vector<std::vector<uint8_t>>& frames, const std::string& pcap,
                      const std::string& log, const std::string& type_field = "gtpv2.message_type");

// The output of `command` through the shell, bounded to 60 s; a failed run
// fails the test.
std::string runCommand(const std::string& command);

}  // namespace gtpcp::peer::testing
