// A fixed-capacity map from a key to a uint32 value for the emulator's
// per-datagram lookups: the SGW's outstanding requests by sequence number,
// and the answers it remembers by (source, sequence number).
//
// Open addressing, linear probing, backward-shift deletion (no tombstones,
// so a long run never slows down). Capacity is fixed by init(), twice the
// expected population or more: insert(), find() and erase() never allocate,
// throw or log. One thread only.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gtpcp::peer {

// The 32-bit mix of a key that HashIndex spreads over its slots. A key type
// provides an overload of hashKey() in its own namespace.
inline uint32_t hashKey(uint32_t key) noexcept { return key; }

template <class Key>
class HashIndex {
 public:
  // Sizes the table for up to `expected` entries (startup only: allocates).
  void init(std::size_t expected) {
    const std::size_t cap = std::bit_ceil(expected * 2 + 16);
    keys_.assign(cap, Key{});
    values_.assign(cap, kFree);
    mask_ = cap - 1;
    shift_ = 32u - static_cast<unsigned>(std::countr_zero(cap));
  }

  // Maps `key` to `value` (replacing a previous value). False when the table
  // is full. `value` must not be 0xffffffff.
  bool insert(const Key& key, uint32_t value) noexcept {
    std::size_t i = slot(key);
    for (std::size_t probes = 0; probes <= mask_; ++probes, i = (i + 1) & mask_) {
      if (values_[i] == kFree || keys_[i] == key) {
        keys_[i] = key;
        values_[i] = value;
        return true;
      }
    }
    return false;
  }

  bool find(const Key& key, uint32_t& value) const noexcept {
    std::size_t i = slot(key);
    for (std::size_t probes = 0; probes <= mask_; ++probes, i = (i + 1) & mask_) {
      if (values_[i] == kFree) return false;
      if (keys_[i] == key) {
        value = values_[i];
        return true;
      }
    }
    return false;
  }

  void erase(const Key& key) noexcept {
    std::size_t i = slot(key);
    for (std::size_t probes = 0;; ++probes, i = (i + 1) & mask_) {
      if (probes > mask_ || values_[i] == kFree) return;
      if (keys_[i] == key) break;
    }
    // Backward-shift deletion: move later entries of the probe run into the
    // hole unless their home slot lies cyclically in (hole, j].
    std::size_t j = i;
    for (;;) {
      j = (j + 1) & mask_;
      if (values_[j] == kFree) break;
      const std::size_t home = slot(keys_[j]);
      const bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      keys_[i] = keys_[j];
      values_[i] = values_[j];
      i = j;
    }
    values_[i] = kFree;
  }

 private:
  static constexpr uint32_t kFree = 0xffffffffu;
  // Fibonacci hashing: the top bits of the product.
  std::size_t slot(const Key& key) const noexcept {
    return (hashKey(key) * 0x9e3779b1u) >> shift_;
  }

  std::vector<Key> keys_;
  std::vector<uint32_t> values_;  // kFree: the slot is empty
  std::size_t mask_ = 0;
  unsigned shift_ = 32;
};

}  // namespace gtpcp::peer
