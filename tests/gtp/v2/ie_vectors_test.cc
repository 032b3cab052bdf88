// Single GTPv2-C IEs against third-party vectors (tests/data/vectors/gtpv2_ie.jsonl).
//
// Each record is one IE (type, length, CR/instance, value) from go-gtp's unit
// tests, with TShark 4.0.17's summary line of it. The IE is wrapped in an Echo
// Request header, as tshark saw it, and read back through the decoder: its
// header fields, its value check (checkIeValue) and, where the codec has a
// typed view, the value tshark printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "common/gtp/values.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::JsonRecord;

const std::vector<JsonRecord>& records() {
  static const std::vector<JsonRecord> all = testing::loadVectors("gtpv2_ie.jsonl");
  return all;
}

// Negative records: the error checkIeValue() must name.
struct NegativeRecord {
  int line;
  Errc error;
  const char* why;
};
const NegativeRecord kNegativeRecords[] = {
    {45, Errc::kIeTooShort,
     "go-gtp encodes RFSP Index in 1 octet; TS 29.274 §8.77 gives it 2 (Table 8.1-1: fixed "
     "length), tshark reports it malformed"},
};

// The IE inside an Echo Request header with T=0 (TS 29.274 §5.1), Length set
// to cover it: 8 header octets, Length = 4 + IE size.
std::vector<uint8_t> wrapInEchoRequest(const std::vector<uint8_t>& ie) {
  const auto length = static_cast<uint16_t>(4 + ie.size());
  std::vector<uint8_t> out(8 + ie.size());
  const uint8_t header[] = {
      0x40, 0x01, static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length), 0x00, 0x00,
      0x01, 0x00};
  std::copy(std::begin(header), std::end(header), out.begin());
  std::copy(ie.begin(), ie.end(), out.begin() + 8);
  return out;
}

// Compares the value tshark printed in its summary with the codec's typed
// view, for the types that have one. Returns false when the type has no view
// or the summary carries no value (e.g. "Charging ID : ").
bool checkSummary(const Message& m, const Ie& ie, const std::string& summary) {
  using testing::digitsAfter;
  using testing::inLastParens;
  // GTPv2 summaries read "IE name : value".
  const std::string value = testing::afterFirst(summary, " : ");
  switch (ie.ieType()) {
    case IeType::kCause: {
      auto c = read<CauseIe>(m, ie);
      EXPECT_TRUE(c);
      if (!c) return true;
      EXPECT_EQ(std::to_string(c->value), inLastParens(value));
      // The cause names of common/gtp/tables come from the spec via Wireshark.
      EXPECT_EQ(std::string(causeName(c->value)) + " (" + inLastParens(value) + ")", value);
      return true;
    }
    case IeType::kEbi: {
      auto e = read<Ebi>(m, ie);
      EXPECT_TRUE(e);
      if (e) {
        EXPECT_EQ(std::to_string(e->value), value);
      }
      return true;
    }
    case IeType::kIpAddress: {
      auto a = read<IpAddress>(m, ie);
      EXPECT_TRUE(a);
      if (!a) return true;
      const std::string got = a->ipv4 ? "IPv4 " + toString(*a->ipv4) : "IPv6 " + toString(*a->ipv6);
      EXPECT_EQ(got, value);
      return true;
    }
    case IeType::kMsisdn: {
      auto d = read<Msisdn>(m, ie);
      EXPECT_TRUE(d);
      if (d) {
        EXPECT_EQ(d->digits.view(), value);
      }
      return true;
    }
    case IeType::kPaa: {
      auto p = read<Paa>(m, ie);
      EXPECT_TRUE(p);
      if (!p) return true;
      const std::string got = p->ipv4 ? "IPv4 " + toString(*p->ipv4) : "IPv6 " + toString(*p->ipv6);
      EXPECT_EQ(got, value);
      return true;
    }
    case IeType::kRatType: {
      auto r = read<RatType>(m, ie);
      EXPECT_TRUE(r);
      if (r) {
        EXPECT_EQ(std::to_string(r->value), inLastParens(value));
      }
      return true;
    }
    case IeType::kServingNetwork: {
      auto s = read<ServingNetwork>(m, ie);
      EXPECT_TRUE(s);
      if (!s) return true;
      EXPECT_EQ(s->plmn.mccView(), digitsAfter(value, "MCC "));
      EXPECT_EQ(s->plmn.mncView(), digitsAfter(value, "MNC "));
      return true;
    }
    case IeType::kUli: {
      auto u = read<Uli>(m, ie);
      EXPECT_TRUE(u);
      if (!u) return true;
      // tshark names CGI SAI RAI TAI ECGI LAI in its summary (not the macro
      // eNodeB IDs, which it dissects without naming them there).
      std::string parts;
      if (u->cgi) parts += "CGI ";
      if (u->sai) parts += "SAI ";
      if (u->rai) parts += "RAI ";
      if (u->tai) parts += "TAI ";
      if (u->ecgi) parts += "ECGI ";
      if (u->lai) parts += "LAI ";
      EXPECT_EQ(parts, value);
      return true;
    }
    case IeType::kFTeid: {
      auto f = read<FTeid>(m, ie);
      EXPECT_TRUE(f);
      if (!f) return true;
      char teid[16];
      std::snprintf(teid, sizeof teid, "0x%08x", f->teid);
      std::string got =
          std::string(fteidInterfaceTypeName(f->interface_type)) + ", TEID/GRE Key: " + teid;
      if (f->ipv4) got += ", IPv4 " + toString(*f->ipv4);
      if (f->ipv6) got += ", IPv6 " + toString(*f->ipv6);
      EXPECT_EQ(got, value);
      return true;
    }
    case IeType::kPortNumber: {
      auto p = read<PortNumber>(m, ie);
      EXPECT_TRUE(p);
      if (p) {
        EXPECT_EQ(std::to_string(p->value), value);
      }
      return true;
    }
    case IeType::kApnRestriction: {
      auto a = read<ApnRestriction>(m, ie);
      EXPECT_TRUE(a);
      if (a) {
        EXPECT_EQ(std::to_string(a->value), inLastParens(value));
      }
      return true;
    }
    case IeType::kNodeType: {
      // TS 29.274 §8.65: 0 MME, 1 SGSN.
      auto n = read<NodeType>(m, ie);
      EXPECT_TRUE(n);
      if (n) {
        EXPECT_EQ(n->value == 1 ? "SGSN" : "MME", value);
      }
      return true;
    }
    case IeType::kPrivateExtension: {
      auto p = read<PrivateExtension>(m, ie);
      EXPECT_TRUE(p);
      if (p) {
        EXPECT_EQ(std::to_string(p->enterprise_id), inLastParens(value));
      }
      return true;
    }
    default:
      return false;
  }
}

class GtpV2IeVector : public ::testing::TestWithParam<JsonRecord> {};

// The IE's own header, read through the message decoder: type, Length, CR
// (high nibble of octet 4) and instance (low nibble), and a Length that spans
// exactly the IE's octets.
TEST_P(GtpV2IeVector, HeaderFieldsAreTsharks) {
  const JsonRecord& r = GetParam();
  const auto ie_bytes = r.bytes();
  const auto datagram = wrapInEchoRequest(ie_bytes);
  Message m;
  auto ok = m.decode(datagram);
  ASSERT_TRUE(ok) << describe(ok.error());
  ASSERT_EQ(m.ieCount(), 1u);
  const Ie& ie = m.ie(0);
  const auto& want = r.expect();
  EXPECT_EQ(ie.type, want.at("ie_type").get<int>());
  EXPECT_EQ(ie.length, want.at("length").get<int>());
  EXPECT_EQ(ie.spare_instance >> 4, want.at("cr").get<int>());
  EXPECT_EQ(ie.instance(), want.at("instance").get<int>());
  EXPECT_EQ(want.at("length_consistent").get<bool>(), m.raw(ie).size() == ie_bytes.size());
}

TEST_P(GtpV2IeVector, ValueCheckAcceptsGoodAndNamesTheErrorOfBad) {
  const JsonRecord& r = GetParam();
  const auto ie_bytes = r.bytes();
  const auto datagram = wrapInEchoRequest(ie_bytes);
  Message m;
  ASSERT_TRUE(m.decode(datagram));
  const Ie& ie = m.ie(0);
  auto ok = checkIeValue(ie.type, m.value(ie));
  if (!r.isNegative()) {
    EXPECT_TRUE(ok) << errcName(ok.error().code);
    return;
  }
  const NegativeRecord* n = nullptr;
  for (const auto& x : kNegativeRecords) {
    if (x.line == r.line) n = &x;
  }
  ASSERT_NE(n, nullptr) << "negative record without an entry in kNegativeRecords";
  ASSERT_FALSE(ok) << n->why;
  EXPECT_EQ(errcName(ok.error().code), errcName(n->error)) << n->why;
  EXPECT_EQ(ok.error().ie_type, ie.type);
}

// IE types whose typed view checkSummary() compares with tshark's summary.
const std::set<int> kTypesWithView = {2, 73, 74, 76, 79, 82, 83, 86, 87, 126, 127, 135, 255};

std::vector<JsonRecord> recordsWithView() {
  std::vector<JsonRecord> out;
  for (const auto& r : records()) {
    if (!r.isNegative() && kTypesWithView.count(r.expect().at("ie_type").get<int>()) != 0)
      out.push_back(r);
  }
  return out;
}

class GtpV2IeVectorWithView : public ::testing::TestWithParam<JsonRecord> {};

TEST_P(GtpV2IeVectorWithView, TypedViewShowsTsharksValue) {
  const JsonRecord& r = GetParam();
  const auto datagram = wrapInEchoRequest(r.bytes());
  Message m;
  ASSERT_TRUE(m.decode(datagram));
  const auto& summaries = r.expect().at("tshark_summary");
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_TRUE(checkSummary(m, m.ie(0), summaries[0].get<std::string>()));
}

INSTANTIATE_TEST_SUITE_P(Gtpv2IeJsonl, GtpV2IeVector, ::testing::ValuesIn(records()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });
INSTANTIATE_TEST_SUITE_P(Gtpv2IeJsonl, GtpV2IeVectorWithView,
                         ::testing::ValuesIn(recordsWithView()),
                         [](const ::testing::TestParamInfo<JsonRecord>& p) {
                           return testing::paramName(p.param);
                         });

TEST(GtpV2IeVectors, FileHoldsTheDocumentedNumberOfRecords) {
  // tests/data/README.md: gtpv2_ie.jsonl (58).
  EXPECT_EQ(records().size(), 58u);
}

TEST(GtpV2IeVectors, NegativeTableMatchesTheFile) {
  std::set<int> in_file, in_table;
  for (const auto& r : records()) {
    if (r.isNegative()) in_file.insert(r.line);
  }
  for (const auto& n : kNegativeRecords) in_table.insert(n.line);
  EXPECT_EQ(in_file, in_table);
}

}  // namespace
}  // namespace gtpcp::gtp::v2
