#include "redis_connection.h"

#include <hiredis/async.h>
#include <sys/epoll.h>

#include <algorithm>

namespace gtpcp::persister {

RedisConnection::RedisConnection(EventLoop& loop, Listener& listener, const ConnectionOptions& options) noexcept
    : loop_(loop),
      listener_(listener),
      options_(options),
      io_{&RedisConnection::onIo, this},
      connect_timer_(loop, &RedisConnection::onConnectTimeout, this),
      retry_timer_(loop, &RedisConnection::onRetry, this),
      ended_timer_(loop, &RedisConnection::onEnded, this) {}

RedisConnection::~RedisConnection() {
  started_ = false;
  if (ac_ != nullptr) redisAsyncFree(ac_);
}

void RedisConnection::setAddress(const std::string& host, int port) noexcept {
  if (host == host_ && port == port_) return;
  host_ = host;
  port_ = port;
  name_ = host + ":" + std::to_string(port);
  close();
}

void RedisConnection::connectSoon() noexcept {
  if (started_ && ac_ == nullptr && !ended_timer_.armed()) retry_timer_.arm(0);
}

void RedisConnection::start() noexcept {
  started_ = true;
  if (ac_ == nullptr && !ended_timer_.armed() && !retry_timer_.armed()) retry_timer_.arm(0);
}

void RedisConnection::stop() noexcept {
  started_ = false;
  retry_timer_.disarm();
  close();
}

void RedisConnection::close() noexcept {
  if (ac_ == nullptr || closing_) return;
  closing_ = true;
  // Inside one of this context's reply callbacks hiredis defers the free
  // until the callback returns; cleanup then reports the end.
  redisAsyncFree(ac_);
}

bool RedisConnection::send(const char* cmd, size_t len, ReplyFn fn, void* privdata) noexcept {
  if (state_ != State::kUp || closing_) return false;
  return redisAsyncFormattedCommand(ac_, fn, privdata, cmd, len) == REDIS_OK;
}

void RedisConnection::connectNow() noexcept {
  if (ac_ != nullptr || !started_ || port_ == 0) return;
  redisAsyncContext* ac = redisAsyncConnect(host_.c_str(), port_);
  was_up_ = false;
  if (ac == nullptr || ac->err != 0) {
    // Refused before any event: no hook is attached yet, so free it here.
    if (ac != nullptr) redisAsyncFree(ac);
    ended_timer_.arm(0);
    return;
  }
  ac_ = ac;
  closing_ = false;
  fd_ = ac->c.fd;
  reading_ = writing_ = false;
  registered_ = loop_.add(fd_, &io_, 0);
  ac->data = this;
  ac->ev.data = this;
  ac->ev.addRead = &RedisConnection::hiredisAddRead;
  ac->ev.delRead = &RedisConnection::hiredisDelRead;
  ac->ev.addWrite = &RedisConnection::hiredisAddWrite;
  ac->ev.delWrite = &RedisConnection::hiredisDelWrite;
  ac->ev.cleanup = &RedisConnection::hiredisCleanup;
  state_ = State::kConnecting;
  connect_timer_.arm(options_.connect_timeout_ms);
  // Asks for the first write event, which completes the connect.
  redisAsyncSetConnectCallback(ac, &RedisConnection::hiredisConnected);
  if (!registered_) close();
}

void RedisConnection::scheduleReconnect() noexcept {
  if (!started_ || retry_timer_.armed()) return;
  retry_timer_.arm(backoff_ms_);
  backoff_ms_ = std::clamp(backoff_ms_ * 2, options_.reconnect_min_ms, options_.reconnect_max_ms);
}

void RedisConnection::unregister() noexcept {
  if (registered_) loop_.remove(fd_);
  registered_ = false;
  reading_ = writing_ = false;
}

void RedisConnection::updateInterest() noexcept {
  if (!registered_) return;
  loop_.modify(fd_, &io_, (reading_ ? EPOLLIN : 0u) | (writing_ ? EPOLLOUT : 0u));
}

void RedisConnection::onIo(void* self, uint32_t events) noexcept {
  auto* c = static_cast<RedisConnection*>(self);
  // An event of this batch for a context already gone.
  if (c->ac_ == nullptr) return;
  const bool error = (events & (EPOLLERR | EPOLLHUP)) != 0;
  if ((events & EPOLLOUT) != 0 || (error && c->writing_)) redisAsyncHandleWrite(c->ac_);
  // The write may have ended the context (cleanup cleared ac_).
  if (c->ac_ == nullptr) return;
  if ((events & EPOLLIN) != 0 || error) redisAsyncHandleRead(c->ac_);
}

void RedisConnection::onConnectTimeout(void* self) noexcept {
  auto* c = static_cast<RedisConnection*>(self);
  if (c->state_ == State::kConnecting) c->close();
}

void RedisConnection::onRetry(void* self) noexcept { static_cast<RedisConnection*>(self)->connectNow(); }

void RedisConnection::onEnded(void* self) noexcept {
  auto* c = static_cast<RedisConnection*>(self);
  const bool was_up = c->was_up_;
  c->was_up_ = false;
  if (was_up) {
    c->backoff_ms_ = 0;
  } else {
    ++c->failures_;
  }
  c->scheduleReconnect();
  c->listener_.onDown(*c, was_up);
}

void RedisConnection::hiredisConnected(const redisAsyncContext* ac, int status) {
  auto* c = static_cast<RedisConnection*>(ac->data);
  // On failure hiredis frees the context right after this returns.
  if (status != REDIS_OK) return;
  c->state_ = State::kUp;
  c->was_up_ = true;
  c->connect_timer_.disarm();
  ++c->connects_;
  c->listener_.onUp(*c);
}

// hiredis calls these often (after every write, for instance): epoll is
// only told about changes.
void RedisConnection::setInterest(bool RedisConnection::*flag, bool on) noexcept {
  if (this->*flag == on) return;
  this->*flag = on;
  updateInterest();
}

void RedisConnection::hiredisAddRead(void* self) {
  static_cast<RedisConnection*>(self)->setInterest(&RedisConnection::reading_, true);
}
void RedisConnection::hiredisDelRead(void* self) {
  static_cast<RedisConnection*>(self)->setInterest(&RedisConnection::reading_, false);
}
void RedisConnection::hiredisAddWrite(void* self) {
  static_cast<RedisConnection*>(self)->setInterest(&RedisConnection::writing_, true);
}
void RedisConnection::hiredisDelWrite(void* self) {
  static_cast<RedisConnection*>(self)->setInterest(&RedisConnection::writing_, false);
}

void RedisConnection::hiredisCleanup(void* self) {
  auto* c = static_cast<RedisConnection*>(self);
  // hiredis 0.14 may call cleanup twice for one context (on disconnect, then
  // on free); only the first counts.
  if (c->ac_ == nullptr) return;
  c->unregister();
  c->ac_ = nullptr;
  c->state_ = State::kDown;
  c->connect_timer_.disarm();
  c->ended_timer_.arm(0);
}

}  // namespace gtpcp::persister
