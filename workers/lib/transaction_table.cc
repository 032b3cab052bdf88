#include "transaction_table.h"

#include <sys/socket.h>

#include <atomic>
#include <bit>
#include <cstring>

namespace gtpcp::worker {

namespace {

constexpr uint8_t kFree = static_cast<uint8_t>(TransactionState::kFree);
constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
constexpr uint8_t kAnswered = static_cast<uint8_t>(TransactionState::kAnswered);

// splitmix64's finaliser: every key bit moves every home bit.
constexpr uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr uint64_t kAnswerAlign = 8;

}  // namespace

TransactionTable::TransactionTable(const TransactionMemory& memory) noexcept
    : m_(memory),
      index_mask_(memory.capacity * 2 - 1) {}

uint64_t TransactionTable::requesterKey(const net::Address& a, uint32_t sequence) noexcept {
  uint64_t h = mix(uint64_t{sequence} << 24 ^ uint64_t{a.port} << 8 ^ a.family);
  // The octets Address::operator== compares: 4 for IPv4, 16 for IPv6.
  if (a.family == AF_INET6) {
    for (std::size_t i = 0; i < 16; i += 8) {
      uint64_t word;
      std::memcpy(&word, a.bytes + i, 8);
      h = mix(h ^ word);
    }
  } else {
    uint32_t word;
    std::memcpy(&word, a.bytes, 4);
    h = mix(h ^ word);
  }
  return h;
}

uint32_t TransactionTable::home(uint64_t key) const noexcept {
  return static_cast<uint32_t>(mix(key)) & index_mask_;
}

void TransactionTable::rebuild(bool fresh) noexcept {
  live_ = pending_ = 0;
  cursor_ = 0;
  free_head_ = kNoSlot;
  if (fresh) {
    *m_.high_water = 0;
    return;
  }
  const uint64_t index_slots = uint64_t{index_mask_} + 1;
  std::memset(static_cast<void*>(m_.by_response), 0, index_slots * sizeof(TransactionIndexShm));
  std::memset(static_cast<void*>(m_.by_requester), 0, index_slots * sizeof(TransactionIndexShm));
  if (*m_.high_water > m_.capacity) *m_.high_water = m_.capacity;
  for (uint32_t i = *m_.high_water; i-- > 0;) {
    TransactionShm& t = m_.records[i];
    // A record whose index entries cannot be restored is dropped: the peer
    // retransmits and the request is handled anew.
    bool keep = t.state == kPending || t.state == kAnswered;
    if (keep && !indexInsert(m_.by_response, t.response_key, i)) keep = false;
    if (keep && !indexInsert(m_.by_requester, requesterKey(t.requester, t.requester_sequence), i)) {
      indexErase(m_.by_response, t.response_key, i);
      keep = false;
    }
    if (!keep) {
      t.state = kFree;
      t.next_free = free_head_;
      free_head_ = i;
      continue;
    }
    ++live_;
    pending_ += t.state == kPending;
  }
}

bool TransactionTable::indexInsert(TransactionIndexShm* index, uint64_t key, uint32_t record) noexcept {
  uint32_t i = home((key));
  for (uint32_t n = 0; n < kProbeLimit; ++n, i = (i + 1) & index_mask_) {
    if (index[i].record == 0) {
      index[i].key = key;
      index[i].record = record + 1;
      return true;
    }
  }
  return false;
}

void TransactionTable::indexErase(TransactionIndexShm* index, uint64_t key, uint32_t record) noexcept {
  uint32_t hole = home((key));
  for (uint32_t n = 0;; ++n, hole = (hole + 1) & index_mask_) {
    if (n > index_mask_ || index[hole].record == 0) return;  // not there
    if (index[hole].record == record + 1 && index[hole].key == key) break;
  }
  // Backward shift: move later entries of the run into the hole when their
  // home slot does not lie cyclically in (hole, j].
  uint32_t j = hole;
  for (;;) {
    j = (j + 1) & index_mask_;
    if (index[j].record == 0) break;
    const uint32_t h = home((index[j].key));
    const bool between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (between) continue;
    index[hole] = index[j];
    hole = j;
  }
  index[hole].record = 0;
}

TransactionShm* TransactionTable::open(uint64_t response_key, const net::Address& requester,
                                       uint32_t requester_sequence, uint64_t now_ns) noexcept {
  // Freed records first; records above the high water only when none is left.
  const bool from_free = free_head_ != kNoSlot;
  if (!from_free && *m_.high_water >= m_.capacity) return nullptr;
  if (findByResponse(response_key) != nullptr) return nullptr;
  const uint32_t r = from_free ? free_head_ : *m_.high_water;
  if (!indexInsert(m_.by_response, response_key, r)) return nullptr;
  if (!indexInsert(m_.by_requester, requesterKey(requester, requester_sequence), r)) {
    indexErase(m_.by_response, response_key, r);
    return nullptr;
  }
  TransactionShm& t = m_.records[r];
  if (from_free) {
    free_head_ = t.next_free;
  } else {
    ++*m_.high_water;
  }
  t = TransactionShm{};
  t.response_key = response_key;
  t.requester = requester;
  t.requester_sequence = requester_sequence;
  t.received_ns = now_ns;
  t.next_free = kNoSlot;
  t.state = kPending;
  ++live_;
  ++pending_;
  return &t;
}

TransactionShm* TransactionTable::findByResponse(uint64_t response_key) noexcept {
  uint32_t i = home((response_key));
  for (uint32_t n = 0; n <= index_mask_; ++n, i = (i + 1) & index_mask_) {
    const TransactionIndexShm& e = m_.by_response[i];
    if (e.record == 0) return nullptr;
    if (e.key == response_key) return &m_.records[e.record - 1];
  }
  return nullptr;
}

TransactionShm* TransactionTable::findByRequester(const net::Address& requester,
                                                  uint32_t requester_sequence) noexcept {
  const uint64_t key = requesterKey(requester, requester_sequence);
  uint32_t i = home((key));
  for (uint32_t n = 0; n <= index_mask_; ++n, i = (i + 1) & index_mask_) {
    const TransactionIndexShm& e = m_.by_requester[i];
    if (e.record == 0) return nullptr;
    if (e.key != key) continue;
    TransactionShm& t = m_.records[e.record - 1];
    // The key is a hash: the record decides.
    if (t.requester_sequence == requester_sequence && t.requester == requester) return &t;
  }
  return nullptr;
}

std::optional<uint64_t> TransactionTable::store(std::span<const uint8_t> bytes) noexcept {
  if (bytes.empty() || bytes.size() > m_.answer_bytes / 4) return std::nullopt;
  // Nothing straddles the end of the ring: what would is written at its
  // start, and the octets skipped count as written.
  uint64_t position = *m_.answer_head;
  const uint64_t offset = position % m_.answer_bytes;
  if (offset + bytes.size() > m_.answer_bytes) position += m_.answer_bytes - offset;
  std::memcpy(m_.answers + position % m_.answer_bytes, bytes.data(), bytes.size());
  const uint64_t length = (bytes.size() + kAnswerAlign - 1) / kAnswerAlign * kAnswerAlign;
  // WKH-H1: relaxed, for the metrics exporter (worker_shm.h).
  std::atomic_ref<uint64_t>(*m_.answer_head).store(position + length, std::memory_order_relaxed);
  return position;
}

std::span<const uint8_t> TransactionTable::load(uint64_t position, uint32_t length) const noexcept {
  // Overwritten once the writer has gone a whole ring past it.
  if (length == 0 || *m_.answer_head > position + m_.answer_bytes) return {};
  return {m_.answers + position % m_.answer_bytes, length};
}

bool TransactionTable::answered(TransactionShm& t, std::span<const uint8_t> answer) noexcept {
  if (t.state == kPending) --pending_;
  t.state = kAnswered;
  t.answer_length = 0;
  if (answer.empty()) return true;
  const auto position = store(answer);
  if (!position) return false;
  t.answer_position = *position;
  t.answer_length = static_cast<uint32_t>(answer.size());
  return true;
}

std::span<const uint8_t> TransactionTable::answerOf(const TransactionShm& t) const noexcept {
  if (t.state != kAnswered) return {};
  return load(t.answer_position, t.answer_length);
}

bool TransactionTable::keepRequest(TransactionShm& t, std::span<const uint8_t> request) noexcept {
  const auto position = store(request);
  t.request_length = position ? static_cast<uint32_t>(request.size()) : 0;
  t.request_position = position.value_or(0);
  return position.has_value();
}

std::span<const uint8_t> TransactionTable::requestOf(const TransactionShm& t) const noexcept {
  return load(t.request_position, t.request_length);
}

bool TransactionTable::rekey(TransactionShm& t, uint64_t response_key) noexcept {
  if (t.state != kPending || findByResponse(response_key) != nullptr) return false;
  const uint32_t r = recordOf(t);
  // The new entry first: if it does not fit, nothing has changed.
  if (!indexInsert(m_.by_response, response_key, r)) return false;
  indexErase(m_.by_response, t.response_key, r);
  t.response_key = response_key;
  return true;
}

void TransactionTable::close(TransactionShm& t) noexcept {
  if (t.state == kFree) return;
  const uint32_t r = recordOf(t);
  indexErase(m_.by_response, t.response_key, r);
  indexErase(m_.by_requester, requesterKey(t.requester, t.requester_sequence), r);
  if (t.state == kPending) --pending_;
  --live_;
  t.state = kFree;
  t.next_free = free_head_;
  free_head_ = r;
}

}  // namespace gtpcp::worker
