// The forwarder's socket hand-over (forwarder/lib/handover.h) between two
// ends in one process, the predecessor's on a thread of its own: what the
// kernel queued on a socket before the hand-over is read from the
// successor's copy, the predecessor resumes when the successor refuses or
// goes away, and a plan that names other addresses is refused.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "forwarder/lib/forwarder.h"
#include "forwarder/lib/handover.h"
#include "tests/support/process.h"

namespace gtpcp::forwarder {
namespace {

using namespace std::chrono_literals;

// A UDP socket on 127.0.0.1, an ephemeral port.
int udpSocket(net::Address& bound) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  bound = net::Address::fromSockaddr(reinterpret_cast<const sockaddr*>(&ss));
  return fd;
}

void sendTo(const net::Address& to, const std::string& text) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_storage ss;
  socklen_t len;
  to.toSockaddr(ss, len);
  ASSERT_EQ(::sendto(fd, text.data(), text.size(), 0, reinterpret_cast<sockaddr*>(&ss), len),
            static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string receive(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) return "";
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

class HandoverTest : public ::testing::Test {
 protected:
  HandoverTest() : path_(dir_.file("forwarder.handover")) {
    session_ = udpSocket(session_address_);
    fresh_ = udpSocket(fresh_address_);
    int pair[2];
    ::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair);
    bell_ = pair[0];
    bell_ringer_ = pair[1];
  }
  ~HandoverTest() override {
    for (int fd : {session_, fresh_, bell_, bell_ringer_})
      if (fd >= 0) ::close(fd);
  }
  // The predecessor's end: waits for a successor, then hands over.
  std::future<std::pair<bool, std::string>> serve(HandoverListener& l) {
    return std::async(std::launch::async, [&l, this] {
      pollfd p{l.fd(), POLLIN, 0};
      ::poll(&p, 1, 5000);
      std::string why;
      const bool handed = l.handOver(HandedSockets{{session_}, {-1}, bell_}, why);
      return std::make_pair(handed, why);
    });
  }

  testing::TempDir dir_;
  std::string path_;
  net::Address session_address_, fresh_address_;
  int session_ = -1, fresh_ = -1, bell_ = -1, bell_ringer_ = -1;
};

TEST_F(HandoverTest, NobodyServingIsAPlainStart) {
  auto r = takeOver(path_, {session_address_}, 1s);
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(*r);
}

TEST_F(HandoverTest, WhatTheKernelQueuedIsReadFromTheSuccessorsCopy) {
  auto l = HandoverListener::listen(path_);
  ASSERT_TRUE(l) << l.error();
  sendTo(session_address_, "queued before");
  auto predecessor = serve(*l);
  auto r = takeOver(path_, {session_address_}, 3s);
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(*r);
  Inherited& got = **r;
  ASSERT_EQ(got.sockets.sockets.size(), 1u);
  EXPECT_EQ(got.sockets.new_sockets, std::vector<int>{-1});
  EXPECT_NE(got.sockets.sockets[0], session_) << "a descriptor of this process's own, not the number";
  ASSERT_TRUE(got.confirm());
  const auto [handed, why] = predecessor.get();
  EXPECT_TRUE(handed) << why;
  // The predecessor closes its copies and exits: the sockets live on.
  ::close(session_);
  session_ = -1;
  EXPECT_EQ(receive(got.sockets.sockets[0]), "queued before");
  sendTo(session_address_, "sent after");
  EXPECT_EQ(receive(got.sockets.sockets[0]), "sent after");
  // The bell the workers ring reaches the successor.
  ASSERT_EQ(::send(bell_ringer_, "b", 1, 0), 1);
  EXPECT_EQ(receive(got.sockets.bell), "b");
  got.sockets.closeAll();
}

// A successor counts socket overflows from the kernel's running count on
// the socket it inherited (SO_RXQ_OVFL rides along with each datagram):
// its starting point is that count, read when it takes the socket over,
// not 0, or it would count the predecessor's drops again.
TEST_F(HandoverTest, AnInheritedSocketsDropsSoFarAreItsStartingPoint) {
  const int small = 2048;  // the kernel doubles it, and then takes a few datagrams
  const int one = 1;
  ASSERT_EQ(::setsockopt(session_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
  ASSERT_EQ(::setsockopt(session_, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one), 0);
  EXPECT_EQ(socketDrops(session_), 0u);
  for (int i = 0; i < 200; ++i) sendTo(session_address_, std::string(512, 'x'));
  const uint32_t before = socketDrops(session_);
  EXPECT_GT(before, 0u) << "nothing dropped: the buffer took 200 datagrams";
  // A datagram carries the count as it was when it was queued: the one
  // queued after the flood says what socketDrops() said.
  char data[1024];
  while (::recv(session_, data, sizeof data, MSG_DONTWAIT) > 0) {
  }
  sendTo(session_address_, "after");
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint32_t))];
  iovec iov{data, sizeof data};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ASSERT_GT(::recvmsg(session_, &m, MSG_DONTWAIT), 0);
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->cmsg_type, SO_RXQ_OVFL);
  uint32_t reported = 0;
  std::memcpy(&reported, CMSG_DATA(c), sizeof reported);
  EXPECT_EQ(reported, before);
  EXPECT_EQ(socketDrops(-1), 0u);
}

TEST_F(HandoverTest, AnotherPlanIsRefusedAndThePredecessorResumes) {
  auto l = HandoverListener::listen(path_);
  ASSERT_TRUE(l) << l.error();
  auto predecessor = serve(*l);
  auto r = takeOver(path_, {fresh_address_}, 3s);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("is not bound to " + fresh_address_.toString()), std::string::npos) << r.error();
  const auto [handed, why] = predecessor.get();
  EXPECT_FALSE(handed);
  EXPECT_EQ(why, "the successor refused the sockets");
  // Still the predecessor's: it serves on.
  sendTo(session_address_, "still mine");
  EXPECT_EQ(receive(session_), "still mine");
}

TEST_F(HandoverTest, ASuccessorThatExitsUnconfirmedLeavesThePredecessorServing) {
  auto l = HandoverListener::listen(path_);
  ASSERT_TRUE(l) << l.error();
  auto predecessor = serve(*l);
  {
    auto r = takeOver(path_, {session_address_}, 3s);
    ASSERT_TRUE(r && *r);
    (*r)->sockets.closeAll();
  }  // gone without confirming
  const auto [handed, why] = predecessor.get();
  EXPECT_FALSE(handed);
  EXPECT_NE(why.find("refused"), std::string::npos) << why;
}

TEST_F(HandoverTest, TheListenersPathIsRemovedOnlyWhileItIsItsOwn) {
  {
    auto listened = HandoverListener::listen(path_);
    ASSERT_TRUE(listened);
    std::optional<HandoverListener> first(std::move(*listened));
    auto second = HandoverListener::listen(path_);  // a successor binds the path again
    ASSERT_TRUE(second);
    first.reset();  // the predecessor exits
    EXPECT_EQ(::access(path_.c_str(), F_OK), 0) << "the predecessor removed its successor's path";
  }
  EXPECT_NE(::access(path_.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace gtpcp::forwarder
