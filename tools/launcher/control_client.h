// gtpcp's end of the control channel (watchdog/lib/control_server.h): one
// request, one reply, within a bound.
#pragma once

#include <functional>
#include <string>

#include <tl/expected.hpp>

#include "proto/control.pb.h"

namespace gtpcp::launcher {

// Sends `request` to the control server at `endpoint` (ipc://...) and waits
// at most `timeout_ms` for its reply, and no longer than `server_alive`
// (asked every 20 ms; none: not asked) says the server runs: a server that
// exits with the request unread never answers. The error says why there is
// no reply.
tl::expected<proto::ControlReply, std::string> controlRequest(const std::string& endpoint,
                                                              const proto::ControlRequest& request, int timeout_ms,
                                                              const std::function<bool()>& server_alive = {});

}  // namespace gtpcp::launcher
