// overload.creations_per_peer: a token bucket per peer address.
#include "forwarder/lib/peer_rate_limit.h"

#include <gtest/gtest.h>

#include <string>

namespace gtpcp::forwarder {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

net::Address peer(uint8_t host, uint16_t port = 2123) { return net::Address::v4(gtp::Ipv4{{10, 0, 0, host}}, port); }

int allowedOf(PeerRateLimiter& l, const net::Address& a, int tries, uint64_t now) {
  int allowed = 0;
  for (int i = 0; i < tries; ++i) allowed += l.allow(a, now);
  return allowed;
}

TEST(PeerRateLimiter, ABurstThenTheRate) {
  PeerRateLimiter l(100, 20);
  EXPECT_EQ(allowedOf(l, peer(1), 50, kSecond), 20) << "the burst";
  EXPECT_EQ(allowedOf(l, peer(1), 50, kSecond + kSecond / 10), 10) << "100/s for 0.1 s";
  EXPECT_EQ(allowedOf(l, peer(1), 50, 10 * kSecond), 20) << "refilled to the burst, no more";
}

TEST(PeerRateLimiter, PeersHaveTheirOwnBucketsWhateverTheirPort) {
  PeerRateLimiter l(10, 10);
  EXPECT_EQ(allowedOf(l, peer(1, 2123), 10, kSecond), 10);
  EXPECT_FALSE(l.allow(peer(1, 40000), kSecond)) << "another port of the same SGW shares its bucket";
  EXPECT_EQ(allowedOf(l, peer(2), 10, kSecond), 10) << "another SGW is not held back";
  const net::Address v6 = net::Address::v6(gtp::Ipv6{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, 2123);
  EXPECT_EQ(allowedOf(l, v6, 12, kSecond), 10);
}

TEST(PeerRateLimiter, MorePeersThanBucketsStillLimitsTheBusyOnes) {
  // 16 buckets for 200 peers: the table keeps the recently seen ones.
  PeerRateLimiter l(5, 5, 16);
  uint64_t now = kSecond;
  for (int round = 0; round < 3; ++round) {
    for (uint8_t h = 1; h <= 200; ++h) l.allow(peer(h), now);
    now += kSecond / 1000;
  }
  // A busy peer seen last is limited to its burst.
  EXPECT_EQ(allowedOf(l, peer(250), 20, now), 5);
}

}  // namespace
}  // namespace gtpcp::forwarder
