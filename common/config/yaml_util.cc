// Helpers shared by the configuration loaders (see yaml_util.h).
#include "common/config/yaml_util.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace gtpcp::config::detail {

void Diagnostics::error(int line, std::string key, std::string message) {
  errors_.add(file_, line, std::move(key), std::move(message));
}

bool Diagnostics::hasErrorAt(std::string_view key) const noexcept {
  for (const ConfigError& e : errors_.errors) {
    std::string_view k = e.key;
    if (k == key) return true;
    if (k.size() > key.size() && k.substr(0, key.size()) == key &&
        (k[key.size()] == '.' || k[key.size()] == '['))
      return true;
  }
  return false;
}

ConfigErrors Diagnostics::take() {
  std::stable_sort(errors_.errors.begin(), errors_.errors.end(),
                   [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
  return std::exchange(errors_, ConfigErrors{});
}

int lineOf(const YAML::Node& node) noexcept {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string_view kindOf(const YAML::Node& node) noexcept {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: break;
  }
  return "no value";
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

bool isPlainScalar(const YAML::Node& node) {
  if (!node.IsScalar()) return false;
  const std::string& tag = node.Tag();
  return tag == "?" || tag == "tag:yaml.org,2002:int";
}

std::optional<int64_t> parseInteger(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+') return std::nullopt;  // from_chars refuses it too; be explicit
  auto [ptr, ec] = std::from_chars(first, last, value, 10);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::optional<int64_t> readInteger(const YAML::Node& node, int line, const std::string& key,
                                   int64_t min, int64_t max, Diagnostics& diag) {
  if (!node.IsScalar()) {
    diag.error(line, key, "expected an integer, found " + std::string(kindOf(node)));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  const std::optional<int64_t> value = parseInteger(text);
  if (!isPlainScalar(node)) {
    diag.error(line, key,
               "expected an integer, found the string " + quote(text) +
                   (value ? " (write numbers without quotes)" : ""));
    return std::nullopt;
  }
  if (!value) {
    diag.error(line, key, "expected an integer, found " + quote(text));
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    diag.error(line, key,
               std::to_string(*value) + " is out of range " + std::to_string(min) + ".." +
                   std::to_string(max));
    return std::nullopt;
  }
  return value;
}

const std::string* readScalar(const YAML::Node& node, int line, const std::string& key,
                              std::string_view expected, Diagnostics& diag) {
  if (!node.IsScalar()) {
    diag.error(line, key, "expected " + std::string(expected) + ", found " + std::string(kindOf(node)));
    return nullptr;
  }
  return &node.Scalar();
}

std::optional<YAML::Node> parseDocument(std::string_view text, Diagnostics& diag) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (docs.empty()) return YAML::Node(YAML::NodeType::Null);
    if (docs.size() > 1) {
      diag.error(lineOf(docs[1]), "",
                 "holds " + std::to_string(docs.size()) + " YAML documents; expected one");
      return std::nullopt;
    }
    return docs[0];
  } catch (const YAML::Exception& e) {
    diag.error(e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    return std::nullopt;
  }
}

std::vector<MapEntry> mapEntries(const YAML::Node& map, std::string_view prefix, Diagnostics& diag,
                                 std::string_view what) {
  std::vector<MapEntry> out;
  if (!map.IsMap()) return out;
  // Copies, not references: yaml-cpp's iterator hands out its pair in a
  // temporary (`it->first` dangles after the statement).
  for (const auto& pair : map) {
    const YAML::Node key = pair.first;
    const int line = lineOf(key);
    if (!key.IsScalar() || key.Scalar().empty()) {
      diag.error(line, std::string(prefix), "a key must be a plain string, found " +
                                                std::string(kindOf(key)));
      continue;
    }
    std::string name = key.Scalar();
    std::string path = joinKey(prefix, name);
    auto dup = std::find_if(out.begin(), out.end(), [&](const MapEntry& e) { return e.key == name; });
    if (dup != out.end()) {
      diag.error(line, path,
                 "duplicate " + std::string(what) + " (first given at line " +
                     std::to_string(dup->line) + ")");
      continue;
    }
    out.push_back(MapEntry{std::move(name), std::move(path), line, pair.second});
  }
  return out;
}

namespace {

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void reportUnknownKey(Diagnostics& diag, const MapEntry& entry,
                      std::span<const std::string_view> known) {
  std::string message = "unknown key";
  std::string_view best;
  std::size_t best_distance = 3;  // suggest only near misses: typos, not guesses
  for (std::string_view candidate : known) {
    const std::size_t d = editDistance(toLower(entry.key), candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (!best.empty()) {
    message += " (did you mean " + quote(best) + "?)";
  } else if (!known.empty()) {
    message += "; expected one of: ";
    for (std::size_t i = 0; i < known.size(); ++i) message += (i ? ", " : "") + std::string(known[i]);
  }
  diag.error(entry.line, entry.path, std::move(message));
}

std::string joinKey(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  std::string out(prefix);
  out += '.';
  out += key;
  return out;
}

std::string indexKey(std::string_view prefix, std::size_t index) {
  return std::string(prefix) + "[" + std::to_string(index) + "]";
}

bool isName(std::string_view text, std::size_t min, std::size_t max,
            std::string_view extra) noexcept {
  if (text.size() < min || text.size() > max) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    extra.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string toLower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool readTextFile(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  out = std::move(buffer).str();
  return true;
}

}  // namespace gtpcp::config::detail
