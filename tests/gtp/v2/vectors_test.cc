// GTPv2-C against third-party vectors (tests/data/vectors/gtpv2.jsonl).
//
// Every record is bytes taken from another project's tests or captures, with
// the facts TShark 4.0.17 decoded from them ("expect"). Each record becomes one
// parameterised test: the codec decodes the bytes and must find what tshark
// found (header fields, the IE tree, the typed values), re-encode them byte for
// byte, and reject the records listed as negative with the documented error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "common/gtp/values.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using nlohmann::json;
using testing::JsonRecord;

const std::vector<JsonRecord>& records() {
  static const std::vector<JsonRecord> all = testing::loadVectors("gtpv2.jsonl");
  return all;
}

// Records with "bad_reasons", and what the codec does with each.
struct NegativeRecord {
  int line;
  std::optional<Errc> error;  // nullopt: the record decodes (a tolerated case)
  const char* why;
};
const NegativeRecord kNegativeRecords[] = {
    {26, Errc::kInvalidLength,
     "Length 12 announces 16 octets, the datagram has 20 and P=0: octets after the message "
     "without a piggyback flag (TS 29.274 §5.5.1)"},
    {33, Errc::kInvalidLength,
     "Length 29 announces 33 octets, the datagram has 37 and P=0: trailing octets"},
    {34, std::nullopt,
     "'truncated_capture' is about the IP layer (IPv4 total length larger than the frame); the "
     "GTP message itself is complete: Length 14 = 18 - 4, one RAN/NAS Cause IE"},
    {36, Errc::kInvalidLength, "Length 263 announces 267 octets, the capture kept 24"},
    {37, std::nullopt,
     "'truncated_capture' is about the IP layer; the GTP message (Length 13, one UP Function "
     "Selection Indication Flags IE) is complete"},
};

const NegativeRecord* negativeRecord(int line) {
  for (const auto& n : kNegativeRecords) {
    if (n.line == line) return &n;
  }
  return nullptr;
}

// Values tshark reports from inside IEs the codec carries as opaque octets:
// the codec has no view to compare with, so the key is left out for that
// record (and only that one).
struct Exclusion {
  int line;
  const char* key;
  const char* why;
};
const Exclusion kExclusions[] = {
    {32, "mei",
     "tshark reads the MEI out of the MM Context (EPS Security Context, Quadruplets and "
     "Quintuplets) IE 107; the message has no MEI IE (type 75), and MM Context is opaque here"},
    {62, "ebi",
     "the second EBI (5) is the EBI sub-field of Paging and Service Information (IE 186, "
     "TS 29.274 §8.117), opaque here; the EBI IE itself is checked in "
     "EbiOfDownlinkDataNotificationOutsidePagingInfo"},
};

bool excluded(int line, std::string_view key) {
  return std::any_of(std::begin(kExclusions), std::end(kExclusions),
                     [&](const Exclusion& e) { return e.line == line && e.key == key; });
}

// Records with "form":"ie_payload_only" (open5gs unit test) hold a message's IEs
// without its header. They are wrapped here the way the vector file's
// verification note says tshark saw them: a 12-octet header (TS 29.274 §5.1)
// with T=1, TEID 0, sequence number 0 and the record's message type.
std::vector<uint8_t> datagramOf(const JsonRecord& r) {
  std::vector<uint8_t> bytes = r.bytes();
  if (r.json().value("form", std::string()) != "ie_payload_only") return bytes;
  const auto length = static_cast<uint16_t>(bytes.size() + 8);
  std::vector<uint8_t> out = {0x48,
                              r.expect().at("message_type").get<uint8_t>(),
                              static_cast<uint8_t>(length >> 8),
                              static_cast<uint8_t>(length),
                              0,
                              0,
                              0,
                              0,  // TEID
                              0,
                              0,
                              0,   // sequence number
                              0};  // spare
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// The IE tree in the vector's notation: "type" or "type/instance", a grouped
// IE as {"type": [children]}.
json ieTree(const Message& m, Message::Range range) {
  json out = json::array();
  for (const Ie& ie : range) {
    std::string label = std::to_string(ie.type);
    if (ie.instance() != 0) label += "/" + std::to_string(ie.instance());
    if (isGroupedIeType(ie.type)) {
      out.push_back(json{{label, ieTree(m, m.children(ie))}});
    } else {
      out.push_back(label);
    }
  }
  return out;
}

// Type of the grouped IE that directly contains each IE (0 at top level).
std::vector<uint8_t> parentTypes(const Message& m) {
  std::vector<uint8_t> parent(m.ieCount(), 0);
  std::vector<std::size_t> open;  // indexes of the enclosing grouped IEs
  for (std::size_t i = 0; i < m.ieCount(); ++i) {
    while (!open.empty() && m.ie(open.back()).end <= i) open.pop_back();
    if (!open.empty()) parent[i] = m.ie(open.back()).type;
    if (isGroupedIeType(m.ie(i).type)) open.push_back(i);
  }
  return parent;
}

const Ie* firstAnyLevel(const Message& m, IeType type) {
  for (const Ie& ie : m.ies()) {
    if (ie.ieType() == type) return &ie;
  }
  return nullptr;
}

// A TBCD value as tshark shows it. tshark prints a non-digit nibble as '?':
// the codec's strict views reject such values (or drop a 0xF nibble tshark
// shows), so those are compared through the lenient rendering, which exists
// for exactly this (values.h, TbcdMode::kLenient).
template <class T>
void expectDigits(const Message& m, IeType type, const json& expected) {
  const Ie* ie = firstAnyLevel(m, type);
  ASSERT_NE(ie, nullptr) << "no IE of type " << static_cast<int>(type);
  const auto want = expected.get<std::string>();
  if (want.find('?') != std::string::npos) {
    auto lenient = decodeTbcd(m.value(*ie), TbcdMode::kLenient);
    ASSERT_TRUE(lenient);
    EXPECT_EQ(lenient->view(), want);
    return;
  }
  auto v = read<T>(m, *ie);
  ASSERT_TRUE(v) << errcName(v.error().code);
  EXPECT_EQ(v->digits.view(), want);
}

void compareFTeids(const Message& m, const json& expected) {
  const auto parent = parentTypes(m);
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < m.ieCount(); ++i) {
    if (m.ie(i).ieType() == IeType::kFTeid) found.push_back(i);
  }
  ASSERT_EQ(found.size(), expected.size());
  for (std::size_t k = 0; k < found.size(); ++k) {
    SCOPED_TRACE("F-TEID #" + std::to_string(k));
    const Ie& ie = m.ie(found[k]);
    const json& want = expected[k];
    auto f = read<FTeid>(m, ie);
    ASSERT_TRUE(f) << errcName(f.error().code);
    EXPECT_EQ(ie.instance(), want.at("instance").get<int>());
    EXPECT_EQ(f->interface_type, want.at("interface_type").get<int>());
    // The interface names of common/gtp/tables come from Wireshark; tshark's
    // own display string is the third-party check.
    if (want.contains("interface")) {
      EXPECT_EQ(fteidInterfaceTypeName(f->interface_type), want["interface"].get<std::string>());
    }
    EXPECT_EQ(hex32(f->teid), want.at("teid").get<std::string>());
    if (want.contains("ipv4")) {
      ASSERT_TRUE(f->ipv4.has_value());
      EXPECT_EQ(toString(*f->ipv4), want["ipv4"].get<std::string>());
    } else {
      EXPECT_FALSE(f->ipv4.has_value());
    }
    if (want.contains("ipv6")) {
      ASSERT_TRUE(f->ipv6.has_value());
      EXPECT_EQ(toString(*f->ipv6), want["ipv6"].get<std::string>());
    } else {
      EXPECT_FALSE(f->ipv6.has_value());
    }
    EXPECT_EQ(parent[found[k]], want.value("in_grouped_ie", 0));
  }
}

// Compares one decoded message with tshark's facts. Fails on a key it does not
// know, so a vector file with new facts cannot be silently half-checked.
// `wrapped`: the header was added by datagramOf(), tshark saw no header facts.
void compareWithTshark(const Message& m, const json& expect, int line, std::size_t datagram_size,
                       bool wrapped) {
  static const std::set<std::string> kNotCompared = {
      "message_name",      // display text; the type number is compared
      "has_grouped_ie",    // summary of "ies"
      "has_ipv6_fteid",    // summary of "fteid"
      "tshark_malformed",  // about tshark's dissection; negative records have their own table
      "tshark_expert",
  };
  const Header& h = m.header();
  for (const auto& [key, want] : expect.items()) {
    SCOPED_TRACE("key " + key);
    if (kNotCompared.count(key) != 0 || excluded(line, key)) continue;
    if (key == "version") {
      EXPECT_EQ(h.version(), want.get<int>());
    } else if (key == "message_type") {
      EXPECT_EQ(h.message_type, want.get<int>());
    } else if (key == "teid") {
      ASSERT_TRUE(h.teidPresent());
      EXPECT_EQ(hex32(h.teid), want.get<std::string>());
    } else if (key == "seq") {
      EXPECT_EQ(h.sequence_number, want.get<uint32_t>());
    } else if (key == "piggyback_flag") {
      EXPECT_EQ(h.piggyback(), want.get<bool>());
    } else if (key == "message_priority") {
      ASSERT_TRUE(h.messagePriorityPresent());
      EXPECT_EQ(h.messagePriority(), want.get<int>());
    } else if (key == "declared_length") {
      EXPECT_EQ(h.length, want.get<int>());
    } else if (key == "bytes") {
      EXPECT_EQ(datagram_size, want.get<std::size_t>());
    } else if (key == "length_consistent") {
      // Decoding succeeded, which the codec allows only for a consistent Length.
      EXPECT_TRUE(want.get<bool>());
    } else if (key == "ies") {
      EXPECT_EQ(ieTree(m, m.topLevel()), want);
    } else if (key == "imsi") {
      expectDigits<Imsi>(m, IeType::kImsi, want);
    } else if (key == "msisdn") {
      expectDigits<Msisdn>(m, IeType::kMsisdn, want);
    } else if (key == "mei") {
      expectDigits<Mei>(m, IeType::kMei, want);
    } else if (key == "apn") {
      const Ie* ie = firstAnyLevel(m, IeType::kApn);
      ASSERT_NE(ie, nullptr);
      auto apn = read<Apn>(m, *ie);
      ASSERT_TRUE(apn) << errcName(apn.error().code);
      EXPECT_EQ(apn->text.view(), want.get<std::string>());
    } else if (key == "cause") {
      std::vector<int> causes;
      for (const Ie& ie : m.ies()) {
        if (ie.ieType() != IeType::kCause) continue;
        auto c = read<CauseIe>(m, ie);
        ASSERT_TRUE(c) << errcName(c.error().code);
        causes.push_back(c->value);
      }
      EXPECT_EQ(json(causes), want);
    } else if (key == "ebi") {
      std::vector<int> ebis;
      for (const Ie& ie : m.ies()) {
        if (ie.ieType() != IeType::kEbi) continue;
        auto e = read<Ebi>(m, ie);
        ASSERT_TRUE(e) << errcName(e.error().code);
        ebis.push_back(e->value);
      }
      EXPECT_EQ(json(ebis), want);
    } else if (key == "recovery") {
      auto r = readFirst<Recovery>(m);
      ASSERT_TRUE(r) << errcName(r.error().code);
      EXPECT_EQ(r->value, want.get<int>());
    } else if (key == "paa") {
      std::vector<std::string> addresses;  // wire order: IPv6 before IPv4 (§8.14)
      for (const Ie& ie : m.ies()) {
        if (ie.ieType() != IeType::kPaa) continue;
        auto p = read<Paa>(m, ie);
        ASSERT_TRUE(p) << errcName(p.error().code);
        if (p->ipv6) addresses.push_back(toString(*p->ipv6));
        if (p->ipv4) addresses.push_back(toString(*p->ipv4));
      }
      EXPECT_EQ(json(addresses), want);
    } else if (key == "fteid") {
      compareFTeids(m, want);
    } else {
      ADD_FAILURE() << "the test does not know the vector key \"" << key << "\"";
    }
  }
  // tshark shows a TEID exactly when T=1, and lists IEs whenever there are any.
  if (!expect.contains("teid") && !wrapped) {
    EXPECT_FALSE(h.teidPresent());
  }
  if (!expect.contains("message_priority")) {
    EXPECT_FALSE(h.messagePriorityPresent());
  }
  if (!expect.contains("ies")) {
    EXPECT_EQ(m.ieCount(), 0u);
  }
}

class GtpV2Vector : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV2Vector, DecodesToWhatTsharkShows) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = datagramOf(r);
  Datagram d;
  auto ok = d.decode(bytes);
  if (r.isNegative()) {
    const NegativeRecord* n = negativeRecord(r.line);
    ASSERT_NE(n, nullptr) << "negative record without an entry in kNegativeRecords";
    if (n->error) {
      ASSERT_FALSE(ok) << n->why;
      EXPECT_EQ(errcName(ok.error().code), errcName(*n->error)) << n->why;
      return;
    }
    ASSERT_TRUE(ok) << n->why << ": " << describe(ok.error());
  } else {
    ASSERT_TRUE(ok) << describe(ok.error());
  }
  const bool wrapped = r.json().value("form", std::string()) == "ie_payload_only";
  compareWithTshark(d.message, r.expect(), r.line, bytes.size(), wrapped);
  if (r.expect().contains("piggybacked")) {
    ASSERT_TRUE(d.has_piggybacked);
    compareWithTshark(d.piggybacked, r.expect()["piggybacked"], r.line,
                      bytes.size() - d.message.bytes().size(), false);
  } else {
    EXPECT_FALSE(d.has_piggybacked);
  }
}

// The records that decode: all but the negative ones refused with an error.
std::vector<JsonRecord> decodableRecords() {
  std::vector<JsonRecord> out;
  for (const auto& r : records()) {
    const NegativeRecord* n = r.isNegative() ? negativeRecord(r.line) : nullptr;
    if (n == nullptr || !n->error) out.push_back(r);
  }
  return out;
}

class GtpV2DecodableVector : public ::testing::TestWithParam<JsonRecord> {};

// An unmodified message must come out of reencode() byte for byte: anything
// else means the decoder lost or invented an octet (header spare bits, CR
// flags, unknown IEs, grouped lengths).
TEST_P(GtpV2DecodableVector, ReencodesByteForByte) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = datagramOf(r);
  Datagram d;
  ASSERT_TRUE(d.decode(bytes));
  std::vector<uint8_t> out(bytes.size() + 64);
  auto first = reencode(d.message, out);
  ASSERT_TRUE(first) << errcName(first.error().code);
  std::vector<uint8_t> again(first->begin(), first->end());
  if (d.has_piggybacked) {
    auto second = reencode(d.piggybacked, out);
    ASSERT_TRUE(second);
    again.insert(again.end(), second->begin(), second->end());
  }
  EXPECT_EQ(testing::toHex(again), testing::toHex(bytes));
}

// A datagram cut anywhere is refused with the header error that fits, never
// read past its end (ASan checks the latter in the sanitizer tree).
TEST_P(GtpV2DecodableVector, EveryTruncationIsRefused) {
  const JsonRecord& r = GetParam();
  const std::vector<uint8_t> bytes = datagramOf(r);
  Datagram full;
  ASSERT_TRUE(full.decode(bytes));
  const std::size_t header = full.message.header().headerSize();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    Datagram d;
    auto ok = d.decode(cut);
    ASSERT_FALSE(ok) << "prefix of " << n << " octets decoded";
    // Shorter than the fixed header: kTruncatedHeader; otherwise the Length
    // field (of the first message, or of the piggybacked one) points past the
    // end: kInvalidLength, or kTruncatedHeader for a piggybacked header cut.
    if (n < header) {
      EXPECT_EQ(errcName(ok.error().code), errcName(Errc::kTruncatedHeader)) << n;
    } else if (n < full.message.bytes().size()) {
      EXPECT_EQ(errcName(ok.error().code), errcName(Errc::kInvalidLength)) << n;
    } else {
      EXPECT_TRUE(ok.error().code == Errc::kInvalidLength ||
                  ok.error().code == Errc::kTruncatedHeader)
          << n << " " << errcName(ok.error().code);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gtpv2Jsonl, GtpV2Vector, ::testing::ValuesIn(records()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });
INSTANTIATE_TEST_SUITE_P(Gtpv2Jsonl, GtpV2DecodableVector, ::testing::ValuesIn(decodableRecords()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });

TEST(GtpV2Vectors, FileHoldsTheDocumentedNumberOfRecords) {
  // tests/data/README.md: gtpv2.jsonl (83).
  EXPECT_EQ(records().size(), 83u);
}

TEST(GtpV2Vectors, NegativeTableMatchesTheFile) {
  std::set<int> in_file;
  for (const auto& r : records()) {
    if (r.isNegative()) in_file.insert(r.line);
  }
  std::set<int> in_table;
  for (const auto& n : kNegativeRecords) in_table.insert(n.line);
  EXPECT_EQ(in_file, in_table);
}

TEST(GtpV2Vectors, EveryExclusionNamesAKeyTsharkReports) {
  for (const auto& e : kExclusions) {
    ASSERT_GE(e.line, 1);
    ASSERT_LE(static_cast<std::size_t>(e.line), records().size());
    const JsonRecord& r = records()[static_cast<std::size_t>(e.line - 1)];
    EXPECT_EQ(r.line, e.line);
    EXPECT_TRUE(r.expect().contains(e.key)) << e.line << " " << e.key;
  }
}

// The part of line 62 the exclusion does not cover: the one EBI IE.
TEST(GtpV2Vectors, EbiOfDownlinkDataNotificationOutsidePagingInfo) {
  const JsonRecord& r = records().at(61);
  ASSERT_EQ(r.name(), "DownlinkDataNotification");
  const auto bytes = r.bytes();
  Message m;
  ASSERT_TRUE(m.decode(bytes));
  auto ebi = readFirst<Ebi>(m);
  ASSERT_TRUE(ebi);
  EXPECT_EQ(ebi->value, r.expect()["ebi"][0].get<int>());
  // The other value tshark lists is the first octet of IE 186 (low 4 bits).
  const Ie* paging = m.find(IeType::kPagingAndServiceInformation);
  ASSERT_NE(paging, nullptr);
  EXPECT_EQ(m.value(*paging)[0] & 0x0f, r.expect()["ebi"][1].get<int>());
}

// Which vector messages lack an IE TS 29.274 clause 7 marks mandatory. Many
// library test vectors are partial messages; this list pins them so that a
// change of the codec's rules, or of the file, is noticed.
struct MandatoryGap {
  int line;
  Errc code;
  uint8_t type;
  uint8_t instance;
};
const std::vector<MandatoryGap> kMandatoryGaps = {
    // scapy: a Create Session Request carrying only an APCO (7.2.1: RAT Type is M).
    {24, Errc::kMandatoryIeMissing, 82, 0},
    // scapy: Context Response with MM Context and PDN Connection, no Cause (7.3.6).
    {32, Errc::kMandatoryIeMissing, 2, 0},
    // scapy: Create Session Request with one UP Function Selection Indication Flags IE.
    {37, Errc::kMandatoryIeMissing, 82, 0},
    // gtplib: Echo Requests with an Indication and no Recovery (7.1.1: Recovery is M).
    {38, Errc::kMandatoryIeMissing, 3, 0},
    {39, Errc::kMandatoryIeMissing, 3, 0},
    {40, Errc::kMandatoryIeMissing, 3, 0},
    // go-gtp: Bearer Contexts without their Cause (Tables 7.2.4-2, 7.2.17.2-2).
    {49, Errc::kMandatoryIeMissing, 2, 0},
    {53, Errc::kMandatoryIeMissing, 2, 0},
    // go-gtp header test: a Create Session Request with only an IMSI.
    {65, Errc::kMandatoryIeMissing, 82, 0},
    // go-gtp: Update Bearer Request without APN-AMBR (Table 7.2.15-1: M).
    {80, Errc::kMandatoryIeMissing, 72, 0},
};

TEST(GtpV2Vectors, MessagesLackingMandatoryIesAreExactlyTheKnownOnes) {
  std::vector<std::string> found;
  for (const auto& r : records()) {
    const auto bytes = datagramOf(r);
    Datagram d;
    if (!d.decode(bytes)) continue;
    auto ok = checkMandatory(d.message);
    if (ok) continue;
    found.push_back("L" + std::to_string(r.line) + " " + r.name() + ": " +
                    std::string(errcName(ok.error().code)) + " " +
                    std::to_string(ok.error().ie_type) + "/" +
                    std::to_string(ok.error().ie_instance));
  }
  std::vector<std::string> expected;
  for (const auto& g : kMandatoryGaps) {
    const JsonRecord& r = records().at(static_cast<std::size_t>(g.line - 1));
    expected.push_back("L" + std::to_string(g.line) + " " + r.name() + ": " +
                       std::string(errcName(g.code)) + " " + std::to_string(g.type) + "/" +
                       std::to_string(g.instance));
  }
  EXPECT_EQ(found, expected);
}

}  // namespace
}  // namespace gtpcp::gtp::v2
