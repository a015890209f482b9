// What Kiln needs from a GPU libtorch that its device-generic API does not give: the
// caching allocator's statistics, the driver's free and total memory, and each GPU's
// name and capabilities. Implemented in gpu/gpu_backend_cuda.cpp, which is compiled only
// when CMake finds a CUDA or ROCm libtorch (ROCm presents its GPUs as libtorch's "cuda"
// device); everything else about a GPU goes through libtorch's device-generic API.
#pragma once

#include <cstdint>
#include <string>

#include "memory/device.h"

namespace kiln::memory {

struct GpuProperties {
  std::string name;  // "NVIDIA GeForce RTX 4090", "AMD Radeon PRO W7900"
  std::string arch;  // "sm_89", "gfx1100"
  int64_t total_bytes = 0;
  bool rocm = false;
  bool bf16 = false;  // computes bfloat16 natively (Ampere or newer, CDNA2+, RDNA3+)
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual const char* name() const noexcept = 0;  // "CUDA", "ROCm"
  // GPUs the driver shows this process (0 when there is no driver or no GPU).
  virtual int deviceCount() const = 0;
  virtual GpuProperties properties(int index) const = 0;
  // Total and free from the driver; allocated, reserved and peak from libtorch's caching
  // allocator. Free counts the allocator's cached blocks as free (see DeviceMemory).
  virtual DeviceMemory memory(int index) const = 0;
  // Gives the caching allocators' unused blocks back (the GPU's and pinned host memory's);
  // returns the device bytes released.
  virtual int64_t emptyCache(int index) const = 0;
  virtual void resetPeak(int index) const = 0;
  // Waits for everything queued on the GPU.
  virtual void synchronize(int index) const = 0;
};

// This build's GPU backend, or null when its libtorch has no GPU support.
const GpuBackend* gpuBackend() noexcept;

}  // namespace kiln::memory
