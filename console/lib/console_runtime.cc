#include "console_runtime.h"

#include <chrono>
#include <thread>

#include "common/group/from_config.h"
#include "common/group/segments.h"
#include "common/time/clock.h"

namespace gtpcp::console {

ConsoleRuntime::ConsoleRuntime(group::ProcessControl processes) : processes_(std::move(processes)) {}

ConsoleRuntime::~ConsoleRuntime() {
  server_.reset();
  if (shm_) group::announceStopped(shm_->status);
}

tl::expected<std::unique_ptr<ConsoleRuntime>, std::string> ConsoleRuntime::open(const config::InstanceConfig& config,
                                                                               const std::string& config_path,
                                                                               BuildInfo build) {
  if (config.management.listen.empty())
    return tl::unexpected(config_path + ": management.listen is [] (no management process for this group)");
  std::unique_ptr<ConsoleRuntime> r(
      new ConsoleRuntime(group::ProcessControl(config, config_path, group::selfDirectory())));
  const group::Paths& paths = r->processes_.paths();
  const std::string name = paths.consoleSegment();
  auto seg = group::createOwned<ConsoleShm>(name, kConsoleSegmentKind);
  if (!seg) return tl::unexpected("shared memory " + name + ": " + seg.error().message);
  r->segment_.emplace(std::move(*seg));
  r->shm_ = static_cast<ConsoleShm*>(r->segment_->payload());
  auto beat = control::HeartbeatSender::open(paths.heartbeatEndpoint(), "console");
  if (!beat) return tl::unexpected(beat.error());
  r->heartbeat_ = std::move(*beat);

  std::vector<std::string> processes;
  for (const group::ProcessSpec& spec : r->processes_.processes()) processes.push_back(spec.name);
  auto collector = std::make_shared<GroupCollector>(config, paths, std::move(processes), std::move(build));
  for (const auto& l : config.management.listen) r->listen_.push_back(listenText(l.address, l.port));
  auto server = ConsoleServer::start(r->processes_, std::move(collector), *r->shm_, r->listen_);
  if (!server) return tl::unexpected(server.error());
  r->server_ = std::move(*server);
  return r;
}

void ConsoleRuntime::run(const std::atomic<bool>& stop) {
  group::announceServing(shm_->status);
  // The HTTP server answers on its own threads; this loop only says that
  // the process lives.
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonicNs();
    shm_->status.heartbeat_ns.store(now, std::memory_order_relaxed);
    heartbeat_->beat(now);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server_.reset();
  group::announceStopped(shm_->status);
}

}  // namespace gtpcp::console
