#include "batch.h"

#include <bit>
#include <cstring>

#include "redis_slot.h"

namespace gtpcp::persister {

using session::Attribute;

namespace {

// Serialises `m` at the end of the arena: one size computation, no
// intermediate string.
Commands::Piece appendSerialized(const google::protobuf::MessageLite& m, Commands& out) {
  std::string& a = out.arena();
  const std::size_t start = a.size();
  const std::size_t n = m.ByteSizeLong();
  a.resize(start + n);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(a.data() + start));
  return out.piece(start);
}

}  // namespace

namespace {

constexpr std::size_t kBearerBlockBytes = 32 * 1024;

google::protobuf::ArenaOptions bearerArenaOptions(char* block) {
  google::protobuf::ArenaOptions o;
  o.initial_block = block;
  o.initial_block_size = kBearerBlockBytes;
  return o;
}

}  // namespace

Batch::Batch(const KeyNames& keys)
    : keys_(keys),
      bearer_block_(new char[kBearerBlockBytes]),
      bearer_arena_(bearerArenaOptions(bearer_block_.get())) {
  rehash(256);
}

void Batch::rehash(std::size_t buckets) {
  table_.assign(buckets, 0);
  const std::size_t mask = buckets - 1;
  for (std::size_t i = 0; i < used_; ++i) {
    Session& s = sessions_[i];
    // Fibonacci hashing: TEIDs of one partition differ in their middle bits.
    const uint64_t key = (uint64_t{s.partition} << 32) | s.teid;
    std::size_t b = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
    while (table_[b] != 0) b = (b + 1) & mask;
    table_[b] = static_cast<uint32_t>(i + 1);
    s.bucket = static_cast<uint32_t>(b);
  }
}

Batch::Session& Batch::find(uint16_t partition, uint32_t teid) {
  const std::size_t mask = table_.size() - 1;
  const uint64_t key = (uint64_t{partition} << 32) | teid;
  std::size_t b = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
  for (; table_[b] != 0; b = (b + 1) & mask) {
    Session& s = sessions_[table_[b] - 1];
    if (s.teid == teid && s.partition == partition) return s;
  }
  // A new session: an entry kept from an earlier batch, or a new one.
  if (used_ == sessions_.size()) sessions_.emplace_back();
  Session& s = sessions_[used_];
  table_[b] = static_cast<uint32_t>(++used_);
  s.partition = partition;
  s.teid = teid;
  s.bucket = static_cast<uint32_t>(b);
  s.deleted = false;
  s.index = false;
  s.fields = 0;
  s.removed_first = s.removed_last = kNone;
  // At most half full, so that probes stay short.
  if (2 * used_ > table_.size()) rehash(2 * table_.size());
  return s;
}

bool Batch::add(std::span<const uint8_t> record, uint16_t partition) noexcept {
  session::ChangeView view;
  if (!session::ChangeView::parse(record, view)) return false;
  const session::ChangeHeader& h = *view.header;
  Session& s = find(partition, h.session_teid);
  s.core = h.core;
  s.wall_ns = h.wall_ns;
  if (h.kind == static_cast<uint16_t>(session::ChangeKind::kDelete)) {
    s.deleted = true;
    s.index = false;
    s.fields = 0;
    s.removed_first = s.removed_last = kNone;
    return true;
  }
  s.deleted = false;
  // The index changes only when the session comes: its IMSI never changes.
  s.index |= h.core.state == static_cast<uint8_t>(session::SessionState::kCreating);
  return view.forEach([&](Attribute a, uint8_t ebi, std::span<const uint8_t> value) {
    if (a == Attribute::kBearerRemoved) {
      if (ebi >= 16) return;
      s.fields &= ~((uint64_t{1} << session::bearerFields(ebi)[0]) | (uint64_t{1} << session::bearerFields(ebi)[1]));
      const auto at = static_cast<uint32_t>(removals_.size());
      removals_.push_back(Removal{ebi, kNone});
      if (s.removed_first == kNone) {
        s.removed_first = at;
      } else {
        removals_[s.removed_last].next = at;
      }
      s.removed_last = at;
      return;
    }
    const int field = session::fieldOf(a, ebi);
    if (field < 0) return;
    // The earlier value, if any, stays in the arena unused until clear().
    s.values[field] = Value{static_cast<uint32_t>(values_.size()), static_cast<uint32_t>(value.size())};
    values_.append(reinterpret_cast<const char*>(value.data()), value.size());
    s.fields |= uint64_t{1} << field;
  });
}

void Batch::appendPartial(std::size_t field, const Session& s, Commands& out) {
  const Value& v = s.values[field];
  const std::span<const uint8_t> value(reinterpret_cast<const uint8_t*>(values_.data()) + v.offset, v.length);
  const Attribute a = session::fieldAttribute(field, s.core.gtp_version);
  // The routing names are a sub-message (proxy) too: from the arena.
  if (a != Attribute::kBearerFromAccess && a != Attribute::kBearerFromGateway && a != Attribute::kV1PdpFromAccess &&
      a != Attribute::kV1PdpFromGateway && a != Attribute::kRouting) {
    partial_.Clear();
    if (!session::partialRecord(a, 0, value, s.core.default_ebi, partial_)) return;
    out.arg(Commands::text(session::fieldName(field)));
    out.arg(appendSerialized(partial_, out));
    return;
  }
  // Each bearer (or routing) record is a new arena message; the arena is
  // reset before it outgrows its first block, so one costs no malloc.
  if (bearer_arena_.SpaceUsed() > kBearerBlockBytes / 2) bearer_arena_.Reset();
  auto* partial = google::protobuf::Arena::CreateMessage<proto::SessionRecord>(&bearer_arena_);
  if (!session::partialRecord(a, session::fieldEbi(field), value, s.core.default_ebi, *partial)) return;
  out.arg(Commands::text(session::fieldName(field)));
  out.arg(appendSerialized(*partial, out));
}

void Batch::appendCommands(const Session& s, Commands& out) {
  std::string& arena = out.arena();
  std::size_t start = arena.size();
  keys_.appendSession(arena, s.partition, s.teid);
  const Commands::Piece session = out.piece(start);
  const uint16_t slot = keySlot(out.view(session));
  const std::string_view imsi(s.core.imsi, std::min<std::size_t>(s.core.imsi_length, sizeof s.core.imsi));
  const auto index = [&] {
    const std::size_t at = arena.size();
    keys_.appendImsi(arena, s.partition, imsi);
    return out.piece(at);
  };
  const auto teids = [&] {
    const std::size_t at = arena.size();
    keys_.appendTeids(arena, s.partition);
    return out.piece(at);
  };
  const auto member = [&] {
    const std::size_t at = arena.size();
    KeyNames::appendTeidMember(arena, s.teid);
    return out.piece(at);
  };
  if (s.deleted) {
    out.beginTransaction(true);
    out.command({Commands::text(kDel), session});
    if (!imsi.empty()) out.command({Commands::text(kSrem), index(), session});
    out.command({Commands::text(kSrem), teids(), member()});
    out.endTransaction(slot, session);
    return;
  }
  // Several writes go as one transaction, a lone HSET as itself.
  out.beginTransaction(s.removed_first != kNone || s.index);
  if (s.removed_first != kNone) {
    out.beginCommand();
    out.arg(Commands::text(kHdel));
    out.arg(session);
    for (uint32_t r = s.removed_first; r != kNone; r = removals_[r].next) {
      for (const uint8_t field : session::bearerFields(removals_[r].ebi)) out.arg(Commands::text(session::fieldName(field)));
    }
  }
  out.beginCommand();
  out.arg(Commands::text(kHset));
  out.arg(session);
  out.arg(Commands::text(session::kCoreField));
  session::coreRecord(s.core, s.teid, s.partition, s.wall_ns, core_);
  out.arg(appendSerialized(core_, out));
  // A value that does not decode is not written: the peer's IE was malformed.
  for (uint64_t m = s.fields; m != 0; m &= m - 1) appendPartial(static_cast<std::size_t>(std::countr_zero(m)), s, out);
  if (s.index) {
    if (!imsi.empty()) out.command({Commands::text(kSadd), index(), session});
    out.command({Commands::text(kSadd), teids(), member()});
  }
  out.endTransaction(slot, session);
}

void Batch::build(Commands& out) noexcept {
  out.clear();
  for (std::size_t i = 0; i < used_; ++i) appendCommands(sessions_[i], out);
  out.seal();
}

void Batch::clear() noexcept {
  for (std::size_t i = 0; i < used_; ++i) table_[sessions_[i].bucket] = 0;
  used_ = 0;
  values_.clear();
  removals_.clear();
}

}  // namespace gtpcp::persister
