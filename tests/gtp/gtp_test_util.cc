#include "tests/gtp/gtp_test_util.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>

namespace gtpcp::gtp::testing {

namespace {
int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::vector<uint8_t> fromHex(std::string_view hex) {
  std::vector<uint8_t> out;
  int high = -1;
  for (char c : hex) {
    if (c == ' ' || c == '\n') continue;
    const int n = nibble(c);
    if (n < 0) throw std::invalid_argument("not a hex digit in \"" + std::string(hex) + "\"");
    if (high < 0) {
      high = n;
    } else {
      out.push_back(static_cast<uint8_t>((high << 4) | n));
      high = -1;
    }
  }
  if (high >= 0)
    throw std::invalid_argument("odd number of hex digits in \"" + std::string(hex) + "\"");
  return out;
}

std::string toHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0f]);
  }
  return out;
}

Digits digits(std::string_view text) {
  Digits d;
  for (char c : text) d.push(c);
  return d;
}

ApnText apnText(std::string_view dotted) {
  ApnText t;
  for (char c : dotted) t.push(c);
  return t;
}

std::string dataPath(std::string_view relative) {
  return std::string(GTPCP_TEST_DATA_DIR) + "/" + std::string(relative);
}

std::vector<JsonRecord> loadVectors(std::string_view file) {
  std::vector<JsonRecord> out;
  std::ifstream in(dataPath("vectors/" + std::string(file)));
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) continue;  // counted as missing by the record-count tests
    out.push_back(JsonRecord{std::string(file), line,
                             std::make_shared<const nlohmann::json>(std::move(json))});
  }
  return out;
}

std::string paramName(const JsonRecord& record) {
  std::string name = record.name();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name + "_L" + std::to_string(record.line);
}

void PrintTo(const JsonRecord& record, std::ostream* os) {
  *os << record.file << ":" << record.line << " " << record.name() << " ("
      << record.json().value("source", std::string("?")) << ")";
}

std::string afterFirst(std::string_view text, std::string_view separator) {
  const auto at = text.find(separator);
  return at == std::string_view::npos ? "" : std::string(text.substr(at + separator.size()));
}

std::string afterLast(std::string_view text, std::string_view separator) {
  const auto at = text.rfind(separator);
  return at == std::string_view::npos ? "" : std::string(text.substr(at + separator.size()));
}

std::string inLastParens(std::string_view text) {
  if (text.empty() || text.back() != ')') return "";
  const auto open = text.rfind('(');
  return open == std::string_view::npos
             ? ""
             : std::string(text.substr(open + 1, text.size() - open - 2));
}

std::string firstWord(std::string_view text) { return std::string(text.substr(0, text.find(' '))); }

std::string digitsAfter(std::string_view text, std::string_view marker) {
  const auto at = text.find(marker);
  if (at == std::string_view::npos) return "";
  std::string out;
  for (std::size_t i = at + marker.size();
       i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
    out.push_back(text[i]);
  return out;
}

std::vector<std::size_t> differingOffsets(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  std::vector<std::size_t> out;
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) out.push_back(i);
  }
  for (std::size_t i = common; i < std::max(a.size(), b.size()); ++i) out.push_back(i);
  return out;
}

}  // namespace gtpcp::gtp::testing
