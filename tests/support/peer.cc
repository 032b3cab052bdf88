#include "tests/support/peer.h"

namespace gtpcp::testing {

uint64_t PeerResult::value(const std::string& pointer) const {
  const nlohmann::json::json_pointer p(pointer);
  if (!summary.contains(p)) return 0;
  const auto& v = summary.at(p);
  return v.is_number_unsigned() || v.is_number_integer() ? v.get<uint64_t>() : 0;
}

std::string PeerResult::describe() const {
  std::string out = "---- gtpcp-peer exit status " + (status ? std::to_string(*status) : std::string("none (killed)")) +
                    "\n" + output;
  if (!summary.empty()) {
    nlohmann::json brief = summary;
    brief.erase("latency_ms");
    out += "---- gtpcp-peer summary (JSON, latencies left out)\n" + brief.dump(1) + "\n";
  }
  return out;
}

PeerRun::PeerRun(const std::vector<std::string>& args, const std::string& dir, const std::string& name,
                 const std::string& netns)
    : out_(dir + "/" + name + ".out"), json_(dir + "/" + name + ".json") {
  std::vector<std::string> argv;
  if (!netns.empty()) argv = {"ip", "netns", "exec", netns};
  argv.push_back(binDir() + "/gtpcp-peer");
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  argv.push_back(json_);
  child_ = Child::spawn(argv, out_);
}

PeerResult PeerRun::wait(std::chrono::milliseconds timeout) {
  PeerResult r;
  r.status = child_.wait(timeout);
  if (!r.status) child_.stop(std::chrono::milliseconds(2000));
  r.output = readFile(out_);
  const std::string text = readFile(json_);
  if (!text.empty()) r.summary = nlohmann::json::parse(text, nullptr, false);
  if (r.summary.is_discarded()) r.summary = nlohmann::json::object();
  return r;
}

PeerResult runPeer(const std::vector<std::string>& args, const std::string& dir, std::chrono::milliseconds timeout,
                   const std::string& name) {
  PeerRun run(args, dir, name);
  return run.wait(timeout);
}

}  // namespace gtpcp::testing
