#include "embedded_redis.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <thread>

#include "common/time/clock.h"

namespace gtpcp::launcher {

namespace fs = std::filesystem;

namespace {

// The embedded redis-server answers PING on 127.0.0.1:`port`.
bool redisAnswers(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{0, 200'000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
    char buf[16] = {};
    ok = recv(fd, buf, sizeof buf - 1, 0) >= 5 && std::strncmp(buf, "+PONG", 5) == 0;
  }
  close(fd);
  return ok;
}

}  // namespace

std::optional<group::ProcessSpec> embeddedRedis(const group::ProcessControl& processes) {
  const config::InstanceConfig& config_ = processes.config();
  const group::Paths& paths_ = processes.paths();
  if (config_.storage.mode != config::InstanceConfig::Storage::Mode::kEmbedded) return std::nullopt;
  // Its data (an append-only file) in the run directory, so that a restart of
  // the group finds the sessions again; loopback only.
  // Debian's redis-server, not whatever wrapper comes first on PATH (a
  // version manager's shim costs a start 20 ms).
  std::string binary = processes.findBinary("redis-server");
  if (binary == "redis-server" && access("/usr/bin/redis-server", X_OK) == 0) binary = "/usr/bin/redis-server";
  return group::ProcessSpec{"redis", binary,
                     {"--port", std::to_string(config_.storage.embedded_port), "--bind", "127.0.0.1",
                      "--dir", paths_.embeddedRedisDir(), "--save", "", "--appendonly", "yes",
                      "--appendfsync", "everysec", "--daemonize", "no", "--protected-mode", "yes"}};
}

bool startEmbeddedRedis(group::ProcessControl& processes, std::ostream& out, int timeout_ms) {
  const config::InstanceConfig& config_ = processes.config();
  const group::Paths& paths_ = processes.paths();
  auto spec = embeddedRedis(processes);
  if (!spec) return true;
  if (processes.runningPid(spec->name)) return true;
  std::error_code ec;
  fs::create_directories(paths_.embeddedRedisDir(), ec);
  if (redisAnswers(config_.storage.embedded_port)) {
    out << "redis: 127.0.0.1:" << config_.storage.embedded_port
        << " already answers and is not this group's; give storage.embedded_port another port\n";
    return false;
  }
  auto pid = processes.spawn(*spec, out);
  if (!pid) return false;
  const uint64_t deadline = monotonicNs() + uint64_t(timeout_ms) * 1'000'000;
  while (monotonicNs() < deadline) {
    if (!group::processAlive(*pid)) break;
    if (redisAnswers(config_.storage.embedded_port)) {
      out << std::left << std::setw(12) << "redis" << " pid " << std::setw(8) << *pid << " serving (127.0.0.1:"
          << config_.storage.embedded_port << ")\n";
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  out << "redis: not answering on 127.0.0.1:" << config_.storage.embedded_port << "; last lines of "
      << paths_.logFile("redis") << ":\n" << group::logTail(paths_.logFile("redis"), 8);
  processes.terminate("redis", 2000, out);
  return false;
}

}  // namespace gtpcp::launcher
