#include "tools/relay/relay.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

namespace gtpcp::relay {

using peer::isLoopback;
using peer::kGtpcPort;
using peer::monotonicNs;

namespace {
constexpr uint32_t kSignalTag = 0xffffffffu;
constexpr int kMaxBatchesPerTurn = 8;
constexpr int64_t kSecond = 1'000'000'000;
}  // namespace

std::vector<std::string> makeRelayConfig(const RelayOptions& o, RelayConfig& out) {
  std::vector<std::string> errors;
  out = RelayConfig{};
  auto endpoint = [&](const std::string& option, const std::string& text, Endpoint& e) {
    if (!peer::parseEndpoint(text, kGtpcPort, e)) {
      errors.push_back(option + ": '" + text + "' is not ADDR or ADDR:PORT");
      return;
    }
    if (!isLoopback(e.addr) && !o.allow_non_loopback)
      errors.push_back(option + ": " + text + " is not a loopback address (use --allow-non-loopback)");
  };
  if (o.listen.empty()) errors.push_back("--listen: required");
  else endpoint("--listen", o.listen, out.listen);
  if (o.upstream.empty()) errors.push_back("--upstream: required");
  else endpoint("--upstream", o.upstream, out.upstream);
  if (o.pairs.empty()) errors.push_back("--pairs: give at least one downstream address");
  for (const auto& text : o.pairs) {
    Endpoint e;
    endpoint("--pairs", text, e);
    if (std::find(out.pairs.begin(), out.pairs.end(), e) != out.pairs.end())
      errors.push_back("--pairs: " + text + " given twice");
    out.pairs.push_back(e);
  }
  if (out.pairs.size() > 1000) errors.push_back("--pairs: at most 1000");
  if (o.duration < 0 || o.duration > 7 * 86400) errors.push_back("--duration: 0 to a week");
  if (o.rcvbuf < 4096 || o.sndbuf < 4096) errors.push_back("--rcvbuf/--sndbuf: at least 4096");
  out.duration_s = o.duration;
  out.progress = o.progress;
  out.json_path = o.json;
  out.rcvbuf = o.rcvbuf;
  out.sndbuf = o.sndbuf;
  return errors;
}

Relay::Relay(RelayConfig config) : config_(std::move(config)) {}

Relay::~Relay() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
}

std::string Relay::open() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return std::string("epoll_create1: ") + std::strerror(errno);
  for (std::size_t i = 0; i <= config_.pairs.size(); ++i) {
    peer::UdpSocket s;
    const Endpoint local = i == 0 ? config_.listen : Endpoint{config_.listen.addr, 0};
    if (auto e = s.open(local, config_.rcvbuf, config_.sndbuf); !e.empty()) return e;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, s.fd(), &ev) != 0)
      return std::string("epoll_ctl: ") + std::strerror(errno);
    sockets_.push_back(std::move(s));
    batches_.push_back(std::make_unique<peer::SendBatch>());
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return std::string("sigprocmask: ") + std::strerror(errno);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) return std::string("signalfd: ") + std::strerror(errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kSignalTag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, signal_fd_, &ev) != 0)
    return std::string("epoll_ctl: ") + std::strerror(errno);
  return {};
}

void Relay::fromDownstream() noexcept {
  for (int b = 0; b < kMaxBatchesPerTurn; ++b) {
    const int n = recv_.receive(sockets_[0]);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (recv_.truncated(k)) {
        ++stats_.truncated;
        continue;
      }
      const Endpoint& from = recv_.source(k);
      std::size_t pair = 0;
      while (pair < config_.pairs.size() && !(config_.pairs[pair] == from)) ++pair;
      if (pair == config_.pairs.size()) {
        ++stats_.unknown_downstream;
        continue;
      }
      ++stats_.from_downstream;
      stats_.bytes_up += recv_.data(k).size();
      batches_[pair + 1]->pushRef(sockets_[pair + 1].fd(), config_.upstream, recv_.data(k));
    }
    // The batches point into the receive buffers: send before receiving again.
    for (std::size_t p = 1; p < batches_.size(); ++p) {
      stats_.to_upstream += batches_[p]->pending();
      if (batches_[p]->pending() != 0) batches_[p]->flush(sockets_[p].fd());
    }
    if (static_cast<std::size_t>(n) < peer::RecvBatch::kBatch) return;
  }
}

void Relay::fromUpstream(std::size_t pair) noexcept {
  peer::UdpSocket& socket = sockets_[pair + 1];
  for (int b = 0; b < kMaxBatchesPerTurn; ++b) {
    const int n = recv_.receive(socket);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (recv_.truncated(k)) {
        ++stats_.truncated;
        continue;
      }
      // Real gateways may answer from another port than 2123: the address
      // is what identifies the upstream.
      if (recv_.source(k).addr != config_.upstream.addr) {
        ++stats_.unknown_upstream;
        continue;
      }
      ++stats_.from_upstream;
      stats_.bytes_down += recv_.data(k).size();
      batches_[0]->pushRef(sockets_[0].fd(), config_.pairs[pair], recv_.data(k));
    }
    stats_.to_downstream += batches_[0]->pending();
    if (batches_[0]->pending() != 0) batches_[0]->flush(sockets_[0].fd());
    if (static_cast<std::size_t>(n) < peer::RecvBatch::kBatch) return;
  }
}

void Relay::collect() noexcept {
  stats_.send_full = stats_.send_errors = stats_.drops = 0;
  for (std::size_t i = 0; i < sockets_.size(); ++i) {
    stats_.send_full += batches_[i]->sendFull();
    stats_.send_errors += batches_[i]->sendErrors();
    stats_.drops += sockets_[i].drops();
  }
}

nlohmann::json Relay::toJson(double elapsed_s) const {
  const RelayStats& s = stats_;
  return {{"elapsed_s", elapsed_s},
          {"listen", peer::toString(config_.listen)},
          {"upstream", peer::toString(config_.upstream)},
          {"from_downstream", s.from_downstream},
          {"to_upstream", s.to_upstream},
          {"from_upstream", s.from_upstream},
          {"to_downstream", s.to_downstream},
          {"unknown_downstream", s.unknown_downstream},
          {"unknown_upstream", s.unknown_upstream},
          {"truncated", s.truncated},
          {"bytes_up", s.bytes_up},
          {"bytes_down", s.bytes_down},
          {"send_full", s.send_full},
          {"send_errors", s.send_errors},
          {"drops", s.drops}};
}

int Relay::run(std::ostream& out, std::ostream& err) {
  const int64_t start = monotonicNs();
  const int64_t end = config_.duration_s > 0
                          ? start + static_cast<int64_t>(config_.duration_s * 1e9)
                          : std::numeric_limits<int64_t>::max();
  int64_t next_progress = start + kSecond;
  uint64_t last = 0;
  epoll_event events[64];
  bool stop = false;
  while (!stop) {
    int64_t now = monotonicNs();
    if (now >= end) break;
    const int64_t wait = std::min({end - now, next_progress - now, kSecond});
    timespec ts{static_cast<time_t>(std::max<int64_t>(wait, 0) / kSecond),
                static_cast<long>(std::max<int64_t>(wait, 0) % kSecond)};
    const int n = ::epoll_pwait2(epoll_fd_, events, 64, &ts, nullptr);
    for (int i = 0; i < n; ++i) {
      const uint32_t tag = events[i].data.u32;
      if (tag == kSignalTag) {
        signalfd_siginfo info;
        while (::read(signal_fd_, &info, sizeof info) == sizeof info) stop = true;
      } else if (tag == 0) {
        fromDownstream();
      } else {
        fromUpstream(tag - 1);
      }
    }
    now = monotonicNs();
    if (now >= next_progress) {
      if (config_.progress) {
        collect();
        const uint64_t total = stats_.from_downstream + stats_.from_upstream;
        char line[256];
        std::snprintf(line, sizeof line,
                      "relay t=%.1fs datagrams/s=%llu up=%llu down=%llu drops=%llu\n",
                      static_cast<double>(now - start) / 1e9,
                      static_cast<unsigned long long>(total - last),
                      static_cast<unsigned long long>(stats_.from_downstream),
                      static_cast<unsigned long long>(stats_.from_upstream),
                      static_cast<unsigned long long>(stats_.drops));
        err << line << std::flush;
        last = total;
      }
      next_progress += kSecond;
    }
  }
  collect();
  const double elapsed = static_cast<double>(monotonicNs() - start) / 1e9;
  const RelayStats& s = stats_;
  out << "gtpcp-relay " << peer::toString(config_.listen) << " <-> " << peer::toString(config_.upstream)
      << ", " << config_.pairs.size() << " pair(s), " << elapsed << " s\n"
      << "  downstream -> upstream  " << s.from_downstream << " received, " << s.to_upstream
      << " sent, " << s.bytes_up << " octets\n"
      << "  upstream -> downstream  " << s.from_upstream << " received, " << s.to_downstream
      << " sent, " << s.bytes_down << " octets\n"
      << "  unknown sources         downstream " << s.unknown_downstream << ", upstream "
      << s.unknown_upstream << "; truncated " << s.truncated << "\n"
      << "  socket                  drops " << s.drops << " (SO_RXQ_OVFL), send refused "
      << s.send_full << ", send errors " << s.send_errors << "\n";
  if (!config_.json_path.empty()) {
    std::ofstream f(config_.json_path);
    f << toJson(elapsed).dump(2) << "\n";
    if (!f) err << "gtpcp-relay: cannot write " << config_.json_path << "\n";
  }
  return 0;
}

}  // namespace gtpcp::relay
