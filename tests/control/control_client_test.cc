// gtpcp's end of the control channel against a REP socket of the test's own:
// a reply, no server at all, a server that never answers, one that exits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "common/control/control_client.h"

namespace gtpcp::control {
namespace {

using Clock = std::chrono::steady_clock;

class ControlClientTest : public ::testing::Test {
 protected:
  ControlClientTest() {
    char tmpl[] = "/tmp/gtpcp-control-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    endpoint_ = "ipc://" + dir_ + "/control.ipc";
  }
  ~ControlClientTest() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::string endpoint_;
};

proto::ControlRequest statusRequest() {
  proto::ControlRequest r;
  r.mutable_status();
  return r;
}

TEST_F(ControlClientTest, AReplyComesBackWhole) {
  zmq::context_t context(1);
  zmq::socket_t rep(context, zmq::socket_type::rep);
  rep.bind(endpoint_);
  std::thread server([&] {
    zmq::message_t m;
    ASSERT_TRUE(rep.recv(m));
    proto::ControlRequest request;
    ASSERT_TRUE(request.ParseFromArray(m.data(), static_cast<int>(m.size())));
    proto::ControlReply reply;
    reply.set_ok(request.has_drain() && request.drain().on());
    reply.set_text("draining\n");
    reply.set_transactions_open(7);
    std::string bytes;
    reply.SerializeToString(&bytes);
    rep.send(zmq::buffer(bytes));
  });
  proto::ControlRequest request;
  request.mutable_drain()->set_on(true);
  auto reply = controlRequest(endpoint_, request, 5000);
  server.join();
  ASSERT_TRUE(reply.has_value()) << reply.error();
  EXPECT_TRUE(reply->ok());
  EXPECT_EQ(reply->text(), "draining\n");
  EXPECT_EQ(reply->transactions_open(), 7u);
}

TEST_F(ControlClientTest, NoServerIsSaidAtOnce) {
  const auto t0 = Clock::now();
  auto reply = controlRequest(endpoint_, statusRequest(), 5000);
  ASSERT_FALSE(reply.has_value());
  EXPECT_NE(reply.error().find("no control server"), std::string::npos) << reply.error();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(1));
}

TEST_F(ControlClientTest, AServerThatNeverAnswersTimesOut) {
  zmq::context_t context(1);
  zmq::socket_t rep(context, zmq::socket_type::rep);
  rep.bind(endpoint_);
  auto reply = controlRequest(endpoint_, statusRequest(), 100);
  ASSERT_FALSE(reply.has_value());
  EXPECT_NE(reply.error().find("did not answer within 100 ms"), std::string::npos) << reply.error();
}

TEST_F(ControlClientTest, AServerThatExitsIsNotWaitedFor) {
  zmq::context_t context(1);
  zmq::socket_t rep(context, zmq::socket_type::rep);
  rep.bind(endpoint_);
  std::atomic<int> asked{0};
  const auto t0 = Clock::now();
  // It "exits" at the third look: the request stays unread.
  auto reply = controlRequest(endpoint_, statusRequest(), 60000, [&] { return ++asked < 3; });
  ASSERT_FALSE(reply.has_value());
  EXPECT_NE(reply.error().find("exited"), std::string::npos) << reply.error();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "not the whole 60 s";
}

}  // namespace
}  // namespace gtpcp::control
