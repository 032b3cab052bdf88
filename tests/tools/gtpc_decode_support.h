// Helpers shared by the gtpc-decode tests: test data files, hex, and a
// minimal pcap writer (classic format, any link type, caplen and len chosen by
// the test) so that link layers and damaged frames can be produced on demand.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gtpcp::gtpc_decode::testing {

inline std::string dataPath(std::string_view relative) {
  return std::string(GTPCP_TEST_DATA_DIR) + "/" + std::string(relative);
}

inline std::vector<nlohmann::json> readJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// Independent of the tool's own parser, which is under test.
inline std::vector<uint8_t> bytesOf(std::string_view hex) {
  std::vector<uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A fresh directory under the test temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "gtpc_decode_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const char* made = mkdtemp(buf.data());
    EXPECT_NE(made, nullptr);
    path_ = made != nullptr ? made : ::testing::TempDir();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// Writes a classic little-endian pcap file, microsecond timestamps.
class PcapWriter {
 public:
  explicit PcapWriter(uint32_t link_type) {
    put32(0xa1b2c3d4);
    put16(2);
    put16(4);
    put32(0);       // thiszone
    put32(0);       // sigfigs
    put32(262144);  // snaplen
    put32(link_type);
  }
  // One record; `wire_length` 0 means the frame was captured whole.
  PcapWriter& add(const std::vector<uint8_t>& frame, uint32_t wire_length = 0, uint32_t seconds = 1620220108,
                  uint32_t microseconds = 123456) {
    put32(seconds);
    put32(microseconds);
    put32(static_cast<uint32_t>(frame.size()));
    put32(wire_length != 0 ? wire_length : static_cast<uint32_t>(frame.size()));
    bytes_.insert(bytes_.end(), frame.begin(), frame.end());
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  void write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  }

 private:
  void put16(uint16_t v) {
    bytes_.push_back(static_cast<uint8_t>(v));
    bytes_.push_back(static_cast<uint8_t>(v >> 8));
  }
  void put32(uint32_t v) {
    put16(static_cast<uint16_t>(v));
    put16(static_cast<uint16_t>(v >> 16));
  }
  std::vector<uint8_t> bytes_;
};

}  // namespace gtpcp::gtpc_decode::testing
