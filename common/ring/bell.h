// Wakes a process that sleeps in epoll_wait (the forwarder, the persister)
// when another process has published into one of the rings it consumes: a
// sleep flag in the sleeper's own segment, and a byte on a unix datagram
// socket the sleeper has in its epoll set. The futex doorbell (doorbell.h)
// serves a process that sleeps on its rings alone; a process that also
// waits for sockets (UDP, Redis connections) needs a file descriptor to be
// woken through, hence this second protocol.
//
// THE PROTOCOL (Dekker's, between "records published" and "sleeper asleep")
//
// Sleeper, in announceSleep(): BELL-S1 store sleeping = 1 (seq_cst), then
// BELL-F1 seq_cst fence; then it looks at its rings once more and waits in
// epoll only when they are empty; awake, endSleep() stores sleeping = 0
// (relaxed: a ringer that still sees 1 only sends a byte too many) and reads
// the bytes rung meanwhile.
//
// Ringer, in ring() after publishing a batch (the ring's release store of its
// head): BELL-F2 seq_cst fence, then a relaxed load of `sleeping`; 1: one
// byte to the sleeper's socket. A busy sleeper costs a ringer one fence and
// one load per batch, and no system call.
//
// No lost wake-up: BELL-F1 and BELL-F2 are ordered one way or the other.
// BELL-F1 first: the ringer's load after BELL-F2 sees the 1 stored before
// BELL-F1, and it sends the byte, which epoll reports however late the
// sleeper waits. BELL-F2 first: the sleeper's look at the rings after
// BELL-F1 sees the head published before BELL-F2, and it does not wait.
//
// A ringer that cannot see the flag (the sleeper's segment does not exist
// yet, or is not attached yet) rings every time: a byte too many is a
// spurious wake-up, a byte too few would be a datagram waiting for a timer.
// Bytes to a socket nobody has bound (the sleeper is restarting) are lost,
// and the new sleeper looks at its rings before its first sleep.
#pragma once

#include <sys/un.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "common/ring/errors.h"

namespace gtpcp::ring {

// In the sleeper's own segment, on a cache line of its own.
struct alignas(64) BellShm {
  // Writer: the sleeper (BELL-S1, and 0 on waking). Readers: the ringers,
  // after BELL-F2.
  std::atomic<uint32_t> sleeping{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// The sleeper's end: the socket bound at `path`, to add to its epoll set.
class BellListener {
 public:
  // Binds `path` (a stale socket file of a predecessor is replaced).
  static Result<BellListener> bind(const std::string& path);
  // A bound socket a predecessor handed over (forwarder/lib/handover.h):
  // the ringers' path names it already.
  static BellListener adopt(int fd, std::string path) noexcept { return BellListener(fd, std::move(path)); }
  BellListener(BellListener&& o) noexcept;
  BellListener& operator=(BellListener&& o) noexcept;
  BellListener(const BellListener&) = delete;
  BellListener& operator=(const BellListener&) = delete;
  ~BellListener();  // closes and unlinks

  int fd() const noexcept { return fd_; }
  // The socket lives on in a successor: closing this copy leaves the path.
  void keepPath() noexcept { path_.clear(); }
  // BELL-S1 and BELL-F1. The caller then looks at its rings once more and
  // waits only when they are empty.
  static void announceSleep(BellShm& bell) noexcept;
  // Awake: the flag down, and the bytes rung meanwhile read.
  void endSleep(BellShm& bell) noexcept;
  // Reads every byte rung so far (epoll reported the socket readable).
  void drain() noexcept;

 private:
  BellListener(int fd, std::string path) noexcept : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// A ringer's end, toward one sleeper's socket at `path`.
class BellRinger {
 public:
  static Result<BellRinger> open(const std::string& path);
  BellRinger(BellRinger&& o) noexcept;
  BellRinger& operator=(BellRinger&& o) noexcept;
  BellRinger(const BellRinger&) = delete;
  BellRinger& operator=(const BellRinger&) = delete;
  ~BellRinger();

  // After publishing: BELL-F2, then a byte unless `bell` says the sleeper
  // is awake. `bell` null: the sleeper's flag is not known yet; rings.
  void ring(const BellShm* bell) noexcept;
  // A byte now, whatever the flag (a command the sleeper should see at once).
  void ringNow() noexcept;

 private:
  BellRinger(int fd, const sockaddr_un& to) noexcept : fd_(fd), to_(to) {}
  int fd_ = -1;
  sockaddr_un to_{};
};

}  // namespace gtpcp::ring
