// gtpcp-peer: emulated SGWs and PGWs (GTPv2-C), or SGSNs and GGSNs (GTPv1-C),
// for gtpcp's integration tests, demo and benchmark. Flags only; the work is
// in runner.cc and the engines; the rest of main() in tools/tool_main.
#include <CLI/CLI.hpp>

#include "tools/tool_main/tool_main.h"
#include "tools/peer/config.h"
#include "tools/peer/runner.h"

int main(int argc, char** argv) {
  using namespace gtpcp::peer;

  CLI::App app{
      "Emulates SGWs and PGWs (GTPv2-C S5/S8), or SGSNs and GGSNs (GTPv1-C Gn/Gp), on loopback\n"
      "addresses, around a gtpcp proxy. SGWs (SGSNs) attach, modify and detach subscribers\n"
      "through --proxy at an open-loop --rate; PGWs (GGSNs) answer. Both check what the proxy\n"
      "did to the messages and count every mismatch. A run has nodes of one version only.\n"
      "Exit status: 0 no timeout, mismatch or malformed datagram; 1 otherwise; 2 usage or setup "
      "error.",
      "gtpcp-peer"};
  PeerOptions o;
  app.add_option("--proxy", o.proxy,
                 "The proxy's access address (SGWs send to it), port 2123 by default; one per family at "
                 "most (IPv4, IPv6), each SGW uses the one of its own")
      ->delimiter(',')->type_name("ADDR[:PORT]|[IPV6]:PORT,...");
  app.add_option("--proxy-gateway", o.proxy_gateway,
                 "The proxy's gateway-side address, that PGWs see in F-TEIDs; one per family at most "
                 "(default: --proxy's)")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--sgw", o.sgw, "Emulated SGW addresses (IPv4 or IPv6), comma-separated")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--pgw", o.pgw, "Emulated PGW addresses (IPv4 or IPv6), comma-separated")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--sgsn", o.sgsn,
                 "Emulated SGSN addresses (GTPv1-C; IPv4 or IPv6), comma-separated; like --sgw")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--ggsn", o.ggsn,
                 "Emulated GGSN addresses (GTPv1-C; IPv4 or IPv6), comma-separated; like --pgw")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--subscribers", o.subscribers, "Subscribers (spread over the SGWs)")->capture_default_str();
  app.add_option("--imsi-start", o.imsi_start, "IMSI of the first subscriber; the others follow")->capture_default_str();
  app.add_option("--msisdn-start", o.msisdn_start, "MSISDN of the first subscriber")->capture_default_str();
  app.add_option("--plmn", o.plmn, "Serving network MCC+MNC (ULI, Serving Network)")->capture_default_str();
  app.add_option("--apn", o.apn, "APNs, used round-robin over the subscribers")->delimiter(',')->capture_default_str();
  app.add_option("--modify", o.modify,
                 "Modify Bearer (GTPv1: Update PDP Context) transactions per attach")
      ->capture_default_str();
  app.add_option("--secondary", o.secondary,
                 "GTPv1: secondary PDP contexts per activation (NSAPI 6..), deleted before the "
                 "primary")
      ->capture_default_str();
  app.add_option("--network-initiated", o.network_initiated,
                 "GTPv1: fraction of the subscribers whose sessions the GGSN updates, half of "
                 "them also deleted by the GGSN (README)")
      ->type_name("FRACTION")->capture_default_str();
  app.add_flag("--user-plane-proxied", o.user_plane_proxied,
               "GTPv1: the proxy relays GTP-U too and rewrites the user-plane addresses and TEIDs "
               "(osmo-gtphub): skip the checks that they pass through");
  app.add_option("--rate", o.rate, "Transactions per second, open loop (all SGWs together)")->capture_default_str();
  app.add_option("--setup-rate", o.setup_rate,
                 "modify-only, hold: attach (and detach) rate (default: --rate)");
  app.add_option("--duration", o.duration,
                 "Seconds of load (default 10); hold: seconds the sessions stay up; PGW-only: run "
                 "this long (default: until SIGTERM)");
  app.add_option("--mode", o.mode,
                 "lifecycle | modify-only | hold (attach everyone, stay up --duration, exit without "
                 "detaching)")
      ->capture_default_str();
  app.add_option("--cycles", o.cycles, "lifecycle: attach..detach cycles per subscriber, then stop early (0: unlimited)")
      ->capture_default_str();
  app.add_option("--t3-ms", o.t3_ms, "Retransmission timer T3")->capture_default_str();
  app.add_option("--n3", o.n3, "Retransmissions before a timeout")->capture_default_str();
  app.add_flag("--same-sequence", o.same_sequence,
               "Every SGW uses the same sequence numbers at the same moments");
  app.add_flag("--relay", o.relay,
               "Through gtpcp-relay, not a proxy: every request to --proxy, no 'names the proxy' checks");
  app.add_option("--sgw-port-base", o.sgw_port_base, "SGW i binds port P+i instead of 2123")->type_name("P");
  app.add_option("--pgw-cause", o.pgw_cause, "Reject creations at that PGW with CAUSE (repeatable)")
      ->delimiter(',')->type_name("ADDR=CAUSE");
  app.add_option("--pgw-delay-ms", o.pgw_delay_ms, "Answer late at that PGW (repeatable)")
      ->delimiter(',')->type_name("ADDR=MS");
  app.add_option("--pgw-drop", o.pgw_drop, "Drop that fraction of requests at that PGW (repeatable)")
      ->delimiter(',')->type_name("ADDR=FRACTION");
  app.add_option("--ggsn-cause", o.ggsn_cause,
                 "Reject primary activations at that GGSN with CAUSE (192..255; repeatable)")
      ->delimiter(',')->type_name("ADDR=CAUSE");
  app.add_option("--ggsn-delay-ms", o.ggsn_delay_ms, "Answer late at that GGSN (repeatable)")
      ->delimiter(',')->type_name("ADDR=MS");
  app.add_option("--ggsn-drop", o.ggsn_drop,
                 "Drop that fraction of requests at that GGSN (repeatable)")
      ->delimiter(',')->type_name("ADDR=FRACTION");
  app.add_option("--expect-cause", o.expect_cause,
                 "Rejection causes the SGWs (SGSNs) accept as expected (besides --pgw-cause's, "
                 "--ggsn-cause's)")
      ->delimiter(',');
  app.add_option("--recovery", o.recovery, "Restart counter sent in Recovery IEs")->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of sequence numbers, drops and probed TEIDs (0: sequence numbers from the clock)");
  app.add_option("--pgw-sessions", o.pgw_sessions, "Session table size of the PGWs (default 2*subscribers+1024)");
  app.add_option("--ggsn-sessions", o.ggsn_sessions,
                 "Session table size of the GGSNs (default 2*subscribers+1024)");
  app.add_option("--json", o.json, "Write the summary as JSON to FILE")->type_name("FILE");
  app.add_flag("--progress", o.progress, "A progress line on stderr every second");
  app.add_flag("--allow-non-loopback", o.allow_non_loopback,
               "Allow addresses outside 127.0.0.0/8 and ::1");
  app.add_flag("--dedicated-bearer", o.dedicated_bearer,
               "PGWs create, update and delete a dedicated bearer (EBI 6) on every session; SGWs "
               "answer, and detach once it is gone");
  app.add_flag("--piggyback", o.piggyback,
               "With --dedicated-bearer: the PGWs' Create Bearer Request rides on their Create "
               "Session Response");
  app.add_flag("--commands", o.commands,
               "lifecycle: SGWs send two Modify Bearer Commands per attach; PGWs answer the first "
               "with an Update Bearer Request, the second with a Modify Bearer Failure Indication");
  app.add_option("--unknown-teid", o.unknown_teid,
                 "lifecycle: SGWs send N Modify Bearer Requests to TEIDs the proxy never gave "
                 "(random, reproducible unless --seed); each must get cause 64")
      ->type_name("N");
  app.add_option("--failover-to", o.failover_to,
                 "After the switch (SIGUSR1 or --failover-after), datagrams for the proxy's "
                 "addresses go to this one of their family, same port; one per family at most")
      ->delimiter(',')->type_name("ADDR,...");
  app.add_option("--failover-after", o.failover_after,
                 "Switch to --failover-to this many seconds after the start (default: on SIGUSR1 "
                 "only)")
      ->check(CLI::Range(0.0, 7 * 86400.0))->type_name("SECONDS");
  app.add_option("--rcvbuf", o.rcvbuf, "Socket receive buffer, octets")->capture_default_str();
  app.add_option("--sndbuf", o.sndbuf, "Socket send buffer, octets")->capture_default_str();

  return gtpcp::tools::runProgram<Runner, RunConfig>(
      argc, argv, app, [&](RunConfig& config) { return makeRunConfig(o, config); });
}
