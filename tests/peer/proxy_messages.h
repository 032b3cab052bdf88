// Requests a proxy sends an SGW on its own behalf, built by hand with the
// codec (not with the emulator's builders), for the tests of the SGW's
// answers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "tools/peer/messages.h"

namespace gtpcp::peer::testing {

// Cause 8 (TS 29.274 Table 8.4-1): what the proxy says when a PGW restarted.
inline constexpr uint8_t kReactivationRequested = 8;

// A Delete Bearer Request (TS 29.274 §7.2.9.2) as the proxy sends one after
// a PGW restart: the SGW's control TEID, the LBI (EBI instance 0; none when
// `lbi` is empty) and Cause 8.
inline std::vector<uint8_t> deleteBearerRequest(uint32_t teid, uint32_t seq,
                                                std::optional<uint8_t> lbi = kDefaultEbi) {
  std::array<uint8_t, 64> buf{};
  gtp::v2::Builder b(buf);
  b.begin(gtp::v2::MessageType::kDeleteBearerRequest, teid, seq);
  if (lbi) b.add(gtp::v2::Ebi{*lbi}, 0);
  gtp::v2::CauseIe cause;
  cause.value = kReactivationRequested;
  b.add(cause);
  auto r = b.finish();
  EXPECT_TRUE(r);
  return r ? std::vector<uint8_t>(r->begin(), r->end()) : std::vector<uint8_t>{};
}

}  // namespace gtpcp::peer::testing
