#include "common/control/control_client.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <zmq.hpp>

namespace gtpcp::control {

tl::expected<proto::ControlReply, std::string> controlRequest(const std::string& endpoint,
                                                              const proto::ControlRequest& request, int timeout_ms,
                                                              const std::function<bool()>& server_alive) {
  // ZeroMQ connects to a socket file that is not there yet and waits: look first.
  const std::string path = endpoint.substr(endpoint.find("://") + 3);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return tl::unexpected("no control server at " + endpoint);
  std::string bytes;
  request.SerializeToString(&bytes);
  try {
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::req);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::sndtimeo, timeout_ms);
    socket.connect(endpoint);
    if (!socket.send(zmq::buffer(bytes), zmq::send_flags::none))
      return tl::unexpected("control server at " + endpoint + " does not take requests");
    zmq::message_t m;
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return tl::unexpected("control server at " + endpoint + " did not answer within " +
                              std::to_string(timeout_ms) + " ms");
      zmq::poll(&item, 1, std::min(left, std::chrono::milliseconds(20)));
      if (item.revents & ZMQ_POLLIN) break;
      if (server_alive && !server_alive()) return tl::unexpected("control server at " + endpoint + " exited");
    }
    if (!socket.recv(m, zmq::recv_flags::dontwait))
      return tl::unexpected("control server at " + endpoint + " did not answer");
    proto::ControlReply reply;
    if (!reply.ParseFromArray(m.data(), static_cast<int>(m.size())))
      return tl::unexpected("control server at " + endpoint + " answered something that is not a ControlReply");
    return reply;
  } catch (const zmq::error_t& e) {
    return tl::unexpected("control channel " + endpoint + ": " + e.what());
  }
}

}  // namespace gtpcp::control
