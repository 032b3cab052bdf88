// The peer emulator's event loop: one thread, epoll over one UDP socket per
// emulated node plus a signalfd, batched receive and send, the pacer's
// tokens, the engines' timers, the phases of a run, the progress line and
// the summary.
//
// Phases (SGW role):
//   lifecycle:    run    (--duration, or until every subscriber finished its
//                         --cycles) -> drain (outstanding requests, the PGWs'
//                         own included, and subscribers waiting for the
//                         network get up to T3 * (N3 + 1)) -> done
//   modify-only:  attach (--setup-rate, not measured) -> settle ->
//                 modify (--rate, --duration, measured) -> settle ->
//                 detach (--setup-rate, not measured) -> settle -> done
//   hold:         attach (--setup-rate, not measured) -> settle ->
//                 hold (nothing started for --duration; Echo and network-
//                 initiated requests still answered) -> done, no detach
// PGW role alone: serve until --duration (if > 0) or SIGTERM/SIGINT.
// The same phases drive GTPv1's SGSNs and GGSNs (--sgsn, --ggsn): the runner
// sees the access and gateway engines of either version through engine.h.
// A first SIGTERM/SIGINT ends the current phase early (a modify-only run
// still detaches, a hold run does not); a second one stops at once.
// With --failover-to, SIGUSR1 or --failover-after switches, in any phase,
// every datagram for the proxy to the new instance (failover.h); the loop
// checks for it each time it wakes, before it handles anything, so that
// nothing sent before the switch went there and nothing after it elsewhere.
#pragma once

#include <signal.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tools/peer/config.h"
#include "tools/peer/engine.h"
#include "tools/peer/failover.h"
#include "tools/peer/pacer.h"
#include "tools/peer/stats.h"
#include "tools/peer/summary.h"
#include "tools/peer/udp.h"

namespace gtpcp::peer {

class Runner {
 public:
  explicit Runner(RunConfig config);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Binds the sockets and sets up epoll and the signal handling. Returns ""
  // or what failed (startup only).
  std::string open();
  // Runs to the end; writes the summary to `out`, progress lines and
  // warnings to `err`, and the JSON file when configured. Returns the exit
  // status (0 or 1; see exitStatusOf()).
  int run(std::ostream& out, std::ostream& err);

  const RunReport& report() const noexcept { return report_; }

 private:
  class BatchOutbox;
  enum class Phase : uint8_t {
    kRun, kAttach, kAttachSettle, kModify, kModifySettle, kDetach, kDetachSettle, kDrain, kServe,
    kHold, kDone
  };

  void receive(uint32_t socket, int64_t& now) noexcept;
  void flushAll() noexcept;
  void advance(int64_t now) noexcept;
  void stopRequested(int64_t now) noexcept;
  void startPacer(double rate, int64_t now) noexcept;
  void endWindow(int64_t now) noexcept;
  void progress(int64_t now, std::ostream& err);
  // Switches to the failover instance when SIGUSR1 came or its time is due;
  // says so once on `err`.
  void checkFailover(int64_t now, std::ostream& err);
  void buildReport(int64_t now);
  // Nothing in flight: no request of either role unanswered, no subscriber
  // waiting for the network.
  bool settled() const noexcept;
  // The access side's transactions completed, sent again and timed out, and
  // the requests the gateways received, all nodes together.
  struct Totals {
    uint64_t completed = 0, retransmissions = 0, timeouts = 0, gateway_requests = 0;
  };
  Totals totals() const noexcept;

  RunConfig config_;
  std::vector<UdpSocket> sockets_;
  std::vector<std::unique_ptr<SendBatch>> batches_;
  std::unique_ptr<BatchOutbox> outbox_;
  // With --failover-to: the engines send through failover_outbox_, which
  // routes through failover_ into outbox_.
  std::unique_ptr<Failover> failover_;
  std::unique_ptr<FailoverOutbox> failover_outbox_;
  int64_t failover_at_ = 0;  // --failover-after as a deadline (max: none)
  sigset_t wait_mask_{};     // in force during the wait: SIGUSR1 only then
  RecvBatch recv_;
  SgwStats sgw_stats_;
  std::vector<PgwNodeStats> pgw_stats_;
  SgsnStats sgsn_stats_;
  std::vector<GgsnNodeStats> ggsn_stats_;
  MismatchCounters mismatches_;
  MalformedCounters malformed_;
  // SGWs or SGSNs, PGWs or GGSNs.
  std::unique_ptr<AccessEngine> access_;
  std::unique_ptr<GatewayEngine> gateway_;
  Pacer pacer_;
  bool pacing_ = false;
  Phase phase_ = Phase::kDone;
  int64_t start_ = 0;
  int64_t phase_deadline_ = 0;
  int64_t window_start_ = 0;
  int64_t window_end_ = 0;
  bool window_open_ = false;
  int signals_ = 0;
  int epoll_fd_ = -1;
  int signal_fd_ = -1;
  int64_t snmp_start_ = -1;
  // Progress line state.
  int64_t next_progress_ = 0;
  uint64_t last_completed_ = 0;
  uint64_t last_pgw_requests_ = 0;
  RunReport report_;
};

}  // namespace gtpcp::peer
