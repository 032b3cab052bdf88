// Helpers shared by the GTP codec tests: hex strings, the JSON-lines test
// vectors of tests/data/vectors (third-party bytes, TShark 4.0.17 facts; see
// tests/data/README.md) and byte-by-byte comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/gtp/values.h"

namespace gtpcp::gtp::testing {

// "4820 00ff" -> {0x48, 0x20, 0x00, 0xff}; spaces are ignored. Throws
// std::invalid_argument on anything else than hex digit pairs.
std::vector<uint8_t> fromHex(std::string_view hex);
std::string toHex(std::span<const uint8_t> bytes);

// Typed-value inputs from text: "001010123456789" as Digits, a dotted APN as
// ApnText. Characters past the capacity are dropped.
Digits digits(std::string_view text);
ApnText apnText(std::string_view dotted);

// Absolute path of a file under tests/data.
std::string dataPath(std::string_view relative);

// One line of a .jsonl vector file. Cheap to copy (gtest copies parameters
// several times per test): the parsed object is shared.
struct JsonRecord {
  std::string file;  // e.g. "gtpv2.jsonl"
  int line = 0;      // 1-based
  std::shared_ptr<const nlohmann::json> data;

  const nlohmann::json& json() const { return *data; }
  std::string name() const { return json().value("name", std::string("unnamed")); }
  std::vector<uint8_t> bytes() const { return fromHex(json().at("hex").get<std::string>()); }
  const nlohmann::json& expect() const { return json().at("expect"); }
  bool isNegative() const { return json().contains("bad_reasons"); }
};

// Reads tests/data/vectors/<file>. Returns an empty list when the file cannot
// be read: parameterised suites are instantiated before main(), so the
// record-count tests are the ones that fail loudly in that case.
std::vector<JsonRecord> loadVectors(std::string_view file);

// gtest parameter name: the record name with every non-alphanumeric character
// replaced by '_', then "_L<line>", e.g. "IPAddress_v4_L5".
std::string paramName(const JsonRecord& record);

// Keeps gtest from dumping the whole JSON object when a parameterised test fails.
void PrintTo(const JsonRecord& record, std::ostream* os);

// Pieces of tshark's one-line IE summaries, e.g. "Cause : Request accepted (16)".
// Each returns "" when the piece is absent.
std::string afterFirst(std::string_view text, std::string_view separator);
std::string afterLast(std::string_view text, std::string_view separator);
std::string inLastParens(std::string_view text);                          // "... (16)" -> "16"
std::string firstWord(std::string_view text);                             // up to the first space
std::string digitsAfter(std::string_view text, std::string_view marker);  // "MCC 123" -> "123"

// Offsets at which `a` and `b` differ (a size difference counts from the
// shorter length on).
std::vector<std::size_t> differingOffsets(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace gtpcp::gtp::testing
