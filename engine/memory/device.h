// Where models compute: the CPU, a CUDA/ROCm GPU (when libtorch has one), or the simulated
// accelerator, a device of fixed capacity whose allocations are really counted and which
// fails with the out-of-memory error a real device gives. Budgets, the model cache and
// offload talk to devices only through this interface.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "memory/memory_pool.h"

namespace kiln::memory {

enum class DeviceKind { Invalid = 0, Cpu, Cuda, Simulated };
const char* deviceKindName(DeviceKind kind) noexcept;

struct DeviceMemory {
  int64_t total_bytes = 0;
  // What live tensors leave: memory the caching allocator keeps for reuse counts as free.
  int64_t free_bytes = 0;
  int64_t allocated_bytes = 0;  // held by live tensors
  int64_t reserved_bytes = 0;   // allocated plus the allocator's cache
  int64_t peak_allocated_bytes = 0;
  int64_t pinned_bytes = 0;           // pinned host memory held for this device (live copies)
  int64_t pinned_reserved_bytes = 0;  // pinned host memory held, cached blocks included
  int64_t pinned_peak_bytes = 0;
  int64_t pinned_limit_bytes = 0;  // 0 where the device has no pinned memory
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceKind kind() const noexcept = 0;
  // "cpu", "cuda:0", "sim:8.00 GiB"
  virtual std::string name() const = 0;
  virtual DeviceMemory memory() const = 0;
  // Gives the allocators' cached blocks back, the device's and the pinned host memory's;
  // returns the bytes released.
  virtual int64_t emptyCache() = 0;
  virtual void resetPeak() = 0;

  // A copy of `t` in this device's memory (the same tensor when it is there already).
  virtual at::Tensor upload(const at::Tensor& t) const = 0;
  // A copy of `t` in ordinary host memory (the same tensor when it is there already).
  virtual at::Tensor download(const at::Tensor& t) const = 0;
  // True when `t`'s storage is in this device's memory.
  virtual bool holds(const at::Tensor& t) const = 0;
  // True when weights on the host must be copied here before use (false for the CPU).
  bool isAccelerator() const noexcept { return kind() != DeviceKind::Cpu; }

  // The pool that computation on this device allocates from, for the simulated device
  // (null elsewhere; see DeviceScope).
  virtual std::shared_ptr<MemoryPool> computePool() const { return nullptr; }
  // Where tensors computed on this device live: cuda:N for a GPU, the CPU for the CPU and
  // the simulated device (whose memory is host memory charged to its pool).
  virtual at::Device computeDevice() const { return at::kCPU; }

  // Pinned host memory, which the device copies from asynchronously. pin() returns a copy
  // of a host tensor there and throws c10::OutOfMemoryError past the limit; devices
  // without pinned memory (the CPU) return the tensor itself.
  virtual bool hasPinnedMemory() const noexcept { return false; }
  virtual at::Tensor pin(const at::Tensor& host) const { return host; }
  virtual bool isPinned(const at::Tensor&) const { return false; }
  // The most pinned bytes allowed from now on (what is pinned already stays pinned).
  virtual void setPinnedLimit(int64_t) const {}
};

// While alive, computation on this thread runs on `device`: computeDevice() names it (so
// activations are created there), a GPU is the thread's current device, and tensors the
// thread creates on the host are charged to the simulated device's pool. Nestable.
class DeviceScope {
 public:
  explicit DeviceScope(const Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  PoolScope scope_;
  c10::OptionalDeviceGuard guard_;
  at::Device previous_;
};

// The device the current DeviceScope computes on (the CPU outside any). Pipelines create
// latents, noise, timesteps and token ids here; models follow their inputs' device.
at::Device computeDevice() noexcept;

// The CPU: host memory as the operating system reports it.
class CpuDevice final : public Device {
 public:
  DeviceKind kind() const noexcept override { return DeviceKind::Cpu; }
  std::string name() const override { return "cpu"; }
  DeviceMemory memory() const override;
  int64_t emptyCache() override { return 0; }
  void resetPeak() override {}
  at::Tensor upload(const at::Tensor& t) const override { return download(t); }
  at::Tensor download(const at::Tensor& t) const override;
  bool holds(const at::Tensor& t) const override;
};

// A device of `capacity_bytes` whose memory is host memory charged to a counted pool.
class SimulatedDevice final : public Device {
 public:
  explicit SimulatedDevice(int64_t capacity_bytes);
  DeviceKind kind() const noexcept override { return DeviceKind::Simulated; }
  std::string name() const override;
  DeviceMemory memory() const override;
  int64_t emptyCache() override { return pool_->emptyCache() + pinned_->emptyCache(); }
  void resetPeak() override {
    pool_->resetPeak();
    pinned_->resetPeak();
  }
  at::Tensor upload(const at::Tensor& t) const override;
  at::Tensor download(const at::Tensor& t) const override;
  bool holds(const at::Tensor& t) const override;
  std::shared_ptr<MemoryPool> computePool() const override { return pool_; }
  MemoryPool& pool() const noexcept { return *pool_; }
  // Tensors copied onto this device so far (tests count uploads with it).
  int64_t uploadCount() const noexcept { return uploads_.load(); }

  bool hasPinnedMemory() const noexcept override { return true; }
  at::Tensor pin(const at::Tensor& host) const override;
  bool isPinned(const at::Tensor& t) const override;
  void setPinnedLimit(int64_t bytes) const override;
  MemoryPool& pinnedPool() const noexcept { return *pinned_; }

 private:
  std::shared_ptr<MemoryPool> pool_;
  std::shared_ptr<MemoryPool> pinned_;  // host memory charged as pinned, unlimited until set
  mutable std::atomic<int64_t> uploads_{0};
};

// "cpu", "sim:BYTES" ("sim:8G", "sim:512MiB") or "cuda:N". Throws kiln::Error
// (InvalidArgument) for anything else, and for cuda when this build has no GPU support.
std::unique_ptr<Device> makeDevice(std::string_view spec);

// A contiguous copy of `src` made in the current pool scope (see PoolScope).
at::Tensor contiguousCopy(const at::Tensor& src);

// A pinned-memory pool's counts, into the device's memory figures.
void addPinnedMemory(DeviceMemory& m, const MemoryPool& pinned);

// Limits a pinned-memory pool to what it holds now plus `bytes`, its cache given back.
void limitPinnedPool(MemoryPool& pool, int64_t bytes);

// Host memory the operating system can still give (MemAvailable), or nothing if unknown.
std::optional<int64_t> availableHostBytes();

}  // namespace kiln::memory
