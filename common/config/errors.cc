// Formatting of configuration errors.
#include "common/config/errors.h"

#include <utility>

namespace gtpcp::config {

std::string ConfigError::toString() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  if (!out.empty()) out += ": ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

void ConfigErrors::add(std::string file, int line, std::string key, std::string message) {
  errors.push_back(ConfigError{std::move(file), line, std::move(key), std::move(message)});
}

void ConfigErrors::append(const ConfigErrors& other) {
  errors.insert(errors.end(), other.errors.begin(), other.errors.end());
}

std::string ConfigErrors::toString() const {
  std::string out;
  for (const ConfigError& e : errors) out += e.toString() + "\n";
  return out;
}

}  // namespace gtpcp::config
