#include "memory/gpu_backend.h"

namespace kiln::memory {

#if !KILN_GPU_TORCH
// A CPU-only libtorch: no GPU backend (gpu/gpu_backend_cuda.cpp defines it otherwise).
const GpuBackend* gpuBackend() noexcept {
  return nullptr;
}
#endif

}  // namespace kiln::memory
