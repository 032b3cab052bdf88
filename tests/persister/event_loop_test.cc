#include "persister/lib/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

#include "common/time/clock.h"

namespace gtpcp::persister {
namespace {


TEST(EventLoop, TimersFireInDeadlineOrderAndDisarmedOnesDoNot) {
  EventLoop loop;
  std::vector<int> order;
  struct Tag {
    std::vector<int>* order;
    int id;
  };
  Tag a{&order, 1}, b{&order, 2}, c{&order, 3};
  auto fn = [](void* p) noexcept {
    auto* t = static_cast<Tag*>(p);
    t->order->push_back(t->id);
  };
  Timer ta(loop, fn, &a), tb(loop, fn, &b), tc(loop, fn, &c);
  ta.arm(30);
  tb.arm(10);
  tc.arm(20);
  tc.disarm();
  const uint64_t start = monotonicNs();
  while (order.size() < 2 && monotonicNs() - start < 2'000'000'000u) loop.runOnce(100);
  EXPECT_EQ(order, (std::vector<int>{2, 1}));
  EXPECT_GE(monotonicNs() - start, 30'000'000u);
  EXPECT_FALSE(ta.armed());
}

TEST(EventLoop, ReadyDescriptorRunsItsHandler) {
  EventLoop loop;
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  int calls = 0;
  IoHandler h{[](void* p, uint32_t events) noexcept {
                if (events & EPOLLIN) ++*static_cast<int*>(p);
              },
              &calls};
  ASSERT_TRUE(loop.add(fd, &h, EPOLLIN));
  loop.runOnce(0);
  EXPECT_EQ(calls, 0);
  const uint64_t one = 1;
  ASSERT_EQ(write(fd, &one, sizeof one), ssize_t(sizeof one));
  loop.runOnce(1000);
  EXPECT_EQ(calls, 1);
  loop.remove(fd);
  loop.runOnce(0);
  EXPECT_EQ(calls, 1);
  close(fd);
}

}  // namespace
}  // namespace gtpcp::persister
