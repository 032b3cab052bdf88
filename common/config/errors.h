// Configuration errors, as values.
//
// Loading gtpcp.yaml or a routing document never stops at the first problem:
// every problem becomes one ConfigError naming the file, the line, the key
// path and what is wrong, so that an operator fixes a file in one pass. The
// public loaders return Result<T>; exceptions stay inside the loaders.
#pragma once

#include <string>
#include <vector>

#include <tl/expected.hpp>

namespace gtpcp::config {

struct ConfigError {
  std::string file;     // display name of the file ("gtpcp.yaml", "config/routing.yaml")
  int line = 0;         // 1-based; 0 when the problem has no line (a missing key, an unreadable file)
  std::string key;      // key path ("gtpc.access.ipv4", "rules[2].match.apn[0]"); may be empty
  std::string message;  // e.g. "\"300.1.1.1\" is not an IPv4 address"

  // "file:line: key: message", leaving out the parts that are empty or 0.
  std::string toString() const;
  friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

struct ConfigErrors {
  std::vector<ConfigError> errors;

  bool empty() const noexcept { return errors.empty(); }
  std::size_t size() const noexcept { return errors.size(); }
  void add(std::string file, int line, std::string key, std::string message);
  void append(const ConfigErrors& other);
  // One line per error, each ending in '\n'.
  std::string toString() const;
};

template <class T>
using Result = tl::expected<T, ConfigErrors>;

}  // namespace gtpcp::config
