// Numbers of GTP-C that are neither IE nor message facts (those come from
// the generated tables) and that both versions share, defined once so that
// the proxy, its configuration, the tools and the tests agree on them.
// Version-specific numbers sit beside their header layout (v2/message.h,
// v1/message.h).
#pragma once

#include <cstdint>

namespace gtpcp::gtp {

// The registered UDP port of GTP-C, GTPv2-C (TS 29.274 §4.2.2) and GTPv1-C
// (TS 29.060) alike: where requests are sent, and what a peer named only by
// an address (an F-TEID, a GSN Address) listens on.
inline constexpr uint16_t kGtpcPort = 2123;

}  // namespace gtpcp::gtp
