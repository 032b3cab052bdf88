// The change records a worker writes for Redis (workers/lib/persist.h): one
// per change of a session's state, with the slot's snapshot and the raw IEs
// the record keeps, read back as the persister reads them.
#include "workers/lib/persist.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/workers/proxy_fixture.h"

namespace gtpcp::worker::test {
namespace {

struct Record {
  ChangeKind kind;
  uint16_t partition;
  std::vector<uint8_t> bytes;
  ChangeView view() const {
    ChangeView v;
    EXPECT_TRUE(ChangeView::parse(bytes, v));
    return v;
  }
  // Attribute -> (ebi, value) in order.
  std::vector<std::tuple<Attribute, uint8_t, std::vector<uint8_t>>> attributes() const {
    std::vector<std::tuple<Attribute, uint8_t, std::vector<uint8_t>>> out;
    EXPECT_TRUE(view().forEach([&](Attribute a, uint8_t ebi, std::span<const uint8_t> v) {
      out.emplace_back(a, ebi, std::vector<uint8_t>(v.begin(), v.end()));
    }));
    return out;
  }
  bool has(Attribute a, uint8_t ebi = 0) const {
    for (const auto& [x, e, v] : attributes())
      if (x == a && e == ebi) return true;
    return false;
  }
};

// A persist ring in memory; `room` records at most.
class RecordingSink final : public PersistSink {
 public:
  std::span<uint8_t> reserve(ChangeKind kind, uint16_t partition, std::size_t max) noexcept override {
    if (records.size() >= room) return {};
    buffer_.assign(max, 0);
    kind_ = kind;
    partition_ = partition;
    return buffer_;
  }
  void commit(std::size_t length) noexcept override {
    records.push_back(Record{kind_, partition_, {buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(length)}});
  }
  std::vector<Record> records;
  std::size_t room = 1 << 20;

 private:
  // 8-aligned, as ring slots are.
  std::vector<uint8_t> buffer_;
  ChangeKind kind_{};
  uint16_t partition_ = 0;
};

class PersistTest : public ProxyTest {
 protected:
  PersistTest() { proxy_->setPersist(&sink_); }
  RecordingSink sink_;
};

TEST_F(PersistTest, ASessionsLifeIsOneRecordPerChangeEndingInADeletion) {
  const Attached a = attach("001010000000701");
  ASSERT_EQ(sink_.records.size(), 2u);
  const Record& creating = sink_.records[0];
  EXPECT_EQ(creating.kind, ChangeKind::kUpsert);
  EXPECT_EQ(creating.view().header->session_teid, a.access_teid);
  EXPECT_EQ(creating.view().header->core.state, static_cast<uint8_t>(SessionState::kCreating));
  EXPECT_EQ(creating.partition, partitionOf(std::string_view("001010000000701")));
  EXPECT_TRUE(creating.has(Attribute::kImsi));
  EXPECT_TRUE(creating.has(Attribute::kRatType));
  EXPECT_TRUE(creating.has(Attribute::kBearerFromAccess, 5)) << "the SGW's S5/S8-U F-TEID and QoS";
  const Record& active = sink_.records[1];
  EXPECT_EQ(active.view().header->core.state, static_cast<uint8_t>(SessionState::kActive));
  EXPECT_EQ(active.view().header->core.pgw.teid, 0x2222u);
  EXPECT_TRUE(active.has(Attribute::kBearerFromGateway, 5)) << "the PGW's S5/S8-U F-TEID";
  EXPECT_FALSE(active.has(Attribute::kImsi));

  // The IMSI's octets are the IE's value as the SGW sent it.
  for (const auto& [attr, ebi, value] : creating.attributes()) {
    if (attr != Attribute::kImsi) continue;
    auto imsi = Imsi::decode(value);
    ASSERT_TRUE(imsi);
    EXPECT_EQ(imsi->digits.view(), "001010000000701");
  }

  sink_.records.clear();
  auto to_pgw = feed(simple(MessageType::kModifyBearerRequest, a.access_teid, 0x51), net::Address::v4(kSgw, kPort));
  ASSERT_EQ(to_pgw.size(), 1u);
  feed(simple(MessageType::kModifyBearerResponse, a.gateway_teid, decode(to_pgw[0].bytes).header().sequence_number, 16),
       a.pgw);
  EXPECT_EQ(sink_.records.size(), 1u) << "the request; an answer with a Cause alone changes nothing kept";
  // Nor one whose Bearer Context is EBI and Cause (TS 29.274 Table 7.2.8-2):
  // stored, it would replace the PGW's side the creation stored.
  sink_.records.clear();
  to_pgw = feed(simple(MessageType::kModifyBearerRequest, a.access_teid, 0x53), net::Address::v4(kSgw, kPort));
  feed(withBearers(MessageType::kModifyBearerResponse, a.gateway_teid, decode(to_pgw[0].bytes).header().sequence_number,
                   16, {5}),
       a.pgw);
  EXPECT_EQ(sink_.records.size(), 1u) << "the request's record only";

  sink_.records.clear();
  to_pgw = feed(simple(MessageType::kDeleteSessionRequest, a.access_teid, 0x52), net::Address::v4(kSgw, kPort));
  feed(simple(MessageType::kDeleteSessionResponse, a.gateway_teid, decode(to_pgw[0].bytes).header().sequence_number, 16),
       a.pgw);
  ASSERT_FALSE(sink_.records.empty());
  EXPECT_EQ(sink_.records.back().kind, ChangeKind::kDelete);
  EXPECT_EQ(sink_.records.back().view().header->session_teid, a.access_teid);
  EXPECT_EQ(header_->counters.persist_changes.load(), 6u);
}

TEST_F(PersistTest, ARejectedCreationDeletesTheRecordItsRequestWrote) {
  auto out = createAnswered(createSessionRequest("001010000000702", "internet", 0x702, 702, kSgw), 94);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(sink_.records.size(), 2u);
  EXPECT_EQ(sink_.records[0].kind, ChangeKind::kUpsert);
  EXPECT_EQ(sink_.records[1].kind, ChangeKind::kDelete);
  EXPECT_EQ(sink_.records[1].view().header->session_teid, sink_.records[0].view().header->session_teid);
}

TEST_F(PersistTest, ADedicatedBearerDeletedIsARemovedAttribute) {
  const Attached a = attach("001010000000703");
  const net::Address sgw = net::Address::v4(kSgw, kPort);
  // The PGW adds bearer 6, then deletes it.
  auto cbr = feed(withBearers(MessageType::kCreateBearerRequest, a.gateway_teid, 0x61, std::nullopt, {0}, 5), a.pgw);
  ASSERT_EQ(cbr.size(), 1u);
  sink_.records.clear();
  // The SGW's answer names its user-plane endpoint of the new bearer.
  std::vector<uint8_t> cbresp(256);
  Builder b(cbresp);
  b.begin(MessageType::kCreateBearerResponse, a.access_teid, decode(cbr[0].bytes).header().sequence_number);
  addCause(b, 16);
  b.beginGrouped(IeType::kBearerContext);
  b.add(Ebi{6});
  addCause(b, 16);
  FTeid user;
  user.interface_type = static_cast<uint8_t>(FTeidInterfaceType::kS5S8SgwGtpU);
  user.teid = 0xbeef;
  user.ipv4 = Ipv4{{10, 1, 1, 6}};
  b.add(user, 2);
  b.endGrouped();
  cbresp.resize(b.finish()->size());
  feed(cbresp, sgw);
  ASSERT_EQ(sink_.records.size(), 1u);
  EXPECT_TRUE(sink_.records[0].has(Attribute::kBearerFromAccess, 6)) << "the SGW's side of the new bearer";
  auto dbr = feed(withBearers(MessageType::kDeleteBearerRequest, a.gateway_teid, 0x62, std::nullopt, {}), a.pgw);
  ASSERT_EQ(dbr.size(), 1u);
  sink_.records.clear();
  feed(withBearers(MessageType::kDeleteBearerResponse, a.access_teid, decode(dbr[0].bytes).header().sequence_number,
                   16, {6}),
       sgw);
  bool removed = false;
  for (const Record& r : sink_.records) removed |= r.has(Attribute::kBearerRemoved, 6);
  EXPECT_TRUE(removed);
  EXPECT_EQ(sessions_.find(a.access_teid)->ebis, 1u << 5);
}

TEST_F(PersistTest, AFullRingLosesTheChangeAndCountsIt) {
  sink_.room = 1;
  attach("001010000000704");
  EXPECT_EQ(sink_.records.size(), 1u);
  EXPECT_EQ(header_->counters.persist_ring_full.load(), 1u);
  EXPECT_EQ(sessions_.active(), 1u) << "the session itself is served";
}

TEST(ChangeView, RefusesTornRecords) {
  std::vector<uint64_t> storage(64);
  auto* bytes = reinterpret_cast<uint8_t*>(storage.data());
  ChangeHeader h{};
  h.kind = 7;
  std::memcpy(bytes, &h, sizeof h);
  ChangeView v;
  EXPECT_FALSE(ChangeView::parse({bytes, sizeof h}, v)) << "unknown kind";
  h.kind = static_cast<uint16_t>(ChangeKind::kUpsert);
  std::memcpy(bytes, &h, sizeof h);
  EXPECT_FALSE(ChangeView::parse({bytes, sizeof h - 1}, v)) << "short";
  const AttributeHeader a{static_cast<uint8_t>(Attribute::kUli), 0, 40};
  std::memcpy(bytes + sizeof h, &a, sizeof a);
  ASSERT_TRUE(ChangeView::parse({bytes, sizeof h + sizeof a + 10}, v));
  EXPECT_FALSE(v.forEach([](Attribute, uint8_t, std::span<const uint8_t>) {})) << "an attribute past the end";
}

}  // namespace
}  // namespace gtpcp::worker::test
