// GatewayPicker's out-of-line members (see gateway_picker.h); pick() is a
// template in the header so that the `up` predicate inlines into it.
#include "common/config/gateway_picker.h"

#include <algorithm>

namespace gtpcp::config {

GatewayPicker::GatewayPicker(const RoutingTable& table)
    : table_(&table), current_(table.gateways().size(), 0) {}

void GatewayPicker::reset() noexcept { std::fill(current_.begin(), current_.end(), 0); }

}  // namespace gtpcp::config
