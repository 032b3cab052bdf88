#include "tests/gtp/tshark/tshark_fixture.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/gtp/v2/message.h"
#include "tests/gtp/tshark/pcap_writer.h"

namespace gtpcp::gtp::testing {

// ---------------------------------------------------------------------------
// Running tshark.

std::optional<std::string> findTshark() {
  if (const char* env = std::getenv("GTPCP_TSHARK"); env != nullptr) {
    if (access(env, X_OK) == 0) return std::string(env);
    return std::nullopt;
  }
  if (access("/usr/bin/tshark", X_OK) == 0) return std::string("/usr/bin/tshark");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      const std::string candidate = dir + "/tshark";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return std::nullopt;
}

const char* const kNoTshark =
    "tshark not found ($GTPCP_TSHARK when set, else /usr/bin/tshark and $PATH). This "
    "integration test needs TShark 4.0.17: apt-get install tshark";

// tshark reads a few frames in about a second; 60 s only stops a hung process.
RunResult run(const std::string& command, const std::string& stderr_path) {
  RunResult r;
  const std::string full = "timeout -k 5 60 " + command + " 2>'" + stderr_path + "'";
  FILE* p = popen(full.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string slurp(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return "";
  std::string s;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
  std::fclose(f);
  return s;
}

// ---------------------------------------------------------------------------
// The values encoded, and how tshark prints them.

std::string dec(uint64_t v) { return std::to_string(v); }

std::string hexN(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
  return buf;
}

std::string hex32(uint32_t v) { return hexN(v, 8); }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

namespace {

// IE types, instances and lengths of every IE, nested ones included, in wire
// order: tshark's gtpv2.ie_type / gtpv2.instance / gtpv2.ie_len columns.
void expectIeList(const v2::Message& m, std::vector<std::string>& types,
                  std::vector<std::string>& instances, std::vector<std::string>& lengths) {
  for (const v2::Ie& ie : m.ies()) {
    types.push_back(dec(ie.type));
    instances.push_back(dec(ie.instance()));
    lengths.push_back(dec(ie.length));
  }
}

}  // namespace

Frame v2Frame(std::string name, std::span<const uint8_t> bytes,
              std::map<std::string, std::string> expect) {
  Frame f{std::move(name), {bytes.begin(), bytes.end()}, std::move(expect)};
  v2::Datagram d;
  auto ok = d.decode(f.bytes);
  EXPECT_TRUE(ok) << f.name;
  if (!ok) return f;
  std::vector<std::string> types, instances, lengths, message_types, seqs;
  expectIeList(d.message, types, instances, lengths);
  message_types.push_back(dec(d.message.header().message_type));
  seqs.push_back(hexN(d.message.header().sequence_number, 6));
  if (d.has_piggybacked) {
    expectIeList(d.piggybacked, types, instances, lengths);
    message_types.push_back(dec(d.piggybacked.header().message_type));
    seqs.push_back(hexN(d.piggybacked.header().sequence_number, 6));
  }
  f.expect.emplace("gtpv2.message_type", join(message_types));
  f.expect.emplace("gtpv2.seq", join(seqs));
  f.expect.emplace("gtpv2.ie_type", join(types));
  f.expect.emplace("gtpv2.instance", join(instances));
  f.expect.emplace("gtpv2.ie_len", join(lengths));
  return f;
}

// ---------------------------------------------------------------------------
// The fixture.

void TsharkCaptureTest::capture(std::vector<Frame> frames) {
  tshark_ = findTshark();
  ASSERT_TRUE(tshark_) << kNoTshark;
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/gtpcp-tshark-XXXXXX";
  ASSERT_NE(mkdtemp(templ.data()), nullptr) << "mkdtemp failed";
  dir_ = templ;
  frames_ = std::move(frames);
  PcapWriter pcap;
  for (const auto& f : frames_) pcap.addUdp(f.bytes);
  pcap_ = dir_ + "/codec.pcap";
  ASSERT_TRUE(pcap.write(pcap_));
}

void TsharkCaptureTest::TearDown() {
  if (dir_.empty()) return;
  if (std::getenv("GTPCP_KEEP_PCAP") != nullptr) {
    std::printf("capture kept in %s\n", pcap_.c_str());
    return;
  }
  for (const char* name : {"/codec.pcap", "/stderr.txt"}) std::remove((dir_ + name).c_str());
  rmdir(dir_.c_str());
}

RunResult TsharkCaptureTest::tshark(const std::string& args) {
  auto r = run("'" + *tshark_ + "' -n -r '" + pcap_ + "' " + args, dir_ + "/stderr.txt");
  if (r.exit_code != 0) {
    ADD_FAILURE() << "tshark exited with " << r.exit_code << ": " << slurp(dir_ + "/stderr.txt");
  }
  return r;
}

void TsharkCaptureTest::expectEveryField() {
  // The expected texts are TShark 4.0.17's; another version may print some
  // differently (e.g. its own split of an IMSI into MCC and MNC).
  const RunResult version = run("'" + *tshark_ + "' --version", dir_ + "/stderr.txt");
  SCOPED_TRACE(version.out.substr(0, version.out.find('\n')));
  std::vector<std::string> fields = {"frame.number"};
  for (const auto& f : frames_) {
    for (const auto& [field, value] : f.expect) {
      if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
    }
  }
  std::string args = "-T fields -E separator=/t -E occurrence=a -E aggregator=, -E quote=n";
  for (const auto& field : fields) args += " -e " + field;
  const RunResult r = tshark(args);
  ASSERT_EQ(r.exit_code, 0);

  std::vector<std::vector<std::string>> rows;
  std::stringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cols;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, '\t')) cols.push_back(cell);
    cols.resize(fields.size());
    rows.push_back(cols);
  }
  ASSERT_EQ(rows.size(), frames_.size()) << r.out;
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    const Frame& f = frames_[i];
    EXPECT_EQ(rows[i][0], std::to_string(i + 1));
    for (const auto& [field, want] : f.expect) {
      const auto col =
          static_cast<std::size_t>(std::find(fields.begin(), fields.end(), field) - fields.begin());
      EXPECT_EQ(rows[i][col], want) << "frame " << i + 1 << " (" << f.name << "), field " << field;
    }
  }
}

// `_ws.malformed` alone misses an IE overrunning its message (only an Error
// expert item), hence the severity filter: Warning = 6291456, Error = 8388608.
void TsharkCaptureTest::expectNoFrameFlagged() {
  const RunResult r = tshark(
      "-Y '_ws.malformed || _ws.expert.severity >= 6291456' -T fields -e frame.number "
      "-e _ws.expert.message");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "") << "frames flagged by tshark (frame, expert messages)";
}

void TsharkCaptureTest::expectEveryFrameIsGtp() {
  const RunResult r = tshark("-T fields -e frame.protocols");
  ASSERT_EQ(r.exit_code, 0);
  std::stringstream lines(r.out);
  std::string line;
  std::size_t n = 0;
  while (std::getline(lines, line)) {
    ++n;
    EXPECT_NE(line.find(":gtp"), std::string::npos) << "frame " << n << ": " << line;
    EXPECT_EQ(line.find(":data"), std::string::npos) << "frame " << n << ": " << line;
  }
  EXPECT_EQ(n, frames_.size());
}

}  // namespace gtpcp::gtp::testing
