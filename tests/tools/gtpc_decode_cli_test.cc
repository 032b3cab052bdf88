// The gtpc-decode binary as operators run it: arguments, stdin, exit status,
// stdout and stderr.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/gtpc_decode_support.h"
#include "tools/gtpc_decode/json.h"

namespace gtpcp::gtpc_decode {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using testing::dataPath;
using testing::TempDir;

struct ToolRun {
  int status = -1;
  std::string out;
  std::string err;
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) v.push_back(line);
    return v;
  }
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolRun runTool(const std::vector<std::string>& args, const std::string& input = "") {
  TempDir dir;
  std::ofstream(dir.file("in")) << input;
  std::string command = quote(GTPC_DECODE_BINARY);
  for (const auto& a : args) command += " " + quote(a);
  command += " <" + quote(dir.file("in")) + " >" + quote(dir.file("out")) + " 2>" + quote(dir.file("err"));
  const int rc = std::system(command.c_str());
  ToolRun r;
  r.status = rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(dir.file("out"));
  r.err = slurp(dir.file("err"));
  return r;
}

constexpr const char* kEchoRequest = "40010009000001000300010005";
constexpr const char* kCreateSessionRequest =
    "482000b300000000000012000100080042041728114920f656000d001842f470102342f47000ad7b0253000300"
    "42f47052000100065700090086800000097f0000024700090008696e7465726e657480000100fc630001000"
    "14f00050001000000007f000100004e00100080000a00000d00001000ff00031301845d002c00490001000557"
    "00090284000000120a554bd3500016004d0900000000000000000000000000000000000000007200020021005f"
    "0002005400";

TEST(GtpcDecodeCli, HexArgumentGivesOneCompactJsonLine) {
  const ToolRun r = runTool({kCreateSessionRequest});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  ASSERT_EQ(r.lines().size(), 1u);
  const Json j = Json::parse(r.lines()[0]);
  EXPECT_EQ(j["message_name"], "Create Session Request");
  EXPECT_EQ(j["ies"][0]["value"], "244071821194026");
  EXPECT_THAT(r.out, StartsWith("{\"version\":2,\"message_type\":32,"));
}

TEST(GtpcDecodeCli, StdinOneMessagePerLine) {
  const std::string input = std::string("# captured on the S5 link\n\n") +
                            "40:01:00:09:00:00:01:00:03:00:01:00:05\r\n" +  // colons, CRLF
                            "  # indented comment\n" +
                            "4001 0009 0000 0200 0300 0100 07\n";            // spaces
  const ToolRun r = runTool({}, input);
  EXPECT_EQ(r.status, 0) << r.err << r.out;
  const auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Json::parse(lines[0])["ies"][0]["value"], 5);
  EXPECT_EQ(Json::parse(lines[1])["sequence_number"], 2);
  EXPECT_EQ(Json::parse(lines[1])["ies"][0]["value"], 7);

  const ToolRun upper = runTool({}, "4001000900000100030001000A\n");
  EXPECT_EQ(upper.status, 0);
  EXPECT_EQ(Json::parse(upper.lines().at(0))["ies"][0]["value"], 10);
}

TEST(GtpcDecodeCli, SummaryOfACapture) {
  const ToolRun r = runTool({"--pcap", dataPath("pcap/gtp_c.pcap"), "--summary"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  const auto lines = r.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "1  10.101.0.2:1024 -> 10.102.0.2:2123  GTPv2 Create Session Request  teid=0x00000000 "
            "seq=4936802 imsi=987654112233445 apn=internet");
  EXPECT_EQ(lines[1],
            "2  10.102.0.2:2123 -> 10.101.0.2:1024  GTPv2 Create Session Response  teid=0x35529204 "
            "seq=4936802 cause=16 (Request accepted)");
  EXPECT_THAT(lines[2], StartsWith("3  10.101.0.2:1024 -> 10.102.0.2:2123  GTPv2 Delete Session Request"));
  EXPECT_THAT(lines[3], StartsWith("4  10.102.0.2:2123 -> 10.101.0.2:1024  GTPv2 Delete Session Response"));
}

TEST(GtpcDecodeCli, OneFrameOfACaptureWithFrameKeysFirst) {
  const ToolRun r = runTool({"--pcap", dataPath("pcap/pdp_ctx_messages.pcapng"), "--frame", "7"});
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r.lines().size(), 1u);
  const Json j = Json::parse(r.lines()[0]);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  ASSERT_GE(keys.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 5),
            (std::vector<std::string>{"frame", "time", "src", "dst", "version"}));
  EXPECT_EQ(j["frame"], 7);
  EXPECT_EQ(j["src"], "127.0.0.2:2123");
  EXPECT_EQ(j["message_name"], "Create PDP Context Request");
  EXPECT_EQ(j["time"], "2010-05-16T20:03:21.421317Z");  // tshark: 1274040201.421317000
}

TEST(GtpcDecodeCli, FrameWithoutGtpcSaysSo) {
  const ToolRun r = runTool({"--pcap", dataPath("pcap/pdp_ctx_messages.pcapng"), "--frame", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("frame 1"));
}

TEST(GtpcDecodeCli, PrettyIndents) {
  const ToolRun r = runTool({"--pretty", kEchoRequest});
  EXPECT_EQ(r.status, 0);
  EXPECT_GT(r.lines().size(), 10u);
  EXPECT_THAT(r.out, HasSubstr("\n  \"message_name\": \"Echo Request\""));
  EXPECT_EQ(Json::parse(r.out)["sequence_number"], 1);
}

TEST(GtpcDecodeCli, MaskLeavesNoSubscriberIdentityInTheOutput) {
  for (const char* mode : {"--summary", "--pretty"}) {
    const ToolRun r = runTool({"--pcap", dataPath("pcap/gtp_c.pcap"), "--mask", mode});
    EXPECT_EQ(r.status, 0);
    EXPECT_THAT(r.out, HasSubstr("98765**********"));
    for (const char* secret : {"987654112233445", "89674511223344", "896745214365", "436587092110203"}) {
      EXPECT_THAT(r.out, Not(HasSubstr(secret))) << mode;
    }
  }
}

TEST(GtpcDecodeCli, BadHexIsAnErrorObjectAndTheRestStillPrints) {
  const ToolRun r = runTool({"4801zz", "482", kEchoRequest});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, IsEmpty());  // a sanitizer report would exit 1 too
  const auto lines = r.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(Json::parse(lines[0])["error"], "invalid_hex");
  EXPECT_EQ(Json::parse(lines[1])["error"], "invalid_hex");
  EXPECT_EQ(Json::parse(lines[2])["message_name"], "Echo Request");
}

TEST(GtpcDecodeCli, TruncatedMessageExitsOne) {
  std::string cut(kCreateSessionRequest);
  cut.resize(cut.size() - 20);
  const ToolRun r = runTool({cut});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, IsEmpty());
  const Json j = Json::parse(r.lines().at(0));
  EXPECT_EQ(j["error"], "invalid_length");
  EXPECT_EQ(j["message_name"], "Create Session Request");

  const ToolRun stdin_run = runTool({}, std::string(kEchoRequest) + "\n4001\n");
  EXPECT_EQ(stdin_run.status, 1);
  EXPECT_EQ(stdin_run.lines().size(), 2u);
}

TEST(GtpcDecodeCli, DamagedFramesExitOneAndKeepTheOthers) {
  TempDir dir;
  // A Linux SLL frame cut in its UDP payload, then a whole one.
  std::vector<uint8_t> sll(16, 0);
  sll[14] = 0x08;
  const auto ip = testing::bytesOf(
      "4500002900000000401100000a0000010a000002084b084b00150000" "40010009000001000300010005");
  std::vector<uint8_t> frame = sll;
  frame.insert(frame.end(), ip.begin(), ip.end());
  std::vector<uint8_t> cut(frame.begin(), frame.end() - 4);
  testing::PcapWriter(113).add(cut, static_cast<uint32_t>(frame.size())).add(frame).write(dir.file("d.pcap"));
  const ToolRun r = runTool({"--pcap", dir.file("d.pcap"), "--summary"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, IsEmpty());
  const auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], StartsWith("1  10.0.0.1:2123 -> 10.0.0.2:2123  error=capture_truncated"));
  EXPECT_THAT(lines[1], StartsWith("2  10.0.0.1:2123 -> 10.0.0.2:2123  GTPv2 Echo Request"));
}

TEST(GtpcDecodeCli, UnreadableFileExitsTwoNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("no-such-capture.pcap");
  const ToolRun r = runTool({"--pcap", missing});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(GtpcDecodeCli, UsageErrorsExitTwo) {
  EXPECT_EQ(runTool({"--bogus"}).status, 2);
  EXPECT_EQ(runTool({"--frame", "1", kEchoRequest}).status, 2);
  EXPECT_EQ(runTool({"--pcap", dataPath("pcap/gtp_c.pcap"), kEchoRequest}).status, 2);
  EXPECT_EQ(runTool({"--summary", "--pretty", kEchoRequest}).status, 2);
  EXPECT_EQ(runTool({"--pcap", dataPath("pcap/gtp_c.pcap"), "--port", "70000"}).status, 2);
  const ToolRun help = runTool({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_THAT(help.out, HasSubstr("--pcap"));
}

}  // namespace
}  // namespace gtpcp::gtpc_decode
