// The GPU backend for a CUDA or ROCm libtorch. Compiled only when CMake finds one (see
// engine/CMakeLists.txt); it is the one file in Kiln that includes a GPU runtime header.
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <string>

#include "kiln/error.h"
#include "memory/gpu_backend.h"

#if defined(USE_ROCM)
#include <c10/hip/HIPCachingAllocator.h>
#include <hip/hip_runtime_api.h>
#else
#include <ATen/cuda/CachingHostAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace kiln::memory {
namespace {

#if defined(USE_ROCM)
namespace gpu_alloc = c10::hip::HIPCachingAllocator;
using DeviceProp = hipDeviceProp_t;
#define KILN_GPU_RT(call) hip##call
constexpr const char* kBackend = "ROCm";
#else
namespace gpu_alloc = c10::cuda::CUDACachingAllocator;
using DeviceProp = cudaDeviceProp;
#define KILN_GPU_RT(call) cuda##call
constexpr const char* kBackend = "CUDA";
#endif

// The statistics arrays are indexed by StatType; AGGREGATE (all pools together) is 0.
constexpr std::size_t kAggregate = 0;

template <typename Status>
void check(Status status, const char* what) {
  if (status != KILN_GPU_RT(Success))
    throw Error(ErrorKind::Internal, std::string(kBackend) + " " + what +
                                         " failed: " + KILN_GPU_RT(GetErrorString)(status));
}

c10::DeviceGuard guardFor(int index) {
  return c10::DeviceGuard(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
}

class CudaBackend final : public GpuBackend {
 public:
  const char* name() const noexcept override { return kBackend; }

  int deviceCount() const override {
    int count = 0;
    if (KILN_GPU_RT(GetDeviceCount)(&count) != KILN_GPU_RT(Success)) {
      (void)KILN_GPU_RT(GetLastError)();  // no driver or no GPU: clear the sticky error
      return 0;
    }
    return count;
  }

  GpuProperties properties(int index) const override {
    DeviceProp prop{};
    check(KILN_GPU_RT(GetDeviceProperties)(&prop, index), "reading the GPU's properties");
    GpuProperties p;
    p.name = prop.name;
    p.total_bytes = static_cast<int64_t>(prop.totalGlobalMem);
#if defined(USE_ROCM)
    p.rocm = true;
    p.arch = std::string(prop.gcnArchName).substr(0, std::string(prop.gcnArchName).find(':'));
    // bf16 in hardware: CDNA and later (gfx908, gfx90a, gfx94x), RDNA3 and later (gfx11xx, 12xx).
    p.bf16 = p.arch.rfind("gfx908", 0) == 0 || p.arch.rfind("gfx90a", 0) == 0 ||
             p.arch.rfind("gfx94", 0) == 0 || p.arch.rfind("gfx95", 0) == 0 ||
             p.arch.rfind("gfx11", 0) == 0 || p.arch.rfind("gfx12", 0) == 0;
#else
    p.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    p.bf16 = prop.major >= 8;  // Ampere or newer
#endif
    return p;
  }

  DeviceMemory memory(int index) const override {
    const c10::DeviceGuard guard = guardFor(index);
    std::size_t free = 0, total = 0;
    check(KILN_GPU_RT(MemGetInfo)(&free, &total), "reading the GPU's free memory");
    const auto stats = gpu_alloc::getDeviceStats(static_cast<c10::DeviceIndex>(index));
    DeviceMemory m;
    m.total_bytes = static_cast<int64_t>(total);
    m.allocated_bytes = stats.allocated_bytes[kAggregate].current;
    m.reserved_bytes = stats.reserved_bytes[kAggregate].current;
    m.peak_allocated_bytes = stats.allocated_bytes[kAggregate].peak;
    // The driver's free memory plus the blocks the caching allocator keeps for reuse.
    m.free_bytes =
        static_cast<int64_t>(free) + std::max<int64_t>(0, m.reserved_bytes - m.allocated_bytes);
    return m;
  }

  int64_t emptyCache(int index) const override {
    const int64_t before = memory(index).reserved_bytes;
    gpu_alloc::emptyCache();
#if !defined(USE_ROCM)
#pragma GCC diagnostic push  // deprecated from 2.8 for at::getHostAllocator, still there
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    at::cuda::CachingHostAllocator_emptyCache();
#pragma GCC diagnostic pop
#endif
    return std::max<int64_t>(0, before - memory(index).reserved_bytes);
  }

  void resetPeak(int index) const override {
    gpu_alloc::resetPeakStats(static_cast<c10::DeviceIndex>(index));
  }

  void synchronize(int index) const override {
    const c10::DeviceGuard guard = guardFor(index);
    check(KILN_GPU_RT(DeviceSynchronize)(), "waiting for the GPU");
  }
};

}  // namespace

const GpuBackend* gpuBackend() noexcept {
  static const CudaBackend backend;
  return &backend;
}

}  // namespace kiln::memory
