// Addresses of both families as the emulator and the relay take them on the
// command line and print them, and their sockets and batches carrying
// datagrams over the IPv4 and IPv6 loopback addresses.
#include "tools/peer/udp.h"

#include <poll.h>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace gtpcp::peer {
namespace {

const IpAddress kLoopback6 = IpAddress::ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});

Endpoint endpoint(std::string_view text) {
  Endpoint e;
  EXPECT_TRUE(parseEndpoint(text, kGtpcPort, e)) << text;
  return e;
}

TEST(Addresses, Ipv4IsHeldMappedAndKeepsItsHostOrderValue) {
  const IpAddress a(0x7f00000b);
  EXPECT_TRUE(a.isV4());
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.v4(), 0x7f00000bu);
  EXPECT_EQ(a, IpAddress(0x7f00000b));
  EXPECT_NE(a, IpAddress(0x7f00000c));
  EXPECT_TRUE(IpAddress().isV4());  // 0.0.0.0
  EXPECT_FALSE(kLoopback6.isV4());
  EXPECT_EQ(kLoopback6.family(), AF_INET6);
}

TEST(Addresses, ParseAndPrintBothFamilies) {
  EXPECT_EQ(endpoint("127.0.0.1"), (Endpoint{0x7f000001, kGtpcPort}));
  EXPECT_EQ(endpoint("127.0.0.1:2124"), (Endpoint{0x7f000001, 2124}));
  EXPECT_EQ(endpoint("::1"), (Endpoint{kLoopback6, kGtpcPort}));
  EXPECT_EQ(endpoint("[::1]"), (Endpoint{kLoopback6, kGtpcPort}));
  EXPECT_EQ(endpoint("[::1]:2124"), (Endpoint{kLoopback6, 2124}));
  const Endpoint ula = endpoint("[fd00:77::11]:40000");
  EXPECT_FALSE(ula.addr.isV4());
  EXPECT_EQ(ula.addr.octets[0], 0xfd);
  EXPECT_EQ(ula.addr.octets[3], 0x77);
  EXPECT_EQ(ula.addr.octets[15], 0x11);
  EXPECT_EQ(toString(ula), "[fd00:77::11]:40000");
  EXPECT_EQ(addressToString(ula.addr), "fd00:77::11");
  EXPECT_EQ(toString(Endpoint{0x7f000001, 2123}), "127.0.0.1:2123");
  EXPECT_EQ(addressToString(0x7f00000b), "127.0.0.11");
  // An IPv4-mapped IPv6 address is that IPv4 address.
  EXPECT_EQ(endpoint("::ffff:127.0.0.1"), (Endpoint{0x7f000001, kGtpcPort}));

  IpAddress a;
  EXPECT_TRUE(parseAddress("fd00::21", a));
  EXPECT_EQ(addressToString(a), "fd00::21");
  for (std::string_view bad :
       {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "[127.0.0.1]:2123",
        "[::1", "[::1]2123", "[::1]:", "[::1]:x", "fd00::1%lo", "fd00::1::2", "fd00:::1",
        "[fd00::1]:99999", "localhost"}) {
    Endpoint e;
    EXPECT_FALSE(parseEndpoint(bad, kGtpcPort, e)) << bad;
  }
  EXPECT_FALSE(parseAddress("[::1]", a));
  EXPECT_FALSE(parseAddress("127.0.0.1:2123", a));
}

TEST(Addresses, LoopbackIs127Slash8AndColonColon1) {
  EXPECT_TRUE(isLoopback(0x7f000001));
  EXPECT_TRUE(isLoopback(0x7f4d0715));
  EXPECT_FALSE(isLoopback(0x0a000001));
  EXPECT_TRUE(isLoopback(kLoopback6));
  EXPECT_FALSE(isLoopback(endpoint("fd00::1").addr));
  EXPECT_FALSE(isLoopback(endpoint("::").addr));
}

TEST(Addresses, SockaddrsOfEitherFamilyAndBack) {
  for (const Endpoint& e : {Endpoint{0x7f000001, 2123}, endpoint("[fd00::21]:2124")}) {
    SocketAddress sa{};
    const socklen_t length = toSockaddr(e, sa);
    EXPECT_EQ(sa.any.sa_family, e.addr.family());
    EXPECT_EQ(length, e.addr.isV4() ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    EXPECT_EQ(fromSockaddr(sa), e);
  }
}

// Sends `count` datagrams from `a` to `b` through a SendBatch and receives
// them with a RecvBatch; checks payloads and the source address.
void exchange(UdpSocket& a, UdpSocket& b, int count) {
  SendBatch out;
  for (int i = 0; i < count; ++i) {
    auto buf = out.reserve(a.fd());
    buf[0] = static_cast<uint8_t>(i);
    out.commit(b.local(), 1);
  }
  out.flush(a.fd());
  EXPECT_EQ(out.sent(), static_cast<uint64_t>(count));
  EXPECT_EQ(out.sendErrors(), 0u);
  RecvBatch in;
  int received = 0;
  while (received < count) {
    pollfd p{b.fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1) << "received " << received << " of " << count;
    const int n = in.receive(b);
    ASSERT_GT(n, 0);
    for (int i = 0; i < n; ++i, ++received) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(in.data(k).size(), 1u);
      EXPECT_EQ(in.data(k)[0], static_cast<uint8_t>(received));
      EXPECT_EQ(in.source(k), a.local());
    }
  }
}

TEST(Sockets, BatchesCarryDatagramsOverIpv6AndIpv4Loopback) {
  for (const IpAddress& addr : {kLoopback6, IpAddress(0x7f000001)}) {
    UdpSocket a, b;
    ASSERT_EQ(a.open(Endpoint{addr, 0}, 1 << 20, 1 << 20), "");
    ASSERT_EQ(b.open(Endpoint{addr, 0}, 1 << 20, 1 << 20), "");
    EXPECT_EQ(a.local().addr, addr);
    EXPECT_NE(a.local().port, 0);
    exchange(a, b, 3);
    exchange(b, a, 70);  // more than one batch
  }
}

TEST(Sockets, AnIpv6SocketRefusesAnIpv4Destination) {
  UdpSocket s;
  ASSERT_EQ(s.open(Endpoint{kLoopback6, 0}, 1 << 16, 1 << 16), "");
  SendBatch out;
  const std::array<uint8_t, 1> one{1};
  out.push(s.fd(), Endpoint{0x7f000001, 9}, one);
  out.flush(s.fd());
  EXPECT_EQ(out.sent(), 0u);
  EXPECT_EQ(out.sendErrors(), 1u);
}

}  // namespace
}  // namespace gtpcp::peer
