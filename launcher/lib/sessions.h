// A subscriber's sessions as the group keeps them in Redis, for
// `gtpcp session IMSI`: found through the IMSI index, each hash read back as
// one SessionRecord (common/session/record.h) and shown as JSON, with
// addresses written as addresses.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include "common/config/instance.h"

namespace gtpcp::launcher {

tl::expected<nlohmann::json, std::string> sessionsOfImsi(const config::InstanceConfig& config, std::string_view imsi);

}  // namespace gtpcp::launcher
