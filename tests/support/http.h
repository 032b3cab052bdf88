// Test support: a blocking HTTP/1.0 GET over a TCP socket, for tests that
// read gtpcp-console's endpoints or a Prometheus server's HTTP API on
// loopback. HTTP/1.0 keeps it small: the server closes the connection after
// the body (no keep-alive, no chunked encoding); no TLS, no redirects, no
// host names other than literal IPv4 addresses and "localhost".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gtpcp::testing {

struct HttpResponse {
  int status = 0;       // the status line's code
  std::string headers;  // the header lines as received, status line excluded
  std::string body;

  // The value of header `name` (case-insensitive), "" when there is none.
  std::string header(std::string_view name) const;
};

// GET `url` ("http://127.0.0.1:9090/api/v1/query?query=up"), the whole
// exchange bounded by `timeout`. nullopt when there is no complete answer
// (connect refused, timeout, not HTTP), with the reason in `*error` when
// given. Never throws; callable from any thread.
std::optional<HttpResponse> httpGet(const std::string& url,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(5),
                                    std::string* error = nullptr);

// `text` percent-encoded for a URL's query component (RFC 3986 unreserved
// characters kept, everything else %XX).
std::string urlEncode(std::string_view text);

}  // namespace gtpcp::testing
