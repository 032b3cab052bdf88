// gtpcp-relay: a bare UDP relay, the floor the benchmark compares gtpcp with.
// Flags only; the work is in relay.cc, the rest of main() in tools/tool_main.
#include <CLI/CLI.hpp>

#include "tools/tool_main/tool_main.h"
#include "tools/relay/relay.h"

int main(int argc, char** argv) {
  using namespace gtpcp::relay;
  CLI::App app{
      "Relays UDP datagrams between downstream peers and one upstream, without parsing them.\n"
      "From a --pairs peer to --listen: sent to --upstream from that peer's own socket (bound to\n"
      "the listen address, ephemeral port); from the upstream to that socket: sent back to the\n"
      "peer from --listen. Runs until --duration or SIGTERM/SIGINT, then prints its counters.\n"
      "Exit status: 0 after a run, 2 usage or setup error.",
      "gtpcp-relay"};
  RelayOptions o;
  app.add_option("--listen", o.listen, "Address the downstream peers send to, ADDR[:PORT] (port 2123 by default)")
      ->type_name("ADDR[:PORT]");
  app.add_option("--upstream", o.upstream, "Where their datagrams go, ADDR[:PORT] (port 2123 by default)")
      ->type_name("ADDR[:PORT]");
  app.add_option("--pairs", o.pairs, "Downstream peers, comma-separated ADDR[:PORT] (port 2123 by default)")
      ->delimiter(',')->type_name("ADDR[:PORT],...");
  app.add_option("--duration", o.duration, "Seconds to run (0: until SIGTERM/SIGINT)")->capture_default_str();
  app.add_option("--json", o.json, "Write the counters as JSON to FILE at the end")->type_name("FILE");
  app.add_flag("--progress", o.progress, "A progress line on stderr every second");
  app.add_flag("--allow-non-loopback", o.allow_non_loopback, "Allow addresses outside 127.0.0.0/8");
  app.add_option("--rcvbuf", o.rcvbuf, "Socket receive buffer, octets")->capture_default_str();
  app.add_option("--sndbuf", o.sndbuf, "Socket send buffer, octets")->capture_default_str();
  return gtpcp::tools::runProgram<Relay, RelayConfig>(
      argc, argv, app, [&](RelayConfig& config) { return makeRelayConfig(o, config); });
}
