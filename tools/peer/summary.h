// The end-of-run summary of the peer emulator: human-readable on stdout and,
// with --json, machine-readable (the integration tests and the benchmark read
// it). Built once at the end: allocation is fine here.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/peer/config.h"
#include "tools/peer/failover.h"
#include "tools/peer/stats.h"

namespace gtpcp::peer {

struct SocketReport {
  std::string role;  // "sgw", "pgw", "sgsn" or "ggsn"
  Endpoint local{};
  uint64_t drops = 0;  // SO_RXQ_OVFL
  int rcvbuf = 0;
  int sndbuf = 0;
};

struct RunReport {
  const RunConfig* config = nullptr;
  const SgwStats* sgw = nullptr;                // null without the SGW role
  const std::vector<PgwNodeStats>* pgw = nullptr;  // null without the PGW role
  const SgsnStats* sgsn = nullptr;                  // null without the SGSN role
  const std::vector<GgsnNodeStats>* ggsn = nullptr;  // null without the GGSN role
  MismatchCounters mismatches;
  MalformedCounters malformed;
  double elapsed_s = 0;       // whole run
  double window_s = 0;        // the measured window
  // The access side (SGWs or SGSNs) and the gateway side (PGWs or GGSNs).
  uint64_t sgw_sessions_up = 0;   // at the end, as the access side sees them
  uint64_t outstanding = 0;       // requests still unanswered at the end
  uint64_t sgw_waiting = 0;       // subscribers still waiting for the network at the end
  uint64_t pgw_outstanding = 0;   // the gateways' own requests still unanswered at the end
  uint64_t schedule_lagged = 0;   // tokens the emulator itself could not issue in time
  uint64_t send_full = 0;         // datagrams refused by a full socket buffer
  uint64_t send_errors = 0;
  int64_t snmp_rcvbuf_errors_delta = -1;  // system-wide, -1: unknown
  std::vector<SocketReport> sockets;
  const Failover* failover = nullptr;  // null without --failover-to
  double failover_at_s = -1;           // since the start of the run; < 0: no switch
  bool interrupted = false;
  int exit_status = 0;
};

// 0 when nothing went wrong (no timeout, mismatch or malformed datagram, no
// subscriber left waiting for the network; expected rejections are fine),
// else 1.
int exitStatusOf(const RunReport& r) noexcept;

// What went wrong, for the benchmark: `checks_failed` (every mismatch) and
// `errors`, what a load generator counts as failed transactions: timeouts,
// unexpected causes, malformed datagrams, Version Not Supported and Error
// Indications received, messages the emulator could not build.
struct ErrorCounts {
  uint64_t timeouts = 0;
  uint64_t unexpected_causes = 0;
  uint64_t malformed = 0;
  uint64_t version_not_supported = 0;
  uint64_t error_indications = 0;
  uint64_t internal_errors = 0;
  uint64_t total() const noexcept {
    return timeouts + unexpected_causes + malformed + version_not_supported + error_indications +
           internal_errors;
  }
};
ErrorCounts errorCounts(const RunReport& r) noexcept;

nlohmann::json toJson(const RunReport& r);
void printSummary(const RunReport& r, std::ostream& out);

}  // namespace gtpcp::peer
