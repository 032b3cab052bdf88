// What a proxy sends an SGW, built by hand with the codec (not with the
// emulator's builders): its own requests, for the tests of the SGW's
// answers, and the responses it relays, for the tests of the SGW's checks.
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

// A Create Session Response as the proxy relays an accepted one: control
// F-TEID naming the proxy (`proxy_addr`, in its family), user-plane F-TEID
// naming the PGW behind it, as the PGW made it.
inline std::vector<uint8_t> proxiedCreateSessionResponse(uint32_t seq, uint32_t sgw_teid,
                                                         const IpAddress& proxy_addr,
                                                         uint32_t proxy_teid,
                                                         const IpAddress& pgw_addr, uint64_t imsi) {
  using namespace gtp::v2;
  std::array<uint8_t, 256> buf{};
  Builder b(buf);
  b.begin(MessageType::kCreateSessionResponse, sgw_teid, seq);
  CauseIe accepted;
  accepted.value = kCauseAccepted;
  b.add(accepted);
  b.add(makeFTeid(kIfS5S8PgwGtpC, proxy_teid, proxy_addr), 1);
  b.beginGrouped(IeType::kBearerContext, 0);
  b.add(Ebi{kDefaultEbi});
  b.add(accepted);
  b.add(makeFTeid(kIfS5S8PgwGtpU, userPlaneTeid(PlaneSide::kPgw, imsi, pgw_addr), pgw_addr), 2);
  b.endGrouped();
  auto r = b.finish();
  EXPECT_TRUE(r);
  return r ? std::vector<uint8_t>(r->begin(), r->end()) : std::vector<uint8_t>{};
}

}  // namespace gtpcp::peer::testing
