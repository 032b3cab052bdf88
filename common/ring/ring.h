// The single-producer single-consumer ring that carries records between
// gtpcp processes through shared memory: datagrams forwarder -> worker (the
// priority ring and the new-session ring) and worker -> forwarder (egress),
// change records worker -> persister (persist), look-ups worker -> persister
// and their answers back (lookup, restore).
//
// THE PROTOCOL
//
// Memory. A RingHeaderShm (ring_shm.h), then `capacity` slots of 64 octets
// (one cache line each); capacity is a power of two. A record is a
// RecordHeaderShm, a DatagramMeta and the payload, in recordSlots(length)
// consecutive slots. A record never wraps: when it would not fit before the
// end, the producer first writes a padding record covering the slots up to the
// end and puts the record at slot 0.
//
// Indices. `head` and `tail` (RingHeaderShm) count slots since the ring was
// laid out; they are free-running uint64 (2^64 slots are never reached) and
// masked with capacity - 1 on access. Always tail <= head <= tail + capacity:
//   [tail, head)             published records: the consumer's to read;
//   [head, tail + capacity)  free slots: the producer's to write.
// head is written only by the producer, tail only by the consumer, on cache
// lines of their own. Each side keeps its own position in process memory and
// a cached copy of the other side's index, and reloads the shared index only
// when its cache says full (producer) or empty (consumer): the producer
// touches the consumer's cache line about once per ring's worth of records,
// the consumer the producer's once per batch it catches up with, never once
// per record.
//
// Producer (exactly one per ring at a time): push() / reserve()+commit() copy
// records into the free slots past its private write position `write_`; the
// consumer cannot see them because head has not moved. publish() stores
// head = write_ with release (RING-R1): every record pushed before is visible at
// once. When its cached tail says there is no room it reloads tail with
// acquire (RING-A2).
//
// Consumer (exactly one per ring at a time): peek() reads the record at its
// private read position `read_`, reloading head with acquire (RING-A1) only when
// its cached head says empty; it skips padding records. pop() moves `read_`
// past the record; release() stores tail = read_ with release (RING-R2): every slot
// popped before goes back to the producer at once.
//
// Pairs. RING-R1 (Producer::publish) -> RING-A1 (Consumer::peek): the consumer that sees
// a head value sees every octet of every record below it. RING-R2
// (Consumer::release) -> RING-A2 (Producer::claim): the consumer's reads of the
// slots below a tail value are finished before the producer overwrites them.
// No other ordering is needed: a slot is only ever accessed by the side that
// owns it according to head and tail.
//
// Restart. head and tail live in shared memory, so a new Producer or Consumer
// attaching to an existing ring carries on where its predecessor stopped:
// - a producer that died between push() and publish() leaves nothing visible;
//   its successor starts at head and overwrites those slots;
// - a consumer that died before release() leaves tail where it was; its
//   successor sees the records it had popped but not released AGAIN. Delivery
//   is at least once: the application must tolerate duplicates (for GTP-C it
//   does anyway: a duplicate is handled like a peer's retransmission).
// "One at a time" is the application's promise (the watchdog kills a hung
// process before its replacement attaches); the ring does not enforce it.
//
// Corruption. Only published slots are ever read, so a dead producer cannot
// leave a torn record. A record header that breaks the invariants anyway
// (scribbled memory, a bug) makes the consumer discard everything published so
// far and count it (Consumer::corruptions()), rather than crash in a loop on
// the same record after every restart.
//
// Wake-ups are not the ring's business: see doorbell.h (one consumer may wait
// on several rings and on its timers).
//
// Hot path (push, reserve, commit, publish, freeSlots, fits, peek, pop,
// release, empty, depthSlots): noexcept, no allocation, no system call (commit()
// aborts when misused: see its contract).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "common/ring/errors.h"
#include "common/ring/ring_shm.h"

namespace gtpcp::ring {

// The largest payload a record carries: a UDP datagram's.
inline constexpr std::size_t kMaxPayload = 65535;

// Slots a record of `payload_length` octets occupies.
constexpr uint32_t recordSlots(std::size_t payload_length) noexcept {
  return static_cast<uint32_t>((kRecordPayloadOffset + payload_length + kSlotBytes - 1) /
                               kSlotBytes);
}

// 1025 slots for a 65535-octet datagram.
inline constexpr uint32_t kMaxRecordSlots = recordSlots(kMaxPayload);

// The smallest capacity initRing() accepts. With an empty ring and the write
// position r slots past a multiple of the capacity C, a record of n slots fits
// either before the end (C - r >= n) or after padding, at slot 0 (r >= n).
// Both fail only when r < n and C < n + r, so every position can take the
// largest record when C >= 2 * kMaxRecordSlots - 1 = 2049: the next power of
// two is 4096 slots (256 KiB). At 2048 a largest record arriving at r = 1024
// would never fit.
inline constexpr uint32_t kMinCapacitySlots = 4096;
// The largest: 1 GiB of slots.
inline constexpr uint32_t kMaxCapacitySlots = uint32_t{1} << 24;
static_assert(kMinCapacitySlots >= 2 * kMaxRecordSlots - 1);
static_assert(kMinCapacitySlots / 2 < 2 * kMaxRecordSlots - 1, "the minimum is the smallest");

// What peek() returns. Both point into the ring: valid until release() after
// the pop() of this record (a peek() that is not popped stays valid).
struct RecordView {
  const DatagramMeta* meta;
  std::span<const uint8_t> payload;
};

// Memory needed for a ring of `capacity_slots` slots (header included).
std::size_t ringBytes(uint32_t capacity_slots);

// Lays out a new, empty ring in `memory` (e.g. SharedSegment::payload(), or as
// a SharedSegment::Initializer). `memory` is 64-octet aligned and at least
// ringBytes(capacity_slots) long; capacity_slots is a power of two in
// [kMinCapacitySlots, kMaxCapacitySlots]. Call it once, before any Producer or
// Consumer attaches, from one process (the segment's creator).
Result<void> initRing(void* memory, std::size_t memory_size, uint32_t capacity_slots);

class Producer {
 public:
  // Validates the ring header in `memory` (magic, layout version, capacity,
  // size, head and tail) and starts at the published head.
  static Result<Producer> attach(void* memory, std::size_t memory_size);

  // Copies one record in; invisible to the consumer until publish(). False
  // when there is no room now (or payload.size() > kMaxPayload, which a UDP
  // socket cannot deliver). meta.length is set from payload.size(). Abandons
  // an outstanding reserve().
  bool push(const DatagramMeta& meta, std::span<const uint8_t> payload) noexcept;

  // Zero-copy variant: reserve room for up to `max_payload` octets, write the
  // payload at the returned pointer, then commit() the length actually
  // written. nullptr when there is no room now (or max_payload > kMaxPayload).
  // A reserve() that is not committed is abandoned by the next reserve() or
  // push(), and is never published.
  uint8_t* reserve(const DatagramMeta& meta, std::size_t max_payload) noexcept;
  // `payload_length` <= the max_payload of the reserve() just before, which
  // must have returned non-null: anything else aborts (the caller has already
  // written out of bounds or lost track). Sets meta.length.
  void commit(std::size_t payload_length) noexcept;

  // Makes every record pushed or committed so far visible to the consumer with
  // one release store. Cheap when there is nothing new (no store).
  void publish() noexcept;

  // Slots not held by published, unpublished or unreleased records.
  std::size_t freeSlots() const noexcept;
  // Whether push() of `payload_length` octets would succeed now (counting the
  // padding it would need at the end of the ring).
  bool fits(std::size_t payload_length) const noexcept;

  uint32_t capacitySlots() const noexcept { return capacity_; }
  // Slots pushed but not yet published.
  std::size_t unpublishedSlots() const noexcept { return write_ - published_; }

  // Where the next record goes: every record pushed or committed so far lies
  // below it. With released(), a producer can tell when the consumer is done
  // with a given record (gtpcp's sync persistence: an answer leaves once the
  // persister released the record of its change, after Redis acknowledged it).
  uint64_t position() const noexcept { return write_; }
  // The consumer's released tail, loaded with acquire (pairs with RING-R2): every
  // record below it was popped and released.
  uint64_t released() const noexcept;

 private:
  Producer(RingHeaderShm* header, uint8_t* slots, uint32_t capacity, uint64_t head,
           uint64_t tail) noexcept;
  // Room for a record of `payload_length` octets at write_, writing the padding
  // record first when it would cross the end. Returns the record's first slot,
  // or nullptr when there is no room.
  uint8_t* claim(std::size_t payload_length) noexcept;
  // Room a record of `n` slots needs at write_, padding included.
  uint64_t needed(uint32_t n) const noexcept;
  uint8_t* slotAt(uint64_t position) const noexcept {
    return slots_ + (position & mask_) * kSlotBytes;
  }

  RingHeaderShm* header_;
  uint8_t* slots_;
  uint32_t capacity_;
  uint64_t mask_;
  uint64_t write_;       // next slot to write; head <= write_
  uint64_t published_;   // the value last stored to head
  uint64_t tail_cache_;  // a tail value seen; <= the real tail
  uint8_t* pending_ = nullptr;  // the record reserve() returned, until commit()
  std::size_t pending_max_ = 0;
};

class Consumer {
 public:
  // Validates the ring header in `memory` and starts at the released tail: the
  // records a predecessor popped but did not release are read again.
  static Result<Consumer> attach(void* memory, std::size_t memory_size);

  // The next record (padding skipped), or nullopt when none is published.
  // Calling it again without pop() returns the same record.
  std::optional<RecordView> peek() noexcept;
  // Done with the record peek() returned; no-op when peek() returned nothing.
  void pop() noexcept;
  // Gives every popped slot back to the producer with one release store.
  // Cheap when nothing was popped (no store).
  void release() noexcept;

  // Nothing published left to peek (a snapshot: the producer may publish next).
  bool empty() const noexcept;
  // Published slots not yet popped (padding included): the ring-depth metric.
  std::size_t depthSlots() const noexcept;

  uint32_t capacitySlots() const noexcept { return capacity_; }
  // Times a corrupt record header made the consumer discard the published
  // records (see the protocol): a counter for the application to export.
  uint64_t corruptions() const noexcept { return corruptions_; }

 private:
  Consumer(RingHeaderShm* header, const uint8_t* slots, uint32_t capacity, uint64_t head,
           uint64_t tail) noexcept;
  void discardCorrupt() noexcept;
  const uint8_t* slotAt(uint64_t position) const noexcept {
    return slots_ + (position & mask_) * kSlotBytes;
  }

  RingHeaderShm* header_;
  const uint8_t* slots_;
  uint32_t capacity_;
  uint64_t mask_;
  uint64_t read_;        // next record to read; tail <= read_ <= head
  uint64_t released_;    // the value last stored to tail
  uint64_t head_cache_;  // a head value seen; <= the real head
  uint32_t peeked_ = 0;  // slots of the record peek() returned, until pop()
  uint64_t corruptions_ = 0;
};

namespace detail {
// Prints `what` and aborts: a caller broke the API's contract.
[[noreturn]] void ringMisuse(const char* what) noexcept;

template <class T>
T* at(uint8_t* p) noexcept {
  return static_cast<T*>(static_cast<void*>(p));
}
template <class T>
const T* at(const uint8_t* p) noexcept {
  return static_cast<const T*>(static_cast<const void*>(p));
}
}  // namespace detail

// ---- hot path, inline -------------------------------------------------------

inline uint64_t Producer::needed(uint32_t n) const noexcept {
  const uint64_t to_end = capacity_ - (write_ & mask_);
  return to_end < n ? to_end + n : n;
}

inline uint8_t* Producer::claim(std::size_t payload_length) noexcept {
  if (payload_length > kMaxPayload) return nullptr;
  const uint32_t n = recordSlots(payload_length);
  const uint64_t need = needed(n);
  if (need > capacity_ - (write_ - tail_cache_)) {
    // RING-A2 pairs with RING-R2 in Consumer::release(): the consumer has finished
    // reading every slot below the tail it stored, so they may be overwritten.
    tail_cache_ = header_->tail.load(std::memory_order_acquire);
    if (need > capacity_ - (write_ - tail_cache_)) return nullptr;
  }
  if (need != n) {
    auto* padding = detail::at<RecordHeaderShm>(slotAt(write_));
    padding->slots = static_cast<uint32_t>(need - n);
    padding->type = kRecordPadding;
    write_ += need - n;
  }
  return slotAt(write_);
}

inline bool Producer::push(const DatagramMeta& meta, std::span<const uint8_t> payload) noexcept {
  pending_ = nullptr;
  uint8_t* record = claim(payload.size());
  if (record == nullptr) return false;
  const uint32_t n = recordSlots(payload.size());
  auto* header = detail::at<RecordHeaderShm>(record);
  header->slots = n;
  header->type = kRecordData;
  auto* m = detail::at<DatagramMeta>(record + kRecordMetaOffset);
  *m = meta;
  m->length = static_cast<uint16_t>(payload.size());
  if (!payload.empty()) std::memcpy(record + kRecordPayloadOffset, payload.data(), payload.size());
  write_ += n;
  return true;
}

inline uint8_t* Producer::reserve(const DatagramMeta& meta, std::size_t max_payload) noexcept {
  pending_ = nullptr;
  uint8_t* record = claim(max_payload);
  if (record == nullptr) return nullptr;
  auto* header = detail::at<RecordHeaderShm>(record);
  header->slots = recordSlots(max_payload);
  header->type = kRecordData;
  auto* m = detail::at<DatagramMeta>(record + kRecordMetaOffset);
  *m = meta;
  m->length = static_cast<uint16_t>(max_payload);
  pending_ = record;
  pending_max_ = max_payload;
  return record + kRecordPayloadOffset;
}

inline void Producer::commit(std::size_t payload_length) noexcept {
  if (pending_ == nullptr) detail::ringMisuse("Producer::commit() without a successful reserve()");
  if (payload_length > pending_max_) {
    detail::ringMisuse("Producer::commit() of more octets than reserve() allowed");
  }
  // The record may shrink: fewer slots, so it still fits where it was claimed.
  const uint32_t n = recordSlots(payload_length);
  detail::at<RecordHeaderShm>(pending_)->slots = n;
  detail::at<DatagramMeta>(pending_ + kRecordMetaOffset)->length =
      static_cast<uint16_t>(payload_length);
  write_ += n;
  pending_ = nullptr;
}

inline void Producer::publish() noexcept {
  if (write_ == published_) return;
  // RING-R1 pairs with RING-A1 in Consumer::peek(): the records written below write_
  // are complete before the consumer can see this head.
  header_->head.store(write_, std::memory_order_release);
  published_ = write_;
}

inline std::size_t Producer::freeSlots() const noexcept {
  // Relaxed: an estimate for the caller, which reads no slot with it; push()
  // reloads tail with acquire (RING-A2) before overwriting anything.
  const uint64_t tail = header_->tail.load(std::memory_order_relaxed);
  return capacity_ - (write_ - tail);
}

inline bool Producer::fits(std::size_t payload_length) const noexcept {
  if (payload_length > kMaxPayload) return false;
  // Relaxed, as in freeSlots(). The push() that follows sees this tail or a
  // later one (its acquire load cannot read an older value than this load did).
  const uint64_t tail = header_->tail.load(std::memory_order_relaxed);
  return needed(recordSlots(payload_length)) <= capacity_ - (write_ - tail);
}

inline std::optional<RecordView> Consumer::peek() noexcept {
  // A padding record is always followed by a data record at slot 0 (or by
  // nothing yet), never by another padding: two rounds suffice.
  for (int round = 0; round < 2; ++round) {
    if (read_ == head_cache_) {
      // RING-A1 pairs with RING-R1 in Producer::publish(): every record below this head
      // is completely written.
      head_cache_ = header_->head.load(std::memory_order_acquire);
      if (read_ == head_cache_) return std::nullopt;
    }
    // More published beyond this consumer than the ring holds (or a head
    // behind it): head and tail disagree. Reading on would serve the ring's
    // earlier laps again as new records, for ever when they are all of one
    // size; discarded like a corrupt record instead.
    if (head_cache_ - read_ > capacity_) break;
    const uint8_t* record = slotAt(read_);
    const auto* header = detail::at<RecordHeaderShm>(record);
    const uint32_t n = header->slots;
    if (n == 0 || n > head_cache_ - read_ || n > capacity_ - (read_ & mask_)) break;
    if (header->type == kRecordPadding) {
      read_ += n;
      continue;
    }
    const auto* meta = detail::at<DatagramMeta>(record + kRecordMetaOffset);
    if (header->type != kRecordData || recordSlots(meta->length) != n) break;
    peeked_ = n;
    return RecordView{meta, {record + kRecordPayloadOffset, meta->length}};
  }
  discardCorrupt();
  return std::nullopt;
}

inline void Consumer::pop() noexcept {
  read_ += peeked_;
  peeked_ = 0;
}

inline void Consumer::release() noexcept {
  if (read_ == released_) return;
  // RING-R2 pairs with RING-A2 in Producer::claim(): the reads of every slot below
  // read_ are finished before the producer can see this tail.
  header_->tail.store(read_, std::memory_order_release);
  released_ = read_;
}

// RING-A2 (as in claim()): pairs with RING-R2 in Consumer::release().
inline uint64_t Producer::released() const noexcept { return header_->tail.load(std::memory_order_acquire); }

inline bool Consumer::empty() const noexcept {
  if (read_ != head_cache_) return false;
  // Relaxed: a hint that reads no slot; peek() does the acquire (RING-A1) first.
  return read_ == header_->head.load(std::memory_order_relaxed);
}

inline std::size_t Consumer::depthSlots() const noexcept {
  // Relaxed: a metric, no slot is read with it.
  return header_->head.load(std::memory_order_relaxed) - read_;
}

}  // namespace gtpcp::ring
