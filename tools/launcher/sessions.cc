#include "tools/launcher/sessions.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>

#include <google/protobuf/util/json_util.h>

#include <map>
#include <memory>
#include <vector>

#include "common/partition.h"
#include "persister/lib/record.h"

namespace gtpcp::launcher {

namespace {

using Storage = config::InstanceConfig::Storage;
using Reply = std::unique_ptr<redisReply, void (*)(void*)>;
using Context = std::unique_ptr<redisContext, void (*)(redisContext*)>;

Context connectTo(const std::string& host, int port) {
  timeval tv{2, 0};
  return Context(redisConnectWithTimeout(host.c_str(), port, tv), redisFree);
}

// Runs one command against the server that owns its key: in Cluster mode,
// following MOVED and ASK answers.
class Reader {
 public:
  explicit Reader(const config::InstanceConfig& c) : c_(c) {}

  tl::expected<Reply, std::string> run(const std::vector<std::string>& argv) {
    auto [host, port] = primary_;
    if (host.empty()) {
      auto p = primary();
      if (!p) return tl::unexpected(p.error());
      primary_ = *p;
      std::tie(host, port) = primary_;
    }
    for (int hop = 0; hop < 4; ++hop) {
      Context ctx = connectTo(host, port);
      if (!ctx || ctx->err) return tl::unexpected("cannot reach Redis at " + host + ":" + std::to_string(port));
      std::vector<const char*> args;
      std::vector<std::size_t> lengths;
      for (const auto& a : argv) {
        args.push_back(a.data());
        lengths.push_back(a.size());
      }
      Reply r(static_cast<redisReply*>(redisCommandArgv(ctx.get(), static_cast<int>(args.size()), args.data(),
                                                        lengths.data())),
              freeReplyObject);
      if (!r) return tl::unexpected("Redis at " + host + ":" + std::to_string(port) + " did not answer");
      if (r->type == REDIS_REPLY_ERROR) {
        const std::string e(r->str, r->len);
        // "MOVED 3999 127.0.0.1:7002": the slot lives elsewhere.
        if (e.rfind("MOVED ", 0) == 0 || e.rfind("ASK ", 0) == 0) {
          const std::string where = e.substr(e.rfind(' ') + 1);
          host = where.substr(0, where.rfind(':'));
          port = std::stoi(where.substr(where.rfind(':') + 1));
          continue;
        }
        return tl::unexpected("Redis: " + e);
      }
      return r;
    }
    return tl::unexpected(std::string("Redis: too many redirections"));
  }

 private:
  tl::expected<std::pair<std::string, int>, std::string> primary() {
    switch (c_.storage.mode) {
      case Storage::Mode::kOff: return tl::unexpected(std::string("storage.mode is off: sessions are not kept in Redis"));
      case Storage::Mode::kEmbedded: return std::pair<std::string, int>{"127.0.0.1", c_.storage.embedded_port};
      case Storage::Mode::kSingle:
      case Storage::Mode::kCluster:
        return std::pair<std::string, int>{c_.storage.servers.at(0).address, c_.storage.servers.at(0).port};
      case Storage::Mode::kSentinel:
        for (const auto& s : c_.storage.servers) {
          Context ctx = connectTo(s.address, s.port);
          if (!ctx || ctx->err) continue;
          Reply r(static_cast<redisReply*>(redisCommand(ctx.get(), "SENTINEL get-master-addr-by-name %s",
                                                        c_.storage.sentinel_master.c_str())),
                  freeReplyObject);
          if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
            return std::pair<std::string, int>{r->element[0]->str, std::stoi(r->element[1]->str)};
        }
        return tl::unexpected("no sentinel of storage.servers names the primary " + c_.storage.sentinel_master);
    }
    return tl::unexpected(std::string("unknown storage.mode"));
  }

  const config::InstanceConfig& c_;
  std::pair<std::string, int> primary_;
};

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
  // PAA (TS 29.274 §8.14): PDN type, then the IPv4 address, the IPv6 prefix, or both.
  if (const std::string& paa = r.paa(); !paa.empty()) {
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
  persister::KeyNames keys(config.group);
  const uint16_t partition = partitionOf(imsi);
  Reader redis(config);
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
    if (!persister::assemble(fields, record)) return tl::unexpected("the record at " + key + " does not parse");
    nlohmann::json j = toJson(record);
    j["key"] = key;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gtpcp::launcher
