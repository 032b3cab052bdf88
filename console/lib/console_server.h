// The management process's HTTP server (civetweb, the server
// prometheus-cpp's pull exposer is built on): /metrics serialised by
// prometheus-cpp from the group's collector, /healthz, /readyz and
// /api/status (console/README.md). prometheus-cpp's own Exposer owns its
// server and serves metrics alone; the console shares one port between the
// metrics, the probes and (later) the web console, so it runs the server
// itself and keeps prometheus-cpp for what it is for: the metric model and
// its text format.
//
// Requests run on civetweb's threads; the collector serialises scrapes, and
// the console's counters are written under one mutex of this process (they
// have one writer, this process, like every counter table).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "common/group/console_shm.h"
#include "common/group/process_control.h"
#include "collector.h"

class CivetServer;

namespace gtpcp::console {

class ConsoleServer {
 public:
  // Listens on every `listen` address ("127.0.0.1:9123", "[::1]:9123").
  // `shm`: this process's segment, for its counters.
  static tl::expected<std::unique_ptr<ConsoleServer>, std::string> start(const group::ProcessControl& processes,
                                                                        std::shared_ptr<GroupCollector> collector,
                                                                        ConsoleShm& shm,
                                                                        const std::vector<std::string>& listen);
  ~ConsoleServer();

  // What each request handler calls.
  std::string metricsText();
  void countRequest(int status);
  const group::ProcessControl& processes() const noexcept { return processes_; }
  uint64_t heartbeatDeadlineNs() const noexcept;

 private:
  ConsoleServer(const group::ProcessControl& processes, std::shared_ptr<GroupCollector> collector, ConsoleShm& shm);

  const group::ProcessControl& processes_;
  std::shared_ptr<GroupCollector> collector_;
  ConsoleShm& shm_;
  std::mutex counters_mutex_;
  struct Handlers;
  std::unique_ptr<Handlers> handlers_;
  std::unique_ptr<CivetServer> server_;
};

// "127.0.0.1:9123" / "[::1]:9123" for a configured address and port.
std::string listenText(const std::string& address, uint16_t port);

}  // namespace gtpcp::console
