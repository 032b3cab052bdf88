#include "common/ring/ring.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gtpcp::ring {

namespace {

bool validCapacity(uint32_t capacity_slots) {
  return capacity_slots >= kMinCapacitySlots && capacity_slots <= kMaxCapacitySlots &&
         (capacity_slots & (capacity_slots - 1)) == 0;
}

std::string capacityRule() {
  return "a power of two from " + std::to_string(kMinCapacitySlots) + " to " +
         std::to_string(kMaxCapacitySlots) + " (the largest record, " +
         std::to_string(kMaxRecordSlots) + " slots, must fit at any position)";
}

Result<void> checkMemory(const void* memory, std::size_t memory_size) {
  if (memory == nullptr) return fail(Errc::kInvalidArgument, "ring: memory is null");
  if (reinterpret_cast<uintptr_t>(memory) % kSlotBytes != 0) {
    return fail(Errc::kInvalidArgument, "ring: memory is not 64-octet aligned");
  }
  if (memory_size < kRingHeaderBytes) {
    return fail(Errc::kInvalidArgument, "ring: " + std::to_string(memory_size) +
                                            " octets cannot hold the ring header (" +
                                            std::to_string(kRingHeaderBytes) + ")");
  }
  return {};
}

struct Attached {
  RingHeaderShm* header;
  uint32_t capacity;
  uint64_t head;
  uint64_t tail;
};

Result<Attached> validate(void* memory, std::size_t memory_size) {
  if (auto ok = checkMemory(memory, memory_size); !ok) return tl::unexpected(ok.error());
  auto* header = static_cast<RingHeaderShm*>(memory);
  // RING-A3 pairs with RING-R3 in initRing(): the constants are visible once the magic is.
  const uint64_t magic = header->magic.load(std::memory_order_acquire);
  if (magic == 0) return fail(Errc::kNotInitialised, "ring: not initialised (magic is 0)");
  if (magic != kRingMagic) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "ring: magic 0x%016" PRIx64 ", expected 0x%016" PRIx64, magic,
                  kRingMagic);
    return fail(Errc::kMismatch, buf);
  }
  if (header->layout_version != kRingLayoutVersion) {
    return fail(Errc::kMismatch, "ring: layout version " + std::to_string(header->layout_version) +
                                     ", this build understands " +
                                     std::to_string(kRingLayoutVersion));
  }
  const uint32_t capacity = header->capacity_slots;
  if (!validCapacity(capacity)) {
    return fail(Errc::kMismatch, "ring: capacity " + std::to_string(capacity) +
                                     " slots is not " + capacityRule());
  }
  if (memory_size < ringBytes(capacity)) {
    return fail(Errc::kMismatch, "ring: " + std::to_string(memory_size) +
                                     " octets cannot hold a ring of " + std::to_string(capacity) +
                                     " slots (" + std::to_string(ringBytes(capacity)) + ")");
  }
  // Acquire: a predecessor on the other side (or on this side, in another
  // process) stored these with release (RING-R1, RING-R2); attaching is rare.
  const uint64_t head = header->head.load(std::memory_order_acquire);
  const uint64_t tail = header->tail.load(std::memory_order_acquire);
  if (head - tail > capacity) {
    return fail(Errc::kMismatch, "ring: head " + std::to_string(head) + " and tail " +
                                     std::to_string(tail) + " are more than " +
                                     std::to_string(capacity) + " slots apart (corrupt header)");
  }
  return Attached{header, capacity, head, tail};
}

uint8_t* slotsOf(RingHeaderShm* header) {
  return static_cast<uint8_t*>(static_cast<void*>(header)) + kRingHeaderBytes;
}

}  // namespace

std::size_t ringBytes(uint32_t capacity_slots) {
  return kRingHeaderBytes + std::size_t{capacity_slots} * kSlotBytes;
}

Result<void> initRing(void* memory, std::size_t memory_size, uint32_t capacity_slots) {
  if (auto ok = checkMemory(memory, memory_size); !ok) return ok;
  if (!validCapacity(capacity_slots)) {
    return fail(Errc::kInvalidArgument, "ring: capacity " + std::to_string(capacity_slots) +
                                            " slots is not " + capacityRule());
  }
  if (memory_size < ringBytes(capacity_slots)) {
    return fail(Errc::kInvalidArgument,
                "ring: " + std::to_string(memory_size) + " octets cannot hold a ring of " +
                    std::to_string(capacity_slots) + " slots (" +
                    std::to_string(ringBytes(capacity_slots)) + ")");
  }
  auto* header = static_cast<RingHeaderShm*>(memory);
  // Relaxed: nobody attaches before the magic below says the ring exists.
  header->magic.store(0, std::memory_order_relaxed);
  header->layout_version = kRingLayoutVersion;
  header->capacity_slots = capacity_slots;
  header->head.store(0, std::memory_order_relaxed);
  header->tail.store(0, std::memory_order_relaxed);
  // RING-R3 pairs with RING-A3 in validate() (Producer::attach, Consumer::attach).
  header->magic.store(kRingMagic, std::memory_order_release);
  return {};
}

Producer::Producer(RingHeaderShm* header, uint8_t* slots, uint32_t capacity, uint64_t head,
                   uint64_t tail) noexcept
    : header_(header),
      slots_(slots),
      capacity_(capacity),
      mask_(capacity - 1),
      write_(head),
      published_(head),
      tail_cache_(tail) {}

Result<Producer> Producer::attach(void* memory, std::size_t memory_size) {
  auto ring = validate(memory, memory_size);
  if (!ring) return tl::unexpected(std::move(ring.error()));
  // A predecessor's unpublished records lie beyond head: starting at head
  // overwrites them (see "Restart" in ring.h).
  return Producer(ring->header, slotsOf(ring->header), ring->capacity, ring->head, ring->tail);
}

Consumer::Consumer(RingHeaderShm* header, const uint8_t* slots, uint32_t capacity, uint64_t head,
                   uint64_t tail) noexcept
    : header_(header),
      slots_(slots),
      capacity_(capacity),
      mask_(capacity - 1),
      read_(tail),
      released_(tail),
      head_cache_(head) {}

Result<Consumer> Consumer::attach(void* memory, std::size_t memory_size) {
  auto ring = validate(memory, memory_size);
  if (!ring) return tl::unexpected(std::move(ring.error()));
  // Starting at tail re-reads what a predecessor popped without releasing
  // (at-least-once, see "Restart" in ring.h).
  return Consumer(ring->header, slotsOf(ring->header), ring->capacity, ring->head, ring->tail);
}

[[gnu::cold]] [[gnu::noinline]] void Consumer::discardCorrupt() noexcept {
  // head_cache_ is a published head: every slot below it is the consumer's,
  // so skipping to it loses those records but never reads unpublished ones.
  read_ = head_cache_;
  peeked_ = 0;
  ++corruptions_;
}

namespace detail {
void ringMisuse(const char* what) noexcept {
  std::fprintf(stderr, "gtpcp ring: %s\n", what);
  std::abort();
}
}  // namespace detail

}  // namespace gtpcp::ring
