#include "console_server.h"

#include <CivetServer.h>

#include <chrono>

#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>

#include "common/group/status.h"
#include "readiness.h"

namespace gtpcp::console {

namespace {

void reply(mg_connection* conn, int status, const char* content_type, const std::string& body) {
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", content_type, -1);
  mg_response_header_add(conn, "Content-Length", std::to_string(body.size()).c_str(), -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  mg_response_header_send(conn);
  mg_write(conn, body.data(), body.size());
}

}  // namespace

std::string listenText(const std::string& address, uint16_t port) {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

struct ConsoleServer::Handlers {
  struct Reply {
    int status;
    const char* content_type;
    std::string body;
  };
  // One path: `make` gives the reply, the route sends and counts it.
  struct Route : CivetHandler {
    ConsoleServer* owner;
    Reply (*make)(ConsoleServer&);
    Route(ConsoleServer* o, Reply (*m)(ConsoleServer&)) : owner(o), make(m) {}
    bool handleGet(CivetServer*, mg_connection* conn) override {
      const Reply r = make(*owner);
      reply(conn, r.status, r.content_type, r.body);
      owner->countRequest(r.status);
      return true;
    }
  };

  static Reply metrics(ConsoleServer& s) { return {200, "text/plain; version=0.0.4; charset=utf-8", s.metricsText()}; }
  static Reply healthz(ConsoleServer&) { return {200, "text/plain; charset=utf-8", "ok\n"}; }
  static Reply readyz(ConsoleServer& s) {
    const Readiness r = readiness(s.processes(), "console", s.heartbeatDeadlineNs());
    std::string body = r.ready ? "ready\n" : "not ready\n";
    for (const std::string& why : r.reasons) body += why + "\n";
    return {r.ready ? 200 : 503, "text/plain; charset=utf-8", body};
  }
  static Reply status(ConsoleServer& s) {
    return {200, "application/json", group::groupStatus(s.processes()).dump(1) + "\n"};
  }
  static Reply notFound(ConsoleServer&) {
    return {404, "text/plain; charset=utf-8", "not found: /metrics, /healthz, /readyz, /api/status\n"};
  }

  explicit Handlers(ConsoleServer* o)
      : routes{{"/metrics", {o, metrics}},
               {"/healthz", {o, healthz}},
               {"/readyz", {o, readyz}},
               {"/api/status", {o, status}},
               // Every other path.
               {"/", {o, notFound}}} {}
  std::pair<const char*, Route> routes[5];
};

ConsoleServer::ConsoleServer(const group::ProcessControl& processes, std::shared_ptr<GroupCollector> collector,
                             ConsoleShm& shm)
    : processes_(processes), collector_(std::move(collector)), shm_(shm), handlers_(std::make_unique<Handlers>(this)) {}

ConsoleServer::~ConsoleServer() {
  // The server's threads call the handlers: stopped before they go.
  server_.reset();
}

tl::expected<std::unique_ptr<ConsoleServer>, std::string> ConsoleServer::start(
    const group::ProcessControl& processes, std::shared_ptr<GroupCollector> collector, ConsoleShm& shm,
    const std::vector<std::string>& listen) {
  std::unique_ptr<ConsoleServer> s(new ConsoleServer(processes, std::move(collector), shm));
  std::string ports;
  for (const std::string& l : listen) ports += (ports.empty() ? "" : ",") + l;
  const std::vector<std::string> options{"listening_ports", ports, "num_threads", "4", "request_timeout_ms", "10000",
                                         "enable_keep_alive", "yes"};
  try {
    s->server_ = std::make_unique<CivetServer>(options);
  } catch (const CivetException& e) {
    return tl::unexpected("management.listen " + ports + ": cannot listen: " + e.what());
  }
  if (s->server_->getContext() == nullptr) return tl::unexpected("management.listen " + ports + ": cannot listen");
  for (auto& [path, route] : s->handlers_->routes) s->server_->addHandler(path, route);
  return s;
}

std::string ConsoleServer::metricsText() {
  const auto begin = std::chrono::steady_clock::now();
  const std::string text = prometheus::TextSerializer().Serialize(collector_->Collect());
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begin);
  std::lock_guard lock(counters_mutex_);
  shm_.counters.scrapes.add();
  shm_.counters.scrape_us.set(uint64_t(us.count()));
  shm_.counters.scrape_bytes.set(text.size());
  return text;
}

void ConsoleServer::countRequest(int status) {
  std::lock_guard lock(counters_mutex_);
  shm_.counters.http_requests.add();
  if (status >= 400) shm_.counters.http_errors.add();
}

uint64_t ConsoleServer::heartbeatDeadlineNs() const noexcept {
  const uint32_t ms = processes_.config().watchdog.timeout_ms;
  return uint64_t(ms ? ms : 1000) * 1'000'000;
}

}  // namespace gtpcp::console
