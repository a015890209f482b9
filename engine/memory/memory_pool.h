// Counted memory pools behind libtorch's CPU allocator: the simulated accelerator's memory
// and the pinned-host budget. Allocations a thread makes while a PoolScope names a pool are
// charged to that pool. A pool with a capacity refuses an allocation that would exceed it
// with c10::OutOfMemoryError, the error a real device's allocator throws, and keeps freed
// blocks reserved for reuse until emptyCache(), the way a GPU caching allocator does: so
// the difference between "allocated" and "reserved" is real here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace c10 {
struct Allocator;
struct Storage;
}  // namespace c10

namespace kiln::memory {

struct PoolStats {
  int64_t capacity_bytes = 0;        // 0: unlimited
  int64_t allocated_bytes = 0;       // held by live tensors
  int64_t reserved_bytes = 0;        // allocated plus cached blocks not yet given back
  int64_t peak_allocated_bytes = 0;  // since creation or resetPeak()
  int64_t allocations = 0;           // blocks handed out (new or reused)
  int64_t failed_allocations = 0;    // refused for lack of capacity
};

class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  // Pools live as long as any block they handed out: create them with make_shared.
  // Blocks come from `blocks` (libtorch's pinned allocator for a GPU's pinned host memory)
  // or, when it is null, from ordinary host memory.
  MemoryPool(std::string name, int64_t capacity_bytes, c10::Allocator* blocks = nullptr);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  const std::string& name() const noexcept { return name_; }
  PoolStats stats() const;
  // Bytes live tensors leave free: capacity minus allocated (cached blocks count as free,
  // since an allocation that needs them empties the cache first). Unlimited pools: -1.
  int64_t freeBytes() const;
  // Gives cached blocks back; returns the bytes released.
  int64_t emptyCache();
  void resetPeak();
  void setCapacity(int64_t bytes);
  // Allocations larger than this fail even below capacity (simulates fragmentation and
  // lets tests fail an allocation at an exact point); 0 disables.
  void setLargestAllocation(int64_t bytes);

  // True when `storage`'s memory came from this pool.
  bool owns(const c10::Storage& storage) const;

  // Used by the allocator: a block of at least `bytes` charged to this pool.
  void* allocateBlock(std::size_t bytes, std::size_t* granted);
  void releaseBlock(void* data, std::size_t granted);

 private:
  void* newBlock(std::size_t bytes) const;
  void freeBlock(void* data) const;

  std::string name_;
  c10::Allocator* blocks_;
  mutable std::mutex mutex_;
  PoolStats stats_;
  int64_t largest_allocation_ = 0;
  std::multimap<std::size_t, void*> cached_;  // size -> block
};

// Charges allocations on this thread to `pool` while alive (nestable; a null pool means
// ordinary host memory). Installs the counting allocator on first use.
class PoolScope {
 public:
  explicit PoolScope(std::shared_ptr<MemoryPool> pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  std::shared_ptr<MemoryPool> pool_;
  MemoryPool* previous_ = nullptr;
};

// The pool whose memory `storage` is, or null for ordinary memory.
MemoryPool* poolOf(const c10::Storage& storage) noexcept;

// The pool allocations on this thread are charged to now (null: host memory).
MemoryPool* currentPool() noexcept;

}  // namespace kiln::memory
