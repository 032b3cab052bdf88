#include "sender.h"

#include <cerrno>
#include <cstring>

#include "common/group/meta.h"

namespace gtpcp::forwarder {

Sender::Sender(const std::vector<int>& fds, std::size_t batch, ForwarderShm& shm, Clock clock)
    : fds_(fds), batch_(batch), shm_(shm), clock_(clock), per_socket_(fds.size()) {
  for (auto& s : per_socket_) {
    s.msgs.resize(batch);
    s.iov.resize(batch);
    s.names.resize(batch);
    s.copies.resize(batch);
    s.receive_ns.resize(batch);
    s.latency_index.resize(batch);
  }
}

void Sender::queue(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
                   uint64_t receive_ns) noexcept {
  if (socket >= per_socket_.size()) {
    shm_.counters.send_errors.add();
    return;
  }
  Batch& b = per_socket_[socket];
  if (b.count == batch_) flush(socket);
  const std::size_t i = b.count++;
  socklen_t len;
  to.toSockaddr(b.names[i], len);
  b.iov[i] = {const_cast<uint8_t*>(bytes.data()), bytes.size()};
  msghdr& h = b.msgs[i].msg_hdr;
  h = {};
  h.msg_name = &b.names[i];
  h.msg_namelen = len;
  h.msg_iov = &b.iov[i];
  h.msg_iovlen = 1;
  b.receive_ns[i] = 0;
  if (bytes.size() >= 2) {
    const unsigned version = bytes[0] >> 5;
    if (version == 2) shm_.sent_v2[bytes[1]].add();
    if (version == 1) shm_.sent_v1[bytes[1]].add();
    if (receive_ns != 0 && (version == 1 || version == 2)) {
      b.receive_ns[i] = receive_ns;
      b.latency_index[i] = static_cast<uint8_t>(version - 1);
      ++b.timed;
    }
  }
}

bool Sender::reply(uint8_t socket, const net::Address& to, std::span<const uint8_t> bytes,
                   uint64_t receive_ns) noexcept {
  if (socket >= per_socket_.size() || bytes.size() > sizeof(Copy::bytes)) return false;
  Batch& b = per_socket_[socket];
  if (b.count == batch_) flush(socket);
  Copy& c = b.copies[b.count];
  std::memcpy(c.bytes, bytes.data(), bytes.size());
  queue(socket, to, std::span<const uint8_t>(c.bytes, bytes.size()), receive_ns);
  return true;
}

void Sender::flushAll() noexcept {
  for (std::size_t s = 0; s < per_socket_.size(); ++s) flush(s);
}

void Sender::flush(std::size_t socket) noexcept {
  Batch& b = per_socket_[socket];
  std::size_t sent = 0;
  while (sent < b.count) {
    const int n = sendmmsg(fds_[socket], b.msgs.data() + sent, static_cast<unsigned>(b.count - sent), 0);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // The datagram at `sent` was refused (no route, buffer full): count it
    // and go on with the rest. It left nothing to measure.
    shm_.counters.send_errors.add();
    b.receive_ns[sent] = 0;
    ++sent;
  }
  shm_.counters.datagrams_sent.add(b.count);
  if (b.timed != 0) {
    // One clock read for the whole batch, after it went out.
    const uint64_t now = clock_();
    for (std::size_t i = 0; i < b.count; ++i) {
      const uint64_t received = b.receive_ns[i];
      // A time after now is not one of this host's monotonic clock: skipped.
      if (received == 0 || received > now) continue;
      shm_.proxy_latency[b.latency_index[i]].observe(now - received);
    }
    b.timed = 0;
  }
  b.count = 0;
}

std::size_t drainEgressRing(ring::Consumer& ring, std::size_t worker, std::size_t max, Sender& sender,
                            ForwarderShm& shm) noexcept {
  // Relaxed, like the gauge: a metric, no slot is read with it.
  const std::size_t before = ring.depthSlots();
  std::size_t n = 0;
  while (n < max) {
    auto r = ring.peek();
    if (!r) break;
    sender.queue(r->meta->local_socket, group::peerOf(*r->meta), r->payload, r->meta->receive_ns);
    ring.pop();
    ++n;
  }
  if (n == 0) return 0;
  shm.counters.from_workers.add(n);
  // Send before release: the batch points into the ring's slots.
  sender.flushAll();
  ring.release();
  const std::size_t after = ring.depthSlots();
  shm.egress_depth[worker].set(after);
  raiseHighWater(shm.egress_high_water[worker], before > after ? before : after);
  return n;
}

}  // namespace gtpcp::forwarder
