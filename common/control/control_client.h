// A client of the group's control channel, whose server is the thread
// watchdog's (proto/control.proto; `gtpcp` is a client, and so is every
// process that asks the group something): one request, one reply, within a
// bound.
#pragma once

#include <functional>
#include <string>

#include <tl/expected.hpp>

#include "proto/control.pb.h"

namespace gtpcp::control {

// Sends `request` to the control server at `endpoint` (ipc://...) and waits
// at most `timeout_ms` for its reply, and no longer than `server_alive`
// (asked every 20 ms; none: not asked) says the server runs: a server that
// exits with the request unread never answers. The error says why there is
// no reply.
tl::expected<proto::ControlReply, std::string> controlRequest(const std::string& endpoint,
                                                              const proto::ControlRequest& request, int timeout_ms,
                                                              const std::function<bool()>& server_alive = {});

}  // namespace gtpcp::control
