#include "event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "common/time/clock.h"

namespace gtpcp::persister {

Timer::~Timer() { disarm(); }

void Timer::arm(uint64_t delay_ms) noexcept {
  deadline_ns_ = monotonicNs() + delay_ms * 1'000'000u;
  if (!armed_) {
    armed_ = true;
    loop_.timers_.push_back(this);
  }
}

void Timer::disarm() noexcept {
  if (!armed_) return;
  armed_ = false;
  auto& v = loop_.timers_;
  const auto it = std::find(v.begin(), v.end(), this);
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
}

EventLoop::EventLoop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
  now_ns_ = monotonicNs();
}

EventLoop::~EventLoop() {
  // Timers that outlive the loop must not touch it.
  for (Timer* t : timers_) t->armed_ = false;
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool EventLoop::add(int fd, IoHandler* handler, uint32_t events) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool EventLoop::modify(int fd, IoHandler* handler, uint32_t events) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void EventLoop::remove(int fd) noexcept { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::runOnce(uint64_t max_wait_ms) noexcept {
  now_ns_ = monotonicNs();
  uint64_t wait_ms = max_wait_ms;
  for (const Timer* t : timers_) {
    const uint64_t left = t->deadline_ns_ > now_ns_ ? (t->deadline_ns_ - now_ns_ + 999'999) / 1'000'000 : 0;
    wait_ms = std::min(wait_ms, left);
  }
  epoll_event events[64];
  const int n = epoll_wait(epoll_fd_, events, 64, static_cast<int>(std::min<uint64_t>(wait_ms, 60'000)));
  now_ns_ = monotonicNs();
  for (int i = 0; i < n; ++i) {
    auto* h = static_cast<IoHandler*>(events[i].data.ptr);
    h->fn(h->data, events[i].events);
  }
  runTimers();
}

void EventLoop::runTimers() noexcept {
  due_.clear();
  for (Timer* t : timers_)
    if (t->deadline_ns_ <= now_ns_) due_.push_back(t);
  for (Timer* t : due_) {
    // An earlier timer's callback may have disarmed or re-armed this one.
    if (!t->armed_ || t->deadline_ns_ > now_ns_) continue;
    t->disarm();
    t->fn_(t->data_);
  }
}

}  // namespace gtpcp::persister
