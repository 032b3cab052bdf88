#include "vtysh_frr.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/time/clock.h"

extern char** environ;

namespace gtpcp::bridge {

FrrResult<std::string> VtyshFrr::run(const std::vector<std::string>& commands, bool look) {
  std::vector<std::string> args{settings_.vtysh};
  if (!settings_.vty_socket_dir.empty()) {
    args.push_back("--vty_socket");
    args.push_back(settings_.vty_socket_dir);
  }
  for (const auto& c : commands) {
    args.push_back("-c");
    args.push_back(c);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return tl::unexpected(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return tl::unexpected(settings_.vtysh + ": " + std::strerror(rc));
  }
  std::string text;
  const uint64_t deadline = monotonicNs() + uint64_t(settings_.timeout.count()) * 1'000'000;
  bool timed_out = false;
  bool gave_way = false;
  for (;;) {
    const uint64_t now = monotonicNs();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    if (waiting() && look) {
      gave_way = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int n = ::poll(&p, 1, std::min(static_cast<int>((deadline - now) / 1'000'000) + 1, kWaitingPeriodMs));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[8192];
    const ssize_t r = ::read(out[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<std::size_t>(r));
  }
  ::close(out[0]);
  if (timed_out || gave_way) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (gave_way) return tl::unexpected(std::string(kGaveWay));
  if (timed_out) return tl::unexpected("vtysh did not answer within " + std::to_string(settings_.timeout.count()) + " ms");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return tl::unexpected("vtysh exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                          (text.empty() ? "" : ": " + text));
  }
  return text;
}

FrrResult<std::string> VtyshFrr::runningConfig(const std::string& daemon) {
  return run({"show running-config " + daemon}, true);
}

FrrResult<void> VtyshFrr::configure(const std::vector<std::string>& commands) {
  std::vector<std::string> all{"configure terminal"};
  all.insert(all.end(), commands.begin(), commands.end());
  all.push_back("end");
  auto r = run(all, false);
  if (!r) return tl::unexpected(r.error());
  // vtysh reports a command it refused on its output ("% ...") and may still
  // exit 0 for the lines it took.
  std::istringstream in(*r);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '%') return tl::unexpected("FRR refused a command: " + line);
  }
  return {};
}

FrrResult<nlohmann::json> VtyshFrr::showJson(const std::string& command) {
  auto r = run({command}, true);
  if (!r) return tl::unexpected(r.error());
  auto j = nlohmann::json::parse(*r, nullptr, false);
  if (j.is_discarded()) return tl::unexpected("'" + command + "' did not answer JSON");
  return j;
}

FrrDaemons VtyshFrr::daemons() {
  FrrDaemons out;
  std::ifstream in("/proc/uptime");
  double uptime_s = 0;
  const bool aged = static_cast<bool>(in >> uptime_s);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const std::string dir = settings_.vty_socket_dir.empty() ? "/var/run/frr" : settings_.vty_socket_dir;
  for (const char* d : {"zebra", "bgpd", "staticd", "bfdd"}) {
    std::ifstream pidfile(dir + "/" + d + ".pid");
    long pid = 0;
    if (!(pidfile >> pid) || pid <= 0) continue;
    // The start time tells a new process from an old one with a reused pid.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = s.rfind(')');
    if (close == std::string::npos) {
      // Its pid file names a process that is gone: being restarted.
      out.identity[d] = std::to_string(pid) + ":gone";
      out.youngest_ms = 0;
      continue;
    }
    std::istringstream fields(s.substr(close + 2));
    std::string f;
    for (int i = 0; i < 20 && fields >> f; ++i) {
    }  // field 22, starttime, is the 20th after the command
    out.identity[d] = std::to_string(pid) + ":" + f;
    if (!aged) continue;
    const double age_s = uptime_s - static_cast<double>(std::strtoull(f.c_str(), nullptr, 10)) / ticks;
    const uint64_t age_ms = age_s > 0 ? static_cast<uint64_t>(age_s * 1000) : 0;
    if (!out.youngest_ms || age_ms < *out.youngest_ms) out.youngest_ms = age_ms;
  }
  return out;
}

}  // namespace gtpcp::bridge
