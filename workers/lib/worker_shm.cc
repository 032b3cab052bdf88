#include "workers/lib/worker_shm.h"

namespace gtpcp::worker {

namespace {
constexpr uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

WorkerLayout WorkerLayout::compute(uint32_t workers, uint32_t index, uint32_t per_partition,
                                   uint32_t transactions) noexcept {
  WorkerLayout l;
  l.workers = workers;
  l.index = index;
  l.per_partition = per_partition;
  l.transactions = transactions;
  // Partitions index, index + W, ... below 1024.
  l.local_partitions = (kPartitions - index + workers - 1) / workers;
  l.partitions_offset = alignUp(sizeof(WorkerShmHeader), 64);
  l.sessions_offset = alignUp(l.partitions_offset + uint64_t{l.local_partitions} * sizeof(PartitionShm), 4096);
  l.transactions_offset =
      alignUp(l.sessions_offset + uint64_t{l.local_partitions} * per_partition * sizeof(SessionShm), 4096);
  l.total = alignUp(l.transactions_offset + uint64_t{transactions} * sizeof(TransactionShm), 4096);
  return l;
}

}  // namespace gtpcp::worker
