#include "common/group/redis_keys.h"

#include <charconv>
#include <utility>

namespace gtpcp::group {

namespace {

// Appends `n` in decimal.
void appendDecimal(std::string& out, unsigned n) {
  char buf[12];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

}  // namespace

void KeyNames::appendTeidMember(std::string& out, uint32_t teid) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[8];
  for (int i = 7; i >= 0; --i, teid >>= 4) buf[i] = kHex[teid & 0xf];
  out.append(buf, sizeof buf);
}

KeyNames::KeyNames(std::string group) : group_(std::move(group)), prefix_("gtpcp:" + group_ + ":{" + group_ + ".") {}

void KeyNames::appendPrefix(std::string& out, uint16_t partition) const {
  out.append(prefix_);
  appendDecimal(out, partition);
  out.append("}:");
}

void KeyNames::appendSession(std::string& out, uint16_t partition, uint32_t access_teid) const {
  appendPrefix(out, partition);
  out.append("s:");
  appendTeidMember(out, access_teid);
}

void KeyNames::appendImsi(std::string& out, uint16_t partition, std::string_view imsi) const {
  appendPrefix(out, partition);
  out.append("imsi:");
  out.append(imsi);
}

void KeyNames::appendTeids(std::string& out, uint16_t partition) const {
  appendPrefix(out, partition);
  out.append("teids");
}

std::string KeyNames::tag(uint16_t partition) const {
  std::string out = group_ + ".";
  appendDecimal(out, partition);
  return out;
}

std::string KeyNames::session(uint16_t partition, uint32_t access_teid) const {
  std::string out;
  appendSession(out, partition, access_teid);
  return out;
}

std::string KeyNames::imsi(uint16_t partition, std::string_view imsi) const {
  std::string out;
  appendImsi(out, partition, imsi);
  return out;
}

std::string KeyNames::teids(uint16_t partition) const {
  std::string out;
  appendTeids(out, partition);
  return out;
}

std::string recoveryKey(std::string_view group) { return "gtpcp:" + std::string(group) + ":recovery"; }
std::string instancesKey(std::string_view group) { return "gtpcp:" + std::string(group) + ":instances"; }
std::string sharesKey(std::string_view group) { return "gtpcp:" + std::string(group) + ":shares"; }
std::string writesKey(std::string_view group) { return "gtpcp:" + std::string(group) + ":writes"; }
std::string sessionKeyPattern(std::string_view group) { return "gtpcp:" + std::string(group) + ":*:s:*"; }

}  // namespace gtpcp::group
