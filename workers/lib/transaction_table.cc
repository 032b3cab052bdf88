#include "workers/lib/transaction_table.h"

#include <bit>
#include <cstring>

namespace gtpcp::worker {

namespace {
constexpr uint8_t kPending = static_cast<uint8_t>(TransactionState::kPending);
}

TransactionTable::TransactionTable(TransactionShm* slots, uint32_t capacity) noexcept
    : slots_(slots), mask_(capacity - 1), shift_(32 - std::countr_zero(capacity)) {}

void TransactionTable::rebuild() noexcept {
  pending_ = 0;
  for (uint32_t i = 0; i <= mask_; ++i) pending_ += slots_[i].state == kPending;
}

TransactionShm* TransactionTable::insert(uint32_t proxy_sequence) noexcept {
  uint32_t i = home(proxy_sequence);
  for (uint32_t n = 0; n < kProbeLimit; ++n, i = (i + 1) & mask_) {
    TransactionShm& e = slots_[i];
    if (e.state != kPending) {
      e = TransactionShm{};
      e.proxy_sequence = proxy_sequence;
      e.state = kPending;
      ++pending_;
      return &e;
    }
    // A sequence number is not reused while its entry is pending: the proxy
    // allocates them in order over a space far larger than the table.
    if (e.proxy_sequence == proxy_sequence) return nullptr;
  }
  return nullptr;
}

TransactionShm* TransactionTable::find(uint32_t proxy_sequence) noexcept {
  uint32_t i = home(proxy_sequence);
  for (uint32_t n = 0; n <= mask_; ++n, i = (i + 1) & mask_) {
    TransactionShm& e = slots_[i];
    if (e.state != kPending) return nullptr;
    if (e.proxy_sequence == proxy_sequence) return &e;
  }
  return nullptr;
}

void TransactionTable::erase(TransactionShm& entry) noexcept {
  uint32_t hole = static_cast<uint32_t>(&entry - slots_);
  if (slots_[hole].state != kPending) return;
  --pending_;
  // Backward shift: move later entries of the run into the hole when their
  // home slot does not lie between the hole and them.
  uint32_t j = hole;
  for (;;) {
    j = (j + 1) & mask_;
    TransactionShm& e = slots_[j];
    if (e.state != kPending) break;
    const uint32_t h = home(e.proxy_sequence);
    const bool between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (between) continue;
    slots_[hole] = e;
    hole = j;
  }
  slots_[hole].state = static_cast<uint8_t>(TransactionState::kFree);
}

}  // namespace gtpcp::worker
