// Capping the maximum bit rates of a GTPv1 Quality of Service Profile, in
// place: the worker's `qos_cap` override of the routing document.
//
// The QoS Profile IE value (TS 29.060 §7.7.34) is one octet of allocation/
// retention priority followed by the Quality of service IE of TS 24.008
// §10.5.6.5 from its octet 3 on. Value index i therefore holds 24.008 octet
// i + 2. The maximum bit rates live in:
//
//   24.008 octet | value index | field
//   ------------ | ----------- | -------------------------------------------
//        8       |      6      | Maximum bit rate for uplink
//        9       |      7      | Maximum bit rate for downlink
//       15       |     13      | Maximum bit rate for downlink (extended)
//       17       |     15      | Maximum bit rate for uplink (extended)
//       19       |     17      | Maximum bit rate for downlink (extended-2)
//       21       |     19      | Maximum bit rate for uplink (extended-2)
//
// A value ends after any octet from 24.008 octet 5 on (a R97/98 profile has
// no bit rates at all); an octet the value does not reach is absent.
//
// Encodings (24.008 §10.5.6.5):
//   octets 8/9:   0x00 subscribed (MS to network) / reserved; 0x01..0x3f:
//                 1..63 kbps step 1; 0x40..0x7f: 64 + (v - 0x40) * 8 kbps;
//                 0x80..0xfe: 576 + (v - 0x80) * 64 kbps (8640 at most);
//                 0xff: 0 kbps.
//   octets 15/17: 0x00: use octet 9/8; 0x01..0x4a: 8600 + v * 100 kbps;
//                 0x4b..0xba: 16 + (v - 0x4a) Mbps; 0xbb..0xfa:
//                 128 + (v - 0xba) * 2 Mbps (256 Mbps at most).
//   octets 19/21: 0x00: use octet 15/17; 0x01..0x3d: 256 + v * 4 Mbps;
//                 0x3e..0xa1: 500 + (v - 0x3d) * 10 Mbps; 0xa2..0xf6:
//                 1500 + (v - 0xa1) * 100 Mbps (10 Gbps at most).
// A sender above 8640 kbps sets octet 8/9 to 0xfe and uses octet 15/17; above
// 256 Mbps it also sets octet 15/17 to 0xfa and uses octet 19/21. A receiver
// reads the highest non-zero octet of the three. Values past the end of a
// range (0xfb.. in 15/17, 0xf7.. in 19/21) count as the range's maximum.
//
// No allocation, no exceptions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace gtpcp::gtp::v1 {

// The maximum bit rates a QoS Profile value states, in kbps: nullopt for a
// direction the value is too short to carry, or that says "subscribed" (0x00
// in the octet 8/9 with no extended octet in use).
struct MaxBitrate {
  std::optional<uint32_t> uplink_kbps;
  std::optional<uint32_t> downlink_kbps;
};
MaxBitrate readMaxBitrate(std::span<const uint8_t> qos_profile_value) noexcept;

// Lowers, in place, the maximum bit rate of each direction given to at most
// its cap: a rate above the cap becomes the largest rate the value's octets
// can represent that is not above the cap (the extended octets that exist are
// used, or set to 0x00 when the cap fits an octet before them). A rate at or
// below its cap, a "subscribed" rate (not known here) and a direction the
// value is too short for are left alone. Never changes the value's length or
// any other octet; a cap of 0 means 0 kbps. True when an octet changed.
bool capMaxBitrate(std::span<uint8_t> qos_profile_value, std::optional<uint32_t> uplink_kbps,
                   std::optional<uint32_t> downlink_kbps) noexcept;

}  // namespace gtpcp::gtp::v1
