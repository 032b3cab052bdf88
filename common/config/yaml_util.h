// Helpers shared by the gtpcp.yaml and routing-document loaders: collecting
// errors with their lines, walking mappings (duplicate and unknown keys),
// reading scalars strictly. Internal to common/config; cold path, allocates,
// and may throw std::bad_alloc (the public loaders catch it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/config/errors.h"

namespace gtpcp::config::detail {

// The errors of one file.
class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

  const std::string& file() const noexcept { return file_; }
  void error(int line, std::string key, std::string message);
  bool empty() const noexcept { return errors_.empty(); }
  std::size_t count() const noexcept { return errors_.size(); }
  // True when an error was reported for `key` or for a key below it.
  bool hasErrorAt(std::string_view key) const noexcept;
  // The errors in line order (line 0, i.e. no line, first); equal lines keep
  // the order in which they were reported.
  ConfigErrors take();

 private:
  std::string file_;
  ConfigErrors errors_;
};

// 1-based line of a node, 0 when yaml-cpp has none.
int lineOf(const YAML::Node& node) noexcept;
// "a mapping", "a list", "a scalar", "no value".
std::string_view kindOf(const YAML::Node& node) noexcept;
// The text in double quotes, with '"', '\\' and control characters escaped.
std::string quote(std::string_view text);
// True for a scalar written without quotes or an explicit tag (or tagged !!int):
// only those are integers; "2123" in quotes is a string.
bool isPlainScalar(const YAML::Node& node);
// Decimal integer with an optional '-'; nullopt on anything else or overflow.
std::optional<int64_t> parseInteger(std::string_view text) noexcept;

// The integer in `node`, reported at `line` under `key` when it is not a
// plain integer scalar within min..max.
std::optional<int64_t> readInteger(const YAML::Node& node, int line, const std::string& key,
                                   int64_t min, int64_t max, Diagnostics& diag);
// The text of a scalar node; reports "expected <expected>, found a list" and
// returns nullptr for anything else.
const std::string* readScalar(const YAML::Node& node, int line, const std::string& key,
                              std::string_view expected, Diagnostics& diag);

// Parses `text` as exactly one YAML document. A syntax error or a second
// document is reported and gives nullopt. An empty text gives a null node.
std::optional<YAML::Node> parseDocument(std::string_view text, Diagnostics& diag);

struct MapEntry {
  std::string key;
  std::string path;  // full key path, e.g. "gtpc.access.ipv4"
  int line = 0;      // line of the key
  YAML::Node value;
};

// The entries of `map` in document order. A key that is not a plain string
// and a key given twice are reported (the first occurrence is kept). A null
// node (a section whose keys are all commented out) has no entries.
// `what` names the keys in the message ("duplicate pool name").
std::vector<MapEntry> mapEntries(const YAML::Node& map, std::string_view prefix, Diagnostics& diag,
                                 std::string_view what = "key");

// Reports `entry` as an unknown key, suggesting the closest of `known`.
void reportUnknownKey(Diagnostics& diag, const MapEntry& entry,
                      std::span<const std::string_view> known);

// "a" + "b" -> "a.b"; "" + "b" -> "b".
std::string joinKey(std::string_view prefix, std::string_view key);
// "a" + 3 -> "a[3]".
std::string indexKey(std::string_view prefix, std::size_t index);

// True when `text` is min..max characters of A-Z a-z 0-9 and `extra`.
bool isName(std::string_view text, std::size_t min, std::size_t max,
            std::string_view extra) noexcept;
std::string toLower(std::string_view text);

// Reads a whole file; on failure sets `error` to a sentence ("cannot read: No
// such file or directory") and returns false.
bool readTextFile(const std::string& path, std::string& out, std::string& error);

}  // namespace gtpcp::config::detail
