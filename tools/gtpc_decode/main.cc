// gtpc-decode: GTPv1-C and GTPv2-C messages, from hex or from a capture, as
// JSON or one summary line per message. Flags only; the work is in cli.cc.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "tools/gtpc_decode/cli.h"

int main(int argc, char** argv) {
  using namespace gtpcp::gtpc_decode;

  CLI::App app{
      "Decodes GTP-C messages (GTPv2-C, TS 29.274; GTPv1-C, TS 29.060) into JSON.\n"
      "Input: HEX arguments (one message each), a capture (--pcap), or else stdin with one hex\n"
      "message per line ('#' lines and blank lines ignored).\n"
      "Exit status: 0 all decoded, 1 some message or frame failed, 2 usage or unreadable file.",
      "gtpc-decode"};
  RunOptions options;
  std::string pcap;
  uint64_t frame = 0;

  auto* hex = app.add_option("hex", options.hex, "A message as hex (spaces and ':' ignored)");
  auto* pcap_option =
      app.add_option("--pcap", pcap, "Decode the UDP datagrams to or from --port in a pcap or pcapng file")
          ->type_name("FILE");
  hex->excludes(pcap_option);
  auto* pretty = app.add_flag("--pretty", options.pretty, "Indent the JSON (default: one object per line)");
  app.add_flag("--summary", options.summary, "One human-readable line per message instead of JSON")
      ->excludes(pretty);
  auto* frame_option =
      app.add_option("--frame", frame, "Only this frame of the capture (numbered from 1, as tshark does)")
          ->check(CLI::PositiveNumber)
          ->needs(pcap_option);
  app.add_option("--port", options.port, "UDP port of GTP-C in the capture")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_flag("--mask", options.decode.mask,
               "Mask IMSI, MSISDN and MEI after their first 5 digits, for tickets");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help comes through here too, with exit code 0.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!pcap.empty()) options.pcap = pcap;
  if (*frame_option) options.frame = frame;

  try {
    return run(options, std::cin, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "gtpc-decode: " << e.what() << '\n';
    return kExitDecodeFailed;
  }
}
