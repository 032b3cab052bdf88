#include "tests/support/frr.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <regex>
#include <stdexcept>

namespace gtpcp::testing {

namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string kFrrDir = "/usr/lib/frr";
const std::string kVtysh = "/usr/bin/vtysh";
constexpr auto kSocketTimeout = 10s;  // a daemon's start, typically 0.1-0.3 s
constexpr auto kStopGrace = 3s;

bool isSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string joinedLines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s;
}

// State directories of test processes that are gone (killed before their
// Frr went away; their daemons went with their namespaces, see netns.h).
// Once per test process, before its first Frr.
void sweepStaleStateDirs() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const std::regex ours("gtpcp-frr-gt([0-9]{1,7})n[0-9]+-[A-Za-z0-9]{6}");
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
      const std::string n = entry.path().filename().string();
      std::smatch m;
      if (!std::regex_match(n, m, ours)) continue;
      const int owner = std::stoi(m[1].str());
      if (owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
      std::filesystem::remove_all(entry.path(), ec);
    }
  });
}

}  // namespace

const char* toString(FrrDaemon d) noexcept {
  switch (d) {
    case FrrDaemon::kZebra: return "zebra";
    case FrrDaemon::kBgpd: return "bgpd";
    case FrrDaemon::kBfdd: return "bfdd";
    case FrrDaemon::kStaticd: return "staticd";
  }
  return "?";
}

std::string Frr::unavailable() {
  if (::geteuid() != 0) return "needs root: FRR runs in network namespaces of the test's own";
  for (FrrDaemon d : kDaemons) {
    const std::string program = kFrrDir + "/" + toString(d);
    if (::access(program.c_str(), X_OK) != 0) return program + " missing (tools/setup.sh --test installs frr)";
  }
  if (::access(kVtysh.c_str(), X_OK) != 0) return kVtysh + " missing (tools/setup.sh --test installs frr)";
  if (::getpwnam("frr") == nullptr) return "no user frr (the frr package makes it)";
  return "";
}

Frr::Frr(const Netns& ns) : ns_(ns) {
  sweepStaleStateDirs();
  const passwd* pw = ::getpwnam("frr");
  if (pw == nullptr) throw std::runtime_error("frr: no user frr");
  uid_ = pw->pw_uid;
  gid_ = pw->pw_gid;
  // Under /tmp itself, not TMPDIR: every directory above must let frr in.
  std::string templ = "/tmp/gtpcp-frr-" + ns_.name() + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    throw std::runtime_error("frr: mkdtemp " + templ + ": " + std::string(std::strerror(errno)));
  dir_ = templ;
  try {
    writeFile(dir_ + "/empty.conf", "");
    if (::chmod(dir_.c_str(), 0755) != 0 || ::chown(dir_.c_str(), uid_, gid_) != 0 ||
        ::chown((dir_ + "/empty.conf").c_str(), uid_, gid_) != 0)
      throw std::runtime_error("frr: cannot give " + dir_ + " to user frr: " + std::strerror(errno));
    start();
  } catch (...) {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

Frr::~Frr() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void Frr::start() {
  // Sockets and pid files of a previous start would pass for new ones.
  std::error_code ec;
  for (FrrDaemon d : kDaemons) {
    std::filesystem::remove(dir_ + "/" + toString(d) + ".vty", ec);
    std::filesystem::remove(dir_ + "/" + toString(d) + ".pid", ec);
  }
  std::filesystem::remove(dir_ + "/zserv.api", ec);
  std::filesystem::remove(dir_ + "/bfdd.sock", ec);

  for (FrrDaemon d : kDaemons) {
    const std::string name = toString(d);
    std::vector<std::string> argv{kFrrDir + "/" + name,
                                  "-f", dir_ + "/empty.conf",
                                  "-i", dir_ + "/" + name + ".pid",
                                  "--vty_socket", dir_,
                                  "-z", dir_ + "/zserv.api",
                                  "-A", "127.0.0.1",
                                  "--log", "file:" + dir_ + "/" + name + ".log"};
    if (d == FrrDaemon::kBgpd) argv.insert(argv.end(), {"-p", "179"});
    if (d == FrrDaemon::kBfdd) argv.insert(argv.end(), {"--bfdctl", dir_ + "/bfdd.sock"});
    children_[index(d)] = ns_.spawn(argv, dir_ + "/" + name + ".out");
    // The other daemons connect to zebra: start them once it listens.
    if (d == FrrDaemon::kZebra) waitForSocket(d, dir_ + "/zserv.api");
  }
  for (FrrDaemon d : kDaemons) waitForSocket(d, dir_ + "/" + toString(d) + ".vty");
}

void Frr::waitForSocket(FrrDaemon d, const std::string& path) {
  Child& c = children_[index(d)];
  const bool up = waitUntil([&] { return isSocket(path) || !c.running(); }, kSocketTimeout, 5ms) && isSocket(path);
  if (up) return;
  const auto status = c.wait(0ms);
  throw std::runtime_error(std::string("frr in ") + ns_.name() + ": " + toString(d) + " did not create " + path +
                           (status ? " (exited with status " + std::to_string(*status) + ")"
                                   : " within " + std::to_string(kSocketTimeout.count()) + " s") +
                           "\n" + logTails());
}

void Frr::stop() {
  // Staticd first, zebra last: clients leave before the server.
  for (FrrDaemon d : kDaemons) children_[index(d)].kill(SIGCONT);
  for (auto it = kDaemons.rbegin(); it != kDaemons.rend(); ++it) {
    Child& c = children_[index(*it)];
    const int pid = c.pid();
    if (pid <= 0) continue;
    c.stop(kStopGrace);
    // FRR's per-process crash log directory, left behind by a SIGKILL;
    // remove() leaves it if it holds a crash log.
    std::error_code ec;
    std::filesystem::remove("/var/tmp/frr/" + std::string(toString(*it)) + "." + std::to_string(pid), ec);
  }
}

void Frr::restart() {
  stop();
  start();
  for (const auto& lines : journal_) runConfig(lines);
}

std::optional<Output> Frr::vtysh(const std::vector<std::string>& commands, std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv{kVtysh, "--vty_socket", dir_};
  for (const auto& c : commands) argv.insert(argv.end(), {"-c", c});
  return ns_.exec(argv, timeout);
}

json Frr::vtyshJson(const std::string& command, std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv{kVtysh, "--vty_socket", dir_, "-c", command};
  const auto out = ns_.execSeparately(argv, timeout);  // stdout alone: a warning must not spoil the JSON
  if (!out || out->status != 0) return nullptr;
  json j = json::parse(out->text, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

void Frr::runConfig(const std::vector<std::string>& lines) const {
  std::vector<std::string> commands{"configure terminal"};
  commands.insert(commands.end(), lines.begin(), lines.end());
  commands.push_back("end");
  const auto out = vtysh(commands);
  if (!out || out->status != 0)
    throw std::runtime_error("frr in " + ns_.name() + ": configuration failed (" +
                             (out ? "status " + std::to_string(out->status) + ": " + out->text : "vtysh timed out") +
                             "):\n" + joinedLines(lines));
}

void Frr::configure(const std::vector<std::string>& lines) {
  runConfig(lines);
  journal_.push_back(lines);
}

void Frr::configureRouter(uint32_t as, const std::string& router_id, const std::vector<BgpNeighbor>& neighbors,
                          std::optional<BfdProfile> bfd, const BgpTimers& timers) {
  std::vector<std::string> lines;
  if (bfd) {
    const std::string ms = std::to_string(bfd->interval.count());
    lines.insert(lines.end(), {"bfd", std::string("profile ") + kBfdProfileName, "receive-interval " + ms,
                               "transmit-interval " + ms, "detect-multiplier " + std::to_string(bfd->multiplier),
                               "exit", "exit"});
  }
  lines.insert(lines.end(),
               {"router bgp " + std::to_string(as), "bgp router-id " + router_id, "no bgp ebgp-requires-policy"});
  for (const auto& n : neighbors) {
    const std::string neighbor = "neighbor " + n.address;
    lines.insert(lines.end(), {neighbor + " remote-as " + std::to_string(n.remote_as),
                               neighbor + " timers " + std::to_string(timers.keepalive.count()) + " " +
                                   std::to_string(timers.hold.count()),
                               neighbor + " timers connect " + std::to_string(timers.connect_retry.count())});
    if (bfd) lines.insert(lines.end(), {neighbor + " bfd", neighbor + " bfd profile " + kBfdProfileName});
  }
  // A neighbour over IPv6 carries IPv6 routes (FRR activates only IPv4 by default).
  for (const auto& n : neighbors) {
    if (n.address.find(':') == std::string::npos) continue;
    lines.insert(lines.end(), {"address-family ipv6 unicast", "neighbor " + n.address + " activate", "exit-address-family"});
  }
  lines.push_back("exit");
  configure(lines);
}

std::string Frr::bgpState(const std::string& neighbor) const {
  const json j = vtyshJson("show bgp neighbors " + neighbor + " json");
  if (!j.is_object() || !j.contains(neighbor) || !j[neighbor].is_object()) return "";
  return j[neighbor].value("bgpState", "");
}

std::string Frr::bfdStatus(const std::string& peer) const {
  const json j = vtyshJson("show bfd peers json");
  if (!j.is_array()) return "";
  for (const json& p : j)
    if (p.is_object() && p.value("peer", "") == peer) return p.value("status", "");
  return "";
}

std::string Frr::logTails(std::size_t lines) const {
  std::string out;
  for (FrrDaemon d : kDaemons) {
    for (const char* suffix : {".log", ".out"}) {
      const std::string file = dir_ + "/" + toString(d) + suffix;
      const std::string tail = tailFile(file, lines);
      if (!tail.empty()) out += "---- " + file + "\n" + tail;
    }
  }
  return out;
}

}  // namespace gtpcp::testing
