#include "tests/peer/tshark_view.h"

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "tests/gtp/tshark/pcap_writer.h"

namespace gtpcp::peer::testing {

std::string runCommand(const std::string& command) {
  std::string out;
  FILE* p = ::popen(("timeout -k 5 60 " + command).c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  return out;
}

TsharkView tsharkView(const std::vector<std::vector<uint8_t>>& frames, const std::string& pcap,
                      const std::string& log, const std::string& type_field) {
  gtp::testing::PcapWriter w;
  for (const auto& f : frames) w.addUdp(f);
  EXPECT_TRUE(w.write(pcap));
  const std::string tshark = "/usr/bin/tshark -n -r '" + pcap + "' ";
  TsharkView v;
  // Warning = 6291456, Error = 8388608 (see tests/gtp/tshark/tshark_test.cc).
  v.flagged = runCommand(tshark +
                         "-Y '_ws.malformed || _ws.expert.severity >= 6291456' -T fields "
                         "-e frame.number -e _ws.expert.message 2>>'" + log + "'");
  v.types = runCommand(tshark + "-T fields -e " + type_field + " 2>>'" + log + "'");
  return v;
}

}  // namespace gtpcp::peer::testing
