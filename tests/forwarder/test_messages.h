// GTP-C messages the forwarder's tests send, built with the codec.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/gtp/v1/message.h"
#include "common/gtp/values.h"

namespace gtpcp::forwarder::testing {

// What a GTPv1 message names its subscriber by.
struct Subscriber {
  std::string imsi;          // empty: no IMSI IE
  std::string imeisv;        // empty: no IMEI(SV) IE
  uint32_t teid_c = 0x1000;  // the sender's TEID Control Plane
  gtp::Ipv4 sgsn{{127, 0, 0, 11}};  // its GSN Address for signalling
};

Subscriber withImsi(std::string imsi, uint32_t teid_c = 0x1000);

// A GTPv1 message of `type` with header TEID `teid` and sequence `seq`. With
// a subscriber: its IMSI, TEID Control Plane and GSN Address (those two for a
// Create PDP Context or PDU Notification Request only), IMEI(SV).
std::vector<uint8_t> v1Message(gtp::v1::MessageType type, uint32_t teid, uint16_t seq,
                               const Subscriber* subscriber = nullptr);
std::vector<uint8_t> createPdpContextRequest(const Subscriber& subscriber, uint32_t teid = 0, uint16_t seq = 1);

// A GTPv2 Create Session Request: IMSI and the SGW's S5/S8 F-TEID.
std::vector<uint8_t> createSessionRequest(const std::string& imsi, uint32_t sgw_teid, uint32_t seq);

// Appends an IE of a TV type no table knows (and grows the header's length):
// the message no longer decodes, its header still does.
void breakIes(std::vector<uint8_t>& message);

}  // namespace gtpcp::forwarder::testing
