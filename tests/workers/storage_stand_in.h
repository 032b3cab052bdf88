// What the persister does for a worker's Restorer, in the tests: the
// look-ups the worker asked are recorded, and answered from a map of
// records as the storage holds them.
#pragma once

#include <cstring>
#include <map>
#include <span>
#include <vector>

#include "workers/lib/restore.h"

namespace gtpcp::worker::test {

struct Question {
  LookupKind kind;
  uint16_t partition;
  std::vector<uint8_t> body;
};

class RecordingLookups final : public LookupSink {
 public:
  bool lookup(LookupKind kind, uint16_t partition, std::span<const uint8_t> body) noexcept override {
    if (full) return false;
    asked.push_back(Question{kind, partition, {body.begin(), body.end()}});
    return true;
  }
  std::vector<Question> asked;
  bool full = false;
};

// One chunk of a partition's stored TEIDs, as the persister sends it.
inline std::vector<uint8_t> storedTeidsChunk(uint16_t partition, const std::vector<uint32_t>& teids, bool last,
                                             RestoreOutcome outcome = RestoreOutcome::kFound) {
  std::vector<uint8_t> bytes(sizeof(StoredTeidsChunk) + teids.size() * 4);
  const StoredTeidsChunk c{partition, static_cast<uint8_t>(outcome), static_cast<uint8_t>(last),
                           static_cast<uint32_t>(teids.size())};
  std::memcpy(bytes.data(), &c, sizeof c);
  if (!teids.empty()) std::memcpy(bytes.data() + sizeof c, teids.data(), teids.size() * 4);
  return bytes;
}

// The storage: `records` by access TEID. answer() answers every question
// asked since the last call, whole lists and records (or "absent").
class StorageStandIn {
 public:
  StorageStandIn(Restorer& restorer, RecordingLookups& lookups, Restorer::Replay replay)
      : restorer_(restorer), lookups_(lookups), replay_(replay) {}

  std::map<uint32_t, SessionShm> records;
  int session_lookups = 0;

  void answer(uint64_t now) {
    while (answered_ < lookups_.asked.size()) {
      const Question q = lookups_.asked[answered_++];
      if (q.kind == LookupKind::kStoredTeids) {
        std::vector<uint32_t> teids;
        for (const auto& [teid, record] : records)
          if (partitionOf(teid) == q.partition) teids.push_back(teid);
        restorer_.apply(LookupKind::kStoredTeids, storedTeidsChunk(q.partition, teids, true), now, now, replay_);
        continue;
      }
      SessionLookup l;
      std::memcpy(&l, q.body.data(), sizeof l);
      ++session_lookups;
      SessionRestore r{};
      r.access_teid = l.access_teid;
      const auto it = records.find(l.access_teid);
      r.outcome = static_cast<uint8_t>(it == records.end() ? RestoreOutcome::kAbsent : RestoreOutcome::kFound);
      if (it != records.end()) r.record = it->second;
      restorer_.apply(LookupKind::kSession, {reinterpret_cast<const uint8_t*>(&r), sizeof r}, now, now, replay_);
    }
  }
  // Ticks and answers until the completion under way ended (bounded).
  void completion(uint64_t now) {
    for (int turns = 0; turns < 10'000 && restorer_.completing(); ++turns) {
      restorer_.tick(now += 1000);
      answer(now);
    }
  }

 private:
  Restorer& restorer_;
  RecordingLookups& lookups_;
  Restorer::Replay replay_;
  std::size_t answered_ = 0;
};

}  // namespace gtpcp::worker::test
