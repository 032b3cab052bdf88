#include "worker_layout.h"

namespace gtpcp::worker {

namespace {
constexpr uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

WorkerLayout WorkerLayout::compute(uint32_t workers, uint32_t index, uint32_t per_partition,
                                   uint32_t transactions, uint64_t answer_bytes) noexcept {
  WorkerLayout l;
  l.workers = workers;
  l.index = index;
  l.per_partition = per_partition;
  l.transactions = transactions;
  l.answer_bytes = alignUp(answer_bytes, 8);
  // Partitions index, index + W, ... below 1024.
  l.local_partitions = (kPartitions - index + workers - 1) / workers;
  l.partitions_offset = alignUp(sizeof(WorkerShmHeader), 64);
  l.sessions_offset = alignUp(l.partitions_offset + uint64_t{l.local_partitions} * sizeof(PartitionShm), 4096);
  l.transactions_offset =
      alignUp(l.sessions_offset + uint64_t{l.local_partitions} * per_partition * sizeof(SessionShm), 4096);
  l.by_response_offset = alignUp(l.transactions_offset + uint64_t{transactions} * sizeof(TransactionShm), 4096);
  // Indexes at most half full: probes stay short.
  const uint64_t index_bytes = uint64_t{transactions} * 2 * sizeof(TransactionIndexShm);
  l.by_requester_offset = alignUp(l.by_response_offset + index_bytes, 4096);
  l.answers_offset = alignUp(l.by_requester_offset + index_bytes, 4096);
  l.total = alignUp(l.answers_offset + l.answer_bytes, 4096);
  return l;
}

TransactionMemory WorkerLayout::transactionMemory(uint8_t* base, WorkerShmHeader& header) const noexcept {
  TransactionMemory m;
  m.records = reinterpret_cast<TransactionShm*>(base + transactions_offset);
  m.capacity = transactions;
  m.by_response = reinterpret_cast<TransactionIndexShm*>(base + by_response_offset);
  m.by_requester = reinterpret_cast<TransactionIndexShm*>(base + by_requester_offset);
  m.answers = base + answers_offset;
  m.answer_bytes = answer_bytes;
  m.answer_head = &header.answer_head;
  m.high_water = &header.transactions_high_water;
  return m;
}

}  // namespace gtpcp::worker
