// A bad Redis configuration is refused with one sentence naming the key.
#include <gtest/gtest.h>

#include "persister/lib/redis_client_impl.h"

namespace gtpcp::persister {
namespace {

RedisClientConfig valid() {
  RedisClientConfig c;
  c.endpoints.push_back({"127.0.0.1", 6379});
  return c;
}

TEST(RedisConfig, ValidOneIsAccepted) { EXPECT_EQ(validate(valid()), ""); }

TEST(RedisConfig, EachMistakeIsNamed) {
  auto c = valid();
  c.endpoints.clear();
  EXPECT_NE(validate(c).find("no address"), std::string::npos);
  c = valid();
  c.endpoints.push_back({"127.0.0.1", 6380});
  EXPECT_NE(validate(c).find("single mode takes exactly one"), std::string::npos);
  c = valid();
  c.endpoints[0].port = 70000;
  EXPECT_NE(validate(c).find("bad address '127.0.0.1:70000'"), std::string::npos);
  c = valid();
  c.mode = RedisMode::kSentinel;
  EXPECT_NE(validate(c).find("redis.master_name"), std::string::npos);
  c = valid();
  c.max_pending = 0;
  EXPECT_NE(validate(c).find("redis.max_pending"), std::string::npos);
  c = valid();
  c.request_timeout_ms = 1;
  EXPECT_NE(validate(c).find("redis.request_timeout_ms"), std::string::npos);
}

TEST(RedisConfig, CreateRefusesABadConfiguration) {
  EventLoop loop;
  auto c = valid();
  c.endpoints.clear();
  const auto client = RedisClientImpl::create(loop, c);
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().find("no address"), std::string::npos);
}

TEST(RedisConfig, EndpointsParse) {
  const auto e = parseEndpoint("10.0.0.1:7000");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "10.0.0.1");
  EXPECT_EQ(e->port, 7000);
  EXPECT_FALSE(parseEndpoint("10.0.0.1"));
  EXPECT_FALSE(parseEndpoint(":7000"));
  EXPECT_FALSE(parseEndpoint("h:0"));
  EXPECT_FALSE(parseEndpoint("h:7000x"));
}

}  // namespace
}  // namespace gtpcp::persister
