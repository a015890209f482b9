#include "memory/gpu_device.h"

#include <ATen/detail/CUDAHooksInterface.h>

#include <algorithm>

#include "kiln/error.h"
#include "kiln/units.h"

namespace kiln::memory {
namespace {

c10::Allocator* pinnedAllocator() {
  return at::detail::getCUDAHooks().getPinnedMemoryAllocator();
}

}  // namespace

GpuDevice::GpuDevice(const GpuBackend& backend, int index)
    : backend_(backend),
      index_(index),
      device_(at::kCUDA, static_cast<c10::DeviceIndex>(index)),
      pinned_(std::make_shared<MemoryPool>("pinned host memory", 0, pinnedAllocator())) {
  const int count = backend.deviceCount();
  if (index < 0 || index >= count)
    throw Error(ErrorKind::InvalidArgument,
                count == 0
                    ? "cuda:" + std::to_string(index) +
                          " is not available: this machine shows Kiln no GPU (is the " +
                          backend.name() + " driver installed and the GPU visible?)"
                    : "cuda:" + std::to_string(index) + " does not exist; this machine has " +
                          std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
                          ", cuda:0 to cuda:" + std::to_string(count - 1));
  properties_ = backend.properties(index);
}

DeviceMemory GpuDevice::memory() const {
  DeviceMemory m = backend_.memory(index_);
  addPinnedMemory(m, *pinned_);
  return m;
}

int64_t GpuDevice::emptyCache() {
  const int64_t pinned = pinned_->emptyCache();
  return backend_.emptyCache(index_) + pinned;
}

void GpuDevice::resetPeak() {
  backend_.resetPeak(index_);
  pinned_->resetPeak();
}

at::Tensor GpuDevice::upload(const at::Tensor& t) const {
  if (holds(t)) return t;
  uploads_.fetch_add(1);
  // From pinned memory the copy is queued on the current stream and the host goes on;
  // work queued after it on that stream sees the weights.
  return t.to(device_, t.scalar_type(), /*non_blocking=*/isPinned(t), /*copy=*/false);
}

at::Tensor GpuDevice::download(const at::Tensor& t) const {
  if (!t.defined() || t.device().is_cpu()) return t;
  PoolScope host(nullptr);
  return t.to(at::kCPU, t.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
}

bool GpuDevice::holds(const at::Tensor& t) const {
  return t.defined() && t.device() == device_;
}

at::Tensor GpuDevice::pin(const at::Tensor& host) const {
  if (isPinned(host)) return host;
  PoolScope scope(pinned_);
  return contiguousCopy(host);
}

bool GpuDevice::isPinned(const at::Tensor& t) const {
  return t.defined() && t.has_storage() && t.device().is_cpu() && pinned_->owns(t.storage());
}

void GpuDevice::setPinnedLimit(int64_t bytes) const {
  limitPinnedPool(*pinned_, bytes);
}

std::vector<GpuDeviceInfo> listGpus() {
  std::vector<GpuDeviceInfo> out;
  const GpuBackend* backend = gpuBackend();
  if (!backend) return out;
  const int count = backend->deviceCount();
  for (int i = 0; i < count; ++i) {
    const GpuProperties p = backend->properties(i);
    out.push_back({"cuda:" + std::to_string(i), p.name, p.arch, p.total_bytes, p.rocm, p.bf16});
  }
  return out;
}

std::string describeGpu(const GpuDeviceInfo& g) {
  return g.device + "  " + g.name + " (" + formatBytes(g.memory_bytes) + ", " + g.arch +
         (g.bf16 ? ", bf16" : "") + ")";
}

std::vector<std::string> describeGpus() {
  std::vector<std::string> out;
  for (const GpuDeviceInfo& g : listGpus()) out.push_back(describeGpu(g));
  return out;
}

}  // namespace kiln::memory
