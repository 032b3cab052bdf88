// GTPv1 against third-party vectors (tests/data/vectors/gtpv1.jsonl).
//
// Same scheme as v2/vectors_test.cc: one parameterised test per record, the
// codec's decode compared with TShark 4.0.17's facts, re-encoding byte for
// byte, negative records rejected with the documented error. Records marked
// "plane":"U" are GTPv1-U messages (G-PDU, End Marker, Error Indication,
// Supported Extension Headers Notification) that share the GTPv1 header.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/gtp/v1/builder.h"
#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "common/gtp/values.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using nlohmann::json;
using testing::JsonRecord;

const std::vector<JsonRecord>& records() {
  static const std::vector<JsonRecord> all = testing::loadVectors("gtpv1.jsonl");
  return all;
}

struct NegativeRecord {
  int line;
  Errc error;
  const char* why;
};
const NegativeRecord kNegativeRecords[] = {
    {26, Errc::kUnknownMessageType,
     "gtplib's invalid header: message type 0 is Reserved (TS 29.060 Table 1); tshark does not "
     "recognise it as GTP either"},
    // go-gtp header tests: a header with optional fields followed by 0xdeadbeef
    // filler. The filler is no IE: type 0xde is a TLV whose Length 0xadbe runs
    // past the message (TS 29.060 §7.7.0), as tshark's "Malformed Packet" says.
    {41, Errc::kIeTruncated, "E=1: two extension headers (length 1), then filler"},
    {42, Errc::kIeTruncated, "PN=1: N-PDU number 0xff, then filler"},
    {43, Errc::kIeTruncated, "E=1, S=1: two extension headers, then filler"},
    {44, Errc::kIeTruncated, "E=1, S=1, PN=1: two extension headers, then filler"},
    {45, Errc::kIeTruncated, "S=1, PN=1, then filler"},
    {46, Errc::kIeTruncated, "S=1, then filler"},
    {47, Errc::kUnsupportedVersion,
     "go-gtp's invalid header: octet 1 is 0x03, version 0 (GTPv0 has a 20-octet header)"},
};

const NegativeRecord* negativeRecord(int line) {
  for (const auto& n : kNegativeRecords) {
    if (n.line == line) return &n;
  }
  return nullptr;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string hex8(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

template <class T>
T readOrFail(const Message& m, std::size_t n = 0) {
  auto v = readNth<T>(m, n);
  EXPECT_TRUE(v) << "IE " << static_cast<int>(T::kType) << ": " << errcName(v.error().code);
  return v ? *v : T{};
}

void compareWithTshark(const Message& m, const json& expect, std::size_t datagram_size) {
  static const std::set<std::string> kNotCompared = {"message_name", "tshark_malformed",
                                                     "tshark_expert", "tshark_decoded_as_gtp"};
  const Header& h = m.header();
  for (const auto& [key, want] : expect.items()) {
    SCOPED_TRACE("key " + key);
    if (kNotCompared.count(key) != 0) continue;
    if (key == "version") {
      EXPECT_EQ(h.version(), want.get<int>());
    } else if (key == "message_type") {
      EXPECT_EQ(h.message_type, want.get<int>());
    } else if (key == "teid") {
      EXPECT_EQ(hex32(h.teid), want.get<std::string>());
    } else if (key == "seq") {
      ASSERT_TRUE(h.hasSequenceNumber());
      EXPECT_EQ(h.sequence_number, want.get<int>());
    } else if (key == "flags") {
      EXPECT_EQ(h.hasExtensionHeader(), want.at("E").get<int>() == 1);
      EXPECT_EQ(h.hasSequenceNumber(), want.at("S").get<int>() == 1);
      EXPECT_EQ(h.hasNpdu(), want.at("PN").get<int>() == 1);
    } else if (key == "npdu") {
      ASSERT_TRUE(h.hasNpdu());
      EXPECT_EQ(h.npdu_number, want.get<int>());
    } else if (key == "next_ext_header_type") {
      ASSERT_TRUE(h.hasExtensionHeader());
      EXPECT_EQ(hex8(h.next_extension_header_type), want.get<std::string>());
    } else if (key == "declared_length") {
      EXPECT_EQ(h.length, want.get<int>());
    } else if (key == "bytes") {
      EXPECT_EQ(datagram_size, want.get<std::size_t>());
    } else if (key == "length_consistent") {
      EXPECT_TRUE(want.get<bool>());  // decode succeeded: 8 + Length == size
    } else if (key == "cause") {
      EXPECT_EQ(readOrFail<CauseIe>(m).value, want.get<int>());
    } else if (key == "recovery") {
      EXPECT_EQ(readOrFail<Recovery>(m).value, want.get<int>());
    } else if (key == "teid_data") {
      EXPECT_EQ(hex32(readOrFail<TeidDataI>(m).value), want.get<std::string>());
    } else if (key == "teid_cp") {
      EXPECT_EQ(hex32(readOrFail<TeidControlPlane>(m).value), want.get<std::string>());
    } else if (key == "nsapi") {
      EXPECT_EQ(readOrFail<Nsapi>(m).value, want.get<int>());
    } else if (key == "gsn_ipv4" || key == "gsn_ipv6") {
      std::vector<std::string> addresses;
      for (std::size_t n = 0; m.find(IeType::kGsnAddress, n) != nullptr; ++n) {
        const GsnAddress a = readOrFail<GsnAddress>(m, n);
        if (key == "gsn_ipv4" && a.ipv4) addresses.push_back(toString(*a.ipv4));
        if (key == "gsn_ipv6" && a.ipv6) addresses.push_back(toString(*a.ipv6));
      }
      EXPECT_EQ(json(addresses), want);
    } else if (key == "end_user_address") {
      const EndUserAddress e = readOrFail<EndUserAddress>(m);
      std::vector<std::string> addresses;  // wire order: IPv4 before IPv6 (§7.7.27)
      if (e.ipv4) addresses.push_back(toString(*e.ipv4));
      if (e.ipv6) addresses.push_back(toString(*e.ipv6));
      EXPECT_EQ(json(addresses), want);
    } else if (key == "imsi") {
      EXPECT_EQ(readOrFail<Imsi>(m).digits.view(), want.get<std::string>());
    } else if (key == "msisdn") {
      EXPECT_EQ(readOrFail<Msisdn>(m).digits.view(), want.get<std::string>());
    } else if (key == "apn") {
      EXPECT_EQ(readOrFail<Apn>(m).text.view(), want.get<std::string>());
    } else {
      ADD_FAILURE() << "the test does not know the vector key \"" << key << "\"";
    }
  }
  // tshark shows the optional header fields exactly when their flag is set.
  EXPECT_EQ(expect.contains("seq"), h.hasSequenceNumber());
  EXPECT_EQ(expect.contains("npdu"), h.hasNpdu());
  EXPECT_EQ(expect.contains("next_ext_header_type"), h.hasExtensionHeader());
}

class GtpV1Vector : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV1Vector, DecodesToWhatTsharkShows) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = r.bytes();
  Message m;
  auto ok = m.decode(bytes);
  if (r.isNegative()) {
    const NegativeRecord* n = negativeRecord(r.line);
    ASSERT_NE(n, nullptr) << "negative record without an entry in kNegativeRecords";
    ASSERT_FALSE(ok) << n->why;
    EXPECT_EQ(errcName(ok.error().code), errcName(n->error)) << n->why;
    return;
  }
  ASSERT_TRUE(ok) << describe(ok.error());
  compareWithTshark(m, r.expect(), bytes.size());
}

std::vector<JsonRecord> userPlaneRecords() {
  std::vector<JsonRecord> out;
  for (const auto& r : records()) {
    if (r.json().value("plane", std::string("C")) == "U") out.push_back(r);
  }
  return out;
}

// The GTPv1-U items: the forwarder classifies datagrams by their header alone
// (TS 29.281 §5.1 shares the GTPv1 header of TS 29.060 §6).
class GtpV1UserPlaneVector : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV1UserPlaneVector, HeaderDecodes) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = r.bytes();
  auto h = decodeHeader(bytes);
  ASSERT_TRUE(h) << describe(h.error());
  EXPECT_EQ(h->message_type, r.expect()["message_type"].get<int>());
  EXPECT_EQ(h->messageSize(), bytes.size());
}

std::vector<JsonRecord> decodableRecords() {
  std::vector<JsonRecord> out;
  for (const auto& r : records()) {
    if (!r.isNegative()) out.push_back(r);
  }
  return out;
}

class GtpV1DecodableVector : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV1DecodableVector, ReencodesByteForByte) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = r.bytes();
  Message m;
  ASSERT_TRUE(m.decode(bytes));
  std::vector<uint8_t> out(bytes.size() + 64);
  auto again = reencode(m, out);
  ASSERT_TRUE(again) << errcName(again.error().code);
  EXPECT_EQ(testing::toHex(*again), testing::toHex(bytes));
}

TEST_P(GtpV1DecodableVector, EveryTruncationIsRefused) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = r.bytes();
  Message full;
  ASSERT_TRUE(full.decode(bytes));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    Message m;
    auto ok = m.decode(cut);
    ASSERT_FALSE(ok) << "prefix of " << n << " octets decoded";
    // Under 8 octets the mandatory header is cut; past it the Length field
    // points beyond the end.
    const Errc want = n < kHeaderSizeMandatory ? Errc::kTruncatedHeader : Errc::kInvalidLength;
    EXPECT_EQ(errcName(ok.error().code), errcName(want)) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Gtpv1Jsonl, GtpV1Vector, ::testing::ValuesIn(records()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });
INSTANTIATE_TEST_SUITE_P(Gtpv1Jsonl, GtpV1DecodableVector, ::testing::ValuesIn(decodableRecords()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });

INSTANTIATE_TEST_SUITE_P(Gtpv1Jsonl, GtpV1UserPlaneVector, ::testing::ValuesIn(userPlaneRecords()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });

TEST(GtpV1Vectors, FileHoldsTheDocumentedNumberOfRecords) {
  // tests/data/README.md: gtpv1.jsonl (57), six of them GTPv1-U.
  EXPECT_EQ(records().size(), 57u);
  EXPECT_EQ(userPlaneRecords().size(), 6u);
}

TEST(GtpV1Vectors, NegativeTableMatchesTheFile) {
  std::set<int> in_file;
  for (const auto& r : records()) {
    if (r.isNegative()) in_file.insert(r.line);
  }
  std::set<int> in_table;
  for (const auto& n : kNegativeRecords) in_table.insert(n.line);
  EXPECT_EQ(in_file, in_table);
}

// Vector messages that lack an IE TS 29.060 marks mandatory (checked as the
// SGSN-or-GGSN-independent rule, Sender::kAny). Pinned so a change is noticed.
struct MandatoryGap {
  int line;
  Errc code;
  uint8_t type;
};
const std::vector<MandatoryGap> kMandatoryGaps = {};

TEST(GtpV1Vectors, MessagesLackingMandatoryIesAreExactlyTheKnownOnes) {
  std::vector<std::string> found;
  for (const auto& r : records()) {
    const auto bytes = r.bytes();
    Message m;
    if (!m.decode(bytes)) continue;
    auto ok = checkMandatory(m);
    if (ok) continue;
    found.push_back("L" + std::to_string(r.line) + " " + r.name() + ": " +
                    std::string(errcName(ok.error().code)) + " " +
                    std::to_string(ok.error().ie_type));
  }
  std::vector<std::string> expected;
  for (const auto& g : kMandatoryGaps) {
    const JsonRecord& r = records().at(static_cast<std::size_t>(g.line - 1));
    expected.push_back("L" + std::to_string(g.line) + " " + r.name() + ": " +
                       std::string(errcName(g.code)) + " " + std::to_string(g.type));
  }
  EXPECT_EQ(found, expected);
}

}  // namespace
}  // namespace gtpcp::gtp::v1
