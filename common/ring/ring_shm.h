// What the SPSC ring places in shared memory: its header (constants, head,
// tail), the record header at the start of each record, and DatagramMeta.
// The protocol that governs these fields is written at the top of ring.h.
// Plain data only: no pointers, no std::string (STYLE.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gtpcp::ring {

// One slot is one cache line: a record starts on a line of its own, so the
// producer writing record k+1 never shares a line with the consumer reading k.
inline constexpr std::size_t kSlotBytes = 64;

// "GTPCRNG1" in a hex dump (little-endian).
inline constexpr uint64_t kRingMagic = 0x31474e5243505447ULL;
// Bump on any change to RingHeaderShm, RecordHeaderShm, DatagramMeta or the
// slot arithmetic.
inline constexpr uint32_t kRingLayoutVersion = 1;

// What the forwarder learned about a datagram besides its octets. Trivially
// copyable and fixed-size: it is copied into the ring with the payload.
struct DatagramMeta {
  uint64_t receive_ns;       // CLOCK_MONOTONIC ns at reception (0 when not applicable)
  uint8_t peer_address[16];  // IPv4 in the first 4 octets
  uint16_t peer_port;        // host order
  uint16_t length;           // payload octets (0..65535); set by push()/commit()
  uint8_t peer_family;       // AF_INET or AF_INET6
  uint8_t local_socket;      // the forwarder socket it arrived on / must leave by
  uint16_t flags;            // the application's: message class etc.
  uint32_t aux;              // the application's: e.g. partition
  uint32_t reserved;         // zero; names the tail padding so that no octet is undefined
};

static_assert(std::is_trivially_copyable_v<DatagramMeta>);
static_assert(std::is_standard_layout_v<DatagramMeta>);
static_assert(sizeof(DatagramMeta) == 40);
static_assert(std::has_unique_object_representations_v<DatagramMeta>, "no hidden padding");

// Values of RecordHeaderShm::type. Neither is 0, so a slot the producer never
// wrote (zero-filled) is recognised as corrupt rather than as a record.
inline constexpr uint32_t kRecordData = 0x44415441;     // "DATA"
inline constexpr uint32_t kRecordPadding = 0x50414444;  // "PADD": skip to the ring's end

// At the start of a record's first slot. Written by the producer before the
// record is published, read by the consumer after; never changed in between.
struct RecordHeaderShm {
  uint32_t slots;  // slots this record occupies, this one included (>= 1)
  uint32_t type;   // kRecordData or kRecordPadding
};

// A data record: RecordHeaderShm, DatagramMeta, then the payload octets.
inline constexpr std::size_t kRecordMetaOffset = sizeof(RecordHeaderShm);
inline constexpr std::size_t kRecordPayloadOffset = kRecordMetaOffset + sizeof(DatagramMeta);
static_assert(kRecordMetaOffset % alignof(DatagramMeta) == 0);
static_assert(kRecordPayloadOffset == 48);

// The ring header, at the start of the memory given to initRing(). Three
// groups, each on its own cache line with an empty line after it: the L2
// spatial prefetcher of Intel cores pulls cache lines in 128-octet pairs, and
// head and tail must not share a pair either.
struct RingHeaderShm {
  // Writer: initRing(), `magic` last with a release store; constant afterwards.
  // Readers: Producer::attach() and Consumer::attach().
  std::atomic<uint64_t> magic;
  uint32_t layout_version;
  uint32_t capacity_slots;  // a power of two
  uint8_t constants_padding[2 * kSlotBytes - 16];

  // Writer: the producer only (Producer::publish()), release stores.
  // Readers: the consumer (acquire), the producer's own attach (acquire).
  std::atomic<uint64_t> head;
  uint8_t head_padding[2 * kSlotBytes - 8];

  // Writer: the consumer only (Consumer::release()), release stores.
  // Readers: the producer (acquire), the consumer's own attach (acquire).
  std::atomic<uint64_t> tail;
  uint8_t tail_padding[2 * kSlotBytes - 8];
};

inline constexpr std::size_t kRingHeaderBytes = sizeof(RingHeaderShm);

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "head and tail are shared between processes: they must not hide a lock");
static_assert(std::is_standard_layout_v<RingHeaderShm>);
static_assert(offsetof(RingHeaderShm, head) - offsetof(RingHeaderShm, magic) >= 2 * kSlotBytes);
static_assert(offsetof(RingHeaderShm, tail) - offsetof(RingHeaderShm, head) >= 2 * kSlotBytes,
              "head and tail on separate cache lines (and prefetch pairs)");
static_assert(offsetof(RingHeaderShm, tail) - offsetof(RingHeaderShm, head) >= 64);
static_assert(kRingHeaderBytes == 6 * kSlotBytes);
static_assert(kRingHeaderBytes % kSlotBytes == 0, "slots start on a cache line");

}  // namespace gtpcp::ring
