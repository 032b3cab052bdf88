// The slow-path rewriter (v2/rewrite.h): edits that change lengths, written
// into a new buffer.
//
// Checked three ways: against octets written out by hand from TS 29.274 §5
// and §8.2; against the same message built directly with Builder (an edited
// message must be the octets Builder writes for the edited content); and on
// every third-party vector of gtpv2.jsonl (no edit gives the received bytes,
// length-changing edits keep a valid message valid, and random edits give
// what a model of the edits predicts).
#include "common/gtp/v2/rewrite.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/gtp/v2/builder.h"
#include "common/gtp/v2/ies.h"
#include "common/gtp/v2/message.h"
#include "common/gtp/v2/validate.h"
#include "common/gtp/bytes.h"
#include "tests/gtp/gtp_test_util.h"

namespace gtpcp::gtp::v2 {
namespace {

using testing::apnText;
using testing::digits;
using testing::fromHex;
using testing::toHex;

constexpr uint32_t kTeid = 0x0a0b0c0d;
constexpr uint32_t kSequence = 0x000123;
const Ipv4 kMmeV4{{192, 0, 2, 10}};
const Ipv4 kPgwV4{{192, 0, 2, 20}};
const Ipv4 kSgwV4{{192, 0, 2, 30}};
const Ipv6 kSgwV6{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x30}};
// Types TS 29.274 Table 8.1-1 leaves unassigned (220-253 are spare): the codec
// indexes them and never looks inside.
constexpr uint8_t kUnknownA = 230;
constexpr uint8_t kUnknownB = 240;

BearerQos bearerQos() {
  BearerQos q;
  q.pl = 11;
  q.qci = 9;
  return q;
}

// A message of `type` with T=1, built by `fill` between begin() and finish().
template <class Fill>
std::vector<uint8_t> build(MessageType type, Fill fill) {
  std::array<uint8_t, 2048> buf{};
  Builder b(buf);
  b.begin(type, kTeid, kSequence);
  fill(b);
  auto bytes = b.finish();
  EXPECT_TRUE(bytes) << errcName(bytes.error().code);
  if (!bytes) return {};
  return {bytes->begin(), bytes->end()};
}

// The top-level IEs of the Create Session Requests below, up to the APN.
void addSessionHead(Builder& b) {
  b.add(Imsi{digits("001010123456789")});
  b.add(Msisdn{digits("46702123456")});
  b.add(RatType{6});
  b.add(FTeid{10, 0x11111111, kMmeV4, std::nullopt});  // S11 MME GTP-C
  b.add(FTeid{7, 0, kPgwV4, std::nullopt}, 1);         // S5/S8 PGW GTP-C
}

// Bearer Context {EBI, Bearer QoS, S5/S8-U SGW F-TEID (instance 2)}.
void addBearer(Builder& b, uint8_t ebi, const FTeid& sgw_u) {
  b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{ebi});
  b.add(bearerQos());
  b.add(sgw_u, 2);
  b.endGrouped();
}

const FTeid kSgwUV6{4, 0x44444444, std::nullopt, kSgwV6};
const FTeid kSgwUV4{4, 0x44444444, kSgwV4, std::nullopt};

// The message `rw` writes, or an empty vector (and a test failure) on error.
std::vector<uint8_t> written(const Rewriter& rw) {
  std::vector<uint8_t> out(70000);
  auto n = rw.write(out);
  EXPECT_TRUE(n) << (n ? "" : describe(n.error()));
  out.resize(n ? *n : 0);
  return out;
}

// ---------------------------------------------------------------------------
// Octets written out by hand.

// Modify Bearer Request (§7.2.7) with Bearer Context {EBI 5, S1-U eNodeB
// F-TEID with an IPv6 address}; the F-TEID becomes IPv4 (§8.22: flags, TEID,
// then 4 octets for V4 instead of 16 for V6).
TEST(GtpV2Rewrite, FTeidIpv6ToIpv4InsideABearerContextByHand) {
  const auto bytes = fromHex(
      "48" "22" "002a" "0a0b0c0d" "000123" "00"  // Length 42 = 8 + Bearer Context (4 + 30)
      "5d" "001e" "00"                           // Bearer Context, Length 30
      "49" "0001" "00" "05"                      //   EBI 5
      "57" "0015" "00" "40" "66666666"           //   F-TEID, Length 21: V6, interface 0, TEID
      "20010db8000000000000000000000001");       //     2001:db8::1
  Message m;
  ASSERT_TRUE(m.decode(bytes));
  const Ie* fteid = m.findChild(*m.find(IeType::kBearerContext), IeType::kFTeid);
  ASSERT_NE(fteid, nullptr);
  Rewriter rw(m);
  ASSERT_TRUE(rw.replace(*fteid, FTeid{0, 0x66666666, Ipv4{{198, 51, 100, 1}}, std::nullopt}));
  EXPECT_EQ(toHex(written(rw)),
            "48" "22" "001e" "0a0b0c0d" "000123" "00"  // Length 30 = 8 + 4 + 18
            "5d" "0012" "00"                           // Bearer Context, Length 18
            "49" "0001" "00" "05"
            "57" "0009" "00" "80" "66666666" "c6336401");  // V4, 198.51.100.1
}

// A raw value keeps the IE's type and whole octet 4: CR/spare bits included.
TEST(GtpV2Rewrite, ReplaceKeepsTheSpareAndInstanceOctet) {
  const auto bytes = fromHex(
      "48" "20" "0013" "00000000" "000001" "00"  // Length 8 + 6 + 5
      "ee" "0002" "a3" "0102"      // unknown type 238, spare 1010, instance 3
      "03" "0001" "00" "07");      // Recovery
  Message m;
  ASSERT_TRUE(m.decode(bytes));
  Rewriter rw(m);
  const auto value = fromHex("aabbccdd");
  ASSERT_TRUE(rw.replace(m.ie(0), value));
  EXPECT_EQ(toHex(written(rw)),
            "48" "20" "0015" "00000000" "000001" "00"
            "ee" "0004" "a3" "aabbccdd"
            "03" "0001" "00" "07");
}

// ---------------------------------------------------------------------------
// Against Builder: the edited message must be what Builder writes for it.

class GtpV2RewriteBuilt : public ::testing::Test {
 protected:
  void load(std::vector<uint8_t> bytes) {
    original_ = std::move(bytes);
    ASSERT_TRUE(message_.decode(original_));
  }
  // Writes `rw`'s message into out_ and decodes it into again_.
  void writeAndDecode(const Rewriter& rw) {
    out_ = written(rw);
    auto ok = again_.decode(out_);
    ASSERT_TRUE(ok) << describe(ok.error());
  }
  std::vector<uint8_t> original_, out_;
  Message message_, again_;
};

TEST_F(GtpV2RewriteBuilt, FTeidIpv6ToIpv4InsideABearerContext) {
  load(build(MessageType::kCreateSessionRequest, [](Builder& b) {
    addSessionHead(b);
    b.add(Apn{apnText("internet")});
    addBearer(b, 5, kSgwUV6);
    b.add(Recovery{7});
  }));
  const Ie* bearer = message_.find(IeType::kBearerContext);
  const Ie* fteid = message_.findChild(*bearer, IeType::kFTeid, 2);
  ASSERT_NE(fteid, nullptr);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.replace(*fteid, kSgwUV4));
  writeAndDecode(rw);
  EXPECT_EQ(toHex(out_), toHex(build(MessageType::kCreateSessionRequest, [](Builder& b) {
              addSessionHead(b);
              b.add(Apn{apnText("internet")});
              addBearer(b, 5, kSgwUV4);
              b.add(Recovery{7});
            })));

  EXPECT_EQ(out_.size(), original_.size() - 12);  // 16 octets of IPv6 for 4 of IPv4
  EXPECT_EQ(again_.header().length, message_.header().length - 12);
  const Ie* bearer2 = again_.find(IeType::kBearerContext);
  ASSERT_NE(bearer2, nullptr);
  EXPECT_EQ(bearer2->length, bearer->length - 12);
  const Ie* fteid2 = again_.findChild(*bearer2, IeType::kFTeid, 2);
  ASSERT_NE(fteid2, nullptr);
  EXPECT_EQ(fteid2->length, 9);
  auto f = read<FTeid>(again_, *fteid2);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->interface_type, 4);
  EXPECT_EQ(f->teid, 0x44444444u);
  EXPECT_EQ(f->ipv4, kSgwV4);
  EXPECT_FALSE(f->ipv6);
  // Header fields as received.
  EXPECT_EQ(again_.header().teid, kTeid);
  EXPECT_EQ(again_.header().sequence_number, kSequence);
  EXPECT_TRUE(checkMandatory(again_));
}

// PDN Connection > Bearer Context (a Context Response, §7.3.6): both grouped
// lengths follow an edit two levels down.
TEST_F(GtpV2RewriteBuilt, NestedGroupsBothGetTheirLengthRecomputed) {
  auto pdn = [](Builder& b, const FTeid& sgw_u, bool charging_id) {
    b.add(CauseIe{16, false, false, false, std::nullopt});
    b.beginGrouped(IeType::kPdnConnection);
    b.add(Apn{apnText("internet")});
    b.beginGrouped(IeType::kBearerContext);
    b.add(Ebi{5});
    b.add(sgw_u, 2);
    if (charging_id) b.add(ChargingId{0x01020304});
    b.endGrouped();
    b.add(Ambr{1000, 2000});
    b.endGrouped();
  };
  load(build(MessageType::kContextResponse, [&](Builder& b) { pdn(b, kSgwUV6, false); }));
  const Ie* outer = message_.find(IeType::kPdnConnection);
  const Ie* inner = message_.findChild(*outer, IeType::kBearerContext);
  ASSERT_NE(inner, nullptr);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.replace(*message_.findChild(*inner, IeType::kFTeid, 2), kSgwUV4));
  ASSERT_TRUE(rw.appendTo(*inner, ChargingId{0x01020304}));
  writeAndDecode(rw);
  EXPECT_EQ(toHex(out_), toHex(build(MessageType::kContextResponse,
                                    [&](Builder& b) { pdn(b, kSgwUV4, true); })));
  const Ie* outer2 = again_.find(IeType::kPdnConnection);
  ASSERT_NE(outer2, nullptr);
  EXPECT_EQ(outer2->length, outer->length - 12 + 8);
  const Ie* inner2 = again_.findChild(*outer2, IeType::kBearerContext);
  ASSERT_NE(inner2, nullptr);
  EXPECT_EQ(inner2->length, inner->length - 12 + 8);
}

TEST_F(GtpV2RewriteBuilt, SeveralEditsAtOnce) {
  load(build(MessageType::kCreateSessionRequest, [](Builder& b) {
    addSessionHead(b);
    b.add(Apn{apnText("internet")});
    b.add(Paa{3, Ipv4{{10, 45, 0, 2}}, 64, kSgwV6});  // IPv4v6: 22 octets
    addBearer(b, 5, kSgwUV6);
    addBearer(b, 6, kSgwUV6);
    b.add(Recovery{7});
  }));
  const Ie* first = message_.findNth(IeType::kBearerContext, 0, 0);
  const Ie* second = message_.findNth(IeType::kBearerContext, 0, 1);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.remove(*message_.find(IeType::kMsisdn)));
  ASSERT_TRUE(rw.replace(*message_.find(IeType::kApn), Apn{apnText("ims.mnc001.mcc001.gprs")}));
  ASSERT_TRUE(rw.replace(*message_.find(IeType::kPaa), Paa{1, Ipv4{{10, 45, 0, 2}}, 0, {}}));
  ASSERT_TRUE(rw.replace(*message_.findChild(*first, IeType::kFTeid, 2), kSgwUV4));
  ASSERT_TRUE(rw.remove(*message_.findChild(*second, IeType::kFTeid, 2)));
  ASSERT_TRUE(rw.appendTo(*second, ChargingId{0xcafe}));
  ASSERT_TRUE(rw.append(SelectionMode{1}));
  ASSERT_TRUE(rw.append(ChargingCharacteristics{0x0800}));
  EXPECT_EQ(rw.editCount(), 8u);
  writeAndDecode(rw);
  EXPECT_EQ(toHex(out_), toHex(build(MessageType::kCreateSessionRequest, [](Builder& b) {
              b.add(Imsi{digits("001010123456789")});
              b.add(RatType{6});
              b.add(FTeid{10, 0x11111111, kMmeV4, std::nullopt});
              b.add(FTeid{7, 0, kPgwV4, std::nullopt}, 1);
              b.add(Apn{apnText("ims.mnc001.mcc001.gprs")});
              b.add(Paa{1, Ipv4{{10, 45, 0, 2}}, 0, std::nullopt});
              addBearer(b, 5, kSgwUV4);
              b.beginGrouped(IeType::kBearerContext);
              b.add(Ebi{6});
              b.add(bearerQos());
              b.add(ChargingId{0xcafe});
              b.endGrouped();
              b.add(Recovery{7});
              b.add(SelectionMode{1});
              b.add(ChargingCharacteristics{0x0800});
            })));
  EXPECT_TRUE(checkMandatory(again_));
  // write() is const: a second call gives the same octets.
  EXPECT_EQ(written(rw), out_);
}

// A grouped IE replaced as a whole: the value is its new content.
TEST_F(GtpV2RewriteBuilt, GroupedIeReplacedByNewChildren) {
  load(build(MessageType::kModifyBearerRequest, [](Builder& b) { addBearer(b, 5, kSgwUV6); }));
  const auto children = fromHex(
      "49" "0001" "00" "07"   // EBI 7
      "5e" "0004" "00" "00000009");  // Charging ID 9
  Rewriter rw(message_);
  ASSERT_TRUE(rw.replace(message_.ie(0), children));
  writeAndDecode(rw);
  ASSERT_EQ(again_.ieCount(), 3u);
  EXPECT_EQ(again_.ie(0).length, children.size());
  EXPECT_EQ(read<Ebi>(again_, again_.ie(1))->value, 7);
  EXPECT_EQ(read<ChargingId>(again_, again_.ie(2))->value, 9u);
}

// Unknown IEs (and known ones not edited) are copied as received, spare bits
// included, in their order, whatever changes around them.
TEST_F(GtpV2RewriteBuilt, UnknownIesKeptByteForByteAndInOrder) {
  const auto a = fromHex("00112233445566");
  const auto b = fromHex("ff");
  ASSERT_EQ(ieTypeInfo(kUnknownA).kind, IeKind::kUnknown);
  ASSERT_EQ(ieTypeInfo(kUnknownB).kind, IeKind::kUnknown);
  auto bytes = build(MessageType::kCreateSessionRequest, [&](Builder& bld) {
    bld.addRaw(kUnknownA, 1, a);
    addSessionHead(bld);
    bld.addRaw(kUnknownB, 0, b);
    bld.beginGrouped(IeType::kBearerContext);
    bld.add(Ebi{5});
    bld.addRaw(kUnknownB, 2, a);
    bld.add(kSgwUV6, 2);
    bld.addRaw(kUnknownA, 0, b);
    bld.endGrouped();
    bld.addRaw(kUnknownA, 4, b);
  });
  {
    Message m;
    ASSERT_TRUE(m.decode(bytes));
    for (const Ie& ie : m.ies()) {  // CR/spare bits a later release might set
      if (ie.type == kUnknownA || ie.type == kUnknownB) bytes[ie.offset + 3] |= 0xd0;
    }
  }
  load(bytes);
  std::vector<std::vector<uint8_t>> unknown_before;
  for (const Ie& ie : message_.ies()) {
    if (ie.type == kUnknownA || ie.type == kUnknownB) {
      unknown_before.emplace_back(message_.raw(ie).begin(), message_.raw(ie).end());
    }
  }
  ASSERT_EQ(unknown_before.size(), 5u);

  const Ie* bearer = message_.find(IeType::kBearerContext);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.remove(*message_.find(IeType::kMsisdn)));
  ASSERT_TRUE(rw.replace(*message_.findChild(*bearer, IeType::kFTeid, 2), kSgwUV4));
  ASSERT_TRUE(rw.appendTo(*bearer, ChargingId{1}));
  ASSERT_TRUE(rw.append(Recovery{3}));
  writeAndDecode(rw);

  std::vector<std::vector<uint8_t>> unknown_after;
  std::vector<uint8_t> order;
  for (const Ie& ie : again_.ies()) {
    order.push_back(ie.type);
    if (ie.type == kUnknownA || ie.type == kUnknownB) {
      unknown_after.emplace_back(again_.raw(ie).begin(), again_.raw(ie).end());
    }
  }
  EXPECT_EQ(unknown_after, unknown_before);
  EXPECT_EQ(order, (std::vector<uint8_t>{kUnknownA, 1, 82, 87, 87, kUnknownB, 93, 73, kUnknownB,
                                         87, kUnknownA, 94, kUnknownA, 3}));
  // Untouched known IEs are the received octets too.
  for (IeType t : {IeType::kImsi, IeType::kRatType}) {
    const auto before = message_.raw(*message_.find(t));
    const auto after = again_.raw(*again_.find(t));
    EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin(), after.end()));
  }
}

// Only the message the Rewriter was given is written, without the P flag: a
// piggybacked message is the worker's to relay (or not) separately.
TEST(GtpV2RewritePiggyback, FlagClearedAndOnlyTheMessageWritten) {
  std::array<uint8_t, 512> buf{};
  Builder b(buf);
  b.begin(MessageType::kCreateSessionResponse, kTeid, 0x000105);
  b.add(CauseIe{16, false, false, false, std::nullopt});
  b.add(FTeid{7, 0x33333333, kPgwV4, std::nullopt}, 1);
  b.beginPiggybacked(MessageType::kCreateBearerRequest, kTeid + 1, 0x000106);
  b.add(Ebi{5});
  auto bytes = b.finish();
  ASSERT_TRUE(bytes);
  const std::vector<uint8_t> datagram(bytes->begin(), bytes->end());
  Datagram d;
  ASSERT_TRUE(d.decode(datagram));
  ASSERT_TRUE(d.message.header().piggyback());
  const std::size_t first_size = d.message.header().messageSize();

  {  // No edit: the first message, P cleared.
    Rewriter rw(d.message);
    auto expected = std::vector<uint8_t>(datagram.begin(), datagram.begin() + first_size);
    expected[0] &= static_cast<uint8_t>(~kFlagPiggyback);
    EXPECT_EQ(toHex(written(rw)), toHex(expected));
  }
  {  // An edit: still one message, which decodes on its own (P=0 means the
     // datagram must end with it).
    Rewriter rw(d.message);
    ASSERT_TRUE(rw.replace(*d.message.find(IeType::kFTeid, 1),
                           FTeid{7, 0x33333333, kPgwV4, kSgwV6}));
    const auto out = written(rw);
    EXPECT_EQ(out.size(), first_size + 16);
    Message m;
    ASSERT_TRUE(m.decode(out));
    EXPECT_FALSE(m.header().piggyback());
    EXPECT_EQ(m.messageType(), MessageType::kCreateSessionResponse);
    EXPECT_EQ(m.header().sequence_number, 0x000105u);
    EXPECT_EQ(read<FTeid>(m, *m.find(IeType::kFTeid, 1))->ipv6, kSgwV6);
  }
  {  // The piggybacked message can be rewritten by itself.
    Rewriter rw(d.piggybacked);
    const auto out = written(rw);
    EXPECT_EQ(toHex(out), toHex(std::span(datagram).subspan(first_size)));
  }
}

// ---------------------------------------------------------------------------
// Third-party messages (gtpv2.jsonl).

const std::vector<testing::JsonRecord>& records() {
  static const auto all = testing::loadVectors("gtpv2.jsonl");
  return all;
}

std::vector<uint8_t> vectorBytes(int line) {
  return records().at(static_cast<std::size_t>(line - 1)).bytes();
}

// Every record that is a whole message the codec decodes.
template <class Check>
std::size_t forEachMessage(Check check) {
  std::size_t n = 0;
  for (const auto& r : records()) {
    if (r.json().value("form", std::string()) == "ie_payload_only") continue;
    const auto bytes = r.bytes();
    Message m;
    if (!m.decode(bytes)) continue;
    SCOPED_TRACE(r.name() + " (gtpv2.jsonl line " + std::to_string(r.line) + ")");
    check(r, m);
    ++n;
  }
  return n;
}

TEST(GtpV2RewriteAllVectors, NoEditGivesTheReceivedBytes) {
  const std::size_t n = forEachMessage([](const testing::JsonRecord&, const Message& m) {
    Rewriter rw(m);
    EXPECT_EQ(toHex(written(rw)), toHex(m.bytes()));
  });
  EXPECT_GE(n, 70u);  // 83 records, 4 of them negative, 1 bare IEs
}

class GtpV2RewriteVectors : public GtpV2RewriteBuilt {
 protected:
  void loadLine(int line) { load(vectorBytes(line)); }
};

// gtpv2.jsonl line 17 (ngic-rtc capture): Create Session Request whose APN
// is "apn1" (5 octets).
TEST_F(GtpV2RewriteVectors, TopLevelApnReplacedByALongerOne) {
  loadLine(17);
  const Ie* apn = message_.find(IeType::kApn);
  ASSERT_NE(apn, nullptr);
  ASSERT_EQ(read<Apn>(message_, *apn)->text.view(), "apn1");
  Rewriter rw(message_);
  ASSERT_TRUE(rw.replace(*apn, Apn{apnText("internet.mnc001.mcc001.gprs")}));
  writeAndDecode(rw);
  constexpr std::size_t kGrowth = 28 - 5;
  ASSERT_EQ(out_.size(), original_.size() + kGrowth);
  EXPECT_EQ(again_.header().length, message_.header().length + kGrowth);
  EXPECT_EQ(read<Apn>(again_, *again_.find(IeType::kApn))->text.view(),
            "internet.mnc001.mcc001.gprs");
  // Before the APN nothing moved; after it everything moved by kGrowth.
  ASSERT_EQ(again_.ieCount(), message_.ieCount());
  for (std::size_t i = 0; i < message_.ieCount(); ++i) {
    if (&message_.ie(i) == apn) continue;
    const std::size_t shift = message_.ie(i).offset > apn->offset ? kGrowth : 0;
    EXPECT_EQ(again_.ie(i).offset, message_.ie(i).offset + shift) << "IE " << i;
    EXPECT_EQ(toHex(again_.raw(again_.ie(i))), toHex(message_.raw(message_.ie(i)))) << "IE " << i;
  }
  EXPECT_TRUE(checkMandatory(again_));
}

TEST_F(GtpV2RewriteVectors, RemoveATopLevelIe) {
  loadLine(17);
  const Ie* mei = message_.find(IeType::kMei);
  ASSERT_NE(mei, nullptr);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.remove(*mei));
  writeAndDecode(rw);
  const std::size_t removed = kIeHeaderSize + mei->length;
  auto expected = original_;
  expected.erase(expected.begin() + mei->offset, expected.begin() + mei->offset + removed);
  store16(expected.data() + 2, static_cast<uint16_t>(message_.header().length - removed));
  EXPECT_EQ(toHex(out_), toHex(expected));
  EXPECT_EQ(again_.find(IeType::kMei), nullptr);
  EXPECT_EQ(again_.ieCount(), message_.ieCount() - 1);
  EXPECT_TRUE(checkMandatory(again_));
}

// gtpv2.jsonl line 50 (go-gtp): two Bearer Contexts {EBI, Bearer QoS}.
TEST_F(GtpV2RewriteVectors, RemoveAnIeInsideAGroup) {
  loadLine(50);
  const Ie* first = message_.findNth(IeType::kBearerContext, 0, 0);
  const Ie* second = message_.findNth(IeType::kBearerContext, 0, 1);
  const Ie* qos = message_.findChild(*second, IeType::kBearerQos);
  ASSERT_NE(qos, nullptr);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.remove(*qos));
  writeAndDecode(rw);
  const std::size_t removed = kIeHeaderSize + qos->length;  // 26
  EXPECT_EQ(out_.size(), original_.size() - removed);
  EXPECT_EQ(again_.header().length, message_.header().length - removed);
  const Ie* first2 = again_.findNth(IeType::kBearerContext, 0, 0);
  const Ie* second2 = again_.findNth(IeType::kBearerContext, 0, 1);
  ASSERT_NE(second2, nullptr);
  EXPECT_EQ(second2->length, second->length - removed);
  EXPECT_EQ(again_.findChild(*second2, IeType::kBearerQos), nullptr);
  EXPECT_EQ(read<Ebi>(again_, *again_.findChild(*second2, IeType::kEbi))->value, 6);
  // The first Bearer Context is untouched.
  EXPECT_EQ(toHex(again_.raw(*first2)), toHex(message_.raw(*first)));
  // Its Bearer QoS was mandatory (Table 7.2.1-2): the check names it.
  const auto check = checkMandatory(again_);
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().code, Errc::kMandatoryIeMissing);
  EXPECT_EQ(check.error().ie_type, static_cast<uint8_t>(IeType::kBearerQos));
}

TEST_F(GtpV2RewriteVectors, RemoveAGroupedIeWithItsChildren) {
  loadLine(50);
  const Ie* first = message_.findNth(IeType::kBearerContext, 0, 0);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.remove(*first));
  writeAndDecode(rw);
  EXPECT_EQ(again_.ieCount(), message_.ieCount() - 3);  // the group, its EBI and Bearer QoS
  EXPECT_EQ(out_.size(), original_.size() - kIeHeaderSize - first->length);
  const Ie* left = again_.find(IeType::kBearerContext);
  ASSERT_NE(left, nullptr);
  EXPECT_EQ(read<Ebi>(again_, *again_.findChild(*left, IeType::kEbi))->value, 6);
}

TEST_F(GtpV2RewriteVectors, AppendAtTopLevelAndInsideAGroup) {
  loadLine(50);
  ASSERT_EQ(message_.find(IeType::kChargingCharacteristics), nullptr);
  const Ie* second = message_.findNth(IeType::kBearerContext, 0, 1);
  Rewriter rw(message_);
  ASSERT_TRUE(rw.append(ChargingCharacteristics{0x0800}));
  ASSERT_TRUE(rw.appendTo(*second, FTeid{4, 0x01020304, kSgwV4, std::nullopt}, 2));
  writeAndDecode(rw);
  // The received octets with the Bearer Context's Length grown by the F-TEID
  // (4 + 9) and both IEs inserted where they go.
  auto expected = original_;
  ASSERT_EQ(second->offset + kIeHeaderSize + second->length, original_.size());  // the last IE
  const auto fteid = fromHex("57" "0009" "02" "84" "01020304" "c000021e");  // V4, S5/S8-U SGW
  const auto cc = fromHex("5f" "0002" "00" "0800");
  expected.insert(expected.end(), fteid.begin(), fteid.end());
  expected.insert(expected.end(), cc.begin(), cc.end());
  store16(expected.data() + second->offset + 1, static_cast<uint16_t>(second->length + 13));
  store16(expected.data() + 2, static_cast<uint16_t>(message_.header().length + 13 + 6));
  EXPECT_EQ(toHex(out_), toHex(expected));
  EXPECT_EQ(again_.ie(again_.ieCount() - 1).ieType(), IeType::kChargingCharacteristics);
  const Ie* second2 = again_.findNth(IeType::kBearerContext, 0, 1);
  EXPECT_EQ(second2->length, second->length + 13);
  EXPECT_EQ(read<FTeid>(again_, *again_.findChild(*second2, IeType::kFTeid, 2))->ipv4, kSgwV4);
  EXPECT_TRUE(checkMandatory(again_));
}

// Length-changing edits of the kind the worker makes keep a message that
// passed the mandatory-IE check passing it: every F-TEID changes address
// family, the APN grows, a Charging Characteristics IE is added at the top
// and a Charging ID in the first Bearer Context.
TEST(GtpV2RewriteAllVectors, ValidMessagesStayValid) {
  std::size_t valid = 0;
  forEachMessage([&](const testing::JsonRecord&, const Message& m) {
    if (!checkMandatory(m)) return;
    ++valid;
    Rewriter rw(m);
    std::vector<FTeid> flipped;
    for (const Ie& ie : m.ies()) {
      if (ie.ieType() != IeType::kFTeid) continue;
      auto f = read<FTeid>(m, ie);
      if (!f) continue;
      FTeid g = *f;
      g.ipv4 = f->ipv4 ? std::nullopt : std::optional<Ipv4>(kSgwV4);
      g.ipv6 = f->ipv4 ? std::optional<Ipv6>(kSgwV6) : std::nullopt;
      if (rw.replace(ie, g)) flipped.push_back(g);
    }
    if (const Ie* apn = m.find(IeType::kApn)) {
      EXPECT_TRUE(rw.replace(*apn, Apn{apnText("rewritten.apn.mnc001.mcc001.gprs")}));
    }
    rw.append(ChargingCharacteristics{0x0400});
    if (const Ie* bearer = m.find(IeType::kBearerContext)) rw.appendTo(*bearer, ChargingId{42});

    const auto out = written(rw);
    Message again;
    auto ok = again.decode(out);
    ASSERT_TRUE(ok) << describe(ok.error());
    auto check = checkMandatory(again);
    EXPECT_TRUE(check) << describe(check.error());
    std::size_t n = 0;
    for (const Ie& ie : again.ies()) {
      if (ie.ieType() != IeType::kFTeid || n >= flipped.size()) continue;
      auto f = read<FTeid>(again, ie);
      if (!f) continue;  // malformed as received, so not flipped
      EXPECT_EQ(f->ipv4, flipped[n].ipv4);
      EXPECT_EQ(f->ipv6, flipped[n].ipv6);
      ++n;
    }
    EXPECT_EQ(n, flipped.size());
  });
  EXPECT_GE(valid, 40u);
}

// ---------------------------------------------------------------------------
// Random edits on every vector against a model (the fuzz target's invariant,
// made deterministic): the output decodes to the IE tree the model predicts,
// with the received header, and the Rewriter accepts exactly the edits the
// model says do not overlap.

struct ModelEdit {
  enum Kind { kReplace, kRemove, kAppend } kind;
  std::size_t target;  // IE index; for kAppend the parent, or kNone for the top level
  uint8_t type = 0, instance = 0;
  std::vector<uint8_t> value;
};
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// One IE of a decoded tree: depth, type, octet 4, and the value of a leaf.
struct Node {
  std::size_t depth;
  uint8_t type, spare_instance;
  std::vector<uint8_t> value;
  friend bool operator==(const Node&, const Node&) = default;
};

void PrintTo(const Node& n, std::ostream* os) {
  *os << "{depth " << n.depth << ", type " << int(n.type) << ", octet4 " << int(n.spare_instance)
      << ", " << toHex(n.value) << "}";
}

std::vector<Node> treeOf(const Message& m) {
  std::vector<Node> out;
  std::vector<std::size_t> open;  // ends of the enclosing groups
  for (std::size_t i = 0; i < m.ieCount(); ++i) {
    while (!open.empty() && open.back() <= i) open.pop_back();
    const Ie& ie = m.ie(i);
    std::vector<uint8_t> value;
    if (!isGroupedIeType(ie.type)) value.assign(m.value(ie).begin(), m.value(ie).end());
    out.push_back({open.size(), ie.type, ie.spare_instance, std::move(value)});
    if (isGroupedIeType(ie.type)) open.push_back(ie.end);
  }
  return out;
}

bool inside(const Message& m, std::size_t i, std::size_t group) {
  return group <= i && i < m.ie(group).end;
}

// The rule of rewrite.h, restated: a replace or remove must not overlap
// another (same IE, an ancestor or a descendant replaced or removed, an append
// into it); an append must not go into a replaced or removed IE.
bool modelAccepts(const Message& m, const std::vector<ModelEdit>& edits, const ModelEdit& e) {
  if (edits.size() == kMaxEdits || e.instance > 15) return false;
  for (const ModelEdit& x : edits) {
    if (e.kind == ModelEdit::kAppend) {
      if (e.target != kNone && x.kind != ModelEdit::kAppend && inside(m, e.target, x.target))
        return false;
    } else if (x.kind == ModelEdit::kAppend) {
      if (x.target != kNone && inside(m, x.target, e.target)) return false;
    } else if (inside(m, e.target, x.target) || inside(m, x.target, e.target)) {
      return false;
    }
  }
  return true;
}

void modelTree(const Message& m, std::size_t begin, std::size_t end, std::size_t parent,
               std::size_t depth, const std::vector<ModelEdit>& edits, std::vector<Node>& out) {
  for (std::size_t i = begin; i < end; i = m.ie(i).end) {
    const Ie& ie = m.ie(i);
    const ModelEdit* edit = nullptr;
    for (const auto& e : edits) {
      if (e.kind != ModelEdit::kAppend && e.target == i) edit = &e;
    }
    if (edit != nullptr && edit->kind == ModelEdit::kRemove) continue;
    if (edit != nullptr && !isGroupedIeType(ie.type)) {
      out.push_back({depth, ie.type, ie.spare_instance, edit->value});
      continue;
    }
    // A grouped IE is only ever replaced by its own content (see below), so
    // it reads back with its children as received.
    static const std::vector<ModelEdit> kNoEdits;
    const std::vector<ModelEdit>& inner = edit != nullptr ? kNoEdits : edits;
    std::vector<uint8_t> value;
    if (!isGroupedIeType(ie.type)) value.assign(m.value(ie).begin(), m.value(ie).end());
    out.push_back({depth, ie.type, ie.spare_instance, std::move(value)});
    if (isGroupedIeType(ie.type)) modelTree(m, i + 1, ie.end, i, depth + 1, inner, out);
  }
  for (const auto& e : edits) {
    if (e.kind == ModelEdit::kAppend && e.target == parent)
      out.push_back({depth, e.type, e.instance, e.value});
  }
}

TEST(GtpV2RewriteAllVectors, RandomEditsGiveWhatTheModelPredicts) {
  // Leaf types only: the decoder would read a random value of a grouped type
  // as children.
  const uint8_t kAppendTypes[] = {3, 95, 128, 255, kUnknownA, kUnknownB};
  std::size_t accepted = 0, refused = 0;
  forEachMessage([&](const testing::JsonRecord& r, const Message& m) {
    std::mt19937 rng(static_cast<uint32_t>(r.line));
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    for (int round = 0; round < 40; ++round) {
      Rewriter rw(m);
      std::vector<ModelEdit> edits;
      const std::size_t tries = 1 + pick(24);
      for (std::size_t t = 0; t < tries; ++t) {
        ModelEdit e{static_cast<ModelEdit::Kind>(pick(4) % 3), kNone, 0, 0, {}};
        e.value.resize(pick(40));
        for (auto& o : e.value) o = static_cast<uint8_t>(rng());
        bool ok = false;
        if (e.kind == ModelEdit::kAppend) {
          e.type = kAppendTypes[pick(std::size(kAppendTypes))];
          e.instance = static_cast<uint8_t>(pick(17));  // 16 must be refused
          std::vector<std::size_t> groups;
          for (std::size_t i = 0; i < m.ieCount(); ++i) {
            if (isGroupedIeType(m.ie(i).type)) groups.push_back(i);
          }
          if (!groups.empty() && pick(2) == 0) e.target = groups[pick(groups.size())];
          ok = e.target == kNone
                   ? rw.append(static_cast<IeType>(e.type), e.instance, e.value)
                   : rw.appendTo(m.ie(e.target), static_cast<IeType>(e.type), e.instance, e.value);
        } else {
          if (m.ieCount() == 0) continue;
          e.target = pick(m.ieCount());
          if (e.kind == ModelEdit::kReplace && isGroupedIeType(m.ie(e.target).type)) {
            e.value.assign(m.value(m.ie(e.target)).begin(), m.value(m.ie(e.target)).end());
          }
          ok = e.kind == ModelEdit::kRemove ? rw.remove(m.ie(e.target))
                                            : rw.replace(m.ie(e.target), e.value);
        }
        ASSERT_EQ(ok, modelAccepts(m, edits, e)) << "round " << round << " edit " << t;
        if (ok) edits.push_back(std::move(e));
        (ok ? accepted : refused)++;
      }
      ASSERT_EQ(rw.editCount(), edits.size());
      const auto out = written(rw);
      Message again;
      auto decoded = again.decode(out);
      ASSERT_TRUE(decoded) << "round " << round << ": " << describe(decoded.error());
      std::vector<Node> want;
      modelTree(m, 0, m.ieCount(), kNone, 0, edits, want);
      ASSERT_EQ(treeOf(again), want) << "round " << round;
      // Header: as received but for the Length (and P, never set here).
      EXPECT_EQ(toHex(std::span(out).first(2)), toHex(m.bytes().first(2)));
      const std::size_t h = m.header().headerSize();
      EXPECT_EQ(toHex(std::span(out).subspan(4, h - 4)), toHex(m.bytes().subspan(4, h - 4)));
    }
  });
  // Both outcomes exercised many times.
  EXPECT_GT(accepted, 1000u);
  EXPECT_GT(refused, 1000u);
}

// ---------------------------------------------------------------------------
// Errors and refusals.

class GtpV2RewriteLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = build(MessageType::kModifyBearerRequest, [](Builder& b) {
      addBearer(b, 5, kSgwUV6);
      b.add(Recovery{7});
    });
    ASSERT_TRUE(m_.decode(bytes_));
  }
  std::vector<uint8_t> bytes_;
  Message m_;
};

TEST_F(GtpV2RewriteLimits, OutputTooSmall) {
  Rewriter rw(m_);
  ASSERT_TRUE(rw.replace(*m_.findChild(m_.ie(0), IeType::kFTeid, 2), kSgwUV4));
  const std::size_t size = bytes_.size() - 12;
  for (std::size_t n : {std::size_t{0}, std::size_t{4}, std::size_t{12}, std::size_t{20}, size - 1}) {
    std::vector<uint8_t> out(n);  // exactly n octets: ASan sees any write past them
    auto r = rw.write(out);
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, Errc::kBufferTooSmall) << n;
  }
  std::vector<uint8_t> out(size);
  auto r = rw.write(out);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, size);
}

// The header's Length counts the octets after the first 4 (§5.5.1) and each
// IE's its value (§8.2): 16 bits each.
TEST(GtpV2RewriteLengthLimits, MessageLengthUpTo65535) {
  const auto bytes = fromHex(
      "40" "01" "0009" "000001" "00" "03" "0001" "00" "07");  // Echo Request, T=0
  Message m;
  ASSERT_TRUE(m.decode(bytes));
  // Length = 4 (sequence, spare) + 5 (Recovery) + 4 + value.
  const std::vector<uint8_t> fits(0xffff - 13, 0x5a), over(0xffff - 12, 0x5a);
  std::vector<uint8_t> out(0x20000);
  {
    Rewriter rw(m);
    ASSERT_TRUE(rw.append(IeType::kPrivateExtension, 0, fits));
    auto r = rw.write(out);
    ASSERT_TRUE(r) << describe(r.error());
    EXPECT_EQ(*r, 4u + 0xffff);
    Message again;
    ASSERT_TRUE(again.decode(std::span(out).first(*r)));
    EXPECT_EQ(again.header().length, 0xffff);
  }
  {
    Rewriter rw(m);
    ASSERT_TRUE(rw.append(IeType::kPrivateExtension, 0, over));
    auto r = rw.write(out);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), (Error{Errc::kInvalidArgument, 0, 0, 0}));
  }
}

TEST_F(GtpV2RewriteLimits, IeValueOver65535) {
  const std::vector<uint8_t> big(0x10000, 0);
  std::vector<uint8_t> out(0x30000);
  {
    Rewriter rw(m_);
    ASSERT_TRUE(rw.append(IeType::kPrivateExtension, 3, big));
    auto r = rw.write(out);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(r.error().ie_type, 255);
    EXPECT_EQ(r.error().ie_instance, 3);
  }
  {  // Children that fit one by one, but not in their group's Length.
    Rewriter rw(m_);
    ASSERT_TRUE(rw.appendTo(m_.ie(0), IeType::kPrivateExtension, 0, std::span(big).first(0xffff)));
    auto r = rw.write(out);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), (Error{Errc::kInvalidArgument, 93, 0, m_.ie(0).offset}));
  }
}

TEST_F(GtpV2RewriteLimits, OverlappingOrForeignEditsAreRefused) {
  const Ie& bearer = m_.ie(0);
  const Ie& fteid = *m_.findChild(bearer, IeType::kFTeid, 2);
  const Ie& recovery = *m_.find(IeType::kRecovery);
  const auto v = fromHex("01");
  Message other;
  ASSERT_TRUE(other.decode(bytes_));

  Rewriter rw(m_);
  EXPECT_FALSE(rw.remove(other.ie(0)));  // an IE of another Message
  EXPECT_FALSE(rw.appendTo(recovery, IeType::kRecovery, 0, v));  // not grouped
  EXPECT_FALSE(rw.append(IeType::kRecovery, 16, v));            // instance is 4 bits
  EXPECT_FALSE(rw.replace(fteid, Recovery{1}));                  // typed value of another type
  ASSERT_TRUE(rw.replace(fteid, kSgwUV4));
  EXPECT_FALSE(rw.replace(fteid, v));  // already replaced
  EXPECT_FALSE(rw.remove(fteid));
  EXPECT_FALSE(rw.remove(bearer));  // holds an edit
  EXPECT_FALSE(rw.replace(bearer, v));
  ASSERT_TRUE(rw.remove(recovery));
  EXPECT_EQ(rw.editCount(), 2u);

  Rewriter rw2(m_);
  ASSERT_TRUE(rw2.remove(bearer));
  EXPECT_FALSE(rw2.replace(fteid, kSgwUV4));  // inside a removed group
  EXPECT_FALSE(rw2.appendTo(bearer, Recovery{1}));
  EXPECT_TRUE(rw2.append(Recovery{1}));
  EXPECT_EQ(rw2.editCount(), 2u);

  Rewriter rw3(m_);
  ASSERT_TRUE(rw3.appendTo(bearer, Recovery{1}));
  EXPECT_FALSE(rw3.remove(bearer));  // an append into it
  EXPECT_TRUE(rw3.remove(fteid));    // a sibling of the append: fine
}

TEST_F(GtpV2RewriteLimits, AtMostKMaxEdits) {
  Rewriter rw(m_);
  for (std::size_t i = 0; i < kMaxEdits; ++i) ASSERT_TRUE(rw.append(Recovery{1})) << i;
  EXPECT_FALSE(rw.append(Recovery{1}));
  EXPECT_FALSE(rw.remove(m_.ie(0)));
  EXPECT_EQ(rw.editCount(), kMaxEdits);
  const auto out = written(rw);
  EXPECT_EQ(out.size(), bytes_.size() + kMaxEdits * 5);
}

// Typed values are encoded into the Rewriter's own storage; once it is full
// they are refused, and refused values take no storage.
TEST_F(GtpV2RewriteLimits, TypedValuesNeedRoomInTheRewriter) {
  const std::vector<uint8_t> octets(kRewriteScratchSize - 1, 0x11);
  Rewriter rw(m_);
  EXPECT_FALSE(rw.append(Pco{octets}, 16));  // refused: takes no room
  ASSERT_TRUE(rw.append(Pco{octets}));
  EXPECT_FALSE(rw.append(ChargingCharacteristics{1}));  // 2 octets, 1 left
  ASSERT_TRUE(rw.append(Recovery{1}));  // the last octet
  EXPECT_FALSE(rw.append(Recovery{2}));
  const std::vector<uint8_t> raw = fromHex("02");
  EXPECT_TRUE(rw.append(IeType::kRecovery, 0, raw));  // raw spans take none
  Message again;
  const auto out = written(rw);
  ASSERT_TRUE(again.decode(out));
  EXPECT_EQ(toHex(again.value(*again.findNth(IeType::kRecovery, 0, 1))), "01");
  EXPECT_EQ(toHex(again.value(*again.findNth(IeType::kRecovery, 0, 2))), "02");
}

// A Message whose decode() failed keeps a partial index (here after a
// successful decode of a similar message, so stale entries remain): writing
// it would relay a truncated message, so write() refuses.
TEST(GtpV2RewriteUndecoded, WriteRefusesAMessageThatDidNotDecode) {
  Message m;
  const auto good = build(MessageType::kModifyBearerRequest, [](Builder& b) {
    b.add(Recovery{7});
    addBearer(b, 5, kSgwUV6);
  });
  std::vector<uint8_t> out(256);
  // The Bearer Context (after header and Recovery) overruns the message, or
  // its EBI overruns the Bearer Context.
  for (const std::size_t length_octet : {12u + 5u + 2u, 12u + 5u + 4u + 2u}) {
    ASSERT_TRUE(m.decode(good));
    auto bad = good;
    bad[length_octet] = 0xff;
    ASSERT_FALSE(m.decode(bad)) << length_octet;
    Rewriter rw(m);
    auto r = rw.write(out);
    ASSERT_FALSE(r) << length_octet;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  }
  ASSERT_FALSE(m.decode(fromHex("48")));  // not even a header
  Rewriter rw(m);
  auto r = rw.write(out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
}

}  // namespace
}  // namespace gtpcp::gtp::v2
