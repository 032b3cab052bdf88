#include "common/control/heartbeat.h"

#include <unistd.h>

namespace gtpcp::control {

tl::expected<std::unique_ptr<HeartbeatSender>, std::string> HeartbeatSender::open(const std::string& endpoint,
                                                                                  const std::string& process) {
  std::unique_ptr<HeartbeatSender> h(new HeartbeatSender());
  try {
    h->socket_ = zmq::socket_t(h->context_, zmq::socket_type::pub);
    // A stopped watchdog must not make the process wait at exit, nor hold
    // more than a few beats for it.
    h->socket_.set(zmq::sockopt::linger, 0);
    h->socket_.set(zmq::sockopt::sndhwm, 16);
    h->socket_.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return tl::unexpected("heartbeat socket " + endpoint + ": " + e.what());
  }
  h->message_.set_process(process);
  h->message_.set_pid(static_cast<uint32_t>(::getpid()));
  return h;
}

void HeartbeatSender::beat(uint64_t now_ns) noexcept {
  if (now_ns < next_ns_) return;
  next_ns_ = now_ns + kPeriodNs;
  message_.set_sequence(sent_ + 1);
  message_.set_monotonic_ns(now_ns);
  const auto size = message_.ByteSizeLong();
  if (size > buffer_.size() || !message_.SerializeToArray(buffer_.data(), static_cast<int>(size))) return;
  // ZMQ_DONTWAIT: a full queue drops the beat; errors are not the loop's business.
  if (zmq_send(socket_.handle(), buffer_.data(), size, ZMQ_DONTWAIT) >= 0) ++sent_;
}

}  // namespace gtpcp::control
