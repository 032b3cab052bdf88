#include "tests/support/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

namespace gtpcp::testing {

namespace {

using Clock = std::chrono::steady_clock;

struct Url {
  std::string host;
  uint16_t port = 80;
  std::string target;  // path and query
};

bool parseUrl(const std::string& url, Url& out, std::string& error) {
  constexpr std::string_view kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) {
    error = "not an http:// URL: " + url;
    return false;
  }
  const std::size_t authority = kScheme.size();
  const std::size_t slash = url.find('/', authority);
  const std::string host_port =
      url.substr(authority, slash == std::string::npos ? std::string::npos : slash - authority);
  out.target = slash == std::string::npos ? "/" : url.substr(slash);
  const std::size_t colon = host_port.rfind(':');
  out.host = host_port.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string port = host_port.substr(colon + 1);
    char* end = nullptr;
    const unsigned long p = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p == 0 || p > 65535) {
      error = "bad port in " + url;
      return false;
    }
    out.port = static_cast<uint16_t>(p);
  }
  if (out.host == "localhost") out.host = "127.0.0.1";
  return true;
}

int remainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, remainingMs(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

struct Exchange {
  HttpResponse response;
  std::string error;
};

Exchange get(const std::string& url, std::chrono::milliseconds timeout) {
  Exchange x;
  HttpResponse& r = x.response;
  std::string& error = x.error;
  const Clock::time_point deadline = Clock::now() + timeout;
  Url u;
  if (!parseUrl(url, u, error)) return x;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(u.port);
  if (::inet_pton(AF_INET, u.host.c_str(), &a.sin_addr) != 1) {
    error = "not an IPv4 address: " + u.host;
    return x;
  }
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return x;
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    if (errno != EINPROGRESS) {
      error = "connect to " + u.host + ":" + std::to_string(u.port) + ": " + std::strerror(errno);
      return x;
    }
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (!waitFor(fd.get(), POLLOUT, deadline) ||
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) {
      error = "connect to " + u.host + ":" + std::to_string(u.port) + ": " +
              (so_error != 0 ? std::strerror(so_error) : "timed out");
      return x;
    }
  }
  const std::string request = "GET " + u.target + " HTTP/1.0\r\nHost: " + u.host + ":" + std::to_string(u.port) +
                              "\r\nAccept: */*\r\nConnection: close\r\n\r\n";
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!waitFor(fd.get(), POLLOUT, deadline)) {
        error = "sending the request timed out";
        return x;
      }
    } else {
      error = std::string("send: ") + std::strerror(errno);
      return x;
    }
  }
  std::string reply;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n > 0) {
      reply.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!waitFor(fd.get(), POLLIN, deadline)) {
        error = "no complete answer within " + std::to_string(timeout.count()) + " ms (" +
                std::to_string(reply.size()) + " octets read)";
        return x;
      }
    } else {
      error = std::string("recv: ") + std::strerror(errno);
      return x;
    }
  }
  // "HTTP/1.x NNN reason\r\n" headers "\r\n\r\n" body.
  const std::size_t end_of_headers = reply.find("\r\n\r\n");
  if (reply.compare(0, 5, "HTTP/") != 0 || end_of_headers == std::string::npos) {
    error = "not an HTTP answer: " + reply.substr(0, 80);
    return x;
  }
  const std::size_t space = reply.find(' ');
  r.status = space < end_of_headers ? std::atoi(reply.c_str() + space + 1) : 0;
  const std::size_t first_header = reply.find("\r\n") + 2;
  r.headers = first_header < end_of_headers ? reply.substr(first_header, end_of_headers - first_header) : "";
  if (r.header("Transfer-Encoding").find("chunked") != std::string::npos) {
    error = "chunked answer to an HTTP/1.0 request";
    return x;
  }
  r.body = reply.substr(end_of_headers + 4);
  return x;
}

bool equalNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  std::size_t at = 0;
  while (at < headers.size()) {
    std::size_t end = headers.find("\r\n", at);
    if (end == std::string::npos) end = headers.size();
    const std::string_view line(headers.data() + at, end - at);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && equalNoCase(line.substr(0, colon), name)) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      return std::string(value);
    }
    at = end + 2;
  }
  return {};
}

std::optional<HttpResponse> httpGet(const std::string& url, std::chrono::milliseconds timeout, std::string* error) {
  Exchange x = get(url, timeout);
  if (!x.error.empty()) {
    if (error != nullptr) *error = x.error;
    return std::nullopt;
  }
  return std::move(x.response);
}

std::string urlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

}  // namespace gtpcp::testing
