// The persister's event loop: epoll for sockets, a handful of timers, one
// thread, never blocking anywhere but in epoll_wait.
//
// The Redis access layer has only a few timers (per connection: connect
// deadline and back-off; per client: one tick), so they are kept in a small
// unsorted array and scanned; a heap would buy nothing at that size.
//
// Handlers and timers run only from runOnce(), on the loop's thread. A timer
// armed while timers are being run waits for the next runOnce(), so a
// zero-delay timer is the way to defer work until the current I/O callback
// chain has unwound (hiredis frees contexts at the end of its own callbacks).
#pragma once

#include <cstdint>
#include <vector>

namespace gtpcp::persister {

class EventLoop;

// Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP) of a
// registered descriptor.
struct IoHandler {
  void (*fn)(void* data, uint32_t events) noexcept = nullptr;
  void* data = nullptr;
};

class Timer {
 public:
  using Fn = void (*)(void* data) noexcept;
  Timer(EventLoop& loop, Fn fn, void* data) noexcept : loop_(loop), fn_(fn), data_(data) {}
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // (Re)arms the timer `delay_ms` from now.
  void arm(uint64_t delay_ms) noexcept;
  void disarm() noexcept;
  bool armed() const noexcept { return armed_; }

 private:
  friend class EventLoop;
  EventLoop& loop_;
  Fn fn_;
  void* data_;
  uint64_t deadline_ns_ = 0;
  bool armed_ = false;
};

class EventLoop {
 public:
  // Throws std::system_error when epoll cannot be created (startup only).
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Registers, changes or removes interest in `fd`. `handler` must outlive the
  // registration. False (with errno) when epoll_ctl refuses.
  bool add(int fd, IoHandler* handler, uint32_t events) noexcept;
  bool modify(int fd, IoHandler* handler, uint32_t events) noexcept;
  void remove(int fd) noexcept;

  // Waits for I/O at most `max_wait_ms` (less when a timer is due sooner),
  // runs the handlers of ready descriptors, then the timers that are due.
  void runOnce(uint64_t max_wait_ms) noexcept;

  // CLOCK_MONOTONIC, read once per runOnce() and after waiting.
  uint64_t nowNs() const noexcept { return now_ns_; }

 private:
  friend class Timer;
  void runTimers() noexcept;

  int epoll_fd_ = -1;
  uint64_t now_ns_ = 0;
  std::vector<Timer*> timers_;  // armed ones only
  std::vector<Timer*> due_;     // scratch, capacity kept
};

}  // namespace gtpcp::persister
