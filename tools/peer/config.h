// The peer emulator's options, as given on the command line, and their
// validation into the configuration the runner and the engines use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/peer/failover.h"
#include "tools/peer/ggsn.h"
#include "tools/peer/pgw.h"
#include "tools/peer/sgsn.h"
#include "tools/peer/sgw.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

// Options as typed: main.cc fills this from CLI11; makeRunConfig() checks it.
struct PeerOptions {
  // The proxy's access side, ADDR[:PORT], at most one per family: each SGW
  // sends to the one of its family.
  std::vector<std::string> proxy;
  // The proxy's gateway side, ADDR, at most one per family: the sender
  // F-TEIDs a PGW receives name the one of its family (default: --proxy's).
  std::vector<std::string> proxy_gateway;
  std::vector<std::string> sgw;
  std::vector<std::string> pgw;
  // GTPv1-C nodes (a run has those of one version only).
  std::vector<std::string> sgsn;
  std::vector<std::string> ggsn;
  uint32_t subscribers = 1000;
  std::string imsi_start = "001010000000001";
  std::string msisdn_start = "15550000001";
  std::string plmn = "00101";  // MCC + MNC digits
  std::vector<std::string> apn{"internet"};
  uint32_t modify = 1;
  double rate = 1000;
  double setup_rate = 0;   // 0: same as rate
  double duration = -1;    // seconds; < 0: default (10 s, or until SIGTERM for a PGW-only run)
                           // hold: how long the sessions stay up
  std::string mode = "lifecycle";
  uint32_t cycles = 0;
  uint32_t t3_ms = 3000;
  uint32_t n3 = 2;
  bool same_sequence = false;
  bool relay = false;
  bool progress = false;
  bool allow_non_loopback = false;
  int sgw_port_base = 0;  // 0: every SGW on 2123
  std::vector<std::string> pgw_cause;     // ADDR=CAUSE
  std::vector<std::string> pgw_delay_ms;  // ADDR=MS
  std::vector<std::string> pgw_drop;      // ADDR=FRACTION
  std::vector<unsigned> expect_cause;
  unsigned recovery = 1;
  uint64_t seed = 0;  // 0: from the clock
  uint32_t pgw_sessions = 0;  // 0: 2 * subscribers + 1024
  std::string json;
  int rcvbuf = 8 << 20;
  int sndbuf = 8 << 20;
  // Procedures beyond attach, modify and detach (README: "More procedures").
  bool dedicated_bearer = false;
  bool piggyback = false;
  bool commands = false;
  uint32_t unknown_teid = 0;
  // A failover of the proxy group (failover.h): the new instance's address,
  // at most one per family, and when to switch (< 0: on SIGUSR1 only).
  std::vector<std::string> failover_to;
  double failover_after = -1;
  // GTPv1 only (README: "GTPv1-C: SGSNs and GGSNs").
  uint32_t secondary = 0;          // secondary PDP contexts per activation
  double network_initiated = 0;    // fraction of sessions the GGSN updates (and deletes)
  bool user_plane_proxied = false;  // the proxy rewrites user-plane addresses and TEIDs
  std::vector<std::string> ggsn_cause;     // ADDR=CAUSE
  std::vector<std::string> ggsn_delay_ms;  // ADDR=MS
  std::vector<std::string> ggsn_drop;      // ADDR=FRACTION
  uint32_t ggsn_sessions = 0;  // 0: 2 * subscribers + 1024
};

enum class RunMode : uint8_t { kLifecycle, kModifyOnly, kHold };
// "lifecycle", "modify-only" or "hold", as --mode spells it.
const char* modeName(RunMode m) noexcept;

struct RunConfig {
  int version = 2;  // of the nodes' GTP: 2 (--sgw, --pgw) or 1 (--sgsn, --ggsn)
  bool sgw_role = false;
  bool pgw_role = false;
  bool sgsn_role = false;
  bool ggsn_role = false;
  RunMode mode = RunMode::kLifecycle;
  SgwConfig sgw;
  PgwConfig pgw;
  SgsnConfig sgsn;
  GgsnConfig ggsn;
  // One socket per node: the access side's (SGWs or SGSNs, in the order
  // given), then the gateway side's (PGWs or GGSNs).
  std::vector<Endpoint> access_binds;
  std::vector<Endpoint> gateway_binds;
  double rate = 1000;
  double setup_rate = 1000;
  double duration_s = 10;  // 0: until SIGTERM (PGW-only)
  int64_t t3_ns = 3'000'000'000;
  uint32_t n3 = 2;
  bool progress = false;
  std::string json_path;
  int rcvbuf = 8 << 20;
  int sndbuf = 8 << 20;
  uint64_t seed = 0;
  FailoverConfig failover;  // not enabled() without --failover-to
  PeerOptions options;  // as given, for the summary

  bool accessRole() const noexcept { return sgw_role || sgsn_role; }
  bool gatewayRole() const noexcept { return pgw_role || ggsn_role; }
};

// Checks every option and fills `out`. Returns one message per problem,
// naming the option ("--pgw-cause: 127.0.0.9 is not a --pgw address"); empty
// when the configuration is usable.
std::vector<std::string> makeRunConfig(const PeerOptions& options, RunConfig& out);

}  // namespace gtpcp::peer
