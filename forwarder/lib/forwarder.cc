#include "forwarder.h"
#include "common/control/heartbeat.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/group/meta.h"
#include "common/gtp/v1_tables.gen.h"
#include "common/gtp/v2_tables.gen.h"
#include "common/time/clock.h"
#include "common/group/paths.h"
#include "common/group/rings.h"
#include "handover.h"
#include "sender.h"

namespace gtpcp::forwarder {

namespace {


std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

constexpr std::size_t kMaxDatagram = 65535;
constexpr int kSleepMs = 200;  // housekeeping (heartbeat) when idle

tl::expected<int, std::string> bindUdp(const net::Address& a, int buffer_bytes, bool reuseport, bool freebind) {
  const int fd = socket(a.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return tl::unexpected(errnoText("socket"));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    std::string e = errnoText("SO_REUSEPORT");
    close(fd);
    return tl::unexpected(e);
  }
  if (a.family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (freebind) {
    if (a.family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);
    else setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
  }
  // Ask for the size; as root, force it past rmem_max/wmem_max.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  // The kernel's count of datagrams dropped for a full buffer, per datagram.
  setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
  sockaddr_storage ss;
  socklen_t len;
  a.toSockaddr(ss, len);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    std::string e = errnoText("bind " + a.toString());
    close(fd);
    return tl::unexpected(e);
  }
  return fd;
}

// The kernel's choice between the two sockets of one address (a reuseport
// group: index 0 bound first, the session socket, index 1 the new-session
// socket): GTPv2-C Create Session Requests (version 2, type 32) and GTPv1-C
// Create PDP Context Requests (version 1, type 16) go to the new-session
// socket, everything else to the session socket. A flood of creations then
// queues in its own socket buffer, and a Modify Bearer (Update PDP Context)
// never waits behind it in the kernel. The program sees the UDP payload; a
// load past its end returns 0: the session socket. (A secondary PDP
// context's request, TEID not 0, lands on the new-session socket too; the
// dispatcher sends it to its session's priority ring.)
bool steerCreations(int fd) {
  constexpr uint32_t kCreateSessionRequest =
      static_cast<uint8_t>(gtp::v2::MessageType::kCreateSessionRequest);
  constexpr uint32_t kCreatePdpContextRequest =
      static_cast<uint8_t>(gtp::v1::MessageType::kCreatePdpContextRequest);
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),                                // 0: A = flags octet
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xe0),                            // 1: version bits
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40, 0, 2),                      // 2: GTPv2? else 5
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),                                // 3: A = message type
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kCreateSessionRequest, 3, 4),     // 4: 8 : 9
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20, 0, 3),                      // 5: GTPv1? else 9
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),                                // 6: A = message type
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kCreatePdpContextRequest, 0, 1),  // 7: 8 : 9
      BPF_STMT(BPF_RET | BPF_K, 1),                                         // 8: new-session socket
      BPF_STMT(BPF_RET | BPF_K, 0),                                         // 9: session socket
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &program, sizeof program) == 0;
}

}  // namespace

// Receive side: one batch of buffers, reused every turn.
struct Forwarder::ReceiveBuffers {
  explicit ReceiveBuffers(std::size_t batch)
      : data(batch * kMaxDatagram), names(batch), iov(batch), control(batch), msgs(batch), overflow() {
    for (std::size_t i = 0; i < batch; ++i) {
      iov[i] = {data.data() + i * kMaxDatagram, kMaxDatagram};
    }
  }
  void reset(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      msghdr& h = msgs[i].msg_hdr;
      h = {};
      h.msg_name = &names[i];
      h.msg_namelen = sizeof names[i];
      h.msg_iov = &iov[i];
      h.msg_iovlen = 1;
      h.msg_control = control[i].bytes;
      h.msg_controllen = sizeof control[i].bytes;
    }
  }
  struct Control {
    alignas(cmsghdr) uint8_t bytes[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(timespec))];
  };
  std::vector<uint8_t> data;
  std::vector<sockaddr_storage> names;
  std::vector<iovec> iov;
  std::vector<Control> control;
  std::vector<mmsghdr> msgs;
  std::vector<uint32_t> overflow;  // per socket (session sockets, then new-session ones), the kernel's last drop count
};

tl::expected<std::unique_ptr<Forwarder>, std::string> Forwarder::open(const ForwarderOptions& options) {
  std::unique_ptr<Forwarder> f(new Forwarder());
  f->options_ = options;
  if (options.workers == 0 || options.workers > kMaxWorkers)
    return tl::unexpected("workers must be 1.." + std::to_string(kMaxWorkers));
  if (options.sockets.sockets.empty()) return tl::unexpected(std::string("no GTP-C address configured"));

  auto segment = ring::SharedSegment::createOrAttach(
      options.paths.forwarderSegment(), sizeof(ForwarderShm), kForwarderSegmentKind,
      [](void* payload, std::size_t) -> ring::Result<void> {
        new (payload) ForwarderShm();
        return {};
      });
  if (!segment) return tl::unexpected(segment.error().message);
  f->segment_.emplace(std::move(*segment));
  f->shm_ = static_cast<ForwarderShm*>(f->segment_->payload());
  auto table = ring::SharedSegment::createOrAttach(
      options.paths.gatewayTableSegment(), sizeof(GatewayTableShm), kGatewayTableSegmentKind,
      [](void* payload, std::size_t) -> ring::Result<void> {
        new (payload) GatewayTableShm();
        return {};
      });
  if (!table) return tl::unexpected(table.error().message);
  f->table_segment_.emplace(std::move(*table));
  f->table_ = static_cast<GatewayTableShm*>(f->table_segment_->payload());
  f->table_->recovery.store(options.recovery, std::memory_order_relaxed);
  if (options.control) {
    auto control = group::attachControl(options.paths.controlSegment());
    if (!control) return tl::unexpected(control.error().message);
    f->control_segment_.emplace(std::move(*control));
    f->control_ = &group::controlOf(*f->control_segment_);
    f->routing_generation_ = options.routing_generation;
    if (options.routing != nullptr) {
      f->control_->forwarder.routing_hash.store(options.routing->contentHash(), std::memory_order_relaxed);
      f->control_->forwarder.routing_failed.store(0, std::memory_order_relaxed);
    }
    // CTL-R2: pairs with CTL-A2 in the control server.
    f->control_->forwarder.routing_generation.store(options.routing_generation, std::memory_order_release);
  }

  // The workers own their rings (common/group/segments.h): gtpcp start
  // starts them first, and a forwarder started alone waits for them.
  for (uint32_t w = 0; w < options.workers; ++w) {
    const std::pair<group::RingKind, uint32_t> rings[] = {{group::RingKind::kPriority, options.priority_slots},
                                                           {group::RingKind::kNew, options.new_slots},
                                                           {group::RingKind::kEgress, options.egress_slots}};
    for (const auto& [kind, slots] : rings) {
      auto seg = group::attachRingSegment(options.paths.ring(w, kind), slots, group::workerOwner(w), group::kOwnerWait);
      if (!seg) return tl::unexpected(seg.error().message);
      f->ring_segments_.push_back(std::move(*seg));
    }
    auto bell = group::attachDoorbellSegment(options.paths.workerDoorbell(w), group::workerOwner(w), group::kOwnerWait);
    if (!bell) return tl::unexpected(bell.error().message);
    f->ring_segments_.push_back(std::move(*bell));
  }
  // A planned restart: the forwarder serving now hands its sockets over.
  // Taken before the rings are attached: it stopped touching them first.
  std::optional<Inherited> inherited;
  if (options.take_over) {
    auto taken = takeOver(options.paths.forwarderHandoverSocket(), options.sockets.sockets, kTakeOverWait);
    if (!taken) return tl::unexpected(taken.error());
    if (!*taken) return tl::unexpected(std::string("no forwarder of the group serves to take the sockets over from"));
    inherited.emplace(std::move(**taken));
    if (inherited->sockets.bell < 0)
      return tl::unexpected(std::string("the running forwarder handed no bell socket over"));
    f->sockets_ = inherited->sockets.sockets;
    f->new_sockets_ = inherited->sockets.new_sockets;
    // The path names the socket already; it stays the predecessor's until
    // this process confirms.
    f->bell_.emplace(ring::BellListener::adopt(inherited->sockets.bell, options.paths.forwarderBellSocket()));
    f->bell_path_ours_ = false;
    inherited->sockets = HandedSockets{};  // the Forwarder's from here
  } else {
    for (const net::Address& a : options.sockets.sockets) {
      auto fd = bindUdp(a, options.socket_buffer_bytes, true, options.freebind);
      if (!fd) return tl::unexpected(fd.error());
      f->sockets_.push_back(*fd);
      // The new-session socket of the same address, and the program that
      // steers creations to it. A kernel without it: one socket, as before.
      auto fresh = bindUdp(a, options.socket_buffer_bytes, true, options.freebind);
      if (!fresh) return tl::unexpected(fresh.error());
      const int one = 1;
      setsockopt(*fresh, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
      if (!steerCreations(*fd)) {
        close(*fresh);
        f->new_sockets_.push_back(-1);
        continue;
      }
      f->new_sockets_.push_back(*fresh);
    }

    // The bell socket the workers write to while the forwarder sleeps.
    auto bell = ring::BellListener::bind(options.paths.forwarderBellSocket());
    if (!bell) return tl::unexpected(bell.error().message);
    f->bell_.emplace(std::move(*bell));
  }

  for (uint32_t w = 0; w < options.workers; ++w) {
    ring::SharedSegment& prio = f->ring_segments_[4 * w];
    ring::SharedSegment& fresh = f->ring_segments_[4 * w + 1];
    ring::SharedSegment& egress = f->ring_segments_[4 * w + 2];
    ring::SharedSegment& bell = f->ring_segments_[4 * w + 3];
    auto p = ring::Producer::attach(prio.payload(), prio.payloadSize());
    auto n = ring::Producer::attach(fresh.payload(), fresh.payloadSize());
    auto e = ring::Consumer::attach(egress.payload(), egress.payloadSize());
    if (!p) return tl::unexpected(p.error().message);
    if (!n) return tl::unexpected(n.error().message);
    if (!e) return tl::unexpected(e.error().message);
    f->ports_.push_back(WorkerPorts{std::move(*p), std::move(*n),
                                    ring::Doorbell(static_cast<ring::DoorbellShm*>(bell.payload())), false});
    f->egress_.push_back(std::move(*e));
  }

  f->epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (f->epoll_ < 0) return tl::unexpected(errnoText("epoll_create1"));
  // data.u64: the socket's index, with kFreshTag for a new-session socket;
  // kBellTag for the bell socket.
  auto watch = [&](int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    return epoll_ctl(f->epoll_, EPOLL_CTL_ADD, fd, &ev) == 0;
  };
  for (std::size_t i = 0; i < f->sockets_.size(); ++i)
    if (!watch(f->sockets_[i], i)) return tl::unexpected(errnoText("epoll_ctl"));
  for (std::size_t i = 0; i < f->new_sockets_.size(); ++i)
    if (f->new_sockets_[i] >= 0 && !watch(f->new_sockets_[i], kFreshTag | i)) return tl::unexpected(errnoText("epoll_ctl"));
  if (!watch(f->bell_->fd(), kBellTag)) return tl::unexpected(errnoText("epoll_ctl"));
  // Everything may hold datagrams at the start.
  f->readable_.assign(f->sockets_.size(), 1);
  f->readable_fresh_.assign(f->new_sockets_.size(), 1);
  f->rx_ = std::make_unique<ReceiveBuffers>(options.batch);
  f->rx_->overflow.assign(f->sockets_.size() * 2, 0);
  // A socket handed over by a predecessor carries the kernel's drop count
  // of its whole life, which the predecessor counted already: only what it
  // drops from now on is this process's to count.
  for (std::size_t i = 0; i < f->sockets_.size(); ++i) {
    f->rx_->overflow[i] = socketDrops(f->sockets_[i]);
    if (i < f->new_sockets_.size()) f->rx_->overflow[f->sockets_.size() + i] = socketDrops(f->new_sockets_[i]);
  }
  f->sender_ = std::make_unique<Sender>(f->sockets_, options.batch, *f->shm_);
  if (options.routing != nullptr)
    f->health_ =
        std::make_unique<GatewayHealth>(*options.routing, options.sockets, *f->shm_, *f->table_, monotonicNs());
  if (options.creations_per_peer != 0) {
    f->peer_limit_ = std::make_unique<PeerRateLimiter>(
        options.creations_per_peer, options.creations_burst != 0 ? options.creations_burst : options.creations_per_peer);
  }
  // Last, once nothing above can fail: the predecessor stops for good.
  if (inherited) {
    if (!inherited->confirm())
      return tl::unexpected(std::string("the running forwarder resumed before this one confirmed the hand-over"));
    f->bell_path_ours_ = true;
    f->took_over_ = true;
    f->shm_->counters.handovers.add();
  }
  // Where the next planned restart asks for the sockets. Without it the
  // forwarder serves all the same; its successor then cannot take over.
  if (auto listener = HandoverListener::listen(options.paths.forwarderHandoverSocket())) {
    f->handover_.emplace(std::move(*listener));
    if (!watch(f->handover_->fd(), kHandoverTag)) f->handover_.reset();
  } else {
    f->notice_ = listener.error() + ": a restart of this forwarder will not be hitless";
  }
  return f;
}

uint32_t socketDrops(int fd) noexcept {
  if (fd < 0) return 0;
  // SK_MEMINFO_DROPS is the count SO_RXQ_OVFL reports with each datagram.
  uint32_t info[SK_MEMINFO_VARS]{};
  socklen_t len = sizeof info;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 || len <= SK_MEMINFO_DROPS * sizeof(uint32_t)) return 0;
  return info[SK_MEMINFO_DROPS];
}

Forwarder::~Forwarder() {
  // The bell socket lives on in a successor (or still serves a predecessor).
  if (bell_ && !bell_path_ours_) bell_->keepPath();
  for (int fd : sockets_) close(fd);
  for (int fd : new_sockets_)
    if (fd >= 0) close(fd);
  if (epoll_ >= 0) close(epoll_);
}

int Forwarder::receive(std::size_t socket, bool fresh) noexcept {
  ReceiveBuffers& rx = *rx_;
  const std::size_t batch = rx.msgs.size();
  const int fd = fresh ? new_sockets_[socket] : sockets_[socket];
  if (fd < 0) return 0;
  uint32_t& overflow = rx.overflow[fresh ? sockets_.size() + socket : socket];
  rx.reset(batch);
  const int n = recvmmsg(fd, rx.msgs.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      shm_->counters.receive_errors.add();
    return 0;
  }
  const uint64_t now = monotonicNs();
  // Creations that waited in the kernel longer than this are refused at once.
  const uint64_t wall = fresh && options_.max_creation_wait_ms != 0 ? realtimeNs() : 0;
  shm_->counters.datagrams_received.add(static_cast<uint64_t>(n));
  if (fresh) shm_->counters.from_new_session_sockets.add(static_cast<uint64_t>(n));
  for (int i = 0; i < n; ++i) {
    const mmsghdr& m = rx.msgs[i];
    uint64_t arrived = 0;  // CLOCK_REALTIME of the kernel's receipt
    // The kernel's running count of drops on this socket rides along, and
    // on the new-session socket the time the datagram arrived.
    for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&m.msg_hdr), c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        uint32_t dropped;
        std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
        if (dropped > overflow) {
          shm_->counters.socket_overflows.add(dropped - overflow);
          overflow = dropped;
        }
      } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts;
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        arrived = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
      }
    }
    if (m.msg_hdr.msg_flags & MSG_TRUNC) {
      shm_->counters.dropped_not_gtp.add();  // larger than any UDP datagram can be: cannot happen
      continue;
    }
    ring::DatagramMeta meta{};
    meta.receive_ns = now;
    meta.local_socket = static_cast<uint8_t>(socket);
    group::setPeer(meta, net::Address::fromSockaddr(reinterpret_cast<const sockaddr*>(&rx.names[i])));
    const std::span<const uint8_t> bytes(rx.data.data() + i * kMaxDatagram, m.msg_len);
    if (wall != 0 && arrived != 0 && wall > arrived &&
        wall - arrived > uint64_t{options_.max_creation_wait_ms} * 1'000'000) {
      // The SGW has waited too long already: a quick No resources beats a
      // late answer, and the worker's time goes to sessions that are up.
      dispatcher_->refuseStaleCreation(meta, bytes);
      continue;
    }
    dispatcher_->dispatch(meta, bytes);
  }
  return n;
}

void Forwarder::pollReadable(int timeout_ms) noexcept {
  epoll_event events[16];
  const int n = epoll_wait(epoll_, events, 16, timeout_ms);
  for (int i = 0; i < n; ++i) {
    const uint64_t tag = events[i].data.u64;
    if (tag == kBellTag) continue;
    if (tag == kHandoverTag) {
      handover_wanted_ = true;
      continue;
    }
    const std::size_t index = tag & ~kFreshTag;
    auto& readable = (tag & kFreshTag) ? readable_fresh_ : readable_;
    if (index < readable.size()) readable[index] = 1;
  }
}

bool Forwarder::drainEgress() noexcept {
  bool any = false;
  for (std::size_t w = 0; w < egress_.size(); ++w) {
    if (drainEgressRing(egress_[w], w, options_.batch * 4, *sender_, *shm_) != 0) any = true;
  }
  return any;
}

bool Forwarder::egressPending() noexcept {
  for (ring::Consumer& c : egress_) {
    if (!c.empty()) return true;
  }
  return false;
}

void Forwarder::sleep() noexcept {
  // BELL-S1, BELL-F1 (common/ring/bell.h): announce the sleep, then look at
  // the egress rings one last time; a worker that published after that sees
  // the flag and rings.
  ring::BellListener::announceSleep(shm_->bell);
  if (!egressPending()) {
    // Until the next Echo Request is due, at most kSleepMs.
    int timeout_ms = kSleepMs;
    if (health_ != nullptr) {
      const uint64_t now = monotonicNs();
      const uint64_t due = health_->nextDue();
      if (due <= now) {
        timeout_ms = 0;
      } else if (due - now < uint64_t{kSleepMs} * 1'000'000) {
        timeout_ms = static_cast<int>((due - now + 999'999) / 1'000'000);
      }
    }
    pollReadable(timeout_ms);
    shm_->counters.wakeups.add();
  }
  bell_->endSleep(shm_->bell);
}

void Forwarder::reloadRouting() noexcept {
  auto in_force = group::routingInForce(*control_);
  if (!in_force) return;
  routing_generation_ = in_force->generation;
  group::ControlAckShm& ack = control_->forwarder;
  auto routing = config::loadRoutingDocument(in_force->path);
  if (routing) {
    health_ = std::make_unique<GatewayHealth>(*routing, options_.sockets, *shm_, *table_, monotonicNs());
    dispatcher_->setHealth(health_.get());
    ack.routing_hash.store(routing->contentHash(), std::memory_order_relaxed);
    ack.routing_failed.store(0, std::memory_order_relaxed);
    shm_->counters.routing_reloads.add();
  } else {
    ack.routing_failed.store(1, std::memory_order_relaxed);
    shm_->counters.routing_reload_failures.add();
  }
  // CTL-R2: pairs with CTL-A2 in the control server: hash and verdict first.
  ack.routing_generation.store(routing_generation_, std::memory_order_release);
}

bool Forwarder::handOver() noexcept {
  handover_wanted_ = false;
  if (!handover_) return false;
  const HandedSockets sockets{sockets_, new_sockets_, bell_->fd()};
  std::string why;
  if (!handover_->handOver(sockets, why)) {
    shm_->counters.handovers_failed.add();
    handover_failure_ = why;
    return false;
  }
  // Neither the status (the successor's now) nor the bell's path is this
  // process's any more; the rings are not to be touched again.
  handed_over_ = true;
  bell_path_ours_ = false;
  return true;
}

void Forwarder::run(const std::atomic<bool>& stop) noexcept {
  dispatcher_ = std::make_unique<Dispatcher>(ports_, *shm_, *table_, *sender_);
  dispatcher_->setControl(control_);
  dispatcher_->setHealth(health_.get());
  dispatcher_->setPeerRateLimit(peer_limit_.get());
  group::ProcessStatusShm& status = shm_->status;
  group::announceServing(status);

  while (!stop.load(std::memory_order_relaxed)) {
    bool work = false;
    const auto batch = static_cast<int>(rx_->msgs.size());
    for (std::size_t s = 0; s < sockets_.size(); ++s) {
      // A few batches per socket per turn keeps one busy socket from starving
      // the egress side; sessions that are up get four for each batch of
      // creations. A short batch means the socket is empty for now.
      for (int round = 0; round < 4 && readable_[s]; ++round) {
        const int n = receive(s, false);
        work |= n > 0;
        if (n < batch) readable_[s] = 0;
      }
      if (s < readable_fresh_.size() && readable_fresh_[s]) {
        const int n = receive(s, true);
        work |= n > 0;
        if (n < batch) readable_fresh_[s] = 0;
      }
    }
    dispatcher_->flush();
    if (health_ != nullptr) health_->tick(monotonicNs(), *sender_);
    sender_->flushAll();  // the forwarder's own replies and Echo Requests
    work |= drainEgress();
    const uint64_t beat_ns = monotonicNs();
    status.heartbeat_ns.store(beat_ns, std::memory_order_relaxed);
    if (heartbeat_ != nullptr) heartbeat_->beat(beat_ns);
    // CTL-A1: pairs with CTL-R1 in the control server (routingInForce() acquires).
    if (control_ != nullptr && control_->routing_generation.load(std::memory_order_relaxed) != routing_generation_)
      reloadRouting();
    // The turn is over: everything read is published, everything taken
    // from the egress rings sent and released. A successor may have it all.
    if (handover_wanted_ && handOver()) return;
    if (!work) {
      sleep();
    } else {
      pollReadable(0);  // what arrived during this turn
    }
  }
  // What the workers answered before they stopped still goes out.
  for (int round = 0; round < 64 && drainEgress(); ++round) {
  }
  sender_->flushAll();
  group::announceStopped(status);
}

}  // namespace gtpcp::forwarder
