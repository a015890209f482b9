#include "memory/memory_pool.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/Storage.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <unordered_map>

#include "core/torch_compat.h"
#include "kiln/units.h"

namespace kiln::memory {
namespace {

thread_local MemoryPool* t_pool = nullptr;

// Every DataPtr the allocator hands out has the data pointer as its context and one
// deleter, as libtorch's raw_allocate/raw_deallocate require; pool blocks are found in a
// side table, consulted only while any pool block is alive.
struct Block {
  std::shared_ptr<MemoryPool> pool;
  std::size_t granted = 0;
};
std::mutex g_blocks_mutex;
std::unordered_map<void*, Block> g_blocks;
std::atomic<int64_t> g_live_blocks{0};
c10::DeleterFnPtr g_base_deleter = nullptr;

void countingDelete(void* data) {
  if (g_live_blocks.load(std::memory_order_acquire) > 0) {
    Block block;
    {
      std::lock_guard lock(g_blocks_mutex);
      if (auto it = g_blocks.find(data); it != g_blocks.end()) {
        block = std::move(it->second);
        g_blocks.erase(it);
        g_live_blocks.fetch_sub(1, std::memory_order_release);
      }
    }
    if (block.pool) {
      block.pool->releaseBlock(data, block.granted);
      return;
    }
  }
  g_base_deleter(data);
}

// libtorch has one CPU allocator per process, so the hook that routes scoped allocations
// to pools is necessarily process-wide; without a scope it forwards to the allocator it
// replaced and adds one thread-local read per allocation.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(std::size_t bytes) KILN_ALLOCATE_CONST override {
    MemoryPool* pool = t_pool;
    if (pool == nullptr) {
      c10::DataPtr d = base_->allocate(bytes);
      if (d.get() == nullptr || d.get() != d.get_context() || d.get_deleter() != g_base_deleter)
        return d;
      void* data = d.release_context();
      return {data, data, &countingDelete, c10::Device(c10::DeviceType::CPU)};
    }
    std::size_t granted = 0;
    void* data = pool->allocateBlock(bytes, &granted);
    {
      std::lock_guard lock(g_blocks_mutex);
      g_blocks[data] = Block{pool->shared_from_this(), granted};
      g_live_blocks.fetch_add(1, std::memory_order_release);
    }
    return {data, data, &countingDelete, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &countingDelete; }
  KILN_ALLOCATOR_COPY_DATA

 private:
  c10::Allocator* base_;
};

void installCountingAllocator() {
  static CountingAllocator* allocator = [] {
    c10::Allocator* base = c10::GetCPUAllocator();
    g_base_deleter = base->raw_deleter();
    if (g_base_deleter == nullptr) g_base_deleter = &c10::free_cpu;
    auto* a = new CountingAllocator(base);
    c10::SetCPUAllocator(a, /*priority=*/100);
    return a;
  }();
  (void)allocator;
}

// Blocks are rounded up like a GPU caching allocator's, so reuse is likely.
std::size_t roundUp(std::size_t bytes) {
  constexpr std::size_t kQuantum = 512;
  return bytes == 0 ? kQuantum : (bytes + kQuantum - 1) / kQuantum * kQuantum;
}

}  // namespace

MemoryPool::MemoryPool(std::string name, int64_t capacity_bytes, c10::Allocator* blocks)
    : name_(std::move(name)), blocks_(blocks) {
  stats_.capacity_bytes = capacity_bytes;
}

MemoryPool::~MemoryPool() {
  for (auto& [size, data] : cached_) freeBlock(data);
}

// Blocks from another allocator (libtorch's pinned one) are held as the DataPtrs it gave,
// whose context need not be the data, and go back to it as soon as they are free: it may
// still be copying from them, and it waits on those copies' events before it hands a
// block out again, which a cache of Kiln's could not.
namespace {
std::mutex g_owned_mutex;
std::unordered_map<void*, c10::DataPtr> g_owned;
}  // namespace

void* MemoryPool::newBlock(std::size_t bytes) const {
  if (!blocks_) return c10::alloc_cpu(bytes);
  c10::DataPtr block = blocks_->allocate(bytes);
  void* data = block.get();
  if (data == nullptr) C10_THROW_ERROR(OutOfMemoryError, name_ + ": the allocator gave no memory");
  std::lock_guard lock(g_owned_mutex);
  g_owned.emplace(data, std::move(block));
  return data;
}

void MemoryPool::freeBlock(void* data) const {
  if (!blocks_) {
    c10::free_cpu(data);
    return;
  }
  c10::DataPtr block;
  {
    std::lock_guard lock(g_owned_mutex);
    const auto it = g_owned.find(data);
    if (it == g_owned.end()) return;
    block = std::move(it->second);
    g_owned.erase(it);
  }
}  // `block` gives the memory back here

PoolStats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

int64_t MemoryPool::freeBytes() const {
  std::lock_guard lock(mutex_);
  return stats_.capacity_bytes > 0 ? stats_.capacity_bytes - stats_.allocated_bytes : -1;
}

int64_t MemoryPool::emptyCache() {
  std::lock_guard lock(mutex_);
  int64_t released = 0;
  for (auto& [size, data] : cached_) {
    freeBlock(data);
    released += static_cast<int64_t>(size);
  }
  cached_.clear();
  stats_.reserved_bytes -= released;
  return released;
}

void MemoryPool::resetPeak() {
  std::lock_guard lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

void MemoryPool::setCapacity(int64_t bytes) {
  std::lock_guard lock(mutex_);
  stats_.capacity_bytes = bytes;
}

void MemoryPool::setLargestAllocation(int64_t bytes) {
  std::lock_guard lock(mutex_);
  largest_allocation_ = bytes;
}

bool MemoryPool::owns(const c10::Storage& storage) const {
  return poolOf(storage) == this;
}

MemoryPool* poolOf(const c10::Storage& storage) noexcept {
  const c10::DataPtr& ptr = storage.data_ptr();
  if (ptr.get_deleter() != &countingDelete) return nullptr;
  std::lock_guard lock(g_blocks_mutex);
  const auto it = g_blocks.find(ptr.get());
  return it == g_blocks.end() ? nullptr : it->second.pool.get();
}

void* MemoryPool::allocateBlock(std::size_t bytes, std::size_t* granted) {
  const std::size_t size = roundUp(bytes);
  std::lock_guard lock(mutex_);
  const auto n = static_cast<int64_t>(size);
  if (auto it = cached_.find(size); it != cached_.end()) {
    void* data = it->second;
    cached_.erase(it);
    stats_.allocated_bytes += n;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    ++stats_.allocations;
    *granted = size;
    return data;
  }
  const int64_t cap = stats_.capacity_bytes;
  if (cap > 0 && stats_.reserved_bytes + n > cap) {
    // Like a caching allocator: give the cache back and retry before failing.
    for (auto& [cached_size, data] : cached_) {
      freeBlock(data);
      stats_.reserved_bytes -= static_cast<int64_t>(cached_size);
    }
    cached_.clear();
  }
  if ((cap > 0 && stats_.reserved_bytes + n > cap) ||
      (largest_allocation_ > 0 && n > largest_allocation_)) {
    ++stats_.failed_allocations;
    const int64_t free = cap > 0 ? cap - stats_.allocated_bytes : 0;
    C10_THROW_ERROR(OutOfMemoryError, name_ + " out of memory: tried to allocate " +
                                          formatBytes(n) + " (" +
                                          formatBytes(stats_.allocated_bytes) + " allocated, " +
                                          formatBytes(free) + " free of " + formatBytes(cap) + ")");
  }
  void* data = newBlock(size);
  stats_.reserved_bytes += n;
  stats_.allocated_bytes += n;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  ++stats_.allocations;
  *granted = size;
  return data;
}

void MemoryPool::releaseBlock(void* data, std::size_t granted) {
  std::lock_guard lock(mutex_);
  stats_.allocated_bytes -= static_cast<int64_t>(granted);
  if (blocks_) {  // straight back to its allocator (see newBlock)
    stats_.reserved_bytes -= static_cast<int64_t>(granted);
    freeBlock(data);
    return;
  }
  cached_.emplace(granted, data);
}

PoolScope::PoolScope(std::shared_ptr<MemoryPool> pool) : pool_(std::move(pool)), previous_(t_pool) {
  installCountingAllocator();
  t_pool = pool_.get();
}

PoolScope::~PoolScope() {
  t_pool = previous_;
}

MemoryPool* currentPool() noexcept {
  return t_pool;
}

}  // namespace kiln::memory
