// Single GTPv1 IEs against third-party vectors (tests/data/vectors/gtpv1_ie.jsonl).
//
// Each record is one IE from go-gtp's unit tests with TShark 4.0.17's summary
// of it. Wrapped in an Echo Request header (as tshark saw it), the IE goes
// through the decoder, checkIeValue() and, where the codec has a typed view,
// is compared with the value tshark printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/gtp/v1/ies.h"
#include "common/gtp/v1/message.h"
#include "common/gtp/v1/validate.h"
#include "common/gtp/values.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v1 {
namespace {

using testing::JsonRecord;

const std::vector<JsonRecord>& records() {
  static const std::vector<JsonRecord> all = testing::loadVectors("gtpv1_ie.jsonl");
  return all;
}

// The IE after an Echo Request header with S=1 (TS 29.060 §6: 8 mandatory
// octets, then sequence number, N-PDU number and next extension header type).
std::vector<uint8_t> wrapInEchoRequest(const std::vector<uint8_t>& ie) {
  const auto length = static_cast<uint16_t>(4 + ie.size());
  std::vector<uint8_t> out(12 + ie.size());
  const uint8_t header[] = {0x32,
                            0x01,
                            static_cast<uint8_t>(length >> 8),
                            static_cast<uint8_t>(length),
                            0,
                            0,
                            0,
                            0,
                            0x00,
                            0x01,
                            0,
                            0};
  std::copy(std::begin(header), std::end(header), out.begin());
  std::copy(ie.begin(), ie.end(), out.begin() + 12);
  return out;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// tshark's value against the typed view; false when there is nothing to compare.
bool checkSummary(const Message& m, const Ie& ie, const std::string& summary) {
  using testing::firstWord;
  using testing::inLastParens;
  // GTPv1 summaries read "IE name: value" (an IPv6 value holds no ": ").
  const std::string value = testing::afterLast(summary, ": ");
  switch (ie.ieType()) {
    case IeType::kPTmsi: {
      auto v = read<PTmsi>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(hex32(v->value), inLastParens(value));
      }
      return true;
    }
    case IeType::kRecovery: {
      auto v = read<Recovery>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(std::to_string(v->value), value);
      }
      return true;
    }
    case IeType::kTeidControlPlane: {
      auto v = read<TeidControlPlane>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(hex32(v->value), firstWord(value));
      }
      return true;
    }
    case IeType::kChargingId: {
      auto v = read<ChargingId>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(hex32(v->value), firstWord(value));
      }
      return true;
    }
    case IeType::kTeardownInd: {
      auto v = read<TeardownInd>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(v->value ? "True" : "False", value);
      }
      return true;
    }
    case IeType::kEndUserAddress: {
      auto v = read<EndUserAddress>(m, ie);
      EXPECT_TRUE(v);
      if (!v) return true;
      EXPECT_EQ(v->pdp_type_organization, 1);  // "IETF"
      const std::string got = v->ipv6 ? toString(*v->ipv6) : v->ipv4 ? toString(*v->ipv4) : "";
      EXPECT_EQ(got, value);
      return true;
    }
    case IeType::kRatType: {
      // TS 29.060 §7.7.50: 6 = EUTRAN (tshark prints the name only).
      auto v = read<RatType>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(v->value == 6 ? "EUTRAN" : "?", firstWord(value));
      }
      return true;
    }
    case IeType::kImeiSv: {
      auto v = read<ImeiSv>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(v->digits.view(), value);
      }
      return true;
    }
    case IeType::kPrivateExtension: {
      auto v = read<PrivateExtension>(m, ie);
      EXPECT_TRUE(v);
      if (v) {
        EXPECT_EQ(std::to_string(v->extension_identifier), inLastParens(value));
      }
      return true;
    }
    default:
      return false;
  }
}

class GtpV1IeVector : public ::testing::TestWithParam<JsonRecord> {};

// The IE decodes as tshark's type and spans exactly its octets: TV types by
// their table length, TLV types by their Length field.
TEST_P(GtpV1IeVector, DecodesAsOneIeOfTsharksType) {
  const JsonRecord& r = GetParam();
  const auto ie_bytes = r.bytes();
  const auto datagram = wrapInEchoRequest(ie_bytes);
  Message m;
  auto ok = m.decode(datagram);
  if (r.isNegative()) {
    // TEID Data II is TV with 5 value octets (§7.7.15: NSAPI + TEID); go-gtp
    // wrote 4, so the IE runs past the end of the message.
    ASSERT_EQ(r.line, 7);
    ASSERT_FALSE(ok);
    EXPECT_EQ(errcName(ok.error().code), errcName(Errc::kIeTruncated));
    EXPECT_EQ(ok.error().ie_type, r.expect()["ie_type"].get<int>());
    return;
  }
  ASSERT_TRUE(ok) << describe(ok.error());
  ASSERT_EQ(m.ieCount(), 1u);
  EXPECT_EQ(m.ie(0).type, r.expect().at("ie_type").get<int>());
  EXPECT_EQ(m.raw(m.ie(0)).size(), ie_bytes.size());
}

TEST_P(GtpV1IeVector, ValueCheckAcceptsGoodAndNamesTheErrorOfBad) {
  const JsonRecord& r = GetParam();
  const auto ie_bytes = r.bytes();
  const uint8_t type = ie_bytes.at(0);
  if (r.isNegative()) {
    // The value octets as go-gtp wrote them: 4 instead of 5.
    auto ok = checkIeValue(type, std::span<const uint8_t>(ie_bytes).subspan(1));
    ASSERT_FALSE(ok);
    EXPECT_EQ(errcName(ok.error().code), errcName(Errc::kIeTooShort));
    return;
  }
  const auto datagram = wrapInEchoRequest(ie_bytes);
  Message m;
  ASSERT_TRUE(m.decode(datagram));
  auto ok = checkIeValue(m.ie(0).type, m.value(m.ie(0)));
  EXPECT_TRUE(ok) << errcName(ok.error().code);
}

// IE types whose typed view checkSummary() compares with tshark's summary.
const std::set<int> kTypesWithView = {5, 14, 17, 19, 127, 128, 151, 154, 255};

std::vector<JsonRecord> recordsWithView() {
  std::vector<JsonRecord> out;
  for (const auto& r : records()) {
    if (!r.isNegative() && kTypesWithView.count(r.expect().at("ie_type").get<int>()) != 0)
      out.push_back(r);
  }
  return out;
}

class GtpV1IeVectorWithView : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV1IeVectorWithView, TypedViewShowsTsharksValue) {
  const JsonRecord& r = GetParam();
  const auto datagram = wrapInEchoRequest(r.bytes());
  Message m;
  ASSERT_TRUE(m.decode(datagram));
  const auto& summaries = r.expect().at("tshark_summary");
  ASSERT_GE(summaries.size(), 1u);
  EXPECT_TRUE(checkSummary(m, m.ie(0), summaries[0].get<std::string>()));
}

INSTANTIATE_TEST_SUITE_P(Gtpv1IeJsonl, GtpV1IeVector, ::testing::ValuesIn(records()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });
INSTANTIATE_TEST_SUITE_P(Gtpv1IeJsonl, GtpV1IeVectorWithView,
                         ::testing::ValuesIn(recordsWithView()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });

TEST(GtpV1IeVectors, FileHoldsTheDocumentedNumberOfRecords) {
  // tests/data/README.md: gtpv1_ie.jsonl (20), one of them negative (line 7).
  EXPECT_EQ(records().size(), 20u);
  std::set<int> negative;
  for (const auto& r : records()) {
    if (r.isNegative()) negative.insert(r.line);
  }
  EXPECT_EQ(negative, std::set<int>{7});
}

// The Extension Header Type List has a one-octet Length (TS 29.060 §7.7.40),
// unlike every other TLV: tshark reads "8d 02 85 40" as two types, 0x85 and 0x40.
TEST(GtpV1IeVectors, ExtensionHeaderTypeListHasAOneOctetLength) {
  const auto datagram = wrapInEchoRequest(testing::fromHex("8d028540"));
  Message m;
  ASSERT_TRUE(m.decode(datagram));
  ASSERT_EQ(m.ieCount(), 1u);
  EXPECT_EQ(m.ie(0).length, 2);
  EXPECT_EQ(testing::toHex(m.value(m.ie(0))), "8540");
}

}  // namespace
}  // namespace gtpcp::gtp::v1
