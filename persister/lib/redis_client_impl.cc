#include "redis_client_impl.h"

#include <signal.h>

#include <hiredis/async.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "common/time/clock.h"
#include "redis_slot.h"

namespace gtpcp::persister {

namespace {

// Often enough for command timeouts measured in seconds and for re-trying
// parked commands soon; the tick only runs while something is held.
constexpr uint64_t kTickMs = 50;

constexpr std::string_view kAsking = "*1\r\n$6\r\nASKING\r\n";
constexpr std::string_view kClusterSlots = "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n";

void appendNumber(std::string& out, char type, std::size_t n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.push_back(type);
  out.append(digits, end);
  out.append("\r\n", 2);
}

// RESP2 array of bulk strings: what every Redis command is on the wire.
void appendCommand(std::string& out, RedisArgv argv) {
  appendNumber(out, '*', argv.size());
  for (const std::string_view a : argv) {
    appendNumber(out, '$', a.size());
    out.append(a.data(), a.size());
    out.append("\r\n", 2);
  }
}

std::string formatCommand(std::initializer_list<std::string_view> argv) {
  std::string out;
  appendCommand(out, RedisArgv(argv.begin(), argv.size()));
  return out;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<int> parsePort(std::string_view text) {
  int port = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port <= 0 || port > 65535) return std::nullopt;
  return port;
}

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381": the slot and the
// node. An empty host (a node that does not know its own address) is allowed.
std::optional<std::pair<uint16_t, RedisEndpoint>> parseRedirect(std::string_view error) {
  const auto a = error.find(' ');
  const auto b = a == std::string_view::npos ? a : error.find(' ', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  unsigned slot = 0;
  const auto slot_text = error.substr(a + 1, b - a - 1);
  const auto [end, ec] = std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot);
  if (ec != std::errc() || end != slot_text.data() + slot_text.size() || slot >= kSlotCount) return std::nullopt;
  const auto address = error.substr(b + 1);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto port = parsePort(address.substr(colon + 1));
  if (!port) return std::nullopt;
  return std::pair{static_cast<uint16_t>(slot), RedisEndpoint{std::string(address.substr(0, colon)), *port}};
}

std::string_view replyText(const redisReply* r) { return r ? std::string_view(r->str, r->len) : std::string_view(); }

}  // namespace

std::string_view errcName(RedisErrc e) noexcept {
  switch (e) {
    case RedisErrc::kOk: return "ok";
    case RedisErrc::kReplyError: return "reply_error";
    case RedisErrc::kRefused: return "refused";
    case RedisErrc::kBadCommand: return "bad_command";
    case RedisErrc::kConnectionLost: return "connection_lost";
    case RedisErrc::kTimeout: return "timeout";
    case RedisErrc::kTooManyRedirects: return "too_many_redirects";
    case RedisErrc::kShutdown: return "shutdown";
  }
  return "unknown";
}

std::optional<RedisEndpoint> parseEndpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const auto port = parsePort(text.substr(colon + 1));
  if (!port) return std::nullopt;
  return RedisEndpoint{std::string(text.substr(0, colon)), *port};
}

std::string validate(const RedisClientConfig& c) {
  if (c.endpoints.empty())
    return "redis: no address given (the server in single mode, seed nodes in cluster mode, sentinels in sentinel "
           "mode)";
  if (c.mode == RedisMode::kSingle && c.endpoints.size() != 1)
    return "redis: single mode takes exactly one server address, " + std::to_string(c.endpoints.size()) +
           " given";
  for (const auto& e : c.endpoints)
    if (e.host.empty() || e.port <= 0 || e.port > 65535)
      return "redis: bad address '" + e.host + ":" + std::to_string(e.port) + "' (want host:port, port 1-65535)";
  if (c.mode == RedisMode::kSentinel && c.master_name.empty())
    return "redis.master_name: required in sentinel mode (the name the sentinels monitor)";
  if (c.max_pending == 0 || c.max_pending > (1u << 24))
    return "redis.max_pending: " + std::to_string(c.max_pending) + " is outside 1-16777216";
  if (c.max_in_flight == 0) return "redis.max_in_flight: must be at least 1";
  if (c.command_timeout_ms < 10) return "redis.command_timeout_ms: must be at least 10";
  if (c.request_timeout_ms < c.command_timeout_ms)
    return "redis.request_timeout_ms: must be at least command_timeout_ms";
  if (c.refresh_interval_ms < 10) return "redis.refresh_interval_ms: must be at least 10";
  if (c.connection.connect_timeout_ms < 10) return "redis.connect_timeout_ms: must be at least 10";
  if (c.connection.reconnect_min_ms == 0 || c.connection.reconnect_max_ms < c.connection.reconnect_min_ms)
    return "redis.reconnect_min_ms/reconnect_max_ms: want 1 <= min <= max";
  return "";
}

struct RedisClientImpl::Request {
  Request* prev = nullptr;
  Request* next = nullptr;
  RequestList* list = nullptr;  // the list holding it, if any
  Node* node = nullptr;         // where it waits or is in flight
  Node* redirect_to = nullptr;  // MOVED/ASK target named by this send's answers
  std::string wire;             // every command of the request, RESP-encoded, back to back
  std::array<uint32_t, kMaxGroupCommands> ends{};
  RedisCompletion done;
  uint64_t submitted_ns = 0;
  uint64_t sent_ns = 0;
  uint16_t slot = 0;
  uint8_t commands = 0;
  uint8_t awaiting = 0;  // answers still due for the current send
  uint8_t redirects = 0;
  uint8_t flags = 0;
  bool asking = false;       // precede with ASKING (an ASK redirection is being followed)
  bool redirect_ask = false;
  bool lost = false;         // an answer came back NULL: the connection went
  bool retry_later = false;  // an answer said the cluster or server is not ready
};

struct RedisClientImpl::Node final : RedisConnection::Listener {
  Node(RedisClientImpl& c, std::string_view host, int port) : client(c), conn(c.loop_, *this, c.config_.connection) {
    if (port != 0) conn.setAddress(std::string(host), port);
  }
  void onUp(RedisConnection&) noexcept override { client.nodeUp(*this); }
  void onDown(RedisConnection&, bool was_up) noexcept override { client.nodeDown(*this, was_up); }

  RedisClientImpl& client;
  RedisConnection conn;
  RequestList retry, queue, in_flight;
  uint32_t owned_slots = 0;
  RedisErrc loss = RedisErrc::kConnectionLost;  // what a NULL answer means now
  bool had_trouble = false;                     // a connect failed or the connection was lost
};

struct RedisClientImpl::SentinelLink final : RedisConnection::Listener {
  SentinelLink(RedisClientImpl& c, bool watch) : client(c), conn(c.loop_, *this, c.config_.connection), watches(watch) {}
  void onUp(RedisConnection&) noexcept override { client.sentinelUp(*this); }
  void onDown(RedisConnection&, bool) noexcept override { client.sentinelDown(*this); }

  RedisClientImpl& client;
  RedisConnection conn;
  bool watches;  // subscribed to +switch-master, else used for queries
  std::size_t index = 0;
};

void RedisClientImpl::RequestList::pushBack(Request* r) noexcept {
  r->prev = tail;
  r->next = nullptr;
  (tail ? tail->next : head) = r;
  tail = r;
  r->list = this;
  ++size;
}

RedisClientImpl::Request* RedisClientImpl::RequestList::popFront() noexcept {
  Request* r = head;
  if (r != nullptr) remove(r);
  return r;
}

void RedisClientImpl::RequestList::remove(Request* r) noexcept {
  (r->prev ? r->prev->next : head) = r->next;
  (r->next ? r->next->prev : tail) = r->prev;
  r->prev = r->next = nullptr;
  r->list = nullptr;
  --size;
}

tl::expected<std::unique_ptr<RedisClientImpl>, std::string> RedisClientImpl::create(EventLoop& loop,
                                                                                   const RedisClientConfig& config,
                                                                                   RedisCounters* counters) {
  if (std::string error = validate(config); !error.empty()) return tl::unexpected(std::move(error));
  // hiredis writes with write(2), not send(MSG_NOSIGNAL): a write to a Redis
  // that has just reset its connection (killed, failed over) would raise
  // SIGPIPE and end the process instead of failing the command.
  signal(SIGPIPE, SIG_IGN);
  return std::unique_ptr<RedisClientImpl>(new RedisClientImpl(loop, config, counters));
}

RedisClientImpl::RedisClientImpl(EventLoop& loop, const RedisClientConfig& config, RedisCounters* counters)
    : loop_(loop),
      config_(config),
      counters_(counters ? counters : &own_counters_),
      pool_(new Request[config.max_pending]),
      slots_(kSlotCount, nullptr),
      unowned_slots_(kSlotCount),
      tick_(loop, &RedisClientImpl::onTick, this) {
  for (uint32_t i = 0; i < config_.max_pending; ++i) free_.pushBack(&pool_[i]);
  switch (config_.mode) {
    case RedisMode::kSingle:
    case RedisMode::kSentinel: {
      const bool single = config_.mode == RedisMode::kSingle;
      const auto& e = config_.endpoints.front();
      nodes_.push_back(std::make_unique<Node>(*this, single ? e.host : "", single ? e.port : 0));
      for (uint32_t s = 0; s < kSlotCount; ++s) setOwner(static_cast<uint16_t>(s), nodes_.front().get());
      have_topology_ = single;
      if (single) nodes_.front()->conn.start();
      break;
    }
    case RedisMode::kCluster:
      for (const auto& e : config_.endpoints) nodeFor(e.host, e.port);
      break;
  }
  if (config_.mode == RedisMode::kSentinel) {
    query_command_ = formatCommand({"SENTINEL", "get-master-addr-by-name", config_.master_name});
    subscribe_command_ = formatCommand({"SUBSCRIBE", "+switch-master"});
    sentinel_query_ = std::make_unique<SentinelLink>(*this, false);
    sentinel_watch_ = std::make_unique<SentinelLink>(*this, true);
    for (SentinelLink* link : {sentinel_query_.get(), sentinel_watch_.get()}) {
      const auto& e = config_.endpoints.front();
      link->conn.setAddress(e.host, e.port);
      link->conn.start();
    }
    refresh_wanted_ = true;
  }
  updateConnected();
  ensureTick();
}

RedisClientImpl::~RedisClientImpl() {
  shutting_down_ = true;
  tick_.disarm();
  // Closing a connection answers its commands with NULL (kShutdown below).
  if (sentinel_query_) sentinel_query_->conn.stop();
  if (sentinel_watch_) sentinel_watch_->conn.stop();
  for (auto& n : nodes_) n->conn.stop();
  for (auto& n : nodes_)
    for (RequestList* l : {&n->retry, &n->queue})
      while (Request* r = l->popFront()) complete(r, RedisErrc::kShutdown);
  for (RequestList* l : {&unrouted_, &parked_})
    while (Request* r = l->popFront()) complete(r, RedisErrc::kShutdown);
}

void RedisClientImpl::primaries(std::vector<std::string>& out) const {
  const Node* last = nullptr;
  for (const Node* n : slots_) {
    if (n == nullptr || n == last || n->conn.port() == 0) continue;
    last = n;
    std::string a = n->conn.host().find(':') != std::string::npos ? "[" + n->conn.host() + "]" : n->conn.host();
    a += ":" + std::to_string(n->conn.port());
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(std::move(a));
  }
}

uintptr_t RedisClientImpl::primaryOf(uint16_t slot) const noexcept {
  return slot < slots_.size() ? reinterpret_cast<uintptr_t>(slots_[slot]) : 0;
}

RedisErrc RedisClientImpl::submit(uint16_t slot, RedisArgv argv, RedisCompletion done, uint8_t flags) noexcept {
  return submitGroup(slot, std::span<const RedisArgv>(&argv, 1), done, flags);
}

RedisErrc RedisClientImpl::submitGroup(uint16_t slot, std::span<const RedisArgv> commands, RedisCompletion done,
                                       uint8_t flags) noexcept {
  if (shutting_down_) return RedisErrc::kShutdown;
  if (commands.empty() || commands.size() > kMaxGroupCommands || slot >= kSlotCount) return RedisErrc::kBadCommand;
  for (const RedisArgv& argv : commands)
    if (argv.empty()) return RedisErrc::kBadCommand;
  Request* r = free_.popFront();
  if (r == nullptr) {
    counters_->refused.add();
    return RedisErrc::kRefused;
  }
  r->wire.clear();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    appendCommand(r->wire, commands[i]);
    r->ends[i] = static_cast<uint32_t>(r->wire.size());
  }
  r->commands = static_cast<uint8_t>(commands.size());
  r->slot = slot;
  r->flags = flags;
  r->done = done;
  r->redirects = 0;
  r->asking = false;
  r->submitted_ns = monotonicNs();
  ++held_;
  counters_->submitted.add();
  route(r);
  updateGauges();
  return RedisErrc::kOk;
}

void RedisClientImpl::route(Request* r) noexcept {
  Node* n = slots_[r->slot];
  r->node = n;
  if (n == nullptr) {
    unrouted_.pushBack(r);
    wantRefresh();
    return;
  }
  n->queue.pushBack(r);
  dispatch(*n);
}

void RedisClientImpl::dispatch(Node& n) noexcept {
  if (!n.conn.up()) {
    ensureTick();
    return;
  }
  while (n.in_flight.size < config_.max_in_flight) {
    Request* r = n.retry.head ? n.retry.popFront() : n.queue.popFront();
    if (r == nullptr) break;
    if (!send(n, r)) {
      n.retry.pushBack(r);
      break;
    }
  }
}

bool RedisClientImpl::send(Node& n, Request* r) noexcept {
  if (r->asking && !n.conn.send(kAsking.data(), kAsking.size(), nullptr, nullptr)) return false;
  uint32_t start = 0;
  uint8_t sent = 0;
  for (uint8_t i = 0; i < r->commands; ++i) {
    if (!n.conn.send(r->wire.data() + start, r->ends[i] - start, &RedisClientImpl::onReply, r)) break;
    start = r->ends[i];
    ++sent;
  }
  if (sent == 0) return false;
  // Commands are appended to one buffer and the connection is up: either all
  // or none go. A partial group would be answered partly; it counts as lost.
  r->awaiting = sent;
  r->lost = sent != r->commands;
  r->retry_later = false;
  r->redirect_to = nullptr;
  r->node = &n;
  r->sent_ns = monotonicNs();
  n.in_flight.pushBack(r);
  ++in_flight_;
  updateGauges();
  ensureTick();
  return true;
}

void RedisClientImpl::onReply(redisAsyncContext*, void* reply, void* privdata) {
  auto* r = static_cast<Request*>(privdata);
  r->node->client.answered(*r->node, r, static_cast<const redisReply*>(reply));
}

void RedisClientImpl::answered(Node& n, Request* r, const redisReply* reply) noexcept {
  --r->awaiting;
  if (reply == nullptr) {
    r->lost = true;
  } else if (reply->type == REDIS_REPLY_ERROR) {
    classifyError(r, replyText(reply));
  }
  if (r->awaiting > 0) return;
  n.in_flight.remove(r);
  --in_flight_;
  if (r->lost) {
    requeueLost(n, r);
  } else if (r->redirect_to != nullptr) {
    redirect(r);
  } else if (r->retry_later) {
    park(r);
  } else {
    complete(r, reply->type == REDIS_REPLY_ERROR ? RedisErrc::kReplyError : RedisErrc::kOk, reply);
  }
  // A NULL answer means the connection is going: nothing can be sent on it.
  if (reply != nullptr && !shutting_down_) dispatch(n);
}

void RedisClientImpl::classifyError(Request* r, std::string_view error) noexcept {
  const bool moved = startsWith(error, "MOVED ");
  if ((moved || startsWith(error, "ASK ")) && config_.mode == RedisMode::kCluster) {
    (moved ? counters_->moved : counters_->ask).add();
    const auto target = parseRedirect(error);
    if (!target) return;  // passed on as a reply error
    const auto& [slot, where] = *target;
    Node* to = nodeFor(where.host.empty() ? r->node->conn.host() : where.host, where.port);
    r->redirect_to = to;
    r->redirect_ask = !moved;
    if (moved) {
      setOwner(slot, to);
      wantRefresh();
    }
    return;
  }
  if (startsWith(error, "CLUSTERDOWN") || startsWith(error, "TRYAGAIN") || startsWith(error, "LOADING") ||
      startsWith(error, "READONLY") || startsWith(error, "MASTERDOWN")) {
    // Not executed: safe to send again whatever the command.
    r->retry_later = true;
    wantRefresh();
  }
}

void RedisClientImpl::requeueLost(Node& n, Request* r) noexcept {
  if (shutting_down_) return complete(r, RedisErrc::kShutdown);
  if ((r->flags & kRedisIdempotent) == 0 || expired(r, monotonicNs())) return complete(r, n.loss);
  counters_->resent.add();
  // NULL answers come oldest first: appending keeps the order they were sent in.
  n.retry.pushBack(r);
  ensureTick();
}

void RedisClientImpl::redirect(Request* r) noexcept {
  if (++r->redirects > config_.max_redirects) {
    counters_->redirect_failures.add();
    return complete(r, RedisErrc::kTooManyRedirects);
  }
  Node* to = r->redirect_to;
  r->asking = r->redirect_ask;
  r->node = to;
  to->retry.pushBack(r);
  to->conn.start();
  dispatch(*to);
}

void RedisClientImpl::park(Request* r) noexcept {
  counters_->retried.add();
  if (expired(r, monotonicNs())) return complete(r, RedisErrc::kTimeout);
  // It reached a node that could serve it (a multi-key command during a
  // migration gets ASK then TRYAGAIN until the migration ends): the redirect
  // budget starts again; request_timeout_ms bounds the waiting.
  r->redirects = 0;
  r->node = nullptr;
  parked_.pushBack(r);
  ensureTick();
}

bool RedisClientImpl::expired(const Request* r, uint64_t now_ns) const noexcept {
  return now_ns - r->submitted_ns > uint64_t{config_.request_timeout_ms} * 1'000'000u;
}

void RedisClientImpl::complete(Request* r, RedisErrc e, const redisReply* reply) noexcept {
  switch (e) {
    case RedisErrc::kOk: counters_->completed.add(); break;
    case RedisErrc::kReplyError: counters_->reply_errors.add(); break;
    case RedisErrc::kConnectionLost: counters_->lost.add(); break;
    case RedisErrc::kTimeout: counters_->timeouts.add(); break;
    default: break;
  }
  const RedisCompletion done = r->done;
  r->node = nullptr;
  free_.pushBack(r);
  --held_;
  updateGauges();
  // Last: the completion may submit, and reuse this request.
  if (done.fn != nullptr) done.fn(done.user, RedisResult{e, reply});
}

void RedisClientImpl::nodeUp(Node& n) noexcept {
  counters_->connects.add();
  if (n.had_trouble) counters_->reconnects.add();
  n.loss = RedisErrc::kConnectionLost;
  spdlog::info("redis: connected to {}", n.conn.name());
  if (config_.mode == RedisMode::kCluster && (!have_topology_ || refresh_wanted_)) refresh();
  dispatch(n);
  updateConnected();
}

void RedisClientImpl::nodeDown(Node& n, bool was_up) noexcept {
  n.had_trouble = true;
  (was_up ? counters_->disconnects : counters_->connect_failures).add();
  uint64_t suppressed = 0;
  if (was_up || warn_limit_.allow(monotonicNs(), suppressed))
    spdlog::warn("redis: {} {} ({} similar messages suppressed)", n.conn.name(),
                 was_up ? "connection lost" : "connect failed", suppressed);
  if (shutting_down_) return;
  // A primary that went away: its slots (or the only primary) may have moved.
  if (n.owned_slots > 0) wantRefresh();
  // A node that no longer owns anything and holds nothing is not worth
  // reconnecting to: a dead primary replaced by its replica.
  if (config_.mode == RedisMode::kCluster && have_topology_ && n.owned_slots == 0 && n.retry.size == 0 &&
      n.queue.size == 0)
    n.conn.stop();
  updateConnected();
  ensureTick();
}

RedisClientImpl::Node* RedisClientImpl::nodeFor(std::string_view host, int port) noexcept {
  for (auto& n : nodes_)
    if (n->conn.port() == port && n->conn.host() == host) return n.get();
  nodes_.push_back(std::make_unique<Node>(*this, host, port));
  nodes_.back()->conn.start();
  return nodes_.back().get();
}

void RedisClientImpl::setOwner(uint16_t slot, Node* n) noexcept {
  Node*& owner = slots_[slot];
  if (owner == n) return;
  if (owner != nullptr) {
    --owner->owned_slots;
  } else {
    --unowned_slots_;
  }
  if (n != nullptr) {
    ++n->owned_slots;
  } else {
    ++unowned_slots_;
  }
  owner = n;
}

void RedisClientImpl::reroute() noexcept {
  RequestList moving;
  for (auto& n : nodes_) {
    for (RequestList* l : {&n->retry, &n->queue}) {
      for (Request* r = l->head; r != nullptr;) {
        Request* next = r->next;
        // An ASK redirection is followed where it points, whatever the map says.
        if (slots_[r->slot] != n.get() && !r->asking) {
          l->remove(r);
          moving.pushBack(r);
        }
        r = next;
      }
    }
  }
  for (RequestList* l : {&unrouted_, &parked_})
    while (Request* r = l->popFront()) moving.pushBack(r);
  while (Request* r = moving.popFront()) {
    Node* n = slots_[r->slot];
    r->node = n;
    (n ? n->queue : unrouted_).pushBack(r);
  }
  for (auto& n : nodes_) dispatch(*n);
}

void RedisClientImpl::updateConnected() noexcept {
  bool up = have_topology_ && unowned_slots_ == 0;
  for (const auto& n : nodes_)
    if (n->owned_slots > 0 && !n->conn.up()) up = false;
  counters_->connected.set(up ? 1 : 0);
}

void RedisClientImpl::updateGauges() noexcept {
  counters_->in_flight.set(in_flight_);
  counters_->queued.set(held_ - in_flight_);
}

void RedisClientImpl::wantRefresh() noexcept {
  if (config_.mode == RedisMode::kSingle) return;
  refresh_wanted_ = true;
  if (monotonicNs() - refresh_sent_ns_ >= uint64_t{config_.refresh_interval_ms} * 1'000'000u) refresh();
  ensureTick();
}

// One question at a time (a new one only when the last is answered or older
// than command_timeout_ms), to the next reachable node or sentinel in turn.
void RedisClientImpl::refresh() noexcept {
  const uint64_t now = monotonicNs();
  if (refresh_in_flight_ && now - refresh_sent_ns_ < uint64_t{config_.command_timeout_ms} * 1'000'000u) return;
  if (config_.mode == RedisMode::kSentinel) {
    if (!sentinel_query_->conn.send(query_command_.data(), query_command_.size(), &onPrimaryAddress, this)) return;
  } else {
    Node* asked = nullptr;
    for (std::size_t i = 0; i < nodes_.size() && asked == nullptr; ++i) {
      Node* n = nodes_[(refresh_cursor_ + i) % nodes_.size()].get();
      if (n->conn.up() && n->conn.send(kClusterSlots.data(), kClusterSlots.size(), &onClusterSlots, n)) asked = n;
    }
    if (asked == nullptr) {
      // Nobody to ask: every known node (seeds included) tries to connect, and
      // the first to come up is asked.
      for (auto& n : nodes_) n->conn.start();
      return;
    }
    ++refresh_cursor_;
  }
  refresh_in_flight_ = true;
  refresh_wanted_ = false;
  refresh_sent_ns_ = now;
}

void RedisClientImpl::onClusterSlots(redisAsyncContext*, void* reply, void* privdata) {
  auto* n = static_cast<Node*>(privdata);
  n->client.applyClusterSlots(*n, static_cast<const redisReply*>(reply));
}

// CLUSTER SLOTS: [[first, last, [host, port, id...], replicas...]...]
void RedisClientImpl::applyClusterSlots(Node& asked, const redisReply* reply) noexcept {
  refresh_in_flight_ = false;
  if (shutting_down_) return;
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) {
    uint64_t suppressed = 0;
    if (reply != nullptr && warn_limit_.allow(monotonicNs(), suppressed))
      spdlog::warn("redis: CLUSTER SLOTS on {} answered '{}': is it a cluster node?", asked.conn.name(),
                   replyText(reply));
    refresh_wanted_ = true;
    ensureTick();
    return;
  }
  std::vector<Node*> owners(kSlotCount, nullptr);
  for (std::size_t i = 0; i < reply->elements; ++i) {
    const redisReply* range = reply->element[i];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3) continue;
    const redisReply* first = range->element[0];
    const redisReply* last = range->element[1];
    const redisReply* primary = range->element[2];
    if (first->type != REDIS_REPLY_INTEGER || last->type != REDIS_REPLY_INTEGER ||
        primary->type != REDIS_REPLY_ARRAY || primary->elements < 2 ||
        primary->element[0]->type != REDIS_REPLY_STRING || primary->element[1]->type != REDIS_REPLY_INTEGER)
      continue;
    if (first->integer < 0 || last->integer >= kSlotCount || first->integer > last->integer) continue;
    const auto port = static_cast<int>(primary->element[1]->integer);
    const std::string_view host = replyText(primary->element[0]);
    // An empty host: the node does not know its address; it is the one asked.
    Node* owner = nodeFor(host.empty() ? asked.conn.host() : host, port);
    for (long long s = first->integer; s <= last->integer; ++s) owners[static_cast<std::size_t>(s)] = owner;
  }
  bool changed = !have_topology_;
  for (uint32_t s = 0; s < kSlotCount; ++s) {
    changed |= slots_[s] != owners[s];
    setOwner(static_cast<uint16_t>(s), owners[s]);
  }
  have_topology_ = true;
  counters_->topology_refreshes.add();
  if (changed) spdlog::info("redis: slot map from {}: {} slots without a primary", asked.conn.name(), unowned_slots_);
  reroute();
  for (auto& n : nodes_) {
    if (n->owned_slots > 0) {
      n->conn.start();
    } else if (!n->conn.up() && n->retry.size == 0 && n->queue.size == 0) {
      n->conn.stop();
    }
  }
  updateConnected();
  ensureTick();
}

void RedisClientImpl::sentinelUp(SentinelLink& link) noexcept {
  if (link.watches) {
    link.conn.send(subscribe_command_.data(), subscribe_command_.size(), &onSwitchMaster, this);
  } else {
    refresh_in_flight_ = false;
    refresh();
  }
}

void RedisClientImpl::sentinelDown(SentinelLink& link) noexcept {
  if (shutting_down_) return;
  if (!link.watches) refresh_in_flight_ = false;
  // The next sentinel, after the back-off the connection applies anyway.
  link.index = (link.index + 1) % config_.endpoints.size();
  const auto& e = config_.endpoints[link.index];
  link.conn.setAddress(e.host, e.port);
}

void RedisClientImpl::onPrimaryAddress(redisAsyncContext*, void* reply, void* privdata) {
  auto* c = static_cast<RedisClientImpl*>(privdata);
  const auto* r = static_cast<const redisReply*>(reply);
  c->refresh_in_flight_ = false;
  if (c->shutting_down_ || r == nullptr) return;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
      r->element[1]->type == REDIS_REPLY_STRING) {
    if (const auto port = parsePort(replyText(r->element[1]))) return c->applyPrimary(replyText(r->element[0]), *port);
  }
  uint64_t suppressed = 0;
  if (c->warn_limit_.allow(monotonicNs(), suppressed))
    spdlog::warn("redis: sentinel {} knows no primary named '{}'", c->sentinel_query_->conn.name(),
                 c->config_.master_name);
  c->refresh_wanted_ = true;
  c->ensureTick();
}

// +switch-master messages: "<name> <old host> <old port> <new host> <new port>".
void RedisClientImpl::onSwitchMaster(redisAsyncContext*, void* reply, void* privdata) {
  auto* c = static_cast<RedisClientImpl*>(privdata);
  const auto* r = static_cast<const redisReply*>(reply);
  if (c->shutting_down_ || r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
      replyText(r->element[0]) != "message" || r->element[2]->type != REDIS_REPLY_STRING)
    return;
  std::array<std::string_view, 5> words;
  std::string_view rest = replyText(r->element[2]);
  for (auto& w : words) {
    const auto space = rest.find(' ');
    w = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  const auto port = parsePort(words[4]);
  if (words[0] != c->config_.master_name || !port) return;
  c->counters_->primary_switches.add();
  c->applyPrimary(words[3], *port);
}

void RedisClientImpl::applyPrimary(std::string_view host, int port) noexcept {
  Node& primary = *nodes_.front();
  counters_->topology_refreshes.add();
  have_topology_ = true;
  if (primary.conn.host() != host || primary.conn.port() != port) {
    spdlog::info("redis: primary '{}' is {}:{}", config_.master_name, host, port);
    // Commands in flight to the old address are lost (resent if idempotent).
    primary.conn.setAddress(std::string(host), port);
    primary.conn.start();
    primary.conn.connectSoon();
  }
  primary.conn.start();
  updateConnected();
}

void RedisClientImpl::ensureTick() noexcept {
  if (!tick_.armed() && !shutting_down_) tick_.arm(kTickMs);
}

void RedisClientImpl::onTick(void* self) noexcept { static_cast<RedisClientImpl*>(self)->tick(); }

void RedisClientImpl::tick() noexcept {
  const uint64_t now = monotonicNs();
  const uint64_t command_timeout_ns = uint64_t{config_.command_timeout_ms} * 1'000'000u;
  for (auto& n : nodes_) {
    const Request* oldest = n->in_flight.head;
    if (oldest != nullptr && now - oldest->sent_ns > command_timeout_ns) {
      // A pipeline cannot skip an answer: the connection goes, with it every
      // command in flight (resent if idempotent).
      uint64_t suppressed = 0;
      if (warn_limit_.allow(now, suppressed))
        spdlog::warn("redis: {} did not answer in {} ms, reconnecting", n->conn.name(), config_.command_timeout_ms);
      n->loss = RedisErrc::kTimeout;
      n->conn.close();
    }
    for (RequestList* l : {&n->retry, &n->queue})
      while (l->head != nullptr && expired(l->head, now)) complete(l->popFront(), RedisErrc::kTimeout);
  }
  while (unrouted_.head != nullptr && expired(unrouted_.head, now)) complete(unrouted_.popFront(), RedisErrc::kTimeout);
  while (Request* r = parked_.popFront()) route(r);
  const bool degraded = counters_->connected.load() == 0;
  if ((refresh_wanted_ || degraded) && config_.mode != RedisMode::kSingle &&
      now - refresh_sent_ns_ >= uint64_t{config_.refresh_interval_ms} * 1'000'000u)
    refresh();
  if (held_ > 0 || refresh_wanted_ || degraded) ensureTick();
}

}  // namespace gtpcp::persister
