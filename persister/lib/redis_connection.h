// One hiredis asynchronous connection driven by the persister's EventLoop,
// kept up: connected without blocking (redisAsyncConnect), bounded by a
// connect deadline, and reconnected with exponential back-off after every
// failure or loss until stop().
//
// hiredis 0.14 has no event-library binding of ours, so this class is it: the
// context's ev.addRead/delRead/addWrite/delWrite/cleanup hooks map onto epoll
// interest in the context's socket.
//
// Life of a context, as hiredis 0.14 runs it, and what this class relies on:
//   * onConnect(OK) once the socket is writable; commands sent from there on
//     are written by the same redisAsyncHandleWrite() call.
//   * A connect that fails calls onConnect(ERR), then frees the context.
//   * A loss (read/write error, EOF) or redisAsyncFree() runs every pending
//     command callback with a NULL reply, in order, then cleanup, then
//     onDisconnect (only if it had connected), then frees the context.
//   * redisAsyncFree() from inside a reply callback of the same context is
//     deferred by hiredis until that callback returns; from inside onConnect it
//     is not (hiredis 0.14 uses the context afterwards), hence close() never
//     frees synchronously there.
// The owner hears about a loss from a zero-delay timer armed by the cleanup
// hook, when hiredis is done with the context, never from inside hiredis.
//
// Single-threaded: every call on the loop's thread.
#pragma once

#include <cstdint>
#include <string>

#include "event_loop.h"

struct redisAsyncContext;
struct redisReply;

namespace gtpcp::persister {

struct ConnectionOptions {
  uint32_t connect_timeout_ms = 1000;
  uint32_t reconnect_min_ms = 10;
  uint32_t reconnect_max_ms = 500;
};

class RedisConnection {
 public:
  // The owner's side. onUp() may send commands; onDown() runs from the loop
  // (not from inside hiredis) after a connect failure (`was_up` false) or the
  // loss of an established connection (`was_up` true).
  class Listener {
   public:
    virtual void onUp(RedisConnection& c) noexcept = 0;
    virtual void onDown(RedisConnection& c, bool was_up) noexcept = 0;

   protected:
    ~Listener() = default;
  };

  // hiredis reply callback: `reply` is NULL when the connection was lost
  // before the answer; it is valid only during the call.
  using ReplyFn = void (*)(redisAsyncContext* ac, void* reply, void* privdata);

  RedisConnection(EventLoop& loop, Listener& listener, const ConnectionOptions& options) noexcept;
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Where to connect. A change closes the connection; the next attempt (at
  // once after a loss, else when the back-off ends) goes to the new address.
  void setAddress(const std::string& host, int port) noexcept;
  // Cuts a pending back-off short: the address just changed for a reason.
  void connectSoon() noexcept;
  // Connects now (if not already up or connecting) and keeps reconnecting.
  void start() noexcept;
  // Closes the connection (pending commands get NULL replies) and stays down.
  void stop() noexcept;
  // Closes the connection now; reconnects after back-off. For a server that
  // stopped answering.
  void close() noexcept;

  bool up() const noexcept { return state_ == State::kUp; }
  bool started() const noexcept { return started_; }
  const std::string& host() const noexcept { return host_; }
  int port() const noexcept { return port_; }
  // "host:port", for logs and for matching redirections.
  const std::string& name() const noexcept { return name_; }

  // Appends one RESP-encoded command (`len` bytes at `cmd`) to the output
  // buffer; `fn(privdata)` gets its reply. `fn` may be null to ignore the
  // reply. False when the connection is not up (nothing was queued).
  bool send(const char* cmd, size_t len, ReplyFn fn, void* privdata) noexcept;

  uint64_t connects() const noexcept { return connects_; }
  uint64_t failures() const noexcept { return failures_; }

 private:
  enum class State : uint8_t { kDown, kConnecting, kUp };

  void connectNow() noexcept;
  void scheduleReconnect() noexcept;
  void unregister() noexcept;
  void updateInterest() noexcept;
  void setInterest(bool RedisConnection::*flag, bool on) noexcept;
  static void onIo(void* self, uint32_t events) noexcept;
  static void onConnectTimeout(void* self) noexcept;
  static void onRetry(void* self) noexcept;
  static void onEnded(void* self) noexcept;
  static void hiredisConnected(const redisAsyncContext* ac, int status);
  static void hiredisAddRead(void* self);
  static void hiredisDelRead(void* self);
  static void hiredisAddWrite(void* self);
  static void hiredisDelWrite(void* self);
  static void hiredisCleanup(void* self);

  EventLoop& loop_;
  Listener& listener_;
  ConnectionOptions options_;
  std::string host_;
  int port_ = 0;
  std::string name_;
  redisAsyncContext* ac_ = nullptr;  // null once hiredis has cleaned it up
  int fd_ = -1;
  bool reading_ = false, writing_ = false, registered_ = false;
  bool closing_ = false;  // redisAsyncFree() called on ac_
  bool was_up_ = false;   // the context that is ending had connected
  bool started_ = false;  // keep reconnecting
  State state_ = State::kDown;
  uint32_t backoff_ms_ = 0;
  IoHandler io_;
  Timer connect_timer_, retry_timer_, ended_timer_;
  uint64_t connects_ = 0, failures_ = 0;
};

}  // namespace gtpcp::persister
