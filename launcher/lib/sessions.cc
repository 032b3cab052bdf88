#include "sessions.h"

#include <arpa/inet.h>

#include <google/protobuf/util/json_util.h>

#include <map>
#include <memory>
#include <vector>

#include "common/partition.h"
#include "common/group/redis_keys.h"
#include "common/session/record.h"
#include "redis_reader.h"

namespace gtpcp::launcher {

namespace {

std::string addressText(const std::string& octets) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (octets.size() == 4) inet_ntop(AF_INET, octets.data(), buf, sizeof buf);
  if (octets.size() == 16) inet_ntop(AF_INET6, octets.data(), buf, sizeof buf);
  return buf;
}

std::string hex(const std::string& octets) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : octets) {
    out += digits[ch >> 4];
    out += digits[ch & 15];
  }
  return out;
}

// The record as JSON, octet fields in the form an operator reads.
nlohmann::json toJson(const proto::SessionRecord& r) {
  std::string text;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(r, &text, o);
  nlohmann::json j = nlohmann::json::parse(text);
  auto fteid = [](nlohmann::json& f, const proto::FTeid& p) {
    if (!p.ipv4().empty()) f["ipv4"] = addressText(p.ipv4());
    if (!p.ipv6().empty()) f["ipv6"] = addressText(p.ipv6());
  };
  if (j.contains("proxy")) {
    auto& p = j["proxy"];
    if (p.contains("sgw_control")) fteid(p["sgw_control"], r.proxy().sgw_control());
    if (p.contains("pgw_control")) fteid(p["pgw_control"], r.proxy().pgw_control());
    if (p.contains("gateway_address")) p["gateway_address"] = addressText(r.proxy().gateway_address());
    if (p.contains("requested_apn")) p.erase("requested_apn");  // the same as "apn", label-encoded
  }
  for (int i = 0; i < r.bearers_size() && j.contains("bearers"); ++i) {
    auto& b = j["bearers"][static_cast<std::size_t>(i)];
    if (b.contains("sgw_user_plane")) fteid(b["sgw_user_plane"], r.bearers(i).sgw_user_plane());
    if (b.contains("pgw_user_plane")) fteid(b["pgw_user_plane"], r.bearers(i).pgw_user_plane());
  }
  if (r.gtp_version() == 1) {
    // End User Address (TS 29.060 §7.7.27): PDP type organisation and
    // number (0x21 IPv4, 0x57 IPv6, 0x8d IPv4v6), then the address(es).
    if (const std::string& eua = r.paa(); eua.size() >= 2) {
      const auto number = static_cast<uint8_t>(eua[1]);
      nlohmann::json a;
      if (number == 0x21 && eua.size() >= 6) a["ipv4"] = addressText(eua.substr(2, 4));
      if (number == 0x57 && eua.size() >= 18) a["ipv6"] = addressText(eua.substr(2, 16));
      if (number == 0x8d && eua.size() >= 22) {
        a["ipv4"] = addressText(eua.substr(2, 4));
        a["ipv6"] = addressText(eua.substr(6, 16));
      }
      j.erase("paa");
      j["end_user_address"] = a.empty() ? nlohmann::json(hex(eua)) : a;
    }
    if (j.contains("v1_qos_profile")) j["v1_qos_profile"] = hex(r.v1_qos_profile());
    for (int i = 0; i < r.bearers_size() && j.contains("bearers"); ++i) {
      auto& b = j["bearers"][static_cast<std::size_t>(i)];
      if (b.contains("v1_qos_profile")) b["v1_qos_profile"] = hex(r.bearers(i).v1_qos_profile());
      // A PDP context's number is its NSAPI.
      if (b.contains("ebi")) {
        b["nsapi"] = b["ebi"];
        b.erase("ebi");
      }
    }
  }
  // PAA (TS 29.274 §8.14): PDN type, then the IPv4 address, the IPv6 prefix, or both.
  if (const std::string& paa = r.paa(); !paa.empty() && r.gtp_version() != 1) {
    const int type = paa[0] & 7;
    nlohmann::json a;
    if (type == 1 && paa.size() >= 5) a["ipv4"] = addressText(paa.substr(1, 4));
    if ((type == 2 || type == 3) && paa.size() >= 18) {
      a["ipv6"] = addressText(paa.substr(2, 16)) + "/" + std::to_string(static_cast<uint8_t>(paa[1]));
      if (type == 3 && paa.size() >= 22) a["ipv4"] = addressText(paa.substr(18, 4));
    }
    j["paa"] = a.empty() ? nlohmann::json(hex(paa)) : a;
  }
  for (const char* field : {"uli", "serving_network"}) {
    const auto* d = r.GetDescriptor()->FindFieldByName(field);
    if (j.contains(field)) j[field] = hex(r.GetReflection()->GetString(r, d));
  }
  return j;
}

}  // namespace

tl::expected<nlohmann::json, std::string> sessionsOfImsi(const config::InstanceConfig& config, std::string_view imsi) {
  group::KeyNames keys(config.group);
  const uint16_t partition = partitionOf(imsi);
  RedisReader redis(config);
  auto members = redis.run({"SMEMBERS", keys.imsi(partition, imsi)});
  if (!members) return tl::unexpected(members.error());
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < (*members)->elements; ++i) {
    const std::string key((*members)->element[i]->str, (*members)->element[i]->len);
    auto hash = redis.run({"HGETALL", key});
    if (!hash) return tl::unexpected(hash.error());
    std::map<std::string, std::string> fields;
    for (std::size_t f = 0; f + 1 < (*hash)->elements; f += 2)
      fields[std::string((*hash)->element[f]->str, (*hash)->element[f]->len)] =
          std::string((*hash)->element[f + 1]->str, (*hash)->element[f + 1]->len);
    if (fields.empty()) continue;  // deleted between the two reads
    proto::SessionRecord record;
    if (!session::assemble(fields, record)) return tl::unexpected("the record at " + key + " does not parse");
    nlohmann::json j = toJson(record);
    j["key"] = key;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gtpcp::launcher
