// gtpc-decode's JSON rendering of GTPv2-C and GTPv1-C messages.
//
// Operators paste this output into tickets and scripts read it, so key names
// are stable snake_case, names come from the codec's generated tables (TS
// 29.274 / 29.060 wording) and objects keep their keys in the order a reader
// expects (version, type, header, IEs), which is why the type is
// nlohmann::ordered_json rather than nlohmann::json (a std::map that would sort
// "ies" before "message_type"). Both convert into each other.
//
// Nothing here throws on packet data: every decoding problem becomes an error
// object or an IE's "value_error" key.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/gtp/v1/message.h"
#include "common/gtp/v2/message.h"

namespace gtpcp::gtpc_decode {

using Json = nlohmann::ordered_json;

struct Options {
  // Subscriber identities (IMSI, MSISDN, MEI/IMEI(SV)) keep their first
  // kMaskKeepDigits digits; the rest of the digits and of their IE's hex
  // become '*', so that the output can go into a ticket.
  bool mask = false;
};

inline constexpr std::size_t kMaskKeepDigits = 5;

// One message, with its IEs (grouped IEs nested) and typed values. A v2
// message's piggybacked message is not part of `message`: decodeDatagram()
// adds it.
Json toJson(const gtp::v2::Message& message, const Options& options = {});
Json toJson(const gtp::v1::Message& message, const Options& options = {});

// Decodes one GTP-C datagram (the UDP payload), choosing the codec from the
// version field (bits 8-6 of the first octet). Returns the message object, or
// an error object: {"version" (when there is a first octet), "error",
// "detail", "offset", "ie_type" (when not 0), and the header keys when the
// header decoded}. isError() tells which.
Json decodeDatagram(std::span<const uint8_t> bytes, const Options& options = {});

// True for an object made by decodeDatagram() (or the pcap and hex layers)
// that reports a failure rather than a message.
bool isError(const Json& object);

// `digits` with everything after the first kMaskKeepDigits replaced by '*'.
std::string maskDigits(std::string_view digits);

// Lower-case hex of `bytes`, no separators.
std::string toHex(std::span<const uint8_t> bytes);

}  // namespace gtpcp::gtpc_decode
